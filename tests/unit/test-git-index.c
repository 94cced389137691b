/* sandbox-git-index.c: the index is walked as git walks it (the name's length from the flags),
 * what git would read differently is refused, entry paths are checked as git's verify_path checks
 * what it adds, and the object format comes from `extensions.objectFormat`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-git-index-stat.h"
#include "sandbox-git-index.h"
#include "sha1.h"
#include "tap.h"

struct idx {
  unsigned char d[16384];
  size_t n, hash;
  uint32_t version;
  char prev[256];
  size_t prev_len;
};

static void put(struct idx *b, const void *p, size_t n) {
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

static void put32(struct idx *b, uint32_t v) {
  unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                        (unsigned char)v};
  put(b, c, 4);
}

static void put16(struct idx *b, uint32_t v) {
  unsigned char c[2] = {(unsigned char)(v >> 8), (unsigned char)v};
  put(b, c, 2);
}

static void start(struct idx *b, uint32_t version, uint32_t count, size_t hash) {
  memset(b, 0, sizeof(*b));
  b->hash = hash;
  b->version = version;
  put(b, "DIRC", 4);
  put32(b, version);
  put32(b, count);
}

/* an entry; name_len bytes of name (which may hold a NUL), flags' length field = flag_len */
static void entry(struct idx *b, uint32_t mode, const char *name, size_t name_len, size_t flag_len,
                  uint32_t flags, int xflags) {
  size_t e = b->n, fixed;
  unsigned char zero[64] = {0};
  for (int i = 0; i < 6; i++)
    put32(b, 0);
  put32(b, mode);
  put32(b, 0);
  put32(b, 0);
  put32(b, 0);
  put(b, zero, b->hash);
  put16(b, flags | (uint32_t)flag_len | (xflags >= 0 ? 0x4000u : 0));
  if (xflags >= 0)
    put16(b, (uint32_t)xflags);
  fixed = b->n - e;
  if (b->version == 4) {
    size_t common = 0, plen = b->prev_len;
    while (common < plen && common < name_len && b->prev[common] == name[common])
      common++;
    unsigned char strip = (unsigned char)(plen - common);
    put(b, &strip, 1);
    put(b, name + common, name_len - common);
    put(b, zero, 1);
    memcpy(b->prev, name, name_len);
    b->prev_len = name_len;
  } else {
    put(b, name, name_len);
    put(b, zero, ((fixed + name_len + 8) & ~(size_t)7) - fixed - name_len);
  }
}

static void ext(struct idx *b, const char *sig, const void *data, size_t n) {
  put(b, sig, 4);
  put32(b, (uint32_t)n);
  put(b, data, n);
}

static void finish(struct idx *b) {
  unsigned char zero[32] = {0};
  put(b, zero, b->hash);
}

static void plain(struct idx *b, uint32_t mode, const char *name) {
  entry(b, mode, name, strlen(name), strlen(name), 0, b->version >= 3 ? -1 : -1);
}

static int parse(struct idx *b, struct git_index *x, const char **why) {
  return git_index_parse(b->d, b->n, b->hash, x, why);
}

static void test_plain_and_gitlink(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 2, 3, 20);
  plain(&b, 0100644, "README");
  plain(&b, 0100755, "bin/run");
  plain(&b, 0160000, "sub");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.unsafe == NULL, "a v2 index git wrote is walked (%s)",
         why ? why : "ok");
  tap_ok(x.n_gitlinks == 1 && strcmp(x.gitlinks[0], "sub") == 0, "its gitlink is found");
  git_index_free(&x);
  b.n--;
  tap_ok(parse(&b, &x, &why) < 0, "a byte short of the checksum is refused");
}

/* review18 finding 4(a): git steps by the flags' length; a NUL inside the name hid later entries */
static void test_nul_in_name(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 2, 3, 20);
  plain(&b, 0100644, "README");
  entry(&b, 0100644, "a\0zzzzzz", 8, 8, 0, -1);
  plain(&b, 0160000, "evil");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.unsafe && strstr(x.unsafe, "NUL"),
         "a NUL inside a name is walked over as git does, and unsafe");
  tap_ok(x.n_gitlinks == 1 && strcmp(x.gitlinks[0], "evil") == 0,
         "the gitlink after it is found (review18 finding 4a)");
  git_index_free(&x);
  start(&b, 4, 3, 20);
  plain(&b, 0100644, "abc");
  entry(&b, 0100644, "abc/d\0e", 7, 7, 0, -1);
  plain(&b, 0160000, "abc/sub");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.unsafe && x.n_gitlinks == 1 &&
             strcmp(x.gitlinks[0], "abc/sub") == 0,
         "v4: a NUL inside a name's suffix is walked over, unsafe (%s)", why ? why : "ok");
  git_index_free(&x);
  start(&b, 2, 1, 20);
  entry(&b, 0100644, "abcdef", 6, 3, 0, -1);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "a name longer than the flags say is refused (not terminated)");
}

static void test_paths(void) {
  static const char *refused[] = {"/etc/x",
                                  "../victim-dir/victim",
                                  "a/../b",
                                  "a//b",
                                  "a/",
                                  "./a",
                                  ".git/config",
                                  ".GIT/hooks/x",
                                  "a/.Git",
                                  ".git. /x",
                                  ".git::$INDEX_ALLOCATION/x",
                                  "GIT~1/x",
                                  ".g\xe2\x80\x8cit/x",
                                  "\xef\xbb\xbf.git",
                                  "a\\b",
                                  "..",
                                  "",
                                  NULL};
  static const char *accepted[] = {"a/b", ".gitignore",  ".github/x", "a..b", "git~2/x",
                                   "...", ".gitmodules", "x.git",     NULL};
  for (const char **p = refused; *p; p++)
    tap_ok(git_index_path_refused(*p, strlen(*p), 0100644) != NULL, "path `%s` is refused", *p);
  for (const char **p = accepted; *p; p++)
    tap_ok(git_index_path_refused(*p, strlen(*p), 0100644) == NULL, "path `%s` is accepted", *p);
  tap_ok(git_index_path_refused(".gitmodules", 11, 0120000) != NULL &&
             git_index_path_refused("a/.GITMODULES", 13, 0120000) != NULL,
         "a symbolic link `.gitmodules` is refused");
  tap_ok(git_index_path_refused("a\0b", 3, 0100644) != NULL, "a NUL in a path is refused");
}

static void test_unsafe_entry(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 2, 2, 20);
  plain(&b, 0100644, "../victim-dir/victim");
  plain(&b, 0160000, "evil");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.unsafe && strstr(x.unsafe, "../victim-dir/victim"),
         "an entry `../victim-dir/victim` is walked and named unsafe");
  tap_ok(x.n_gitlinks == 1, "the gitlink after it is still found");
  git_index_free(&x);
}

static void test_flags(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 3, 3, 20);
  entry(&b, 0100644, "a", 1, 1, 0x8000, -1);
  entry(&b, 0100644, "b", 1, 1, 0, 0x4000);
  entry(&b, 0100644, "c", 1, 1, 0, 0x2000);
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.n_hidden == 2 && strcmp(x.hidden[0], "a") == 0 &&
             strcmp(x.hidden[1], "b") == 0,
         "v3: assume-valid and skip-worktree entries are listed, intent-to-add is not");
  tap_ok(git_index_listed(x.hidden, x.n_hidden, "b") &&
             !git_index_listed(x.hidden, x.n_hidden, "c"),
         "git_index_listed finds them");
  git_index_free(&x);
  start(&b, 2, 1, 20);
  entry(&b, 0100644, "b", 1, 1, 0, 0x4000);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "extended flags in a v2 index are refused");
  start(&b, 3, 1, 20);
  entry(&b, 0100644, "b", 1, 1, 0, 0x0100);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "unknown extended flags are refused");
  start(&b, 2, 1, 20);
  entry(&b, 0040000, "d", 1, 1, 0, -1);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "a mode git does not write is refused");
}

static void test_v4(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 4, 3, 20);
  plain(&b, 0100644, "src/a.c");
  plain(&b, 0100644, "src/b.c");
  plain(&b, 0160000, "src/sub");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.n_gitlinks == 1 && strcmp(x.gitlinks[0], "src/sub") == 0,
         "v4: prefix-compressed names are rebuilt (%s)", why ? why : "ok");
  git_index_free(&x);
}

static void test_extensions(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  unsigned char eoie[24] = {0}, ieot[12] = {0, 0, 0, 1, 0, 0, 0, 12, 0, 0, 0, 1};
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  ext(&b, "TREE", "", 0);
  ext(&b, "ZZZZ", "x", 1);
  ext(&b, "link", "", 0);
  ext(&b, "UNTR", "", 0);
  ext(&b, "FSMN", "", 0);
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 &&
             x.exts == (GIT_INDEX_EXT_LINK | GIT_INDEX_EXT_UNTR | GIT_INDEX_EXT_FSMN),
         "link, UNTR and FSMN are noted, an unknown optional extension skipped");
  git_index_free(&x);
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  ext(&b, "abcd", "", 0);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "an unknown required extension is refused");
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  put(&b, "TREE", 4);
  put32(&b, 100);
  finish(&b);
  tap_ok(parse(&b, &x, &why) < 0, "an extension past the checksum is refused");
  /* EOIE: where the entries end (12 + one 8-aligned 64-byte entry = 76) */
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  eoie[3] = 76;
  ext(&b, "IEOT", ieot, sizeof(ieot));
  ext(&b, "EOIE", eoie, sizeof(eoie));
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0, "an EOIE and an IEOT that are the entries' are walked (%s)",
         why ? why : "ok");
  git_index_free(&x);
  b.d[b.n - 20 - 24 + 3] = 80;
  tap_ok(parse(&b, &x, &why) < 0, "an EOIE pointing elsewhere is refused");
  b.d[b.n - 20 - 24 + 3] = 76;
  b.d[76 + 8 + 7] = 16;
  tap_ok(parse(&b, &x, &why) < 0, "an IEOT block at another offset is refused");
}

static void test_sha256(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 2, 2, 32);
  plain(&b, 0100644, "a");
  plain(&b, 0160000, "sub");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0 && x.n_gitlinks == 1, "a sha256 index is walked with 32");
  git_index_free(&x);
  tap_ok(git_index_parse(b.d, b.n, 20, &x, &why) < 0, "and not with 20");
}

static bool sha1_is(const void *data, size_t len, const char *hex) {
  uint8_t d[20];
  char got[41];
  sha1_digest(data, len, d);
  for (int i = 0; i < 20; i++)
    snprintf(got + 2 * i, 3, "%02x", d[i]);
  return strcmp(got, hex) == 0;
}

static void test_sha1(void) {
  static char million[1000000];
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  memset(million, 'a', sizeof(million));
  tap_ok(sha1_is("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709") &&
             sha1_is("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d") &&
             sha1_is(two, strlen(two), "84983e441c3bd26ebaae4aa1f95129e5e54670f1") &&
             sha1_is(million, sizeof(million), "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
         "sha1: the FIPS 180 examples");
}

/* every extension of the run's is dropped (TREE names the tree a commit takes, UNTR and FSMN hide
 * changes, EOIE/IEOT place the entries), the entries kept byte for byte, under a new checksum */
static void test_entries_only(void) {
  struct idx b;
  struct git_index x, y;
  const char *why = NULL;
  unsigned char *out;
  size_t out_len = 0;
  uint8_t sum[20];
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  ext(&b, "TREE", "t", 1);
  ext(&b, "UNTR", "uu", 2);
  ext(&b, "FSMN", "ff", 2);
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0, "an index with TREE, UNTR and FSMN is walked");
  out = git_index_entries_only(b.d, 20, &x, &out_len);
  tap_ok(out_len == x.ext_start + 20 && memcmp(out, b.d, x.ext_start) == 0 &&
             git_index_parse(out, out_len, 20, &y, &why) == 0 && y.exts == 0 &&
             y.ext_start == out_len - 20,
         "entries only: TREE, UNTR and FSMN gone, the entries as they were");
  sha1_digest(out, out_len - 20, sum);
  tap_ok(memcmp(out + out_len - 20, sum, 20) == 0, "under a new SHA-1 checksum");
  tap_ok(!git_index_entries_end_like_eoie(b.d, 20, &x), "plain entries do not end like an EOIE");
  git_index_free(&x);
  git_index_free(&y);
  free(out);
}

/* git's threaded reader looks for an EOIE only in the 32 bytes before the checksum (SHA-1): entries
 * whose last bytes put "EOIE" there are refused */
static void test_eoie_tail(void) {
  struct idx b;
  struct git_index x;
  const char *why = NULL;
  start(&b, 2, 1, 20);
  plain(&b, 0100644, "a");
  finish(&b);
  tap_ok(parse(&b, &x, &why) == 0, "a one-entry index is walked");
  memcpy(b.d + x.ext_start - 32, "EOIE", 4);
  tap_ok(git_index_entries_end_like_eoie(b.d, 20, &x), "\"EOIE\" 32 bytes before the end: seen");
  git_index_free(&x);
}

static void test_config(void) {
  tap_ok(git_config_hash_size("[core]\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n") ==
             32,
         "extensions.objectformat = sha256: 32");
  tap_ok(git_config_hash_size("[Extensions]\nObjectFormat = \"SHA256\" # c\n") == 32,
         "names case-insensitive, quotes and comment dropped: 32");
  tap_ok(git_config_hash_size("[extensions] objectFormat=sha256\n") == 32,
         "the key on the section's line: 32");
  tap_ok(git_config_hash_size("[remote \"sha256\"]\n\turl = https://x/sha256.git\n"
                              "[branch \"sha256\"]\n# sha256\n") == 20,
         "review18 finding 11: `sha256` elsewhere in the config: 20");
  tap_ok(git_config_hash_size("[core]\nobjectformat = sha256\n[extensions \"x\"]\n"
                              "objectformat = sha256\n") == 20,
         "objectformat outside [extensions]: 20");
  tap_ok(git_config_hash_size("[extensions]\nobjectformat = sha256\nobjectformat = sha1\n") == 20,
         "the last value wins: 20");
  tap_ok(git_config_hash_size("[include]\n\tpath = /x/sha256.cfg\n[includeIf \"gitdir:/\"]\n"
                              "\tpath = sha256\n") == 20,
         "include.path is not followed (git reads the format without includes): 20");
  tap_ok(git_config_hash_size(
             "[extensions]\nobjectformat = sha256\n[include]\npath = sha1.cfg\n") == 32,
         "an include after the key changes nothing: 32");
  tap_ok(git_config_hash_size("[extensions.x]\nobjectformat = sha256\n") == 20,
         "objectformat in the legacy subsection [extensions.x]: 20");
  tap_ok(git_config_hash_size("[extensions]\nobjectformat = sha256\nobjectformat\n") == 32,
         "a bare objectformat (no value) changes nothing: 32");
  tap_ok(git_config_hash_size("[extensions]\n\tobjectformat = \"sha\\\n256\"\n") == 32,
         "a value continued on the next line: 32");
  tap_ok(git_config_hash_size(NULL) == 20, "no config: 20");
}

/* stat32 at entry e's stat field (0: ctime, 8: mtime, 36: size) */
static void set_stat(struct idx *b, size_t e, size_t field, uint32_t v) {
  unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                        (unsigned char)v};
  memcpy(b->d + e + field, c, 4);
}

/* three v4 entries sharing a prefix (dir/a, dir/b, dir/c); their offsets in e[] */
static void three(struct idx *b, size_t e[3], uint32_t b_size) {
  start(b, 4, 3, 20);
  for (int i = 0; i < 3; i++) {
    char name[6] = {'d', 'i', 'r', '/', (char)('a' + i), 0};
    e[i] = b->n;
    plain(b, 0100644, name);
    set_stat(b, e[i], 0, 7);  /* ctime */
    set_stat(b, e[i], 8, 50); /* mtime */
    set_stat(b, e[i], 36, i == 1 ? b_size : 4);
  }
  finish(b);
}

/* review19 finding 7: the run's stat data stay only on an entry the host had byte for byte (v4:
 * by its whole name), and not on one that was racily clean in the host's index */
static void test_stat_kept(void) {
  struct idx host, run;
  size_t he[3], re[3];
  struct git_index x;
  struct git_index_kept kept = {.index_mtime = 100};
  struct git_index_smudge s = {.buf = NULL, .kept = &kept};
  const char *why = NULL;
  three(&host, he, 4);
  three(&run, re, 5);
  tap_ok(git_index_parse_each(host.d, host.n, 20, &x, &why, git_index_kept_add, &kept) == 0 &&
             kept.n == 3,
         "the host's three entries are kept (%s)", why ? why : "ok");
  git_index_free(&x);
  git_index_kept_done(&kept);
  s.buf = run.d;
  tap_ok(git_index_parse_each(run.d, run.n, 20, &x, &why, git_index_stat_smudge, &s) == 0 &&
             s.smudged == 1,
         "of the run's, only dir/b (another size) is smudged");
  git_index_free(&x);
  tap_ok(run.d[re[0] + 3] == 7 && run.d[re[2] + 3] == 7 && run.d[re[1] + 3] == 0 &&
             run.d[re[1] + 39] == 0 && run.d[re[1] + 11] == 0,
         "dir/a and dir/c keep their stat data, dir/b's ctime, mtime and size are 0");
  tap_ok(run.d[re[1] + 26] == 0x81 && run.d[re[1] + 27] == 0xa4, "dir/b keeps its mode");
  git_index_kept_free(&kept);
  /* the host's index as old as its entries' mtime: racily clean there, none kept */
  kept.index_mtime = 50;
  three(&host, he, 4);
  three(&run, re, 4);
  (void)git_index_parse_each(host.d, host.n, 20, &x, &why, git_index_kept_add, &kept);
  git_index_free(&x);
  git_index_kept_done(&kept);
  s.buf = run.d;
  s.smudged = 0;
  tap_ok(kept.n == 0 &&
             git_index_parse_each(run.d, run.n, 20, &x, &why, git_index_stat_smudge, &s) == 0 &&
             s.smudged == 3,
         "entries racily clean in the host's index are all smudged");
  git_index_free(&x);
  git_index_kept_free(&kept);
}

int main(void) {
  test_plain_and_gitlink();
  test_nul_in_name();
  test_paths();
  test_unsafe_entry();
  test_flags();
  test_v4();
  test_extensions();
  test_sha256();
  test_config();
  test_sha1();
  test_entries_only();
  test_eoie_tail();
  test_stat_kept();
  return tap_done();
}
