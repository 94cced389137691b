/* sandbox-state-root.c: which writablePaths entry reaches the state root, on a tree made here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-state-root.h"
#include "tap.h"

static char base[256];

/* base/rel, in a buffer of its own for each of the few live at once */
static const char *at(const char *rel) {
  static char bufs[4][PATH_MAX];
  static int next;
  char *b = bufs[next++ % 4];
  int n = snprintf(b, PATH_MAX, "%s/%s", base, rel);
  if (n < 0 || n >= PATH_MAX)
    abort();
  return b;
}

/* the entry index sandbox_writable_over_state_root gives for root and entries, -2 on an error */
static ssize_t reach(const char *root, const char *const *entries, size_t n) {
  oci_policy p = {.writable_paths = {.items = (char **)entries, .len = n}};
  ssize_t hit;
  return sandbox_writable_over_state_root(&p, root, &hit) < 0 ? -2 : hit;
}

static ssize_t reach1(const char *root, const char *entry) {
  char *copy = strdup(entry);
  ssize_t r = reach(root, (const char *const[]){copy}, 1);
  free(copy);
  return r;
}

static const char *const dirs[] = {"area",  "area/sub", "area/state", "area/state/c1",
                                   "other", "x",        "real"};
static const char *const links[][2] = {
    {"area", "lnk"}, {"area/sub", "x/up"}, {"real", "area/l2"}, {"area/l2", "l1"}};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void make_tree(void) {
  for (size_t i = 0; i < N(dirs); i++)
    mkdir(at(dirs[i]), 0755);
  for (size_t i = 0; i < N(links); i++)
    (void)!symlink(at(links[i][0]), at(links[i][1]));
}

static void remove_tree(void) {
  for (size_t i = 0; i < N(links); i++)
    unlink(at(links[i][1]));
  for (size_t i = N(dirs); i > 0; i--)
    rmdir(at(dirs[i - 1]));
  rmdir(base);
}

int main(void) {
  char tmpl[] = "/tmp/fsrun-test-state-root-XXXXXX";
  char *made = mkdtemp(tmpl), *real = made ? realpath(made, NULL) : NULL;
  char root[PATH_MAX];
  if (real == NULL) {
    tap_ok(false, "mkdtemp");
    return tap_done();
  }
  if (strlen(real) >= sizeof(base)) {
    tap_ok(false, "a short temporary directory");
    return tap_done();
  }
  strcpy(base, real);
  make_tree();
  strcpy(root, at("area/state"));

  tap_ok(reach(root, NULL, 0) == -1, "no writablePaths: nothing reaches it");
  tap_ok(reach1(root, at("other")) == -1, "a sibling does not reach it");
  tap_ok(reach1(root, at("area")) == 0, "its parent holds it");
  tap_ok(reach1(root, root) == 0, "the state root itself");
  tap_ok(reach1(root, at("area/state/c1")) == 0, "an entry inside it (a container's state dir)");
  tap_ok(reach1(root, at("lnk")) == 0, "its parent through a link");
  tap_ok(reach1(root, at("lnk/state/c1")) == 0, "an entry inside it through a link");
  tap_ok(reach1(root, at("x/up/..")) == 0, "its parent as a `..` after a link");
  tap_ok(reach1(at("x/up/../state"), at("area")) == 0, "the state root as a `..` after a link");
  tap_ok(reach1(at("l1/state"), at("area")) == 0,
         "a link on the state root's way lies in the entry (it resolves outside)");
  tap_ok(reach1(at("l1/state"), at("real")) == 0, "and the directory it resolves to");
  tap_ok(reach1(at("real/state"), at("area")) == -1, "that directory named without the link");
  tap_ok(reach1(at("lnk/new/state"), at("area")) == 0, "a state root not made yet, in the entry");
  tap_ok(reach1(at("other/new/state"), at("area")) == -1, "one not made yet, elsewhere");
  tap_ok(reach1(at("area/new"), at("area/new/deeper")) == 0,
         "neither made yet: compared by spelling");
  tap_ok(reach1(root, "relative/dir") == -1, "a relative entry (refused where it is used)");
  {
    FILE *f = fopen(at("area/file"), "w");
    tap_ok(f != NULL && fclose(f) == 0, "a file to put a state root under");
    tap_ok(reach1(at("lnk/file/state"), at("area")) == 0,
           "a state root under a file: the directory holding the file decides");
    tap_ok(reach1(at("lnk/file/state"), at("other")) == -1, "and it is no error");
    unlink(at("area/file"));
  }
  {
    const char *const two[] = {at("other"), at("lnk")};
    tap_ok(reach(root, two, 2) == 1, "the index of the entry that reaches it");
  }
  remove_tree();
  free(real);
  return tap_done();
}
