/* clone3, or its clone(2) fallback. See clone.h. */
#include "clone.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

/* The caller: the sibling's pid to the runtime, then the word to the sibling (one byte on told; no
 * SIGPIPE when the sibling has died). Returns the result of the first send. */
static int report_successor(int sync_fd, long pid, int pidfd, int told) {
  char buf[32];
  int len = snprintf(buf, sizeof(buf), "%ld", pid);
  int sent = sync_send(sync_fd, SYNC_INIT_PID, 0, buf, (size_t)len, pidfd);
  ssize_t w;
  if (sent == 0 && told >= 0)
    do
      w = send(told, "", 1, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
  return sent;
}

/* The sibling: nothing of ours may reach the runtime before our pid did (the runtime takes the
 * first init's messages until SYNC_INIT_PID), so we wait for the caller's byte; EOF without it:
 * the report failed, or the caller died. */
static bool successor_reported(int told) {
  char c;
  ssize_t r;
  do
    r = read(told, &c, 1);
  while (r < 0 && errno == EINTR);
  return r == 1;
}

/* The sibling, from its start: dies with the runtime, and (with told) goes on only once its pid
 * reached it */
static void successor_start(int sync_fd, int told) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || (told >= 0 && !successor_reported(told)) ||
      sync_peer_gone(sync_fd))
    _exit(1);
  if (told >= 0)
    close(told);
}

static void close_told(int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

long clone_successor(int sync_fd, bool send_pidfd, int told[2]) {
  int pidfd = -1, sent = 0, saved, none[2] = {-1, -1};
  struct fsrun_clone_args args = {.flags = CLONE_PARENT | (send_pidfd ? CLONE_PIDFD : 0),
                                  .pidfd = (uint64_t)(uintptr_t)&pidfd};
  long pid;
  if (told == NULL)
    told = none;
  pid = fsrun_clone(&args);
  if (pid == 0) {
    close_told(&told[1]);
    successor_start(sync_fd, told[0]);
    told[0] = -1;
    return 0;
  }
  saved = errno;
  close_told(&told[0]);
  if (pid > 0)
    sent = report_successor(sync_fd, pid, pidfd, told[1]);
  if (pidfd >= 0)
    close(pidfd);
  close_told(&told[1]);
  if (pid < 0)
    return (errno = saved, -1);
  if (sent < 0)
    return (errno = EPIPE, -1);
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
