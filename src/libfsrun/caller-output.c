#include "caller-output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path-walk.h"
#include "utils.h"

#define NAME_TRIES 4 /* a name that appears or goes between two opens is tried again */

/* the refusal of a path reached through where (path-walk.h) */
static int refuse_parent(const struct path_walk *w, const char *where, const char *why,
                         fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "%s %s: reached through `%s`, %s: whoever can change it decides "
                          "which file fsrun writes; name a file whose parents only this user "
                          "and root can write",
                          w->what, w->path, where, why);
}

/* why st, at the last name in a directory others may write (sticky: /tmp), is not fsrun's to
 * write, or NULL: another uid's file there is theirs to rewrite or link (the kernel's
 * protected_regular and protected_fifos refuse it for an O_CREAT open too) */
static char *foreign_in_shared(const struct path_walk *w, const struct stat *st) {
  if (!path_walk_dir_shared(w) || path_walk_trusted_owner(w, st->st_uid))
    return NULL;
  return xasprintf("owned by uid %u in a directory others may write (fsrun writes only this "
                   "user's or root's file there)",
                   (unsigned)st->st_uid);
}

/* what makes the object st describes no place for fsrun's output, or NULL */
static const char *unfit_output(const struct stat *st) {
  if (S_ISLNK(st->st_mode))
    return "a symbolic link (fsrun writes no file through one)";
  if (!S_ISREG(st->st_mode))
    return "not a regular file";
  if (st->st_nlink > 1)
    return "a file with another hard link (fsrun writes only a file with one name)";
  return NULL;
}

/* obj (st, option's path) checked by unfit, then reopened for writing as that same inode */
static int reopen_checked(const struct path_walk *w, int obj, const struct stat *st,
                          const char *(*unfit)(const struct stat *), int flags,
                          fsrun_error_t *err) {
  cleanup_free char *foreign = foreign_in_shared(w, st);
  const char *why = unfit(st);
  char self[64];
  int fd;
  if (why != NULL || foreign != NULL)
    return fsrun_error_make(err, 0, "%s %s: %s", w->what, w->path, why ? why : foreign);
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  fd = open(self, flags | O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return fsrun_error_errno(err, "%s %s: open", w->what, w->path);
  return fd;
}

/* the existing object at last (in w->dir), checked through an O_PATH fd that follows no link
 * and opens no FIFO or device, then reopened for writing; *gone: no object there any more */
static int open_existing(struct path_walk *w, const char *last, int how, bool *gone,
                         fsrun_error_t *err) {
  cleanup_close int obj = openat(w->dir, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  *gone = obj < 0 && errno == ENOENT;
  if (*gone)
    return -1;
  if (obj < 0 || fstat(obj, &st) < 0)
    return fsrun_error_errno(err, "%s %s: open", w->what, w->path);
  return reopen_checked(w, obj, &st, unfit_output, how, err);
}

/* w walked to path's last name: 0, or the error for a refusal or a missing directory */
static int walk_to_last(struct path_walk *w, char **last, fsrun_error_t *err) {
  int r = path_walk_parent(w, last, err);
  if (r == 1)
    return fsrun_error_make(err, w->missing_errno, "%s %s: open", w->what, w->path);
  return r;
}

/* caller_output_open and caller_output_append: how is O_TRUNC, O_APPEND or 0; *created (or NULL)
 * says whether this open made the file */
static int open_output(const char *option, const char *path, int how, mode_t mode, bool *created,
                       fsrun_error_t *err) {
  cleanup_free char *last = NULL;
  struct path_walk w;
  int fd = -1;
  path_walk_begin(&w, path, option, refuse_parent);
  if (walk_to_last(&w, &last, err) < 0)
    goto out;
  for (int tries = 0; tries < NAME_TRIES; tries++) {
    bool gone;
    fd = openat(w.dir, last, how | O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                mode);
    if (created != NULL)
      *created = fd >= 0;
    if (fd >= 0 || errno != EEXIST) {
      if (fd < 0)
        fsrun_error_errno(err, "%s %s: open", option, path);
      goto out;
    }
    fd = open_existing(&w, last, how, &gone, err);
    if (!gone)
      goto out;
  }
  fd = fsrun_error_make(err, EAGAIN, "%s %s: open: the name kept changing", option, path);
out:
  path_walk_end(&w);
  return fd;
}

int caller_output_check_parents(const char *option, const char *path, fsrun_error_t *err) {
  cleanup_free char *last = NULL;
  struct path_walk w;
  int r;
  path_walk_begin(&w, path, option, refuse_parent);
  r = path_walk_parent(&w, &last, err);
  path_walk_end(&w);
  return r < 0 ? r : 0;
}

int caller_output_open(const char *option, const char *path, fsrun_error_t *err) {
  return open_output(option, path, O_TRUNC, 0644, NULL, err);
}

int caller_output_open_kept(const char *option, const char *path, bool *created,
                            fsrun_error_t *err) {
  return open_output(option, path, 0, 0644, created, err);
}

void caller_output_remove_created(const char *option, const char *path, int fd) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *last = NULL;
  struct stat ours, now;
  struct path_walk w;
  path_walk_begin(&w, path, option, refuse_parent);
  /* unlinkat follows no link at the last name: only the file we made, if it is still there */
  if (fstat(fd, &ours) == 0 && walk_to_last(&w, &last, &err) == 0 &&
      fstatat(w.dir, last, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == ours.st_ino &&
      now.st_dev == ours.st_dev)
    (void)unlinkat(w.dir, last, 0);
  path_walk_end(&w);
}

int caller_output_append(const char *option, const char *path, mode_t mode, fsrun_error_t *err) {
  return open_output(option, path, O_APPEND, mode, NULL, err);
}

/* what makes st no place for fsrun's log, or NULL: a FIFO or a character device is fine
 * (/dev/null, /dev/stderr's terminal or pipe), as is a regular file with one name */
static const char *unfit_log(const struct stat *st) {
  if (S_ISREG(st->st_mode) && st->st_nlink > 1)
    return "a file with another hard link (fsrun writes only a file with one name)";
  if (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode))
    return "not a regular file, FIFO or character device";
  return NULL;
}

/* the log's existing object at last (obj, st) into *fd: 0 once opened, or 1 when it was a link
 * followed by the walk's rules (look again at the new last name; in procfs the kernel follows it:
 * /proc/self/fd/N, the caller's own), or the error */
static int open_existing_log(struct path_walk *w, char **last, int obj, const struct stat *st,
                             int *fd, fsrun_error_t *err) {
  cleanup_close int target = -1;
  struct stat to;
  int r;
  if (S_ISLNK(st->st_mode) && !path_walk_in_proc(w)) {
    r = path_walk_follow_last(w, obj, st, last, err);
    if (r == 1)
      return fsrun_error_make(err, w->missing_errno, "%s %s: open", w->what, w->path);
    return r < 0 ? r : 1;
  }
  if (S_ISLNK(st->st_mode)) {
    target = openat(w->dir, *last, O_PATH | O_CLOEXEC);
    if (target < 0 || fstat(target, &to) < 0)
      return fsrun_error_errno(err, "%s %s: open", w->what, w->path);
    obj = target, st = &to;
  }
  *fd = reopen_checked(w, obj, st, unfit_log, O_APPEND, err);
  return *fd < 0 ? *fd : 0;
}

/* a new log file at last, or -1 with errno (EEXIST: it appeared meanwhile) */
static int create_log(const struct path_walk *w, const char *last) {
  return openat(w->dir, last,
                O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
}

int caller_log_open(const char *path, fsrun_error_t *err) {
  cleanup_free char *last = NULL;
  struct path_walk w;
  int fd = -1, r = 1, appeared = 0;
  path_walk_begin(&w, path, "--log", refuse_parent);
  if (walk_to_last(&w, &last, err) < 0)
    goto out;
  /* each link followed counts against the walk's limit, a name that appears against NAME_TRIES */
  while (r == 1) {
    cleanup_close int obj = openat(w.dir, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (obj < 0 && errno == ENOENT && appeared++ < NAME_TRIES) {
      fd = create_log(&w, last);
      if (fd >= 0)
        break;
      if (errno == EEXIST)
        continue;
    }
    if (obj < 0 || fstat(obj, &st) < 0) {
      fsrun_error_errno(err, "--log %s: open", path);
      break;
    }
    r = open_existing_log(&w, &last, obj, &st, &fd, err);
  }
out:
  path_walk_end(&w);
  return fd >= 0 ? fd : fsrun_error_code(err);
}
