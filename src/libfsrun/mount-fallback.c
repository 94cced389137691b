/* The new mount API's ENOSYS fallback through mount(2). See mount-fallback.h. */
#include "mount-fallback.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mountinfo.h"
#include "openat2-compat.h"
#include "utils.h"

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

struct mount_ident {
  uint64_t mnt_id;
  dev_t dev;
  ino_t ino;
  bool root; /* the root of its mount */
};

static int ident_of(int fd, struct mount_ident *id) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &stx) < 0)
    return -1;
  if (!(stx.stx_mask & STATX_MNT_ID)) {
    errno = ENOSYS;
    return -1;
  }
  id->mnt_id = stx.stx_mnt_id;
  id->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  id->ino = stx.stx_ino;
  id->root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
             (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
  return 0;
}

static bool same_inode(const struct mount_ident *a, const struct mount_ident *b) {
  return a->dev == b->dev && a->ino == b->ino;
}

static void fd_path(char *buf, size_t len, int fd) {
  snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* The directory holding target and target's name in it (in name_buf), for reaching the mount
 * that mount(2) puts on top of target: the fd itself still names what the mount covers. A
 * directory's parent is its `..`; a file's is its directory's path, and either is checked to hold
 * target under that name (the same mount and inode). An O_PATH fd, or -1 with errno. */
static int parent_of(int target, const struct mount_ident *t, char *name_buf, size_t len) {
  char link[64], path[PATH_MAX];
  struct mount_ident found;
  struct stat st;
  cleanup_close int parent = -1, check = -1;
  ssize_t n;
  char *slash;
  fd_path(link, sizeof(link), target);
  n = readlink(link, path, sizeof(path) - 1);
  if (n <= 0 || (size_t)n >= sizeof(path) - 1 || fstat(target, &st) < 0)
    return -1;
  path[n] = '\0';
  slash = strrchr(path, '/');
  if (path[0] != '/' || slash[1] == '\0' || strlen(slash + 1) >= len) {
    errno = EXDEV; /* the root, or a deleted or unreachable file */
    return -1;
  }
  snprintf(name_buf, len, "%s", slash + 1);
  *(slash == path ? slash + 1 : slash) = '\0';
  parent = S_ISDIR(st.st_mode) ? openat(target, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)
                               : open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0)
    return -1;
  check = openat(parent, name_buf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (check < 0 || ident_of(check, &found) < 0)
    return -1;
  if (found.mnt_id != t->mnt_id || !same_inode(&found, t)) {
    errno = EXDEV;
    return -1;
  }
  return steal_fd(&parent);
}

/* The mount now on top of parent/name: the root of the mount `made`, the one mount(2) added. A
 * rename in the rootfs could put another directory under that name: then it fails (EXDEV). */
static int reopen_top(int parent, const char *name, uint64_t made) {
  cleanup_close int fd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct mount_ident id;
  if (fd < 0 || ident_of(fd, &id) < 0)
    return -1;
  if (!id.root || id.mnt_id != made) {
    errno = EXDEV;
    return -1;
  }
  return steal_fd(&fd);
}

/* mount(2) onto target, then the fd of the new mount: the one mount that the mount table did not
 * have before, whose parent is the target's mount (mountinfo.h) */
static int mount_on_top(const char *source, const char *type, unsigned long flags, const char *data,
                        int target) {
  char name[NAME_MAX + 1], target_path[64];
  struct mount_ident t;
  cleanup_mountinfo struct mountinfo before = {0}, after = {0};
  cleanup_close int parent = -1;
  uint64_t made;
  if (ident_of(target, &t) < 0 || (parent = parent_of(target, &t, name, sizeof(name))) < 0)
    return -1;
  if (mountinfo_read_self(&before) < 0)
    return -1;
  fd_path(target_path, sizeof(target_path), target);
  if (mount(source, target_path, type, flags, data) < 0)
    return -1;
  if (mountinfo_read_self(&after) < 0 || mountinfo_new_child(&before, &after, t.mnt_id, &made) < 0)
    return -1;
  return reopen_top(parent, name, made);
}

int mount_fallback_bind(int source_fd, int target_fd, bool recursive) {
  char source_path[64];
  struct mount_ident s, m;
  cleanup_close int mnt = -1;
  fd_path(source_path, sizeof(source_path), source_fd);
  if (ident_of(source_fd, &s) < 0)
    return -1;
  mnt = mount_on_top(source_path, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL, target_fd);
  if (mnt < 0 || ident_of(mnt, &m) < 0)
    return -1;
  if (!same_inode(&s, &m)) {
    errno = EXDEV;
    return -1;
  }
  return steal_fd(&mnt);
}

int mount_fallback_fs(const char *source, const char *type, unsigned long flags, const char *data,
                      int target_fd) {
  return mount_on_top(source, type, flags, data, target_fd);
}

/* --- remount ---------------------------------------------------------------------------------- */

static const struct {
  uint64_t attr;
  unsigned long ms;
  unsigned long st;
} flag_map[] = {
    {MOUNT_ATTR_RDONLY, MS_RDONLY, ST_RDONLY},
    {MOUNT_ATTR_NOSUID, MS_NOSUID, ST_NOSUID},
    {MOUNT_ATTR_NODEV, MS_NODEV, ST_NODEV},
    {MOUNT_ATTR_NOEXEC, MS_NOEXEC, ST_NOEXEC},
    {MOUNT_ATTR_NODIRATIME, MS_NODIRATIME, ST_NODIRATIME},
    {MOUNT_ATTR_NOSYMFOLLOW, MS_NOSYMFOLLOW, ST_NOSYMFOLLOW},
};

/* the MS_* flags a mount has now (statfs's f_flags), the atime mode spelled out: a remount without
 * one means relatime */
static unsigned long current_flags(const struct statfs *sfs) {
  unsigned long ms = 0;
  for (size_t i = 0; i < sizeof(flag_map) / sizeof(flag_map[0]); i++)
    if (sfs->f_flags & flag_map[i].st)
      ms |= flag_map[i].ms;
  if (sfs->f_flags & ST_NOATIME)
    ms |= MS_NOATIME;
  else if (sfs->f_flags & ST_RELATIME)
    ms |= MS_RELATIME;
  else
    ms |= MS_STRICTATIME;
  return ms;
}

static unsigned long with_attr(unsigned long ms, const struct mount_attr *attr) {
  for (size_t i = 0; i < sizeof(flag_map) / sizeof(flag_map[0]); i++) {
    if (attr->attr_clr & flag_map[i].attr)
      ms &= ~flag_map[i].ms;
    if (attr->attr_set & flag_map[i].attr)
      ms |= flag_map[i].ms;
  }
  if (attr->attr_clr & MOUNT_ATTR__ATIME) {
    uint64_t atime = attr->attr_set & MOUNT_ATTR__ATIME;
    ms &= ~(unsigned long)(MS_NOATIME | MS_RELATIME | MS_STRICTATIME);
    ms |= atime == MOUNT_ATTR_NOATIME       ? MS_NOATIME
          : atime == MOUNT_ATTR_STRICTATIME ? MS_STRICTATIME
                                            : MS_RELATIME;
  }
  return ms;
}

/* MS_REMOUNT|MS_BIND of one mount: its flags, attr's on top. Clearing a flag that a user namespace
 * locks is refused (EPERM): then the mount keeps every flag it has, and gets attr's set ones. */
static int remount_one(int fd, const struct mount_attr *attr) {
  char path[64];
  struct statfs sfs;
  unsigned long now;
  fd_path(path, sizeof(path), fd);
  if (fstatfs(fd, &sfs) < 0)
    return -1;
  now = current_flags(&sfs);
  if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | with_attr(now, attr), NULL) == 0)
    return 0;
  if (errno != EPERM)
    return -1;
  struct mount_attr keep = {.attr_set = attr->attr_set & ~(uint64_t)MOUNT_ATTR__ATIME};
  return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | with_attr(now, &keep), NULL);
}

/* --- the submounts of a mount ---------------------------------------------------------------- */

/* The submount at point, opened beneath the mount fd whose mount point is top_point, and checked
 * to be that mount (mount_id): a mount hidden under another one is not reached (EBUSY). */
static int open_submount(int fd, const char *top_point, const char *point, uint64_t mount_id) {
  struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  size_t n = strcmp(top_point, "/") == 0 ? 0 : strlen(top_point);
  struct mount_ident id;
  cleanup_close int sub = -1;
  if (strncmp(point, top_point, n) != 0 || point[n] != '/') {
    errno = EBUSY;
    return -1;
  }
  sub = openat2_compat(fd, point + n + 1, &how);
  if (sub < 0 || ident_of(sub, &id) < 0)
    return -1;
  if (id.mnt_id != mount_id) {
    errno = EBUSY;
    return -1;
  }
  return steal_fd(&sub);
}

/* remount_one of every mount below fd's */
static int remount_below(int fd, const struct mount_attr *attr) {
  cleanup_mountinfo struct mountinfo mi = {0};
  cleanup_free bool *below = NULL;
  struct mount_ident top;
  const char *top_point = NULL;
  if (ident_of(fd, &top) < 0 || mountinfo_read_self(&mi) < 0)
    return -1;
  for (size_t i = 0; i < mi.n; i++)
    if (mi.lines[i].id == top.mnt_id)
      top_point = mi.lines[i].point;
  if (top_point == NULL) {
    errno = EINVAL;
    return -1;
  }
  below = calloc(mi.n ? mi.n : 1, sizeof(*below));
  if (below == NULL || mountinfo_below(&mi, top.mnt_id, below) < 0) {
    errno = ENOMEM;
    return -1;
  }
  for (size_t i = 0; i < mi.n; i++) {
    cleanup_close int sub = -1;
    if (!below[i])
      continue;
    sub = open_submount(fd, top_point, mi.lines[i].point, mi.lines[i].id);
    if (sub < 0 || remount_one(sub, attr) < 0)
      return -1;
  }
  return 0;
}

int mount_fallback_setattr(int fd, unsigned int at_flags, const struct mount_attr *attr) {
  char path[64];
  bool recursive = (at_flags & AT_RECURSIVE) != 0;
  if (attr->attr_set != 0 || attr->attr_clr != 0) {
    if (remount_one(fd, attr) < 0 || (recursive && remount_below(fd, attr) < 0))
      return -1;
  }
  if (attr->propagation == 0)
    return 0;
  fd_path(path, sizeof(path), fd);
  return mount(NULL, path, NULL, attr->propagation | (recursive ? MS_REC : 0), NULL);
}

int mount_setattr_compat(int fd, unsigned int at_flags, struct mount_attr *attr) {
  if (mount_setattr(fd, "", AT_EMPTY_PATH | at_flags, attr, sizeof(*attr)) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
  return mount_fallback_setattr(fd, at_flags, attr);
}

/* --- whether the fallback would be taken ----------------------------------------------------- */

static bool answers_enosys(long r) {
  return r < 0 && errno == ENOSYS;
}

const char *mount_api_missing(void) {
  /* a bad fd (or size) everywhere: EBADF, EINVAL or ENOENT from a kernel that has the call */
  if (answers_enosys(open_tree(-1, "", 0)))
    return "open_tree";
  if (answers_enosys(move_mount(-1, "", -1, "", 0)))
    return "move_mount";
  if (answers_enosys(mount_setattr(-1, "", 0, NULL, 0)))
    return "mount_setattr";
  if (answers_enosys(fsopen("", 0)))
    return "fsopen";
  if (answers_enosys(fsconfig(-1, FSCONFIG_CMD_CREATE, NULL, NULL, 0)))
    return "fsconfig";
  if (answers_enosys(fsmount(-1, 0, 0)))
    return "fsmount";
  return NULL;
}
