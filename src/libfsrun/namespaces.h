/* linux.namespaces: which namespaces the init gets new (all in one clone3 where the kernel's rules
 * allow), which it joins by path (setns, the user namespace first), and the writes that configure a
 * new user or time namespace. */
#ifndef FSRUN_NAMESPACES_H
#define FSRUN_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

#define NS_MAX_JOINS 8

struct ns_join {
  int flag; /* CLONE_NEW* */
  int fd;   /* opened by the parent before clone */
  const char *type;
  const char *path;
};

struct ns_plan {
  int clone_flags;   /* new namespaces created by clone3 */
  int unshare_flags; /* new namespaces the init unshares itself, after its joins/cgroup move */
  int all_new;       /* every new namespace, however created */
  struct ns_join joins[NS_MAX_JOINS];
  size_t n_joins;    /* joined by the init, user first (pid is joined by the parent) */
  int pid_join_fd;   /* a pid namespace to join: the parent setns()es before clone, or -1 */
  bool time_offsets; /* the parent creates the time namespace to write its offsets */
  /* the init's network namespace is not the runtime's: a new one, or one joined by path (podman's
   * bridge, docker's --network container:X); sysfs may then be mounted read-write */
  bool own_netns;
  /* Namespaces that must be created after a setns() cannot come from the first clone3: a pid
   * namespace owned by a joined user namespace, or a new user namespace that must not own the
   * namespaces joined with the host's rights. Then the first child joins and unshares
   * (intermediate_flags) and clones the init (CLONE_PARENT) into them, reports its pid and exits.
   */
  bool double_clone;
  int intermediate_flags;
  /* A pid namespace joined by path, with a new mount namespace and no user namespace: the init
   * builds the root outside it (invisible to that namespace's processes), and only after
   * pivot_root enters it and clones the init that the other container can see; that one mounts
   * the proc entries (see rootfs_ctx.defer_proc). Also with a joined user namespace that owns
   * the pid namespace: the init enters the pid namespace from inside it, and the proc entries are
   * mounted through the first init (pid_join_mounter, proc-mounter.h). */
  bool pid_join_late;
  bool pid_join_mounter;
  /* pid_join_late where no user namespace of the init can enter the pid namespace (a new one, or
   * a joined one that does not own it; root only): the first init enters it first thing, while
   * it still has the host's privilege (setns only sets the pid namespace of its children), then
   * joins and unshares (intermediate_flags) and reports SYNC_NAMESPACES. It forks nothing in
   * between that could be seen there (createContainer hooks run from hook-runner.h), and the proc
   * entries and the late init's procfs come from the runtime (SYNC_PROCFS, procfs of the joined
   * pid namespace through pidns=). */
  bool pid_join_early;
  /* pid_join_late without a user namespace, on a kernel with procfs's pidns=: the late init would
   * be in the host's user namespace, where a process of the joined pid namespace with
   * CAP_SYS_PTRACE can seize it. So the first init does everything that needs privilege before it
   * clones it: the proc entries and the late init's procfs come from the runtime (SYNC_PROCFS, as
   * for pid_join_early), the pty, sysctls, masked and read-only paths, the process's attributes,
   * then it enters the pid namespace, loads a filter that needs CAP_SYS_ADMIN, takes the process's
   * credentials and only then clones the late init, which holds the container's. */
  bool pid_join_prepared;
};

/* CLONE_NEW* for "pid", "network", ...; 0 when unknown. */
int namespace_flag(const char *type);

/* Builds the plan and opens the namespaces to join. cgroup_moved_late: the init enters its cgroup
 * only after clone (cgroup v1), so a new cgroup namespace must be unshared after that. */
int namespaces_plan(const oci_linux *linux_, bool cgroup_moved_late, struct ns_plan *plan,
                    fsrun_error_t *err);
void namespaces_plan_clear(struct ns_plan *plan);

/* In the parent, before clone: join a pid namespace by path and create the time namespace with
 * its offsets, so that the child is born in both. Undone for the parent itself by
 * namespaces_parent_restore(). saved_fds[2] receive the parent's own pid and time namespaces. */
int namespaces_parent_prepare(const struct ns_plan *plan, const oci_linux *linux_, int procfs_fd,
                              int saved_fds[2], fsrun_error_t *err);
int namespaces_parent_restore(int saved_fds[2], fsrun_error_t *err);

/* In the init: setns() every namespace to join (user first), then unshare the late ones. With
 * double_clone, the intermediate child calls namespaces_join and unshares intermediate_flags. */
int namespaces_join(const struct ns_plan *plan, fsrun_error_t *err);
int namespaces_unshare_late(const struct ns_plan *plan, fsrun_error_t *err);
/* In the init, once joined: closes the fds of the namespaces to join. */
void namespaces_close_join_fds(const struct ns_plan *plan);

/* In the parent: writes gid_map and uid_map of pid. Unprivileged, the kernel lets us map only our
 * own id (one wide, after setgroups "deny"); any other map goes through the setuid helpers
 * newuidmap/newgidmap (package uidmap, ranges from /etc/subuid and /etc/subgid), and their absence
 * is an error that names them. */
int namespaces_write_id_maps(int procfs_fd, pid_t pid, const oci_linux *linux_, bool unprivileged,
                             fsrun_error_t *err);

#endif
