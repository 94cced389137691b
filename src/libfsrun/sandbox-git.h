/* The git side of the sandbox (docs/sandbox.md, "What the command sees"). */
#ifndef FSRUN_SANDBOX_GIT_H
#define FSRUN_SANDBOX_GIT_H

#include "error.h"
#include "sandbox-internal.h"

/* The git common directory of a worktree whose `.git` is a file ("gitdir: ..."), plus the
 * worktree's own git dir when it is outside the common one. NULL when `.git` is a directory or
 * missing (nothing outside the worktree is needed). Caller frees. */
int sandbox_git_dirs(const char *worktree, char **common_dir, char **worktree_git_dir,
                     fsrun_error_t *err);

/* Read-only mounts over what the host's git would execute: configs, hooks, `.git` files. */
void sandbox_git_protect(const char *worktree, const char *common_dir, const char *wt_git_dir,
                         struct mount_list *l);

#endif
