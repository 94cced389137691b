/* The git layout a run's set-up found, kept for that set-up's later lookups. A run's set-up asks
 * for the worktree's layout six times (the policy's spelling, the state root's check, the other
 * checkouts, the config, the git prepare, the audit log), each a full walk of `.git`, the admin dir
 * and the common dir (sandbox-git-layout.c). Between them no command of the run exists yet, so the
 * first walk's answer holds for the others as long as the objects it judged are the ones there:
 * each later lookup still checks the pinned worktree (sandbox_worktree_check, by its caller), then
 * that the top and `.git` are the objects the walk judged (inode and mode; a `.git` file's text
 * read again and compared byte for byte: file times alone miss a rewrite of the same size within
 * one clock tick) and that the common dir reached by its name again is the one the walk checked;
 * anything else walks again. The fd handed out is that common dir opened again, never a kept one.
 * What the walk read in the admin dir (commondir, gitdir) is the repository owner's, outside the
 * worktree and bound read-only in every sandbox. Kept only between sandbox_git_layout_memo_begin
 * and _end (a run's set-up, before its command exists): exec's lookups, beside a live command,
 * always walk. No heap: nothing to free at exit.
 *
 * The first layout is authoritative (review29 G6): the set-up binds the common dir it names and
 * mounts the overlay of the one a later lookup names, so a host process renaming `.git` between
 * two lookups could have the command write one repository directly while the overlay covers the
 * other. A lookup that finds the top, `.git` or the common dir not the objects the first walk
 * judged (or a layout where the first found none, or none where it found one), or a first walk
 * whose `.git` changed under it, marks the set-up changed: that lookup fails, and so does
 * sandbox_git_prepare, whose caller may have taken a failed lookup for "no repository". */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#define DOTGIT_TEXT_MAX 4096 /* sandbox-git-layout.c's GIT_FILE_MAX: a longer `.git` is refused */

/* the worktree's top and its `.git` as one lookup sees them */
struct dotgit_seen {
  struct stat top, dotgit;
  size_t len;
  char text[DOTGIT_TEXT_MAX + 1]; /* a `.git` file's */
};

static struct {
  bool on;      /* within a run's set-up */
  bool held;    /* a layout is kept */
  bool pending; /* a walk is under way: `before`, what it starts from */
  bool looked;  /* the first lookup is done: `had_layout` what it found */
  bool had_layout;
  bool changed; /* a lookup found other objects than the first (sandbox_git_layout_memo_changed) */
  unsigned hits;
  char worktree[PATH_MAX];
  char common_dir[PATH_MAX];
  char admin[PATH_MAX];
  struct stat common;
  struct dotgit_seen kept, before, now;
} memo;

static bool same_object(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode;
}

static bool same_seen(const struct dotgit_seen *a, const struct dotgit_seen *b) {
  return same_object(&a->top, &b->top) && same_object(&a->dotgit, &b->dotgit) && a->len == b->len &&
         memcmp(a->text, b->text, a->len) == 0;
}

/* the top (wt_fd) and its `.git`, opened as the walk opens it; false when there is none, or a
 * `.git` file too long to be a layout's */
static bool see_dotgit(int wt_fd, struct dotgit_seen *s) {
  cleanup_close int fd = openat(wt_fd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ssize_t n = 0;
  if (fd < 0 || fstat(fd, &s->dotgit) < 0 || fstat(wt_fd, &s->top) < 0)
    return false;
  if (S_ISREG(s->dotgit.st_mode)) {
    n = read(fd, s->text, sizeof(s->text));
    if (n < 0 || n > DOTGIT_TEXT_MAX)
      return false;
  }
  s->len = (size_t)n;
  return true;
}

void sandbox_git_layout_memo_begin(void) {
  memset(&memo, 0, sizeof(memo));
  memo.on = true;
}

void sandbox_git_layout_memo_end(void) {
  memset(&memo, 0, sizeof(memo));
}

unsigned sandbox_git_layout_memo_hits(void) {
  return memo.hits;
}

bool sandbox_git_layout_memo_changed(void) {
  return memo.changed;
}

/* the set-up marked changed: the lookup's error */
static int changed(const char *worktree, fsrun_error_t *err) {
  memo.changed = true;
  memo.pending = false;
  return fsrun_error_make(err, EAGAIN,
                          "worktree `%s`: its `.git` or git common dir changed while the sandbox "
                          "was set up; run it again",
                          worktree);
}

int sandbox_git_layout_memo_take(const char *worktree, int wt_fd, struct sandbox_git_layout *out,
                                 fsrun_error_t *err) {
  cleanup_close int common_fd = -1;
  struct stat common;
  memo.pending = memo.on && see_dotgit(wt_fd, &memo.before);
  if (memo.on && memo.changed)
    return changed(worktree, err);
  if (memo.held && (!memo.pending || !same_seen(&memo.before, &memo.kept)))
    return changed(worktree, err);
  if (!memo.pending || !memo.held)
    return 0;
  common_fd = open(memo.common_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (common_fd < 0 || fstat(common_fd, &common) < 0 || !same_object(&common, &memo.common))
    return changed(worktree, err);
  out->common_dir = xstrdup(memo.common_dir);
  out->admin = xstrdup(memo.admin);
  out->common_fd = steal_fd(&common_fd);
  memo.pending = false;
  memo.hits++;
  return 1;
}

int sandbox_git_layout_memo_keep(const char *worktree, int wt_fd,
                                 const struct sandbox_git_layout *l, fsrun_error_t *err) {
  bool pending = memo.pending, first = !memo.looked;
  memo.pending = false;
  if (!memo.on)
    return 0;
  memo.looked = true;
  if (first)
    memo.had_layout = l->common_dir != NULL;
  else if (memo.had_layout != (l->common_dir != NULL))
    return changed(worktree, err); /* a layout where the first found none, or none now */
  if (!first || l->common_dir == NULL)
    return 0; /* a later walk (the first's objects unknown: too long to keep), or no repository */
  /* the top and `.git` after the first walk must be those before it: the walk judged them */
  if (!pending || !see_dotgit(wt_fd, &memo.now) || !same_seen(&memo.now, &memo.before) ||
      fstat(l->common_fd, &memo.common) < 0)
    return changed(worktree, err);
  if (strlen(worktree) >= sizeof(memo.worktree) ||
      strlen(l->common_dir) >= sizeof(memo.common_dir) || strlen(l->admin) >= sizeof(memo.admin))
    return 0;
  memo.kept = memo.now;
  snprintf(memo.worktree, sizeof(memo.worktree), "%s", worktree);
  snprintf(memo.common_dir, sizeof(memo.common_dir), "%s", l->common_dir);
  snprintf(memo.admin, sizeof(memo.admin), "%s", l->admin);
  memo.held = true;
  return 0;
}
