#include "sandbox-state-root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"
#include "sandbox-git.h"
#include "sandbox-internal.h"
#include "utils.h"

/* the kernel's own limit on links followed in one lookup */
#define MAX_LINKS 40
/* more `..` steps than any directory has ancestors */
#define MAX_DEPTH (PATH_MAX / 2)

/* the writablePaths entries by identity, as their binds follow them (valid: the entry exists) */
struct entry_ids {
  struct stat *st;
  bool *valid;
  size_t len;
};

static bool same_inode(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static ssize_t id_index(const struct entry_ids *ids, const struct stat *st) {
  for (size_t i = 0; i < ids->len; i++)
    if (ids->valid[i] && same_inode(&ids->st[i], st))
      return (ssize_t)i;
  return -1;
}

/* *hit: the first id that is dir or one of its ancestors, walked by `..` as the kernel does
 * (across mount points, so a bind-mounted alias is met by what it shows), or -1. 0, or -1 with
 * errno: nothing is known. */
static int ancestor_among(int dir, const struct entry_ids *ids, ssize_t *hit) {
  struct stat root, st;
  cleanup_close int cur = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  *hit = -1;
  if (cur < 0 || stat("/", &root) < 0)
    return -1;
  for (int depth = 0; depth < MAX_DEPTH; depth++) {
    int up;
    if (fstat(cur, &st) < 0)
      return -1;
    *hit = id_index(ids, &st);
    if (*hit >= 0 || same_inode(&st, &root))
      return 0;
    up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (up < 0)
      return -1;
    close(cur);
    cur = up;
  }
  errno = ELOOP;
  return -1;
}

/* pops the first component of *rest (NUL-terminated in place) */
static char *pop_component(char **rest) {
  char *comp = *rest + strspn(*rest, "/"), *slash = strchr(comp, '/');
  *rest = slash ? slash + 1 : comp + strlen(comp);
  if (slash)
    *slash = '\0';
  return comp;
}

/* *todo becomes the link comp (in cur) followed by rest; cur becomes `/` for an absolute one */
static int splice_link(int *cur, const char *comp, const char *rest, char **todo) {
  char target[PATH_MAX];
  ssize_t n = readlinkat(*cur, comp, target, sizeof(target) - 1);
  char *spliced;
  if (n <= 0)
    return -1;
  target[n] = '\0';
  if (target[0] == '/') {
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
      return -1;
    close(*cur);
    *cur = root;
  }
  spliced = xasprintf("%s/%s", target, rest);
  free(*todo);
  *todo = spliced;
  return 0;
}

/* Looks path up from `/` (or the working directory) as the kernel would, and checks against ids
 * every directory the command could change that lookup in: each one a link is read in, and the
 * last one reached (path, or where fsrun will make what is missing of it). *root: path's
 * identity where it exists (st_ino 0: it does not). 0 with *hit, or -1 with errno. */
static int walk_way(const char *path, const struct entry_ids *ids, ssize_t *hit,
                    struct stat *root) {
  cleanup_free char *todo = xstrdup(path);
  cleanup_close int cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  size_t rest_at = 0;
  int links = 0;
  *root = (struct stat){0};
  if (cur < 0)
    return -1;
  for (;;) {
    char *rest = todo + rest_at, *comp;
    struct stat st;
    int next;
    if (rest[strspn(rest, "/")] == '\0')
      return fstat(cur, root) < 0 ? -1 : ancestor_among(cur, ids, hit);
    comp = pop_component(&rest);
    rest_at = (size_t)(rest - todo);
    if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return errno == ENOENT ? ancestor_among(cur, ids, hit) : -1;
    if (S_ISLNK(st.st_mode)) {
      if (ancestor_among(cur, ids, hit) < 0 || *hit >= 0)
        return *hit >= 0 ? 0 : -1;
      if (++links > MAX_LINKS) {
        errno = ELOOP;
        return -1;
      }
      if (splice_link(&cur, comp, rest, &todo) < 0)
        return -1;
      rest_at = 0;
      continue;
    }
    next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    /* a file on the way: no state root can be made there; cur is the last place the command has */
    if (next < 0)
      return errno == ENOTDIR ? ancestor_among(cur, ids, hit) : -1;
    close(cur);
    cur = next;
  }
}

/* the first existing entry that lies in the directory root (the state root), or -1 */
static ssize_t entry_in_dir(const oci_policy *p, const struct entry_ids *ids,
                            const struct stat *root) {
  struct entry_ids root_id = {.st = (struct stat *)root, .valid = &(bool){true}, .len = 1};
  for (size_t i = 0; i < ids->len && root->st_ino != 0; i++) {
    cleanup_close int fd = -1;
    ssize_t hit;
    if (!ids->valid[i])
      continue;
    fd = open(p->writable_paths.items[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && ancestor_among(fd, &root_id, &hit) == 0 && hit == 0)
      return (ssize_t)i;
  }
  return -1;
}

/* the first entry whose spelling holds path's (or_inside: or lies in it; what does not exist yet
 * is made there as spelled), or -1 */
static ssize_t spelled_overlap(const oci_policy *p, const char *path, bool or_inside) {
  cleanup_free char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
  cleanup_free char *joined = cwd ? xasprintf("%s/%s", cwd, path) : xstrdup(path);
  cleanup_free char *clean = path_clean_abs(joined);
  for (size_t i = 0; i < p->writable_paths.len; i++) {
    cleanup_free char *w = NULL;
    if (p->writable_paths.items[i][0] != '/')
      continue; /* refused, by name, where it is used */
    w = path_clean_abs(p->writable_paths.items[i]);
    if (path_within(clean, w) || (or_inside && path_within(w, clean)))
      return (ssize_t)i;
  }
  return -1;
}

static void entry_ids_load(const oci_policy *p, struct entry_ids *ids) {
  ids->len = p->writable_paths.len;
  ids->st = xmalloc0((ids->len + 1) * sizeof(*ids->st));
  ids->valid = xmalloc0((ids->len + 1) * sizeof(*ids->valid));
  for (size_t i = 0; i < ids->len; i++) {
    const char *w = p->writable_paths.items[i];
    ids->valid[i] = w[0] == '/' && stat(w, &ids->st[i]) == 0 && S_ISDIR(ids->st[i].st_mode);
  }
}

/* *hit: the first entry that reaches the directory path (or_inside: lying in it counts too) */
static int writable_over(const oci_policy *p, const char *path, bool or_inside, ssize_t *hit) {
  struct entry_ids ids;
  struct stat found;
  int r = 0;
  *hit = spelled_overlap(p, path, or_inside);
  if (*hit >= 0 || p->writable_paths.len == 0)
    return 0;
  entry_ids_load(p, &ids);
  r = walk_way(path, &ids, hit, &found);
  if (r == 0 && *hit < 0 && or_inside)
    *hit = entry_in_dir(p, &ids, &found);
  free(ids.st);
  free(ids.valid);
  return r;
}

int sandbox_writable_reaches(const oci_policy *p, const char *path, ssize_t *hit) {
  return writable_over(p, path, false, hit);
}

int sandbox_writable_over_state_root(const oci_policy *p, const char *state_root, ssize_t *hit) {
  return writable_over(p, state_root, true, hit);
}

/* An ordinary user's per-run git dirs may be in /dev/shm (sandbox-git-shm.c): an entry that holds
 * it lets the command write them, its own run's overlay upper dir and other runs' alike. */
static int check_shm(const oci_policy *p, const char *state_root, fsrun_error_t *err) {
  ssize_t i;
  if (!sandbox_git_shm_may_use(state_root))
    return 0;
  if (writable_over(p, SANDBOX_GIT_SHM_DIR, false, &i) < 0)
    return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they reach `%s`",
                             SANDBOX_GIT_SHM_DIR);
  if (i < 0)
    return 0;
  return fsrun_error_make(err, 0,
                          "policy: writablePaths[%zd]: `%s` reaches `%s`, where fsrun keeps this "
                          "user's per-run git dirs while the state root `%s` is not on a tmpfs, "
                          "which the sandboxed command must not write: set XDG_RUNTIME_DIR or "
                          "--root to a tmpfs",
                          i, p->writable_paths.items[i], SANDBOX_GIT_SHM_DIR, state_root);
}

/* The first of paths (absolute, existing) that is dir or lies in it, by its real path or, for a
 * directory, by identity (a bind mount of dir elsewhere), or -1 */
static ssize_t entry_within(const oci_strv *paths, const char *dir) {
  cleanup_free char *real_dir = realpath(dir, NULL);
  struct stat root;
  struct entry_ids root_id = {.st = &root, .valid = &(bool){true}, .len = 1};
  if (real_dir == NULL || stat(real_dir, &root) < 0)
    return -1; /* nothing there yet to be shown */
  for (size_t i = 0; i < paths->len; i++) {
    cleanup_free char *real = paths->items[i][0] == '/' ? realpath(paths->items[i], NULL) : NULL;
    cleanup_close int fd = -1;
    ssize_t hit = -1;
    if (real == NULL)
      continue; /* missing: skipped where it is bound; relative: refused there */
    if (path_within(real, real_dir))
      return (ssize_t)i;
    fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && ancestor_among(fd, &root_id, &hit) == 0 && hit == 0)
      return (ssize_t)i;
  }
  return -1;
}

ssize_t sandbox_writable_within(const oci_policy *p, const char *dir) {
  return entry_within(&p->writable_paths, dir);
}

/* allowedPaths are bound read-only: one that is the state root or lies in it shows the other
 * containers' configs (their env) and the other runs' git dirs (their objects and edits), and so
 * does one in an ordinary user's per-run git dirs' /dev/shm. An entry that only holds them (`/`,
 * `/run`, `/tmp`, `/dev`) is not refused: a read-only `/` is a policy fsrun supports
 * (docs/sandbox.md, "fsrun's state root", what it shows). */
static int check_allowed(const oci_policy *p, const char *state_root, fsrun_error_t *err) {
  ssize_t i = entry_within(&p->allowed_paths, state_root);
  if (i >= 0)
    return fsrun_error_make(err, 0,
                            "policy: allowedPaths[%zd]: `%s` is in fsrun's state root `%s` (every "
                            "container's state), which the sandboxed command must not read: name a "
                            "directory outside it",
                            i, p->allowed_paths.items[i], state_root);
  if (!sandbox_git_shm_may_use(state_root))
    return 0;
  i = entry_within(&p->allowed_paths, SANDBOX_GIT_SHM_DIR);
  if (i < 0)
    return 0;
  return fsrun_error_make(
      err, 0,
      "policy: allowedPaths[%zd]: `%s` is in `%s`, where fsrun keeps this "
      "user's per-run git dirs while the state root `%s` is not on a tmpfs, "
      "which the sandboxed command must not read: set XDG_RUNTIME_DIR or --root "
      "to a tmpfs",
      i, p->allowed_paths.items[i], SANDBOX_GIT_SHM_DIR, state_root);
}

static int refuse_reach(const char *what, const char *path, const char *state_root,
                        fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "%s: `%s` reaches fsrun's state root `%s` (every container's state), "
                          "which the sandboxed command must not write: set XDG_RUNTIME_DIR or "
                          "--root to a directory outside it",
                          what, path, state_root);
}

/* The worktree is bound read-write and its git dirs are the overlay's lower dirs: a state root
 * in either is the command's to list and write (review19 #14). */
static int check_worktree(const char *worktree, const char *state_root, fsrun_error_t *err) {
  cleanup_free char *common_dir = NULL;
  cleanup_free char *wt_git_dir = NULL;
  cleanup_error fsrun_error_t git_err = NULL;
  char *items[3] = {(char *)worktree};
  const char *names[3] = {"worktree"};
  oci_policy trees = {.writable_paths = {.items = items, .len = 1}};
  ssize_t i;
  /* a `.git` that cannot be followed is refused by the config's build, in the run's own order */
  (void)sandbox_git_dirs(worktree, &common_dir, &wt_git_dir, &git_err);
  if (common_dir != NULL) {
    names[trees.writable_paths.len] = "worktree: git common dir";
    items[trees.writable_paths.len++] = common_dir;
  }
  if (wt_git_dir != NULL) {
    names[trees.writable_paths.len] = "worktree: git dir";
    items[trees.writable_paths.len++] = wt_git_dir;
  }
  if (writable_over(&trees, state_root, true, &i) < 0)
    return fsrun_error_errno(err,
                             "worktree: cannot tell whether `%s` reaches fsrun's state root `%s`",
                             worktree, state_root);
  return i < 0 ? 0 : refuse_reach(names[i], items[i], state_root, err);
}

int sandbox_check_state_root(const oci_policy *p, const char *worktree, const char *state_root,
                             fsrun_error_t *err) {
  ssize_t i;
  cleanup_free char *what = NULL;
  /* what cannot be looked at may be reachable: refused rather than guessed */
  if (sandbox_writable_over_state_root(p, state_root, &i) < 0)
    return fsrun_error_errno(err,
                             "policy: writablePaths: cannot tell whether they reach fsrun's "
                             "state root `%s`",
                             state_root);
  if (i >= 0) {
    what = xasprintf("policy: writablePaths[%zd]", i);
    return refuse_reach(what, p->writable_paths.items[i], state_root, err);
  }
  if (check_worktree(worktree, state_root, err) < 0 || check_allowed(p, state_root, err) < 0)
    return -1;
  return check_shm(p, state_root, err);
}

/* A writable entry that is or holds the caller's runtime dir, or a read-only one that is or lies
 * in it: its sockets (the session bus, ssh and gpg agents, podman) answer connect() through a bind,
 * and a writable one's mask (sandbox-runmask.c) moves with a directory renamed above it. */
static int check_runtime_place(const oci_policy *p, const char *place, fsrun_error_t *err) {
  static const char why[] = "the caller's runtime dir (its session bus's and agents' sockets, "
                            "which a bind leaves open to connect()): name a directory outside it";
  struct stat st;
  ssize_t i;
  if (place == NULL || place[0] != '/' || lstat(place, &st) < 0)
    return 0; /* nothing there to be reached */
  if (writable_over(p, place, false, &i) < 0)
    return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they hold `%s`",
                             place);
  if (i >= 0)
    return fsrun_error_make(err, 0, "policy: writablePaths[%zd]: `%s` is or holds `%s`, %s", i,
                            p->writable_paths.items[i], place, why);
  i = entry_within(&p->allowed_paths, place);
  if (i >= 0)
    return fsrun_error_make(err, 0, "policy: allowedPaths[%zd]: `%s` is in `%s`, %s", i,
                            p->allowed_paths.items[i], place, why);
  return 0;
}

int sandbox_check_runtime_dir(const oci_policy *p, fsrun_error_t *err) {
  char user_run[64];
  snprintf(user_run, sizeof(user_run), "/run/user/%u", (unsigned)geteuid());
  if (check_runtime_place(p, getenv("XDG_RUNTIME_DIR"), err) < 0)
    return -1;
  return check_runtime_place(p, user_run, err);
}
