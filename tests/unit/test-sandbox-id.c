/* sandbox-id.c: the container id of a sandbox run names its (task, run) pair and no other. */
#include <stdlib.h>
#include <string.h>

#include "sandbox-id.h"
#include "tap.h"

static bool stem_is(const char *task, const char *run, const char *want) {
  char *got = sandbox_id_stem(task, run);
  bool same = strcmp(got, want) == 0;
  tap_ok(same, "stem of (%s, %s) is %s", task ? task : "NULL", run ? run : "NULL", want);
  if (!same)
    tap_diag("  got: %s", got);
  free(got);
  return same;
}

static char *repeat(char c, size_t n) {
  char *s = malloc(n + 1);
  memset(s, c, n);
  s[n] = '\0';
  return s;
}

int main(void) {
  char *long_a = repeat('a', 200), *long_b = repeat('a', 201);
  char *sa, *sb, *id;

  /* review19 #9: these two pairs made the same prefix `sandbox-a-b-c-1-` */
  stem_is("a", "b-c-1", "sandbox-a__b-c-1");
  stem_is("a-b", "c-1", "sandbox-a-b__c-1");
  stem_is("a_", "b", "sandbox-a_5f__b");
  stem_is("a", "_5fb", "sandbox-a___5f5fb");
  stem_is("t/é", "1", "sandbox-t_2f_c3_a9__1");
  stem_is(NULL, "r", "sandbox-__r");

  id = sandbox_container_id(NULL, "", 0x1234abcd);
  tap_ok(strcmp(id, "sandbox-1234abcd") == 0, "without ids: sandbox-RANDOM (%s)", id);
  free(id);
  id = sandbox_container_id("a", "b-c-1", 0x1234abcd);
  tap_ok(strcmp(id, "sandbox-a__b-c-1__1234abcd") == 0, "the id is the stem, `__`, 8 hex digits");
  free(id);

  /* past SANDBOX_ID_PARTS_MAX: a digest of both parts, still different for different pairs */
  sa = sandbox_id_stem(long_a, "1");
  sb = sandbox_id_stem(long_b, "1");
  tap_ok(strcmp(sa, sb) != 0, "two long task ids that differ past the cut have different stems");
  tap_ok(strlen(sa) == strlen("sandbox-") + SANDBOX_ID_DIGEST_TASK + 2 + 32,
         "a long stem is `sandbox-`, 64 bytes of the task, `_h` and 32 hex digits");
  tap_ok(strstr(sa, "_h") != NULL && strstr(sa, "__") == NULL, "a long stem has `_h`, no `__`");
  free(sa);
  free(sb);
  /* a cut that would split `_2f` ends before it: no `_` before `_h` */
  memcpy(long_a + 63, "/", 1); /* encoded `_2f` at bytes 63..65 of the task */
  sa = sandbox_id_stem(long_a, "1");
  tap_ok(strstr(sa, "__") == NULL && strstr(sa, "a_h") != NULL, "the cut splits no `_HH`: %s", sa);
  free(sa);
  free(long_a);
  free(long_b);
  return tap_done();
}
