/* Logging to stderr and to --log FILE, as text or as runc-style JSON lines (conmon and containerd
 * read the last {"level":"error","msg":...} line).
 *
 * Every record is formatted into stack buffers and written with a single write(2), without malloc
 * or stdio, so that a forked child can log between fork and exec and lines from several processes
 * appending to the same file never interleave. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "caller-output.h"
#include "utils.h"

/* Small enough for the stack of a cloned child; longer messages are truncated. */
#define LOG_MSG_MAX  2048
#define LOG_LINE_MAX (LOG_MSG_MAX * 2 + 256) /* room for escapes; a pathological message is cut */

static int log_fd = -1;
static int stderr_fd = STDERR_FILENO; /* fsrun_log_to_stderr_fd */
static bool log_json;
static bool log_fd_is_stderr; /* --log names our stderr: do not print errors twice */
static fsrun_log_level log_level = LOG_LEVEL_WARNING;

static const char *const level_names[] = {
    [LOG_LEVEL_ERROR] = "error",
    [LOG_LEVEL_WARNING] = "warning",
    [LOG_LEVEL_INFO] = "info",
    [LOG_LEVEL_DEBUG] = "debug",
};

static int parse_level(const char *name, fsrun_log_level *out) {
  for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
    if (strcmp(name, level_names[i]) == 0) {
      *out = (fsrun_log_level)i;
      return 0;
    }
  }
  if (strcmp(name, "warn") == 0) { /* logrus spelling, accepted for runc compatibility */
    *out = LOG_LEVEL_WARNING;
    return 0;
  }
  return -1;
}

static bool same_file(int a, int b) {
  struct stat sa, sb;
  if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int fsrun_log_init(const char *path, const char *format, const char *level, bool debug,
                   fsrun_error_t *err) {
  fsrun_log_level parsed_level = LOG_LEVEL_WARNING;
  int fd = -1;
  bool json;

  if (format == NULL || strcmp(format, "text") == 0)
    json = false;
  else if (strcmp(format, "json") == 0)
    json = true;
  else
    return fsrun_error_make(err, 0, "unknown log format `%s` (expected text or json)", format);
  if (level != NULL && parse_level(level, &parsed_level) < 0)
    return fsrun_error_make(
        err, 0, "unknown log level `%s` (expected error, warning, info or debug)", level);
  if (debug)
    parsed_level = LOG_LEVEL_DEBUG;

  if (path != NULL && path[0] != '\0') {
    fd = caller_log_open(path, err);
    if (fd < 0)
      return fsrun_error_code(err);
  }
  if (log_fd >= 0)
    close(log_fd);
  log_fd = fd;
  log_fd_is_stderr = fd >= 0 && same_file(fd, STDERR_FILENO);
  log_json = json;
  log_level = parsed_level;
  return 0;
}

bool fsrun_log_debug_enabled(void) {
  return log_level >= LOG_LEVEL_DEBUG;
}

int fsrun_log_fd(void) {
  return log_fd;
}

/* Appends src to dst[*pos..cap) as the inside of a JSON string; truncates rather than overflow. */
static void append_json_escaped(char *dst, size_t cap, size_t *pos, const char *src) {
  static const char hex[] = "0123456789abcdef";
  for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
    char esc[7];
    size_t n = 0;
    switch (*s) {
    case '"':
      esc[n++] = '\\', esc[n++] = '"';
      break;
    case '\\':
      esc[n++] = '\\', esc[n++] = '\\';
      break;
    case '\n':
      esc[n++] = '\\', esc[n++] = 'n';
      break;
    case '\r':
      esc[n++] = '\\', esc[n++] = 'r';
      break;
    case '\t':
      esc[n++] = '\\', esc[n++] = 't';
      break;
    default:
      if (*s < 0x20 || *s == 0x7f) {
        esc[n++] = '\\', esc[n++] = 'u', esc[n++] = '0', esc[n++] = '0';
        esc[n++] = hex[*s >> 4], esc[n++] = hex[*s & 0xf];
      } else {
        esc[n++] = (char)*s;
      }
    }
    if (*pos + n >= cap)
      return;
    memcpy(dst + *pos, esc, n);
    *pos += n;
  }
}

static void append_str(char *dst, size_t cap, size_t *pos, const char *src) {
  size_t n = strlen(src);
  if (*pos + 1 >= cap)
    return;
  if (*pos + n >= cap)
    n = cap - *pos - 1;
  memcpy(dst + *pos, src, n);
  *pos += n;
}

/* Like append_str, with line breaks turned into spaces: one record, one line. */
static void append_one_line(char *dst, size_t cap, size_t *pos, const char *src) {
  for (; *src && *pos + 1 < cap; src++)
    dst[(*pos)++] = (*src == '\n' || *src == '\r') ? ' ' : *src;
}

/* One record in the configured format, newline-terminated, into line. Returns its length. */
static size_t format_record(char *line, size_t cap, fsrun_log_level level, const char *msg) {
  char now[64];
  size_t pos = 0;
  rfc3339_format(now, sizeof(now));
  if (log_json) {
    append_str(line, cap, &pos, "{\"level\":\"");
    append_str(line, cap, &pos, level_names[level]);
    append_str(line, cap, &pos, "\",\"msg\":\"");
    /* keep room for the fields after msg, so that a cut message still gives valid JSON */
    append_json_escaped(line, cap - 128, &pos, msg);
    append_str(line, cap, &pos, "\",\"time\":\"");
    append_str(line, cap, &pos, now);
    append_str(line, cap, &pos, "\"}");
  } else {
    append_str(line, cap, &pos, now);
    append_str(line, cap, &pos, " ");
    append_str(line, cap, &pos, level_names[level]);
    append_str(line, cap, &pos, ": ");
    append_one_line(line, cap, &pos, msg);
  }
  line[pos++] = '\n';
  return pos;
}

/* "fsrun: MSG" (errors) or "fsrun: LEVEL: MSG" on stderr, with embedded newlines flattened so that
 * a message is always exactly one line; built in line[cap]. */
static void write_stderr_line(fsrun_log_level level, const char *msg, char *line, size_t cap) {
  size_t pos = 0;
  append_str(line, cap, &pos, "fsrun: ");
  if (level != LOG_LEVEL_ERROR) {
    append_str(line, cap, &pos, level_names[level]);
    append_str(line, cap, &pos, ": ");
  }
  append_one_line(line, cap, &pos, msg);
  line[pos++] = '\n';
  (void)safe_write_all(stderr_fd, line, pos);
}

void fsrun_log_to_stderr_fd(int fd) {
  stderr_fd = fd >= 0 ? fd : STDERR_FILENO;
}

/* msg's record, built in line[cap] (room for msg escaped, or it is cut) */
static void log_message_in(fsrun_log_level level, const char *msg, char *line, size_t cap) {
  int saved_errno = errno;
  if (log_fd >= 0) {
    size_t len = format_record(line, cap, level, msg);
    (void)safe_write_all(log_fd, line, len);
  }
  /* Errors always reach stderr; other levels only when there is no log file to hold them. */
  if (log_fd < 0 || (level == LOG_LEVEL_ERROR && !log_fd_is_stderr))
    write_stderr_line(level, msg, line, cap);
  errno = saved_errno;
}

static void log_message(fsrun_log_level level, const char *msg) {
  char line[LOG_LINE_MAX];
  log_message_in(level, msg, line, sizeof(line));
}

void fsrun_log_whole(fsrun_log_level level, const char *msg) {
  /* a JSON escape is at most 6 bytes (\u00XX) */
  size_t cap = strlen(msg) * 6 + 256;
  cleanup_free char *line = NULL;
  if (level > log_level)
    return;
  line = malloc(cap);
  if (line == NULL) {
    log_message(level, msg); /* cut, as any record */
    return;
  }
  log_message_in(level, msg, line, cap);
}

void fsrun_log(fsrun_log_level level, const char *fmt, ...) {
  char msg[LOG_MSG_MAX];
  va_list ap;
  if (level > log_level)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  log_message(level, msg);
}

void fsrun_log_error(const char *msg) {
  log_message(LOG_LEVEL_ERROR, msg ? msg : "unknown error");
}
