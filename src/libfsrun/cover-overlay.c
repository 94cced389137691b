/* Covers as overlays (cover-overlay.h). Every path is reached through fds: the directories beneath
 * the bind through no link, the layers given to overlayfs as /proc/self/fd/N. */
#include "cover-overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mount-children.h"
#include "mount-fallback.h"
#include "mountinfo.h"
#include "openat2-compat.h"
#include "utils.h"

/* the layer holds a handful of empty files and directories */
#define LAYER_TMPFS_SIZE   "16k"
#define LAYER_TMPFS_INODES "16"

/* the length of place's directory part ("etc" of "etc/shadow"; 0 for "shadow") */
static size_t dir_len(const char *place) {
  const char *slash = strrchr(place, '/');
  return slash == NULL ? 0 : (size_t)(slash - place);
}

/* Is place in the directory that is the first len bytes of dir (0: the bind's root), or below? */
static bool in_dir(const char *place, const char *dir, size_t len) {
  return len == 0 || (dir_len(place) >= len && strncmp(place, dir, len) == 0 && place[len] == '/');
}

/* The length of the directory that place's overlay goes over: the shallowest directory of any of
 * covers[0..n) that holds place. Overlays never nest: one over /etc covers /etc/security too. */
static size_t top_len(const char *const *covers, size_t n, const char *place) {
  size_t top = dir_len(place);
  for (size_t j = 0; j < n; j++)
    if (dir_len(covers[j]) < top && in_dir(place, covers[j], dir_len(covers[j])))
      top = dir_len(covers[j]);
  return top;
}

static bool same_top(const char *a, size_t la, const char *b, size_t lb) {
  return la == lb && strncmp(a, b, la) == 0;
}

/* Orders covers by the directory their overlay goes over, each one's together; tops[i] the length
 * of covers[i]'s. */
static void group_by_top(const char **covers, size_t n, size_t *tops) {
  for (size_t i = 0; i < n; i++)
    tops[i] = top_len(covers, n, covers[i]);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0; j--) {
      const char *a = covers[j - 1], *b = covers[j];
      size_t la = tops[j - 1], lb = tops[j];
      int c = strncmp(a, b, la < lb ? la : lb);
      if (c < 0 || (c == 0 && la <= lb))
        break;
      covers[j - 1] = b;
      covers[j] = a;
      tops[j - 1] = lb;
      tops[j] = la;
    }
}

/* The first len bytes of place beneath bind_root ("." for none), through no link */
static int open_dir_beneath(int bind_root, const char *place, size_t len) {
  char dir[PATH_MAX];
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  int fd, tries = 0;
  if (len >= sizeof(dir)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (len > 0)
    snprintf(dir, sizeof(dir), "%.*s", (int)len, place);
  else
    snprintf(dir, sizeof(dir), ".");
  do
    fd = openat2_compat(bind_root, dir, &how);
  while (fd < 0 && errno == EAGAIN && ++tries < 16); /* a concurrent rename; retry */
  return fd;
}

/* The directories of name (relative) in the layer, each with the mode of the host's (lower) */
static int layer_dirs(int layer, int lower, const char *name) {
  char dir[PATH_MAX];
  for (const char *slash = strchr(name, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    struct stat st;
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
    if (fstatat(lower, dir, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return -1;
    if (!S_ISDIR(st.st_mode)) { /* a link on the way, as a bind's RESOLVE_NO_SYMLINKS refuses */
      errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      return -1;
    }
    if (mkdirat(layer, dir, 0700) < 0 && errno != EEXIST)
      return -1;
    if (fchmodat(layer, dir, st.st_mode & 07777, 0) < 0) /* the layer's own: no link there */
      return -1;
  }
  return 0;
}

/* An empty mode-0 file under each of covers[0..n)'s names below the directory of length top, whose
 * host's is lower. A cover only hides what is there: a name the host's directory lacks (or has as a
 * link) fails, as a bind over it would (ENOENT, ELOOP), rather than show a file that is not. */
static int fill_layer(int layer, int lower, const char *const *covers, size_t n, size_t top) {
  for (size_t i = 0; i < n; i++) {
    const char *name = covers[i] + top + (top ? 1 : 0);
    struct stat st;
    int fd;
    if (layer_dirs(layer, lower, name) < 0 || fstatat(lower, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return -1;
    if (S_ISLNK(st.st_mode)) {
      errno = ELOOP;
      return -1;
    }
    fd = openat(layer, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0 || fchmod(fd, 0) < 0) {
      if (fd >= 0)
        close(fd);
      return -1;
    }
    close(fd);
  }
  return 0;
}

/* The layer of covers[0..n) (below the directory of length top, lower), a tmpfs whose root has
 * lower's mode (the overlay shows its root's), attached onto lower. An O_PATH fd on its root, or
 * -1 with errno. */
static int layer_onto(int lower, const char *const *covers, size_t n, size_t top) {
  char mode[32], data[64], path[64];
  struct stat st;
  cleanup_close int fs = -1, mnt = -1;
  if (fstat(lower, &st) < 0)
    return -1;
  snprintf(mode, sizeof(mode), "%o", (unsigned)(st.st_mode & 07777));
  fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 && errno == ENOSYS) { /* mount(2) (mount-fallback.h): attached, then filled */
    snprintf(data, sizeof(data), "mode=%s,size=%s,nr_inodes=%s", mode, LAYER_TMPFS_SIZE,
             LAYER_TMPFS_INODES);
    mnt = mount_fallback_fs("tmpfs", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, data, lower);
    if (mnt >= 0 && fill_layer(mnt, lower, covers, n, top) < 0) {
      int saved = errno;
      snprintf(path, sizeof(path), "/proc/self/fd/%d", mnt);
      umount2(path, MNT_DETACH);
      errno = saved;
      return -1;
    }
    return mnt < 0 ? -1 : steal_fd(&mnt);
  }
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
      fsconfig(fs, FSCONFIG_SET_STRING, "size", LAYER_TMPFS_SIZE, 0) < 0 ||
      fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", LAYER_TMPFS_INODES, 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
      (mnt = fsmount(fs, FSMOUNT_CLOEXEC,
                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0)
    return -1;
  /* attached before overlayfs takes it: a kernel before 6.15 refuses a detached layer */
  if (fill_layer(mnt, lower, covers, n, top) < 0 ||
      move_mount(mnt, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return -1;
  return steal_fd(&mnt);
}

unsigned long cover_bind_flags(int bind_root) {
  struct statvfs sv;
  unsigned long flags = MS_RDONLY;
  if (fstatvfs(bind_root, &sv) < 0)
    return flags | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  flags |= (sv.f_flag & ST_NOSUID) ? MS_NOSUID : 0;
  flags |= (sv.f_flag & ST_NODEV) ? MS_NODEV : 0;
  flags |= (sv.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
  return flags;
}

/* cover_submount_below by the whole mount table, where the kernel cannot list one mount's */
static bool submount_in_table(int dir, const char *path, size_t len, char **point) {
  cleanup_mountinfo struct mountinfo mi = {0};
  struct statx stx;
  if (statx(dir, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID) || mountinfo_read_self(&mi) < 0)
    return true;
  for (size_t i = 0; i < mi.n; i++)
    if (mi.lines[i].parent == stx.stx_mnt_id && strncmp(mi.lines[i].point, path, len) == 0 &&
        mi.lines[i].point[len] == '/') {
      if (point != NULL)
        *point = xstrdup(mi.lines[i].point);
      return true;
    }
  return false;
}

bool cover_submount_below(int dir, char **point) {
  char link[64], path[PATH_MAX];
  ssize_t len;
  int listed;
  if (point != NULL)
    *point = NULL;
  snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
  len = readlink(link, path, sizeof(path) - 1);
  if (len <= 0 || path[0] != '/')
    return true;
  path[len] = '\0';
  if (len == 1)
    len = 0; /* "/": every mount point is below */
  listed = mount_child_below(dir, path, (size_t)len, point);
  if (listed >= 0)
    return listed == 1;
  return submount_in_table(dir, path, (size_t)len, point);
}

/* The overlay over the directory of length top that covers[0..n) share. Overlays never nest, so
 * the directory is the bind's own: opened here, it is both the lower layer and where the layer and
 * the overlay are mounted (each onto the top of what is mounted there). */
static int overlay_one_dir(int bind_root, const char *const *covers, size_t n, size_t top,
                           bool recursive, bool *refused, fsrun_error_t *err) {
  char data[160], lower_path[64], layer_path[64];
  const char *dir = top ? covers[0] : ".";
  int shown = top ? (int)top : 1;
  cleanup_close int lower = -1, layer = -1;
  lower = open_dir_beneath(bind_root, covers[0], top);
  if (lower < 0)
    return fsrun_error_errno(err, "cover `%.*s`", shown, dir);
  if (recursive && cover_submount_below(lower, NULL)) {
    *refused = true;
    return fsrun_error_make(err, EBUSY, "cover `%.*s`: a mount below it would be uncovered", shown,
                            dir);
  }
  layer = layer_onto(lower, covers, n, top);
  if (layer < 0)
    return fsrun_error_errno(err, "cover `%.*s`: its layer", shown, dir);
  snprintf(layer_path, sizeof(layer_path), "/proc/self/fd/%d", layer);
  snprintf(lower_path, sizeof(lower_path), "/proc/self/fd/%d", lower);
  /* /proc/self/fd/N names the fd's own mount and dentry: the host's directory, not the layer.
   * With nothing to hide the host's is the top layer: a directory shows the top layer's owner,
   * mode and times, and the empty layer is there only because overlayfs wants two. */
  if (n > 0)
    snprintf(data, sizeof(data), "lowerdir=%s:%s", layer_path, lower_path);
  else
    snprintf(data, sizeof(data), "lowerdir=%s:%s", lower_path, layer_path);
  if (mount("overlay", lower_path, "overlay", cover_bind_flags(bind_root), data) < 0) {
    int saved = errno;
    umount2(layer_path, MNT_DETACH);
    *refused = true;
    return fsrun_error_make(err, saved, "cover `%.*s`: overlay", shown, dir);
  }
  return 0;
}

int cover_overlays_attach(int bind_root, const char **covers, size_t n, bool recursive,
                          size_t *done, bool *refused, fsrun_error_t *err) {
  cleanup_free size_t *tops = xmalloc0(sizeof(*tops) * (n > 0 ? n : 1));
  *done = 0;
  *refused = false;
  group_by_top(covers, n, tops);
  while (*done < n) {
    size_t start = *done, end = start + 1;
    while (end < n && same_top(covers[end], tops[end], covers[start], tops[start]))
      end++;
    if (overlay_one_dir(bind_root, covers + start, end - start, tops[start], recursive, refused,
                        err) < 0)
      return fsrun_error_code(err);
    *done = end;
  }
  return 0;
}

int cover_overlay_whole(int bind_root, const char *const *covers, size_t n, bool recursive,
                        bool *refused, fsrun_error_t *err) {
  static const char *const none[] = {""};
  *refused = false;
  return overlay_one_dir(bind_root, n > 0 ? covers : none, n, 0, recursive, refused, err);
}
