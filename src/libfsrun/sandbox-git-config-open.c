/* A config file opened as the host's git reaches it, or not at all (review22 F4). git resolves an
 * include in its own process: `/proc/self/cwd/x`, `/dev/stdin`, `/dev/fd/N` name git's cwd and fds,
 * not fsrun's (run from `/`, as the adapter runs it), so fsrun follows no magic link and says it
 * cannot tell. A link the run put in the worktree that leads out of it names a file the run's
 * leftovers, or anyone, may change between fsrun's read and git's: not a file fsrun can vouch for.
 * A path below the worktree's top or the common dir is reached from the object fsrun checked
 * (sandbox-git-pins.c), not through their names again. */
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

/* the same, from the pinned dir path is below (an absolute link there resolves from `/`, as
 * git's open of the path does) */
static int open_pinned(const struct sandbox_git_pins *pins, const char *path, uint64_t resolve) {
  struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = resolve};
  const char *rest;
  int at = sandbox_git_pinned_at(pins, path, &rest);
  if (at == AT_FDCWD)
    return open_path(path, resolve);
  return at < 0 ? -1 : openat2_compat(at, rest, &how);
}

int sandbox_git_config_open(const struct sandbox_git_pins *pins, const char *path,
                            struct stat *st) {
  cleanup_close int fd = open_pinned(pins, path, RESOLVE_NO_MAGICLINKS);
  return open_regular_of(fd, st);
}

/* dir itself or beneath it, as strings */
static bool beneath(const char *dir, const char *path) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || strcmp(dir, "/") == 0);
}

bool sandbox_git_real_path_of(int fd, char real[PATH_MAX]) {
  char self[64];
  ssize_t n;
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  n = readlink(self, real, PATH_MAX - 1);
  if (n < 0)
    return false;
  real[n] = '\0';
  return true;
}

bool sandbox_git_config_leads_out(const struct sandbox_git_pins *pins, const char *path) {
  struct sandbox_git_pins top_only = {.worktree = pins->worktree, .top = pins->top, .common = -1};
  cleanup_close int fd = -1;
  char top[PATH_MAX], real[PATH_MAX];
  /* a path elsewhere (the main checkout's top for a task's worktree, the user's home): its links
   * are not the run's */
  if (pins->worktree == NULL || !beneath(pins->worktree, path))
    return false;
  if (pins->top < 0)
    return true; /* the worktree's name led elsewhere: cannot tell */
  /* no link on the way: the path as written is the file */
  fd = open_pinned(&top_only, path, RESOLVE_NO_SYMLINKS);
  if (fd >= 0 || errno != ELOOP)
    return false;
  fd = open_pinned(&top_only, path, RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    return false; /* no file: nothing read */
  return !sandbox_git_real_path_of(pins->top, top) || !sandbox_git_real_path_of(fd, real) ||
         !beneath(top, real);
}
