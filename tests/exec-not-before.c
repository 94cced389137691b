/* Runs a bundle as `fsrun run` does, with container_create_opts.exec_not_before set: the test that
 * the container's init waits for file times to reach it before the process exists (fsrun
 * sandbox's tamper cutoff; no option of the CLI sets it):
 *
 *   exec-not-before STATE_ROOT BUNDLE ID MS
 *
 * The time is MS ms from now (CLOCK_REALTIME), far past the set-up, so that an init that does not
 * wait execs the process before it. Prints it, as the run left it, "SEC NSEC" (a clock set back
 * lowers it), and exits with the process's status; 125 when the run failed (said on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "container.h"
#include "file-time.h"
#include "log.h"

int main(int argc, char **argv) {
  struct fsrun_context ctx = {.log_format = "text", .rootless = ROOTLESS_AUTO, .state_root_fd = -1};
  struct timespec not_before;
  struct container_run_opts o = {0};
  fsrun_error_t err = NULL;
  char text[FILE_TIME_TEXT_MAX];
  long ms;
  int status = -1;

  if (argc != 5 || (ms = strtol(argv[4], NULL, 10)) <= 0 || ms >= 1000) {
    fprintf(stderr, "usage: exec-not-before STATE_ROOT BUNDLE ID MS (0 < MS < 1000)\n");
    return 125;
  }
  if (fsrun_log_init(NULL, "text", NULL, false, &err) < 0)
    return 125;
  ctx.state_root = argv[1];
  clock_gettime(CLOCK_REALTIME, &not_before);
  not_before.tv_nsec += ms * 1000000;
  if (not_before.tv_nsec >= 1000000000) {
    not_before.tv_sec++;
    not_before.tv_nsec -= 1000000000;
  }
  o.create.bundle = argv[2];
  o.create.id = argv[3];
  o.create.exec_not_before = &not_before;
  if (container_run(&ctx, &o, &status, &err) < 0) {
    fprintf(stderr, "exec-not-before: %s\n", err->msg);
    fsrun_error_release(&err);
    return 125;
  }
  file_time_format(text, sizeof(text), &not_before);
  printf("%s\n", text);
  return status;
}
