/* sha1.c against the FIPS 180-4 example vectors, and git_loose_object_check against objects git
 * wrote (SHA-1 and SHA-256) and the ways one can lie about its name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "git-object.h"
#include "sha1.h"
#include "tap.h"

static void check_sha1(const char *what, const char *data, size_t len, const char *want) {
  static const char hex[] = "0123456789abcdef";
  struct sha1_ctx c;
  uint8_t d[20];
  char got[41];
  sha1_init(&c);
  sha1_update(&c, data, len);
  sha1_final(&c, d);
  for (int i = 0; i < 20; i++)
    got[2 * i] = hex[d[i] >> 4], got[2 * i + 1] = hex[d[i] & 15];
  got[40] = '\0';
  if (!tap_ok(strcmp(got, want) == 0, "sha1 %s", what))
    tap_diag("  got %s, want %s", got, want);
}

/* an fd reading the zlib of raw (raw_len bytes), plus extra bytes after the stream */
static int object_fd(const char *raw, size_t raw_len, const char *extra) {
  unsigned char z[4096];
  uLongf zlen = sizeof(z);
  FILE *f = tmpfile();
  int fd;
  if (f == NULL || compress(z, &zlen, (const unsigned char *)raw, raw_len) != Z_OK)
    abort();
  fwrite(z, 1, zlen, f);
  fputs(extra, f);
  fflush(f);
  fd = dup(fileno(f));
  fclose(f);
  lseek(fd, 0, SEEK_SET);
  return fd;
}

static int verdict(const char *raw, size_t raw_len, const char *extra, const char *id) {
  const char *why = NULL;
  int fd = object_fd(raw, raw_len, extra), rc = git_loose_object_check(fd, id, &why);
  close(fd);
  if (rc < 0)
    tap_diag("  %s", why);
  return rc;
}

int main(void) {
  /* printf 'GOOD CONTENT\n' | git hash-object --stdin [--object-format=sha256] */
  static const char good[] = "blob 13\0GOOD CONTENT\n";
  static const char evil[] = "blob 13\0EVIL CONTENT\n";
#define GOOD_SHA1   "5e181eb4e1f53b0ca82b32d98bb550d87d7996b0"
#define GOOD_SHA256 "5d37cea72d5a2952f98a6682d14e65094beb97cd6ea4376ffa8834596c467f41"
  const char *million = NULL;
  char *buf;

  check_sha1("empty input", "", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  check_sha1("\"abc\"", "abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
  check_sha1("448-bit message", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
             "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  buf = malloc(1000000);
  memset(buf, 'a', 1000000);
  million = buf;
  check_sha1("a million 'a'", million, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  free(buf);

  tap_ok(verdict(good, sizeof(good) - 1, "", GOOD_SHA1) == 0, "a blob git wrote (sha1)");
  tap_ok(verdict(good, sizeof(good) - 1, "", GOOD_SHA256) == 0, "a blob git wrote (sha256)");
  tap_ok(verdict(evil, sizeof(evil) - 1, "", GOOD_SHA1) < 0, "other content under its id");
  tap_ok(verdict(evil, sizeof(evil) - 1, "", GOOD_SHA256) < 0, "other content, sha256 id");
  tap_ok(verdict("blob 12\0GOOD CONTENT\n", 21, "", GOOD_SHA1) < 0, "a size too small");
  tap_ok(verdict("blob 14\0GOOD CONTENT\n", 21, "", GOOD_SHA1) < 0, "a size too large");
  tap_ok(verdict("blub 13\0GOOD CONTENT\n", 21, "", GOOD_SHA1) < 0, "an unknown type");
  tap_ok(verdict("blob 013\0GOOD CONTENT\n", 22, "", GOOD_SHA1) < 0, "a leading zero");
  tap_ok(verdict(good, sizeof(good) - 1, "x", GOOD_SHA1) < 0, "bytes after the stream");
  tap_ok(verdict(good, sizeof(good) - 1, "", "5e18") < 0, "not an id");
  return tap_done();
}
