/* What SHA-1 and SHA-256 share (FIPS 180-4, 5.1.1 and 5.2.1): the message cut into 64-byte blocks
 * for the hash's own compression function, padded with 0x80, zeros and its length in bits
 * (big-endian), and the state words read out big-endian. */
#ifndef FSRUN_HASH_BLOCKS_H
#define FSRUN_HASH_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*hash_compress_fn)(uint32_t *state, const uint8_t block[64]);

struct hash_blocks {
  uint64_t total_len; /* bytes hashed so far */
  uint8_t block[64];
  size_t block_len;
};

void hash_blocks_init(struct hash_blocks *b);
void hash_blocks_update(struct hash_blocks *b, uint32_t *state, hash_compress_fn compress,
                        const void *data, size_t len);
/* pads, compresses the last block(s) and writes the n_words state words into digest */
void hash_blocks_final(struct hash_blocks *b, uint32_t *state, hash_compress_fn compress,
                       uint8_t *digest, size_t n_words);

#endif
