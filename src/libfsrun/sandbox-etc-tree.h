/* Root's /etc view: a directory of the allowlist (ssl, alternatives, ...) as a copy of its
 * world-readable entries (see sandbox-etc-tree.c). */
#ifndef FSRUN_SANDBOX_ETC_TREE_H
#define FSRUN_SANDBOX_ETC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "json-out.h"

/* a copied directory's bounds: past one of them it is bound from the host instead */
#define ETC_TREE_NAMES_MAX  4096              /* names, symbolic links too */
#define ETC_TREE_BYTES_MAX  (4 * 1024 * 1024) /* its regular files' bytes */
#define ETC_TREE_RECORD_MAX (64 * 1024)       /* its record's bytes */

/* the same file as far as a copy goes: device, inode, size, mode, owner, mtime, ctime */
bool etc_same_file(const struct stat *a, const struct stat *b);

/* src (a regular file whose stat is *st, checked again after the read) written to dst with st's
 * mode, owner and times. 1: its source was changed too recently to trust its times (racy, see
 * etc_recent); 0; -1 errno (ESTALE: the file changed meanwhile). */
int etc_copy_contents(int src, const struct stat *st, int dst);

/* a ctime within a second of now (or later): a change in the same tick of the coarse clock would
 * leave it as it was */
bool etc_recent(const struct timespec *ctime, const struct timespec *now);

/* etc_fd's directory name (a symbolic link followed) copied to a new directory tmp in bundle_fd:
 * each world-readable directory and regular file at any depth, symbolic links as links; nothing
 * else. Its record ("NAME t" and a line a directory or file) appended to record, or "NAME r" when
 * something in it changed too recently for the record to be trusted. 0; -1 errno: E2BIG past a
 * bound above or ETC_WALK_DEPTH_MAX, EXDEV a mount point below it, else what failed (tmp is then
 * removed). */
int etc_tree_copy(int etc_fd, const char *name, int bundle_fd, const char *tmp,
                  struct strbuf *record);

/* The record's block of the copied directory name ("NAME t" and its lines), when every line still
 * describes etc_fd's entries (one stat each: a name added, removed or replaced changes its
 * directory's ctime, a file's change its own stat); NULL otherwise. *len: the block's length. */
const char *etc_tree_current(int etc_fd, const char *record, const char *name, size_t *len);

#endif
