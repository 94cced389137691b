/* writablePaths against the other checkouts of the worktree's repository (review26 D6): the host's
 * git in the main checkout and in every other linked worktree runs the repository's drivers on
 * their files (a filter's `sh tools/clean.sh`), and the tamper walk and the digests cover the
 * worktree alone. An entry that is or holds another checkout (`~`, the repository's root, its
 * `.worktrees`) lets the command rewrite a script there that the host's git then runs: refused,
 * as the state root is (docs/sandbox.md). An entry the caller names inside another checkout is
 * its explicit choice, not refused (docs). */
#include "sandbox-checkouts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-git.h"
#include "sandbox-internal.h"
#include "sandbox-state-root.h"
#include "utils.h"

/* the linked worktree <common>/worktrees/<name> points back to (its `gitdir` file: the path of
 * that worktree's `.git`), or NULL */
static char *linked_checkout(int worktrees, const char *name) {
  char buf[PATH_MAX + 1];
  cleanup_free char *rel = xasprintf("%s/gitdir", name);
  cleanup_close int fd = openat(worktrees, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  char *slash;
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  buf[strcspn(buf, "\r\n")] = '\0';
  slash = strrchr(buf, '/');
  if (buf[0] != '/' || slash == NULL || strcmp(slash, "/.git") != 0)
    return NULL;
  *slash = '\0';
  return buf[0] ? xstrdup(buf) : NULL;
}

/* the checkouts of l's repository: the main one (a common dir named `.git`: its parent) and
 * every linked worktree, NULL-terminated */
static char **checkouts_of(const struct sandbox_git_layout *l) {
  char **v = NULL;
  size_t n = 0;
  const char *base = strrchr(l->common_dir, '/');
  int fd = openat(l->common_fd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *e;
  if (d == NULL && fd >= 0)
    close(fd);
  if (base != NULL && strcmp(base, "/.git") == 0 && base > l->common_dir) {
    cleanup_free char *main = xstrdup(l->common_dir);
    main[base - l->common_dir] = '\0';
    sandbox_git_strv_push(&v, &n, main);
  }
  while (d != NULL && (e = readdir(d)) != NULL) {
    cleanup_free char *path = e->d_name[0] == '.' ? NULL : linked_checkout(dirfd(d), e->d_name);
    if (path != NULL)
      sandbox_git_strv_push(&v, &n, path);
  }
  return v;
}

/* 0, or the refusal naming the entry that reaches checkout (not the worktree itself) */
static int check_checkout(const oci_policy *p, const char *checkout, const char *worktree,
                          fsrun_error_t *err) {
  cleanup_free char *real = realpath(checkout, NULL);
  ssize_t i = -1;
  if (real == NULL || strcmp(real, worktree) == 0)
    return 0; /* gone (git worktree prune's business), or the worktree: bound as the run's */
  if (sandbox_writable_reaches(p, real, &i) < 0)
    return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they reach `%s`",
                             real);
  if (i < 0)
    return 0;
  return fsrun_error_make(err, 0,
                          "policy: writablePaths[%zd]: `%s` reaches `%s`, another checkout of the "
                          "worktree's repository, whose files the host's git runs (a driver's "
                          "script) and no walk of this worktree sees: name a directory outside it",
                          i, p->writable_paths.items[i], real);
}

int sandbox_check_other_checkouts(const oci_policy *p, const char *worktree, fsrun_error_t *err) {
  cleanup_error fsrun_error_t ignored = NULL;
  struct sandbox_git_layout l;
  char **checkouts;
  int r = 0;
  if (p->writable_paths.len == 0)
    return 0;
  if (sandbox_git_layout_find(worktree, &l, &ignored) < 0 || l.common_dir == NULL) {
    sandbox_git_layout_free(&l);
    return 0; /* no repository (or one the git set-up refuses on its own) */
  }
  checkouts = checkouts_of(&l);
  for (char **c = checkouts; r == 0 && c != NULL && *c != NULL; c++)
    r = check_checkout(p, *c, worktree, err);
  sandbox_git_strv_free(checkouts);
  sandbox_git_layout_free(&l);
  return r;
}
