/* Logging: stderr and --log FILE, as text or runc-style JSON lines that conmon reads:
 * {"level":"error","msg":"...","time":"2026-11-29T19:35:41.123456789Z"} */
#ifndef FSRUN_LOG_H
#define FSRUN_LOG_H

#include <stdbool.h>

#include "error.h"

typedef enum {
  LOG_LEVEL_ERROR = 0,
  LOG_LEVEL_WARNING,
  LOG_LEVEL_INFO,
  LOG_LEVEL_DEBUG
} fsrun_log_level;

/* path may be NULL (stderr only; closes a log file opened before); format "text" or "json"; level
 * "error", "warning" (default), "info" or "debug", NULL for the default; debug forces "debug".
 * An error for an unknown format/level or a log file that cannot be opened (O_APPEND|O_CLOEXEC).
 * Where records go: with a log file, every record goes there and errors also go to stderr (as
 * "fsrun: MSG", once); without one, records go to stderr ("fsrun: warning: MSG" for warnings).
 * Every record is one write(2) from stack buffers (no malloc of its own, messages longer than 2 KiB
 * are cut), so a forked child may log before exec; fsrun_log_whole is the exception. */
int fsrun_log_init(const char *path, const char *format, const char *level, bool debug,
                   fsrun_error_t *err);
void fsrun_log(fsrun_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_debug(...)   fsrun_log(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...)    fsrun_log(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warning(...) fsrun_log(LOG_LEVEL_WARNING, __VA_ARGS__)
/* fsrun_log of msg as it is, never cut (its buffers on the heap): for a list a reader parses
 * whole, such as sandbox's and exec's tamper line. Not for a forked child before exec. */
void fsrun_log_whole(fsrun_log_level level, const char *msg);
/* The final error of a command: "fsrun: MSG" on stderr (text) and an error line in the log file. */
void fsrun_log_error(const char *msg);
bool fsrun_log_debug_enabled(void);
/* fd of the log file (for the child to write errors before exec), or -1 */
int fsrun_log_fd(void);
/* Where "stderr" records go from now on: fd (a dup of the real stderr while `sandbox --json`
 * points fd 2 at the command's capture), or fd 2 again for -1. */
void fsrun_log_to_stderr_fd(int fd);

#endif
