#include "path-walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "utils.h"

#define PATH_WALK_LINKS_MAX 40 /* the kernel's own limit on links in one lookup */

void path_walk_begin(struct path_walk *w, const char *path, const char *what,
                     path_walk_refuse_fn *refuse) {
  *w = (struct path_walk){
      .dir = -1, .euid = geteuid(), .path = path, .what = what, .refuse = refuse};
}

void path_walk_end(struct path_walk *w) {
  if (w->dir >= 0)
    close(w->dir);
  w->dir = -1;
}

/* In a user namespace, what the host's root owns shows as the overflow uid, as does what any
 * other uid outside the namespace's map owns: taken as the host's (`/`, `/run`, `/tmp`), since
 * nothing here tells them apart. */
static bool unmapped_owner(uid_t uid) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *text = NULL;
  unsigned long overflow = 65534;
  if (!in_child_user_namespace())
    return false;
  if (read_file_at(AT_FDCWD, "/proc/sys/kernel/overflowuid", &text, NULL, &err) == 0)
    sscanf(text, "%lu", &overflow);
  return uid == (uid_t)overflow;
}

bool path_walk_trusted_owner(const struct path_walk *w, uid_t uid) {
  return uid == w->euid || uid == 0 || unmapped_owner(uid);
}

bool path_walk_dir_shared(const struct path_walk *w) {
  return w->dir >= 0 && (w->dir_st.st_mode & (S_IWGRP | S_IWOTH));
}

bool path_walk_in_proc(const struct path_walk *w) {
  struct statfs fs;
  return w->dir >= 0 && fstatfs(w->dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

/* What the lookup passes through (fd, st: a directory it looks a name up in, or a link it
 * follows) may be swapped by whoever can rename in it: only the caller and uid 0 may own it, and
 * a directory others may write needs the sticky bit (/tmp: nobody renames another's entry). */
static int check_passed(const struct path_walk *w, int fd, const struct stat *st,
                        fsrun_error_t *err) {
  char path[64], where[PATH_MAX];
  cleanup_free char *why = NULL;
  ssize_t n;
  if (!path_walk_trusted_owner(w, st->st_uid) && !(w->others_dirs && S_ISDIR(st->st_mode)))
    why = xasprintf("owned by uid %u", (unsigned)st->st_uid);
  else if (S_ISDIR(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
    why =
        xasprintf("writable by %s without the sticky bit (mode %04o)",
                  st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
  else
    return 0;
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  n = readlink(path, where, sizeof(where) - 1);
  where[n > 0 ? n : 0] = '\0';
  return w->refuse(w, where, why, err);
}

/* fd (st) becomes the walk's directory once checked; closed either way */
static int walk_enter(struct path_walk *w, int fd, const struct stat *st, fsrun_error_t *err) {
  if (check_passed(w, fd, st, err) < 0) {
    close(fd);
    return fsrun_error_code(err);
  }
  path_walk_end(w);
  w->dir = fd;
  w->dir_st = *st;
  return 0;
}

/* the walk starts at `/` or the working directory (name), which is checked too */
static int walk_start(struct path_walk *w, const char *name, fsrun_error_t *err) {
  int fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    if (fd >= 0)
      close(fd);
    return fsrun_error_errno(err, "look up `%s` on the way to `%s`", name, w->path);
  }
  return walk_enter(w, fd, &st, err);
}

static int walk_path(struct path_walk *w, const char *path, fsrun_error_t *err);

/* a link passed (fd, st in w->dir): checked, counted, its text read into target */
static int read_link(struct path_walk *w, int fd, const struct stat *st, char *target,
                     fsrun_error_t *err) {
  ssize_t n;
  if (check_passed(w, fd, st, err) < 0)
    return fsrun_error_code(err);
  if (++w->links > PATH_WALK_LINKS_MAX)
    return fsrun_error_make(err, ELOOP, "look up `%s`", w->path);
  n = readlinkat(fd, "", target, PATH_MAX - 1);
  if (n < 0)
    return fsrun_error_errno(err, "read a link `%s` is reached through", w->path);
  target[n] = '\0';
  return 0;
}

/* follows the link name (fd, st) in w->dir as the kernel would: its text looked up from w->dir,
 * or in procfs the kernel's own object (what /proc/self/cwd or /proc/self/fd/N holds) */
static int walk_link(struct path_walk *w, const char *name, int fd, const struct stat *st,
                     fsrun_error_t *err) {
  char target[PATH_MAX];
  struct stat to;
  int dir;
  if (!path_walk_in_proc(w)) {
    if (read_link(w, fd, st, target, err) < 0)
      return fsrun_error_code(err);
    return walk_path(w, target, err);
  }
  if (check_passed(w, fd, st, err) < 0)
    return fsrun_error_code(err);
  dir = openat(w->dir, name, O_PATH | O_CLOEXEC);
  if (dir < 0 || fstat(dir, &to) < 0 || !S_ISDIR(to.st_mode)) {
    w->missing_errno = dir < 0 && errno == ENOENT ? ENOENT : ENOTDIR;
    if (dir >= 0)
      close(dir);
    return 1;
  }
  return walk_enter(w, dir, &to, err);
}

/* 1 when a name is missing or not a directory, 0 once w->dir is path's directory, every step
 * checked; or an error */
static int walk_path(struct path_walk *w, const char *path, fsrun_error_t *err) {
  cleanup_free char *copy = xstrdup(path);
  char *save = NULL;
  if (path[0] == '/' && walk_start(w, "/", err) < 0)
    return fsrun_error_code(err);
  for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
    cleanup_close int fd = -1;
    struct stat st;
    int r;
    if (strcmp(name, ".") == 0)
      continue;
    fd = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
      w->missing_errno = errno;
      return 1;
    }
    if (fd < 0 || fstat(fd, &st) < 0)
      return fsrun_error_errno(err, "look up `%s` on the way to `%s`", name, w->path);
    if (S_ISLNK(st.st_mode) && (r = walk_link(w, name, fd, &st, err)) != 0)
      return r;
    if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode)) {
      w->missing_errno = ENOTDIR;
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      int dir = fd;
      fd = -1; /* walk_enter keeps or closes it */
      if (walk_enter(w, dir, &st, err) < 0)
        return fsrun_error_code(err);
    }
  }
  return 0;
}

/* path's last name, path's text cut before it into *parent ("." for a bare name) */
static char *split_last(const char *path, char **parent) {
  cleanup_free char *copy = xstrdup(path);
  size_t len = strlen(copy);
  char *slash;
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';
  slash = strrchr(copy, '/');
  if (slash == NULL) {
    *parent = xstrdup(".");
    return xstrdup(copy);
  }
  *parent = slash == copy ? xstrdup("/") : xasprintf("%.*s", (int)(slash - copy), copy);
  return xstrdup(slash[1] ? slash + 1 : ".");
}

int path_walk_parent(struct path_walk *w, char **last, fsrun_error_t *err) {
  cleanup_free char *parent = NULL;
  *last = split_last(w->path, &parent);
  if (parent[0] != '/' && walk_start(w, ".", err) < 0)
    return fsrun_error_code(err);
  return walk_path(w, parent, err);
}

int path_walk_follow_last(struct path_walk *w, int fd, const struct stat *st, char **last,
                          fsrun_error_t *err) {
  cleanup_free char *parent = NULL;
  char target[PATH_MAX];
  if (read_link(w, fd, st, target, err) < 0)
    return fsrun_error_code(err);
  free(*last);
  *last = split_last(target, &parent);
  return walk_path(w, parent, err);
}
