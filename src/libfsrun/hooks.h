/* OCI hooks: each one is executed (path, args with args[0] as argv[0], env, optional timeout) with
 * the container's state JSON on its stdin. */
#ifndef FSRUN_HOOKS_H
#define FSRUN_HOOKS_H

#include <signal.h>
#include <stdbool.h>

#include "error.h"
#include "oci.h"

/* Runs the hooks in order and stops at the first failure (non-zero exit, killed, timed out):
 * "createRuntime hook #1 (`/usr/bin/x`): exited with status 3". kind names the list. */
int hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json,
              fsrun_error_t *err);
/* Runs every hook; failures are logged as warnings (poststart, poststop). */
void hooks_run_warn(const oci_hook_list *hooks, const char *kind, const char *state_json);

/* The hooks this process spawns from now on start with `mask`, whatever its own is: fsrun's init
 * holds every signal from its clone on (a pid namespace's init drops one it has no handler for),
 * its createContainer and startContainer hooks get the caller's mask. */
void hooks_spawn_with_mask(const sigset_t *mask);

static inline bool hooks_any(const oci_hook_list *l) {
  return l != NULL && l->len > 0;
}

#endif
