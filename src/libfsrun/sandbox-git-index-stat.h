/* The stat data of the run's index entries as the host's git may trust them (review19 #7). git
 * takes an entry whose stat data match the file's lstat as unchanged without reading the file, so
 * an entry holding the old object id and the edited file's stat data would hide the edit from the
 * host's `git status`, `diff`, `add -A` and `commit`. The run's stat data stay only on an entry
 * that is byte for byte one of the host's index of before (name, stat data, id, flags): the host's
 * git trusted those already. */
#ifndef FSRUN_SANDBOX_GIT_INDEX_STAT_H
#define FSRUN_SANDBOX_GIT_INDEX_STAT_H

#include <stddef.h>
#include <stdint.h>

/* the host's entries whose stat data a rewritten index may keep */
struct git_index_kept {
  unsigned char (*keys)[32]; /* a digest of each entry's name and fixed bytes; sorted once done */
  size_t n, cap;
  int64_t index_mtime; /* the host's index file's mtime (seconds): set before the walk */
};

/* a git_index_entry_fn over the host's index (arg: the git_index_kept): the entry is kept unless
 * it is racily clean there (its mtime not before the index file's: git compares its content
 * because of that index's mtime, which the rewritten index does not have) */
void git_index_kept_add(void *arg, const unsigned char *entry, size_t fixed, const char *name,
                        size_t name_len);
/* after the walk: sorted for git_index_stat_smudge */
void git_index_kept_done(struct git_index_kept *k);
void git_index_kept_free(struct git_index_kept *k);

/* the run's index as it is walked: buf (the bytes walked, written through here), kept, the entries
 * smudged */
struct git_index_smudge {
  unsigned char *buf;
  const struct git_index_kept *kept;
  size_t smudged;
};

/* a git_index_entry_fn over the run's index (arg: the git_index_smudge): an entry not kept gets
 * zero stat data but its mode. A size of 0 makes git 2.39 take the entry as changed unless its id
 * is the empty blob's (ce_match_stat_basic's "racily smudged" rule) and then compare the content
 * (ie_modified hashes the file of an entry whose size is 0): the host's next `git status` hashes
 * those files once and refreshes their stat data. The walk reads none of the bytes written. */
void git_index_stat_smudge(void *arg, const unsigned char *entry, size_t fixed, const char *name,
                           size_t name_len);

#endif
