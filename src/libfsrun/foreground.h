#ifndef FSRUN_FOREGROUND_H
#define FSRUN_FOREGROUND_H

#include <signal.h>
#include <sys/types.h>

/* A process the caller runs in the foreground (`run`, `exec` without --detach): the caller blocks
 * the signals of foreground_signals() before it starts the process, and foreground_wait() hands
 * them on while it waits. */

/* Every signal worth forwarding: all but the faults (which must stay ours) and KILL/STOP (which
 * cannot be caught). */
void foreground_signals(sigset_t *set);

/* Waits for the process behind pidfd: each signal of `forwarded` that arrives goes to it (SIGCHLD
 * excepted), SIGWINCH resizes the pty, and when master >= 0 the pty is relayed to our stdin and
 * stdout. Returns its exit status, 128+N when signal N ended it, 255 when it cannot be reaped. */
int foreground_wait(int pidfd, int master, const sigset_t *forwarded);
/* The same; *info says how the process ended (si_code 0 when it could not be reaped). */
int foreground_wait_info(int pidfd, int master, const sigset_t *forwarded, siginfo_t *info);
/* The same, and once the process has ended, before it is reaped (its pid, and so its process group
 * `group`, cannot be another's until then), SIGKILLs what is left in that group; none when group
 * <= 0. */
int foreground_wait_group(int pidfd, pid_t group, int master, const sigset_t *forwarded,
                          siginfo_t *info);

/* waitid on pidfd, again after EINTR: 0, or a negative errno. */
int foreground_reap(int pidfd, siginfo_t *info);

/* The shell's view of how a reaped process ended: its status, or 128+N for signal N. */
int foreground_exit_status(const siginfo_t *info);

#endif
