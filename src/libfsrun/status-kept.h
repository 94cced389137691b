/* A one-shot sandbox's state dir kept for the next one on a disk state root (docs/sandbox.md,
 * "State root"). On ext4 every new inode is a scan of the recently freed ones (a dozen ms a run on
 * a host that deletes much), and a removed directory's block a discard: a one-shot create without
 * a cgroup (the ordinary user's sandbox) takes a removed state dir, kept by the state root as
 * ROOT/.sandbox-kept-N, renames it to ROOT/.sandbox-new-ID, writes state.json there and renames it
 * to ROOT/ID; the run's own delete,
 * once it has reaped the init, renames it back (status_kept_release). Its state.json is replaced
 * through a spare file (STATUS_SPARE_FILE: written, then exchanged with state.json), and `created`
 * is a second state.json instead of the init's record: no run allocates or frees an inode once
 * the state root has kept one. `list` and ids never see a dot-name (status_validate_id).
 * Never a live run's dir in a slot (review28 F4): the run holds an flock on its dir from the claim
 * until its release, and a claim takes no slot whose lock is held; only the run's own delete,
 * after the init's reap, keeps a dir (any other delete removes it, as on a tmpfs); and that
 * release and a remover of a kept dir each act under the state root's flock, so that a delete
 * from outside never has its dir moved into a slot half-way. */
#ifndef FSRUN_STATUS_KEPT_H
#define FSRUN_STATUS_KEPT_H

#include <stdbool.h>

#include "context.h"
#include "error.h"

#define STATUS_SPARE_FILE "state.json.spare"
#define STATUS_KEPT_SLOTS 4

/* ROOT/.sandbox-new-ID with state.json and the spare, from a kept dir (checked: this user's, 0700,
 * those two regular files alone) or made: its fd, *spare true; status_kept_reveal then names it
 * ID. On a tmpfs state root, or where that cannot be, status_dir_create's ROOT/ID, *spare false. */
int status_kept_create(const struct fsrun_context *ctx, const char *id, bool *spare,
                       fsrun_error_t *err);
/* ROOT/.sandbox-new-ID renamed to ROOT/ID: "container `ID` already exists" on EEXIST. On failure
 * the hidden dir is removed. */
int status_kept_reveal(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* ROOT/.sandbox-new-ID removed (a create that failed before status_kept_reveal, or a killed one:
 * the watchdog's clean-up); missing is no error. */
void status_kept_remove_hidden(const struct fsrun_context *ctx, const char *id);
/* STATUS_FILE replaced through the spare: the spare rewritten, then exchanged with it (readers see
 * the old or the new file whole, and the old one is the next spare). */
int status_kept_replace(int dirfd, const void *data, size_t len, fsrun_error_t *err);
/* The run's own delete, once it has reaped the init (no other path keeps a dir: a delete from
 * outside, the watchdog's, a failed create's remove it): ROOT/ID, the state dir it holds open and
 * locked as *dfd, renamed to a free ROOT/.sandbox-kept-N where it holds a spare on a disk state
 * root, or removed as status_dir_remove does; *dfd is closed either way. */
int status_kept_release(const struct fsrun_context *ctx, const char *id, int *dfd,
                        fsrun_error_t *err);
/* dfd is a state dir status_kept_create made (a spare in it, on a disk state root) */
bool status_kept_dir(int dfd);
/* the state root's lock, taken (waiting) on an fd of its own: a remover of a kept dir holds it, so
 * that the run's own release never moves that dir to a slot while it removes it; -1 */
int status_kept_lock_root(int rootfd);

#endif
