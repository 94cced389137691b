/* Root's /etc view holds a directory of the allowlist (ssl, alternatives, ...) as a copy of what in
 * it everyone may read, so that a run binds /etc once and nothing below it (before session 30:
 * a bind of the host's directory and a cover over each entry in it that is not world-readable).
 * Root's command runs as uid 0 without capabilities and owner permissions need none, so only
 * world-readable directories and regular files are copied (with mode, owner and times), symbolic
 * links as links (the same text), and nothing else: a root-only file, a FIFO, a socket or a device
 * node below such a directory is not there. A directory past its bounds (names, bytes, depth), one
 * with a mount point below it, or one that cannot be read is bound from the host instead (the
 * caller's fallback, never left open).
 *
 * The record keeps, for each directory met, its device, inode and ctime (a name added, removed or
 * replaced in it changes its ctime, which nothing but the clock sets), and for each regular file
 * copied or left out the stat that decides (a chmod changes its ctime): a run whose stats all
 * still match reads no directory; any other run copies the whole directory again. */
#include "sandbox-etc-tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remove-tree.h"
#include "sandbox-etc-view.h"
#include "sandbox-etc-walk.h"
#include "utils.h"

#define NS_PER_S 1000000000LL

static long long ns_of(const struct timespec *t) {
  return (long long)t->tv_sec * NS_PER_S + t->tv_nsec;
}

bool etc_recent(const struct timespec *ctime, const struct timespec *now) {
  return ns_of(now) - ns_of(ctime) < NS_PER_S;
}

bool etc_same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mode == b->st_mode && a->st_uid == b->st_uid && a->st_gid == b->st_gid &&
         ns_of(&a->st_mtim) == ns_of(&b->st_mtim) && ns_of(&a->st_ctim) == ns_of(&b->st_ctim);
}

/* the whole of fd, whose stat is st, into buf (st->st_size bytes); the same stat after */
static int read_exactly(int fd, const struct stat *st, char *buf) {
  size_t size = (size_t)st->st_size;
  struct stat after;
  /* one byte more than the stat says: a file grown since reads long */
  ssize_t n = safe_read_all(fd, buf, size + 1);
  if (n < 0)
    return -1;
  if ((size_t)n != size || fstat(fd, &after) < 0 || !etc_same_file(st, &after))
    return errno = ESTALE, -1;
  return 0;
}

int etc_copy_contents(int src, const struct stat *st, int dst) {
  cleanup_free char *buf = xmalloc0((size_t)st->st_size + 1);
  const struct timespec times[2] = {st->st_atim, st->st_mtim};
  struct stat made;
  if (read_exactly(src, st, buf) < 0)
    return -1;
  if (safe_write_all(dst, buf, (size_t)st->st_size) < 0 ||
      fchown(dst, st->st_uid, st->st_gid) < 0 || fchmod(dst, st->st_mode & 0777) < 0 ||
      futimens(dst, times) < 0 || fstat(dst, &made) < 0)
    return -1;
  return etc_recent(&st->st_ctim, &made.st_ctim) ? 1 : 0;
}

/* A record line: 'T' a directory copied, 'C' a regular file copied, 'A' one of either left out
 * (not world-readable); the path under /etc last (it may hold spaces, never a newline) */
static void line_of(struct strbuf *b, char kind, const struct stat *st, const char *rel) {
  if (kind == 'C')
    sb_printf(b, "\tC %ju %ju %jd %o %u %u %lld %lld %s\n", (uintmax_t)st->st_dev,
              (uintmax_t)st->st_ino, (intmax_t)st->st_size, (unsigned)st->st_mode,
              (unsigned)st->st_uid, (unsigned)st->st_gid, ns_of(&st->st_mtim), ns_of(&st->st_ctim),
              rel);
  else
    sb_printf(b, "\t%c %ju %ju %lld %s\n", kind, (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
              ns_of(&st->st_ctim), rel);
}

/* the line's kind for what st describes, or 0: not recorded (a link, a FIFO, ...) */
static char kind_of(const struct stat *st) {
  if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
    return 0;
  if (!etc_world_readable(st->st_mode))
    return 'A';
  return S_ISDIR(st->st_mode) ? 'T' : 'C';
}

struct tree_copy {
  struct strbuf lines;
  size_t names_left, bytes_left;
  struct timespec newest; /* the latest ctime recorded */
};

static void note(struct tree_copy *t, char kind, const struct stat *st, const char *rel) {
  line_of(&t->lines, kind, st, rel);
  if (ns_of(&st->st_ctim) > ns_of(&t->newest))
    t->newest = st->st_ctim;
}

static int copy_dir(struct tree_copy *t, int src, int dst, const char *rel, unsigned depth);

static int copy_subdir(struct tree_copy *t, int src_dir, int dst_dir, const char *name,
                       const char *rel, unsigned depth) {
  cleanup_close int src = openat(src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int dst = -1;
  struct stat st;
  if (depth > ETC_WALK_DEPTH_MAX)
    return errno = E2BIG, -1;
  if (src < 0 || fstat(src, &st) < 0)
    return -1;
  if (kind_of(&st) != 'T') /* changed since its statx */
    return errno = ESTALE, -1;
  note(t, 'T', &st, rel);
  if (mkdirat(dst_dir, name, 0700) < 0 ||
      (dst = openat(dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
      copy_dir(t, src, dst, rel, depth) < 0)
    return -1;
  return fchown(dst, st.st_uid, st.st_gid) < 0 || fchmod(dst, st.st_mode & 01777) < 0 ? -1 : 0;
}

static int copy_file(struct tree_copy *t, int src_dir, int dst_dir, const char *name,
                     const char *rel) {
  cleanup_close int src =
      openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_close int dst = -1;
  struct stat st;
  if (src < 0 || fstat(src, &st) < 0)
    return -1;
  if (kind_of(&st) != 'C')
    return errno = ESTALE, -1;
  if (st.st_size > ETC_VIEW_COPY_MAX || (size_t)st.st_size > t->bytes_left)
    return errno = E2BIG, -1;
  t->bytes_left -= (size_t)st.st_size;
  note(t, 'C', &st, rel);
  dst = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  return dst < 0 || etc_copy_contents(src, &st, dst) < 0 ? -1 : 0;
}

static int copy_link(int src_dir, int dst_dir, const char *name) {
  char target[PATH_MAX];
  ssize_t n = readlinkat(src_dir, name, target, sizeof(target));
  if (n < 0)
    return -1;
  if ((size_t)n == sizeof(target))
    return errno = E2BIG, -1;
  target[n] = '\0';
  return symlinkat(target, dst_dir, name);
}

static bool mount_root(const struct statx *stx) {
  return (stx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
         (stx->stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

/* one entry of src's copied into dst, or recorded as left out */
static int copy_name(struct tree_copy *t, int src, int dst, const char *name, const char *dir_rel,
                     unsigned depth) {
  cleanup_free char *rel = xasprintf("%s/%s", dir_rel, name);
  struct statx stx;
  struct stat st;
  if (t->names_left == 0 || strchr(name, '\n') != NULL)
    return errno = E2BIG, -1;
  t->names_left--;
  if (statx(src, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MODE, &stx) < 0)
    return -1;
  /* a copy of the directory would not show what is mounted there as the host does */
  if (mount_root(&stx))
    return errno = EXDEV, -1;
  if (S_ISLNK(stx.stx_mode))
    return copy_link(src, dst, name);
  if (!S_ISDIR(stx.stx_mode) && !S_ISREG(stx.stx_mode))
    return 0; /* a FIFO, a socket or a device node is never copied */
  if (!etc_world_readable(stx.stx_mode)) {
    if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return -1;
    if (kind_of(&st) != 'A')
      return errno = ESTALE, -1;
    /* its ctime moves when it is made readable: then the directory is copied again */
    note(t, 'A', &st, rel);
    return 0;
  }
  return S_ISDIR(stx.stx_mode) ? copy_subdir(t, src, dst, name, rel, depth + 1)
                               : copy_file(t, src, dst, name, rel);
}

static int copy_dir(struct tree_copy *t, int src, int dst, const char *rel, unsigned depth) {
  cleanup_dir DIR *d = opendir_at(src);
  struct dirent *e;
  if (d == NULL)
    return -1;
  while ((errno = 0, e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
        copy_name(t, src, dst, e->d_name, rel, depth) < 0)
      return -1;
  return errno != 0 ? -1 : 0;
}

static int copy_top(struct tree_copy *t, int etc_fd, const char *name, int dst) {
  cleanup_close int src = openat(etc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (src < 0 || fstat(src, &st) < 0)
    return -1;
  if (kind_of(&st) != 'T')
    return errno = ESTALE, -1;
  note(t, 'T', &st, name);
  if (copy_dir(t, src, dst, name, 0) < 0)
    return -1;
  if (t->lines.len > ETC_TREE_RECORD_MAX)
    return errno = E2BIG, -1;
  return fchown(dst, st.st_uid, st.st_gid) < 0 || fchmod(dst, st.st_mode & 01777) < 0 ? -1 : 0;
}

int etc_tree_copy(int etc_fd, const char *name, int bundle_fd, const char *tmp,
                  struct strbuf *record) {
  struct tree_copy t = {.names_left = ETC_TREE_NAMES_MAX, .bytes_left = ETC_TREE_BYTES_MAX};
  cleanup_close int dst = -1;
  struct timespec now;
  int r = -1;
  if (mkdirat(bundle_fd, tmp, 0700) == 0 &&
      (dst = openat(bundle_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
    r = copy_top(&t, etc_fd, name, dst);
  if (r == 0 && clock_gettime(CLOCK_REALTIME, &now) == 0) {
    if (etc_recent(&t.newest, &now))
      sb_printf(record, "%s r\n", name);
    else {
      sb_printf(record, "%s t\n", name);
      sb_append(record, t.lines.data, t.lines.len);
    }
  } else {
    int saved = errno;
    remove_tree_at(bundle_fd, tmp, ETC_WALK_DEPTH_MAX + 2);
    errno = saved;
    r = -1;
  }
  free(t.lines.data);
  return r;
}

/* the path under /etc of a record line (after its kind and its 3 or 8 numbers), NULL if none */
static const char *line_path(const char *line, const char *end) {
  int fields = line[1] == 'C' ? 9 : 4;
  for (const char *p = line + 1; p < end; p++)
    if (*p == ' ' && --fields == 0)
      return p + 1;
  return NULL;
}

/* whether the line [line, end] (from its tab to its newline) still describes the host */
static bool line_current(int etc_fd, const char *name, const char *line, const char *end) {
  const char *path = line_path(line, end);
  struct strbuf now = {0};
  struct stat st;
  bool same = false;
  if (path == NULL || path == end)
    return false;
  cleanup_free char *rel = xmalloc0((size_t)(end - path) + 1);
  memcpy(rel, path, (size_t)(end - path));
  /* the directory itself is reached as the bind was: a link there followed */
  bool top = strcmp(rel, name) == 0;
  if (fstatat(etc_fd, rel, &st, top ? 0 : AT_SYMLINK_NOFOLLOW) == 0 && kind_of(&st) != 0) {
    line_of(&now, kind_of(&st), &st, rel);
    same = now.len == (size_t)(end - line + 1) && memcmp(now.data, line, now.len) == 0;
  }
  free(now.data);
  return same;
}

const char *etc_tree_current(int etc_fd, const char *record, const char *name, size_t *len) {
  cleanup_free char *head = xasprintf("\n%s t\n", name);
  const char *block = record != NULL ? strstr(record, head) : NULL;
  const char *p;
  if (block == NULL)
    return NULL;
  block++;
  for (p = block + strlen(head) - 1; *p == '\t'; p++) {
    const char *end = strchr(p, '\n');
    if (end == NULL || !line_current(etc_fd, name, p, end))
      return NULL;
    p = end;
  }
  *len = (size_t)(p - block);
  return block;
}
