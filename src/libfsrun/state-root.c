#include "state-root.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

int state_root_check(const char *root, fsrun_error_t *err) {
  cleanup_close int fd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int open_errno = errno;
  struct stat st;
  if (fd >= 0)
    return state_root_check_fd(fd, root, err);
  if ((open_errno == ELOOP || open_errno == ENOTDIR) && lstat(root, &st) == 0 &&
      S_ISLNK(st.st_mode))
    return refuse(root, "is a symbolic link", err);
  /* missing, a file, or below a file: nobody's state can be in it; what makes it says why not */
  if (open_errno == ENOENT || open_errno == ENOTDIR)
    return 0;
  return fsrun_error_make(err, open_errno, "open the state root `%s`", root);
}

int state_root_make(const char *root, fsrun_error_t *err) {
  if (mkdir_p_at(AT_FDCWD, root, 0700, err) < 0)
    return fsrun_error_wrap(err, "create the state root");
  return state_root_check(root, err);
}
