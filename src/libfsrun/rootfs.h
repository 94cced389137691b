/* The container's filesystem view, built inside the init after it has its own mount namespace.
 * Everything inside the rootfs is reached through fds (openat2 RESOLVE_IN_ROOT), never by joining
 * strings onto the rootfs path: the rootfs's contents are untrusted. */
#ifndef FSRUN_ROOTFS_H
#define FSRUN_ROOTFS_H

#include <stdbool.h>

#include "error.h"
#include "mounts.h"
#include "oci.h"

struct rootfs_ctx {
  const oci_config *config;
  const char *bundle; /* absolute bundle dir */
  const char *rootfs; /* absolute rootfs path (root.path resolved against the bundle) */
  bool userns;        /* the init is in a new user namespace: bind devices, no mknod */
  bool new_netns;     /* a new network namespace (its lo is brought up) */
  bool own_netns;     /* not the runtime's network namespace (new, or joined by path): sysfs may
                       * be mounted read-write */
  bool new_cgroupns;
  int console_slave_fd; /* pty slave to bind on /dev/console, or -1 */
  bool no_pivot;        /* --no-pivot: MS_MOVE + chroot */
  /* no mount namespace in the config: the caller's is shared and never changed (nothing is
   * mounted, no propagation set); the root is entered with chroot, as runc does */
  bool shared_mntns;
  int procfs_fd; /* verified procfs handle for writes (sysctl), or -1 */
  /* the init is not yet in the pid namespace it joins (ns_plan.pid_join_late): phase 1 leaves the
   * proc entries out, rootfs_mount_deferred mounts them once it is */
  /* defer_proc in a user namespace: the proc entries go through the first init (proc-mounter.h)
   * on this socket, -1: mounted directly */
  int proc_mounter_fd;
  bool proc_by_runtime; /* defer_proc from pid_join_early: through the runtime, on sync_fd */
  bool defer_proc;
  int sync_fd; /* the init's end of the sync socket (idmapped mounts), or -1 */
  /* When set, called once right before the first cgroup or cgroup2 mount, or at the end of
   * phase 1: the init joins its cgroup (and cgroup namespace) only there, so that the mounts
   * before it overlap with the runtime's work of moving it into the cgroup. */
  void (*join_cgroup)(void *arg);
  void *join_cgroup_arg;
  /* the host's v1 (and hybrid cgroup2) hierarchies as the runtime found them, for the cgroup
   * mount; none: the init reads its own */
  const struct mount_cgroup_hierarchy *cgroup_hierarchies;
  size_t n_cgroup_hierarchies;
};

/* Phase 1 (before createContainer hooks): makes the rootfs a mount point with the requested
 * propagation, performs every entry of `mounts`, creates /dev (tmpfs, default devices,
 * linux.devices, symlinks, /dev/pts, /dev/shm). Refuses a rootfs whose /dev is a symlink. Runs in
 * the init's new mount namespace (never the host's), before pivot: the host's /proc is still at
 * /proc. */
int rootfs_mount_all(const struct rootfs_ctx *ctx, fsrun_error_t *err);
/* Phase 2: pivot_root into the rootfs (or MS_MOVE + chroot under --no-pivot), detach the old root.
 * detached (or -1): a mount made with fsmount and attached nowhere, which the caller keeps using
 * by fd: unmounted with the old root (pivot_root only), so that its close waits for nothing. */
int rootfs_pivot(const struct rootfs_ctx *ctx, int detached, fsrun_error_t *err);
/* Phase 2b (after pivot, with defer_proc): the proc entries of `mounts`, in their order. */
int rootfs_mount_deferred(const struct rootfs_ctx *ctx, fsrun_error_t *err);
/* Phase 3 (after pivot): /dev/console (bind of console_slave_fd), sysctl, readonlyPaths,
 * maskedPaths, root.readonly, rootfsPropagation. */
int rootfs_finalize(const struct rootfs_ctx *ctx, fsrun_error_t *err);

/* Refuses linux.sysctl keys that are not namespaced or whose namespace the config does not create
 * or join: net.* needs a network namespace, the SysV IPC keys (kernel.shmmax, ...) and fs.mqueue.*
 * an ipc one, kernel.hostname/domainname a uts one; anything else would change the host. Phase 1
 * calls it first; validation may call it earlier. Errors: "linux.sysctl: `KEY`: ...". */
int rootfs_check_sysctl(const oci_config *config, fsrun_error_t *err);

#endif
