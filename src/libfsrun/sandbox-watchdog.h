/* The watchdog of `fsrun sandbox`: a process beside the runtime that enforces --timeout-ms (it
 * kills the whole sandbox at the deadline, again every 100 ms in case the container was still
 * being created) and cpuLimit.maxMs (the CPU time of the container's cgroup, read every 100 ms),
 * and deletes the sandbox when fsrun itself is killed, so that a killed `fsrun sandbox` never
 * leaves a running sandbox behind. It learns what to watch over a socket once the runtime knows.
 *
 * It is a clone of fsrun that shares its memory (CLONE_VM, no exec) and runs only
 * src/tiny-init/tiny-watchdog.c, code without the C library, on a stack of its own: a forked
 * watchdog made every page both processes then held copy-on-write, and on a machine that shadows
 * guest page tables each fault on those pages costs tens of microseconds (about 2.5 ms of CPU and
 * 34 faults per sandbox on the development VM). Where that code is not built (another architecture,
 * the ASan build) or FSRUN_NO_TINY is set, the watchdog is forked as before (main starts it for
 * the sandbox command before the runtime's heap grows), with the same protocol. After fsrun's
 * death the cloned watchdog execs fsrun again as SANDBOX_WATCHDOG_CLEANUP to delete the container
 * (sandbox_watchdog_cleanup). */
#ifndef FSRUN_SANDBOX_WATCHDOG_H
#define FSRUN_SANDBOX_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

/* argv[0] of fsrun run by the tiny watchdog after fsrun's death: `fsrun-sandbox-cleanup [GLOBAL
 * OPTIONS] ID` (fsrun.c) calls sandbox_watchdog_cleanup. */
#define SANDBOX_WATCHDOG_CLEANUP "fsrun-sandbox-cleanup"

struct fsrun_cgroup;

/* Best effort: when the watchdog cannot be started, arming reports it. */
void sandbox_watchdog_fork(const struct fsrun_context *ctx);

/* Watch the container `id`, from before its state exists (deadline: CLOCK_MONOTONIC ms, as
 * monotonic_ms() gives it; 0: none). */
int sandbox_watchdog_arm_container(const char *id, int64_t deadline, fsrun_error_t *err);
/* ... and end it once its cgroup has used cpu_budget_ms of CPU time (0: no budget), read every
 * 100 ms: cpuLimit.maxMs as a budget of the whole command. */
int sandbox_watchdog_arm_container_budget(const char *id, int64_t deadline, int64_t cpu_budget_ms,
                                          fsrun_error_t *err);
/* Watch the process group of a command run without a sandbox (the native fallback). */
int sandbox_watchdog_arm_native(pid_t pgid, int64_t deadline, fsrun_error_t *err);
/* The container's init, just cloned, by create's own pidfd on it (CLONE_PIDFD; a copy is sent,
 * the fd stays the caller's): killed too at the deadline, while its state does not name it yet,
 * and when fsrun dies. No pidfd_open, which may answer ENOSYS. Best effort. */
void sandbox_watchdog_watch_init(int init_pidfd);
/* The container's cgroup, once it runs: its CPU time is what the budget is counted against. */
void sandbox_watchdog_watch_cgroup(const struct fsrun_cgroup *cg);
/* The container's mount namespace (*mntns_fd, closed and set to -1), once its init is reaped: the
 * watchdog closes it at once, so that its teardown (expedited RCU grace periods: the namespace's,
 * each overlay's) runs beside the runtime's clean-up and git sync instead of in the init's exit,
 * which the runtime waits for. sandbox_watchdog_end reaps the watchdog after that close, so none
 * of it outlives fsrun. Without a watchdog the close is ours. */
void sandbox_watchdog_drop_mntns(int *mntns_fd);
/* Stops watching; true when the deadline had passed. */
bool sandbox_watchdog_disarm(void);
/* The deadline and the CPU budget off, as sandbox_watchdog_disarm, but `id` stays watched for the
 * clean-up alone: a fsrun killed from here on (the git sync after the command) still has the
 * container deleted and the run's git dir unmounted and removed. True when the deadline had passed.
 */
bool sandbox_watchdog_cleanup_only(const char *id);
/* The watchdog is a fork (no tiny program here), sharing our pages copy-on-write while it lives. */
bool sandbox_watchdog_forked(void);
/* After sandbox_watchdog_disarm or _cleanup_only: the container was ended because its CPU budget
 * was spent. */
bool sandbox_watchdog_cpu_budget_spent(void);
/* Ends the watchdog (killed and reaped). */
void sandbox_watchdog_end(void);
/* After fsrun's death: deletes the container `id` (delete --force) and the run's git dir; for an
 * id of EXEC_GIT_WATCH_MARK (a killed `fsrun exec`, exec-git.c), only that exec's per-run dir. */
int sandbox_watchdog_cleanup(const struct fsrun_context *ctx, const char *id);
/* What a one-shot run `id` keeps outside its state dir (its git dir, either place, and a probe's
 * container): removed after `fsrun delete` of a `sandbox-` id too, for a run whose fsrun and
 * watchdog were both killed (nothing else would). */
void sandbox_run_leftovers_remove(const struct fsrun_context *ctx, const char *id);

#endif
