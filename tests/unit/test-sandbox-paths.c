/* sandbox-paths.c and sandbox-path-owners.c: a caller's path is the object its owner walk reached,
 * and a later lookup that reaches another (a name renamed on the way) is refused. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-path-owners.h"
#include "sandbox-paths.h"
#include "scratch.h"
#include "tap.h"

static bool refused_as_changed(int r, const fsrun_error_t err) {
  return r < 0 && err != NULL && strstr(err->msg, "changed while it was checked") != NULL;
}

/* the walk's identity against the path's: the same object passes, any other is refused */
static void test_walked_and_looked_up(const struct agent_trees *t, const char *a, const char *b) {
  fsrun_error_t err = NULL;
  struct stat walked, st;
  int r = check_policy_path_owners("writablePaths", 0, a, &walked, &err);
  tap_ok(r == 0 && stat(a, &st) == 0 && walked.st_ino == st.st_ino,
         "the owner walk gives the identity of what it reached");
  r = check_caller_path(t, "writablePaths", 0, a, false, &st, &err);
  tap_ok(r == 0 && st.st_ino == walked.st_ino, "the walk and the lookup reach the same directory");
  stat(b, &walked);
  r = caller_path_agree("writablePaths", 0, a, false, &st, 0, &walked, &err);
  tap_ok(refused_as_changed(r, err), "walk and later stat disagree: refused (%s)",
         err ? err->msg : "no error");
  r = caller_path_agree("allowedPaths", 0, a, false, &st, 1, &walked, &err);
  tap_ok(refused_as_changed(r, err), "the walk found it missing, the lookup found it: refused");
  r = caller_path_agree("allowedPaths", 0, a, true, &st, 0, &walked, &err);
  tap_ok(refused_as_changed(r, err), "the walk found it, the lookup found it missing: refused");
  fsrun_error_release(&err);
}

static void test_missing(const struct agent_trees *t, const char *base) {
  fsrun_error_t err = NULL;
  struct stat walked, st;
  char *gone = scratch_join(base, "gone/deeper");
  int r = check_policy_path_owners("allowedPaths", 0, gone, &walked, &err);
  tap_ok(r == 1, "a missing path: the walk says 1");
  r = check_caller_path(t, "allowedPaths", 0, gone, true, &st, &err);
  tap_ok(r == 1, "missing to both: 1 (skipped)");
  r = make_policy_path("writablePaths", 0, gone, &err);
  tap_ok(r == 0 && stat(gone, &st) == 0 && S_ISDIR(st.st_mode),
         "make_policy_path makes it and its missing parent");
  tap_ok(make_policy_path("writablePaths", 0, gone, &err) == 0, "made again: 0 (it exists)");
  fsrun_error_release(&err);
  free(gone);
}

/* the pinned worktree: a later open of its path that shows another object is refused */
static void test_worktree_pin(const char *a, const char *b) {
  fsrun_error_t err = NULL;
  char *resolved = NULL;
  struct stat st;
  int r;
  int fd_a = open(a, O_PATH | O_DIRECTORY), fd_b = open(b, O_PATH | O_DIRECTORY);
  tap_ok(sandbox_worktree_pin(a, &resolved, &err) == 0 && strcmp(resolved, a) == 0,
         "the worktree pinned at its real path");
  tap_ok(sandbox_worktree_check(resolved, fd_a, &err) == 0, "the same object later: 0");
  r = sandbox_worktree_check(resolved, fd_b, &err);
  tap_ok(refused_as_changed(r, err), "another object at the worktree's path later: refused");
  tap_ok(sandbox_worktree_check(b, fd_a, &err) == 0, "another path is not the worktree's: 0");
  fstat(fd_b, &st);
  sandbox_worktree_pin_as(b, &st);
  r = sandbox_worktree_check(b, fd_a, &err);
  tap_ok(refused_as_changed(r, err), "a worktree pinned by its bind's identity: another refused");
  tap_ok(sandbox_worktree_check(b, fd_b, &err) == 0, "and that object passes");
  close(fd_a);
  close(fd_b);
  free(resolved);
  fsrun_error_release(&err);
}

int main(void) {
  char tmpl[] = "/tmp/fsrun-test-sandbox-paths-XXXXXX";
  char *base = mkdtemp(tmpl) ? realpath(tmpl, NULL) : NULL;
  oci_strv none = {0};
  struct agent_trees t = {.writable = &none};
  char *a, *b;
  if (base == NULL) {
    tap_ok(false, "mkdtemp");
    return tap_done();
  }
  a = scratch_join(base, "a");
  b = scratch_join(base, "b");
  mkdir(a, 0755);
  mkdir(b, 0755);
  test_walked_and_looked_up(&t, a, b);
  test_missing(&t, base);
  test_worktree_pin(a, b);
  free(a);
  free(b);
  scratch_remove(base);
  free(base);
  return tap_done();
}
