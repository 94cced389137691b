/* Unit tests for log.c: where records go (log file, stderr), the JSON line format conmon parses,
 * levels, appending, and logging from a forked child. TAP output. */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "scratch.h"
#include "tap.h"
#include "utils.h"

static char tmpdir[] = "/tmp/fsrun-test-log.XXXXXX";

static char *slurp(const char *path) {
  cleanup_error fsrun_error_t err = NULL;
  char *text = NULL;
  if (read_file_at(AT_FDCWD, path, &text, NULL, &err) < 0)
    return xstrdup("");
  return text;
}

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* Runs fn with stderr redirected to a file; returns what it wrote. */
static char *capture_stderr(void (*fn)(void)) {
  cleanup_free char *path = xasprintf("%s/stderr", tmpdir);
  int saved = dup(STDERR_FILENO);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  dup2(fd, STDERR_FILENO);
  close(fd);
  fn();
  dup2(saved, STDERR_FILENO);
  close(saved);
  return slurp(path);
}

static void log_tricky_error(void) {
  fsrun_log_error("open \"a\\b\"\nline two\ttab\x01");
}

static void log_warning_and_debug(void) {
  log_warning("careful %d", 42);
  log_debug("hidden unless debug");
}

static void log_nothing(void) {
  log_info("info is below the default level");
}

/* a 10,000-byte list of the kind the tamper line holds, whole and cut */
static char *long_list(void) {
  char *list = xmalloc0(10001);
  memset(list, 'x', 10000);
  list[0] = '[', list[9999] = ']';
  return list;
}

static void log_long_whole(void) {
  cleanup_free char *list = long_list();
  fsrun_log_whole(LOG_LEVEL_WARNING, list);
}

static void log_long_cut(void) {
  cleanup_free char *list = long_list();
  log_warning("%s", list);
}

/* rfc3339_format_time against glibc's gmtime_r (which the runtime no longer calls: its first call
 * reads /etc/localtime) over the calendar's corners and a day's every hour. */
static void test_rfc3339(void) {
  static const time_t corners[] = {0,          -1,          951782400 /* 2000-02-29 */,
                                   951868799,  4107542400,  4107456000 /* 2100-02-28 */,
                                   1796428800, -2208988800, 253402300799};
  bool all_match = true;
  char got[64], want[64];
  for (size_t i = 0; i < sizeof(corners) / sizeof(corners[0]) + 24; i++) {
    struct timespec ts = {.tv_sec = i < sizeof(corners) / sizeof(corners[0])
                                        ? corners[i]
                                        : 1796428800 + 3600 * (time_t)(i - 9) + 61,
                          .tv_nsec = 7};
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)ts.tv_nsec);
    rfc3339_format_time(&ts, got, sizeof(got));
    if (strcmp(got, want) != 0) {
      tap_diag("rfc3339 %lld: %s, gmtime_r says %s", (long long)ts.tv_sec, got, want);
      all_match = false;
    }
  }
  tap_ok(all_match, "rfc3339_format_time agrees with gmtime_r (leap days, centuries, before 1970)");
}

int main(void) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *log_path = NULL;
  char *stderr_text, *log_text;
  int fd_flags;

  if (mkdtemp(tmpdir) == NULL)
    return 1;
  log_path = xasprintf("%s/log.json", tmpdir);
  test_rfc3339();

  tap_ok(fsrun_log_init(NULL, "xml", NULL, false, &err) < 0, "unknown format is refused");
  tap_contains(err ? err->msg : NULL, "xml", "the format error");
  tap_ok(fsrun_log_init(NULL, "json", "chatty", false, &err) < 0, "unknown level is refused");
  tap_ok(fsrun_log_init(log_path, "json", NULL, false, &err) == 0, "json log file opens");

  fd_flags = fcntl(fsrun_log_fd(), F_GETFD);
  tap_ok(fsrun_log_fd() >= 0 && (fd_flags & FD_CLOEXEC), "fsrun_log_fd is open and close-on-exec");
  tap_ok((fcntl(fsrun_log_fd(), F_GETFL) & O_APPEND) != 0, "the log file is opened O_APPEND");

  stderr_text = capture_stderr(log_tricky_error);
  tap_ok(strcmp(stderr_text, "fsrun: open \"a\\b\" line two\ttab\x01\n") == 0,
         "the error is one line on stderr, newlines flattened");
  free(stderr_text);
  log_text = slurp(log_path);
  tap_ok(strncmp(log_text,
                 "{\"level\":\"error\",\"msg\":\"open \\\"a\\\\b\\\"\\nline two\\ttab\\u0001\","
                 "\"time\":\"",
                 strlen("{\"level\":\"error\",\"msg\":\"open \\\"a\\\\b\\\"\\nline two\\ttab\\u0001"
                        "\",\"time\":\"")) == 0,
         "the JSON record escapes quotes, backslashes and control characters");
  tap_ok(strlen(log_text) > 4 && strcmp(log_text + strlen(log_text) - 4, "Z\"}\n") == 0,
         "the record ends with a UTC time and a newline");
  tap_diag("record: %s", log_text);
  free(log_text);

  /* warnings go to the file only; debug is filtered at the default level */
  stderr_text = capture_stderr(log_warning_and_debug);
  tap_ok(stderr_text[0] == '\0', "with a log file, a warning is not printed on stderr");
  free(stderr_text);
  log_text = slurp(log_path);
  tap_ok(count_lines(log_text) == 2, "two records: the error and the warning");
  tap_contains(log_text, "{\"level\":\"warning\",\"msg\":\"careful 42\"", "the warning record");
  tap_ok(strstr(log_text, "hidden unless debug") == NULL, "debug is not logged by default");
  free(log_text);

  /* re-opening appends; --debug enables debug records */
  tap_ok(fsrun_log_init(log_path, "json", NULL, true, &err) == 0, "re-open with --debug");
  tap_ok(fsrun_log_debug_enabled(), "debug is enabled");
  free(capture_stderr(log_warning_and_debug));
  log_text = slurp(log_path);
  tap_ok(count_lines(log_text) == 4, "re-opening appended (4 records)");
  tap_contains(log_text, "\"level\":\"debug\",\"msg\":\"hidden unless debug\"", "the debug record");
  free(log_text);

  /* a forked child logs through the inherited fd */
  {
    pid_t pid = fork();
    int status = -1;
    if (pid == 0) {
      fsrun_log(LOG_LEVEL_INFO, "from the child %d", 7);
      _exit(0);
    }
    waitpid(pid, &status, 0);
    log_text = slurp(log_path);
    tap_contains(log_text, "\"level\":\"info\",\"msg\":\"from the child 7\"", "the child's record");
    free(log_text);
  }

  /* a long message is cut but the record stays one valid line */
  {
    char *big = xmalloc0(10000);
    memset(big, '"', 9999);
    fsrun_log_init(log_path, "json", "info", false, &err);
    fsrun_log(LOG_LEVEL_INFO, "%s", big);
    free(big);
    log_text = slurp(log_path);
    tap_ok(count_lines(log_text) == 6, "a 10 kB message of quotes is one record");
    tap_ok(strcmp(log_text + strlen(log_text) - 4, "Z\"}\n") == 0, "and its record is complete");
    free(log_text);
  }

  /* text format */
  unlink(log_path);
  tap_ok(fsrun_log_init(log_path, "text", NULL, false, &err) == 0, "text log file opens");
  free(capture_stderr(log_tricky_error));
  log_text = slurp(log_path);
  tap_ok(count_lines(log_text) == 1 && strstr(log_text, "Z error: open \"a\\b\" line two") != NULL,
         "a text record is one timestamped line");
  tap_diag("record: %s", log_text);
  free(log_text);

  /* no log file: warnings go to stderr, info does not */
  tap_ok(fsrun_log_init(NULL, "text", NULL, false, &err) == 0, "back to stderr only");
  tap_ok(fsrun_log_fd() == -1, "no log fd");
  stderr_text = capture_stderr(log_warning_and_debug);
  tap_ok(strcmp(stderr_text, "fsrun: warning: careful 42\n") == 0, "a warning on stderr");
  free(stderr_text);
  stderr_text = capture_stderr(log_nothing);
  tap_ok(stderr_text[0] == '\0', "info is filtered at the default level");
  free(stderr_text);

  /* fsrun_log_whole: a list over LOG_MSG_MAX stays whole (a reader parses it); fsrun_log cuts */
  {
    cleanup_free char *list = long_list();
    cleanup_free char *want = xasprintf("fsrun: warning: %s\n", list);
    stderr_text = capture_stderr(log_long_whole);
    tap_ok(strcmp(stderr_text, want) == 0,
           "fsrun_log_whole: a 10,000-byte message is one whole line");
    free(stderr_text);
    stderr_text = capture_stderr(log_long_cut);
    tap_ok(strlen(stderr_text) < 2100 && count_lines(stderr_text) == 1,
           "log_warning cuts the same message at 2 KiB (the control)");
    free(stderr_text);
  }
  tap_ok(fsrun_log_init(log_path, "json", NULL, false, &err) == 0, "json log file again");
  free(capture_stderr(log_long_whole));
  log_text = slurp(log_path);
  tap_ok(strlen(log_text) > 10000 && strstr(log_text, "x]\",\"time\":\"") != NULL,
         "fsrun_log_whole: the JSON record holds the whole message");
  free(log_text);
  fsrun_log_init(NULL, "text", NULL, false, &err);

  scratch_remove(tmpdir);
  return tap_done();
}
