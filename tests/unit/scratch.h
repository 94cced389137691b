/* The scratch trees of the C unit tests (a mkdtemp'd directory under /tmp): paths in them and their
 * removal at the end. */
#ifndef FSRUN_SCRATCH_H
#define FSRUN_SCRATCH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* "a/b", malloc'd (the caller frees); aborts when out of memory. */
__attribute__((unused)) static char *scratch_join(const char *a, const char *b) {
  char *s = NULL;
  if (asprintf(&s, "%s/%s", a, b) < 0)
    abort();
  return s;
}

/* `rm -rf -- path` (no shell: the path is one argument, whatever it holds). False, with a TAP
 * comment naming it, when rm could not run or did not remove everything. */
__attribute__((unused)) static bool scratch_remove(const char *path) {
  int status = -1;
  pid_t pid;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    tap_diag("could not remove %s", path);
    return false;
  }
  return true;
}

#endif
