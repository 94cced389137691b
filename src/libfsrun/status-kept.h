/* A one-shot sandbox's state dir kept for the next one on a disk state root (docs/sandbox.md,
 * "State root"). On ext4 every new inode is a scan of the recently freed ones (a dozen ms a run on
 * a host that deletes much), and a removed directory's block a discard: a one-shot create without
 * a cgroup (the ordinary user's sandbox) takes a removed state dir, kept by the state root as
 * ROOT/.sandbox-kept-N, renames it to ROOT/.sandbox-new-ID, writes state.json there and renames it
 * to ROOT/ID; its delete renames it back. Its state.json is replaced through a spare file
 * (STATUS_SPARE_FILE: written, then exchanged with state.json), and `created` is a second
 * state.json instead of the init's record: no run allocates or frees an inode once the state
 * root has kept one. `list` and ids never see a dot-name (status_validate_id). */
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
/* ROOT/ID (dirfd dfd) renamed to a free ROOT/.sandbox-kept-N, where the state root is no tmpfs
 * and the dir holds a spare: true when kept (status_dir_remove then removes nothing). */
bool status_kept_release(int rootfd, int dfd, const char *id);

#endif
