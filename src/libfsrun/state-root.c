#include "state-root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#define STATE_ROOT_LINKS_MAX 40 /* the kernel's own limit on links in one lookup */

static int refuse(const char *root, const char *why, fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "state root `%s` %s: whoever can write it decides what this user's "
                          "kill and delete act on; use --root or XDG_RUNTIME_DIR to name a "
                          "directory of your own (mode 0700)",
                          root, why);
}

/* the refusal for what st (the root, not followed) is, or 0 */
static int check_owner(const char *root, const struct stat *st, fsrun_error_t *err) {
  cleanup_free char *why = NULL;
  if (st->st_uid != geteuid()) {
    why = xasprintf("is owned by uid %u, not by this user (uid %u)", (unsigned)st->st_uid,
                    (unsigned)geteuid());
    return refuse(root, why, err);
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    why = xasprintf("is writable by %s (mode %04o)", st->st_mode & S_IWOTH ? "others" : "its group",
                    (unsigned)(st->st_mode & 07777));
    return refuse(root, why, err);
  }
  return 0;
}

int state_root_check_fd(int fd, const char *root, fsrun_error_t *err) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return fsrun_error_errno(err, "look at the state root `%s`", root);
  if (!S_ISDIR(st.st_mode))
    return refuse(root, "is not a directory", err);
  return check_owner(root, &st, err);
}

/* the directory the walk stands in: the next name is looked up in it */
struct walk {
  int dir;
  unsigned links;
  uid_t euid;
  const char *root; /* for messages */
};

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

/* What the root's lookup passes through (fd, st: a directory it looks a name up in, or a link it
 * follows) may be swapped by whoever can rename in it: only the caller and uid 0 may own it, and
 * a directory others may write needs the sticky bit (/tmp: nobody renames another's entry). */
static int check_passed(const struct walk *w, int fd, const struct stat *st, fsrun_error_t *err) {
  char path[64], where[PATH_MAX];
  cleanup_free char *why = NULL;
  ssize_t n;
  if (st->st_uid != w->euid && st->st_uid != 0 && !unmapped_owner(st->st_uid))
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
  return fsrun_error_make(err, 0,
                          "state root `%s` is reached through `%s`, %s: whoever can rename in it "
                          "can put another directory in the root's place after the check; use "
                          "--root or XDG_RUNTIME_DIR to name a directory whose parents only this "
                          "user and root can write",
                          w->root, where, why);
}

/* fd (st) becomes the walk's directory once checked; closed either way */
static int walk_enter(struct walk *w, int fd, const struct stat *st, fsrun_error_t *err) {
  if (check_passed(w, fd, st, err) < 0) {
    close(fd);
    return fsrun_error_code(err);
  }
  if (w->dir >= 0)
    close(w->dir);
  w->dir = fd;
  return 0;
}

/* the walk starts at `/` or the working directory (name), which is checked too */
static int walk_start(struct walk *w, const char *name, fsrun_error_t *err) {
  int fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    if (fd >= 0)
      close(fd);
    return fsrun_error_errno(err, "look up `%s` on the way to the state root `%s`", name, w->root);
  }
  return walk_enter(w, fd, &st, err);
}

static int walk_path(struct walk *w, const char *path, fsrun_error_t *err);

/* follows the link fd (in w->dir) as the kernel would: its text looked up from w->dir */
static int walk_link(struct walk *w, int fd, const struct stat *st, fsrun_error_t *err) {
  char target[PATH_MAX];
  ssize_t n;
  if (check_passed(w, fd, st, err) < 0)
    return fsrun_error_code(err);
  if (++w->links > STATE_ROOT_LINKS_MAX)
    return fsrun_error_make(err, ELOOP, "look up the state root `%s`", w->root);
  n = readlinkat(fd, "", target, sizeof(target) - 1);
  if (n < 0)
    return fsrun_error_errno(err, "read a link the state root `%s` is reached through", w->root);
  target[n] = '\0';
  return walk_path(w, target, err);
}

/* 1 when a name is missing or not a directory (the root is below it: what makes the root says
 * why not), 0 once w->dir is path's directory, every step checked; or an error */
static int walk_path(struct walk *w, const char *path, fsrun_error_t *err) {
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
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
      return 1;
    if (fd < 0 || fstat(fd, &st) < 0)
      return fsrun_error_errno(err, "look up `%s` on the way to the state root `%s`", name,
                               w->root);
    if (S_ISLNK(st.st_mode) && (r = walk_link(w, fd, &st, err)) != 0)
      return r;
    if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode))
      return 1;
    if (S_ISDIR(st.st_mode)) {
      int dir = fd;
      fd = -1; /* walk_enter keeps or closes it */
      if (walk_enter(w, dir, &st, err) < 0)
        return fsrun_error_code(err);
    }
  }
  return 0;
}

/* the root's last name, root's text cut before it into *parent ("." for a bare name) */
static char *split_last(const char *root, char **parent) {
  cleanup_free char *copy = xstrdup(root);
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

int state_root_open(const char *root, int *fd, fsrun_error_t *err) {
  cleanup_free char *parent = NULL;
  cleanup_free char *last = split_last(root, &parent);
  struct walk w = {.dir = -1, .euid = geteuid(), .root = root};
  struct stat st;
  int r;
  *fd = -1;
  if (parent[0] != '/' && walk_start(&w, ".", err) < 0)
    return fsrun_error_code(err);
  r = walk_path(&w, parent, err);
  if (r == 0) {
    *fd = openat(w.dir, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(w.dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      r = refuse(root, "is a symbolic link", err);
    else if (*fd < 0 && errno != ENOENT && errno != ENOTDIR)
      r = fsrun_error_errno(err, "open the state root `%s`", root);
  }
  if (w.dir >= 0)
    close(w.dir);
  if (r < 0 || *fd < 0)
    return r < 0 ? r : 0; /* missing, a file, or below one: nobody's state can be in it */
  if (state_root_check_fd(*fd, root, err) < 0) {
    close(*fd);
    *fd = -1;
    return fsrun_error_code(err);
  }
  return 0;
}

int state_root_check(const char *root, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  return state_root_open(root, &fd, err);
}

int state_root_make(const char *root, fsrun_error_t *err) {
  if (mkdir_p_at(AT_FDCWD, root, 0700, err) < 0)
    return fsrun_error_wrap(err, "create the state root");
  return state_root_check(root, err);
}
