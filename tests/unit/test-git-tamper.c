/* sandbox-git-tamper.c: the tamper report lists the run's gitlinks the host's index did not have
 * before, in the run's index order, at most SANDBOX_GIT_MAX_REPORTED of them, however many gitlinks
 * both indexes hold and in whatever order the host's came. And a one-shot run's cutoff: a nested
 * repository made right before it is not the run's, one made right after it is (no sleep: the
 * cutoff's own wait orders them). A worktree whose name leads to another object than the one
 * pinned before the run is walked as "cannot tell" ("."), not as that object's tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-time.h"
#include "json-out.h"
#include "sandbox-git.h"
#include "sandbox-paths.h"
#include "tap.h"

#define MANY 100000

static char *name(const char *prefix, size_t i) {
  char *s = NULL;
  if (asprintf(&s, "%s%07zu", prefix, i) < 0)
    abort();
  return s;
}

static void push(char ***v, size_t *n, const char *prefix, size_t i) {
  char *s = name(prefix, i);
  sandbox_git_strv_push(v, n, s);
  free(s);
}

static size_t count(char **v) {
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

/* the host's MANY gitlinks listed last-first (a list in no sorted order); the run's: all of them,
 * first-first, with new ones `n<i>` after every step-th, so that new_count are new */
static void fill(struct sandbox_git_run *g, size_t step, size_t *new_count) {
  size_t n_after = 0;
  *new_count = 0;
  for (size_t i = MANY; i-- > 0;)
    push(&g->index_before.gitlinks, &g->index_before.n_gitlinks, "g", i);
  for (size_t i = 0; i < MANY; i++) {
    push(&g->gitlinks_after, &n_after, "g", i);
    if (i % step == 0) {
      push(&g->gitlinks_after, &n_after, "n", i);
      (*new_count)++;
    }
  }
}

/* reported holds exactly the first min(new_count, max) new names, in the run's order, then the
 * standing entry that says the list was cut when there were more (review25 C5) */
static bool reported_in_order(char **reported, size_t step, size_t new_count) {
  size_t want = new_count < SANDBOX_GIT_MAX_REPORTED ? new_count : SANDBOX_GIT_MAX_REPORTED;
  bool cut = new_count > SANDBOX_GIT_MAX_REPORTED;
  if (count(reported) != want + cut ||
      (cut && strcmp(reported[want], SANDBOX_GIT_TAMPER_MORE) != 0))
    return false;
  for (size_t k = 0; k < want; k++) {
    char *s = name("n", k * step);
    bool same = strcmp(reported[k], s) == 0;
    free(s);
    if (!same)
      return false;
  }
  return true;
}

static void clear(struct sandbox_git_run *g) {
  sandbox_git_top_drop(g); /* the walk's top, held */
  sandbox_git_strv_free(g->index_before.gitlinks);
  sandbox_git_strv_free(g->gitlinks_after);
  memset(g, 0, sizeof(*g));
}

static void test_many(const char *worktree, size_t step, const char *what) {
  struct sandbox_git_run g = {0};
  size_t new_count;
  fill(&g, step, &new_count);
  char **reported = sandbox_git_tamper(&g, worktree);
  tap_ok(reported_in_order(reported, step, new_count), "%s: %zu new of %zu: %zu reported, in order",
         what, new_count, (size_t)MANY + new_count, count(reported));
  sandbox_git_strv_free(reported);
  clear(&g);
}

static void test_none_new(const char *worktree) {
  struct sandbox_git_run g = {0};
  size_t n_after = 0;
  for (size_t i = MANY; i-- > 0;)
    push(&g.index_before.gitlinks, &g.index_before.n_gitlinks, "g", i);
  for (size_t i = 0; i < MANY; i += 2)
    push(&g.gitlinks_after, &n_after, "g", i);
  char **reported = sandbox_git_tamper(&g, worktree);
  tap_ok(count(reported) == 0,
         "the run kept half of the host's gitlinks and added none: none reported");
  sandbox_git_strv_free(reported);
  clear(&g);
}

static void test_no_host_index(const char *worktree) {
  struct sandbox_git_run g = {0};
  size_t n_after = 0;
  push(&g.gitlinks_after, &n_after, "n", 1);
  push(&g.gitlinks_after, &n_after, "n", 0);
  char **reported = sandbox_git_tamper(&g, worktree);
  tap_ok(count(reported) == 2 && strcmp(reported[0], "n0000001") == 0 &&
             strcmp(reported[1], "n0000000") == 0,
         "no host index: every gitlink of the run, in its order");
  sandbox_git_strv_free(reported);
  clear(&g);
}

/* dir/name/.git made, and dir/name */
static bool make_repo_dir(const char *dir, const char *name) {
  char *path = NULL;
  bool ok = asprintf(&path, "%s/%s", dir, name) >= 0 && mkdir(path, 0755) == 0;
  free(path);
  path = NULL;
  ok = ok && asprintf(&path, "%s/%s/.git", dir, name) >= 0 && mkdir(path, 0755) == 0;
  free(path);
  return ok;
}

/* reported names name and nothing else */
static bool only(char **reported, const char *name) {
  return count(reported) == 1 && strcmp(reported[0], name) == 0;
}

/* dir/NAME for each name of names (NULL-ended), removed in that order */
static void remove_dirs(const char *dir, const char *const *names) {
  for (; *names != NULL; names++) {
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, *names) >= 0)
      rmdir(path);
    free(path);
  }
}

/* the host's `git worktree add` right before a one-shot run, the run's `git init` right after its
 * cutoff: only the run's is named (a cutoff 20 ms before the run named both) */
static void test_cutoff(const char *worktree) {
  struct sandbox_git_run g = {.common_dir = (char *)"unused"};
  struct timespec began;
  char *dir = NULL, **reported = NULL;
  bool made;
  if (asprintf(&dir, "%s/cutoff", worktree) < 0 || mkdir(dir, 0755) < 0)
    abort();
  made = make_repo_dir(dir, "host");
  file_time_after_now(&began);
  file_time_wait_floor(sandbox_git_tamper_cutoff(&g, &began), FILE_TIME_WAIT_MAX_MS);
  made = made && make_repo_dir(dir, "run");
  reported = sandbox_git_tamper(&g, dir);
  sandbox_git_top_drop(&g);
  tap_ok(made && only(reported, "run/.git"),
         "one-shot cutoff: the host's repository made right before is not named, the run's right "
         "after is (%zu named: %s)",
         count(reported), count(reported) > 0 ? reported[0] : "none");
  sandbox_git_strv_free(reported);
  static const char *const tree[] = {"run/.git", "run", "host/.git", "host", NULL};
  remove_dirs(dir, tree);
  rmdir(dir);
  free(dir);
}

/* the worktree pinned to another object (its name swapped after the check): the walk reports "."
 * (cannot tell), not what the other tree holds; pinned to its own: the run's repository named */
static void test_pinned_top(const char *worktree) {
  struct sandbox_git_run g = {.common_dir = (char *)"unused"};
  char *dir = NULL, *other = NULL, **reported = NULL;
  struct stat st_dir, st_other;
  bool made;
  if (asprintf(&dir, "%s/pinned", worktree) < 0 || mkdir(dir, 0755) < 0 ||
      asprintf(&other, "%s/other", worktree) < 0 || mkdir(other, 0755) < 0)
    abort();
  made = make_repo_dir(dir, "run") && stat(dir, &st_dir) == 0 && stat(other, &st_other) == 0;
  sandbox_worktree_pin_as(dir, &st_other);
  reported = sandbox_git_tamper(&g, dir);
  tap_ok(made && only(reported, ".") && g.top_fd == -1,
         "the worktree's name shows another object than the pinned one: \".\" alone (%zu named)",
         count(reported));
  sandbox_git_strv_free(reported);
  sandbox_worktree_pin_as(dir, &st_dir);
  reported = sandbox_git_tamper(&g, dir);
  sandbox_git_top_drop(&g);
  tap_ok(only(reported, "run/.git"), "the pinned object: its repository named (%zu named)",
         count(reported));
  sandbox_git_strv_free(reported);
  static const char *const tree[] = {"pinned/run/.git", "pinned/run", "pinned", "other", NULL};
  remove_dirs(worktree, tree);
  free(dir);
  free(other);
}

/* the settled list: config entries before nested paths, 64 at most, the cut said first */
static void test_settle(void) {
  char **v = NULL;
  size_t n = 0;
  for (size_t i = 0; i < 70; i++) {
    char *s = name("n", i);
    sandbox_git_strv_push(&v, &n, s);
    free(s);
  }
  sandbox_git_strv_push(&v, &n, "config:filter.x.clean=./x");
  sandbox_git_tamper_settle(&v);
  tap_ok(count(v) == SANDBOX_GIT_MAX_REPORTED && strcmp(v[0], SANDBOX_GIT_TAMPER_MORE) == 0 &&
             strcmp(v[1], "config:filter.x.clean=./x") == 0 && strcmp(v[2], "n0000000") == 0,
         "71 entries settled: the cut said first, the config entry next, 62 nested paths");
  sandbox_git_tamper_settle(&v);
  tap_ok(count(v) == SANDBOX_GIT_MAX_REPORTED && strcmp(v[0], SANDBOX_GIT_TAMPER_MORE) == 0 &&
             strcmp(v[1], "config:filter.x.clean=./x") == 0,
         "settled again: the same list");
  sandbox_git_strv_free(v);
  v = NULL;
  n = 0;
  sandbox_git_strv_push(&v, &n, "a/.git");
  sandbox_git_strv_push(&v, &n, "hooks:lefthook.yml");
  sandbox_git_tamper_settle(&v);
  tap_ok(count(v) == 2 && strcmp(v[0], "hooks:lefthook.yml") == 0 && strcmp(v[1], "a/.git") == 0,
         "a short list: the hook entry first, nothing said cut");
  sandbox_git_strv_free(v);
}

/* the entries' JSON as sb_json_array writes it */
static size_t json_bytes(char **v) {
  struct strbuf b = {0};
  size_t n;
  sb_json_array(&b, v);
  n = b.len;
  free(b.data);
  return n;
}

/* names of control characters (6 bytes each as JSON): 40 of 255 bytes were 60 KiB in the list */
static void test_settle_bytes(void) {
  char **v = NULL, big[256], huge[8000];
  size_t n = 0, bytes;
  memset(huge, '\x01', sizeof(huge) - 1);
  huge[sizeof(huge) - 1] = '\0';
  memcpy(huge, "config:x=", 9);
  sandbox_git_strv_push(&v, &n, huge);
  for (size_t i = 0; i < 40; i++) {
    memset(big, '\x01', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    snprintf(big, 8, "n%04zu", i);
    big[5] = '\x01';
    sandbox_git_strv_push(&v, &n, big);
  }
  sandbox_git_strv_push(&v, &n, "config:filter.x.clean=./x");
  sandbox_git_tamper_settle(&v);
  bytes = json_bytes(v);
  tap_ok(strcmp(v[0], SANDBOX_GIT_TAMPER_MORE) == 0 &&
             strcmp(v[1], "config:filter.x.clean=./x") == 0 && strncmp(v[2], "n0000", 5) == 0 &&
             count(v) < 40 &&
             bytes <= SANDBOX_GIT_REPORTED_BYTES + 2 + sizeof(SANDBOX_GIT_TAMPER_MORE),
         "42 entries of 60 KiB as JSON settled to %zu bytes (%zu entries): the cut said first, the "
         "config entry that fits next, the 48 KB one passed over",
         bytes, count(v));
  sandbox_git_tamper_settle(&v);
  tap_ok(json_bytes(v) == bytes && strcmp(v[0], SANDBOX_GIT_TAMPER_MORE) == 0,
         "settled again: the same list");
  sandbox_git_strv_free(v);
}

int main(void) {
  char worktree[] = "/tmp/fsrun-test-git-tamper.XXXXXX";
  if (mkdtemp(worktree) == NULL) {
    tap_ok(false, "mkdtemp: %m");
    return tap_done();
  }
  test_many(worktree, 10000, "a few new gitlinks among many");
  test_many(worktree, 7, "more new gitlinks than the report holds");
  test_settle();
  test_settle_bytes();
  test_none_new(worktree);
  test_no_host_index(worktree);
  test_cutoff(worktree);
  test_pinned_top(worktree);
  rmdir(worktree);
  return tap_done();
}
