/* remove_tree_at (remove-tree.h) */
#include "remove-tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

static int open_dir_at(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, 0) == 0)
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd;
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
  fd = open_dir_at(parent, name);
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
