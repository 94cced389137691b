/* A config file opened as the host's git reaches it, or not at all (review22 F4). git resolves an
 * include in its own process: `/proc/self/cwd/x`, `/dev/stdin`, `/dev/fd/N` name git's cwd and fds,
 * not fsrun's (run from `/`, as the adapter runs it), so fsrun follows no magic link and says it
 * cannot tell. A link the run put in the worktree that leads out of it names a file the run's
 * leftovers, or anyone, may change between fsrun's read and git's: not a file fsrun can vouch for.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "openat2-compat.h"
#include "sandbox-git.h"
#include "utils.h"

/* path (absolute) from `/`, as an ordinary open resolves it, with extra resolve flags: a relative
 * one is taken from a cwd that is not git's (EINVAL); an O_PATH fd, or -1 with errno */
static int open_path(const char *path, uint64_t resolve) {
  struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | resolve};
  cleanup_close int root = -1;
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  /* RESOLVE_IN_ROOT at the real `/` is an ordinary resolution, but for the magic links it
   * refuses; RESOLVE_NO_MAGICLINKS says so again for the walk without openat2 */
  return openat2_compat(root, path + strspn(path, "/"), &how);
}

int sandbox_git_config_open(const char *path, struct stat *st) {
  cleanup_close int fd = open_path(path, RESOLVE_NO_MAGICLINKS);
  return open_regular_of(fd, st);
}

/* dir itself or beneath it, as strings */
static bool beneath(const char *dir, const char *path) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || strcmp(dir, "/") == 0);
}

bool sandbox_git_config_leads_out(const char *path, const char *worktree) {
  cleanup_close int fd = -1;
  cleanup_free char *top = NULL;
  char self[64], real[PATH_MAX];
  ssize_t n;
  /* a path elsewhere (the main checkout's top for a task's worktree, the user's home): its links
   * are not the run's */
  if (worktree == NULL || !beneath(worktree, path))
    return false;
  /* no link on the way: the path as written is the file */
  fd = open_path(path, RESOLVE_NO_SYMLINKS);
  if (fd >= 0 || errno != ELOOP)
    return false;
  fd = open_path(path, RESOLVE_NO_MAGICLINKS);
  top = realpath(worktree, NULL);
  if (fd < 0 || top == NULL)
    return fd >= 0; /* no file: nothing read; no worktree any more: cannot tell */
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  n = readlink(self, real, sizeof(real) - 1);
  if (n < 0)
    return true;
  real[n] = '\0';
  return !beneath(top, real);
}
