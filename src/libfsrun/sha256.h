/* SHA-256 (FIPS 180-4), for the sandbox audit log's policyHash. Small and dependency-free. */
#ifndef FSRUN_SHA256_H
#define FSRUN_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "hash-blocks.h"

struct sha256_ctx {
  uint32_t state[8];
  struct hash_blocks blocks;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, uint8_t digest[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
