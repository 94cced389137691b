/* Shared by the libFuzzer targets: a parse that succeeds must serialise (pretty and compact),
 * re-parse and compare equal; a parse that fails must say why on one line. Any breach aborts, which
 * libFuzzer reports as a crash with the input that caused it. */
#ifndef FSRUN_FUZZ_COMMON_H
#define FSRUN_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci.h"

#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz check failed: %s: ", #cond);                                           \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

static inline void fuzz_check_error(int r, char *err) {
  if (r < 0) {
    FUZZ_CHECK(err != NULL, "a failed parse must set an error");
    FUZZ_CHECK(strchr(err, '\n') == NULL, "error must be one line: %s", err);
  } else {
    FUZZ_CHECK(err == NULL, "a successful parse must not leave an error: %s", err);
  }
  free(err);
}

/* Round trip for a document type T with parse/serialise/equal/free functions. */
#define FUZZ_ROUND_TRIP(T, obj, serialize_call, parse_fn, equal_fn, free_fn)                       \
  do {                                                                                             \
    char *serr_ = NULL, *perr_ = NULL;                                                             \
    char *text_ = serialize_call;                                                                  \
    FUZZ_CHECK(text_ != NULL, "serialising a parsed document failed: %s", serr_);                  \
    T *again_ = NULL;                                                                              \
    int r_ = parse_fn(text_, strlen(text_), "again", &again_, &perr_);                             \
    FUZZ_CHECK(r_ == 0, "re-parsing the serialisation failed: %s\n%s", perr_, text_);              \
    FUZZ_CHECK(equal_fn(obj, again_), "round trip changed the model:\n%s", text_);                 \
    free_fn(again_);                                                                               \
    free(text_);                                                                                   \
    free(serr_);                                                                                   \
    free(perr_);                                                                                   \
  } while (0)

#endif
