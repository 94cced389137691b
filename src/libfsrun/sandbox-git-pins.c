/* The reads of a run's git config and of the digests of what it names, through the objects fsrun
 * checked (review23 A1): the worktree's top, opened and checked against the worktree pinned before
 * the run (sandbox_worktree_check), and the common dir the layout checked. The names of both are
 * in directories others may rename in (a cache dir, the run's own writable parent): a path below
 * either, looked up by name after the check, could read another tree's files, and a digest of
 * those read twice (one exec's "after", the next one's) would hide a rewrite of the task's own.
 * So such a path is reached from the checked dir's fd; what lies below it (links, `..`) resolves
 * as git resolves it from there. A path below neither (the user's config, a script elsewhere) is
 * read by name, as git reads it. */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-paths.h"
#include "utils.h"

int sandbox_git_top_checked(const char *worktree, fsrun_error_t *err) {
  int top = open(worktree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0 || sandbox_worktree_check(worktree, top, err) == 0)
    return top;
  close(top);
  return -1;
}

void sandbox_git_top_hold(struct sandbox_git_run *g, int top) {
  sandbox_git_top_drop(g);
  g->top_fd = top;
  g->top_held = true;
}

void sandbox_git_top_drop(struct sandbox_git_run *g) {
  if (g->top_held && g->top_fd >= 0)
    close(g->top_fd);
  g->top_fd = -1;
  g->top_held = false;
}

struct sandbox_git_pins sandbox_git_pins_of(const struct sandbox_git_run *g, const char *worktree) {
  return (struct sandbox_git_pins){.worktree = worktree,
                                   .top = g->top_held ? g->top_fd : -1,
                                   .common_dir = g->common_dir,
                                   .common = g->common_dir != NULL ? g->common_fd : -1};
}

/* path is dir or below it (as strings): *rest, what follows dir ("." for dir itself) */
static bool below(const char *dir, const char *path, const char **rest) {
  size_t n = dir != NULL ? strlen(dir) : 0;
  if (n == 0 || strncmp(path, dir, n) != 0 || (path[n] != '/' && path[n] != '\0'))
    return false;
  *rest = path + n + strspn(path + n, "/");
  if (**rest == '\0')
    *rest = ".";
  return true;
}

int sandbox_git_pinned_at(const struct sandbox_git_pins *p, const char *path, const char **rest) {
  /* the common dir first: a main checkout's is the top's `.git` */
  if (p->common >= 0 && below(p->common_dir, path, rest))
    return p->common;
  if (below(p->worktree, path, rest)) {
    if (p->top < 0)
      errno = ESTALE;
    return p->top;
  }
  *rest = path;
  return AT_FDCWD;
}

int sandbox_git_pinned_stat(const struct sandbox_git_pins *p, const char *path, bool follow,
                            struct stat *st) {
  const char *rest;
  int at = sandbox_git_pinned_at(p, path, &rest);
  if (at == -1)
    return -1;
  return fstatat(at, rest, st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

int sandbox_git_pinned_open_dir(const struct sandbox_git_pins *p, const char *path) {
  const char *rest;
  int at = sandbox_git_pinned_at(p, path, &rest);
  if (at == -1)
    return -1;
  return openat(at, rest, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
}
