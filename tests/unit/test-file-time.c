/* file-time.c: a cutoff taken now is after every file time set so far; once file_time_wait_floor
 * has returned, a file changed has a time not before it; a clock that never reaches the cutoff (as
 * one set back) lowers it to the coarse clock instead of waiting on; the text form the container's
 * init reports a lowered cutoff in reads back exactly, and nothing else reads as a time. Content
 * only: no assertion on how long anything took. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-time.h"
#include "tap.h"

/* the ctime of dir/name, made now (a directory) */
static bool make_and_stat(const char *dir, const char *name, struct timespec *ctime) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (mkdir(path, 0755) < 0 || stat(path, &st) < 0)
    return false;
  *ctime = st.st_ctim;
  return true;
}

static void test_floor(const char *dir) {
  struct timespec cutoff, before, after;
  bool made = make_and_stat(dir, "before", &before);
  int r;
  file_time_after_now(&cutoff);
  r = file_time_wait_floor(&cutoff, FILE_TIME_WAIT_MAX_MS);
  made = made && make_and_stat(dir, "after", &after);
  tap_ok(made && r == 0, "the coarse clock reaches a cutoff taken now (%d)", r);
  tap_ok(made && file_time_before(&before, &cutoff),
         "a directory made before the cutoff has a time before it");
  tap_ok(made && !file_time_before(&after, &cutoff),
         "a directory made once the wait has returned has a time not before the cutoff");
}

static void test_never_reached(void) {
  struct timespec cutoff, coarse;
  int r;
  clock_gettime(CLOCK_REALTIME, &cutoff);
  cutoff.tv_sec += 3600; /* as for a clock set back an hour after the cutoff was taken */
  r = file_time_wait_floor(&cutoff, 10);
  clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
  tap_ok(r == -ETIMEDOUT && cutoff.tv_sec > 0 && !file_time_before(&coarse, &cutoff),
         "a cutoff the clock does not reach becomes the coarse clock (%d, %lld)", r,
         (long long)cutoff.tv_sec);
}

static void test_text(void) {
  static const char *const bad[] = {"", "1", "1 1000000000", "-1 0", "1 -1", "1 2 3", "1 2x", "x"};
  char buf[FILE_TIME_TEXT_MAX];
  struct timespec t = {.tv_sec = 1796583609, .tv_nsec = 999999999}, back = {0};
  bool none = true;
  file_time_format(buf, sizeof(buf), &t);
  tap_ok(file_time_parse(buf, &back) && back.tv_sec == t.tv_sec && back.tv_nsec == t.tv_nsec,
         "a time reads back as it was written (`%s`)", buf);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    if (file_time_parse(bad[i], &back)) {
      tap_diag("`%s` read as a time", bad[i]);
      none = false;
    }
  tap_ok(none && !file_time_parse(NULL, &back), "what is not `SEC NSEC` is no time");
}

int main(void) {
  char dir[] = "/tmp/fsrun-test-file-time.XXXXXX";
  char path[sizeof(dir) + 16];
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_floor(dir);
  test_never_reached();
  test_text();
  snprintf(path, sizeof(path), "%s/before", dir);
  rmdir(path);
  snprintf(path, sizeof(path), "%s/after", dir);
  rmdir(path);
  rmdir(dir);
  return tap_done();
}
