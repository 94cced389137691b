/* Root's sandboxed command runs as uid 0 without capabilities, and owner permissions need none: a
 * root-only file anywhere below a directory root's /etc view binds (RHEL's
 * /etc/pki/tls/private/localhost.key, 0600, three levels down) would be read. So the walk covers
 * each entry that is not world-readable at any depth, descending only into world-readable
 * directories (what is below a covered one is not seen). The walk is bounded, as the host's
 * directories are not the project's: past ETC_WALK_DEPTH_MAX, past ETC_WALK_NAMES_MAX names, or
 * where a directory cannot be read, the directory is covered whole. Which names each directory
 * holds is kept between runs (sandbox-etc-covers.c): a steady run stats each name, reads nothing.
 */
#include "sandbox-etc-walk.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "sandbox.h"
#include "utils.h"

static const char *const cover_options[] = {"bind", "ro", "nosuid", "nodev", "noexec", NULL};
static const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};

bool etc_world_readable(mode_t mode) {
  return (mode & S_IROTH) != 0 && (!S_ISDIR(mode) || (mode & S_IXOTH) != 0);
}

/* /etc/rel covered: a directory by an empty one, anything else by an unreadable file (a FIFO
 * would open, a unix socket would answer connect(): a bind does not stop either) */
static void cover(struct etc_walk *w, const char *rel, mode_t mode) {
  cleanup_free char *path = xasprintf("/etc/%s", rel);
  add_mount(w->l, path, "bind", S_ISDIR(mode) ? SANDBOX_EMPTY_DIR : SANDBOX_UNREADABLE_FILE,
            cover_options);
}

static bool mount_root(const struct statx *stx) {
  return (stx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
         (stx->stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

static void walk_dir(struct etc_walk *w, int dir_fd, const char *rel, unsigned depth);

/* the directory name in dir_fd (/etc/rel, world-readable when stat'ed) walked, or covered whole */
static void walk_subdir(struct etc_walk *w, int dir_fd, const char *name, const char *rel,
                        unsigned depth) {
  cleanup_close int fd = -1;
  struct stat st;
  if (depth > ETC_WALK_DEPTH_MAX) {
    log_debug("sandbox: /etc/%s: deeper than %d levels: covered whole", rel, ETC_WALK_DEPTH_MAX);
    cover(w, rel, S_IFDIR);
    return;
  }
  fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return; /* gone since it was stat'ed */
  if (fd < 0 || fstat(fd, &st) < 0 || !etc_world_readable(st.st_mode)) {
    cover(w, rel, S_IFDIR);
    return;
  }
  walk_dir(w, fd, rel, depth);
}

static void walk_entry(struct etc_walk *w, int dir_fd, const char *dir_rel, const char *name,
                       unsigned depth) {
  cleanup_free char *rel = xasprintf("%s/%s", dir_rel, name);
  struct statx stx;
  if (statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MODE, &stx) <
          0 ||
      S_ISLNK(stx.stx_mode))
    return;
  if (!etc_world_readable(stx.stx_mode)) {
    cover(w, rel, stx.stx_mode);
    return;
  }
  /* the bind above does not carry a mount here: the host's is bound and walked in its turn */
  if (mount_root(&stx)) {
    cleanup_free char *path = xasprintf("/etc/%s", rel);
    add_mount(w->l, path, "bind", path, ro_bind);
  }
  if (S_ISDIR(stx.stx_mode))
    walk_subdir(w, dir_fd, name, rel, depth + 1);
}

static void walk_dir(struct etc_walk *w, int dir_fd, const char *rel, unsigned depth) {
  struct etc_names names;
  if (etc_covers_names(w->covers, dir_fd, rel, w->names_left, &names) < 0) {
    log_debug("sandbox: /etc/%s: %s: covered whole", rel,
              errno == E2BIG ? "past the walk's limit of names" : strerror(errno));
    cover(w, rel, S_IFDIR);
    return;
  }
  w->names_left -= names.n;
  for (const char *n = etc_names_next(&names, NULL); n != NULL; n = etc_names_next(&names, n))
    walk_entry(w, dir_fd, rel, n, depth);
  etc_names_free(&names);
}

void etc_walk_covers(struct etc_walk *w, int etc_fd, const char *name) {
  /* a link here is followed: the bind shows what it leads to */
  cleanup_close int fd = openat(etc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      cover(w, name, S_IFDIR);
    return;
  }
  walk_dir(w, fd, name, 0);
}
