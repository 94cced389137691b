#include "status-kept.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "state-root.h"
#include "status.h"
#include "utils.h"

#define KEPT_PREFIX   ".sandbox-kept-"
#define HIDDEN_PREFIX ".sandbox-new-"

/* a tmpfs allocates inodes cheaply: its state dirs are made and removed as any container's */
static bool on_disk(int fd) {
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC;
}

/* ROOT/.sandbox-new-ID's name in buf; false when it would be longer than a name may be */
static bool hidden_name(const char *id, char *buf, size_t size) {
  int n = snprintf(buf, size, HIDDEN_PREFIX "%s", id);
  return n > 0 && (size_t)n < size && n <= NAME_MAX;
}

static void slot_name(int slot, char *buf, size_t size) {
  snprintf(buf, size, KEPT_PREFIX "%d", slot);
}

/* name in dfd: a regular file of this user's with no other link, opened to write */
static int open_own_file(int dfd, const char *name, int flags) {
  struct stat st;
  int fd = openat(dfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | flags, 0600);
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

/* dfd holds state.json and the spare alone, each as open_own_file takes it (made where missing:
 * a new dir) */
static bool holds_only_state(int dfd) {
  static const char *const files[] = {STATUS_FILE, STATUS_SPARE_FILE};
  cleanup_dir DIR *dir = NULL;
  struct dirent *de;
  struct stat st;
  int entries = 0, rfd;
  if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
    return false;
  for (size_t i = 0; i < 2; i++) {
    int fd = open_own_file(dfd, files[i], O_CREAT);
    if (fd < 0)
      return false;
    close(fd);
  }
  rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  dir = rfd < 0 ? NULL : fdopendir(rfd);
  if (dir == NULL) {
    if (rfd >= 0)
      close(rfd);
    return false;
  }
  while ((de = readdir(dir)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      entries++;
  return entries == 2;
}

/* rootfd's hidden, checked: its fd, or -1 with nothing left there by us */
static int checked_hidden(int rootfd, const char *hidden) {
  cleanup_error fsrun_error_t ignored = NULL;
  int dfd = openat(rootfd, hidden, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd >= 0 && holds_only_state(dfd))
    return dfd;
  /* someone else's writes, or not ours: never reused */
  log_debug("state root: `%s` is not as fsrun keeps it: removed", hidden);
  if (dfd >= 0)
    close(dfd);
  (void)status_dir_remove_name(rootfd, hidden, &ignored);
  return -1;
}

/* rootfd's hidden, a kept dir (each slot's in turn, until one passes the checks) or a new one:
 * its fd, or -1 */
static int hidden_dir(int rootfd, const char *hidden) {
  char slot[32];
  int dfd;
  for (int i = 0; i < STATUS_KEPT_SLOTS; i++) {
    slot_name(i, slot, sizeof(slot));
    if (renameat2(rootfd, slot, rootfd, hidden, RENAME_NOREPLACE) < 0) {
      if (errno == ENOENT)
        continue;
      return -1; /* hidden is taken (a killed create's, or this id's twice at once) */
    }
    dfd = checked_hidden(rootfd, hidden);
    if (dfd >= 0)
      return dfd;
  }
  if (mkdirat(rootfd, hidden, 0700) < 0)
    return -1;
  return checked_hidden(rootfd, hidden);
}

/* hidden renamed to id, never over an existing id: where the filesystem has no RENAME_NOREPLACE
 * (EINVAL), an empty dir made at id holds the name and the rename replaces it */
static int rename_noreplace(int rootfd, const char *hidden, const char *id) {
  int saved;
  if (renameat2(rootfd, hidden, rootfd, id, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL || mkdirat(rootfd, id, 0700) < 0)
    return -1;
  if (renameat(rootfd, hidden, rootfd, id) == 0)
    return 0;
  saved = errno;
  unlinkat(rootfd, id, AT_REMOVEDIR);
  errno = saved;
  return -1;
}

int status_kept_create(const struct fsrun_context *ctx, const char *id, bool *spare,
                       fsrun_error_t *err) {
  cleanup_close int own = -1;
  char hidden[NAME_MAX + 1];
  int rootfd = -1, dfd = -1;
  *spare = false;
  if (!ctx->state_root_held && state_root_make(ctx->state_root, err) < 0)
    return fsrun_error_code(err);
  if (status_root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_code(err);
  if (rootfd >= 0 && on_disk(rootfd) && hidden_name(id, hidden, sizeof(hidden)))
    dfd = hidden_dir(rootfd, hidden);
  if (dfd < 0)
    return status_dir_create(ctx, id, err);
  *spare = true;
  return dfd;
}

int status_kept_reveal(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  cleanup_close int own = -1;
  char hidden[NAME_MAX + 1];
  int rootfd = -1, saved;
  if (!hidden_name(id, hidden, sizeof(hidden)) || status_root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_make(err, EINVAL, "the state directory of `%s`", id);
  if (rootfd >= 0 && rename_noreplace(rootfd, hidden, id) == 0)
    return 0;
  saved = rootfd < 0 ? ENOENT : errno;
  status_kept_remove_hidden(ctx, id);
  if (saved == EEXIST)
    return fsrun_error_take(err, EEXIST, xasprintf("container `%s` already exists", id));
  errno = saved;
  return fsrun_error_errno(err, "create the state directory `%s/%s`", ctx->state_root, id);
}

void status_kept_remove_hidden(const struct fsrun_context *ctx, const char *id) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_close int own = -1;
  char hidden[NAME_MAX + 1];
  int rootfd = -1;
  if (hidden_name(id, hidden, sizeof(hidden)) &&
      status_root_dir(ctx, &rootfd, &own, &ignored) == 0 && rootfd >= 0)
    (void)status_dir_remove_name(rootfd, hidden, &ignored);
}

int status_kept_replace(int dirfd, const void *data, size_t len, fsrun_error_t *err) {
  cleanup_close int fd = open_own_file(dirfd, STATUS_SPARE_FILE, 0);
  /* no spare any more (below): as any state dir's */
  if (fd < 0 && errno == ENOENT)
    return status_replace_file(dirfd, STATUS_FILE, data, len, err);
  /* rewritten in place, then cut: its blocks stay allocated (a freed one is a discard) */
  if (fd < 0 || safe_write_all(fd, data, len) < 0 || ftruncate(fd, (off_t)len) < 0)
    return fsrun_error_errno(err, "write `%s`", STATUS_FILE);
  if (renameat2(dirfd, STATUS_SPARE_FILE, dirfd, STATUS_FILE, RENAME_EXCHANGE) == 0)
    return 0;
  /* a filesystem without exchanges: a new file renamed over it (the dir is kept no more) */
  if (errno == EINVAL && unlinkat(dirfd, STATUS_SPARE_FILE, 0) == 0)
    return status_replace_file(dirfd, STATUS_FILE, data, len, err);
  return fsrun_error_errno(err, "write `%s`", STATUS_FILE);
}

bool status_kept_release(int rootfd, int dfd, const char *id) {
  char slot[32];
  struct stat st;
  if (id[0] == '.' || !on_disk(dfd) ||
      fstatat(dfd, STATUS_SPARE_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
    return false;
  for (int i = 0; i < STATUS_KEPT_SLOTS; i++) {
    slot_name(i, slot, sizeof(slot));
    if (renameat2(rootfd, id, rootfd, slot, RENAME_NOREPLACE) == 0)
      return true;
    if (errno != EEXIST)
      return false;
  }
  return false;
}
