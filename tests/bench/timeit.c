/* timeit CMD [ARGS...]: runs CMD once with stdout and stderr on /dev/null and prints
 * "WALL_MS CPU_MS EXIT MAXRSS_KB" — the wall time from spawn to reap, the user + system time of CMD
 * and of every descendant it waited for (for a runtime: its container init and the process), and
 * the largest resident set of CMD and those descendants.
 * A shell's `time` adds the shell's own fork to every sample; this measures only the command. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
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

  if (argc < 2) {
    fprintf(stderr, "usage: timeit CMD [ARGS...]\n");
    return 2;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
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
  printf("%.3f %.3f %d %ld\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
         ms(ru.ru_utime) + ms(ru.ru_stime), WIFEXITED(status) ? WEXITSTATUS(status) : 128,
         ru.ru_maxrss);
  return 0;
}
