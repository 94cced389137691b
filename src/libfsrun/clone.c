/* clone3, or its clone(2) fallback. See clone.h. */
#include "clone.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sync.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

bool clone3_refused(void) {
  static int refused = -1; /* inherited by the clones: they ask no more */
  if (refused < 0) {
    int saved = errno;
    /* a size below the first version's: EINVAL from a kernel that has clone3, nothing cloned */
    refused = syscall(SYS_clone3, NULL, 0) < 0 && errno == ENOSYS;
    errno = saved;
  }
  return refused;
}

/* clone(2) takes the exit signal in its flags' low byte, and the pidfd where the parent's tid would
 * go: nothing above 32 bits, no CLONE_NEWTIME (it is that byte), no set_tid or cgroup. */
static long clone2(const struct fsrun_clone_args *args) {
  unsigned long flags = (unsigned long)args->flags | (unsigned long)(args->exit_signal & CSIGNAL);
  if ((args->flags >> 32) != 0 || (args->flags & (CLONE_NEWTIME | CLONE_PARENT_SETTID)) != 0 ||
      args->exit_signal > CSIGNAL || args->stack != 0 || args->set_tid_size != 0) {
    errno = ENOSYS;
    return -1;
  }
  void *pidfd = (args->flags & CLONE_PIDFD) ? (void *)(uintptr_t)args->pidfd : NULL;
#if defined(__s390__) || defined(__CRIS__)
  return syscall(SYS_clone, NULL, flags, pidfd, NULL, 0UL);
#else
  /* the tls and child_tid slots are swapped on some architectures (CLONE_BACKWARDS): both 0 */
  return syscall(SYS_clone, flags, NULL, pidfd, NULL, 0UL);
#endif
}

long fsrun_clone(struct fsrun_clone_args *args) {
  long pid;
  if (clone3_refused())
    return clone2(args);
  pid = syscall(SYS_clone3, args, sizeof(*args));
  /* a filter that refuses only some clone3 calls */
  if (pid < 0 && errno == ENOSYS)
    return clone2(args);
  return pid;
}

long clone_successor(int sync_fd, bool send_pidfd) {
  int pidfd = -1;
  struct fsrun_clone_args args = {.flags = CLONE_PARENT | (send_pidfd ? CLONE_PIDFD : 0),
                                  .pidfd = (uint64_t)(uintptr_t)&pidfd};
  char buf[32];
  long pid = fsrun_clone(&args);
  int len, sent;
  if (pid > 0) {
    len = snprintf(buf, sizeof(buf), "%ld", pid);
    sent = sync_send(sync_fd, SYNC_INIT_PID, 0, buf, (size_t)len, pidfd);
    if (pidfd >= 0)
      close(pidfd);
    if (sent < 0) {
      errno = EPIPE;
      return -1;
    }
  }
  if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || sync_peer_gone(sync_fd)))
    _exit(1);
  return pid;
}

bool pidfd_is_own_child(int pidfd) {
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  /* ECHILD for any process that is not our child; nothing is reaped (WNOWAIT) */
  return waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0;
}

int pidfd_open_own_child(pid_t pid) {
  int fd, saved;
  if (pid <= 0) {
    errno = ESRCH;
    return -1;
  }
  fd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return -1;
  if (pidfd_is_own_child(fd))
    return fd;
  saved = errno;
  close(fd);
  errno = saved;
  return -1;
}
