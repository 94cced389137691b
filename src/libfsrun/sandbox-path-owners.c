#include "sandbox-path-owners.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "path-walk.h"
#include "utils.h"

#define PATH_MAKE_DEPTH_MAX 64 /* directories one writablePaths entry may need made */

struct policy_entry {
  struct path_walk walk; /* first: the refusal gets the walk */
  const char *field;
  size_t index;
};

static int refuse_policy_path(const struct path_walk *w, const char *where, const char *why,
                              fsrun_error_t *err) {
  const struct policy_entry *e = (const struct policy_entry *)w;
  return fsrun_error_make(err, 0,
                          "policy: %s[%zu]: `%s` is reached through `%s`, %s: whoever can change "
                          "it decides what the sandbox binds; name a path whose directories and "
                          "links only this user and root own",
                          e->field, e->index, w->path, where, why);
}

/* the last name a walk reached: its fd (O_PATH, not followed) and stat, or -1 where it is
 * missing; in procfs nothing is opened (the kernel follows its own links: open_walked) */
struct walked_last {
  int fd;
  struct stat st;
  bool in_proc;
};

/* the walk at its last name: a link there is followed (and checked) until a name that is none,
 * which is kept open in *out (opened once: the lookup that decided it is not a link is the one
 * whose object the caller gets) */
static int follow_last_links(struct path_walk *w, char **last, struct walked_last *out,
                             fsrun_error_t *err) {
  for (;;) {
    cleanup_close int fd = -1;
    int r;
    out->fd = -1;
    out->in_proc = path_walk_in_proc(w);
    if (out->in_proc)
      return 0; /* the kernel's objects, not paths anyone can re-point */
    fd = openat(w->dir, *last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
      return 0;
    if (fd < 0 || fstat(fd, &out->st) < 0)
      return fsrun_error_errno(err, "look up `%s`", w->path);
    if (!S_ISLNK(out->st.st_mode)) {
      out->fd = steal_fd(&fd);
      return 0;
    }
    r = path_walk_follow_last(w, fd, &out->st, last, err);
    if (r != 0)
      return r < 0 ? r : 0;
  }
}

/* the entry walked: 0 with w->dir the checked directory of its (link-free) last name *last and
 * that name in *out, 1 where a directory on the way is missing, or the refusal (the caller ends
 * the walk) */
static int walk_policy_path(struct policy_entry *e, const char *path, char **last,
                            struct walked_last *out, fsrun_error_t *err) {
  int r;
  out->fd = -1;
  path_walk_begin(&e->walk, path, e->field, refuse_policy_path);
  /* a root caller may name a user's directory (their worktree): what the user can swap in there
   * is a link of theirs, which is refused, or a directory of their own */
  e->walk.others_dirs = true;
  r = path_walk_parent(&e->walk, last, err);
  if (r == 0)
    r = follow_last_links(&e->walk, last, out, err);
  return r;
}

/* open_policy_path, with the object's stat */
static int open_walked(const char *field, size_t i, const char *path, int *fd, struct stat *st,
                       fsrun_error_t *err) {
  struct policy_entry e = {.field = field, .index = i};
  cleanup_free char *last = NULL;
  struct walked_last w;
  int r = walk_policy_path(&e, path, &last, &w, err);
  *fd = -1;
  if (r == 0 && w.in_proc) {
    /* in procfs the kernel's own link is followed: what it names, not a path anyone re-points */
    *fd = openat(e.walk.dir, last, O_PATH | O_CLOEXEC);
    if (*fd < 0 && (errno == ENOENT || errno == ENOTDIR))
      r = 1;
    else if (*fd < 0 || fstat(*fd, st) < 0)
      r = fsrun_error_errno(err, "policy: %s[%zu]: look up `%s`", field, i, path);
  } else if (r == 0 && w.fd < 0) {
    r = 1;
  } else if (r == 0) {
    *fd = steal_fd(&w.fd);
    *st = w.st;
  }
  if (w.fd >= 0)
    close(w.fd);
  path_walk_end(&e.walk);
  return r;
}

int open_policy_path(const char *field, size_t i, const char *path, int *fd, fsrun_error_t *err) {
  struct stat st;
  return open_walked(field, i, path, fd, &st, err);
}

int check_policy_path_owners(const char *field, size_t i, const char *path, struct stat *st,
                             fsrun_error_t *err) {
  cleanup_close int fd = -1;
  return open_walked(field, i, path, &fd, st, err);
}

/* path's text cut before its last name: NULL for `/` or a bare name */
static char *text_parent(const char *path) {
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/')
    len--;
  while (len > 0 && path[len - 1] != '/')
    len--;
  if (len == 0 || strspn(path, "/") >= strlen(path))
    return NULL;
  while (len > 1 && path[len - 1] == '/')
    len--;
  return xasprintf("%.*s", (int)len, path);
}

static int make_policy_path_depth(const char *field, size_t i, const char *path, int depth,
                                  fsrun_error_t *err) {
  struct policy_entry e = {.field = field, .index = i};
  cleanup_free char *last = NULL;
  cleanup_free char *parent = NULL;
  struct walked_last w;
  int r = walk_policy_path(&e, path, &last, &w, err);
  if (w.fd >= 0)
    close(w.fd); /* an existing last name: mkdirat says EEXIST */
  if (r == 0 && mkdirat(e.walk.dir, last, 0755) < 0 && errno != EEXIST)
    r = fsrun_error_errno(err, "policy: %s[%zu]: create `%s`", field, i, path);
  path_walk_end(&e.walk);
  if (r != 1)
    return r < 0 ? r : 0;
  /* a directory on the way is missing: made first, by the same walk */
  parent = text_parent(path);
  if (parent == NULL || depth >= PATH_MAKE_DEPTH_MAX)
    return fsrun_error_make(err, ENOENT, "policy: %s[%zu]: create `%s`", field, i, path);
  if (make_policy_path_depth(field, i, parent, depth + 1, err) < 0)
    return fsrun_error_code(err);
  return make_policy_path_depth(field, i, path, depth + 1, err);
}

int make_policy_path(const char *field, size_t i, const char *path, fsrun_error_t *err) {
  return make_policy_path_depth(field, i, path, 0, err);
}
