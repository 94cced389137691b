/* pidfd calls and their ENOSYS fallbacks. See pidfd-compat.h. */
#include "pidfd-compat.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clone.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* /proc/PID/ns names, in join order: the user namespace first gives us the others' capabilities */
static const struct {
  int flag;
  const char *name;
} ns_files[INIT_NS_MAX] = {
    {CLONE_NEWUSER, "user"}, {CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"},
    {CLONE_NEWNET, "net"},   {CLONE_NEWPID, "pid"}, {CLONE_NEWCGROUP, "cgroup"},
    {CLONE_NEWTIME, "time"}, {CLONE_NEWNS, "mnt"},
};

static int stopped(const struct container_status *st, fsrun_error_t *err) {
  return fsrun_error_make(err, ESRCH, "cannot exec in a stopped container: `%s`", st->id);
}

static int open_ns_files(struct init_ns *ns, int dir, int flags, fsrun_error_t *err) {
  for (int i = 0; i < INIT_NS_MAX; i++) {
    if (!(flags & ns_files[i].flag))
      continue;
    ns->fds[ns->n] = openat(dir, ns_files[i].name, O_RDONLY | O_CLOEXEC);
    if (ns->fds[ns->n] < 0)
      return fsrun_error_errno(err, "open the container init's `%s` namespace", ns_files[i].name);
    ns->flags[ns->n++] = ns_files[i].flag;
  }
  return 0;
}

int init_ns_open(struct init_ns *ns, const struct container_status *st, int flags, int pinned,
                 fsrun_error_t *err) {
  cleanup_free char *path = NULL;
  cleanup_close int dir = -1;
  *ns = (struct init_ns){.pidfd = pinned};
  /* checked already: a second read of /proc/PID/stat and PID/ns/pid would say the same */
  if (pinned >= 0)
    return 0;
  path = xasprintf("/proc/%d/ns", (int)st->pid);
  if (st->pid <= 0)
    return stopped(st, err);
  ns->pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
  if (ns->pidfd < 0 && errno != ENOSYS)
    return stopped(st, err);
  /* the directory (as the pidfd) stays the process's it was opened on: the init, when its
   * identity still matches after the open, since it held the pid since before */
  if (ns->pidfd < 0 && (dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
    return stopped(st, err);
  if (!status_init_alive(st)) {
    init_ns_close(ns);
    return stopped(st, err);
  }
  if (dir >= 0 && open_ns_files(ns, dir, flags, err) < 0) {
    init_ns_close(ns);
    return fsrun_error_code(err);
  }
  return 0;
}

int init_ns_join(const struct init_ns *ns, int flags) {
  if (ns->pidfd >= 0)
    return setns(ns->pidfd, flags);
  for (int i = 0; i < ns->n; i++)
    if ((flags & ns->flags[i]) && setns(ns->fds[i], ns->flags[i]) < 0)
      return -1;
  return 0;
}

void init_ns_close(struct init_ns *ns) {
  if (ns->pidfd >= 0)
    close(ns->pidfd);
  ns->pidfd = -1;
  for (int i = 0; i < ns->n; i++)
    close(ns->fds[i]);
  ns->n = 0;
}

/* the pid a pidfd names, from its fdinfo (the kernel's "Pid:" line), or 0 */
static pid_t pidfd_pid(int pidfd) {
  cleanup_free char *path = xasprintf("/proc/self/fdinfo/%d", pidfd);
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t err = NULL;
  const char *line;
  if (read_file_at(AT_FDCWD, path, &text, NULL, &err) < 0)
    return 0;
  line = strstr(text, "\nPid:");
  return line != NULL ? (pid_t)strtol(line + 5, NULL, 10) : 0;
}

int pidfd_signal_child(int pidfd, int sig) {
  pid_t pid;
  if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
  pid = pidfd_pid(pidfd);
  if (pid <= 0 || !pidfd_is_own_child(pidfd)) {
    errno = ESRCH;
    return -1;
  }
  return kill(pid, sig);
}

int pidfd_own_child_or(pid_t pid, int given) {
  int fd = pidfd_open_own_child(pid);
  if (fd >= 0 || errno != ENOSYS || given < 0) {
    if (given >= 0)
      close(given);
    return fd;
  }
  if (pidfd_pid(given) != pid || !pidfd_is_own_child(given)) {
    close(given);
    errno = ECHILD;
    return -1;
  }
  return given;
}
