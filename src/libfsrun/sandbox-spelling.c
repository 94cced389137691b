#include "sandbox-spelling.h"

#include <errno.h>
#include <limits.h>
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

struct tree_id {
  const char *path;
  struct stat st;
};

struct tree_ids {
  struct tree_id *items;
  size_t len;
};

/* a tree's identity: the object its path names (a writablePaths entry's links are the admin's) */
static void tree_ids_add(struct tree_ids *ids, const char *path) {
  struct stat st;
  if (path == NULL || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
    return;
  ids->items[ids->len++] = (struct tree_id){.path = xstrdup(path), .st = st};
}

static void tree_ids_clear(struct tree_ids *ids) {
  for (size_t i = 0; i < ids->len; i++)
    free((char *)ids->items[i].path);
  free(ids->items);
  *ids = (struct tree_ids){0};
}

static const struct tree_id *tree_of(const struct tree_ids *ids, const struct stat *st) {
  for (size_t i = 0; i < ids->len; i++)
    if (ids->items[i].st.st_dev == st->st_dev && ids->items[i].st.st_ino == st->st_ino)
      return &ids->items[i];
  return NULL;
}

static char *join(const char *dir, const char *rest) {
  if (rest == NULL || rest[0] == '\0')
    return xstrdup(dir);
  return xasprintf("%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", rest);
}

/* pops the first component of *rest (NUL-terminated in place) */
static char *next_component(char **rest) {
  char *comp = *rest, *slash;
  while (*comp == '/')
    comp++;
  slash = strchr(comp, '/');
  *rest = slash ? slash + 1 : comp + strlen(comp);
  if (slash)
    *slash = '\0';
  return comp;
}

static void drop_last(char *resolved) {
  char *slash = strrchr(resolved, '/');
  if (slash != NULL)
    slash[slash == resolved ? 1 : 0] = '\0';
}

static char *read_link(const char *path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  return xstrdup(buf);
}

/* Follows path from `/` as the kernel would, with the links of the host's admin (no tree is above
 * them, the walk stops at the first): *out is the first tree met (by device and inode) plus the
 * rest as written (*hit), or the path resolved. A component that cannot be looked at ends the walk
 * with the rest as written: the checks after it say why. 0, or -1 with errno (ELOOP). */
static int walk_spelling(const struct tree_ids *ids, const char *path, char **out, bool *hit) {
  cleanup_free char *todo = xstrdup(path);
  cleanup_free char *resolved = xstrdup("/");
  char *rest = todo;
  int links = 0;
  for (;;) {
    struct stat st;
    const struct tree_id *tree = lstat(resolved, &st) == 0 ? tree_of(ids, &st) : NULL;
    char *comp, *cand, *target, *spliced;
    rest += strspn(rest, "/");
    *hit = tree != NULL;
    if (tree != NULL || *rest == '\0') {
      *out = tree ? join(tree->path, rest) : xstrdup(resolved);
      return 0;
    }
    comp = next_component(&rest);
    if (strcmp(comp, ".") == 0)
      continue;
    if (strcmp(comp, "..") == 0) {
      drop_last(resolved);
      continue;
    }
    cand = join(resolved, comp);
    if (lstat(cand, &st) < 0 || !S_ISLNK(st.st_mode) || (target = read_link(cand)) == NULL) {
      bool seen = lstat(cand, &st) == 0 && !S_ISLNK(st.st_mode);
      if (!seen) {
        *out = join(cand, rest);
        free(cand);
        return 0;
      }
      free(resolved);
      resolved = cand;
      continue;
    }
    free(cand);
    if (++links > MAX_LINKS) {
      free(target);
      errno = ELOOP;
      return -1;
    }
    if (target[0] == '/') {
      free(resolved);
      resolved = xstrdup("/");
    }
    spliced = join(target, rest);
    free(target);
    free(todo);
    todo = spliced;
    rest = todo;
  }
}

/* The tree a directory (resolved) holds, or is, by device and inode: a tree below it by another
 * name (a bind mount of one of its parents) as well as by its path. NULL: none. */
static const struct tree_id *tree_held(const struct tree_ids *ids, const char *dir) {
  struct stat st, anc;
  if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
    return NULL;
  for (size_t i = 0; i < ids->len; i++) {
    cleanup_free char *up = xstrdup(ids->items[i].path);
    if (path_within(up, dir))
      return &ids->items[i];
    for (; strcmp(up, "/") != 0; drop_last(up))
      if (lstat(up, &anc) == 0 && anc.st_dev == st.st_dev && anc.st_ino == st.st_ino)
        return &ids->items[i];
  }
  return NULL;
}

static bool has_dot_dot(const char *path) {
  for (const char *p = strstr(path, ".."); p != NULL; p = strstr(p + 2, ".."))
    if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return true;
  return false;
}

/* A writablePaths entry that holds a tree is a second, read-write view of it (its git config and
 * hooks) unless it is bound where the tree's protections land; an allowedPaths one is read-only. */
static int respell_one(const struct tree_ids *ids, const char *field, size_t i, char **item,
                       fsrun_error_t *err) {
  bool writable = strcmp(field, "writablePaths") == 0;
  cleanup_free char *walked = NULL;
  const struct tree_id *held;
  bool hit;
  if ((*item)[0] != '/')
    return 0; /* refused, by name, where it is used */
  if (walk_spelling(ids, *item, &walked, &hit) < 0)
    return fsrun_error_errno(err, "policy: %s[%zu]: `%s`", field, i, *item);
  held = hit || !writable ? NULL : tree_held(ids, walked);
  if (!hit && held == NULL && has_dot_dot(*item)) {
    /* the admin's `..` goes where the kernel's does (after a link: not where the text says) */
    free(*item);
    *item = path_clean_abs(walked);
    return 0;
  }
  if (!hit && held == NULL)
    return 0; /* the admin's links only: bound where the policy says */
  if (held != NULL && !path_within(held->path, walked))
    return fsrun_error_make(err, 0,
                            "policy: %s[%zu]: `%s` holds `%s`, which the sandboxed command "
                            "writes, under another name: name it by that path",
                            field, i, *item, held->path);
  free(*item);
  *item = path_clean_abs(walked); /* a `..` after the tree: as written, never through its links */
  return 0;
}

/* Is writable[i] strictly below the worktree, a git dir or another entry? A walk meets that tree
 * first, and its identity may be where a link of the command's there leads. */
static bool below_other_tree(const struct tree_ids *fixed, const oci_strv *writable, size_t i) {
  const char *path = writable->items[i];
  for (size_t j = 0; j < fixed->len; j++)
    if (path_within(path, fixed->items[j].path))
      return true;
  for (size_t j = 0; j < writable->len; j++)
    if (path_within(path, writable->items[j]) && strcmp(path, writable->items[j]) != 0)
      return true;
  return false;
}

static int respell_all(const struct tree_ids *ids, const char *field, oci_strv *v,
                       fsrun_error_t *err) {
  for (size_t i = 0; i < v->len; i++)
    if (respell_one(ids, field, i, &v->items[i], err) < 0)
      return fsrun_error_code(err);
  return 0;
}

int sandbox_policy_respell(oci_policy *p, const char *worktree, fsrun_error_t *err) {
  cleanup_free char *common_dir = NULL;
  cleanup_free char *wt_git_dir = NULL;
  struct tree_ids ids = {.items = xmalloc0((3 + p->writable_paths.len) * sizeof(struct tree_id))};
  cleanup_error fsrun_error_t git_err = NULL;
  int r;
  /* git dirs that cannot be found are refused by the config's build, in the run's own order (the
   * fallback's decision): until then the worktree alone is a tree */
  (void)sandbox_git_dirs(worktree, &common_dir, &wt_git_dir, &git_err);
  tree_ids_add(&ids, worktree);
  tree_ids_add(&ids, common_dir);
  tree_ids_add(&ids, wt_git_dir);
  /* writablePaths first against the worktree and its git dirs, then everything against all */
  r = respell_all(&ids, "writablePaths", &p->writable_paths, err);
  for (size_t i = 0; r == 0 && i < p->writable_paths.len; i++)
    if (!below_other_tree(&ids, &p->writable_paths, i))
      tree_ids_add(&ids, p->writable_paths.items[i]);
  if (r == 0)
    r = respell_all(&ids, "writablePaths", &p->writable_paths, err);
  if (r == 0)
    r = respell_all(&ids, "allowedPaths", &p->allowed_paths, err);
  tree_ids_clear(&ids);
  return r;
}
