#include "sandbox-paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mounts.h"
#include "openat2-compat.h"
#include "sandbox-internal.h"
#include "sandbox-path-owners.h"
#include "utils.h"

/* the i-th tree of t (NULL: none there), i < 3 + writable->len */
static const char *tree_at(const struct agent_trees *t, size_t i) {
  const char *fixed[] = {t->worktree, t->common_dir, t->wt_git_dir};
  return i < 3 ? fixed[i] : t->writable->items[i - 3];
}

/* the outermost agent tree above path (or_self: or path itself), or NULL */
static char *outermost_tree(const struct agent_trees *t, const char *path, bool or_self) {
  cleanup_free char *clean = path_clean_abs(path);
  char *best = NULL;
  for (size_t i = 0; i < 3 + t->writable->len; i++) {
    char *tree = tree_at(t, i) ? path_clean_abs(tree_at(t, i)) : NULL;
    if (tree != NULL && (or_self || strcmp(clean, tree) != 0) && path_within(clean, tree) &&
        (best == NULL || strlen(tree) < strlen(best))) {
      free(best);
      best = tree;
    } else {
      free(tree);
    }
  }
  return best;
}

char *agent_tree_above(const struct agent_trees *t, const char *path) {
  return outermost_tree(t, path, false);
}

char *agent_tree_holding(const struct agent_trees *t, const char *path) {
  return outermost_tree(t, path, true);
}

char *agent_tree_holding_resolved(const struct agent_trees *t, const char *resolved) {
  for (size_t i = 0; i < 3 + t->writable->len; i++) {
    cleanup_free char *real = tree_at(t, i) ? realpath(tree_at(t, i), NULL) : NULL;
    if (real != NULL && path_within(resolved, real))
      return xstrdup(tree_at(t, i));
  }
  return NULL;
}

/* the tree (as given) that is the object st describes, or NULL */
static const char *tree_that_is(const struct agent_trees *t, const struct stat *st) {
  struct stat tree;
  for (size_t i = 0; i < 3 + t->writable->len; i++)
    if (tree_at(t, i) != NULL && stat(tree_at(t, i), &tree) == 0 && tree.st_dev == st->st_dev &&
        tree.st_ino == st->st_ino)
      return tree_at(t, i);
  return NULL;
}

char *agent_tree_holding_by_identity(const struct agent_trees *t, const char *resolved) {
  cleanup_free char *up = xstrdup(resolved);
  for (;;) {
    struct stat anc;
    const char *tree = stat(up, &anc) == 0 ? tree_that_is(t, &anc) : NULL;
    char *slash = strrchr(up, '/');
    if (tree != NULL)
      return xstrdup(tree);
    if (slash == NULL || strcmp(up, "/") == 0)
      return NULL;
    slash[slash == up ? 1 : 0] = '\0';
  }
}

/* path resolved as far as it exists (its last component may not yet), or NULL */
static char *resolve_but_last(const char *path) {
  cleanup_free char *copy = xstrdup(path);
  cleanup_free char *parent = NULL;
  char *resolved = realpath(path, NULL);
  char *slash;
  if (resolved != NULL)
    return resolved;
  slash = strrchr(copy, '/');
  if (slash != NULL)
    *slash = '\0';
  parent = realpath(slash == NULL ? "." : (copy[0] ? copy : "/"), NULL);
  if (parent == NULL)
    return NULL;
  return xasprintf("%s/%s", parent, slash == NULL ? path : slash + 1);
}

char *agent_tree_holding_any(const struct agent_trees *t, const char *path) {
  cleanup_free char *resolved = resolve_but_last(path);
  char *tree = resolved ? agent_tree_holding(t, resolved) : NULL;
  /* by the trees' resolutions too: an entry spelled through a link holds it all the same */
  if (tree == NULL && resolved != NULL)
    tree = agent_tree_holding_resolved(t, resolved);
  if (tree == NULL && resolved != NULL)
    tree = agent_tree_holding_by_identity(t, resolved);
  return tree;
}

/* path (clean) below tree (clean), opened through no symbolic link from tree on */
static int open_below(const char *tree, const char *path) {
  const struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve =
                                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  cleanup_close int dir = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
  const char *rel = path + strlen(tree);
  while (*rel == '/')
    rel++;
  return dir < 0 ? -1 : openat2_compat(dir, rel, &how);
}

int stat_caller_path(const struct agent_trees *t, const char *path, struct stat *st, bool *inside) {
  cleanup_free char *tree = agent_tree_above(t, path);
  cleanup_free char *clean = NULL;
  cleanup_close int fd = -1;
  *inside = tree != NULL;
  if (tree == NULL)
    return stat(path, st);
  clean = path_clean_abs(path);
  fd = open_below(tree, clean);
  return fd < 0 ? -1 : fstat(fd, st);
}

static bool same_identity(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* the name showed two objects: someone renamed on the way between two lookups */
static int refuse_changed(const char *field, size_t i, const char *path, fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "policy: %s[%zu]: `%s` changed while it was checked (two lookups of "
                          "it reached different objects): name a path that only this user and "
                          "root can rename",
                          field, i, path);
}

int caller_path_agree(const char *field, size_t i, const char *path, bool looked_missing,
                      const struct stat *st, int walked, const struct stat *walked_st,
                      fsrun_error_t *err) {
  if (looked_missing)
    return walked == 1 ? 1 : refuse_changed(field, i, path, err);
  return walked == 0 && same_identity(st, walked_st) ? 0 : refuse_changed(field, i, path, err);
}

/* the lookup of path failed (errno): a link in the tree above it, or the error */
static int refuse_lookup(const struct agent_trees *t, const char *field, size_t i, const char *path,
                         bool inside, fsrun_error_t *err) {
  if (errno == ELOOP && inside) {
    cleanup_free char *tree = agent_tree_above(t, path);
    return fsrun_error_make(err, 0,
                            "policy: %s[%zu]: `%s` passes through a symbolic link in `%s`, which "
                            "the sandboxed command can write",
                            field, i, path, tree);
  }
  return fsrun_error_errno(err, "policy: %s[%zu]: `%s`", field, i, path);
}

/* Two lookups, not the walk alone. Below an agent tree the walk passes the command's links (it
 * runs as the caller, so they are the caller's), which only stat_caller_path's lookup through no
 * link refuses. Outside every tree that lookup is a plain stat the walk could stand in for, but
 * its errno is the one-line refusal naming the field (EACCES; ENOTDIR, not taken for missing as
 * the walk's 1 is), for one stat(2) an entry. The walk's object is what is bound either way. */
int check_caller_path(const struct agent_trees *t, const char *field, size_t i, const char *path,
                      bool missing_ok, struct stat *st, fsrun_error_t *err) {
  struct stat walked_st;
  bool inside, missing = false;
  int walked;
  if (stat_caller_path(t, path, st, &inside) < 0) {
    if (!missing_ok || errno != ENOENT)
      return refuse_lookup(t, field, i, path, inside, err);
    missing = true;
  }
  /* the walk's object is the one bound: the lookup above must have reached it too */
  walked = check_policy_path_owners(field, i, path, &walked_st, err);
  if (walked < 0)
    return walked;
  return caller_path_agree(field, i, path, missing, st, walked, &walked_st, err);
}

/* --- the worktree, pinned to the object its walk reached ------------------------------------ */

/* process-global, not passed down: the worktree reaches sandbox_git_layout_find as a path through
 * a dozen callers in eight files (the run, the bundle, the spelling, exec's git), and one process
 * pins one worktree. No heap: nothing to free at exit (memcheck counts a still-reachable block). */
static struct {
  bool set;
  char path[PATH_MAX];
  struct stat st;
} pinned_worktree;

int sandbox_worktree_pin(const char *given, char **resolved, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  char link[64], real[PATH_MAX];
  struct stat by_fd, by_path;
  ssize_t n;
  int r = open_policy_path("worktree", 0, given, &fd, err);
  if (r < 0)
    return r;
  if (r == 1)
    return fsrun_error_make(err, ENOENT, "--worktree `%s`", given);
  /* the real path of that object, and the name must still show it */
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  n = readlink(link, real, sizeof(real) - 1);
  real[n > 0 ? n : 0] = '\0';
  if (n <= 0 || real[0] != '/' || fstat(fd, &by_fd) < 0 || stat(real, &by_path) < 0 ||
      !same_identity(&by_fd, &by_path))
    return refuse_changed("worktree", 0, given, err);
  sandbox_worktree_pin_as(real, &by_fd);
  *resolved = xstrdup(real);
  return 0;
}

void sandbox_worktree_pin_as(const char *path, const struct stat *st) {
  snprintf(pinned_worktree.path, sizeof(pinned_worktree.path), "%s", path);
  pinned_worktree.st = *st;
  pinned_worktree.set = strlen(path) < sizeof(pinned_worktree.path);
}

int sandbox_worktree_check(const char *path, int fd, fsrun_error_t *err) {
  struct stat st;
  if (!pinned_worktree.set || strcmp(path, pinned_worktree.path) != 0)
    return 0;
  if (fstat(fd, &st) < 0 || !same_identity(&st, &pinned_worktree.st))
    return refuse_changed("worktree", 0, path, err);
  return 0;
}
