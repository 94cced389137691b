#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fsrun_error_release(fsrun_error_t *err) {
  if (err == NULL || *err == NULL)
    return;
  free((*err)->msg);
  free(*err);
  *err = NULL;
}

int fsrun_error_code(const fsrun_error_t *err) {
  if (err == NULL || *err == NULL || (*err)->status == 0)
    return -1;
  return -(*err)->status;
}

int fsrun_error_take(fsrun_error_t *err, int errno_value, char *msg) {
  if (err == NULL) {
    free(msg);
    return errno_value ? -errno_value : -1;
  }
  fsrun_error_release(err);
  *err = calloc(1, sizeof(**err));
  if (*err == NULL) {
    free(msg);
    return -ENOMEM;
  }
  (*err)->status = errno_value;
  (*err)->msg = msg ? msg : strdup("out of memory");
  return errno_value ? -errno_value : -1;
}

int fsrun_error_make(fsrun_error_t *err, int errno_value, const char *fmt, ...) {
  char *base = NULL, *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&base, fmt, ap) < 0)
    base = NULL;
  va_end(ap);
  if (base != NULL && errno_value != 0) {
    /* strerrordesc_np: the same English text without strerror's trip through gettext, which
     * the errors the runtime makes and then discards (a masked path that does not exist) pay */
    const char *desc = strerrordesc_np(errno_value);
    if (asprintf(&msg, "%s: %s", base, desc ? desc : strerror(errno_value)) < 0)
      msg = NULL;
    free(base);
  } else {
    msg = base;
  }
  return fsrun_error_take(err, errno_value, msg);
}

int fsrun_error_wrap(fsrun_error_t *err, const char *fmt, ...) {
  char *ctx = NULL, *msg = NULL;
  va_list ap;
  if (err == NULL || *err == NULL)
    return -1;
  va_start(ap, fmt);
  if (vasprintf(&ctx, fmt, ap) < 0)
    ctx = NULL;
  va_end(ap);
  if (ctx != NULL && asprintf(&msg, "%s: %s", ctx, (*err)->msg) >= 0) {
    free((*err)->msg);
    (*err)->msg = msg;
  }
  free(ctx);
  return fsrun_error_code(err);
}
