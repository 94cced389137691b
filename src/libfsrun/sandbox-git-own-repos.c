/* Repositories of their own below the worktree's top, whose config a run could write and which
 * the host's git enters (review26 D1, D4): the checkout of a gitlink (the host's `git add` runs
 * `git status` inside it, past the walk's depth too) and a nested `.git` file naming a git dir
 * other than an absorbed submodule's (git run in that directory discovers it). hostGitArgs cannot
 * disarm what such a repository's config runs (sandbox-git-disarm.c). */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

/* gitlinks whose checkout is looked at (sandbox_git_gitlinks_own_repository) */
#define GITLINKS_CHECKED 4096

/* a `.git` file git writes is one short line; one this long is not read (a repository of its own)
 */
#define GITFILE_MAX 4096

/* where the git dir a `.git` file in dir names is: none (no such file, not a gitfile, nothing
 * there: git finds no repository), a submodule's in the common dir whose configs name no file (a
 * run cannot write its config, and git runs nothing of the run's for it), a linked worktree's
 * admin dir whose `gitdir` names this `.git` (git's own layout: a main checkout holding the
 * repository's `.worktrees/`), or elsewhere: outside the common dir (a common dir not known counts
 * so), the common dir itself or any other dir in it (git never writes such a `.git`: the
 * repository's own config would run in a directory the run made, review27 E1), or a file not read
 * as git reads it (review27 E2). Resolved by the kernel, links and `..` as git follows them,
 * compared by the fd's real path. */
enum gitfile_target { GITFILE_NONE, GITFILE_MODULE, GITFILE_CHECKOUT, GITFILE_ELSEWHERE };

/* dir/.git opened for reading, -1 when it is no regular file now: O_NONBLOCK, since the callers'
 * look saw a regular file but a process the run left may have put a FIFO there since, whose open
 * would wait for a writer for ever (and hang the walk, and the host's Fusion with it). *own: what
 * is there now is a directory, link, FIFO... (a repository of its own, as the callers' look counts
 * such a `.git`), not gone or unreadable */
static int open_gitfile(int dir, bool *own) {
  struct stat st;
  int fd = openat(dir, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  *own = fd < 0 ? errno != ENOENT && errno != EACCES : fstat(fd, &st) < 0 || !S_ISREG(st.st_mode);
  if (fd >= 0 && *own) {
    close(fd);
    return -1;
  }
  return fd;
}

/* dir/.git's text as git reads it, the path into buf: NONE, ODD (no regular file now, too long,
 * a path git and fsrun would not read the same) or PATH */
static enum sandbox_git_gitfile read_gitfile(int dir, char buf[GITFILE_MAX], const char **path) {
  bool own;
  cleanup_close int file = open_gitfile(dir, &own);
  ssize_t n;
  *path = NULL;
  if (own)
    return SANDBOX_GIT_GITFILE_ODD;
  if (file < 0)
    return SANDBOX_GIT_GITFILE_NONE;
  n = safe_read_all(file, buf, GITFILE_MAX);
  if (n < 0 || n >= GITFILE_MAX)
    return SANDBOX_GIT_GITFILE_ODD; /* git reads it whole: what lies past the buffer is unknown */
  return sandbox_git_gitfile_parse(buf, (size_t)n, path);
}

/* rel (below the common dir, from its `/`) is in a submodules' dir: the main checkout's
 * `/modules/`, or a linked worktree's `/worktrees/<name>/modules/` (git keeps a worktree's
 * submodules in its own git dir) */
static bool in_modules(const char *rel) {
  static const char worktrees[] = "/worktrees/";
  if (strncmp(rel, worktrees, strlen(worktrees)) == 0) {
    const char *name = rel + strlen(worktrees);
    rel = strcspn(name, "/") > 0 ? name + strcspn(name, "/") : rel;
  }
  return strncmp(rel, "/modules/", strlen("/modules/")) == 0;
}

/* an absorbed submodule's git dir, in a submodules' dir with no `commondir` (a worktree of the
 * submodule's would take another config), whose configs name no file */
static enum gitfile_target module_target(int gitdir, const char *rel, int dir,
                                         const struct sandbox_git_run *g) {
  char checkout[PATH_MAX];
  struct stat st;
  cleanup_free char *module = NULL;
  if (!in_modules(rel) || fstatat(gitdir, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
      errno != ENOENT || !sandbox_git_real_path_of(dir, checkout))
    return GITFILE_ELSEWHERE;
  module = xasprintf("%s%s", g->common_dir, rel);
  return sandbox_git_module_names_files(g, module, checkout) ? GITFILE_ELSEWHERE : GITFILE_MODULE;
}

/* rel (below the common dir, from its `/`) is `/worktrees/<name>`, a linked worktree's admin dir */
static bool worktree_admin(const char *rel) {
  static const char worktrees[] = "/worktrees/";
  if (strncmp(rel, worktrees, strlen(worktrees)) != 0)
    return false;
  rel += strlen(worktrees);
  return rel[0] != '\0' && strchr(rel, '/') == NULL;
}

/* a linked worktree's admin dir whose `gitdir` names dir's `.git` back: git's own checkout */
static enum gitfile_target admin_target(int gitdir, const char *rel, int dir,
                                        const struct sandbox_git_run *g) {
  cleanup_free char *admin = xasprintf("%s%s", g->common_dir, rel);
  struct stat dotgit;
  if (fstatat(dir, ".git", &dotgit, AT_SYMLINK_NOFOLLOW) < 0 ||
      !sandbox_git_points_back(gitdir, admin, &dotgit, NULL))
    return GITFILE_ELSEWHERE;
  return GITFILE_CHECKOUT;
}

static enum gitfile_target gitfile_target(int dir, const struct sandbox_git_run *g) {
  char buf[GITFILE_MAX], target[PATH_MAX], common[PATH_MAX];
  cleanup_close int gitdir = -1;
  const char *path;
  size_t len;
  switch (read_gitfile(dir, buf, &path)) {
  case SANDBOX_GIT_GITFILE_NONE:
    return GITFILE_NONE;
  case SANDBOX_GIT_GITFILE_ODD:
    return GITFILE_ELSEWHERE;
  case SANDBOX_GIT_GITFILE_PATH:
    break;
  }
  gitdir = openat(dir, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (gitdir < 0)
    return GITFILE_NONE;
  if (g->common_dir == NULL || !sandbox_git_real_path_of(gitdir, target) ||
      !sandbox_git_real_path_of(g->common_fd, common))
    return GITFILE_ELSEWHERE;
  len = strlen(common);
  if (strncmp(target, common, len) != 0 || target[len] != '/')
    return GITFILE_ELSEWHERE; /* outside the common dir, or the common dir itself */
  if (worktree_admin(target + len))
    return admin_target(gitdir, target + len, dir, g);
  return module_target(gitdir, target + len, dir, g);
}

/* the checkout of gitlink path below top holds a repository of its own: a `.git` directory or
 * link, or a `.git` file naming a git dir elsewhere (gitfile_target), or a linked worktree's (the
 * host's `add` runs the repository's config in that checkout, whose files the run could write) */
static bool gitlink_own_repository(int top, const char *path, const struct sandbox_git_run *g) {
  cleanup_close int dir = openat(top, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  enum gitfile_target t;
  struct stat st;
  if (dir < 0 || fstatat(dir, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
    return false; /* not checked out: git enters nothing there */
  if (!S_ISREG(st.st_mode))
    return true;
  t = gitfile_target(dir, g);
  return t == GITFILE_CHECKOUT || t == GITFILE_ELSEWHERE;
}

/* A gitlink of the host's index (before the run) or of the run's whose checkout holds a repository
 * of its own: the host's `git add` enters it wherever it is, past the walk's depth too (review26
 * D1). Past GITLINKS_CHECKED gitlinks, or with no top, as if one did. */
bool sandbox_git_gitlinks_own_repository(const struct sandbox_git_run *g, int top) {
  size_t n = g->index_before.n_gitlinks;
  for (char **l = g->gitlinks_after; l != NULL && *l != NULL; l++)
    n++;
  if (n == 0)
    return false;
  if (top < 0 || n > GITLINKS_CHECKED)
    return true;
  for (size_t i = 0; i < g->index_before.n_gitlinks; i++)
    if (gitlink_own_repository(top, g->index_before.gitlinks[i], g))
      return true;
  for (char **l = g->gitlinks_after; l != NULL && *l != NULL; l++)
    if (gitlink_own_repository(top, *l, g))
      return true;
  return false;
}

bool sandbox_git_gitfile_elsewhere(int dir, const struct sandbox_git_run *g) {
  return gitfile_target(dir, g) == GITFILE_ELSEWHERE;
}
