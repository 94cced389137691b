/* SHA-1 as specified in FIPS 180-4, written from the standard's description. */
#include "sha1.h"

#include <string.h>

static uint32_t rotl(uint32_t x, unsigned n) {
  return (x << n) | (x >> (32 - n));
}

/* f and K of the round's quarter (FIPS 180-4, 4.1.1 and 4.2.1) */
static uint32_t round_mix(int i, uint32_t b, uint32_t c, uint32_t d, uint32_t *k) {
  if (i < 20) {
    *k = 0x5a827999;
    return (b & c) | (~b & d);
  }
  if (i < 40) {
    *k = 0x6ed9eba1;
    return b ^ c ^ d;
  }
  if (i < 60) {
    *k = 0x8f1bbcdc;
    return (b & c) | (b & d) | (c & d);
  }
  *k = 0xca62c1d6;
  return b ^ c ^ d;
}

static void compress(uint32_t state[5], const uint8_t block[64]) {
  uint32_t w[80], a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)block[i * 4] << 24 | (uint32_t)block[i * 4 + 1] << 16 |
           (uint32_t)block[i * 4 + 2] << 8 | (uint32_t)block[i * 4 + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  for (int i = 0; i < 80; i++) {
    uint32_t k, f = round_mix(i, b, c, d, &k);
    uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = rotl(b, 30), b = a, a = t;
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d, state[4] += e;
}

void sha1_init(struct sha1_ctx *c) {
  static const uint32_t initial[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  memcpy(c->state, initial, sizeof(initial));
  hash_blocks_init(&c->blocks);
}

void sha1_update(struct sha1_ctx *c, const void *data, size_t len) {
  hash_blocks_update(&c->blocks, c->state, compress, data, len);
}

void sha1_final(struct sha1_ctx *c, uint8_t digest[20]) {
  hash_blocks_final(&c->blocks, c->state, compress, digest, 5);
}

void sha1_digest(const void *data, size_t len, uint8_t out[20]) {
  struct sha1_ctx c;
  sha1_init(&c);
  sha1_update(&c, data, len);
  sha1_final(&c, out);
}
