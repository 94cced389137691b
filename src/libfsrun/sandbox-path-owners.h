/* A policy path (allowedPaths, writablePaths, the worktree and its git dirs) reached as the state
 * root is (path-walk.h): a link on its way that someone else than the caller or root owns, or a
 * directory others may write without the sticky bit, lets them choose what the sandbox binds
 * (another uid's `/tmp/cache -> /root/.ssh` made root's command write there). Links the host's
 * admin made (/bin -> usr/bin, /etc/resolv.conf -> ../run/...) pass: root owns them. Another
 * uid's directory passes: a root caller names a user's worktree, and what the user can swap in
 * there without a link is a directory of their own. */
#ifndef FSRUN_SANDBOX_PATH_OWNERS_H
#define FSRUN_SANDBOX_PATH_OWNERS_H

#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

/* 0 when every directory and link on the way to path (its own links followed) is the caller's or
 * root's, with *st the fstat of the object that walk reached (the identity the bind is held to:
 * no second lookup of the name decides it); 1 where a name is missing (nothing past it is
 * reached); or the one-line refusal of `field[i]` = path */
int check_policy_path_owners(const char *field, size_t i, const char *path, struct stat *st,
                             fsrun_error_t *err);

/* the same walk, ending on an O_PATH fd (*fd, the caller's) of what it reached: 0, 1 (missing,
 * *fd -1), or the refusal */
int open_policy_path(const char *field, size_t i, const char *path, int *fd, fsrun_error_t *err);

/* mkdir -p of path, each directory made (0755) in the directory that walk checked, never through
 * a name looked up again: 0, or the refusal or error */
int make_policy_path(const char *field, size_t i, const char *path, fsrun_error_t *err);

#endif
