/* SHA-1 (FIPS 180-4), for the ids of a SHA-1 git repository's objects (sandbox-git-objects.c) and
 * the trailing checksum git expects on an index fsrun rewrites (sandbox-git-index.c). Not
 * collision-detecting: it names content, it does not authenticate it. */
#ifndef FSRUN_SHA1_H
#define FSRUN_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "hash-blocks.h"

struct sha1_ctx {
  uint32_t state[5];
  struct hash_blocks blocks;
};

void sha1_init(struct sha1_ctx *c);
void sha1_update(struct sha1_ctx *c, const void *data, size_t len);
void sha1_final(struct sha1_ctx *c, uint8_t digest[20]);
/* the digest of data in one call */
void sha1_digest(const void *data, size_t len, uint8_t out[20]);

#endif
