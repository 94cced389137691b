/* sandbox-git-pins.c, through sandbox_git_config_paths, sandbox_git_config_tamper and
 * sandbox_git_host_args: the config's reads and digests go through the worktree's top and common
 * dir held open, never through their names again. Here the worktree's name is renamed to another
 * tree after the top was held (as a swap after the walk's check would): what that tree holds must
 * not be what is compared or disarmed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-git.h"
#include "sandbox-paths.h"
#include "tap.h"
#include "scratch.h"

#define FILTER  "config:filter.x.clean=sh tools/clean.sh"
#define INCLUDE "config:include.path=../inc.gitconfig"

static char base[] = "/tmp/fsrun-test-git-pins-XXXXXX";

static void write_file(const char *dir, const char *name, const char *text) {
  char *path = scratch_join(dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
    abort();
  free(path);
}

static void make_dir(const char *dir, const char *name) {
  char *path = scratch_join(dir, name);
  if (mkdir(path, 0755) < 0)
    abort();
  free(path);
}

/* case/wt, a main checkout whose config runs tools/clean.sh and includes ../inc.gitconfig, and
 * case/other, a tree with its own such files; the worktree's path (caller frees) */
static char *make_case(const char *name) {
  char *dir = scratch_join(base, name), *wt = scratch_join(dir, "wt"),
       *other = scratch_join(dir, "other");
  if (mkdir(dir, 0755) < 0 || mkdir(wt, 0755) < 0 || mkdir(other, 0755) < 0)
    abort();
  make_dir(wt, ".git");
  write_file(wt, ".git/config",
             "[filter \"x\"]\n\tclean = sh tools/clean.sh\n[include]\n\tpath = ../inc.gitconfig\n");
  make_dir(wt, "tools");
  write_file(wt, "tools/clean.sh", "cat\n");
  write_file(wt, "inc.gitconfig", "[user]\n\tname = task\n");
  make_dir(other, "tools");
  write_file(other, "tools/clean.sh", "exec cat\n");
  write_file(other, "inc.gitconfig", "[user]\n\tname = other\n");
  free(dir);
  free(other);
  return wt;
}

/* wt's name now shows the other tree; the task's is at wt-real (its path, caller frees) */
static char *rename_away(const char *wt) {
  char *real = NULL, *other = NULL;
  if (asprintf(&real, "%s-real", wt) < 0 ||
      asprintf(&other, "%.*s/other", (int)(strlen(wt) - 3), wt) < 0)
    abort();
  if (rename(wt, real) < 0 || rename(other, wt) < 0)
    abort();
  free(other);
  return real;
}

/* g before a run on wt: its common dir held, its pointers read and digested */
static void before_run(struct sandbox_git_run *g, const char *wt) {
  char *common = scratch_join(wt, ".git");
  *g = (struct sandbox_git_run){.common_dir = common, .admin = (char *)""};
  g->common_fd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC);
  sandbox_git_config_paths(g, wt);
}

static void after_run_free(struct sandbox_git_run *g) {
  sandbox_git_pointers_free(g);
  close(g->common_fd);
  free(g->common_dir);
}

static bool listed(char **v, const char *s) {
  for (char **p = v; p != NULL && *p != NULL; p++)
    if (strcmp(*p, s) == 0)
      return true;
  return false;
}

static size_t count(char **v) {
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

static char *joined(char **v) {
  size_t len = 1;
  for (char **p = v; p != NULL && *p != NULL; p++)
    len += strlen(*p) + 1;
  char *s = calloc(1, len);
  for (char **p = v; s != NULL && p != NULL && *p != NULL; p++)
    strcat(strcat(s, *p), " ");
  return s;
}

/* the run changed nothing; the name leads to the other tree: nothing named */
static void test_unchanged(void) {
  struct sandbox_git_run g;
  char **tamper = NULL, *wt = make_case("unchanged"), *real;
  before_run(&g, wt);
  sandbox_git_top_hold(&g, open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  real = rename_away(wt);
  sandbox_git_config_tamper(&g, wt, &tamper);
  tap_ok(count(tamper) == 0, "renamed after the top was held, nothing changed: nothing named (%zu)",
         count(tamper));
  sandbox_git_strv_free(tamper);
  after_run_free(&g);
  free(real);
  free(wt);
}

/* the run rewrote the task's script and include: both named, and hostGitArgs disarm what the
 * task's include sets now (not the other's) */
static void test_changed(void) {
  struct sandbox_git_run g;
  char **tamper = NULL, **args, *wt = make_case("changed"), *real, *list;
  before_run(&g, wt);
  sandbox_git_top_hold(&g, open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  real = rename_away(wt);
  write_file(real, "tools/clean.sh", "touch /tmp/pwned; cat\n");
  write_file(real, "inc.gitconfig", "[core]\n\tfsmonitor = ./fsm\n");
  sandbox_git_config_tamper(&g, wt, &tamper);
  tap_ok(count(tamper) == 2 && listed(tamper, FILTER) && listed(tamper, INCLUDE),
         "renamed after the top was held, the task's files rewritten: both named (%zu)",
         count(tamper));
  args = sandbox_git_host_args(&g, tamper);
  list = joined(args);
  tap_ok(strstr(list, "core.fsmonitor=false") != NULL && strstr(list, "filter.x.clean=") != NULL &&
             strstr(list, "fsrun-cannot-disarm") == NULL,
         "hostGitArgs from the task's include as it is now: %s", list);
  free(list);
  sandbox_git_strv_free(args);
  sandbox_git_strv_free(tamper);
  after_run_free(&g);
  free(real);
  free(wt);
}

/* the top not held (its name led elsewhere at the walk): every pointer below it named, and the
 * include that cannot be read again cannot be disarmed */
static void test_lost_top(void) {
  struct sandbox_git_run g;
  char **tamper = NULL, **args, *wt = make_case("lost"), *list;
  before_run(&g, wt);
  sandbox_git_top_hold(&g, -1);
  close(g.common_fd); /* nor the common dir: a path below it is the top's */
  g.common_fd = -1;
  sandbox_git_config_tamper(&g, wt, &tamper);
  tap_ok(listed(tamper, FILTER) && listed(tamper, INCLUDE),
         "a top not held: its pointers named, unchanged as they are (%zu)", count(tamper));
  args = sandbox_git_host_args(&g, tamper);
  list = joined(args);
  tap_ok(strncmp(list, "-c core.abbrev=fsrun-cannot-disarm", 34) == 0,
         "a top not held: hostGitArgs cannot disarm its include: %s", list);
  free(list);
  sandbox_git_strv_free(args);
  sandbox_git_strv_free(tamper);
  sandbox_git_pointers_free(&g);
  free(g.common_dir);
  free(wt);
}

/* before the run, the common dir held and the name renamed: its config is read through the fd */
static void test_config_by_fd(void) {
  struct sandbox_git_run g;
  char *wt = make_case("config"), *common = scratch_join(wt, ".git"), *real;
  bool found = false;
  g = (struct sandbox_git_run){.common_dir = common, .admin = (char *)""};
  g.common_fd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC);
  sandbox_git_top_hold(&g, open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  real = rename_away(wt);
  sandbox_git_config_paths(&g, wt);
  for (size_t i = 0; i < g.n_pointers; i++)
    found = found || strcmp(g.pointers[i].entry, FILTER) == 0;
  tap_ok(found, "the config read through the common dir held, not the name's (%zu pointers)",
         g.n_pointers);
  after_run_free(&g);
  free(real);
  free(wt);
}

/* exec's layout (review25 C11): found below the top the exec checked, the worktree pinned to it,
 * while the name shows the other tree: the task's `.git`, named as the container names it; the
 * lookup by the name refuses (it would have been taken for "no repository") */
static void test_layout_at(void) {
  cleanup_error fsrun_error_t err = NULL;
  struct sandbox_git_layout l;
  struct stat top_st, by_fd, task_git;
  char *wt = make_case("layout"), *common = scratch_join(wt, ".git"), *real, *real_git;
  int r, top = open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top < 0 || fstat(top, &top_st) < 0)
    abort();
  sandbox_worktree_pin_as(wt, &top_st);
  real = rename_away(wt);
  real_git = scratch_join(real, ".git");
  r = sandbox_git_layout_find_at(wt, top, &l, &err);
  tap_ok(r == 0 && l.common_dir != NULL && strcmp(l.common_dir, common) == 0 &&
             fstat(l.common_fd, &by_fd) == 0 && stat(real_git, &task_git) == 0 &&
             by_fd.st_ino == task_git.st_ino && by_fd.st_dev == task_git.st_dev,
         "below the top checked, renamed since: the task's .git as `%s` (%s)",
         l.common_dir != NULL ? l.common_dir : "none", err != NULL ? err->msg : "no error");
  sandbox_git_layout_free(&l);
  r = sandbox_git_layout_find(wt, &l, &err);
  tap_ok(r < 0 && l.common_dir == NULL, "by the name: refused, not taken for no repository (%s)",
         err != NULL ? err->msg : "no error");
  sandbox_git_layout_free(&l);
  close(top);
  free(real_git);
  free(real);
  free(common);
  free(wt);
}

int main(void) {
  if (mkdtemp(base) == NULL)
    return 1;
  setenv("GIT_CONFIG_SYSTEM", "/dev/null", 1);
  setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", base, 1);
  test_unchanged();
  test_changed();
  test_lost_top();
  test_config_by_fd();
  test_layout_at();
  return scratch_remove(base) ? tap_done() : 1;
}
