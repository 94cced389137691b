/* Unit tests for exec.c's pure parts: `exec --user UID[:GID]` and `--additional-gids` parsing is
 * exact (design invariant 7), checked by hand-picked cases and fuzzed against an independent
 * reference; and exec_build_process's overrides of config.json's process.
 * FSRUN_FUZZ_SEED / FSRUN_FUZZ_ROUNDS change the fuzzing (the seed is printed). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "tap.h"
#include "utils.h"

/* --- the reference: a different way to decide the same thing ------------------------------- */

/* 0 and *out, -EINVAL or -ERANGE, decided on the text alone: digits only, then compared as a
 * decimal string (leading zeros stripped) against the largest valid id. */
static int reference_id(const char *s, size_t len, uint32_t *out) {
  static const char max[] = "4294967294";
  size_t start = 0, digits;
  if (len == 0)
    return -EINVAL;
  for (size_t i = 0; i < len; i++)
    if (!(s[i] >= '0' && s[i] <= '9'))
      return -EINVAL;
  while (start + 1 < len && s[start] == '0')
    start++;
  digits = len - start;
  if (digits > 10 || (digits == 10 && strncmp(s + start, max, 10) > 0))
    return -ERANGE;
  *out = 0;
  for (size_t i = start; i < len; i++)
    *out = *out * 10 + (uint32_t)(s[i] - '0');
  return 0;
}

/* "UID" or "UID:GID": split on the first ':'; anything else is malformed. */
static int reference_user(const char *s, uint32_t *uid, uint32_t *gid, bool *has_gid) {
  const char *colon = strchr(s, ':');
  size_t len = strlen(s);
  if (colon == NULL) {
    *has_gid = false;
    return reference_id(s, len, uid) == 0 ? 0 : -1;
  }
  *has_gid = true;
  if (reference_id(s, (size_t)(colon - s), uid) < 0)
    return -1;
  return reference_id(colon + 1, len - (size_t)(colon - s) - 1, gid) == 0 ? 0 : -1;
}

/* --- hand-picked cases ---------------------------------------------------------------------- */

static void check_user(const char *text, uint32_t want_uid, bool want_has_gid, uint32_t want_gid) {
  cleanup_error fsrun_error_t err = NULL;
  uint32_t uid = 7, gid = 7;
  bool has_gid = !want_has_gid;
  int r = exec_parse_user(text, &uid, &gid, &has_gid, &err);
  tap_ok(r == 0 && uid == want_uid && has_gid == want_has_gid && (!want_has_gid || gid == want_gid),
         "--user `%s` = uid %" PRIu32 ", gid %" PRIu32 " %s (got r=%d uid=%" PRIu32 " gid=%" PRIu32
         " has_gid=%d)",
         text, want_uid, want_gid, want_has_gid ? "given" : "not given", r, uid, gid, has_gid);
}

static void check_user_rejected(const char *text, const char *shown) {
  cleanup_error fsrun_error_t err = NULL;
  uint32_t uid = 7, gid = 7;
  bool has_gid = false;
  int r = exec_parse_user(text, &uid, &gid, &has_gid, &err);
  tap_ok(r < 0 && uid == 7 && gid == 7,
         "--user `%s` is rejected and sets nothing (r=%d uid=%" PRIu32 ")", shown, r, uid);
  tap_ok(err != NULL && strstr(err->msg, "--user") != NULL && strstr(err->msg, "UID:GID") != NULL,
         "--user `%s`: the error names the option and the syntax (%s)", shown,
         err ? err->msg : "no error");
}

static void check_id(const char *text, int want_r, uint32_t want) {
  uint32_t got = 12345;
  int r = exec_parse_id(text, &got);
  if (want_r == 0)
    tap_ok(r == 0 && got == want, "id `%s` = %" PRIu32 " (got r=%d, %" PRIu32 ")", text, want, r,
           got);
  else
    tap_ok(r == want_r && got == 12345, "id `%s` is refused with %s (got r=%d)", text,
           want_r == -ERANGE ? "ERANGE" : "EINVAL", r);
}

static void hand_picked(void) {
  check_user("0", 0, false, 0);
  check_user("1000", 1000, false, 0);
  check_user("1000:1000", 1000, true, 1000);
  check_user("0:0", 0, true, 0);
  check_user("65534:65534", 65534, true, 65534);
  check_user("4294967294:4294967294", 4294967294u, true, 4294967294u);
  check_user("007:010", 7, true, 10);

  /* what runc's strconv.Atoi path accepts or wraps (4294967296 became uid 0 there) */
  check_user_rejected("4294967296", "4294967296");
  check_user_rejected("4294967295", "4294967295");
  check_user_rejected("18446744073709551616", "18446744073709551616");
  check_user_rejected("18446744073709551615", "18446744073709551615");
  check_user_rejected("99999999999999999999999999", "99999999999999999999999999");
  check_user_rejected("1:4294967296", "1:4294967296");
  check_user_rejected("+1", "+1");
  check_user_rejected("-1", "-1");
  check_user_rejected("-0", "-0");
  check_user_rejected(" 1", " 1");
  check_user_rejected("1 ", "1 ");
  check_user_rejected("1\n", "1\\n");
  check_user_rejected("\t1", "\\t1");
  check_user_rejected("", "");
  check_user_rejected(":", ":");
  check_user_rejected("1:", "1:");
  check_user_rejected(":1", ":1");
  check_user_rejected("1:2:3", "1:2:3");
  check_user_rejected("1::2", "1::2");
  check_user_rejected("0x10", "0x10");
  check_user_rejected("1e3", "1e3");
  check_user_rejected("1.0", "1.0");
  check_user_rejected("root", "root");
  check_user_rejected("root:root", "root:root");
  check_user_rejected("1000:users", "1000:users");
  check_user_rejected("\xef\xbc\x91", "fullwidth 1");
  check_user_rejected("\xd9\xa1", "arabic-indic 1");

  check_id("0", 0, 0);
  check_id("4294967294", 0, 4294967294u);
  check_id("0004294967294", 0, 4294967294u);
  check_id("4294967295", -ERANGE, 0);
  check_id("10000000000", -ERANGE, 0);
  check_id("", -EINVAL, 0);
  check_id("12a", -EINVAL, 0);
  check_id("99999999999999999999x", -EINVAL, 0);
  {
    uint32_t v = 1;
    tap_ok(exec_parse_id(NULL, &v) == -EINVAL && v == 1, "id NULL is refused");
  }
}

/* --- fuzzing --------------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng(void) {
  /* xorshift64*: reproducible from the printed seed */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

static char random_char(void) {
  static const char others[] = ":: +-x.eE\t\n/aZ\x7f\xff\xc2";
  uint64_t r = rng() % 100;
  if (r < 70)
    return (char)('0' + rng() % 10);
  if (r < 76)
    return '0';
  if (r < 86)
    return ':';
  if (r < 98)
    return others[rng() % (sizeof(others) - 1)];
  return (char)(1 + rng() % 255);
}

static void fuzz(void) {
  const char *seed_env = getenv("FSRUN_FUZZ_SEED");
  const char *rounds_env = getenv("FSRUN_FUZZ_ROUNDS");
  uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 0x5eed0f0123456789ULL;
  long rounds = rounds_env ? strtol(rounds_env, NULL, 10) : 300000;
  long mismatches = 0, accepted = 0, rejected = 0;
  char first_bad[64] = "";

  rng_state = seed ? seed : 1;
  tap_diag("fuzz seed 0x%016" PRIx64 ", %ld rounds", seed, rounds);
  for (long i = 0; i < rounds; i++) {
    char text[32];
    size_t len = (size_t)(rng() % 24);
    uint32_t uid = 0, gid = 0, ref_uid = 0, ref_gid = 0;
    bool has_gid = false, ref_has_gid = false;
    cleanup_error fsrun_error_t err = NULL;
    int r, ref;

    for (size_t k = 0; k < len; k++)
      text[k] = random_char();
    text[len] = '\0'; /* an embedded NUL only shortens the string: both see the same text */
    r = exec_parse_user(text, &uid, &gid, &has_gid, &err);
    ref = reference_user(text, &ref_uid, &ref_gid, &ref_has_gid);
    if ((r == 0) != (ref == 0) ||
        (r == 0 && (uid != ref_uid || has_gid != ref_has_gid || (has_gid && gid != ref_gid))) ||
        (r < 0 && err == NULL)) {
      if (mismatches++ == 0)
        snprintf(first_bad, sizeof(first_bad), "%s", text);
    }
    if (r == 0)
      accepted++;
    else
      rejected++;
  }
  tap_ok(mismatches == 0,
         "fuzz: exec_parse_user agrees with the reference on %ld inputs (%ld "
         "mismatches, first `%s`)",
         rounds, mismatches, first_bad);
  /* the fuzzer must exercise both sides to mean anything */
  tap_ok(accepted > rounds / 20 && rejected > rounds / 20,
         "fuzz: both valid (%ld) and invalid (%ld) inputs were generated", accepted, rejected);

  /* round trip: every valid id prints and parses back to itself */
  mismatches = 0;
  for (long i = 0; i < rounds / 3; i++) {
    uint32_t want_uid = (uint32_t)(rng() % 4294967295ULL),
             want_gid = (uint32_t)(rng() % 4294967295ULL);
    uint32_t uid = 0, gid = 0;
    bool has_gid = false;
    char text[32];
    cleanup_error fsrun_error_t err = NULL;
    if (i % 2)
      snprintf(text, sizeof(text), "%" PRIu32 ":%" PRIu32, want_uid, want_gid);
    else
      snprintf(text, sizeof(text), "%" PRIu32, want_uid);
    if (exec_parse_user(text, &uid, &gid, &has_gid, &err) < 0 || uid != want_uid ||
        has_gid != (i % 2 == 1) || (has_gid && gid != want_gid))
      mismatches++;
  }
  tap_ok(mismatches == 0, "fuzz: %ld printed uid[:gid] pairs parse back exactly (%ld mismatches)",
         rounds / 3, mismatches);
}

/* --- exec_build_process ---------------------------------------------------------------------- */

static oci_process *base_process(void) {
  static const char json[] =
      "{\"args\": [\"sleep\", \"100\"], \"cwd\": \"/srv\", \"terminal\": true,"
      " \"env\": [\"PATH=/bin\", \"FOO=old\"],"
      " \"user\": {\"uid\": 5, \"gid\": 6, \"additionalGids\": [7]},"
      " \"capabilities\": {\"bounding\": [\"CAP_KILL\"], \"effective\": [\"CAP_KILL\"],"
      " \"permitted\": [\"CAP_KILL\"]}}";
  oci_process *p = NULL;
  char *msg = NULL;
  if (oci_process_parse(json, strlen(json), "base", &p, &msg) < 0) {
    tap_diag("base process: %s", msg);
    free(msg);
    abort();
  }
  return p;
}

static bool strv_has(const oci_strv *v, const char *s) {
  for (size_t i = 0; i < v->len; i++)
    if (strcmp(v->items[i], s) == 0)
      return true;
  return false;
}

static void build_process_cases(void) {
  {
    char *args[] = {"id", "-u"};
    char *env[] = {"FOO=new", "BAR=1"};
    char *gids[] = {"20", "30"};
    char *caps[] = {"CAP_NET_RAW"};
    struct exec_options o = {.args = args,
                             .n_args = 2,
                             .env = env,
                             .n_env = 2,
                             .user = "1000",
                             .additional_gids = gids,
                             .n_additional_gids = 2,
                             .caps = caps,
                             .n_caps = 1,
                             .cwd = "/tmp",
                             .no_new_privs = true};
    oci_process *p = base_process();
    cleanup_error fsrun_error_t err = NULL;
    int r = exec_build_process(&p, &o, &err);
    tap_ok(r == 0, "build: config process + flags (%s)", err ? err->msg : "ok");
    tap_ok(p->args.len == 2 && strcmp(p->args.items[0], "id") == 0 && p->args.items[2] == NULL,
           "build: COMMAND replaces the args (NULL-terminated)");
    tap_ok(!p->terminal, "build: config.json's terminal is the init's, not exec's");
    tap_ok(strcmp(p->cwd, "/tmp") == 0, "build: --cwd");
    tap_ok(strv_has(&p->env, "FOO=new") && !strv_has(&p->env, "FOO=old") &&
               strv_has(&p->env, "BAR=1") && strv_has(&p->env, "PATH=/bin") && p->env.len == 3,
           "build: --env replaces FOO, appends BAR, keeps PATH");
    tap_ok(p->user.uid == 1000 && p->user.gid == 6, "build: --user UID keeps the config's gid");
    tap_ok(p->user.n_additional_gids == 3 && p->user.additional_gids[0] == 7 &&
               p->user.additional_gids[2] == 30,
           "build: --additional-gids are appended");
    tap_ok(strv_has(&p->capabilities->bounding, "CAP_NET_RAW") &&
               strv_has(&p->capabilities->effective, "CAP_NET_RAW") &&
               strv_has(&p->capabilities->permitted, "CAP_NET_RAW") &&
               !strv_has(&p->capabilities->ambient, "CAP_NET_RAW"),
           "build: --cap adds to bounding/effective/permitted, not ambient without inheritable");
    tap_ok(p->no_new_privileges, "build: --no-new-privs");
    oci_process_free(p);
  }
  {
    char *args[] = {"sh"};
    struct exec_options o = {.args = args, .n_args = 1, .tty = true, .user = "1:2"};
    oci_process *p = NULL;
    cleanup_error fsrun_error_t err = NULL;
    int r = exec_build_process(&p, &o, &err);
    tap_ok(r == 0 && p->terminal && strcmp(p->cwd, "/") == 0 && p->user.uid == 1 &&
               p->user.gid == 2,
           "build: without a base process: --tty, cwd /, --user UID:GID");
    oci_process_free(p);
  }
  {
    static const struct {
      const char *what, *user, *env, *cap, *cwd, *gid, *want;
      size_t n_args;
    } bad[] = {
        {"no command", NULL, NULL, NULL, NULL, NULL, "no command", 0},
        {"bad user", "1000:", NULL, NULL, NULL, NULL, "--user", 1},
        {"env without =", NULL, "FOO", NULL, NULL, NULL, "--env", 1},
        {"env without key", NULL, "=x", NULL, NULL, NULL, "--env", 1},
        {"unknown cap", NULL, NULL, "CAP_NOPE", NULL, NULL, "--cap", 1},
        {"cap without CAP_", NULL, NULL, "kill", NULL, NULL, "--cap", 1},
        {"relative cwd", NULL, NULL, NULL, "tmp", NULL, "absolute", 1},
        {"negative gid", NULL, NULL, NULL, NULL, "-5", "--additional-gids", 1},
        {"huge gid", NULL, NULL, NULL, NULL, "4294967296", "--additional-gids", 1},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      char *args[] = {"true"};
      char *env[] = {(char *)bad[i].env};
      char *caps[] = {(char *)bad[i].cap};
      char *gids[] = {(char *)bad[i].gid};
      struct exec_options o = {.args = args,
                               .n_args = bad[i].n_args,
                               .user = bad[i].user,
                               .env = env,
                               .n_env = bad[i].env ? 1 : 0,
                               .caps = caps,
                               .n_caps = bad[i].cap ? 1 : 0,
                               .cwd = bad[i].cwd,
                               .additional_gids = gids,
                               .n_additional_gids = bad[i].gid ? 1 : 0};
      oci_process *p = base_process();
      cleanup_error fsrun_error_t err = NULL;
      int r = exec_build_process(&p, &o, &err);
      tap_ok(r < 0 && err != NULL && strstr(err->msg, bad[i].want) != NULL,
             "build: %s is refused naming `%s` (%s)", bad[i].what, bad[i].want,
             err ? err->msg : "accepted");
      oci_process_free(p);
    }
  }
  {
    char *args[] = {"true"};
    struct exec_options o = {.args = args, .n_args = 1, .process_path = "/nonexistent/p.json"};
    oci_process *p = base_process();
    cleanup_error fsrun_error_t err = NULL;
    int r = exec_build_process(&p, &o, &err);
    tap_ok(r < 0 && err != NULL && strstr(err->msg, "not both") != NULL,
           "build: --process and a COMMAND together are refused (%s)", err ? err->msg : "accepted");
    oci_process_free(p);
  }
}

int main(void) {
  hand_picked();
  fuzz();
  build_process_cases();
  return tap_done();
}
