/* Errors are values: every fallible function returns 0 or a negative errno-style code and fills a
 * fsrun_error_t with the errno and a formatted message. Callers add context as the error climbs. */
#ifndef FSRUN_ERROR_H
#define FSRUN_ERROR_H

#include <stdarg.h>

struct fsrun_error_s {
  int status; /* errno value, 0 when there is none */
  char *msg;
};
typedef struct fsrun_error_s *fsrun_error_t;

/* Sets *err (freeing an older one) to "MSG: strerror(errno_value)" when errno_value != 0, or to
 * "MSG" otherwise. Returns -errno_value, or -1 when errno_value is 0. */
int fsrun_error_make(fsrun_error_t *err, int errno_value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same as fsrun_error_make(err, errno, ...): for use right after a failing libc call. */
#define fsrun_error_errno(err, ...) fsrun_error_make((err), errno, __VA_ARGS__)
/* Prefixes context: "CONTEXT: old message". Returns the error's code (as fsrun_error_make). */
int fsrun_error_wrap(fsrun_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Takes ownership of a malloc'd message from libocispec. Returns -1 (or -errno_value). */
int fsrun_error_take(fsrun_error_t *err, int errno_value, char *msg);
void fsrun_error_release(fsrun_error_t *err);
/* The code a failed call returns for this error: -status, or -1. */
int fsrun_error_code(const fsrun_error_t *err);

#define cleanup_error __attribute__((cleanup(fsrun_error_release)))

#endif
