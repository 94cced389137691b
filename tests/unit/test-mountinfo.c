/* Unit tests for mountinfo.c: parsing (escapes, bad lines), which mounts lie below a mount (deep
 * chains and wide tables of many thousand lines, cycles, missing parents), and which mount a
 * mount(2) made (the check that keeps a renamed directory from passing for it). TAP output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
#include "tap.h"
#include "utils.h"

/* a table from mountinfo text */
static struct mountinfo parse_text(const char *text) {
  struct mountinfo mi = {0};
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  if (f == NULL || mountinfo_parse(f, &mi) < 0)
    abort();
  fclose(f);
  return mi;
}

/* a table of (id, parent) pairs, every mount point "/" */
static struct mountinfo table(size_t n, const uint64_t (*pairs)[2]) {
  struct mountinfo mi = {.lines = calloc(n ? n : 1, sizeof(struct mountinfo_line)), .n = n};
  if (mi.lines == NULL)
    abort();
  for (size_t i = 0; i < n; i++)
    mi.lines[i] =
        (struct mountinfo_line){.id = pairs[i][0], .parent = pairs[i][1], .point = xstrdup("/")};
  return mi;
}

static void test_parse(void) {
  cleanup_mountinfo struct mountinfo mi =
      parse_text("21 1 0:20 / / rw - ext4 /dev/sda1 rw\n"
                 "not a mount line\n"
                 "35 21 0:33 / /a\\040dir rw,nosuid shared:2 - tmpfs tmpfs rw\n"
                 "36 35 0:34 / /a\\040dir/back\\134slash rw - tmpfs tmpfs rw\n");
  tap_ok(mi.n == 3, "parse: the three mount lines, the bad one skipped (%zu)", mi.n);
  tap_ok(mi.n == 3 && mi.lines[1].id == 35 && mi.lines[1].parent == 21,
         "parse: id and parent of a line");
  tap_ok(mi.n == 3 && strcmp(mi.lines[1].point, "/a dir") == 0, "parse: \\040 is a space");
  tap_ok(mi.n == 3 && strcmp(mi.lines[2].point, "/a dir/back\\slash") == 0,
         "parse: \\134 is a backslash");
}

static void test_below_small(void) {
  /* 1 root; 2 top under 1; 3, 4 under 2; 5 under 4; 6 under 1 (a sibling); 7 has a parent that
   * is not in the table; 8 and 9 each other's parents */
  static const uint64_t pairs[][2] = {{1, 1}, {2, 1},  {3, 2}, {4, 2}, {5, 4},
                                      {6, 1}, {7, 99}, {8, 9}, {9, 8}};
  static const bool want[] = {false, false, true, true, true, false, false, false, false};
  cleanup_mountinfo struct mountinfo mi = table(9, pairs);
  bool below[9];
  bool same = mountinfo_below(&mi, 2, below) == 0;
  for (size_t i = 0; same && i < 9; i++)
    same = below[i] == want[i];
  tap_ok(same, "below: children and grandchildren of the top, not the top, a sibling, an orphan "
               "or a cycle");
}

/* A chain n deep below top 1 (each line the parent of the next, listed from the deepest up), and
 * as many mounts side by side under the root: the old walk took n^2 steps per deep line. */
static void test_below_many(size_t n) {
  uint64_t(*pairs)[2] = calloc(2 * n + 2, sizeof(*pairs));
  cleanup_free bool *below = calloc(2 * n + 2, sizeof(bool));
  size_t k = 0, n_below = 0;
  if (pairs == NULL || below == NULL)
    abort();
  pairs[k][0] = 0, pairs[k++][1] = 0; /* the root */
  for (size_t i = n; i >= 1; i--)     /* 1 + i under i, deepest first */
    pairs[k][0] = 1 + i, pairs[k++][1] = i;
  pairs[k][0] = 1, pairs[k++][1] = 0; /* the top, under the root, listed last */
  for (size_t i = 0; i < n; i++)
    pairs[k][0] = 1000000 + i, pairs[k++][1] = 0;
  cleanup_mountinfo struct mountinfo mi = table(k, (const uint64_t(*)[2])pairs);
  free(pairs);
  tap_ok(mountinfo_below(&mi, 1, below) == 0, "below: a table of %zu lines", k);
  for (size_t i = 0; i < k; i++)
    n_below += below[i];
  tap_ok(n_below == n, "below: the whole chain of %zu below the top, nothing beside it (%zu)", n,
         n_below);
}

/* what mountinfo_new_child says of a table before and after: the id, or -errno */
static long long new_child(size_t nb, const uint64_t (*b)[2], size_t na, const uint64_t (*a)[2],
                           uint64_t parent) {
  cleanup_mountinfo struct mountinfo before = table(nb, b), after = table(na, a);
  uint64_t id = 0;
  if (mountinfo_new_child(&before, &after, parent, &id) < 0)
    return -errno;
  return (long long)id;
}

static void test_new_child(void) {
  /* the rootfs 10; 11 an earlier bind in it (a mount root a rename could swap in) */
  static const uint64_t before[][2] = {{1, 1}, {10, 1}, {11, 10}};
  static const uint64_t made[][2] = {{1, 1}, {10, 1}, {11, 10}, {12, 10}};
  static const uint64_t made_rec[][2] = {{1, 1}, {10, 1}, {11, 10}, {12, 10}, {13, 12}};
  static const uint64_t elsewhere[][2] = {{1, 1}, {10, 1}, {11, 10}, {12, 11}};
  static const uint64_t two[][2] = {{1, 1}, {10, 1}, {11, 10}, {12, 10}, {14, 10}};
  tap_ok(new_child(3, before, 4, made, 10) == 12,
         "new child: the one new mount under the target's");
  tap_ok(new_child(3, before, 5, made_rec, 10) == 12,
         "new child: a recursive bind's submounts are not under the target's mount");
  tap_ok(new_child(3, before, 3, before, 10) == -EXDEV,
         "new child: none (an old mount under the target's is not one)");
  tap_ok(new_child(3, before, 4, elsewhere, 10) == -EXDEV,
         "new child: a new mount under another mount is not one");
  tap_ok(new_child(3, before, 5, two, 10) == -EXDEV,
         "new child: two new ones (one propagated in) fail closed");
}

int main(void) {
  test_parse();
  test_below_small();
  test_below_many(20000);
  test_new_child();
  return tap_done();
}
