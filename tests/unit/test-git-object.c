/* sha1.c against the FIPS 180-4 example vectors, and git_loose_object_check against objects git
 * wrote (SHA-1 and SHA-256) and the ways one can lie about its name, git_loose_object_copy's
 * bounds; sandbox_git_env's config entries merged with the caller's GIT_CONFIG_COUNT ones. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "git-object.h"
#include "sandbox-git.h"
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

#define GOOD_ID "5e181eb4e1f53b0ca82b32d98bb550d87d7996b0" /* `GOOD CONTENT\n` */

static int verdict(const char *raw, size_t raw_len, const char *extra, const char *id) {
  const char *why = NULL;
  int fd = object_fd(raw, raw_len, extra), rc = git_loose_object_check(fd, id, &why);
  close(fd);
  if (rc < 0)
    tap_diag("  %s", why);
  return rc;
}

/* sandbox_git_env over the given entries; the result joined with spaces */
static char *git_env(const char *const *in) {
  oci_strv env = {.items = calloc(1, sizeof(char *)), .len = 0};
  size_t len = 1;
  char *out;
  for (; *in != NULL; in++)
    oci_strv_push(&env, *in);
  sandbox_git_env(&env);
  for (size_t i = 0; i < env.len; i++)
    len += strlen(env.items[i]) + 1;
  out = calloc(1, len);
  for (size_t i = 0; i < env.len; i++) {
    strcat(out, i == 0 ? "" : " ");
    strcat(out, env.items[i]);
    free(env.items[i]);
  }
  free(env.items);
  return out;
}

static void check_git_env(const char *what, const char *const *in, const char *want) {
  char *got = git_env(in);
  if (!tap_ok(strcmp(got, want) == 0, "command env: %s", what))
    tap_diag("  got  %s\n#   want %s", got, want);
  free(got);
}

#define LOOSE_CONFIG(n0, n1, n2, n3)                                                               \
  "GIT_CONFIG_KEY_" n0 "=gc.auto GIT_CONFIG_VALUE_" n0 "=0 GIT_CONFIG_KEY_" n1                     \
  "=transfer.unpackLimit GIT_CONFIG_VALUE_" n1 "=2147483647 GIT_CONFIG_KEY_" n2                    \
  "=fetch.unpackLimit GIT_CONFIG_VALUE_" n2 "=2147483647 GIT_CONFIG_KEY_" n3                       \
  "=receive.unpackLimit GIT_CONFIG_VALUE_" n3 "=2147483647"

static void check_git_envs(void) {
  static const char *const plain[] = {"PATH=/bin", NULL};
  static const char *const callers[] = {"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_COUNT=1",
                                        "GIT_CONFIG_VALUE_0=me", "PATH=/bin", NULL};
  static const char *const stale[] = {"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=1",
                                      "GIT_CONFIG_KEY_12=x.y", NULL};
  static const char *const shadow[] = {"GIT_CONFIG_COUNT=1",
                                       "GIT_CONFIG_KEY_0=a.b",
                                       "GIT_CONFIG_VALUE_0=1",
                                       "GIT_CONFIG_KEY_1=gc.auto",
                                       "GIT_CONFIG_VALUE_1=1",
                                       "GIT_CONFIG_KEY_1X=k",
                                       NULL};
  static const char *const refused[] = {"GIT_CONFIG_COUNT=x", NULL};
  static const char *const merged[] = {"GIT_CONFIG_KEY_0=user.name",
                                       "GIT_CONFIG_VALUE_0=me",
                                       "PATH=/bin",
                                       "GIT_CONFIG_COUNT=5",
                                       "GIT_CONFIG_KEY_1=gc.auto",
                                       "GIT_CONFIG_VALUE_1=0",
                                       "GIT_CONFIG_KEY_2=transfer.unpackLimit",
                                       "GIT_CONFIG_VALUE_2=2147483647",
                                       "GIT_CONFIG_KEY_3=fetch.unpackLimit",
                                       "GIT_CONFIG_VALUE_3=2147483647",
                                       "GIT_CONFIG_KEY_4=receive.unpackLimit",
                                       "GIT_CONFIG_VALUE_4=2147483647",
                                       NULL};
  check_git_env("no count of the caller's", plain,
                "PATH=/bin GIT_CONFIG_COUNT=4 " LOOSE_CONFIG("0", "1", "2", "3"));
  check_git_env("the caller's entries kept, ours after them", callers,
                "GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=me PATH=/bin "
                "GIT_CONFIG_COUNT=5 " LOOSE_CONFIG("1", "2", "3", "4"));
  check_git_env("slots git would ignore (no count) do not shadow ours", stale,
                "GIT_CONFIG_COUNT=4 " LOOSE_CONFIG("0", "1", "2", "3"));
  check_git_env("slots past the caller's count do not shadow ours", shadow,
                "GIT_CONFIG_KEY_0=a.b GIT_CONFIG_VALUE_0=1 GIT_CONFIG_KEY_1X=k "
                "GIT_CONFIG_COUNT=5 " LOOSE_CONFIG("1", "2", "3", "4"));
  check_git_env("a count git refuses is left alone", refused, "GIT_CONFIG_COUNT=x");
  /* `fsrun exec` merges again over the bundle's env (review19, 44427e5) */
  check_git_env("merged already (an exec's env that kept the bundle's): unchanged", merged,
                "GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=me PATH=/bin "
                "GIT_CONFIG_COUNT=5 " LOOSE_CONFIG("1", "2", "3", "4"));
}

/* git_loose_object_copy of raw's stream with the caps given refused, with why */
static bool why_refused(const char *raw, size_t raw_len, uint64_t max_in, uint64_t *budget,
                        const char *want) {
  const char *why = NULL;
  int fd = object_fd(raw, raw_len, ""),
      rc = git_loose_object_copy(fd, -1, max_in, budget, GOOD_ID, &why);
  close(fd);
  if (rc == 0 || why == NULL || strcmp(why, want) != 0)
    tap_diag("  rc %d: %s", rc, why ? why : "(no reason)");
  return rc < 0 && why != NULL && strcmp(why, want) == 0;
}

/* a good object copied: what was written is what the file holds */
static bool copied_as_read(const char *raw, size_t raw_len) {
  const char *why = NULL;
  char a[4096], b[4096];
  int in = object_fd(raw, raw_len, ""), out = object_fd("", 0, "");
  ssize_t n_in, n_out;
  bool ok = ftruncate(out, 0) == 0 &&
            git_loose_object_copy(in, out, UINT64_MAX, NULL, GOOD_ID, &why) == 0;
  n_in = pread(in, a, sizeof(a), 0);
  n_out = pread(out, b, sizeof(b), 0);
  close(in);
  close(out);
  return ok && n_in > 0 && n_in == n_out && memcmp(a, b, (size_t)n_in) == 0;
}

int main(void) {
  /* printf 'GOOD CONTENT\n' | git hash-object --stdin [--object-format=sha256] */
  static const char good[] = "blob 13\0GOOD CONTENT\n";
  static const char evil[] = "blob 13\0EVIL CONTENT\n";
#define GOOD_SHA1   "5e181eb4e1f53b0ca82b32d98bb550d87d7996b0"
#define GOOD_SHA256 "5d37cea72d5a2952f98a6682d14e65094beb97cd6ea4376ffa8834596c467f41"
  const char *million = NULL;
  uint64_t budget;
  bool spent;
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
  tap_ok(why_refused("blob 4294967297\0x", 17, UINT64_MAX, NULL, "a bad object header"),
         "a header's size above 4 GiB: refused at the header");
  tap_ok(why_refused(good, sizeof(good) - 1, 8, NULL, "a larger file than an object may be"),
         "a stream longer than the caller's cap: refused");
  budget = 12;
  tap_ok(why_refused(good, sizeof(good) - 1, UINT64_MAX, &budget,
                     "more data than the sync may still inflate"),
         "13 bytes of data with 12 left of the inflate budget: refused at the header");
  budget = 100;
  spent = why_refused(evil, sizeof(evil) - 1, UINT64_MAX, &budget, "its content has another id");
  tap_ok(spent && budget == 87,
         "a check that fails still spends its 13 bytes of the budget (%llu left)",
         (unsigned long long)budget);
  tap_ok(copied_as_read(good, sizeof(good) - 1), "the copy is the stream, byte for byte");
  check_git_envs();
  return tap_done();
}
