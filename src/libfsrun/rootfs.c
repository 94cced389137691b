/* The container's filesystem view in three phases, run by the container init in its own mount
 * namespace: mounts and /dev (before pivot), pivot_root, then what must see the final tree
 * (console, sysctl, readonlyPaths, maskedPaths, a read-only root, the root's propagation). */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devices.h"
#include "mount-fallback.h"
#include "mounts.h"
#include "procfs.h"
#include "root-links.h"
#include "utils.h"

static void restore_umask(mode_t *old) {
  umask(*old);
}
/* modes given to mkdir/mknod are the modes the files get; the caller's umask comes back after */
#define cleanup_umask __attribute__((cleanup(restore_umask)))

static int root_propagation(const oci_config *c, unsigned long *out, fsrun_error_t *err) {
  const char *name = c->linux_ ? c->linux_->rootfs_propagation : NULL;
  *out = 0;
  if (name == NULL || name[0] == '\0')
    return 0;
  *out = mount_propagation_from_name(name);
  if (*out == 0)
    return fsrun_error_make(err, 0, "linux.rootfsPropagation: unknown value `%s`", name);
  return 0;
}

/* --- sysctl ----------------------------------------------------------------------------------- */

static bool config_has_namespace(const oci_config *c, const char *type) {
  for (size_t i = 0; c->linux_ != NULL && i < c->linux_->n_namespaces; i++)
    if (c->linux_->namespaces[i].type && strcmp(c->linux_->namespaces[i].type, type) == 0)
      return true;
  return false;
}

static const char *sysctl_namespace(const char *key) {
  static const char *const ipc_keys[] = {"kernel.msgmax", "kernel.msgmnb",         "kernel.msgmni",
                                         "kernel.sem",    "kernel.shmall",         "kernel.shmmax",
                                         "kernel.shmmni", "kernel.shm_rmid_forced"};
  for (size_t i = 0; i < sizeof(ipc_keys) / sizeof(ipc_keys[0]); i++)
    if (strcmp(key, ipc_keys[i]) == 0)
      return "ipc";
  if (strncmp(key, "fs.mqueue.", 10) == 0)
    return "ipc";
  if (strncmp(key, "net.", 4) == 0)
    return "network";
  if (strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0)
    return "uts";
  return NULL;
}

/* "net.ipv4.conf.eth0/100.forwarding" -> "sys/net/ipv4/conf/eth0.100/forwarding" (sysctl(8)'s
 * convention: dots separate, a slash stands for a dot in a name). NULL for a key that would leave
 * its directory (empty, "." or ".." components). */
static char *sysctl_proc_path(const char *key) {
  cleanup_free char *path = xasprintf("sys/%s", key);
  bool dots = strchr(key, '.') != NULL;
  for (char *p = path + 4; *p; p++) {
    if (dots && *p == '.')
      *p = '/';
    else if (dots && *p == '/')
      *p = '.';
  }
  for (const char *c = path + 4; *c;) {
    const char *e = strchrnul(c, '/');
    size_t n = (size_t)(e - c);
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
      return NULL;
    c = *e ? e + 1 : e;
  }
  if (path[4] == '\0' || path[strlen(path) - 1] == '/')
    return NULL;
  return steal_ptr(&path);
}

int rootfs_check_sysctl(const oci_config *config, fsrun_error_t *err) {
  const oci_map *m = config->linux_ ? &config->linux_->sysctl : NULL;
  for (size_t i = 0; m != NULL && i < m->len; i++) {
    const char *key = m->keys[i];
    const char *ns = sysctl_namespace(key);
    cleanup_free char *path = sysctl_proc_path(key);
    if (path == NULL)
      return fsrun_error_make(err, 0, "linux.sysctl: `%s`: not a valid sysctl name", key);
    if (ns == NULL)
      return fsrun_error_make(
          err, EINVAL, "linux.sysctl: `%s`: not namespaced, setting it would change the host", key);
    if (!config_has_namespace(config, ns))
      return fsrun_error_make(err, 0, "linux.sysctl: `%s`: needs a %s namespace of its own", key,
                              ns);
  }
  return 0;
}

static int apply_sysctl(const struct rootfs_ctx *ctx, fsrun_error_t *err) {
  const oci_map *m = ctx->config->linux_ ? &ctx->config->linux_->sysctl : NULL;
  cleanup_close int own_procfs = -1;
  int procfs = ctx->procfs_fd;
  if (m == NULL || m->len == 0)
    return 0;
  if (procfs < 0) {
    own_procfs = procfs_open(err);
    if (own_procfs < 0)
      return fsrun_error_wrap(err, "linux.sysctl");
    procfs = own_procfs;
  }
  for (size_t i = 0; i < m->len; i++) {
    cleanup_free char *path = sysctl_proc_path(m->keys[i]);
    const char *value = m->values[i] ? m->values[i] : "";
    if (path == NULL)
      return fsrun_error_make(err, 0, "sysctl `%s`: not a valid sysctl name", m->keys[i]);
    if (procfs_write(procfs, path, value, strlen(value), err) < 0)
      return fsrun_error_wrap(err, "sysctl `%s`", m->keys[i]);
  }
  return 0;
}

/* --- phase 1 ---------------------------------------------------------------------------------- */

/* pivot_root refuses a new root whose parent mount is shared: make the mount holding the rootfs
 * private (only needed when the root was asked to be shared). */
static int make_rootfs_mount_private(const char *rootfs, fsrun_error_t *err) {
  struct statx stx;
  cleanup_free char *mountinfo = NULL;
  if (statx(AT_FDCWD, rootfs, 0, STATX_MNT_ID, &stx) < 0)
    return fsrun_error_errno(err, "statx `%s`", rootfs);
  if (read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mountinfo, NULL, err) < 0)
    return fsrun_error_code(err);
  for (char *line = mountinfo, *next; line && *line; line = next) {
    unsigned long long id;
    char mountpoint[4096];
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    if (sscanf(line, "%llu %*u %*s %*s %4095s", &id, mountpoint) != 2 || id != stx.stx_mnt_id)
      continue;
    /* mountinfo escapes spaces and the like as \ooo */
    for (char *s = mountpoint, *o = mountpoint;; s++) {
      if (s[0] == '\\' && s[1] && s[2] && s[3]) {
        *o++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
        s += 3;
      } else if ((*o++ = *s) == '\0') {
        break;
      }
    }
    if (mount(NULL, mountpoint, NULL, MS_PRIVATE, NULL) < 0)
      return fsrun_error_errno(err, "make `%s` private", mountpoint);
    return 0;
  }
  return fsrun_error_make(err, ENOENT, "the mount holding the rootfs `%s` is not in mountinfo",
                          rootfs);
}

static int reopen_rootfs(const char *rootfs, int *fd, size_t index, fsrun_error_t *err) {
  int new_fd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (new_fd < 0)
    return fsrun_error_errno(err, "mounts[%zu]: open the new root `%s`", index, rootfs);
  close(*fd);
  *fd = new_fd;
  return 0;
}

static bool is_proc_entry(const oci_mount *m) {
  return m->type != NULL && strcmp(m->type, "proc") == 0 && !mount_entry_is_bind(m);
}

/* With defer_proc, a later entry below a proc one would land in the procfs of the wrong pid
 * namespace or be covered by the right one: refused. */
static int check_deferred_order(const oci_config *c, size_t i, fsrun_error_t *err) {
  cleanup_free char *dest = path_clean_abs(c->mounts[i].destination);
  size_t n = strlen(dest);
  for (size_t k = 0; k < i; k++) {
    cleanup_free char *proc = NULL;
    if (!is_proc_entry(&c->mounts[k]) || c->mounts[k].destination == NULL)
      continue;
    proc = path_clean_abs(c->mounts[k].destination);
    if (strncmp(dest, proc, strlen(proc)) == 0 && (dest[strlen(proc)] == '/' || n == strlen(proc)))
      return fsrun_error_make(err, EINVAL,
                              "mounts[%zu]: `%s` is below the proc mount mounts[%zu], which a "
                              "container joining a pid namespace mounts last",
                              i, dest, k);
  }
  return 0;
}

int rootfs_mount_deferred(const struct rootfs_ctx *ctx, fsrun_error_t *err) {
  const oci_config *c = ctx->config;
  cleanup_umask mode_t old_umask = umask(0);
  cleanup_close int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct mount_env env = {.rootfs_fd = root_fd,
                          .bundle = ctx->bundle,
                          .own_netns = ctx->own_netns,
                          .new_cgroupns = ctx->new_cgroupns,
                          .runtime_sync_fd = ctx->proc_by_runtime ? ctx->sync_fd : -1,
                          .mount_at_cwd = true,
                          .proc_by_mounter = ctx->proc_mounter_fd >= 0 || ctx->proc_by_runtime,
                          .proc_mounter_fd = ctx->proc_mounter_fd,
                          .proc_by_runtime = ctx->proc_by_runtime};
  if (root_fd < 0)
    return fsrun_error_errno(err, "open `/`");
  for (size_t i = 0; i < c->n_mounts; i++)
    if (is_proc_entry(&c->mounts[i]) && mount_entry(&env, &c->mounts[i], i, err) < 0)
      return fsrun_error_code(err);
  return 0;
}

int rootfs_mount_all(const struct rootfs_ctx *ctx, fsrun_error_t *err) {
  cleanup_umask mode_t old_umask = umask(0);
  const oci_config *c = ctx->config;
  cleanup_close int rootfs_fd = -1;
  unsigned long propagation;
  struct stat st;
  bool dev_is_bind = false, joined = ctx->join_cgroup == NULL;

  if (rootfs_check_sysctl(c, err) < 0 || root_propagation(c, &propagation, err) < 0)
    return fsrun_error_code(err);
  if (ctx->shared_mntns) {
    if (!joined)
      ctx->join_cgroup(ctx->join_cgroup_arg);
    return 0;
  }
  /* Nothing mounted below may reach the host: slave by default (host mounts still propagate in),
   * or the propagation the config asks for. Unbindable would forbid the bind of the rootfs onto
   * itself: private until then, rootfs_finalize makes the root unbindable (as crun does). */
  if (mount(NULL, "/", NULL,
            propagation & MS_UNBINDABLE ? MS_PRIVATE | MS_REC
                                        : (propagation ? propagation : MS_SLAVE | MS_REC),
            NULL) < 0)
    return fsrun_error_errno(err, "set the propagation of `/`");
  if ((propagation & MS_SHARED) && make_rootfs_mount_private(ctx->rootfs, err) < 0)
    return fsrun_error_code(err);
  /* pivot_root needs the rootfs to be a mount point */
  if (mount(ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return fsrun_error_errno(err, "bind the rootfs `%s` onto itself", ctx->rootfs);
  rootfs_fd = open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfs_fd < 0)
    return fsrun_error_errno(err, "open the rootfs `%s`", ctx->rootfs);
  if (fstatat(rootfs_fd, "dev", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return fsrun_error_make(err, 0, "rootfs /dev is a symlink");

  {
    struct mount_dir_cache dirs = {.fd = -1};
    struct mount_env env = {
        .rootfs_fd = rootfs_fd,
        .dirs = &dirs,
        .bundle = ctx->bundle,
        .userns = ctx->userns,
        .own_netns = ctx->own_netns,
        .new_cgroupns = ctx->new_cgroupns,
        .runtime_sync_fd = ctx->sync_fd,
        .cgroup_hierarchies = ctx->cgroup_hierarchies,
        .n_cgroup_hierarchies = ctx->n_cgroup_hierarchies,
    };
    for (size_t i = 0; i < c->n_mounts; i++) {
      const oci_mount *m = &c->mounts[i];
      if (!joined && m->type != NULL &&
          (strcmp(m->type, "cgroup") == 0 || strcmp(m->type, "cgroup2") == 0)) {
        ctx->join_cgroup(ctx->join_cgroup_arg);
        joined = true;
      }
      if (ctx->defer_proc && m->destination != NULL) {
        if (is_proc_entry(m))
          continue;
        if (check_deferred_order(c, i, err) < 0)
          return fsrun_error_code(err);
      }
      if (mount_entry(&env, m, i, err) < 0) {
        mount_dir_cache_drop(&dirs, "/");
        return fsrun_error_code(err);
      }
      if (m->destination != NULL) {
        cleanup_free char *dest = path_clean_abs(m->destination);
        mount_dir_cache_drop(&dirs, dest);
        if (strcmp(dest, "/dev") == 0 && mount_entry_is_bind(m))
          dev_is_bind = true;
        /* a mount onto / replaces the root (a fresh tmpfs, say): the later ones go into it */
        if (strcmp(dest, "/") == 0) {
          if (reopen_rootfs(ctx->rootfs, &rootfs_fd, i, err) < 0 ||
              root_links_make(c, rootfs_fd, err) < 0)
            return fsrun_error_code(err);
          env.rootfs_fd = rootfs_fd;
        }
      }
    }
    mount_dir_cache_drop(&dirs, "/");
  }
  /* a /dev bound from elsewhere is used as it is */
  if (!dev_is_bind && devices_setup(rootfs_fd, c, ctx->userns, ctx->sync_fd, err) < 0)
    return fsrun_error_code(err);
  if (!joined)
    ctx->join_cgroup(ctx->join_cgroup_arg);
  return 0;
}

/* --- phase 2 ---------------------------------------------------------------------------------- */

/* The detached mount rides along with the old root: attached on the old root's /proc (a slave
 * tree by now: the mount is private there, nothing propagates onto it), it is unmounted with the
 * old root and its last close later finds it unmounted already. Closed detached, it would be
 * dissolved then, and that waits for an expedited RCU grace period of its own
 * (tests/bench/README.md, session 25). The fd still leads to it. Where it cannot be attached it is
 * closed as before. */
static void detach_with_old_root(int old_root, int detached) {
  cleanup_close int proc_dir = -1;
  if (detached < 0)
    return;
  proc_dir = openat(old_root, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (proc_dir >= 0)
    (void)move_mount(detached, "", proc_dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

int rootfs_pivot(const struct rootfs_ctx *ctx, int detached, fsrun_error_t *err) {
  cleanup_close int rootfs_fd = open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfs_fd < 0)
    return fsrun_error_errno(err, "open the rootfs `%s`", ctx->rootfs);
  if (fchdir(rootfs_fd) < 0)
    return fsrun_error_errno(err, "chdir to the rootfs `%s`", ctx->rootfs);
  if (ctx->shared_mntns) {
    /* pivot_root here would replace the root of the caller's own mount namespace */
    if (chroot(".") < 0)
      return fsrun_error_errno(err, "chroot to the rootfs `%s`", ctx->rootfs);
  } else if (ctx->no_pivot) {
    if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
      return fsrun_error_errno(err, "move the rootfs `%s` to `/`", ctx->rootfs);
    if (chroot(".") < 0)
      return fsrun_error_errno(err, "chroot to the rootfs `%s`", ctx->rootfs);
  } else {
    /* pivot_root(".", ".") stacks the old root on the new one. mount(2) does not look through
     * mounts stacked on "." (umount2 does): step onto the old root by its fd to change it. */
    cleanup_close int old_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (old_root < 0)
      return fsrun_error_errno(err, "open the old root");
    if (syscall(SYS_pivot_root, ".", ".") < 0)
      return fsrun_error_errno(err, "pivot_root to `%s`", ctx->rootfs);
    if (fchdir(old_root) < 0)
      return fsrun_error_errno(err, "chdir to the old root");
    /* so that detaching it does not propagate anywhere */
    if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
      return fsrun_error_errno(err, "make the old root a slave");
    detach_with_old_root(old_root, detached);
    if (umount2(".", MNT_DETACH) < 0)
      return fsrun_error_errno(err, "detach the old root");
  }
  if (chdir("/") < 0)
    return fsrun_error_errno(err, "chdir to `/`");
  return 0;
}

/* --- phase 3 ---------------------------------------------------------------------------------- */

/* The container's /dev/pts node of the console's pty, checked to be the same device: for a pty
 * opened on a devpts of another mount namespace. */
static int open_console_pts(int root_fd, int slave_fd, fsrun_error_t *err) {
  struct stat slave, found;
  char path[64];
  cleanup_close int pts = -1;
  if (fstat(slave_fd, &slave) < 0)
    return fsrun_error_errno(err, "stat the console");
  snprintf(path, sizeof(path), "/dev/pts/%u",
           (major(slave.st_rdev) - 136) * 256 + minor(slave.st_rdev));
  pts = root_resolve(root_fd, path, ROOT_NO_CREATE, true, err);
  if (pts < 0)
    return fsrun_error_wrap(err, "/dev/console");
  if (fstat(pts, &found) < 0 || !S_ISCHR(found.st_mode) || found.st_rdev != slave.st_rdev)
    return fsrun_error_make(err, 0, "/dev/console: `%s` is not the console's pty", path);
  return steal_fd(&pts);
}

/* Binds pty (the slave, or its node in the container's /dev/pts) onto target: a detached clone
 * moved there, or, where open_tree answers ENOSYS, a bind made in place (mount-fallback.h). -1
 * with errno. */
static int bind_console(int pty, int target) {
  cleanup_close int tree = open_tree(pty, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0 && errno == ENOSYS) {
    tree = mount_fallback_bind(pty, target, false);
    return tree < 0 ? -1 : 0;
  }
  if (tree < 0)
    return -1;
  return move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* Binds the terminal's slave onto /dev/console. */
static int setup_console(int root_fd, int slave_fd, fsrun_error_t *err) {
  cleanup_close int dev = root_resolve(root_fd, "/dev", ROOT_NO_CREATE, true, err);
  cleanup_close int target = -1;
  cleanup_close int pts = -1;
  if (dev < 0)
    return fsrun_error_wrap(err, "/dev/console");
  target =
      openat(dev, "console", O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (target < 0 && errno == EEXIST) {
    struct stat st;
    target = openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (target < 0 || fstat(target, &st) < 0)
      return fsrun_error_errno(err, "open `/dev/console`");
    if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))
      return fsrun_error_make(err, EEXIST, "`/dev/console` is a %s",
                              S_ISDIR(st.st_mode) ? "directory" : "symlink");
  }
  if (target < 0)
    return fsrun_error_errno(err, "create `/dev/console`");

  if (bind_console(slave_fd, target) == 0)
    return 0;
  if (errno != EINVAL)
    return fsrun_error_errno(err, "bind the console onto `/dev/console`");
  /* the pty was opened on a devpts of another mount namespace: bind the same pty from the
   * container's /dev/pts instead */
  pts = open_console_pts(root_fd, slave_fd, err);
  if (pts < 0)
    return pts;
  if (bind_console(pts, target) < 0)
    return fsrun_error_errno(err, "bind the console onto `/dev/console`");
  return 0;
}

/* A path of maskedPaths/readonlyPaths, or -ENOENT (skipped silently) */
static int open_listed_path(int root_fd, const char *list, size_t i, const char *path,
                            fsrun_error_t *err) {
  int fd = root_resolve(root_fd, path, ROOT_NO_CREATE, false, err);
  if (fd == -ENOENT) {
    fsrun_error_release(err);
    return -ENOENT;
  }
  if (fd < 0)
    fsrun_error_wrap(err, "linux.%s[%zu]", list, i);
  return fd;
}

/* Whether fd is the root of a mount (statx, Linux 5.8). */
static bool is_mount_root(int fd) {
  struct statx stx;
  return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) == 0 &&
         (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
         (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int apply_readonly_paths(int root_fd, const oci_strv *paths, fsrun_error_t *err) {
  for (size_t i = 0; i < paths->len; i++) {
    cleanup_close int target = open_listed_path(root_fd, "readonlyPaths", i, paths->items[i], err);
    cleanup_close int tree = -1;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (target == -ENOENT)
      continue;
    if (target < 0)
      return target;
    /* a mount of its own (the sandbox's /etc tmpfs and its ~50 binds) is made read-only in place,
     * all the way down: the same view as a read-only copy on top, without copying every mount
     * below it, and no writable mount left underneath */
    if (is_mount_root(target)) {
      if (mount_setattr_compat(target, AT_RECURSIVE, &attr) < 0)
        return fsrun_error_errno(err, "linux.readonlyPaths[%zu]: make `%s` read-only", i,
                                 paths->items[i]);
      continue;
    }
    /* a recursive bind of the path onto itself, read-only throughout */
    tree =
        open_tree(target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (tree < 0 && errno == ENOSYS) {
      /* mount-fallback.h: the bind onto itself first, then read-only, each submount too */
      tree = mount_fallback_bind(target, target, true);
      if (tree < 0 || mount_setattr_compat(tree, AT_RECURSIVE, &attr) < 0)
        return fsrun_error_errno(err, "linux.readonlyPaths[%zu]: make `%s` read-only", i,
                                 paths->items[i]);
      continue;
    }
    if (tree < 0 ||
        mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0 ||
        move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
      return fsrun_error_errno(err, "linux.readonlyPaths[%zu]: make `%s` read-only", i,
                               paths->items[i]);
  }
  return 0;
}

/* The container's /dev/null, checked to be the null device, for masking files. */
static int open_verified_null(int root_fd, fsrun_error_t *err) {
  struct stat st;
  cleanup_close int fd = root_resolve(root_fd, "/dev/null", ROOT_NO_CREATE, true, err);
  if (fd < 0)
    return fsrun_error_wrap(err, "linux.maskedPaths");
  if (fstat(fd, &st) < 0)
    return fsrun_error_errno(err, "linux.maskedPaths: stat `/dev/null`");
  if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
    return fsrun_error_make(err, 0, "linux.maskedPaths: `/dev/null` is not the null device");
  return steal_fd(&fd);
}

#define EMPTY_TMPFS_ATTR                                                                           \
  (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
#define EMPTY_TMPFS_MS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* An empty read-only tmpfs, detached, for masking directories. */
static int make_empty_tmpfs(fsrun_error_t *err) {
  cleanup_close int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  int mnt;
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fsrun_error_errno(err, "linux.maskedPaths: create an empty tmpfs");
  mnt = fsmount(fs, FSMOUNT_CLOEXEC, EMPTY_TMPFS_ATTR);
  if (mnt < 0)
    return fsrun_error_errno(err, "linux.maskedPaths: mount an empty tmpfs");
  return mnt;
}

static int apply_masked_paths(int root_fd, const oci_strv *paths, fsrun_error_t *err) {
  cleanup_close int null_fd = -1;
  cleanup_close int empty_tmpfs = -1; /* attached after its first use, then cloned */
  bool empty_attached = false;
  for (size_t i = 0; i < paths->len; i++) {
    cleanup_close int target = open_listed_path(root_fd, "maskedPaths", i, paths->items[i], err);
    struct stat st;
    if (target == -ENOENT)
      continue;
    if (target < 0)
      return target;
    if (fstat(target, &st) < 0)
      return fsrun_error_errno(err, "linux.maskedPaths[%zu]: stat `%s`", i, paths->items[i]);
    if (S_ISDIR(st.st_mode)) {
      if (empty_tmpfs < 0 && (empty_tmpfs = make_empty_tmpfs(err)) == -ENOSYS) {
        /* mount-fallback.h: mounted onto the first directory, then bound from there */
        fsrun_error_release(err);
        empty_tmpfs = mount_fallback_fs("none", "tmpfs", EMPTY_TMPFS_MS, "mode=0755", target);
        empty_attached = true;
        if (empty_tmpfs < 0)
          return fsrun_error_errno(err, "linux.maskedPaths[%zu]: mask `%s`", i, paths->items[i]);
        continue;
      }
      if (empty_tmpfs < 0)
        return empty_tmpfs;
      if (!empty_attached) {
        if (move_mount(empty_tmpfs, "", target, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
          return fsrun_error_errno(err, "linux.maskedPaths[%zu]: mask `%s`", i, paths->items[i]);
        empty_attached = true;
      } else if (mount_bind_fd(empty_tmpfs, target, false, err) < 0) {
        return fsrun_error_wrap(err, "linux.maskedPaths[%zu]: mask `%s`", i, paths->items[i]);
      }
    } else {
      if (null_fd < 0 && (null_fd = open_verified_null(root_fd, err)) < 0)
        return null_fd;
      if (mount_bind_fd(null_fd, target, false, err) < 0)
        return fsrun_error_wrap(err, "linux.maskedPaths[%zu]: mask `%s`", i, paths->items[i]);
    }
  }
  return 0;
}

int rootfs_finalize(const struct rootfs_ctx *ctx, fsrun_error_t *err) {
  cleanup_umask mode_t old_umask = umask(0);
  const oci_config *c = ctx->config;
  const oci_linux *l = c->linux_;
  cleanup_close int root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  unsigned long propagation;

  if (root_fd < 0)
    return fsrun_error_errno(err, "open `/`");
  if (root_propagation(c, &propagation, err) < 0)
    return fsrun_error_code(err);
  if (ctx->shared_mntns)
    return apply_sysctl(ctx, err);
  if (ctx->console_slave_fd >= 0 && setup_console(root_fd, ctx->console_slave_fd, err) < 0)
    return fsrun_error_code(err);
  /* before readonlyPaths: /proc/sys is usually one of them */
  if (apply_sysctl(ctx, err) < 0)
    return fsrun_error_code(err);
  if (l != NULL && (apply_readonly_paths(root_fd, &l->readonly_paths, err) < 0 ||
                    apply_masked_paths(root_fd, &l->masked_paths, err) < 0))
    return fsrun_error_code(err);
  if (c->root_readonly) {
    /* a missing process.cwd is created (as the process would see it made later), while the root
     * can still be written; a failure is the chdir's to report */
    if (c->process != NULL && c->process->cwd != NULL && c->process->cwd[0] == '/' &&
        faccessat(AT_FDCWD, c->process->cwd, F_OK, 0) < 0 && errno == ENOENT) {
      cleanup_error fsrun_error_t ignored = NULL;
      (void)mkdir_p_at(AT_FDCWD, c->process->cwd, 0755, &ignored);
    }
    /* only the root mount, as runc does; flags it already has (locked ones too) are kept */
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr_compat(root_fd, 0, &attr) < 0)
      return fsrun_error_errno(err, "make the root read-only");
  }
  /* The root mount only: the mounts below got the root's propagation when they were made (it was
   * set recursively before them) and then their own options, which must win. A recursive change
   * here made every mount shared under containerd's CRI (rootfsPropagation "rshared" whenever a
   * mount is bidirectional), even hostPath volumes it asked to be "rprivate". */
  if (propagation != 0 && mount(NULL, "/", NULL, propagation & ~(unsigned long)MS_REC, NULL) < 0)
    return fsrun_error_errno(err, "set the propagation of `/`");
  return 0;
}
