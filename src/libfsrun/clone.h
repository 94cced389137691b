/* Cloning a runtime process: clone3, or clone(2) where clone3 is refused with ENOSYS
 * (Docker 20.10's and older podman's default seccomp profiles, valgrind). Every runtime clone goes
 * through here. */
#ifndef FSRUN_CLONE_H
#define FSRUN_CLONE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#define FSRUN_CLONE_INTO_CGROUP 0x200000000ULL

/* struct clone_args of <linux/sched.h>, without that header's clashes with <sched.h> */
struct fsrun_clone_args {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t set_tid;
  uint64_t set_tid_size;
  uint64_t cgroup;
};

/* Whether this process's clone3 answers ENOSYS (asked once, with arguments the kernel rejects
 * before doing anything). Then nothing is cloned into a cgroup (cgroup_clone_fd() is -1): the
 * process joins it by cgroup.procs before it runs anything the cgroup accounts, as on cgroup v1. */
bool clone3_refused(void);

/* clone3(args) (fork-like: args->stack is 0), or clone(2) with the same flags, exit signal and
 * CLONE_PIDFD where clone3 is refused. Flags clone(2) cannot carry (CLONE_INTO_CGROUP,
 * CLONE_NEWTIME, ...) then fail with ENOSYS. Returns as clone3 does: 0 in the child, the child's
 * pid in the parent, or -1 with errno. */
long fsrun_clone(struct fsrun_clone_args *args);

/* Clones the process that takes over from the caller as the runtime's child too (CLONE_PARENT): a
 * late init, the process that execs. In the caller, once the sibling's pid went to the runtime
 * (SYNC_INIT_PID on sync_fd), returns it; -1 with errno when the clone failed, EPIPE when the
 * runtime is gone. In the sibling, returns 0 once it dies with the runtime (PR_SET_PDEATHSIG;
 * it exits at once when the runtime is gone already). send_pidfd: the sibling's pidfd goes with its
 * pid (for a runtime without pidfd_open, pidfd-compat.h). told: NULL, or a connected pair of
 * sockets (AF_UNIX, SOCK_STREAM, CLOEXEC) made before anything (a seccomp filter) could refuse
 * socketpair; with it the sibling returns only once its pid has reached the runtime, so that none
 * of its messages comes first (`create` takes the caller's until then), and dies when the caller
 * did not report it. Both ends are closed. */
long clone_successor(int sync_fd, bool send_pidfd, int told[2]);

/* A pidfd on pid, only when it is our own child (a sibling cloned with CLONE_PARENT is): a pid
 * that a process of the container may have named is never taken for another process, which the
 * runtime would then signal. -1 with errno otherwise (ECHILD: not our child). */
int pidfd_open_own_child(pid_t pid);

/* Whether pidfd names our own child, not yet reaped (nothing is reaped here). */
bool pidfd_is_own_child(int pidfd);

#endif
