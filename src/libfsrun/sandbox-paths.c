#include "sandbox-paths.h"

#include <errno.h>
#include <fcntl.h>
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

int check_caller_path(const struct agent_trees *t, const char *field, size_t i, const char *path,
                      bool missing_ok, struct stat *st, fsrun_error_t *err) {
  bool inside;
  if (stat_caller_path(t, path, st, &inside) == 0)
    return check_policy_path_owners(field, i, path, err);
  if (missing_ok && errno == ENOENT)
    return check_policy_path_owners(field, i, path, err) < 0 ? fsrun_error_code(err) : 1;
  if (errno == ELOOP && inside) {
    cleanup_free char *tree = agent_tree_above(t, path);
    return fsrun_error_make(err, 0,
                            "policy: %s[%zu]: `%s` passes through a symbolic link in `%s`, which "
                            "the sandboxed command can write",
                            field, i, path, tree);
  }
  return fsrun_error_errno(err, "policy: %s[%zu]: `%s`", field, i, path);
}
