/* Which configs may carry `run.fsrun.sandbox.worktree` (review21 L4). With it, each `fsrun exec`
 * lays a read-write overlay over the worktree's git common dir and, as the caller (root for a
 * root runtime), writes the command's branch and objects into the host's repository. A client that
 * passes its users' annotations (podman/docker --annotation, a CRI allowlist) must not turn a
 * read-only bind of a repository into that: the key is taken only in the shape `fsrun bundle`
 * writes it, where the config already gives the command the worktree to write and binds the git
 * dirs read-only for the overlay, each bind with the identity `fsrun bundle` recorded
 * (run.fsrun.mounts.N sourceId, bind-identity.h). The shape is binds and annotations, which a
 * client's user can write too: the key counts only on a config.json `fsrun bundle` marked in the
 * caller's state root (bundle-mark.h); create ignores it elsewhere, with a warning, and refuses a
 * marked config without the shape (its host paths changed since). exec and delete look for the
 * mark create took into the state dir, and again at the worktree's bind in the config create
 * kept and at the object the host's path shows now, before they act on the tree. */
#include "exec-git.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind-identity.h"
#include "bundle-mark.h"
#include "log.h"
#include "mounts.h"
#include "sandbox-git.h"
#include "sandbox-paths.h"
#include "utils.h"

#define WHAT "annotations[\"" EXEC_GIT_ANNOTATION "\"]"

/* the options' last word on each read-only flag (OCI options apply in order): "ro"/"rw" on the
 * bind's own mount, "rro"/"rrw" on it and every mount below; either leaves the bind read-only */
static bool bind_read_only(const oci_mount *m) {
  bool ro = false, rro = false;
  for (size_t i = 0; i < m->options.len; i++) {
    const char *o = m->options.items[i];
    if (strcmp(o, "ro") == 0 || strcmp(o, "rw") == 0)
      ro = o[1] == 'o';
    else if (strcmp(o, "rro") == 0 || strcmp(o, "rrw") == 0)
      rro = o[2] == 'o';
  }
  return ro || rro;
}

/* the last mount onto path (the one the container sees there), when it binds path itself */
static const oci_mount *self_bind(const oci_config *c, const char *path) {
  const oci_mount *found = NULL;
  for (size_t i = 0; i < c->n_mounts; i++)
    if (c->mounts[i].destination != NULL && strcmp(c->mounts[i].destination, path) == 0)
      found = &c->mounts[i];
  if (found == NULL || !mount_entry_is_bind(found) || found->source == NULL ||
      strcmp(found->source, path) != 0)
    return NULL;
  return found;
}

void exec_git_writable(const oci_config *c, const char *worktree, oci_strv *out) {
  for (size_t i = 0; i < c->n_mounts; i++) {
    const oci_mount *m = &c->mounts[i];
    if (m->destination == NULL || strcmp(m->destination, worktree) == 0 || !m->has_source_id ||
        bind_read_only(m) || self_bind(c, m->destination) != m)
      continue;
    oci_strv_push(out, m->destination);
  }
}

/* the create checks the bind shows the object st is (bind-identity.h) */
static bool pinned_to(const oci_mount *m, const struct stat *st) {
  return m->has_source_id && m->source_dev == (uint64_t)st->st_dev &&
         m->source_ino == (uint64_t)st->st_ino;
}

/* the worktree's top for the checks, opened once: the object they look at is the one the caller
 * goes on with (no second lookup of the name); O_RDONLY, as the pinned reads take it */
static int open_worktree(const char *worktree) {
  return open(worktree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

/* the config's bind of the worktree: itself, writable, with the identity of top, the worktree's
 * top opened by its host path now (-1: it could not be) */
static int check_worktree_bind(const oci_config *c, const char *worktree, int top,
                               fsrun_error_t *err) {
  const oci_mount *m;
  struct stat st;
  if (worktree[0] != '/')
    return fsrun_error_make(err, 0, "%s: `%s` is not an absolute path", WHAT, worktree);
  m = self_bind(c, worktree);
  if (m == NULL || !m->has_source_id || bind_read_only(m))
    return fsrun_error_make(err, 0,
                            "%s: `%s` has no writable bind of itself with a sourceId in "
                            "run.fsrun.mounts.N (as `fsrun bundle` binds a task's worktree)",
                            WHAT, worktree);
  if (top < 0 || fstat(top, &st) < 0 || !S_ISDIR(st.st_mode) || !pinned_to(m, &st))
    return fsrun_error_make(err, 0,
                            "%s: `%s` is no longer the directory the config's bind of it names",
                            WHAT, worktree);
  /* the git layout's later opens of it must be that directory too (sandbox_worktree_check) */
  sandbox_worktree_pin_as(worktree, &st);
  return 0;
}

/* path's bind: itself, read-only; with the identity of st, when st is given */
static int check_read_only_bind(const oci_config *c, const char *path, const struct stat *st,
                                fsrun_error_t *err) {
  const oci_mount *m = self_bind(c, path);
  if (m == NULL || !bind_read_only(m) || (st != NULL && !pinned_to(m, st)))
    return fsrun_error_make(err, 0,
                            "%s: `%s` has no read-only bind of itself%s (as `fsrun bundle` binds "
                            "a task's git dirs)",
                            WHAT, path,
                            st != NULL ? " with its sourceId in run.fsrun.mounts.N" : "");
  return 0;
}

/* the git dirs as `fsrun bundle` binds them (found below top, the worktree checked): the common dir
 * read-only (the lower layer of each exec's overlay) and what the host's git executes outside it
 * read-only (the worktree's `.git` file, a submodule's); a worktree that is no repository, or one
 * the overlay does not cover, gets no overlay. The list is taken through top and the common dir as
 * checked, never their names again: a name swapped after the check showed a decoy without the
 * submodule, and a config without its `.git` file's bind was taken. */
static int check_git_binds(const oci_config *c, const char *worktree, int top, fsrun_error_t *err) {
  cleanup_error fsrun_error_t layout_err = NULL;
  struct sandbox_git_layout l;
  struct mount_list protect = {0};
  struct stat st;
  int r = 0;
  if (sandbox_git_layout_find_at(worktree, top, &l, &layout_err) < 0 || l.common_dir == NULL ||
      strpbrk(l.common_dir, ",:\\") != NULL) {
    sandbox_git_layout_free(&l);
    return 0;
  }
  if (fstat(l.common_fd, &st) < 0)
    r = fsrun_error_errno(err, "%s: stat `%s`", WHAT, l.common_dir);
  if (r == 0)
    r = check_read_only_bind(c, l.common_dir, &st, err);
  if (r == 0)
    sandbox_git_protect_all_checked(worktree, top, l.common_dir, l.common_fd, &protect);
  for (size_t i = 0; i < protect.len; i++) {
    oci_mount *m = &protect.items[i];
    if (r == 0 && !path_within(m->destination, l.common_dir))
      r = check_read_only_bind(c, m->destination, NULL, err);
    free(m->destination);
    free(m->type);
    free(m->source);
    oci_strv_free(&m->options);
  }
  free(protect.items);
  sandbox_git_layout_free(&l);
  return r;
}

int exec_git_accept(const oci_config *c, bool marked, const char *what, fsrun_error_t *err) {
  const char *worktree = oci_map_get(&c->annotations, EXEC_GIT_ANNOTATION);
  cleanup_close int top = -1;
  if (worktree == NULL)
    return 0;
  /* ignored, not refused: a client's config may carry any annotation its user wrote, and a key
   * that grants nothing must not fail the container (the binds still say what it may write) */
  if (!marked) {
    log_warning("%s: %s: ignored: config.json is not one `fsrun bundle` wrote with this state "
                "root (--root); no git overlay, sync or walk at exec and delete",
                what, WHAT);
    return 0;
  }
  top = open_worktree(worktree);
  if (check_worktree_bind(c, worktree, top, err) < 0 || check_git_binds(c, worktree, top, err) < 0)
    return fsrun_error_code(err);
  return 0;
}

/* the annotation's worktree when the state dir holds the bundle's mark; NULL otherwise (a
 * warning starting with what when the config has the annotation) */
static const char *marked_worktree(const oci_config *c, int state_dir_fd, const char *what) {
  const char *worktree = oci_map_get(&c->annotations, EXEC_GIT_ANNOTATION);
  if (worktree == NULL)
    return NULL;
  /* create took the bundle's mark only for a config `fsrun bundle` wrote (bundle-mark.h) */
  if (!bundle_mark_held(state_dir_fd)) {
    log_warning("%s: git: the container was not created from a bundle `fsrun bundle` marked; %s "
                "ignored: no git overlay, sync or walk",
                what, WHAT);
    return NULL;
  }
  return worktree;
}

int exec_git_worktree_open(oci_config *c, int state_dir_fd, const char **worktree, int *top,
                           fsrun_error_t *err) {
  cleanup_close int fd = -1;
  *worktree = marked_worktree(c, state_dir_fd, "exec");
  *top = -1;
  if (*worktree == NULL)
    return 0;
  fd = open_worktree(*worktree);
  /* the identities are in the annotations: the parsed config carries none yet */
  if (bind_checks_from_annotations(c, err) < 0 || check_worktree_bind(c, *worktree, fd, err) < 0) {
    *worktree = NULL;
    return fsrun_error_code(err);
  }
  *top = steal_fd(&fd);
  return 0;
}

const char *exec_git_worktree(oci_config *c, int state_dir_fd, const char *what) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int top = -1;
  const char *worktree = marked_worktree(c, state_dir_fd, what);
  if (worktree == NULL)
    return NULL;
  top = open_worktree(worktree);
  /* the identities are in the annotations: the parsed config carries none yet */
  if (bind_checks_from_annotations(c, &err) < 0 ||
      check_worktree_bind(c, worktree, top, &err) < 0) {
    log_warning("%s: git: %s; no git overlay, sync or walk", what, err->msg);
    return NULL;
  }
  return worktree;
}
