/* remove_tree_at (remove-tree.h) */
#include "remove-tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* the same number on every architecture (Linux 6.6) */
#endif

void (*remove_tree_chmod_hook)(int parent, const char *name);

/* Makes the directory fd (O_PATH) names 0700. Through the fd, never by name: a link swapped in at
 * the name would lead a chmod by name to whatever it points at. /proc/self/fd/N, for a kernel
 * without fchmodat2, reaches exactly the fd's inode too. */
static int chmod_dir_fd(int fd) {
  char proc[64];
  if (syscall(SYS_fchmodat2, fd, "", 0700, AT_EMPTY_PATH) == 0)
    return 0;
  if (errno != ENOSYS && errno != EINVAL)
    return -1;
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  return chmod(proc, 0700);
}

static bool same_inode(int fd, const struct stat *want) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Opens the directory st describes at name; a mode 0 one (EACCES) is made 0700 first. Whatever is
 * at name by then must still be that directory (dev and inode), or nothing is changed. */
static int open_dir_at(int parent, const char *name, const struct stat *st) {
  cleanup_close int path_fd = -1;
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 || errno != EACCES)
    return fd;
  path_fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (path_fd < 0 || !same_inode(path_fd, st))
    return -1;
  if (remove_tree_chmod_hook != NULL)
    remove_tree_chmod_hook(parent, name);
  if (chmod_dir_fd(path_fd) < 0)
    return -1;
  return openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void remove_below(int parent, const char *name, unsigned char type, dev_t dev,
                         int depth_left) {
  cleanup_close int fd = -1;
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  struct stat st;
  /* readdir's type spares a stat for what is no directory */
  if (type != DT_DIR && type != DT_UNKNOWN) {
    (void)unlinkat(parent, name, 0);
    return;
  }
  if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  if (!S_ISDIR(st.st_mode)) {
    (void)unlinkat(parent, name, 0);
    return;
  }
  if (st.st_dev != dev || depth_left < 0)
    return;
  fd = open_dir_at(parent, name, &st);
  if (fd < 0 || (d = fdopendir(fd)) == NULL)
    return;
  fd = -1; /* the DIR owns it */
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      remove_below(dirfd(d), e->d_name, e->d_type, dev, depth_left - 1);
  (void)unlinkat(parent, name, AT_REMOVEDIR);
}

void remove_tree_at(int parent, const char *name, int max_depth) {
  struct stat st;
  if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    remove_below(parent, name, DT_UNKNOWN, st.st_dev, max_depth);
}
