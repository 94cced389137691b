#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <spawn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone.h"
#include "procfs.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
  const char *type;
  int flag;
} namespace_types[] = {
    {"user", CLONE_NEWUSER},     {"pid", CLONE_NEWPID},   {"network", CLONE_NEWNET},
    {"mount", CLONE_NEWNS},      {"ipc", CLONE_NEWIPC},   {"uts", CLONE_NEWUTS},
    {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};

int namespace_flag(const char *type) {
  for (size_t i = 0; i < sizeof(namespace_types) / sizeof(namespace_types[0]); i++)
    if (type != NULL && strcmp(type, namespace_types[i].type) == 0)
      return namespace_types[i].flag;
  return 0;
}

void namespaces_plan_clear(struct ns_plan *plan) {
  for (size_t i = 0; i < plan->n_joins; i++)
    if (plan->joins[i].fd >= 0)
      close(plan->joins[i].fd);
  plan->n_joins = 0;
  if (plan->pid_join_fd >= 0)
    close(plan->pid_join_fd);
  plan->pid_join_fd = -1;
}

/* Whether the user namespace user_fd owns the pid namespace pid_fd: then, in it, we may enter
 * the pid namespace (setns checks CAP_SYS_ADMIN over the pid namespace's owner). */
static bool userns_owns(int user_fd, int pid_fd) {
  struct stat user, owner;
  cleanup_close int owner_fd = ioctl(pid_fd, NS_GET_USERNS);
  if (owner_fd < 0 || fstat(owner_fd, &owner) < 0 || fstat(user_fd, &user) < 0)
    return false;
  return user.st_ino == owner.st_ino && user.st_dev == owner.st_dev;
}

/* Whether the user namespace user_fd is an ancestor of the one that owns the pid namespace pid_fd
 * (NS_GET_PARENT answers EPERM above our own user namespace: then it is not). */
static bool userns_is_ancestor_of_owner(int user_fd, int pid_fd) {
  struct stat user, cur;
  int fd = ioctl(pid_fd, NS_GET_USERNS);
  if (fd < 0 || fstat(user_fd, &user) < 0) {
    if (fd >= 0)
      close(fd);
    return false;
  }
  for (;;) {
    int parent = ioctl(fd, NS_GET_PARENT);
    close(fd);
    if (parent < 0 || fstat(parent, &cur) < 0) {
      if (parent >= 0)
        close(parent);
      return false;
    }
    if (cur.st_ino == user.st_ino && cur.st_dev == user.st_dev) {
      close(parent);
      return true;
    }
    fd = parent;
  }
}

/* Whether the init, in the joined user namespace, may enter the joined pid namespace itself (after
 * pivot_root, ns_plan.pid_join_late): when that user namespace owns it, or, for an ordinary user
 * (who cannot enter it any earlier), when it is an ancestor of the owner; setns then wants the
 * user namespace below it on the way to have been made by its root, which the kernel checks. */
static bool joined_userns_enters_pidns(const struct ns_plan *plan) {
  return userns_owns(plan->joins[0].fd, plan->pid_join_fd) ||
         (geteuid() != 0 && userns_is_ancestor_of_owner(plan->joins[0].fd, plan->pid_join_fd));
}

/* A network namespace joined by path is the container's own unless it is the runtime's. */
static bool is_other_netns(int fd) {
  struct stat joined, ours;
  if (fstat(fd, &joined) < 0 || stat("/proc/self/ns/net", &ours) < 0)
    return false;
  return joined.st_ino != ours.st_ino || joined.st_dev != ours.st_dev;
}

/* Whether the kernel makes a procfs of the pid namespace pid_fd for us (procfs's pidns=, Linux
 * 6.15): a pid namespace joined early (or prepared) gets its procfs from the runtime that way. */
static bool procfs_takes_pidns(int pid_fd) {
  cleanup_close int fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
  return fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "pidns", NULL, pid_fd) == 0;
}

/* ns_plan.pid_join_early: the first init is cloned with no namespace but a time one, enters the
 * pid namespace, joins, and unshares the rest itself. */
static int plan_pid_join_early(struct ns_plan *plan, int new_flags, const char *pid_path,
                               fsrun_error_t *err) {
  int cgroup_late = plan->unshare_flags & CLONE_NEWCGROUP;
  if (geteuid() != 0) {
    namespaces_plan_clear(plan);
    return fsrun_error_make(err, EPERM,
                            "linux.namespaces: the pid namespace `%s` can be joined without the "
                            "user namespace that owns it, or one above that, only by root (join "
                            "one of those too)",
                            pid_path);
  }
  if (!procfs_takes_pidns(plan->pid_join_fd)) {
    int saved = errno;
    namespaces_plan_clear(plan);
    return fsrun_error_make(err, saved,
                            "linux.namespaces: joining the pid namespace `%s` with a user "
                            "namespace that does not own it needs procfs's pidns= option "
                            "(Linux 6.15)",
                            pid_path);
  }
  plan->pid_join_early = plan->pid_join_late = true;
  plan->double_clone = plan->pid_join_mounter = false;
  plan->intermediate_flags = new_flags & ~(CLONE_NEWTIME | cgroup_late);
  plan->clone_flags &= CLONE_NEWTIME;
  plan->unshare_flags = cgroup_late;
  return 0;
}

int namespaces_plan(const oci_linux *linux_, bool cgroup_moved_late, struct ns_plan *plan,
                    fsrun_error_t *err) {
  int seen = 0, new_flags = 0;
  bool join_user = false;
  const char *pid_path = NULL;

  memset(plan, 0, sizeof(*plan));
  plan->pid_join_fd = -1;
  if (linux_ == NULL)
    return 0;
  for (size_t i = 0; i < linux_->n_namespaces; i++) {
    const oci_namespace *ns = &linux_->namespaces[i];
    int flag = namespace_flag(ns->type);
    if (flag == 0)
      return fsrun_error_make(err, EINVAL,
                              "linux.namespaces[%zu].type: unknown namespace type `%s`", i,
                              ns->type ? ns->type : "");
    if (seen & flag)
      return fsrun_error_make(err, EINVAL, "linux.namespaces[%zu]: duplicate `%s` namespace", i,
                              ns->type);
    seen |= flag;
    if (ns->path == NULL || ns->path[0] == '\0') {
      new_flags |= flag;
      continue;
    }
    {
      int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        int saved = errno;
        namespaces_plan_clear(plan);
        return fsrun_error_make(err, saved, "linux.namespaces[%zu]: open `%s` namespace `%s`", i,
                                ns->type, ns->path);
      }
      if (flag == CLONE_NEWPID) {
        plan->pid_join_fd = fd;
        pid_path = ns->path;
        continue;
      }
      if (flag == CLONE_NEWNET)
        plan->own_netns = is_other_netns(fd);
      if (flag == CLONE_NEWUSER) {
        join_user = true;
        /* the user namespace is joined first: the others are then joined with its rights */
        memmove(&plan->joins[1], &plan->joins[0], plan->n_joins * sizeof(plan->joins[0]));
        plan->joins[0] =
            (struct ns_join){.flag = flag, .fd = fd, .type = ns->type, .path = ns->path};
      } else {
        plan->joins[plan->n_joins] =
            (struct ns_join){.flag = flag, .fd = fd, .type = ns->type, .path = ns->path};
      }
      plan->n_joins++;
    }
  }

  plan->all_new = new_flags;
  if (new_flags & CLONE_NEWNET)
    plan->own_netns = true;
  plan->clone_flags = new_flags;
  if ((new_flags & CLONE_NEWTIME) && (linux_->time_offsets != NULL || clone3_refused())) {
    /* offsets can only be written before any process is in the namespace; clone(2) has no
     * CLONE_NEWTIME (its bit is the exit signal's) */
    plan->clone_flags &= ~CLONE_NEWTIME;
    plan->time_offsets = true;
  }
  if ((new_flags & CLONE_NEWCGROUP) && cgroup_moved_late) {
    /* the namespace's root is the cgroup the init is in when it is created */
    plan->clone_flags &= ~CLONE_NEWCGROUP;
    plan->unshare_flags |= CLONE_NEWCGROUP;
  }
  if (plan->pid_join_fd >= 0 && (new_flags & CLONE_NEWNS) &&
      ((new_flags & CLONE_NEWUSER) || (join_user && !joined_userns_enters_pidns(plan))))
    return plan_pid_join_early(plan, new_flags, pid_path, err);
  if ((join_user && (new_flags & CLONE_NEWPID)) ||
      ((new_flags & CLONE_NEWUSER) && plan->n_joins > 0)) {
    /* joins first (with the rights they need), then every new namespace, owned by the right user
     * namespace; the init is cloned into the new pid namespace by the intermediate child */
    plan->double_clone = true;
    plan->intermediate_flags = plan->clone_flags;
    plan->clone_flags = 0;
  } else if (join_user) {
    /* namespaces created after joining a user namespace belong to it */
    int late = plan->clone_flags & ~CLONE_NEWTIME;
    plan->clone_flags &= ~late;
    plan->unshare_flags |= late;
  }
  /* a joined user namespace must be able to enter the pid namespace: we do, after pivot_root */
  plan->pid_join_late = plan->pid_join_fd >= 0 && (new_flags & CLONE_NEWNS) &&
                        !(new_flags & CLONE_NEWUSER) && !plan->double_clone &&
                        (!join_user || joined_userns_enters_pidns(plan));
  plan->pid_join_mounter = plan->pid_join_late && join_user;
  plan->pid_join_prepared =
      plan->pid_join_late && !join_user && procfs_takes_pidns(plan->pid_join_fd);
  return 0;
}

int namespaces_parent_prepare(const struct ns_plan *plan, const oci_linux *linux_, int procfs_fd,
                              int saved_fds[2], fsrun_error_t *err) {
  saved_fds[0] = saved_fds[1] = -1;
  if (plan->pid_join_fd >= 0 && !plan->pid_join_late) {
    saved_fds[0] = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
    if (saved_fds[0] < 0)
      return fsrun_error_errno(err, "open our own pid namespace");
    if (setns(plan->pid_join_fd, CLONE_NEWPID) < 0)
      return fsrun_error_errno(err, "join the pid namespace");
  }
  if (plan->time_offsets) {
    static const oci_time_offsets none; /* a new time namespace without clone3: no offsets */
    const oci_time_offsets *o = linux_->time_offsets != NULL ? linux_->time_offsets : &none;
    char buf[128];
    int len;
    pid_t self;
    char path[64];
    saved_fds[1] = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
    if (saved_fds[1] < 0)
      return fsrun_error_errno(err, "open our own time namespace");
    if (unshare(CLONE_NEWTIME) < 0)
      return fsrun_error_errno(err, "create the time namespace");
    len = snprintf(
        buf, sizeof(buf), "monotonic %" PRId64 " %" PRIu32 "\nboottime %" PRId64 " %" PRIu32 "\n",
        o->has_monotonic ? o->monotonic_secs : 0, o->has_monotonic ? o->monotonic_nanosecs : 0,
        o->has_boottime ? o->boottime_secs : 0, o->has_boottime ? o->boottime_nanosecs : 0);
    self = procfs_self_pid(procfs_fd);
    snprintf(path, sizeof(path), "%d/timens_offsets", (int)self);
    if (procfs_write(procfs_fd, path, buf, (size_t)len, err) < 0)
      return fsrun_error_wrap(err, "linux.timeOffsets");
  }
  return 0;
}

int namespaces_parent_restore(int saved_fds[2], fsrun_error_t *err) {
  int ret = 0;
  if (saved_fds[0] >= 0) {
    if (setns(saved_fds[0], CLONE_NEWPID) < 0)
      ret = fsrun_error_errno(err, "return to our own pid namespace");
    close(saved_fds[0]);
    saved_fds[0] = -1;
  }
  if (saved_fds[1] >= 0) {
    if (setns(saved_fds[1], CLONE_NEWTIME) < 0 && ret == 0)
      ret = fsrun_error_errno(err, "return to our own time namespace");
    close(saved_fds[1]);
    saved_fds[1] = -1;
  }
  return ret;
}

int namespaces_join(const struct ns_plan *plan, fsrun_error_t *err) {
  for (size_t i = 0; i < plan->n_joins; i++) {
    if (setns(plan->joins[i].fd, plan->joins[i].flag) < 0)
      return fsrun_error_errno(err, "join %s namespace `%s`", plan->joins[i].type,
                               plan->joins[i].path);
  }
  return 0;
}

void namespaces_close_join_fds(const struct ns_plan *plan) {
  for (size_t i = 0; i < plan->n_joins; i++)
    if (plan->joins[i].fd >= 0)
      close(plan->joins[i].fd);
}

int namespaces_unshare_late(const struct ns_plan *plan, fsrun_error_t *err) {
  if (plan->unshare_flags != 0 && unshare(plan->unshare_flags) < 0)
    return fsrun_error_errno(err, "create namespaces (unshare 0x%x)", plan->unshare_flags);
  return 0;
}

static int write_map(int procfs_fd, pid_t pid, const char *file, const oci_id_mapping *m, size_t n,
                     fsrun_error_t *err) {
  char path[64];
  cleanup_free char *buf = xmalloc0(n * 40 + 1);
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(buf + len, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n", m[i].container_id,
                           m[i].host_id, m[i].size);
  snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
  return procfs_write(procfs_fd, path, buf, len, err);
}

/* The only map the kernel accepts from an unprivileged writer: its own id, one wide. */
static bool map_is_own_id(const oci_id_mapping *m, size_t n, uint32_t own) {
  return n == 1 && m[0].host_id == own && m[0].size == 1;
}

/* Runs `tool PID CID HID SIZE...` (newuidmap / newgidmap) and waits for it. */
static int write_map_with_helper(const char *tool, pid_t pid, const oci_id_mapping *m, size_t n,
                                 fsrun_error_t *err) {
  extern char **environ;
  cleanup_free char **argv = xmalloc0(sizeof(char *) * (3 * n + 3));
  cleanup_free char *numbers = xmalloc0((3 * n + 1) * 12);
  char *cur = numbers;
  size_t k = 0;
  pid_t child;
  int status, r;

  argv[k++] = (char *)tool;
  argv[k++] = cur;
  cur += sprintf(cur, "%d", (int)pid) + 1;
  for (size_t i = 0; i < n; i++) {
    uint32_t v[3] = {m[i].container_id, m[i].host_id, m[i].size};
    for (int j = 0; j < 3; j++) {
      argv[k++] = cur;
      cur += sprintf(cur, "%" PRIu32, v[j]) + 1;
    }
  }
  r = posix_spawnp(&child, tool, NULL, NULL, argv, environ);
  if (r == ENOENT)
    return fsrun_error_make(
        err, ENOENT,
        "mapping more than our own id needs `%s` (package uidmap), which is not "
        "in PATH",
        tool);
  if (r != 0)
    return fsrun_error_make(err, r, "run `%s`", tool);
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      return fsrun_error_errno(err, "wait for `%s`", tool);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fsrun_error_make(err, EPERM,
                            "`%s` failed (status %d): are the ranges allowed to this user in %s?",
                            tool, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                            strcmp(tool, "newuidmap") == 0 ? "/etc/subuid" : "/etc/subgid");
  return 0;
}

int namespaces_write_id_maps(int procfs_fd, pid_t pid, const oci_linux *linux_, bool unprivileged,
                             fsrun_error_t *err) {
  char path[64];
  bool gid_helper, uid_helper;
  if (linux_->n_uid_mappings == 0 || linux_->n_gid_mappings == 0)
    return fsrun_error_make(err, EINVAL,
                            "linux.uidMappings/gidMappings: a new user namespace needs both");
  gid_helper = unprivileged &&
               !map_is_own_id(linux_->gid_mappings, linux_->n_gid_mappings, (uint32_t)getegid());
  uid_helper = unprivileged &&
               !map_is_own_id(linux_->uid_mappings, linux_->n_uid_mappings, (uint32_t)geteuid());
  /* the kernel takes our own gid only once setgroups is denied; newgidmap decides for itself */
  if (unprivileged && !gid_helper) {
    snprintf(path, sizeof(path), "%d/setgroups", (int)pid);
    if (procfs_write(procfs_fd, path, "deny", 4, err) < 0)
      return fsrun_error_code(err);
  }
  if ((gid_helper ? write_map_with_helper("newgidmap", pid, linux_->gid_mappings,
                                          linux_->n_gid_mappings, err)
                  : write_map(procfs_fd, pid, "gid_map", linux_->gid_mappings,
                              linux_->n_gid_mappings, err)) < 0)
    return fsrun_error_wrap(err, "linux.gidMappings");
  if ((uid_helper ? write_map_with_helper("newuidmap", pid, linux_->uid_mappings,
                                          linux_->n_uid_mappings, err)
                  : write_map(procfs_fd, pid, "uid_map", linux_->uid_mappings,
                              linux_->n_uid_mappings, err)) < 0)
    return fsrun_error_wrap(err, "linux.uidMappings");
  return 0;
}
