/* A tiny TAP producer for the C unit tests: `tap_ok(cond, "what")`, then `return tap_done();`.
 * The plan ("1..N") is printed at the end, which the automake TAP driver accepts. */
#ifndef FSRUN_TAP_H
#define FSRUN_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failures;

__attribute__((format(printf, 2, 3), unused)) static bool tap_ok(bool cond, const char *fmt, ...) {
  va_list ap;
  tap_count++;
  printf("%sok %d - ", cond ? "" : "not ", tap_count);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (!cond)
    tap_failures++;
  fflush(stdout);
  return cond;
}

/* A test that cannot run here: counted, and named with the reason. */
__attribute__((unused)) static void tap_skip(const char *why) {
  tap_count++;
  printf("ok %d # SKIP %s\n", tap_count, why);
  fflush(stdout);
}

/* A comment line; shown by the driver, ignored for pass/fail. */
__attribute__((format(printf, 1, 2), unused)) static void tap_diag(const char *fmt, ...) {
  va_list ap;
  printf("# ");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

/* Passes when s is non-NULL and contains want; prints what it got otherwise. */
__attribute__((unused)) static bool tap_contains(const char *s, const char *want,
                                                 const char *what) {
  bool good = s != NULL && want != NULL && strstr(s, want) != NULL;
  tap_ok(good, "%s: contains `%s`", what, want);
  if (!good)
    tap_diag("  got: %s", s ? s : "(null)");
  return good;
}

__attribute__((unused)) static int tap_done(void) {
  printf("1..%d\n", tap_count);
  fflush(stdout);
  return tap_failures == 0 ? 0 : 1;
}

#endif
