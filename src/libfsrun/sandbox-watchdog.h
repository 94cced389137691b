/* The watchdog of `fsrun sandbox`: a child that enforces --timeout-ms (it kills the whole sandbox
 * at the deadline, again every 100 ms in case the container was still being created) and deletes
 * the sandbox when fsrun itself is killed, so that a killed `fsrun sandbox` never leaves a running
 * sandbox behind.
 *
 * It is forked before the runtime's heap grows (main calls sandbox_watchdog_fork first thing for
 * the sandbox command): a fork makes every page both processes then hold copy-on-write, and on a
 * machine that shadows guest page tables each fault on those pages costs tens of microseconds.
 * Forked later, the watchdog cost a sandbox run about 3 ms of CPU in such faults. It learns what to
 * watch over a pipe once the runtime knows. */
#ifndef FSRUN_SANDBOX_WATCHDOG_H
#define FSRUN_SANDBOX_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

/* Best effort: when the fork fails, arming reports it. */
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
/* The container's init, just cloned (our unreaped child): killed too at the deadline, while its
 * state does not name it yet. Best effort. */
void sandbox_watchdog_watch_init(pid_t pid);
/* Stops watching; true when the deadline had passed. */
bool sandbox_watchdog_disarm(void);
/* After sandbox_watchdog_disarm: the container was ended because its CPU budget was spent. */
bool sandbox_watchdog_cpu_budget_spent(void);
/* Ends the watchdog (killed and reaped). */
void sandbox_watchdog_end(void);

#endif
