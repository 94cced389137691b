/* Whether an exec into a container left a process of its own running (docs/sandbox.md, "Git in a
 * task container"): when none is left but the container's own (its init and the session of
 * config.json's process, which run none of a command's code), nothing can plant in the worktree
 * after a walk that begins now, until the next exec, and the exec's walk holds without a freezer.
 *
 * The count is taken in a helper that lives in the container's pid namespace: there the kernel's
 * ns_last_pid is the namespace's own (nested namespaces included), read before and after two
 * passes over a procfs. The same value throughout means no process was made in the namespace
 * during them, so every process alive at the second's end was alive throughout it and was seen:
 * one that forks and exits in a loop, or is reparented to the init, cannot slip through (nor a
 * fork begun before the first pass: PASSES). A zombie counts.
 *
 * The procfs is an instance of the container's pid namespace that the helper mounts for itself
 * (detached; in a mount namespace of its own in a user namespace): it lists every process of that
 * namespace and of the namespaces below it, whatever its uid, cgroup or dumpability, and no other,
 * so a pass costs what the container runs, not what the host runs (rootleft26). Where it cannot be
 * made (no new mount API, a kernel before 5.8 whose procfs options are not the mount's own, no
 * procfs fully visible to a user namespace), the passes go over the host's /proc, telling the
 * container's processes by their pid namespace; in a user namespace of its own (an ordinary
 * user's container), the processes of the host's other users are passed over by the owner of
 * /proc/PID alone (owned_by_mapped_id). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdint.h>
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
/* Two clean passes in a row with no process made from the first's start to the second's end: a
 * fork whose pid was taken before the first pass may join /proc behind it (a pid lower than the
 * pass has reached, once the numbers wrapped) while its parent exits ahead of it; the parent
 * exits only once the child is in /proc, so by the second pass every process there was there
 * throughout. The second looks only at the pids the first did not find not ours (pid_list). At
 * most PASSES in all. */
#define PASSES 4

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

/* The user ids the counter's user namespace maps (the first and third columns of its uid_map). */
#define ID_RANGES 64
struct mapped_ids {
  uint64_t first[ID_RANGES], count[ID_RANGES];
  int n; /* 0: every id, or not known: no process is judged by its owner */
};

struct namespaces {
  bool own_procfs;     /* the passes' procfs is our pid namespace's: every pid there is ours */
  struct stat ours;    /* the container's pid namespace (the counter's own) */
  struct stat runtime; /* fsrun's, an ancestor of it: most of the host's processes are there */
  int level;           /* how many pid namespaces ours is below the procfs's (-1: not known) */
  struct mapped_ids ids;
};

/* ids from the counter's own uid_map; n = 0 in the initial user namespace (it maps every id) or
 * when the map cannot be read whole. */
static void read_mapped_ids(int proc_fd, struct mapped_ids *ids) {
  char buf[4096], *p = buf, *end;
  ids->n = 0;
  if (!read_text_at(proc_fd, "thread-self/uid_map", buf, sizeof(buf)) ||
      strlen(buf) >= sizeof(buf) - 1)
    return;
  for (int n = 0; *p != '\0'; n++) {
    uint64_t first = strtoull(p, &end, 10), count;
    if (end == p || n == ID_RANGES)
      return;
    (void)strtoull(end, &p, 10); /* the id outside */
    count = strtoull(p, &end, 10);
    if (end == p || first > UINT32_MAX || count > (uint64_t)UINT32_MAX - first + 1)
      return;
    ids->first[n] = first;
    ids->count[n] = count;
    p = end + strspn(end, " \n");
    if (*p == '\0')
      ids->n = first == 0 && count >= UINT32_MAX ? 0 : n + 1; /* (uid_t)-1 is no id */
  }
}

static bool id_mapped(const struct mapped_ids *ids, uint64_t id) {
  for (int i = 0; i < ids->n; i++)
    if (id >= ids->first[i] && id - ids->first[i] < ids->count[i])
      return true;
  return false;
}

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

/* The pid of the process pidfd names, as the procfs numbers it (its fdinfo's Pid): 0 when it is
 * gone or has no number there, -1 when that cannot be read. */
static long pidfd_number(int proc_fd, int pidfd) {
  char path[48], buf[512];
  const char *field;
  snprintf(path, sizeof(path), "thread-self/fdinfo/%d", pidfd);
  if (!read_text_at(proc_fd, path, buf, sizeof(buf)))
    return -1;
  field = strstr(buf, "\nPid:");
  return field == NULL ? -1 : strtol(field + strlen("\nPid:"), NULL, 10);
}

/* The host pid (as the procfs numbers it) that the pid `nr` of our own pid namespace names, 0
 * when none: a pidfd on it, and its fdinfo (numbered as the procfs is). */
static long host_pid_of(int proc_fd, long nr) {
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)nr, 0);
  if (pidfd < 0)
    return errno == ESRCH ? 0 : -1;
  return pidfd_number(proc_fd, pidfd);
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

/* 0 when pid is gone or its effective uid (the owner of /proc/PID, even for a task that is not
 * dumpable) is not one our user namespace maps, so that it is in none of our pid namespaces (a
 * task there is in our user namespace or one below it: its ids are mapped in ours, as setuid,
 * exec of a set-user-ID file and a nested map allow no other; the host's root entering is
 * trusted); 1 when it may be ours; -1 when that cannot be told. One stat: the other users'
 * processes are passed over without the lookup by number (userleft25). */
static int owned_by_mapped_id(int proc_fd, long pid, const struct mapped_ids *ids) {
  char path[24];
  struct stat st;
  if (ids->n == 0)
    return 1;
  snprintf(path, sizeof(path), "%ld", pid);
  if (fstatat(proc_fd, path, &st, 0) < 0)
    return errno == ENOENT || errno == ESRCH ? 0 : -1;
  return id_mapped(ids, st.st_uid);
}

/* 1 when pid is in our pid namespace or one below it, 0 when not or gone, -1 when that cannot be
 * told. Every pid of our own procfs is. On the host's: one stat for most processes; NS_GET_PARENT
 * (it answers only for a namespace whose parent is ours or below ours) for those of a third
 * namespace; its number in ours for one whose namespace we may not see. */
static int in_our_namespaces(int proc_fd, long pid, const struct namespaces *ns) {
  char path[32];
  struct stat st;
  int parent, owner;
  if (ns->own_procfs)
    return 1;
  owner = owned_by_mapped_id(proc_fd, pid, &ns->ids);
  if (owner <= 0)
    return owner;
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
  if (fd < 0)
    return errno == EACCES || errno == EPERM   ? in_ours_by_number(proc_fd, pid, ns->level)
           : errno == ENOENT || errno == ESRCH ? 0
                                               : -1;
  parent = ioctl(fd, NS_GET_PARENT);
  if (parent < 0) /* EPERM: the parent is not ours nor below ours */
    return errno == EPERM ? 0 : -1;
  close(parent);
  return 1;
}

/* The pids a pass found not ours (or gone), ascending as /proc lists them. The pass after a clean
 * one, under the same ns_last_pid, looks only at the others: such a pid is still not ours, or its
 * number is a process made since (in ours, or below it, that moves ns_last_pid). */
struct pid_list {
  long *v;
  size_t n, cap;
  bool whole; /* every such pid is in v: false after a failed allocation or out of order */
};

static void pid_list_add(struct pid_list *l, long pid) {
  if (!l->whole)
    return;
  if (l->n > 0 && l->v[l->n - 1] >= pid) {
    l->whole = false;
    return;
  }
  if (l->n == l->cap) {
    size_t cap = l->cap > 0 ? l->cap * 2 : 256;
    long *v = realloc(l->v, cap * sizeof(*v));
    if (v == NULL) {
      l->whole = false;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = pid;
}

static int compare_pid(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static bool pid_list_has(const struct pid_list *l, long pid) {
  return l != NULL && l->whole && l->n > 0 &&
         bsearch(&pid, l->v, l->n, sizeof(*l->v), compare_pid) != NULL;
}

static void pid_list_free(struct pid_list *l) {
  free(l->v);
  *l = (struct pid_list){.whole = true};
}

/* One pass: LEFT_SOME when a process of the namespace other than the init and its session is
 * there, else LEFT_NONE (the caller checks that no process was made during it). The pids in
 * known (NULL: none) are passed over; those found not ours go to seen. */
static int one_pass(int proc_fd, long self, long init_pid, long init_sid,
                    const struct namespaces *ns, const struct pid_list *known,
                    struct pid_list *seen) {
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
    if (*end != '\0' || pid <= 0 || pid == self || pid == init_pid || pid_list_has(known, pid))
      continue;
    int ours = in_our_namespaces(proc_fd, pid, ns);
    if (ours == 0)
      pid_list_add(seen, pid);
    else if (ours < 0)
      left = LEFT_UNKNOWN;
    else if (ours && session_of(proc_fd, pid) != init_sid)
      left = LEFT_SOME;
  }
  closedir(dir);
  return left;
}

/* Up to PASSES passes until two clean ones in a row under one ns_last_pid (the second passes over
 * what the first found not ours). */
static int count_passes(int proc_fd, long self, long init_pid, long init_sid,
                        const struct namespaces *ns) {
  struct pid_list known = {.whole = true}, seen = {.whole = true};
  long quiet_from = -1;    /* ns_last_pid before the first of the clean passes in a row */
  int left = LEFT_UNKNOWN; /* something kept making processes there */
  for (int i = 0; i < PASSES; i++) {
    long before = read_long_at(proc_fd, "sys/kernel/ns_last_pid");
    int pass = one_pass(proc_fd, self, init_pid, init_sid, ns,
                        quiet_from > 0 && quiet_from == before ? &known : NULL, &seen);
    long after = read_long_at(proc_fd, "sys/kernel/ns_last_pid");
    if (pass != LEFT_NONE || (quiet_from > 0 && quiet_from == before && before == after)) {
      left = pass;
      break;
    }
    pid_list_free(&known);
    quiet_from = before > 0 && before == after ? before : -1;
    known = seen; /* the next pass's, when this one was clean */
    seen = (struct pid_list){.whole = true};
  }
  pid_list_free(&known);
  pid_list_free(&seen);
  return left;
}

/* fsopen of a procfs for our own pid namespace, configured (hidepid=off) and not yet made. */
static int procfs_context(void) {
  cleanup_close int fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
  if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "hidepid", "off", 0) < 0)
    return -1;
  return steal_fd(&fs);
}

/* A procfs instance of our own pid namespace (the container's), detached: -1 where the kernel
 * makes none. hidepid=off as a word is taken only since Linux 5.8, where each mount is an instance
 * of its own with its own options; before, the mounts of a pid namespace shared the options one
 * of them had set (hidepid=2 hides the other users' processes). Refused in fsrun's mount namespace
 * (EPERM: an ordinary user, whose helper is in the container's user namespace), it is made in a
 * mount namespace of our own, a copy of fsrun's, where that namespace's root may mount a procfs
 * (the host's /proc is fully visible there). */
static int own_procfs_open(void) {
  cleanup_close int fs = procfs_context();
  if (fs < 0 && errno == EPERM && unshare(CLONE_NEWNS) == 0)
    fs = procfs_context();
  if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* The passes over our own procfs: the init by its number there (its pidfd's), -1 (the host's
 * /proc then) where that is not known. */
static int count_in_own_procfs(const struct init_ns *ins, struct namespaces *ns) {
  cleanup_close int proc_fd = ins->pidfd < 0 ? -1 : own_procfs_open();
  long self, init_nr, init_sid;
  if (proc_fd < 0)
    return -1;
  init_nr = pidfd_number(proc_fd, ins->pidfd);
  self = read_long_at(proc_fd, "self/stat"); /* our pid there (getpid's, in this namespace) */
  init_sid = init_nr > 0 ? session_of(proc_fd, init_nr) : -1;
  if (self <= 0 || init_sid <= 0)
    return -1;
  ns->own_procfs = true;
  return count_passes(proc_fd, self, init_nr, init_sid, ns);
}

/* In the helper that lives in the container's pid namespace: its exit status. */
static int count_in_namespace(const struct init_ns *ins, long init_pid, struct namespaces *ns) {
  int left = count_in_own_procfs(ins, ns);
  if (left >= 0)
    return left;
  cleanup_close int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long self, init_sid;
  if (proc_fd < 0 || fstatat(proc_fd, "thread-self/ns/pid", &ns->ours, 0) < 0)
    return LEFT_UNKNOWN;
  long own_pids[32];
  ns->level = nspids(proc_fd, "thread-self", own_pids, 32) - 1;
  read_mapped_ids(proc_fd, &ns->ids);
  self = read_long_at(proc_fd, "self/stat"); /* our pid as the host's procfs numbers it */
  init_sid = session_of(proc_fd, init_pid);
  if (self <= 0 || init_sid <= 0)
    return LEFT_UNKNOWN;
  return count_passes(proc_fd, self, init_pid, init_sid, ns);
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
    _exit(count_in_namespace(ns, init_pid, &own));
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
