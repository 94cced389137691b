/* fsrun's state root against the policy's writablePaths: a command that can write there rewrites
 * every container's state.json and config.json, the shared bundle and the per-run git dirs, and
 * the next `delete` or `create` acts on what it wrote (docs/sandbox.md, "The state root"). */
#ifndef FSRUN_SANDBOX_STATE_ROOT_H
#define FSRUN_SANDBOX_STATE_ROOT_H

#include <sys/types.h>

#include "error.h"
#include "oci.h"

/* *hit: the index of the first writablePaths entry the command could reach the state root
 * through, or -1: an entry that is the state root, holds it, lies in it, or holds a directory in
 * which a link on the state root's way is read (each by device and inode, so any spelling: links,
 * `..`, bind mounts; a path that does not exist yet by its spelling). 0, or -1 with errno: a
 * directory on the way could not be looked at. */
int sandbox_writable_over_state_root(const oci_policy *p, const char *state_root, ssize_t *hit);
/* the same for any directory path, counting entries that are or hold it (not those in it) */
int sandbox_writable_reaches(const oci_policy *p, const char *path, ssize_t *hit);
/* the first writablePaths entry that is the directory dir or lies in it (by real path, or by
 * identity for a bind mount of it elsewhere), or -1; nothing there yet: -1 */
ssize_t sandbox_writable_within(const oci_policy *p, const char *dir);

/* 0, or the one-line refusal naming the writablePaths entry, or the worktree or its git dir, that
 * reaches the state root (worktree: resolved) */
int sandbox_check_state_root(const oci_policy *p, const char *worktree, const char *state_root,
                             fsrun_error_t *err);

/* 0, or the one-line refusal naming the first writablePaths entry that is or holds the caller's
 * runtime dir ($XDG_RUNTIME_DIR, /run/user/EUID: by identity and spelling, as above), or the first
 * allowedPaths entry that is it or lies in it. An allowedPaths entry that only holds it (`/`) gets
 * an empty tmpfs over it (sandbox-runmask.h) instead. A place that does not exist is not looked
 * for. */
int sandbox_check_runtime_dir(const oci_policy *p, fsrun_error_t *err);

#endif
