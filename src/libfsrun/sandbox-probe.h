/* Whether this host can run a sandbox at all, asked after a set-up failed under fallback-native:
 * what the worktree or the policy's paths hold must never make a command run unsandboxed. */
#ifndef FSRUN_SANDBOX_PROBE_H
#define FSRUN_SANDBOX_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "oci.h"

enum sandbox_probe {
  SANDBOX_PROBE_WORKS,     /* the probe's sandbox ran `true`: this host can sandbox */
  SANDBOX_PROBE_CANNOT,    /* its container's set-up failed too, for want of a host capability */
  SANDBOX_PROBE_UNDECIDED, /* it could not be run or ended otherwise: nothing is known */
};

/* where the probe of run ID runs: `<state root>/SANDBOX_PROBE_DIR_PREFIX ID/{wt,state}` */
#define SANDBOX_PROBE_DIR_PREFIX ".sandbox-probe."

/* Runs `true` in a sandbox of the same binary, cgroup options, network profile and limits, but over
 * a fresh empty directory with a state root of its own and without the policy's paths, under
 * fail-hard, bounded by deadline (CLOCK_MONOTONIC ms, 0: none). Both are in a directory made for
 * the probe of the run id (never one that existed: then the probe is undecided). Unless it works,
 * *why (caller frees) says what happened. Leaves nothing behind. */
enum sandbox_probe sandbox_probe_host(const struct fsrun_context *ctx, const oci_policy *policy,
                                      const char *id, int64_t deadline, char **why);

/* In the probe (sandbox --probe-report-fd FD), after its set-up failed with errnum: says on fd
 * whether that was for want of a host capability, the only failure that makes the probe CANNOT:
 * the container's own set-up (namespaces, the mount API, pivot_root, seccomp, landlock, the user
 * namespace's maps, cgroups) answering ENOSYS, EPERM, EINVAL or EOPNOTSUPP. A full disk, a limit
 * (ENOSPC, EDQUOT, ENOMEM, EMFILE, ENFILE, EAGAIN), EIO, a file or git dir in the way, a failure
 * before the container's set-up: undecided. */
void sandbox_probe_report(int fd, bool in_container_setup, int errnum);

/* What a probe of run id left when fsrun was killed during it: its container (as `delete --force`
 * in the probe's state root) and its directory. */
void sandbox_probe_remove_leftover(const struct fsrun_context *ctx, const char *id);

#endif
