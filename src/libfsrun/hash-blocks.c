/* The block buffering and padding of SHA-1 and SHA-256 (FIPS 180-4, 5.1.1). */
#include "hash-blocks.h"

#include <string.h>

void hash_blocks_init(struct hash_blocks *b) {
  b->total_len = 0;
  b->block_len = 0;
}

void hash_blocks_update(struct hash_blocks *b, uint32_t *state, hash_compress_fn compress,
                        const void *data, size_t len) {
  const uint8_t *p = data;
  b->total_len += len;
  while (len > 0) {
    size_t take = 64 - b->block_len;
    if (take > len)
      take = len;
    memcpy(b->block + b->block_len, p, take);
    b->block_len += take;
    p += take;
    len -= take;
    if (b->block_len == 64) {
      compress(state, b->block);
      b->block_len = 0;
    }
  }
}

void hash_blocks_final(struct hash_blocks *b, uint32_t *state, hash_compress_fn compress,
                       uint8_t *digest, size_t n_words) {
  uint64_t bits = b->total_len * 8;
  /* padding: 0x80, zeros up to 56 mod 64, then the length in bits, big-endian */
  b->block[b->block_len++] = 0x80;
  if (b->block_len > 56) {
    memset(b->block + b->block_len, 0, 64 - b->block_len);
    compress(state, b->block);
    b->block_len = 0;
  }
  memset(b->block + b->block_len, 0, 56 - b->block_len);
  for (int i = 0; i < 8; i++)
    b->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  compress(state, b->block);
  for (size_t i = 0; i < n_words; i++) {
    digest[i * 4] = (uint8_t)(state[i] >> 24);
    digest[i * 4 + 1] = (uint8_t)(state[i] >> 16);
    digest[i * 4 + 2] = (uint8_t)(state[i] >> 8);
    digest[i * 4 + 3] = (uint8_t)state[i];
  }
  memset(b->block, 0, sizeof(b->block));
}
