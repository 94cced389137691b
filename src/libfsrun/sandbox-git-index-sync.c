/* The run's `index`, applied by the sync only when the host's git can be handed it
 * (docs/sandbox.md, "Git"). Git trusts its index: an entry `../x` is read and written outside the
 * worktree by the host's `git diff`/`restore .`/`checkout -- .`, and the assume-valid and
 * skip-worktree bits hide the run's edits from the host's `git status`, and every extension is the
 * run's word on what the entries mean (git_index_entries_only). So the file is read once into
 * memory, walked as git walks it (sandbox-git-index.c), checked against the host's index of before
 * the run, cut to its entries (git rebuilds its caches on the host), and written from that memory,
 * with the host's index's permissions: a process the command left behind cannot change it between
 * the check and the write. The stat data of an entry the host's index did not have byte for byte
 * are zeroed on the way (sandbox-git-index-stat.h): git trusts them to say a file is unchanged. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sandbox-git-index-stat.h"
#include "sandbox-git-index.h"
#include "sandbox-git.h"
#include "utils.h"

#define INDEX_MAX_BYTES (256u * 1024 * 1024)

size_t sandbox_git_hash_size(int common_fd) {
  cleanup_free char *config = NULL;
  if (sandbox_git_read_nofollow(common_fd, "config", &config) < 0)
    return 20;
  return git_config_hash_size(config);
}

/* dir/path whole (a regular file, not followed, bounded), its mode and mtime; NULL when it cannot
 * be */
static unsigned char *read_index_file(int dir, const char *path, size_t *len, mode_t *mode,
                                      int64_t *mtime) {
  cleanup_close int fd = sandbox_git_open_beneath(dir, path, O_RDONLY | O_NONBLOCK, 0);
  cleanup_free unsigned char *buf = NULL;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size > INDEX_MAX_BYTES)
    return NULL;
  buf = xmalloc0((size_t)st.st_size + 1);
  if (safe_read_all(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size)
    return NULL;
  *len = (size_t)st.st_size;
  *mode = st.st_mode & 0666;
  *mtime = (int64_t)st.st_mtim.tv_sec;
  return steal_ptr(&buf);
}

void sandbox_git_index_before(struct sandbox_git_run *g) {
  cleanup_free char *rel = g->admin[0] ? xasprintf("%s/index", g->admin) : xstrdup("index");
  cleanup_free unsigned char *buf = NULL;
  size_t len = 0;
  mode_t mode;
  const char *why;
  g->hash_size = sandbox_git_hash_size(g->common_fd);
  buf = read_index_file(g->common_fd, rel, &len, &mode, &g->index_kept.index_mtime);
  g->index_mode = buf != NULL ? mode : 0;
  if (buf == NULL)
    return;
  if (git_index_parse_each(buf, len, g->hash_size, &g->index_before, &why, git_index_kept_add,
                           &g->index_kept) < 0)
    git_index_kept_free(&g->index_kept);
  git_index_kept_done(&g->index_kept);
}

void sandbox_git_index_gitlinks(struct sandbox_git_run *g, int upper) {
  cleanup_free char *rel = g->admin[0] ? xasprintf("%s/index", g->admin) : xstrdup("index");
  cleanup_free unsigned char *buf = NULL;
  struct git_index x;
  size_t len = 0;
  mode_t mode;
  int64_t mtime;
  const char *why;
  buf = read_index_file(upper, rel, &len, &mode, &mtime);
  if (buf == NULL || git_index_parse_each(buf, len, g->hash_size, &x, &why, NULL, NULL) < 0)
    return;
  sandbox_git_strv_free(g->gitlinks_after);
  g->gitlinks_after = steal_ptr(&x.gitlinks);
  git_index_free(&x);
}

/* why the run's index must not be applied; NULL: it may */
static char *refusal(const struct sandbox_git_run *g, const unsigned char *buf,
                     const struct git_index *x) {
  if (x->unsafe != NULL)
    return xstrdup(x->unsafe);
  if (git_index_entries_end_like_eoie(buf, g->hash_size, x))
    return xstrdup("its entries end in what a threaded git reads as an EOIE extension");
  if (x->exts & GIT_INDEX_EXT_LINK)
    return xstrdup("a split index (its shared part is not applied)");
  if (x->exts & GIT_INDEX_EXT_SDIR)
    return xstrdup("a sparse index");
  for (size_t i = 0; i < x->n_hidden; i++)
    if (!git_index_listed(g->index_before.hidden, g->index_before.n_hidden, x->hidden[i]))
      return xasprintf("`%s` marked assume-unchanged or skip-worktree, which it was not",
                       x->hidden[i]);
  return NULL;
}

bool sandbox_git_index_apply(struct sandbox_git_run *g, int upper_dir, int dst_dir,
                             const char *base) {
  size_t len = 0;
  mode_t mode = 0644;
  int64_t mtime;
  cleanup_free unsigned char *buf = read_index_file(upper_dir, base, &len, &mode, &mtime);
  cleanup_free char *refused = NULL;
  cleanup_free unsigned char *entries = NULL;
  struct git_index x;
  struct git_index_smudge smudge = {.buf = buf, .kept = &g->index_kept};
  const char *why = "not a regular file of at most 256 MiB";
  if (buf == NULL ||
      git_index_parse_each(buf, len, g->hash_size, &x, &why, git_index_stat_smudge, &smudge) < 0) {
    log_warning("sandbox: git: the run's index is left out: %s", why);
    return false;
  }
  /* the tamper report lists its new gitlinks, applied or not */
  g->index_written = true;
  sandbox_git_strv_free(g->gitlinks_after);
  g->gitlinks_after = steal_ptr(&x.gitlinks);
  refused = refusal(g, buf, &x);
  if (refused != NULL) {
    git_index_free(&x);
    log_warning("sandbox: git: the run's index is left out: %s", refused);
    return false;
  }
  entries = git_index_entries_only(buf, g->hash_size, &x, &len);
  git_index_free(&x);
  log_debug("sandbox: git: the run's index: %zu entries' stat data zeroed", smudge.smudged);
  /* the mode the host's index had (git's 0644 where there was none), never the run's */
  if (sandbox_git_write_new(dst_dir, base, entries, len, g->index_mode ? g->index_mode : 0644) < 0)
    log_warning("sandbox: git: write the index: %s", strerror(errno));
  return true;
}
