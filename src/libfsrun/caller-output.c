#include "caller-output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

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

/* the existing object at path, checked through an O_PATH fd that follows no link and opens no
 * FIFO or device, then reopened for writing as that same inode; *gone: no object there any more */
static int open_existing(const char *option, const char *path, bool *gone, fsrun_error_t *err) {
  cleanup_close int obj = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  const char *why;
  char self[64];
  int fd;
  *gone = obj < 0 && errno == ENOENT;
  if (*gone)
    return -1;
  if (obj < 0 || fstat(obj, &st) < 0)
    return fsrun_error_errno(err, "%s %s: open", option, path);
  if ((why = unfit_output(&st)) != NULL)
    return fsrun_error_make(err, 0, "%s %s: %s", option, path, why);
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  fd = open(self, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return fsrun_error_errno(err, "%s %s: open", option, path);
  return fd;
}

int caller_output_open(const char *option, const char *path, fsrun_error_t *err) {
  /* a name that appears or goes between the two opens is tried again, a few times */
  for (int tries = 0; tries < 4; tries++) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST)
      return fsrun_error_errno(err, "%s %s: open", option, path);
    bool gone;
    fd = open_existing(option, path, &gone, err);
    if (!gone)
      return fd;
  }
  return fsrun_error_make(err, EAGAIN, "%s %s: open: the name kept changing", option, path);
}
