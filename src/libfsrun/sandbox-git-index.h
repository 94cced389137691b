/* A git index file (`.git/index`, gitformat-index(5)) read exactly as git 2.39 reads it, so that
 * what fsrun checks is what the host's git will act on: the entries (v2, v3 and v4 with prefix
 * compression; the name's length from the flags, as git takes it), the extensions by their sizes,
 * and the trailing checksum's place (not its value: git does not verify it when it reads). Pure
 * functions on a buffer, shared by the sync (sandbox-git-index-sync.c) and the tamper report. */
#ifndef FSRUN_SANDBOX_GIT_INDEX_H
#define FSRUN_SANDBOX_GIT_INDEX_H

#include <stdbool.h>
#include <stddef.h>

/* the extensions that change what the host's git does with the worktree beyond the entries */
enum {
  GIT_INDEX_EXT_LINK = 1, /* split index: the entries are in another file */
  GIT_INDEX_EXT_UNTR = 2, /* untracked cache: can hide untracked files from `git status` */
  GIT_INDEX_EXT_FSMN = 4, /* fsmonitor's valid bits: can hide edits from `git status` */
  GIT_INDEX_EXT_SDIR = 8, /* sparse index: directory entries */
};

struct git_index {
  char **gitlinks; /* the paths of the mode 160000 entries (NULL-terminated, NULL: none) */
  size_t n_gitlinks;
  char **hidden; /* the paths with assume-valid or skip-worktree set (sorted; NULL: none) */
  size_t n_hidden;
  unsigned exts;    /* GIT_INDEX_EXT_* present */
  char *unsafe;     /* why an entry path is one git must not be handed (the first); NULL: none */
  size_t ext_start; /* the offset where the entries end and the extensions begin */
};

/* Walks buf (len bytes) with object ids of hash bytes (20 or 32). 0: walked exactly to the
 * checksum, *out filled; -1: it cannot be (*why: a static string), *out freed. */
int git_index_parse(const unsigned char *buf, size_t len, size_t hash, struct git_index *out,
                    const char **why);

/* one entry as the walk reads it: entry is where it begins in buf (its stat data, then its object
 * id and flags: fixed bytes in all), name its whole name (v4's prefix put back), name_len bytes */
typedef void git_index_entry_fn(void *arg, const unsigned char *entry, size_t fixed,
                                const char *name, size_t name_len);
/* git_index_parse, calling each for every entry walked (also when the walk then fails) */
int git_index_parse_each(const unsigned char *buf, size_t len, size_t hash, struct git_index *out,
                         const char **why, git_index_entry_fn *each, void *arg);
void git_index_free(struct git_index *x);

/* buf (walked into x) as its header and entries alone, under a new checksum: no extension of the
 * run's reaches the host. git trusts them all: the cache-tree (`TREE`) names the tree a commit
 * takes for an unchanged directory, the untracked cache and fsmonitor's bits hide changes from
 * `git status`, EOIE/IEOT tell a threaded reader where the entries are; git rebuilds what it needs
 * on the host. *out_len set; the caller frees. */
unsigned char *git_index_entries_only(const unsigned char *buf, size_t hash,
                                      const struct git_index *x, size_t *out_len);

/* true when the bytes just before where git_index_entries_only puts the checksum read as an EOIE
 * extension's signature: git's threaded reader (index.threads) looks there alone for one, and would
 * then read the entries from wherever it points */
bool git_index_entries_end_like_eoie(const unsigned char *buf, size_t hash,
                                     const struct git_index *x);

/* NULL when git's verify_path (and its NTFS/HFS `.git` rules) accepts path for an entry of that
 * mode; else why not (a static string). len: the path's length as the index gives it. */
const char *git_index_path_refused(const char *path, size_t len, unsigned mode);

/* sorts a path list in place for git_index_listed */
void git_index_sort_paths(char **paths, size_t n);
/* true when a sorted path list holds path */
bool git_index_listed(char *const *sorted, size_t n, const char *path);

/* The object id size a repository's config gives (`extensions.objectFormat`: sha256 -> 32, else
 * 20), read by git-config.c as git reads the file; `include.path` is not followed. */
size_t git_config_hash_size(const char *config);

#endif
