/* A pid namespace joined early (ns_plan.pid_join_early): from the moment the first init has
 * entered it, every child it forks is born in that pid namespace, visible to its processes. The
 * createContainer hooks run before pivot_root, with the host's root: so they are run by the hook
 * runner, forked before that. It stays in the runtime's pid namespace, enters the first init's
 * other namespaces when asked (the host's root may, as exec's child does), and runs them there.
 * See docs/process-model.md. */
#ifndef FSRUN_HOOK_RUNNER_H
#define FSRUN_HOOK_RUNNER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

struct hook_runner {
  int sock; /* -1: none */
  pid_t pid;
};

/* In the first init, before it enters the pid namespace: forks the runner for hooks. as_root: it
 * becomes root of the user namespace it enters, as the init does. */
int hook_runner_start(struct hook_runner *r, const oci_hook_list *hooks, bool as_root,
                      fsrun_error_t *err);
/* In the first init, in its namespaces: the runner enters them, runs the hooks with state_json
 * on their stdin, reports and exits; reaped here. */
int hook_runner_run(struct hook_runner *r, const char *state_json, fsrun_error_t *err);

#endif
