/* timeit CMD [ARGS...]: runs CMD once with stdout and stderr on /dev/null and prints
 * "WALL_MS CPU_MS EXIT MAXRSS_KB" — the wall time from spawn to reap, the user + system time of CMD
 * and of every descendant it waited for (for a runtime: its container init and the process), and
 * the largest resident set of CMD and those descendants.
 * A shell's `time` adds the shell's own fork to every sample; this measures only the command.
 * TIMEIT_DESCENDANTS=1: CPU time of every descendant, also those CMD left to exit on their own
 * (timeit is their subreaper and reaps them all after CMD): bwrap 0.8's outer process exits
 * without reaping its sandbox's pid 1, whose time (and the command's) a plain wait4 never sees.
 * Only for commands that leave nothing running (a created container would be waited for). */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double ms(struct timeval tv) {
  return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

int main(int argc, char **argv) {
  posix_spawn_file_actions_t fa;
  struct timespec t0, t1;
  struct rusage ru;
  int status;
  pid_t pid;
  double cpu;
  long maxrss;

  if (argc < 2) {
    fprintf(stderr, "usage: timeit CMD [ARGS...]\n");
    return 2;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  if (getenv("TIMEIT_DESCENDANTS") != NULL && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
    perror("timeit: PR_SET_CHILD_SUBREAPER");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (posix_spawnp(&pid, argv[1], &fa, NULL, argv + 1, environ) != 0) {
    perror("timeit: spawn");
    return 2;
  }
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("timeit: wait4");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  cpu = ms(ru.ru_utime) + ms(ru.ru_stime);
  maxrss = ru.ru_maxrss;
  /* the orphans CMD left (none unless TIMEIT_DESCENDANTS made us their subreaper) */
  while (wait4(-1, NULL, 0, &ru) > 0) {
    cpu += ms(ru.ru_utime) + ms(ru.ru_stime);
    if (ru.ru_maxrss > maxrss)
      maxrss = ru.ru_maxrss;
  }
  printf("%.3f %.3f %d %ld\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, cpu,
         WIFEXITED(status) ? WEXITSTATUS(status) : 128, maxrss);
  return 0;
}
