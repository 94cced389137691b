/* sandbox-git-layout-memo.c, through sandbox_git_layout_find: within a run's set-up the first
 * walk's layout answers the later lookups, but only while the worktree's `.git` and the common dir
 * are the objects that walk judged. Each attack here changes one of them between two lookups, the
 * way a writer racing the set-up would: the second lookup must never hand out the kept answer, and
 * (review29 G6: the first layout is authoritative) it fails, as does every later lookup of that
 * set-up and its git prepare, even with the first objects put back. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-git.h"
#include "scratch.h"
#include "tap.h"

static char base[] = "/tmp/fsrun-test-git-layout-memo-XXXXXX";

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
    abort();
}

static void make_dir(const char *path) {
  if (mkdir(path, 0755) < 0)
    abort();
}

/* <dir>/repo/.git, a common dir with HEAD, objects/, refs/, and one linked worktree at <dir>/wt
 * in git's layout (its admin dir <common>/worktrees/wt); the worktree's path (caller frees) */
static char *make_linked(const char *name) {
  char *dir = scratch_join(base, name), *repo = scratch_join(dir, "repo"),
       *common = scratch_join(repo, ".git");
  char *wt = scratch_join(dir, "wt"), *admin = NULL, *text = NULL, *p = NULL;
  make_dir(dir);
  make_dir(repo);
  make_dir(common);
  make_dir((p = scratch_join(common, "objects")));
  free(p);
  make_dir((p = scratch_join(common, "refs")));
  free(p);
  write_file((p = scratch_join(common, "HEAD")), "ref: refs/heads/main\n");
  free(p);
  make_dir((p = scratch_join(common, "worktrees")));
  free(p);
  make_dir((admin = scratch_join(common, "worktrees/wt")));
  write_file((p = scratch_join(admin, "commondir")), "../..\n");
  free(p);
  if (asprintf(&text, "%s/.git\n", wt) < 0)
    abort();
  write_file((p = scratch_join(admin, "gitdir")), text);
  free(p);
  free(text);
  make_dir(wt);
  if (asprintf(&text, "gitdir: %s\n", admin) < 0)
    abort();
  write_file((p = scratch_join(wt, ".git")), text);
  free(p);
  free(text);
  free(admin);
  free(common);
  free(repo);
  free(dir);
  return wt;
}

/* a lookup: 0 with its common dir in *common (caller frees), or -1 */
static int find(const char *wt, char **common) {
  cleanup_error fsrun_error_t err = NULL;
  struct sandbox_git_layout l;
  int r = sandbox_git_layout_find(wt, &l, &err);
  *common = r == 0 && l.common_dir != NULL ? strdup(l.common_dir) : NULL;
  if (r == 0 && l.common_fd < 0)
    r = -1;
  sandbox_git_layout_free(&l);
  return r;
}

/* the second lookup of an unchanged layout is the memo's; none outside a set-up */
static void test_kept(void) {
  char *wt = make_linked("kept"), *a = NULL, *b = NULL;
  unsigned hits;
  int r;
  sandbox_git_layout_memo_begin();
  r = find(wt, &a);
  tap_ok(r == 0 && a != NULL && sandbox_git_layout_memo_hits() == 0, "the first lookup walks: `%s`",
         a ? a : "none");
  hits = sandbox_git_layout_memo_hits();
  r = find(wt, &b);
  tap_ok(r == 0 && b != NULL && a != NULL && strcmp(a, b) == 0 &&
             sandbox_git_layout_memo_hits() == hits + 1,
         "the second lookup, nothing changed: the kept answer (hits %u -> %u)", hits,
         sandbox_git_layout_memo_hits());
  sandbox_git_layout_memo_end();
  free(b);
  b = NULL;
  r = find(wt, &b);
  tap_ok(r == 0 && sandbox_git_layout_memo_hits() == 0,
         "after the set-up: every lookup walks (hits %u)", sandbox_git_layout_memo_hits());
  free(a);
  free(b);
  free(wt);
}

/* `.git` rewritten in place (same inode, same size, its times set back) to name another admin
 * dir, which does not exist: walked again and refused. File times alone would not show it. */
static void test_dotgit_rewritten(void) {
  char *wt = make_linked("rewritten"), *dotgit = scratch_join(wt, ".git"), *a = NULL, *b = NULL;
  char text[4096];
  struct stat st;
  struct timespec times[2];
  FILE *f = fopen(dotgit, "r");
  size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
  int fd;
  if (f == NULL || fclose(f) != 0 || n < 3 || stat(dotgit, &st) < 0)
    abort();
  text[n - 2] = text[n - 2] == 'X' ? 'Y' : 'X'; /* the admin dir's last letter */
  times[0] = st.st_atim;
  times[1] = st.st_mtim;
  sandbox_git_layout_memo_begin();
  if (find(wt, &a) < 0)
    abort();
  fd = open(dotgit, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, n) != (ssize_t)n || futimens(fd, times) < 0 || close(fd) < 0)
    abort();
  tap_ok(find(wt, &b) < 0, "`.git` rewritten in place, same size and times: walked again, refused");
  sandbox_git_layout_memo_end();
  free(a);
  free(b);
  free(dotgit);
  free(wt);
}

/* `.git` replaced by a file of the same text (another inode): refused, not the memo's */
static void test_dotgit_replaced(void) {
  char *wt = make_linked("replaced"), *dotgit = scratch_join(wt, ".git"),
       *copy = scratch_join(wt, "copy");
  char *a = NULL, *b = NULL, text[4096];
  unsigned hits;
  int r;
  FILE *f = fopen(dotgit, "r");
  size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
  if (f == NULL || fclose(f) != 0)
    abort();
  text[n] = '\0';
  sandbox_git_layout_memo_begin();
  if (find(wt, &a) < 0)
    abort();
  write_file(copy, text);
  if (rename(copy, dotgit) < 0)
    abort();
  hits = sandbox_git_layout_memo_hits();
  r = find(wt, &b);
  tap_ok(r < 0 && sandbox_git_layout_memo_hits() == hits && sandbox_git_layout_memo_changed(),
         "`.git` replaced by the same text: refused, the set-up marked changed (hits %u -> %u)",
         hits, sandbox_git_layout_memo_hits());
  sandbox_git_layout_memo_end();
  tap_ok(!sandbox_git_layout_memo_changed() && find(wt, &b) == 0,
         "after the set-up: the replaced `.git` walked, no mark left");
  free(a);
  free(b);
  free(copy);
  free(dotgit);
  free(wt);
}

/* the common dir's name now shows another directory (no repository there): refused, and the fd
 * never the kept object's */
static void test_common_swapped(void) {
  char *wt = make_linked("swapped"), *a = NULL, *b = NULL, *away = NULL;
  sandbox_git_layout_memo_begin();
  if (find(wt, &a) < 0 || asprintf(&away, "%s-away", a) < 0)
    abort();
  if (rename(a, away) < 0 || mkdir(a, 0755) < 0)
    abort();
  tap_ok(find(wt, &b) < 0, "the common dir swapped for an empty one: walked again and refused");
  sandbox_git_layout_memo_end();
  free(away);
  free(a);
  free(b);
  free(wt);
}

/* a main checkout (`.git` a directory): kept too, and a swapped `.git` walks again */
static void test_main_checkout(void) {
  char *dir = scratch_join(base, "main"), *dotgit = scratch_join(dir, ".git"),
       *away = scratch_join(dir, "away");
  char *a = NULL, *b = NULL;
  struct sandbox_git_layout l;
  cleanup_error fsrun_error_t err = NULL;
  unsigned hits;
  int r;
  struct stat st, by_fd;
  make_dir(dir);
  make_dir(dotgit);
  sandbox_git_layout_memo_begin();
  if (find(dir, &a) < 0)
    abort();
  hits = sandbox_git_layout_memo_hits();
  r = find(dir, &b);
  tap_ok(r == 0 && sandbox_git_layout_memo_hits() == hits + 1,
         "a main checkout: the second lookup kept (hits %u -> %u)", hits,
         sandbox_git_layout_memo_hits());
  if (rename(dotgit, away) < 0 || mkdir(dotgit, 0755) < 0 || stat(dotgit, &st) < 0)
    abort();
  r = sandbox_git_layout_find(dir, &l, &err);
  tap_ok(r < 0 && l.common_fd < 0 && sandbox_git_layout_memo_hits() == hits + 1,
         "its `.git` swapped for another directory: refused, no fd handed out (hits %u)",
         sandbox_git_layout_memo_hits());
  fsrun_error_release(&err);
  /* the first `.git` back: still refused, and the git prepare too (the config's binds may be of
   * the other) */
  if (rmdir(dotgit) < 0 || rename(away, dotgit) < 0)
    abort();
  r = sandbox_git_layout_find(dir, &l, &err);
  tap_ok(r < 0, "the first `.git` back: still refused: %s", err != NULL ? err->msg : "no error");
  fsrun_error_release(&err);
  struct sandbox_git_run g;
  r = sandbox_git_prepare(&g, base, "memo-test", dir, NULL, &err);
  tap_ok(r < 0 && err != NULL && strstr(err->msg, "changed while the sandbox was set up") != NULL,
         "the set-up's git prepare refuses: %s", err != NULL ? err->msg : "no error");
  sandbox_git_layout_memo_end();
  r = sandbox_git_layout_find(dir, &l, &err);
  tap_ok(r == 0 && l.common_fd >= 0 && fstat(l.common_fd, &by_fd) == 0 && by_fd.st_ino != st.st_ino,
         "after the set-up: walked, the first `.git`'s fd");
  sandbox_git_layout_free(&l);
  free(a);
  free(b);
  free(away);
  free(dotgit);
  free(dir);
}

int main(void) {
  if (mkdtemp(base) == NULL)
    return 1;
  test_kept();
  test_dotgit_rewritten();
  test_dotgit_replaced();
  test_common_swapped();
  test_main_checkout();
  return scratch_remove(base) ? tap_done() : 1;
}
