/* Who may own fsrun's state root. Whoever can write the state root decides what the caller's
 * next `kill`, `delete --force` or `create` acts on (a forged state.json names any of the
 * caller's processes), so the root must be the caller's alone: another local user may pre-create
 * `/tmp/fsrun-UID`, the default without XDG_RUNTIME_DIR (review20 K). Whoever can rename in one
 * of its parents can swap another directory in after a check by path (review21 L1): the root is
 * opened once and used by fd, and its parents must be the caller's or root's, not writable by
 * others unless sticky (ssh's StrictModes), for what still reaches it by path. */
#ifndef FSRUN_STATE_ROOT_H
#define FSRUN_STATE_ROOT_H

#include "error.h"

/* Walks root's path a name at a time as the kernel does (links followed, `..` from where a link
 * led), refusing a directory on the way another uid than the caller's or 0 owns or that its group
 * or others may write without the sticky bit, and a link of another uid; then opens root
 * (O_PATH, not following a link in its last name) and refuses it unless it is a directory owned
 * by the caller's euid that neither group nor others may write. 0 with *fd the root (-1 when root
 * or a parent does not exist or is not a directory: whatever makes it later makes it 0700 and
 * checks it again), or -1 with the one-line refusal naming root and why. */
int state_root_open(const char *root, int *fd, fsrun_error_t *err);

/* state_root_open without keeping the fd: every command that uses the state root checks it. */
int state_root_check(const char *root, fsrun_error_t *err);

/* The root's own check for root, open as fd. */
int state_root_check_fd(int fd, const char *root, fsrun_error_t *err);

/* Makes root (0700, with its missing parents) when it is missing, then state_root_check: another
 * user may have made it between the command's first check and now. */
int state_root_make(const char *root, fsrun_error_t *err);

#endif
