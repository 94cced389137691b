#include "state-root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path-walk.h"
#include "utils.h"

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

/* the refusal of a root reached through where (path-walk.h) */
static int refuse_parent(const struct path_walk *w, const char *where, const char *why,
                         fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "state root `%s` is reached through `%s`, %s: whoever can rename in it "
                          "can put another directory in the root's place after the check; use "
                          "--root or XDG_RUNTIME_DIR to name a directory whose parents only this "
                          "user and root can write",
                          w->path, where, why);
}

int state_root_open(const char *root, int *fd, fsrun_error_t *err) {
  cleanup_free char *last = NULL;
  struct path_walk w;
  struct stat st;
  int r;
  *fd = -1;
  path_walk_begin(&w, root, "--root", refuse_parent);
  r = path_walk_parent(&w, &last, err);
  if (r == 0) {
    *fd = openat(w.dir, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(w.dir, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      r = refuse(root, "is a symbolic link", err);
    else if (*fd < 0 && errno != ENOENT && errno != ENOTDIR)
      r = fsrun_error_errno(err, "open the state root `%s`", root);
  }
  path_walk_end(&w);
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
