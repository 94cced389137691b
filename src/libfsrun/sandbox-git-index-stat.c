/* Which stat data of the run's index reach the host (sandbox-git-index-stat.h). An entry is kept
 * when a digest of its whole name and fixed bytes (stat data, object id, flags, extended flags) is
 * one of the host's entries' of before: SHA-256, so that the run cannot make another entry with a
 * host entry's digest. */
#include "sandbox-git-index-stat.h"

#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "utils.h"

#define STAT_MTIME_AT 8  /* the mtime's seconds in an entry's stat data */
#define STAT_MODE_AT  24 /* the mode, which stays */
#define STAT_BYTES    40

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void entry_key(const unsigned char *entry, size_t fixed, const char *name, size_t name_len,
                      unsigned char out[32]) {
  struct sha256_ctx c;
  uint64_t n = name_len;
  sha256_init(&c);
  sha256_update(&c, &n, sizeof(n));
  sha256_update(&c, name, name_len);
  sha256_update(&c, entry, fixed);
  sha256_final(&c, out);
}

static int cmp_key(const void *a, const void *b) {
  return memcmp(a, b, 32);
}

void git_index_kept_add(void *arg, const unsigned char *entry, size_t fixed, const char *name,
                        size_t name_len) {
  struct git_index_kept *k = arg;
  /* git's is_racy_timestamp, in seconds only (a superset of its nanosecond rule) */
  if (k->index_mtime <= (int64_t)be32(entry + STAT_MTIME_AT))
    return;
  if (k->n == k->cap) {
    k->cap = k->cap ? k->cap * 2 : 64;
    if ((k->keys = realloc(k->keys, k->cap * sizeof(*k->keys))) == NULL)
      abort();
  }
  entry_key(entry, fixed, name, name_len, k->keys[k->n++]);
}

void git_index_kept_done(struct git_index_kept *k) {
  if (k->n > 1)
    qsort(k->keys, k->n, sizeof(*k->keys), cmp_key);
}

void git_index_kept_free(struct git_index_kept *k) {
  free(k->keys);
  memset(k, 0, sizeof(*k));
}

void git_index_stat_smudge(void *arg, const unsigned char *entry, size_t fixed, const char *name,
                           size_t name_len) {
  struct git_index_smudge *s = arg;
  unsigned char key[32];
  unsigned char *at = s->buf + (entry - s->buf);
  entry_key(entry, fixed, name, name_len, key);
  if (s->kept->n > 0 && bsearch(key, s->kept->keys, s->kept->n, sizeof(key), cmp_key) != NULL)
    return;
  memset(at, 0, STAT_MODE_AT);
  memset(at + STAT_MODE_AT + 4, 0, STAT_BYTES - STAT_MODE_AT - 4);
  s->smudged++;
}
