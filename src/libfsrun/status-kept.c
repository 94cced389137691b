#include "status-kept.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "sandbox-git.h"
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

/* dfd's dir (rootfd's hidden) checked: dfd, or -1 with the dir removed (someone else's writes,
 * or not ours: never reused) */
static int checked_hidden(int rootfd, const char *hidden, int dfd) {
  cleanup_error fsrun_error_t ignored = NULL;
  if (holds_only_state(dfd))
    return dfd;
  log_debug("state root: `%s` is not as fsrun keeps it: removed", hidden);
  close(dfd);
  (void)status_dir_remove_name(rootfd, hidden, &ignored);
  return -1;
}

static bool same_dir(int dfd, int rootfd, const char *name) {
  struct stat a, b;
  return fstat(dfd, &a) == 0 && fstatat(rootfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* rootfd's slot renamed to hidden, unless its lock is held (a live run's, or anyone's: never
 * taken): its fd, holding the lock from before the rename, or -1. What is no directory there
 * (planted) is removed. */
static int claim_slot(int rootfd, const char *slot, const char *hidden) {
  cleanup_close int dfd = openat(rootfd, slot, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      unlinkat(rootfd, slot, 0);
    return -1;
  }
  if (flock(dfd, LOCK_EX | LOCK_NB) < 0 ||
      renameat2(rootfd, slot, rootfd, hidden, RENAME_NOREPLACE) < 0)
    return -1;
  if (same_dir(dfd, rootfd, hidden))
    return steal_fd(&dfd);
  /* another dir took the slot's name between the open and the rename: left as it was */
  (void)renameat2(rootfd, hidden, rootfd, slot, RENAME_NOREPLACE);
  return -1;
}

/* Each ROOT/.sandbox-new-* whose lock nobody holds removed: a run killed with its watchdog between
 * its claim and its reveal left it (no init existed yet). A live run holds its hidden dir's lock
 * from before the name shows a slot's dir, and from just after its mkdir (a sweep between the two
 * only sends that run to a plain state dir). With it that run's git dirs (/dev/shm's, the state
 * root's overlay dir), as the watchdog's clean-up removes them (review29 G7), unless a state dir
 * of that id is there (a later run of the same id, whose they are). */
static void sweep_dead_hidden(const char *state_root, int rootfd) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_dir DIR *dir = NULL;
  struct dirent *de;
  int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  dir = fd < 0 ? NULL : fdopendir(fd);
  if (dir == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((de = readdir(dir)) != NULL) {
    cleanup_close int dfd = -1;
    if (strncmp(de->d_name, HIDDEN_PREFIX, strlen(HIDDEN_PREFIX)) != 0)
      continue;
    dfd = openat(rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || flock(dfd, LOCK_EX | LOCK_NB) < 0 || !same_dir(dfd, rootfd, de->d_name))
      continue;
    log_debug("state root: `%s` is a killed run's: removed", de->d_name);
    (void)status_dir_remove_name(rootfd, de->d_name, &ignored);
    const char *id = de->d_name + strlen(HIDDEN_PREFIX);
    if (id[0] != '\0' && faccessat(rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
      sandbox_git_remove_leftover(state_root, id);
  }
}

/* rootfd's hidden, a kept dir (each slot's in turn, until one passes the checks) or a new one:
 * its fd, holding the dir's lock, or -1 */
static int hidden_dir(int rootfd, const char *hidden) {
  cleanup_error fsrun_error_t ignored = NULL;
  char slot[32];
  int dfd;
  for (int i = 0; i < STATUS_KEPT_SLOTS; i++) {
    slot_name(i, slot, sizeof(slot));
    dfd = claim_slot(rootfd, slot, hidden);
    if (dfd >= 0 && (dfd = checked_hidden(rootfd, hidden, dfd)) >= 0)
      return dfd;
  }
  if (mkdirat(rootfd, hidden, 0700) < 0)
    return -1;
  dfd = openat(rootfd, hidden, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd >= 0 && flock(dfd, LOCK_EX | LOCK_NB) == 0)
    return checked_hidden(rootfd, hidden, dfd);
  if (dfd >= 0)
    close(dfd);
  status_dir_remove_name(rootfd, hidden, &ignored);
  return -1;
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
  if (rootfd >= 0 && on_disk(rootfd) && hidden_name(id, hidden, sizeof(hidden))) {
    sweep_dead_hidden(ctx->state_root, rootfd);
    dfd = hidden_dir(rootfd, hidden);
  }
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

bool status_kept_dir(int dfd) {
  struct stat st;
  return on_disk(dfd) && fstatat(dfd, STATUS_SPARE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(st.st_mode);
}

int status_kept_lock_root(int rootfd) {
  int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ROOT/ID (dfd, its lock held by us) to a free slot, under the state root's lock (taken without
 * waiting: a remover holds it for a few calls, and then the dir is removed as any): KEPT; GONE when
 * ROOT/ID is no more this dir (a delete removed it); OTHER (remove it as any) */
enum kept_release { KEPT, GONE, OTHER };
static enum kept_release release_to_slot(int rootfd, int dfd, const char *id) {
  cleanup_close int lock = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char slot[32];
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
    return OTHER;
  if (!same_dir(dfd, rootfd, id))
    return GONE;
  /* unlocked before a slot shows it: the next run's claim may take it at once */
  flock(dfd, LOCK_UN);
  for (int i = 0; i < STATUS_KEPT_SLOTS; i++) {
    slot_name(i, slot, sizeof(slot));
    if (renameat2(rootfd, id, rootfd, slot, RENAME_NOREPLACE) == 0)
      return KEPT;
    if (errno != EEXIST)
      return OTHER;
  }
  return OTHER;
}

int status_kept_release(const struct fsrun_context *ctx, const char *id, int *dfd,
                        fsrun_error_t *err) {
  cleanup_close int own = -1;
  int rootfd = -1;
  enum kept_release r = OTHER;
  if (id[0] != '.' && status_kept_dir(*dfd) && status_root_dir(ctx, &rootfd, &own, err) == 0 &&
      rootfd >= 0)
    r = release_to_slot(rootfd, *dfd, id);
  fsrun_error_release(err);
  cleanup_closep(dfd);
  return r == OTHER ? status_dir_remove(ctx, id, err) : 0;
}
