/* sha256.c against the FIPS 180-4 example vectors and the padding boundaries (55/56/63/64/65
 * bytes, where the length field does or does not fit into the last block). */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tap.h"

static void check(const char *what, const void *data, size_t len, const char *want) {
  char got[65];
  sha256_hex(data, len, got);
  if (!tap_ok(strcmp(got, want) == 0, "%s", what))
    tap_diag("  got %s, want %s", got, want);
}

int main(void) {
  static const struct {
    size_t len;
    const char *want;
  } boundaries[] = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
  };
  const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  char xs[65], million_hex[65];
  struct sha256_ctx c;
  uint8_t digest[32];
  char *million;

  check("empty input", "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  check("\"abc\"", "abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check("448-bit message", two_blocks, strlen(two_blocks),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  memset(xs, 'x', sizeof(xs));
  for (size_t i = 0; i < sizeof(boundaries) / sizeof(boundaries[0]); i++) {
    char what[64];
    snprintf(what, sizeof(what), "%zu bytes of 'x'", boundaries[i].len);
    check(what, xs, boundaries[i].len, boundaries[i].want);
  }

  million = malloc(1000000);
  memset(million, 'a', 1000000);
  check("one million 'a'", million, 1000000,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* the same bytes fed in uneven pieces give the same digest */
  sha256_init(&c);
  for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 997 + 1)
    sha256_update(&c, million + off, off + step > 1000000 ? 1000000 - off : step);
  sha256_final(&c, digest);
  for (int i = 0; i < 32; i++)
    snprintf(million_hex + i * 2, 3, "%02x", digest[i]);
  tap_ok(strcmp(million_hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") ==
             0,
         "incremental updates in uneven pieces");
  free(million);
  return tap_done();
}
