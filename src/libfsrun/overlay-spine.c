/* The overlay view of a recursive bind with mounts below it (overlay-spine.h). Host directories
 * are reached through O_PATH fds beneath the bind, given to overlayfs and to readdir as
 * /proc/self/fd/N, which names the fd's own mount and dentry, not what is mounted over it. */
#include "overlay-spine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cover-overlay.h"
#include "utils.h"

/* a spine's entries are a mount each at most: past this many the view is refused (E2BIG) */
#define SPINE_MAX_ENTRIES 1024
#define SPINE_TMPFS_SIZE  "4m"

struct spine {
  unsigned long overlay_flags; /* the bind's: read-only, and its nosuid/nodev/noexec */
  size_t entries;
  char rel[PATH_MAX]; /* the place being made, relative to the bind's root ("" for the root) */
};

/* rel + "/" + name (or name at the root); the old length, to put back */
static size_t rel_push(struct spine *s, const char *name) {
  size_t old = strlen(s->rel);
  snprintf(s->rel + old, sizeof(s->rel) - old, "%s%s", old ? "/" : "", name);
  return old;
}

static int spine_error(struct spine *s, fsrun_error_t *err, int errnum, const char *what) {
  return fsrun_error_make(err, errnum, "%s `%s`", what, s->rel[0] ? s->rel : ".");
}

/* The host directory host (nothing mounted below it) as a read-only overlay onto place, an empty
 * directory of the spine's tmpfs, which is also the overlay's second layer (overlayfs wants two) */
static int overlay_leaf(struct spine *s, int host, int place, fsrun_error_t *err) {
  char data[96], host_path[32], place_path[32];
  snprintf(host_path, sizeof(host_path), "/proc/self/fd/%d", host);
  snprintf(place_path, sizeof(place_path), "/proc/self/fd/%d", place);
  snprintf(data, sizeof(data), "lowerdir=%s:%s", host_path, place_path);
  if (mount("overlay", place_path, "overlay", s->overlay_flags, data) < 0)
    return spine_error(s, err, errno, "overlayfs refused the overlay of");
  return 0;
}

/* The host's mode, owner (where this user namespace maps it) and times on name in place */
static int copy_attrs(int place, const char *name, const struct stat *st) {
  struct timespec times[2] = {st->st_atim, st->st_mtim};
  int flags = name[0] ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;
  if (!S_ISLNK(st->st_mode) && fchmodat(place, name[0] ? name : ".", st->st_mode & 07777, 0) < 0)
    return -1;
  if (fchownat(place, name, st->st_uid, st->st_gid, flags) < 0 && errno != EINVAL)
    return -1;
  return utimensat(place, name[0] ? name : ".", times, name[0] ? AT_SYMLINK_NOFOLLOW : 0);
}

/* A read-only bind of the host's file (or device node) entry, an O_PATH fd of type st, onto name,
 * an empty file in place. The clone is of the fd, not of a name looked up again (review23 A5: a
 * socket renamed over the file between two lookups was bound); its own type and inode are checked
 * too, so only a file or device node can be bound here. ESTALE where they are not the entry's. */
static int bind_file(int entry, const struct stat *st, int place, const char *name) {
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
  cleanup_close int file = -1, mnt = -1;
  struct stat bound;
  file = openat(place, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
  if (file < 0)
    return -1;
  mnt = open_tree(entry, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (mnt < 0 || fstat(mnt, &bound) < 0)
    return -1;
  if ((bound.st_mode & S_IFMT) != (st->st_mode & S_IFMT) || bound.st_dev != st->st_dev ||
      bound.st_ino != st->st_ino ||
      !(S_ISREG(bound.st_mode) || S_ISCHR(bound.st_mode) || S_ISBLK(bound.st_mode))) {
    errno = ESTALE;
    return -1;
  }
  if (mount_setattr(mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
    return -1;
  return move_mount(mnt, "", place, name, MOVE_MOUNT_F_EMPTY_PATH);
}

/* A copy of the host's symbolic link entry (an O_PATH fd of it) as name in place */
static int copy_link(int entry, int place, const char *name) {
  char target[PATH_MAX];
  ssize_t len = readlinkat(entry, "", target, sizeof(target) - 1);
  if (len < 0)
    return -1;
  target[len] = '\0';
  return symlinkat(target, place, name);
}

static int view_dir(struct spine *s, int host, int place, fsrun_error_t *err);

/* The host's directory entry (an O_PATH fd of it; a mount point's is the mount's root) as name
 * in place */
static int view_subdir(struct spine *s, int entry, int place, const char *name,
                       fsrun_error_t *err) {
  cleanup_close int sub_place = -1;
  if (mkdirat(place, name, 0700) < 0)
    return spine_error(s, err, errno, "make the directory");
  sub_place = openat(place, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub_place < 0)
    return spine_error(s, err, errno, "open");
  return view_dir(s, entry, sub_place, err);
}

/* One entry of a spine directory, entry (an O_PATH fd of it, of the host's type st), made as name
 * in place. Everything is done through entry: the name is looked up once. */
static int view_entry(struct spine *s, int entry, int place, const char *name,
                      const struct stat *st, fsrun_error_t *err) {
  int r = 0;
  switch (st->st_mode & S_IFMT) {
  case S_IFDIR:
    return view_subdir(s, entry, place, name, err);
  case S_IFREG:
  case S_IFCHR:
  case S_IFBLK:
    if (bind_file(entry, st, place, name) < 0)
      return spine_error(s, err, errno,
                         errno == ESTALE ? "refused to bind a changed entry, at" : "bind");
    return 0; /* the bind shows the host's inode, its mode, owner and times */
  case S_IFLNK:
    r = copy_link(entry, place, name);
    break;
  case S_IFSOCK: /* the tmpfs's own: no listener, connect() is refused */
  case S_IFIFO:  /* the tmpfs's own: a pipe no host process shares */
    r = mknodat(place, name, (st->st_mode & S_IFMT) | 0600, 0);
    break;
  default:
    return 0;
  }
  if (r < 0 || copy_attrs(place, name, st) < 0)
    return spine_error(s, err, errno, "copy");
  return 0;
}

/* The host's entry name of the directory host, looked up once (an O_PATH fd that is not followed
 * if a link), typed by that fd and made in place from it */
static int view_named(struct spine *s, int host, int place, const char *name, fsrun_error_t *err) {
  cleanup_close int entry = -1;
  struct stat st;
  entry = openat(host, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (entry < 0)
    return errno == ENOENT ? 0 : spine_error(s, err, errno, "open"); /* gone since: not shown */
  if (fstat(entry, &st) < 0)
    return spine_error(s, err, errno, "stat");
  return view_entry(s, entry, place, name, &st, err);
}

/* The entries of the host's directory host (a spine directory) made in place */
static int view_entries(struct spine *s, int host, int place, fsrun_error_t *err) {
  char host_path[32];
  struct dirent *d;
  DIR *dir;
  int r = 0;
  snprintf(host_path, sizeof(host_path), "/proc/self/fd/%d", host);
  dir = opendir(host_path);
  if (dir == NULL)
    return spine_error(s, err, errno, "read the directory");
  while (r == 0 && (errno = 0, d = readdir(dir)) != NULL) {
    size_t old;
    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
      continue;
    old = rel_push(s, d->d_name);
    if (++s->entries > SPINE_MAX_ENTRIES)
      r = spine_error(s, err, E2BIG, "too many entries beside its mounts, at");
    else
      r = view_named(s, host, place, d->d_name, err);
    s->rel[old] = '\0';
  }
  if (r == 0 && errno != 0)
    r = spine_error(s, err, errno, "read the directory");
  closedir(dir);
  return r;
}

/* The host's directory host shown in place: one overlay where overlayfs takes it, else, where a
 * mount is below it, its entries one by one (a spine directory), with the host's mode, owner and
 * times. The kernel refuses the overlay only for a mount copied from the caller's namespace (locked
 * there); one made in this namespace (the container's rootfs, under a state root inside the entry)
 * it lets the overlay hide, which shows the host's directory under it, as the caller may see it. */
static int view_dir(struct spine *s, int host, int place, fsrun_error_t *err) {
  struct stat st;
  if (overlay_leaf(s, host, place, err) == 0)
    return 0;
  if (!cover_submount_below(host, NULL))
    return fsrun_error_code(err); /* refused for another reason */
  fsrun_error_release(err);
  if (fstat(host, &st) < 0)
    return spine_error(s, err, errno, "stat");
  if (view_entries(s, host, place, err) < 0)
    return fsrun_error_code(err);
  if (copy_attrs(place, "", &st) < 0)
    return spine_error(s, err, errno, "copy");
  return 0;
}

/* The spine's tmpfs, attached over bind_root: an fd on its root, or -1 with errno */
static int spine_tmpfs_onto(int bind_root) {
  cleanup_close int fs = -1, mnt = -1;
  fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", "700", 0) < 0 ||
      fsconfig(fs, FSCONFIG_SET_STRING, "size", SPINE_TMPFS_SIZE, 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
      (mnt = fsmount(fs, FSMOUNT_CLOEXEC,
                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0 ||
      move_mount(mnt, "", bind_root, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return -1;
  return steal_fd(&mnt);
}

int overlay_spine_attach(int bind_root, fsrun_error_t *err) {
  struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
  cleanup_free struct spine *s = xmalloc0(sizeof(*s));
  char tmpfs_path[32];
  cleanup_close int tmpfs = -1;
  s->overlay_flags = cover_bind_flags(bind_root);
  tmpfs = spine_tmpfs_onto(bind_root);
  if (tmpfs < 0)
    return spine_error(s, err, errno, "the spine's tmpfs over");
  if (view_dir(s, bind_root, tmpfs, err) == 0) {
    if (mount_setattr(tmpfs, "", AT_EMPTY_PATH, &ro, sizeof(ro)) == 0)
      return 0;
    spine_error(s, err, errno, "make read-only the spine over");
  }
  /* the tmpfs and every overlay and bind on it: the bind is as it was */
  snprintf(tmpfs_path, sizeof(tmpfs_path), "/proc/self/fd/%d", tmpfs);
  umount2(tmpfs_path, MNT_DETACH);
  return fsrun_error_code(err);
}
