/* /dev population. Runs in phase 1 with umask 0, so the modes given to mknodat are the modes the
 * nodes get. */
#include "devices.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bind-source.h"
#include "mount-fallback.h"
#include "mounts.h"
#include "utils.h"

struct device_node {
  const char *path; /* container path (and, for binds in a user namespace, the host path) */
  mode_t type;      /* S_IFCHR, S_IFBLK, S_IFIFO */
  unsigned int major, minor;
  mode_t mode;
  uid_t uid;
  gid_t gid;
  bool from_spec; /* linux.devices[index], which the runtime can make when the host lacks it */
  size_t index;
};

static const struct device_node default_devices[] = {
    {"/dev/null", S_IFCHR, 1, 3, 0666, 0, 0},    {"/dev/zero", S_IFCHR, 1, 5, 0666, 0, 0},
    {"/dev/full", S_IFCHR, 1, 7, 0666, 0, 0},    {"/dev/random", S_IFCHR, 1, 8, 0666, 0, 0},
    {"/dev/urandom", S_IFCHR, 1, 9, 0666, 0, 0}, {"/dev/tty", S_IFCHR, 5, 0, 0666, 0, 0},
};

static const struct {
  const char *name;
  const char *target;
} dev_symlinks[] = {
    {"fd", "/proc/self/fd"},
    {"stdin", "/proc/self/fd/0"},
    {"stdout", "/proc/self/fd/1"},
    {"stderr", "/proc/self/fd/2"},
};

#define DEVICE_BIND_ATTR (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)

/* A detached nosuid,noexec bind of the host's node at host_path; a node of linux.devices that
 * the host lacks is made by the runtime (bind-source.h, "device INDEX"), as crun does. */
static int device_tree(const struct device_node *d, const char *host_path, int sync_fd,
                       fsrun_error_t *err) {
  /* a device node is never a program or a setuid one: as runc and crun bind them */
  struct mount_attr attr = {.attr_set = DEVICE_BIND_ATTR};
  cleanup_close int tree = open_tree(AT_FDCWD, host_path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0 && errno == ENOENT && d != NULL && d->from_spec)
    return device_node_request(sync_fd, d->index, err);
  if (tree < 0)
    return fsrun_error_errno(err, "device `%s`: open the host's device", host_path);
  if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
    return fsrun_error_errno(err, "device `%s`: make the bind nosuid,noexec", host_path);
  return steal_fd(&tree);
}

/* device_tree and its move where open_tree answers ENOSYS: the bind is made onto target, then
 * made nosuid,noexec (mount-fallback.h). A node of linux.devices that the host lacks cannot be
 * made: a node on a filesystem mounted in a user namespace cannot be opened, and the runtime's
 * own tmpfs for it (device_node_request) needs fsmount and open_tree. */
static int bind_device_by_mount(int target, const char *host_path, const struct device_node *d,
                                fsrun_error_t *err) {
  struct mount_attr attr = {.attr_set = DEVICE_BIND_ATTR};
  cleanup_close int source = open(host_path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int mnt = -1;
  if (source < 0 && errno == ENOENT && d != NULL && d->from_spec)
    return fsrun_error_make(err, 0,
                            "linux.devices[%zu]: `%s` is not on the host, and making it in a user "
                            "namespace needs fsmount and open_tree, which answer ENOSYS here",
                            d->index, host_path);
  if (source < 0)
    return fsrun_error_errno(err, "device `%s`: open the host's device", host_path);
  mnt = mount_fallback_bind(source, target, false);
  if (mnt < 0)
    return fsrun_error_errno(err, "device `%s`: bind the host's device", host_path);
  if (mount_setattr_compat(mnt, 0, &attr) < 0)
    return fsrun_error_errno(err, "device `%s`: make the bind nosuid,noexec", host_path);
  return 0;
}

/* Binds the host's device at host_path (or the runtime's node for d) onto an empty file `name`
 * in parent_fd. */
static int bind_host_device(int parent_fd, const char *name, const char *host_path,
                            const struct device_node *d, int sync_fd, fsrun_error_t *err) {
  cleanup_close int target = openat(
      parent_fd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
  cleanup_close int tree = -1;
  if (target < 0 && errno == EEXIST) {
    struct stat st;
    target = openat(parent_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (target < 0 || fstat(target, &st) < 0)
      return fsrun_error_errno(err, "device `%s`: open", host_path);
    if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))
      return fsrun_error_make(err, EEXIST, "device `%s`: a %s is in the way", host_path,
                              S_ISDIR(st.st_mode) ? "directory" : "symlink");
  }
  if (target < 0)
    return fsrun_error_errno(err, "device `%s`: create the bind target", host_path);
  tree = device_tree(d, host_path, sync_fd, err);
  if (tree == -ENOSYS) {
    fsrun_error_release(err);
    return bind_device_by_mount(target, host_path, d, err);
  }
  if (tree < 0)
    return fsrun_error_code(err);
  if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return fsrun_error_errno(err, "device `%s`: bind the host's device", host_path);
  return 0;
}

static bool node_matches(int parent_fd, const char *name, const struct device_node *d) {
  struct stat st;
  if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return false;
  return (st.st_mode & S_IFMT) == d->type &&
         (d->type == S_IFIFO || st.st_rdev == makedev(d->major, d->minor));
}

/* dev_fd is /dev of the rootfs, used as it is for nodes directly in /dev */
static int create_device(int rootfs_fd, int dev_fd, const struct device_node *d, bool userns,
                         int sync_fd, fsrun_error_t *err) {
  cleanup_free char *path = path_clean_abs(d->path);
  cleanup_close int own_parent = -1;
  int parent = dev_fd;
  char *slash = strrchr(path, '/');
  const char *name = slash + 1;
  dev_t rdev = d->type == S_IFIFO ? 0 : makedev(d->major, d->minor);

  if (*name == '\0')
    return fsrun_error_make(err, 0, "device `%s`: not a file path", d->path);
  *slash = '\0';
  if (strcmp(path, "/dev") != 0)
    parent = own_parent =
        root_resolve(rootfs_fd, path[0] ? path : "/", ROOT_CREATE_DIR, false, err);
  *slash = '/';
  if (parent < 0)
    return fsrun_error_wrap(err, "device `%s`", path);

  if (userns && d->type != S_IFIFO)
    return bind_host_device(parent, name, path, d, sync_fd, err);
  if (mknodat(parent, name, d->type | (d->mode & 07777), rdev) < 0) {
    if (errno == EPERM && d->type != S_IFIFO)
      return bind_host_device(parent, name, path, NULL, -1, err); /* no mknod: bind instead */
    if (errno != EEXIST)
      return fsrun_error_errno(err, "device `%s`: mknod", path);
    if (node_matches(parent, name, d))
      return 0;
    /* something else is in the way (the rootfs's own /dev): replace it, never follow it */
    if (unlinkat(parent, name, 0) < 0)
      return fsrun_error_errno(err, "device `%s`: remove what is in the way", path);
    if (mknodat(parent, name, d->type | (d->mode & 07777), rdev) < 0)
      return fsrun_error_errno(err, "device `%s`: mknod", path);
  }
  if ((d->uid != 0 || d->gid != 0) &&
      fchownat(parent, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return fsrun_error_errno(err, "device `%s`: chown %u:%u", path, (unsigned)d->uid,
                             (unsigned)d->gid);
  return 0;
}

static int device_from_spec(const oci_device *s, size_t index, struct device_node *out,
                            fsrun_error_t *err) {
  const char *t = s->type ? s->type : "";
  if (s->path == NULL || s->path[0] == '\0')
    return fsrun_error_make(err, 0, "linux.devices[%zu]: path is missing", index);
  if (strcmp(t, "c") == 0 || strcmp(t, "u") == 0)
    out->type = S_IFCHR;
  else if (strcmp(t, "b") == 0)
    out->type = S_IFBLK;
  else if (strcmp(t, "p") == 0)
    out->type = S_IFIFO;
  else
    return fsrun_error_make(err, 0, "linux.devices[%zu]: unknown type `%s`", index, t);
  if (out->type != S_IFIFO && (!s->has_major || !s->has_minor || s->major < 0 || s->minor < 0 ||
                               s->major > 0xfff || s->minor > 0xfffff))
    return fsrun_error_make(err, 0, "linux.devices[%zu]: `%s` needs a valid major and minor", index,
                            s->path);
  out->path = s->path;
  out->major = (unsigned int)s->major;
  out->minor = (unsigned int)s->minor;
  out->mode = s->has_file_mode ? (s->file_mode & 07777) : 0666;
  out->uid = s->has_uid ? s->uid : 0;
  out->gid = s->has_gid ? s->gid : 0;
  out->from_spec = true;
  out->index = index;
  return 0;
}

static bool spec_has_path(const oci_config *config, const char *path) {
  const oci_linux *l = config->linux_;
  for (size_t i = 0; l != NULL && i < l->n_devices; i++) {
    cleanup_free char *p = l->devices[i].path ? path_clean_abs(l->devices[i].path) : NULL;
    if (p != NULL && strcmp(p, path) == 0)
      return true;
  }
  return false;
}

int devices_setup(int rootfs_fd, const oci_config *config, bool userns, int sync_fd,
                  fsrun_error_t *err) {
  cleanup_close int dev = root_resolve(rootfs_fd, "/dev", ROOT_CREATE_DIR, true, err);
  const oci_linux *l = config->linux_;

  if (dev < 0) {
    if (fsrun_error_code(err) == -ELOOP)
      return fsrun_error_make(err, 0, "rootfs /dev is a symlink");
    return fsrun_error_code(err);
  }
  for (size_t i = 0; l != NULL && i < l->n_devices; i++) {
    struct device_node d;
    if (device_from_spec(&l->devices[i], i, &d, err) < 0 ||
        create_device(rootfs_fd, dev, &d, userns, sync_fd, err) < 0)
      return fsrun_error_code(err);
  }
  for (size_t i = 0; i < sizeof(default_devices) / sizeof(default_devices[0]); i++)
    if (!spec_has_path(config, default_devices[i].path) &&
        create_device(rootfs_fd, dev, &default_devices[i], userns, -1, err) < 0)
      return fsrun_error_code(err);

  for (size_t i = 0; i < sizeof(dev_symlinks) / sizeof(dev_symlinks[0]); i++)
    if (symlinkat(dev_symlinks[i].target, dev, dev_symlinks[i].name) < 0 && errno != EEXIST)
      return fsrun_error_errno(err, "symlink `/dev/%s`", dev_symlinks[i].name);
  /* /dev/core only where the kernel has /proc/kcore (the host's /proc: this is before pivot) */
  if (access("/proc/kcore", F_OK) == 0 && symlinkat("/proc/kcore", dev, "core") < 0 &&
      errno != EEXIST)
    return fsrun_error_errno(err, "symlink `/dev/core`");
  /* /dev/ptmx must lead to the container's devpts instance, whatever the rootfs had there */
  if (symlinkat("pts/ptmx", dev, "ptmx") < 0) {
    char target[16];
    ssize_t n;
    if (errno != EEXIST)
      return fsrun_error_errno(err, "symlink `/dev/ptmx`");
    n = readlinkat(dev, "ptmx", target, sizeof(target) - 1);
    if (n < 0 || (size_t)n != strlen("pts/ptmx") || memcmp(target, "pts/ptmx", (size_t)n) != 0) {
      if (unlinkat(dev, "ptmx", 0) < 0 || symlinkat("pts/ptmx", dev, "ptmx") < 0)
        return fsrun_error_errno(err, "symlink `/dev/ptmx`");
    }
  }
  if (mkdirat(dev, "pts", 0755) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "mkdir `/dev/pts`");
  if (mkdirat(dev, "shm", 01777) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "mkdir `/dev/shm`");
  return 0;
}
