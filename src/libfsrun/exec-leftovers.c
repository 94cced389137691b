/* Whether an exec into a container left a process of its own running (docs/sandbox.md, "Git in a
 * task container"): when none is left but the container's own (its init and the session of
 * config.json's process, which run none of a command's code), nothing can plant in the worktree
 * after a walk that begins now, until the next exec, and the exec's walk holds without a freezer.
 *
 * The count is taken in a helper that lives in the container's pid namespace: there the kernel's
 * ns_last_pid is the namespace's own (nested namespaces included), read before and after a pass
 * over the host's /proc. The same value twice means no process was made in the namespace during
 * the pass, so every process alive at its end was alive throughout it and was seen: one that forks
 * and exits in a loop, or is reparented to the init, cannot slip through. A zombie counts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-leftovers.h"
#include "utils.h"

enum { LEFT_NONE = 0, LEFT_SOME = 1, LEFT_UNKNOWN = 2 };
#define PASSES 3

/* The start of dir_fd's path (one read, NUL-terminated) in buf: false when gone or empty. */
static bool read_text_at(int dir_fd, const char *path, char *buf, size_t size) {
  cleanup_close int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return true;
}

static long read_long_at(int dir_fd, const char *path) {
  char buf[32];
  return read_text_at(dir_fd, path, buf, sizeof(buf)) ? strtol(buf, NULL, 10) : -1;
}

/* The session of pid (field 6 of /proc/PID/stat, as the host numbers it), or -1 when gone. */
static long session_of(int proc_fd, long pid) {
  char path[32], buf[512];
  const char *end;
  long ppid, pgrp, sid;
  char state;
  snprintf(path, sizeof(path), "%ld/stat", pid);
  if (!read_text_at(proc_fd, path, buf, sizeof(buf)))
    return -1;
  /* the command name may hold spaces and parentheses: the fields start after the last ')' */
  end = strrchr(buf, ')');
  if (end == NULL || sscanf(end + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &sid) != 4)
    return -1;
  return sid;
}

struct namespaces {
  struct stat ours;    /* the container's pid namespace (the counter's own) */
  struct stat runtime; /* fsrun's, an ancestor of it: most of the host's processes are there */
  int level;           /* how many pid namespaces ours is below the procfs's (-1: not known) */
};

static bool same_file(const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/* The pids of `what` (PID, or "thread-self") in its pid namespace and each one above it up to
 * the procfs's own, from the NSpid line of its status (readable by anyone): how many, -1 when
 * gone. */
static int nspids(int proc_fd, const char *what, long *out, int max) {
  char path[48], buf[2048];
  const char *line;
  int n = 0;
  snprintf(path, sizeof(path), "%s/status", what);
  if (!read_text_at(proc_fd, path, buf, sizeof(buf)))
    return -1;
  line = strstr(buf, "\nNSpid:");
  if (line == NULL)
    return -1;
  for (char *p = (char *)line + strlen("\nNSpid:"), *end; n < max; p = end) {
    long v = strtol(p, &end, 10);
    if (end == p)
      break;
    out[n++] = v;
  }
  return n;
}

/* The host pid (as the procfs numbers it) that the pid `nr` of our own pid namespace names, 0
 * when none: a pidfd on it, and its fdinfo (numbered as the procfs is). */
static long host_pid_of(int proc_fd, long nr) {
  char path[48], buf[512];
  const char *field;
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)nr, 0);
  if (pidfd < 0)
    return errno == ESRCH ? 0 : -1;
  snprintf(path, sizeof(path), "thread-self/fdinfo/%d", pidfd);
  if (!read_text_at(proc_fd, path, buf, sizeof(buf)))
    return -1;
  field = strstr(buf, "\nPid:");
  return field == NULL ? -1 : strtol(field + strlen("\nPid:"), NULL, 10);
}

/* pid's ns/pid we may not read (another user's process; or one of ours that exec'd a program it
 * may run but not read, whose memory then belongs to the initial user namespace: review23 A2):
 * 1 when our pid namespace (the helper is in it) knows it, at its number there, else 0; -1 when
 * that cannot be told. */
static int in_ours_by_number(int proc_fd, long pid, int level) {
  long theirs[32], host;
  char what[24];
  snprintf(what, sizeof(what), "%ld", pid);
  int n = nspids(proc_fd, what, theirs, 32);
  if (level < 0)
    return -1;
  if (n < 0)
    return 0; /* gone */
  if (n <= level)
    return 0; /* a namespace above ours */
  host = host_pid_of(proc_fd, theirs[level]);
  return host < 0 ? -1 : host == pid;
}

/* 1 when pid is in our pid namespace or one below it, 0 when not or gone, -1 when that cannot be
 * told. One stat for most processes; NS_GET_PARENT (it answers only for a namespace whose parent
 * is ours or below ours) for those of a third namespace; its number in ours for one whose
 * namespace we may not see. */
static int in_our_namespaces(int proc_fd, long pid, const struct namespaces *ns) {
  char path[32];
  struct stat st;
  int parent;
  snprintf(path, sizeof(path), "%ld/ns/pid", pid);
  if (fstatat(proc_fd, path, &st, 0) < 0)
    return errno == EACCES || errno == EPERM   ? in_ours_by_number(proc_fd, pid, ns->level)
           : errno == ENOENT || errno == ESRCH ? 0
                                               : -1;
  if (same_file(&st, &ns->ours))
    return 1;
  if (same_file(&st, &ns->runtime))
    return 0;
  cleanup_close int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
  parent = fd < 0 ? -1 : ioctl(fd, NS_GET_PARENT);
  if (parent < 0)
    return 0;
  close(parent);
  return 1;
}

/* One pass: LEFT_SOME when a process of the namespace other than the init and its session is
 * there, else LEFT_NONE (the caller checks that no process was made during it). */
static int one_pass(int proc_fd, long self, long init_pid, long init_sid,
                    const struct namespaces *ns) {
  cleanup_close int dir_fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = dir_fd < 0 ? NULL : fdopendir(dir_fd);
  struct dirent *d;
  int left = LEFT_NONE;
  if (dir == NULL)
    return LEFT_UNKNOWN;
  dir_fd = -1; /* the DIR owns it */
  while (left == LEFT_NONE && (d = readdir(dir)) != NULL) {
    char *end;
    long pid = strtol(d->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self || pid == init_pid)
      continue;
    int ours = in_our_namespaces(proc_fd, pid, ns);
    if (ours < 0)
      left = LEFT_UNKNOWN;
    else if (ours && session_of(proc_fd, pid) != init_sid)
      left = LEFT_SOME;
  }
  closedir(dir);
  return left;
}

/* In the helper that lives in the container's pid namespace: its exit status. */
static int count_in_namespace(long init_pid, struct namespaces *ns) {
  cleanup_close int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long self, init_sid;
  if (proc_fd < 0 || fstatat(proc_fd, "thread-self/ns/pid", &ns->ours, 0) < 0)
    return LEFT_UNKNOWN;
  long own_pids[32];
  ns->level = nspids(proc_fd, "thread-self", own_pids, 32) - 1;
  self = read_long_at(proc_fd, "self/stat"); /* our pid as the host's procfs numbers it */
  init_sid = session_of(proc_fd, init_pid);
  if (self <= 0 || init_sid <= 0)
    return LEFT_UNKNOWN;
  for (int i = 0; i < PASSES; i++) {
    long before = read_long_at(proc_fd, "sys/kernel/ns_last_pid");
    int left = one_pass(proc_fd, self, init_pid, init_sid, ns);
    long after = read_long_at(proc_fd, "sys/kernel/ns_last_pid");
    if (left != LEFT_NONE)
      return left;
    if (before > 0 && before == after)
      return LEFT_NONE;
  }
  return LEFT_UNKNOWN; /* something kept making processes there */
}

static int wait_status(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return LEFT_UNKNOWN;
  return WIFEXITED(status) ? WEXITSTATUS(status) : LEFT_UNKNOWN;
}

/* The helper's parent: joins the container's user and pid namespaces (setns on a pid namespace
 * places only our children in it) and forks the counter. */
__attribute__((noreturn)) static void join_and_count(const struct init_ns *ns, long init_pid,
                                                     bool join_user) {
  struct namespaces own = {0};
  pid_t child;
  if (stat("/proc/self/ns/pid", &own.runtime) < 0)
    _exit(LEFT_UNKNOWN);
  if (join_user && init_ns_join(ns, CLONE_NEWUSER | CLONE_NEWPID) < 0 &&
      !(errno == EINVAL && init_ns_join(ns, CLONE_NEWPID) == 0))
    _exit(LEFT_UNKNOWN);
  if (!join_user && init_ns_join(ns, CLONE_NEWPID) < 0)
    _exit(LEFT_UNKNOWN);
  child = fork();
  if (child == 0)
    _exit(count_in_namespace(init_pid, &own));
  _exit(child < 0 ? LEFT_UNKNOWN : wait_status(child));
}

bool exec_left_running(const struct init_ns *ns, pid_t init_pid, int ns_flags) {
  pid_t helper;
  if (!(ns_flags & CLONE_NEWPID) || init_pid <= 0)
    return true; /* the host's pid namespace: cannot tell */
  fflush(NULL);
  helper = fork();
  if (helper == 0)
    join_and_count(ns, init_pid, (ns_flags & CLONE_NEWUSER) != 0);
  return helper < 0 || wait_status(helper) != LEFT_NONE;
}
