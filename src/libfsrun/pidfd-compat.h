/* The pidfd calls where the kernel, or what runs fsrun, answers ENOSYS: valgrind 3.19 (Debian 12)
 * knows neither pidfd_open nor pidfd_send_signal. Each fallback is taken only on ENOSYS and holds
 * what the pidfd held (docs/process-model.md, "Without pidfd_open"). */
#ifndef FSRUN_PIDFD_COMPAT_H
#define FSRUN_PIDFD_COMPAT_H

#include "error.h"
#include "status.h"

#define INIT_NS_MAX 8

/* The init's namespaces, to join: its pidfd (one setns for all of them), or, where pidfd_open
 * answers ENOSYS, one fd per namespace, opened through the init's /proc/PID directory, which pins
 * the process as a pidfd does (the init's identity is checked after that directory was opened). */
struct init_ns {
  int pidfd; /* or -1 */
  int n;
  int fds[INIT_NS_MAX]; /* in the order they are joined: the user namespace first */
  int flags[INIT_NS_MAX];
};

/* Opens ns on st's init for the namespaces of flags (CLONE_NEW*). ESRCH when that process is
 * gone or its pid is another's; a namespace file that cannot be opened is an error of its own.
 * pinned: a pidfd on the init that a liveness check made after its opening confirmed
 * (live_open_pinned), taken (closed on failure), or -1 to open and check one here. */
int init_ns_open(struct init_ns *ns, const struct container_status *st, int flags, int pinned,
                 fsrun_error_t *err);

/* setns(2) into those of flags: 0, or -1 with errno (EINVAL for a user namespace that is ours
 * already, as setns on a pidfd answers). */
int init_ns_join(const struct init_ns *ns, int flags);

void init_ns_close(struct init_ns *ns);

/* pidfd_send_signal to our own child that is not reaped yet; where that call answers ENOSYS,
 * kill(2) of its pid, which no other process can have until we reap it. 0, or -1 with errno. */
int pidfd_signal_child(int pidfd, int sig);

/* A pidfd on pid when it is our own child (pidfd_open_own_child); where pidfd_open answers ENOSYS,
 * the pidfd given (from CLONE_PIDFD in the process that cloned it) when it names our own child
 * with that pid. Takes given either way (closed unless returned). -1 with errno otherwise. */
int pidfd_own_child_or(pid_t pid, int given);

#endif
