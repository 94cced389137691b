/* OCI hooks: each one is executed (path, args with args[0] as argv[0], env, optional timeout) with
 * the container's state JSON on its stdin. */
#ifndef FSRUN_HOOKS_H
#define FSRUN_HOOKS_H

#include <stdbool.h>

#include "error.h"
#include "oci.h"

/* Runs the hooks in order and stops at the first failure (non-zero exit, killed, timed out):
 * "createRuntime hook #1 (`/usr/bin/x`): exited with status 3". kind names the list. */
int hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json,
              fsrun_error_t *err);
/* Runs every hook; failures are logged as warnings (poststart, poststop). */
void hooks_run_warn(const oci_hook_list *hooks, const char *kind, const char *state_json);

static inline bool hooks_any(const oci_hook_list *l) {
  return l != NULL && l->len > 0;
}

#endif
