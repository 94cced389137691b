/* fsrun restore and the checks a bind carries (bind-identity.h: a task container's
 * run.fsrun.mounts.N annotations). criu makes a checkpoint's binds itself (--ext-mount-map
 * DEST:SOURCE), so restore checks each bind that carries checks as create does, and hands criu
 * the object it checked, not the path again: the child that execs criu opens the source in its
 * own mount namespace (an fd of the parent's namespace cannot be bound there: EINVAL), refuses it
 * unless it is the object checked here, and binds that fd onto a stage, which criu binds from. */
#include "criu-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"
#include "utils.h"

static bool carries_checks(const oci_mount *m) {
  return mount_entry_is_bind(m) && m->source != NULL &&
         (m->needs_source_id || m->has_source_id || m->dest_no_symlinks || m->covers[0] != NULL ||
          m->overlay_view);
}

/* the bind of c->mounts before index whose destination holds dest deepest (-1: none); *rest the
 * part of dest below it */
static ssize_t enclosing_bind(const oci_config *c, size_t index, const char **rest) {
  const char *dest = c->mounts[index].destination;
  ssize_t best = -1;
  size_t best_len = 0;
  for (size_t j = 0; j < index; j++) {
    const char *d = c->mounts[j].destination;
    size_t len = d != NULL ? strlen(d) : 0;
    while (len > 1 && d[len - 1] == '/')
      len--;
    if (!mount_entry_is_bind(&c->mounts[j]) || len == 0 || len < best_len ||
        strncmp(dest, d, len) != 0 || (dest[len] != '/' && !(len == 1 && d[0] == '/')))
      continue;
    best = (ssize_t)j;
    best_len = len;
  }
  *rest = best < 0 ? dest : dest + best_len;
  return best;
}

/* destinationNoSymlinks: mounts[index]'s destination is reached through no symbolic link, in the
 * source of the bind it lies in (where the command could have planted one) or in the rootfs. A
 * destination not there yet is criu's to make. */
static int check_destination(const oci_config *c, size_t index, const char *bundle,
                             const char *rootfs, fsrun_error_t *err) {
  const char *rest = NULL;
  ssize_t outer = enclosing_bind(c, index, &rest);
  const oci_mount *o = outer >= 0 ? &c->mounts[outer] : NULL;
  cleanup_free char *root = NULL;
  cleanup_close int root_fd = -1;
  cleanup_error fsrun_error_t why = NULL;
  int fd;
  root = o == NULL             ? xstrdup(rootfs)
         : o->source[0] == '/' ? xstrdup(o->source)
                               : xasprintf("%s/%s", bundle, o->source);
  root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return fsrun_error_errno(err, "mounts[%zu]: destination `%s`: open `%s`", index,
                             c->mounts[index].destination, root);
  fd = root_resolve(root_fd, rest, ROOT_NO_CREATE, true, &why);
  if (fd >= 0)
    close(fd);
  if (fd >= 0 || fd == -ENOENT)
    return 0;
  if (fd == -ELOOP)
    return fsrun_error_make(err, 0, "mounts[%zu]: destination `%s`: passes through a symbolic link",
                            index, c->mounts[index].destination);
  return fsrun_error_make(err, 0, "mounts[%zu]: destination `%s`: %s", index,
                          c->mounts[index].destination, why->msg);
}

/* the checks of mounts[index]; its source's path and identity into *b */
static int check_bind(const oci_config *c, size_t index, const char *bundle, const char *rootfs,
                      struct criu_restore_bind *b, fsrun_error_t *err) {
  const oci_mount *m = &c->mounts[index];
  cleanup_close int fd = -1;
  struct stat st;
  /* covers are mounts of their own below the bind, which criu would have to restore from the
   * checkpoint's images as they were: not checked, so not offered */
  if (m->covers[0] != NULL || m->overlay_view)
    return fsrun_error_make(err, 0,
                            "mounts[%zu]: `%s` has %s, which a restore cannot re-apply: create the "
                            "container again instead",
                            index, m->destination,
                            m->covers[0] != NULL ? "covers over secret files" : "an overlay view");
  b->source = m->source[0] == '/' ? xstrdup(m->source) : xasprintf("%s/%s", bundle, m->source);
  fd = open(b->source, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "mounts[%zu]: bind source `%s`", index, m->source);
  if (fstat(fd, &st) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: stat bind source `%s`", index, m->source);
  if (mount_check_source_id(m, &st, m->source, index, err) < 0)
    return fsrun_error_code(err);
  if (m->dest_no_symlinks && check_destination(c, index, bundle, rootfs, err) < 0)
    return fsrun_error_code(err);
  b->checked = true;
  b->dev = st.st_dev;
  b->ino = st.st_ino;
  b->dir = S_ISDIR(st.st_mode);
  return 0;
}

int criu_restore_binds_check(const oci_config *c, const char *bundle, const char *rootfs,
                             struct criu_restore_binds *out, fsrun_error_t *err) {
  out->n = c->n_mounts;
  out->b = xmalloc0(out->n * sizeof(*out->b) + 1);
  for (size_t i = 0; i < out->n; i++)
    if (carries_checks(&c->mounts[i]) && check_bind(c, i, bundle, rootfs, &out->b[i], err) < 0)
      return fsrun_error_code(err);
  return 0;
}

int criu_restore_binds_stage(struct criu_restore_binds *b, const char *state_dir,
                             fsrun_error_t *err) {
  for (size_t i = 0; i < b->n; i++) {
    struct criu_restore_bind *x = &b->b[i];
    int fd = -1;
    if (!x->checked)
      continue;
    x->stage = xasprintf("%s/bind-%zu", state_dir, i);
    if (x->dir ? mkdir(x->stage, 0700)
               : (fd = open(x->stage, O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 || close(fd) < 0)
      return fsrun_error_errno(err, "mounts[%zu]: the stage `%s` of the bind for criu", i,
                               x->stage);
  }
  return 0;
}

/* in criu's child: the source opened in its namespace, refused unless it is the object checked,
 * and that object bound onto the stage */
static int mount_stage(const struct criu_restore_bind *b, size_t index) {
  cleanup_close int fd = open(b->source, O_PATH | O_CLOEXEC);
  char proc[64];
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    fprintf(stderr, "fsrun: restore: mounts[%zu]: bind source `%s`: %s\n", index, b->source,
            strerror(errno));
    return -1;
  }
  if (st.st_dev != b->dev || st.st_ino != b->ino) {
    fprintf(stderr, "fsrun: restore: mounts[%zu]: bind source `%s` was replaced after the check\n",
            index, b->source);
    return -1;
  }
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  if (mount(proc, b->stage, NULL, MS_BIND | MS_REC, NULL) < 0) {
    fprintf(stderr, "fsrun: restore: mounts[%zu]: bind the checked source for criu: %s\n", index,
            strerror(errno));
    return -1;
  }
  return 0;
}

int criu_restore_binds_mount(const struct criu_restore_binds *b) {
  for (size_t i = 0; i < b->n; i++)
    if (b->b[i].stage != NULL && mount_stage(&b->b[i], i) < 0)
      return -1;
  return 0;
}

const char *criu_restore_binds_source(const struct criu_restore_binds *b, size_t index) {
  return index < b->n ? b->b[index].stage : NULL;
}

void criu_restore_binds_clear(struct criu_restore_binds *b) {
  for (size_t i = 0; i < b->n; i++) {
    struct criu_restore_bind *x = &b->b[i];
    /* only ever mounted in criu's child's namespace: here an empty dir or file */
    if (x->stage != NULL && rmdir(x->stage) < 0 && errno == ENOTDIR)
      unlink(x->stage);
    free(x->stage);
    free(x->source);
  }
  free(b->b);
  *b = (struct criu_restore_binds){0};
}
