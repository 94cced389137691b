/* Who may own fsrun's state root. Whoever can write the state root decides what the caller's
 * next `kill`, `delete --force` or `create` acts on (a forged state.json names any of the
 * caller's processes), so the root must be the caller's alone: another local user may pre-create
 * `/tmp/fsrun-UID`, the default without XDG_RUNTIME_DIR (review20 K). */
#ifndef FSRUN_STATE_ROOT_H
#define FSRUN_STATE_ROOT_H

#include "error.h"

/* Opens root without following a link in its last component and refuses it unless it is a
 * directory owned by the caller's euid that neither group nor others may write. 0 (also when
 * root does not exist: whatever makes it later makes it 0700 and checks it again), or -1 with the
 * one-line refusal naming root and why. Every command that uses the state root calls it first. */
int state_root_check(const char *root, fsrun_error_t *err);

/* The same for root, open as fd (fd may have been opened following links: it is root's
 * directory as the caller reaches it), for what makes the state root and then uses it. */
int state_root_check_fd(int fd, const char *root, fsrun_error_t *err);

/* Makes root (0700, with its missing parents) when it is missing, then state_root_check: another
 * user may have made it between the command's first check and now. */
int state_root_make(const char *root, fsrun_error_t *err);

#endif
