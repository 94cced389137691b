/* Repositories of their own below the worktree's top, whose config a run could write and which
 * the host's git enters (review26 D1, D4): the checkout of a gitlink (the host's `git add` runs
 * `git status` inside it, past the walk's depth too) and a nested `.git` file naming a git dir
 * outside the common dir (git run in that directory discovers it). hostGitArgs cannot disarm
 * what such a repository's config runs (sandbox-git-disarm.c). */
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

/* where the git dir a `.git` file in dir names is: none (no such file, not a gitfile, nothing
 * there: git finds no repository), in the common dir (an absorbed submodule's, a linked
 * worktree's: a run cannot write its config), or elsewhere (a common dir not known counts so).
 * Resolved by the kernel, links and `..` as git follows them, compared by the fd's real path. */
enum gitfile_target { GITFILE_NONE, GITFILE_COMMON, GITFILE_ELSEWHERE };

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

static enum gitfile_target gitfile_target(int dir, const struct sandbox_git_run *g) {
  char buf[4096], target[PATH_MAX], common[PATH_MAX];
  bool own;
  cleanup_close int file = open_gitfile(dir, &own);
  cleanup_close int gitdir = -1;
  ssize_t n = file < 0 ? -1 : read(file, buf, sizeof(buf) - 1);
  size_t len;
  if (own)
    return GITFILE_ELSEWHERE;
  if (n <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
    return GITFILE_NONE;
  buf[n] = '\0';
  buf[strcspn(buf, "\r\n")] = '\0';
  gitdir = openat(dir, buf + 8, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (gitdir < 0)
    return GITFILE_NONE;
  if (g->common_dir == NULL || !sandbox_git_real_path_of(gitdir, target) ||
      !sandbox_git_real_path_of(g->common_fd, common))
    return GITFILE_ELSEWHERE;
  len = strlen(common);
  /* the common dir itself: the top's own config (watched), as at the top */
  return strncmp(target, common, len) == 0 && (target[len] == '/' || target[len] == '\0')
             ? GITFILE_COMMON
             : GITFILE_ELSEWHERE;
}

/* the checkout of gitlink path below top holds a repository of its own: a `.git` directory or
 * link, or a `.git` file naming a git dir outside the common dir */
static bool gitlink_own_repository(int top, const char *path, const struct sandbox_git_run *g) {
  cleanup_close int dir = openat(top, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (dir < 0 || fstatat(dir, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
    return false; /* not checked out: git enters nothing there */
  return !S_ISREG(st.st_mode) || gitfile_target(dir, g) == GITFILE_ELSEWHERE;
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
