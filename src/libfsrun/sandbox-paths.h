/* The caller's paths (policy, worktree, git dirs) against the trees the sandboxed command writes:
 * a symbolic link there is the command's, planted to make a policy path show a host directory the
 * operator did not name (docs/sandbox.md, "Paths the command can re-point"). */
#ifndef FSRUN_SANDBOX_PATHS_H
#define FSRUN_SANDBOX_PATHS_H

#include <stdbool.h>
#include <sys/stat.h>

#include "error.h"
#include "oci.h"

/* The trees the command can write: the worktree, its git dirs (NULL: none), writablePaths. */
struct agent_trees {
  const char *worktree, *common_dir, *wt_git_dir;
  const oci_strv *writable;
};

/* The outermost agent tree strictly above path (clean, caller frees), or NULL: path is no tree's
 * descendant, and links on its way are the host admin's (/bin -> usr/bin). */
char *agent_tree_above(const struct agent_trees *t, const char *path);
/* The same, where path may be the tree itself too. */
char *agent_tree_holding(const struct agent_trees *t, const char *path);
/* the tree (as given) whose resolution holds resolved, a resolved path, or NULL: a tree named
 * through a host link (`lnk/cache`) holds what the link leads to */
char *agent_tree_holding_resolved(const struct agent_trees *t, const char *resolved);
/* the tree (as given) that resolved or one of its ancestors is, by device and inode, or NULL: a
 * bind mount of a tree's parent names it under a path no string comparison relates to it */
char *agent_tree_holding_by_identity(const struct agent_trees *t, const char *resolved);
/* The tree (as given) that holds path, a caller's path that may not exist yet, by its spelling,
 * its resolution or its identity (all three above), or NULL: where fsrun writes a file of its own
 * (a bundle, an audit log) the command must not reach. */
char *agent_tree_holding_any(const struct agent_trees *t, const char *path);

/* stat(2) of path, but reached through no symbolic link below the agent tree above it. 0, or -1
 * with errno (ELOOP: such a link). *inside: whether an agent tree is above path. */
int stat_caller_path(const struct agent_trees *t, const char *path, struct stat *st, bool *inside);

/* 0 with *st (stat_caller_path), 1 where path is missing and missing_ok, or the one-line refusal
 * of `field[i]` = path (a link in an agent tree, another user's link or directory on its way:
 * sandbox-path-owners.h, any other failure) */
int check_caller_path(const struct agent_trees *t, const char *field, size_t i, const char *path,
                      bool missing_ok, struct stat *st, fsrun_error_t *err);
/* The lookup of path (looked_missing, or *st) and its owner walk (walked 0 with *walked_st, 1
 * missing) reached the same object: 0, 1 (missing to both); else someone renamed on the way
 * between them: the refusal. */
int caller_path_agree(const char *field, size_t i, const char *path, bool looked_missing,
                      const struct stat *st, int walked, const struct stat *walked_st,
                      fsrun_error_t *err);

/* The worktree named once: walked as a policy path is, *resolved the real path of the object
 * that walk reached (its identity pinned for sandbox_worktree_check), or the refusal. */
int sandbox_worktree_pin(const char *given, char **resolved, fsrun_error_t *err);
/* path (a real path) pinned to the object st is: a task container's worktree, checked against
 * its bind's identity */
void sandbox_worktree_pin_as(const char *path, const struct stat *st);
/* fd, opened at path: 0 unless path is the pinned worktree's and fd another object (renamed on
 * the way since it was pinned): the refusal */
int sandbox_worktree_check(const char *path, int fd, fsrun_error_t *err);

#endif
