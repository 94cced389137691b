/* The nested repositories a run made in the worktree, which the host's git would enter (a gitlink
 * in the index: `git status` recurses into it and runs its core.fsmonitor) or could be made to
 * enter (an embedded `.git` that a host-side `git add -A` registers as a gitlink):
 *  - gitlinks: the mode 160000 entries of the index the run wrote that the host's index did not
 *    have before (walked as git walks it, sandbox-git-index.c; listed even when the sync left that
 *    index out);
 *  - nested git dirs: a `.git` (file or directory) below the top when it, or a directory on its
 *    path below the top, has a ctime not before the run's start at that ctime's grain (a whole
 *    second on ext2/3 and 128-byte-inode ext4, file-time.h) (a repository made elsewhere and
 *    renamed into place changes only the renamed directory's ctime), found by a bounded walk
 *    (TAMPER_MAX_DEPTH levels, TAMPER_MAX_DIRS directories, not into `.git`) that looks into a
 *    `node_modules` only for `node_modules/X/.git` and `node_modules/@S/X/.git`; where the top's
 *    file times are not trusted (a ctime may be put back), also when the walk before the run did
 *    not find it as it is now (sandbox-git-dotgits.c). */
#include "sandbox-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-time.h"
#include "json-out.h"
#include "log.h"
#include "sandbox-paths.h"
#include "utils.h"

#define TAMPER_MAX_DEPTH 6
#define TAMPER_MAX_DIRS  20000

struct walk {
  char **found;
  size_t n_found, dirs;
  struct timespec start;
  dev_t top_dev, asked_dev; /* the top's filesystem; the last other one asked about its times */
  bool below_untrusted;     /* a filesystem mounted below the top whose times may miss writes */
  /* where the top's times are not trusted: the entries found before the run, and those found now
   * (NULL: times decide alone) */
  const struct sandbox_git_dotgits *before;
  struct sandbox_git_dotgits *seen;
  bool nested_seen; /* a `.git` dir below the top, new or not (own_git_dir) */
  /* the run: its common dir, where a nested `.git` file's git dir may be (NULL: not looked at) */
  const struct sandbox_git_run *g;
};

/* at the ctime's own grain: a filesystem of whole seconds stores a change made in the cutoff's
 * second at that second's start, before the cutoff (review23 A3) */
static bool changed(const struct walk *w, const struct stat *st) {
  return file_time_reached(&st->st_ctim, &w->start);
}

/* a nested `.git` that holds its repository's config and hooks (a directory, or a link), not a
 * `.git` file: a linked worktree's or an absorbed submodule's, whose git dir is most often in
 * the common dir (read-only to a run; a gitdir elsewhere in the worktree is not seen: docs) */
static bool own_git_dir(const struct stat *st) {
  return !S_ISREG(st->st_mode);
}

/* A cutoff of 20 ms before the run (sandbox_git_prepare's, kept for exec) named the linked
 * worktrees the host's `git worktree add` had just made as the run's. */
struct timespec *sandbox_git_tamper_cutoff(struct sandbox_git_run *g,
                                           const struct timespec *began) {
  if (g->common_dir == NULL)
    return NULL; /* no repository: no walk */
  g->start = *began;
  return &g->start;
}

/* past the cap, the list says it was cut (sandbox_git_tamper_settle), never nothing */
static void report(struct walk *w, const char *rel) {
  if (w->n_found >= SANDBOX_GIT_MAX_REPORTED)
    rel = SANDBOX_GIT_TAMPER_MORE;
  for (size_t i = 0; i < w->n_found; i++)
    if (strcmp(w->found[i], rel) == 0)
      return; /* a gitlink of the index read again after the sync, named before it */
  sandbox_git_strv_push(&w->found, &w->n_found, rel);
}

/* rel, a file git would open and block on or fail to read (a FIFO, a device, a socket, a link
 * to one): named on every walk while it is there, as a config fsrun cannot read (review26 D2:
 * no -c option keeps git from opening it, so "cannot disarm" makes the host's git fail at once
 * instead of hanging) */
static void report_not_regular(struct walk *w, const char *rel) {
  cleanup_free char *entry =
      xasprintf("config:unread:%s (not a regular file: git's open of it would wait or fail)", rel);
  report(w, entry);
}

/* a nested `.git` file naming a git dir other than a submodule's in the common dir: a repository
 * that git run in that directory (a host git with it as cwd) discovers, with a config the run
 * wrote (review26 D4) or one that runs the run's files there (review27 E1); not looked at where
 * the common dir is not known (delete's and pause's walks: docs) */
static bool gitfile_elsewhere(const struct walk *w, int dir, const struct stat *st) {
  return S_ISREG(st->st_mode) && w->g != NULL && w->g->common_dir != NULL &&
         sandbox_git_gitfile_elsewhere(dir, w->g);
}

/* A nested git dir's files that git opens by name when it meets the repository (its discovery's
 * is_git_directory reads HEAD, and commondir where there is one): a FIFO there made the host's
 * `status` and `add -A` wait in open() for ever, as a FIFO `.gitignore` does (review26 D2, the
 * reviewer's t7). stat, never open: a FIFO's stat does not wait. */
static void check_git_dir_files(struct walk *w, int dir, const char *rel) {
  static const char *const names[] = {"HEAD", "commondir"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    struct stat st;
    cleanup_free char *name = xasprintf(".git/%s", names[i]);
    if (fstatat(dir, name, &st, 0) < 0 || S_ISREG(st.st_mode))
      continue; /* none (git's to refuse), or one git reads */
    cleanup_free char *path = xasprintf("%s/%s", rel, names[i]);
    report_not_regular(w, path);
  }
}

/* dir/.git (rel), reported when it or its path (path_changed) changed during the run, or where
 * times are not trusted when the walk before the run did not find it so */
static void check_dotgit(struct walk *w, int dir, const char *rel, bool path_changed) {
  struct stat st;
  struct sandbox_git_dotgit e;
  bool named;
  if (fstatat(dir, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  w->nested_seen = w->nested_seen || own_git_dir(&st) || gitfile_elsewhere(w, dir, &st);
  if (own_git_dir(&st))
    check_git_dir_files(w, dir, rel);
  named = path_changed || changed(w, &st);
  if (w->seen != NULL) {
    sandbox_git_dotgit_of(&e, dir, rel, &st);
    named = named || !sandbox_git_dotgits_has(w->before, &e);
    sandbox_git_dotgits_push(w->seen, &e);
  }
  if (named)
    report(w, rel);
}

/* a directory on another filesystem than the top's (a tmpfs at `node_modules` of a disk
 * worktree): the host's index is made racily clean after the run when that one's times may miss
 * writes (review24 B3; the top's own are asked by sandbox_git_tamper) */
static void ask_times(struct walk *w, int fd, const struct stat *st) {
  if (st->st_dev == w->top_dev || st->st_dev == w->asked_dev || w->below_untrusted)
    return;
  w->asked_dev = st->st_dev;
  w->below_untrusted = sandbox_git_times_untrusted(fd);
}

/* dir/name, a directory (not followed): its fd, whether it changed; -1 when it is none (a file
 * whose readdir type was DT_UNKNOWN: ENOTDIR, skipped like a typed one) */
static int open_sub(struct walk *w, int dir, const char *name, bool *sub_changed) {
  struct stat st;
  int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && fstat(fd, &st) == 0) {
    *sub_changed = changed(w, &st);
    ask_times(w, fd, &st);
  }
  if (fd >= 0)
    w->dirs++;
  return fd;
}

/* what readdir says may be a directory: DT_UNKNOWN too, on filesystems that give no types (ext4
 * without `filetype`, XFS ftype=0, NFSv3's READDIR, many FUSE): skipping it there missed every
 * nested repository (review24 B2); open_sub's O_DIRECTORY|O_NOFOLLOW refuses what is not one */
static bool may_be_dir(const struct dirent *e) {
  return e->d_type == DT_DIR || e->d_type == DT_UNKNOWN;
}

/* a stream of dir's entries (its own fd: dir stays the caller's) */
static DIR *dir_stream(int dir) {
  int fd = dup(dir);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (d == NULL && fd >= 0)
    close(fd);
  return d;
}

/* node_modules: only its packages' own `.git` (X/.git, @S/X/.git): cheap, one level of names */
static void walk_packages(struct walk *w, int dir, const char *prefix, bool path_changed,
                          bool scoped) {
  cleanup_dir DIR *d = dir_stream(dir);
  struct dirent *e;
  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL && w->dirs < TAMPER_MAX_DIRS) {
    cleanup_free char *rel = NULL;
    cleanup_close int sub = -1;
    bool sub_changed = false;
    if (!may_be_dir(e) || e->d_name[0] == '.')
      continue;
    rel = xasprintf("%s/%s", prefix, e->d_name);
    sub = open_sub(w, dirfd(d), e->d_name, &sub_changed);
    if (sub < 0)
      continue;
    if (!scoped && e->d_name[0] == '@') {
      walk_packages(w, sub, rel, path_changed || sub_changed, true);
    } else {
      cleanup_free char *dotgit = xasprintf("%s/.git", rel);
      check_dotgit(w, sub, dotgit, path_changed || sub_changed);
    }
  }
}

/* the files git opens by name in every directory it reads (a FIFO there: its open waits forever) */
static bool git_reads_by_name(const char *name) {
  return strcmp(name, ".gitignore") == 0 || strcmp(name, ".gitattributes") == 0 ||
         strcmp(name, ".gitmodules") == 0 || strcmp(name, ".mailmap") == 0;
}

/* dir/name of the names git opens in every directory it reads, when it is no regular file; a
 * link to nothing or to a regular file is git's to refuse or read */
static void check_read_by_name(struct walk *w, int dir, const char *prefix,
                               const struct dirent *e) {
  struct stat st;
  if (e->d_type == DT_REG || e->d_type == DT_DIR || !git_reads_by_name(e->d_name))
    return;
  if (fstatat(dir, e->d_name, &st, 0) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    return; /* stat does not open: a FIFO's stat never waits */
  cleanup_free char *rel = xasprintf("%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
  report_not_regular(w, rel);
}

static void walk_nested(struct walk *w, int dir, const char *prefix, int depth, bool path_changed) {
  cleanup_dir DIR *d = dir_stream(dir);
  struct dirent *e;
  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL && w->dirs < TAMPER_MAX_DIRS) {
    cleanup_free char *rel = NULL;
    cleanup_close int sub = -1;
    bool sub_changed = false;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (strcmp(e->d_name, ".git") == 0) {
      if (depth > 0) {
        rel = xasprintf("%s/.git", prefix);
        check_dotgit(w, dirfd(d), rel, path_changed);
      }
      continue;
    }
    check_read_by_name(w, dirfd(d), prefix, e);
    if (!may_be_dir(e) || depth + 1 >= TAMPER_MAX_DEPTH)
      continue;
    sub = open_sub(w, dirfd(d), e->d_name, &sub_changed);
    if (sub < 0)
      continue;
    /* only now: a walk meets mostly files (a name each would be an allocation each) */
    rel = prefix[0] ? xasprintf("%s/%s", prefix, e->d_name) : xstrdup(e->d_name);
    if (strcmp(e->d_name, "node_modules") == 0)
      walk_packages(w, sub, rel, path_changed || sub_changed, false);
    else
      walk_nested(w, sub, rel, depth + 1, path_changed || sub_changed);
  }
}

/* the run's gitlinks the host's index did not have, in the run's index order; the host's list is
 * searched sorted (a copy of its pointers): both can hold millions, a linear search is quadratic */
static void report_new_gitlinks(struct walk *w, const struct sandbox_git_run *g) {
  size_t n = g->index_before.n_gitlinks;
  cleanup_free char **before = n > 0 ? xmalloc0(n * sizeof(char *)) : NULL;
  if (n > 0)
    memcpy(before, g->index_before.gitlinks, n * sizeof(char *));
  git_index_sort_paths(before, n);
  for (char **l = g->gitlinks_after; l != NULL && *l != NULL; l++)
    if (!git_index_listed(before, n, *l))
      report(w, *l);
}

void sandbox_git_tamper_add_gitlinks(struct sandbox_git_run *g) {
  struct walk w = {.found = g->tamper};
  while (w.found != NULL && w.found[w.n_found] != NULL)
    w.n_found++;
  report_new_gitlinks(&w, g);
  g->tamper = w.found;
  sandbox_git_tamper_settle(&g->tamper);
}

/* the worktree's top, when it is the object checked before the run (sandbox_worktree_check: the
 * one-shot run's --worktree, a task container's bind); -1 and "." reported when its name leads
 * elsewhere now: a walk of that tree says nothing of this one's (review23 A1) */
static int open_top(struct walk *w, const char *worktree) {
  cleanup_error fsrun_error_t err = NULL;
  int top = sandbox_git_top_checked(worktree, &err);
  if (err == NULL)
    return top;
  log_warning("git: %s: the walk for nested repositories cannot tell", err->msg);
  report(w, SANDBOX_GIT_TAMPER_UNWALKED);
  return -1;
}

static void walk_top(struct walk *w, int top) {
  struct stat st;
  if (fstat(top, &st) == 0)
    w->top_dev = w->asked_dev = st.st_dev;
  /* the top's own ctime is not the path's: any new file at the top changes it */
  walk_nested(w, top, "", 0, false);
}

char **sandbox_git_tamper(struct sandbox_git_run *g, const char *worktree) {
  int top;
  struct walk w = {.start = g->start, .before = &g->dotgits_before, .g = g};
  clock_gettime(CLOCK_REALTIME_COARSE, &g->walk_began);
  /* held: the config's digests and hostGitArgs' reread go through the top walked */
  sandbox_git_top_hold(g, open_top(&w, worktree));
  top = g->top_fd;
  g->times_untrusted = top < 0 || sandbox_git_times_untrusted(top);
  report_new_gitlinks(&w, g);
  if (top < 0)
    return w.found;
  if (g->times_untrusted) {
    sandbox_git_dotgits_free(&g->dotgits_after);
    w.seen = &g->dotgits_after;
  }
  walk_top(&w, top);
  g->dotgits_after.taken = w.seen != NULL;
  g->times_untrusted = g->times_untrusted || w.below_untrusted;
  g->nested_seen = w.nested_seen || sandbox_git_gitlinks_own_repository(g, top);
  if (g->nested_seen)
    log_warning("git: the worktree holds a repository of its own below its top (a `.git` "
                "directory or link, or a `.git` file naming a git dir but a submodule's in the "
                "common dir whose configs name no file): the host's git runs its config, which "
                "the command could write or which runs the command's files; hostGitArgs cannot "
                "disarm (docs/sandbox.md)");
  return w.found;
}

void sandbox_git_dotgits_before(struct sandbox_git_run *g, const char *worktree) {
  cleanup_close int top = -1;
  /* nothing changed since a start in the far future: the walk only lists */
  struct walk w = {.start = {.tv_sec = (time_t)INT64_MAX}, .before = &g->dotgits_before};
  sandbox_git_dotgits_free(&g->dotgits_before);
  if (g->common_dir == NULL)
    return; /* no repository: no walk after the run either */
  top = open_top(&w, worktree);
  if (top >= 0 && sandbox_git_times_untrusted(top)) {
    struct sandbox_git_dotgits seen = {0};
    w.seen = &seen;
    walk_top(&w, top);
    sandbox_git_dotgits_sort(&seen);
    seen.taken = true;
    g->dotgits_before = seen;
  }
  sandbox_git_strv_free(w.found);
}

void sandbox_git_warn_json_list(const char *context, const char *said, char **list) {
  struct strbuf text = {0};
  if (list == NULL || *list == NULL)
    return;
  /* whole, however long: a reader of a cut list cannot tell what it held */
  sb_printf(&text, "%s: %s", context, said);
  sb_json_array(&text, list);
  fsrun_log_whole(LOG_LEVEL_WARNING, text.data);
  free(text.data);
}

void sandbox_git_warn_tamper(const char *context, char **tamper) {
  sandbox_git_warn_json_list(context,
                             "the command made nested git repositories or changed files the "
                             "repository's config or its hooks have the host's git run (do not "
                             "trust the host's git with them)" SANDBOX_GIT_TAMPER_LINE_TAG,
                             tamper);
}
