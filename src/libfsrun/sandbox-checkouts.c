/* writablePaths against the other checkouts of the worktree's repository (review26 D6): the host's
 * git in the main checkout and in every other linked worktree runs the repository's drivers on
 * their files (a filter's `sh tools/clean.sh`), and the tamper walk and the digests cover the
 * worktree alone. An entry that is or holds another checkout (`~`, the repository's root, its
 * `.worktrees`) lets the command rewrite a script there that the host's git then runs: refused,
 * as the state root is (docs/sandbox.md). An entry the caller names inside another checkout is
 * its explicit choice, not refused (docs). */
#include "sandbox-checkouts.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <strings.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"
#include "sandbox-git.h"
#include "sandbox-internal.h"
#include "sandbox-state-root.h"
#include "utils.h"

/* the whole of a small file (below PATH_MAX bytes) as git reads it: trailing CR/LF cut, nothing
 * else; NULL when it is not a regular file, too long, or holds a NUL or another control byte */
static char *read_pointer_file(int dir, const char *name, char buf[PATH_MAX + 1]) {
  cleanup_close int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  ssize_t n;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return NULL;
  n = read(fd, buf, PATH_MAX + 1);
  if (n <= 0 || n > PATH_MAX)
    return NULL;
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    n--;
  buf[n] = '\0';
  for (ssize_t i = 0; i < n; i++)
    if ((unsigned char)buf[i] < 0x20)
      return NULL;
  return buf;
}

/* the linked worktree <common>/worktrees/<name> points back to (its `gitdir` file: the path of
 * that worktree's `.git`, absolute or, as git 2.48's worktree.useRelativePaths writes it,
 * relative to that admin dir), or NULL */
static char *linked_checkout(const char *common_dir, int worktrees, const char *name) {
  char buf[PATH_MAX + 1];
  cleanup_free char *rel = xasprintf("%s/gitdir", name);
  cleanup_free char *joined = NULL, *clean = NULL;
  char *slash;
  if (read_pointer_file(worktrees, rel, buf) == NULL)
    return NULL;
  joined = buf[0] == '/' ? xstrdup(buf) : xasprintf("%s/worktrees/%s/%s", common_dir, name, buf);
  clean = path_clean_abs(joined);
  slash = clean == NULL ? NULL : strrchr(clean, '/');
  if (slash == NULL || strcmp(slash, "/.git") != 0 || slash == clean)
    return NULL;
  *slash = '\0';
  return xstrdup(clean);
}

/* core.worktree of the common dir's own config, as an absolute path, or NULL (read plainly: a
 * `[core]` section's `worktree = VALUE`, quotes dropped; relative to the git dir) */
static char *config_worktree(const struct sandbox_git_layout *l) {
  cleanup_close int fd =
      openat(l->common_fd, "config", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_file FILE *f = NULL;
  cleanup_free char *line = NULL, *found = NULL;
  size_t cap = 0;
  bool in_core = false;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "r")) == NULL)
    return NULL;
  fd = -1;
  while (getline(&line, &cap, f) > 0) {
    char *w = line + strspn(line, " \t"), *v;
    w[strcspn(w, "\r\n")] = '\0';
    if (*w == '[') {
      in_core = strncasecmp(w, "[core]", 6) == 0;
      continue;
    }
    if (!in_core || strncasecmp(w, "worktree", 8) != 0 || strchr(" \t=", w[8]) == NULL)
      continue;
    v = strchr(w, '=');
    if (v == NULL)
      continue;
    v += 1 + strspn(v + 1, " \t\"");
    v[strcspn(v, "\"")] = '\0';
    free(found);
    found = v[0] == '/' ? xstrdup(v) : xasprintf("%s/%s", l->common_dir, v);
  }
  return found == NULL ? NULL : path_clean_abs(found);
}

/* the checkouts of l's repository: the main one (a common dir named `.git`: its parent; the
 * config's core.worktree) and every linked worktree, NULL-terminated */
static char **checkouts_of(const struct sandbox_git_layout *l) {
  char **v = NULL;
  size_t n = 0;
  const char *base = strrchr(l->common_dir, '/');
  int fd = openat(l->common_fd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  cleanup_free char *configured = config_worktree(l);
  struct dirent *e;
  if (d == NULL && fd >= 0)
    close(fd);
  if (base != NULL && strcmp(base, "/.git") == 0 && base > l->common_dir) {
    cleanup_free char *main = xstrdup(l->common_dir);
    main[base - l->common_dir] = '\0';
    sandbox_git_strv_push(&v, &n, main);
  }
  if (configured != NULL)
    sandbox_git_strv_push(&v, &n, configured);
  while (d != NULL && (e = readdir(d)) != NULL) {
    cleanup_free char *path =
        e->d_name[0] == '.' ? NULL : linked_checkout(l->common_dir, dirfd(d), e->d_name);
    if (path != NULL)
      sandbox_git_strv_push(&v, &n, path);
  }
  return v;
}

/* 0, or the refusal naming the entry that reaches checkout (not the worktree itself) */
static int check_checkout(const oci_policy *p, const char *checkout, const char *worktree,
                          fsrun_error_t *err) {
  cleanup_free char *real = realpath(checkout, NULL);
  ssize_t i = -1;
  if (real == NULL || strcmp(real, worktree) == 0)
    return 0; /* gone (git worktree prune's business), or the worktree: bound as the run's */
  if (sandbox_writable_reaches(p, real, &i) < 0)
    return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they reach `%s`",
                             real);
  if (i < 0)
    return 0;
  return fsrun_error_make(err, 0,
                          "policy: writablePaths[%zd]: `%s` reaches `%s`, another checkout of the "
                          "worktree's repository, whose files the host's git runs (a driver's "
                          "script) and no walk of this worktree sees: name a directory outside it",
                          i, p->writable_paths.items[i], real);
}

/* A main checkout of a separate git dir (`git init --separate-git-dir`: a common dir not named
 * `.git`, no core.worktree) is known from the repository only by its `.git` file naming the common
 * dir (review27 E3), or a `.git` link to it: each writablePaths entry outside the worktree is
 * walked for one, SCAN_DEPTH levels and SCAN_DIRS directories at most; an entry with more, not all
 * looked at, cannot be told and is refused. */
#define SCAN_DEPTH 6
#define SCAN_DIRS  4096

struct scan {
  const char *common_real;
  size_t dirs;
};

/* dir's `.git` is a file naming the common dir, or a link to it (review27: both are what git
 * takes as this checkout's git dir) */
static bool names_common(int dir, const struct scan *s) {
  char buf[PATH_MAX + 1], real[PATH_MAX];
  char *t = read_pointer_file(dir, ".git", buf);
  cleanup_close int target = -1;
  if (t != NULL && strncmp(t, "gitdir:", 7) == 0) {
    t += 7 + strspn(t + 7, " \t");
    target = openat(dir, t, O_PATH | O_DIRECTORY | O_CLOEXEC);
  } else if (t == NULL) {
    target = openat(dir, ".git", O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  return target >= 0 && sandbox_git_real_path_of(target, real) && strcmp(real, s->common_real) == 0;
}

/* 1: a checkout of the common dir is dir or below it; 0: none; -1: past the walk's bounds (more
 * directories than SCAN_DIRS, or one below SCAN_DEPTH levels: not looked at, so not known) */
static int scan_for_checkout(int dir, int depth, struct scan *s) {
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *e;
  int r = 0;
  if (names_common(dir, s))
    return 1;
  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return 0; /* unreadable: the caller's own files cannot be there either */
  }
  while (r == 0 && (e = readdir(d)) != NULL) {
    cleanup_close int sub = -1;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        strcmp(e->d_name, ".git") == 0 || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
      continue;
    sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
      continue;
    r = ++s->dirs > SCAN_DIRS || depth == SCAN_DEPTH ? -1 : scan_for_checkout(sub, depth + 1, s);
  }
  return r;
}

static int check_separate_main(const oci_policy *p, const struct sandbox_git_layout *l,
                               const char *worktree, fsrun_error_t *err) {
  char common_real[PATH_MAX];
  for (size_t i = 0; i < p->writable_paths.len; i++) {
    const char *w = p->writable_paths.items[i];
    cleanup_free char *real = w[0] == '/' ? realpath(w, NULL) : NULL;
    cleanup_close int fd = real ? open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    struct scan s = {.common_real = common_real};
    int r;
    if (fd < 0 || path_within(real, worktree))
      continue; /* missing (made empty), relative (refused where bound), or the run's own tree */
    if (!sandbox_git_real_path_of(l->common_fd, common_real))
      return fsrun_error_make(err, 0, "worktree: cannot tell where its git common dir is");
    r = scan_for_checkout(fd, 0, &s);
    if (r > 0)
      return fsrun_error_make(err, 0,
                              "policy: writablePaths[%zu]: `%s` holds a checkout of the "
                              "worktree's repository (a `.git` file naming its git dir `%s`), "
                              "whose files the host's git runs: name a directory outside it",
                              i, w, common_real);
    if (r < 0)
      return fsrun_error_make(
          err, 0,
          "policy: writablePaths[%zu]: `%s` holds more than %d directories "
          "or more than %d levels: cannot tell whether it holds the main checkout "
          "of the worktree's repository, whose git dir `%s` is not named "
          "`.git`: name a smaller directory",
          i, w, SCAN_DIRS, SCAN_DEPTH, common_real);
  }
  return 0;
}

/* An entry that is the common dir or lies in it (refs, objects, info/, hooks, other worktrees'
 * admin dirs) would be bound over the overlay the run's git writes through, its writes never
 * seen by the sync's allowlist (review27 E8); one that holds it likewise, unless the common dir
 * is in the worktree (a main checkout's `.git`: the worktree's bind over the entry's keeps the
 * overlay). */
static int check_common_dir(const oci_policy *p, const struct sandbox_git_layout *l,
                            const char *worktree, fsrun_error_t *err) {
  for (size_t i = 0; i < p->writable_paths.len; i++) {
    oci_policy one = {.writable_paths = {.items = &p->writable_paths.items[i], .len = 1}};
    ssize_t hit = sandbox_writable_within(&one, l->common_dir);
    if (hit < 0 && !path_within(l->common_dir, worktree) &&
        sandbox_writable_reaches(&one, l->common_dir, &hit) < 0)
      return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they reach `%s`",
                               l->common_dir);
    if (hit >= 0)
      return fsrun_error_make(err, 0,
                              "policy: writablePaths[%zu]: `%s` is, holds or lies in `%s`, the git "
                              "dir of the worktree's repository (its refs, objects, attributes and "
                              "the other checkouts' admin dirs), which the run writes only through "
                              "its overlay: name a directory outside it",
                              i, p->writable_paths.items[i], l->common_dir);
  }
  return 0;
}

int sandbox_check_other_checkouts(const oci_policy *p, const char *worktree, fsrun_error_t *err) {
  cleanup_error fsrun_error_t ignored = NULL;
  struct sandbox_git_layout l;
  const char *base;
  char **checkouts;
  int r = 0;
  if (p->writable_paths.len == 0)
    return 0;
  if (sandbox_git_layout_find(worktree, &l, &ignored) < 0 || l.common_dir == NULL) {
    sandbox_git_layout_free(&l);
    return 0; /* no repository (or one the git set-up refuses on its own) */
  }
  checkouts = checkouts_of(&l);
  for (char **c = checkouts; r == 0 && c != NULL && *c != NULL; c++)
    r = check_checkout(p, *c, worktree, err);
  sandbox_git_strv_free(checkouts);
  if (r == 0)
    r = check_common_dir(p, &l, worktree, err);
  base = strrchr(l.common_dir, '/');
  if (r == 0 && (base == NULL || strcmp(base, "/.git") != 0))
    r = check_separate_main(p, &l, worktree, err);
  sandbox_git_layout_free(&l);
  return r;
}
