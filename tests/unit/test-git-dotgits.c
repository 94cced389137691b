/* sandbox-git-dotgits.c and exec-git-dotgits.c: a `.git` entry is "as before" only with the same
 * path, identity, type and content (an unknown content never is; no list taken: none is); a task
 * container's list survives its state dir file whatever its names hold (a space, a newline), and a
 * file that is not fsrun's gives no list (every entry named), never a partial one. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec-git.h"
#include "sandbox-git.h"
#include "tap.h"

static struct sandbox_git_dotgit entry(const char *rel, uint64_t ino, uint8_t content) {
  struct sandbox_git_dotgit e = {.rel = strdup(rel), .dev = 7, .ino = ino, .type = S_IFREG};
  memset(e.digest.sum, content, sizeof(e.digest.sum));
  return e;
}

static void push(struct sandbox_git_dotgits *inv, const char *rel, uint64_t ino, uint8_t content) {
  struct sandbox_git_dotgit e = entry(rel, ino, content);
  sandbox_git_dotgits_push(inv, &e);
}

/* whether before holds (rel, ino, content) */
static bool has(const struct sandbox_git_dotgits *before, const char *rel, uint64_t ino,
                uint8_t content) {
  struct sandbox_git_dotgit e = entry(rel, ino, content);
  bool r = sandbox_git_dotgits_has(before, &e);
  free(e.rel);
  return r;
}

static void test_has(void) {
  struct sandbox_git_dotgits before = {0};
  struct sandbox_git_dotgit dir = entry("b/.git", 2, 0);
  push(&before, "z/.git", 3, 1);
  push(&before, "a/.git", 1, 1);
  before.taken = true;
  sandbox_git_dotgits_sort(&before);
  tap_ok(has(&before, "a/.git", 1, 1) && has(&before, "z/.git", 3, 1),
         "the same path, identity and content: as before");
  tap_ok(!has(&before, "b/.git", 1, 1), "a path the list does not hold: new");
  tap_ok(!has(&before, "a/.git", 9, 1), "another inode at the path: new");
  tap_ok(!has(&before, "a/.git", 1, 2), "other content (a gitdir: line rewritten): new");
  dir.type = S_IFDIR;
  tap_ok(!sandbox_git_dotgits_has(&before, &dir), "another type at the path: new");
  free(dir.rel);
  before.items[0].digest.unknown = true;
  tap_ok(!has(&before, "a/.git", 1, 1), "content unknown before: never the same");
  before.taken = false;
  tap_ok(!has(&before, "z/.git", 3, 1), "no list taken: every entry new");
  sandbox_git_dotgits_free(&before);
}

static void write_file(int dir, const char *text, size_t len) {
  int fd = openat(dir, "git-dotgits", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, text, len) != (ssize_t)len)
    abort();
  close(fd);
}

static void test_state_file(const char *state) {
  struct sandbox_git_run g = {0}, h = {0};
  int dir = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  static const char foreign[] = "fsrun-git-dotgits 1\n1 2 100000 - a/.git\0nonsense\0";
  push(&g.dotgits_after, "odd name/with\nnewline/.git", 5, 3);
  push(&g.dotgits_after, "a/.git", 4, 2);
  g.dotgits_after.items[1].digest.unknown = true;
  g.dotgits_after.taken = true;
  exec_git_dotgits_save(&g, dir);
  exec_git_dotgits_load(&h, dir);
  tap_ok(h.dotgits_before.taken && h.dotgits_before.n == 2 &&
             has(&h.dotgits_before, "odd name/with\nnewline/.git", 5, 3) &&
             !has(&h.dotgits_before, "a/.git", 4, 2),
         "saved and loaded: a name with a space and a newline holds, an unknown stays unknown");
  sandbox_git_dotgits_free(&h.dotgits_before);
  write_file(dir, foreign, sizeof(foreign) - 1);
  exec_git_dotgits_load(&h, dir);
  tap_ok(!h.dotgits_before.taken && h.dotgits_before.n == 0,
         "a record that is not one: no list (every entry named), not a partial one");
  write_file(dir, "fsrun-git-dotgits 1\n", 20);
  exec_git_dotgits_load(&h, dir);
  tap_ok(h.dotgits_before.taken && h.dotgits_before.n == 0, "an empty list: taken, nothing in it");
  sandbox_git_dotgits_free(&h.dotgits_before);
  unlinkat(dir, "git-dotgits", 0);
  exec_git_dotgits_load(&h, dir);
  tap_ok(!h.dotgits_before.taken, "no file: no list");
  sandbox_git_dotgits_free(&g.dotgits_after);
  close(dir);
}

int main(void) {
  char state[] = "/tmp/fsrun-test-git-dotgits.XXXXXX";
  test_has();
  if (mkdtemp(state) == NULL) {
    tap_ok(false, "mkdtemp: %m");
    return tap_done();
  }
  test_state_file(state);
  rmdir(state);
  return tap_done();
}
