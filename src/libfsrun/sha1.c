/* SHA-1 as FIPS 180-4 section 6.1 gives it: 512-bit blocks, an 80-word schedule, four rounds. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) {
  return x << n | x >> (32 - n);
}

static uint32_t load_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void sha1_block(uint32_t h[5], const uint8_t *p) {
  uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 16; i++)
    w[i] = load_be32(p + 4 * i);
  for (int i = 16; i < 80; i++)
    w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  for (int i = 0; i < 80; i++) {
    uint32_t f, k, t;
    if (i < 20)
      f = (b & c) | (~b & d), k = 0x5a827999u;
    else if (i < 40)
      f = b ^ c ^ d, k = 0x6ed9eba1u;
    else if (i < 60)
      f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdcu;
    else
      f = b ^ c ^ d, k = 0xca62c1d6u;
    t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rol(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

void sha1_digest(const void *data, size_t len, uint8_t out[20]) {
  uint32_t h[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
  const uint8_t *p = data;
  uint8_t tail[128] = {0};
  size_t full = len & ~(size_t)63, rest = len - full, tail_len = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (size_t i = 0; i < full; i += 64)
    sha1_block(h, p + i);
  memcpy(tail, p + full, rest);
  tail[rest] = 0x80;
  for (int i = 0; i < 8; i++)
    tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
  for (size_t i = 0; i < tail_len; i += 64)
    sha1_block(h, tail + i);
  for (int i = 0; i < 5; i++) {
    out[4 * i] = (uint8_t)(h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(h[i] >> 8);
    out[4 * i + 3] = (uint8_t)h[i];
  }
}
