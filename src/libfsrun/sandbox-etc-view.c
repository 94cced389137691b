/* Root's /etc as one directory kept in the shared bundle (<state root>/.sandbox-bundle/etc): the
 * allowlist's regular files are copies there, its directories and other files empty mount points
 * that a bind of the host's entry covers. A run binds the view read-only instead of mounting a
 * tmpfs and binding each file (~30 mounts fewer a run, and as many fewer torn down).
 *
 * The view is made again only where the host changed: ETC_VIEW_STAMPS records, for each copy, the
 * stat of the host's file it was made from (device, inode, size, mode, owner, mtime, ctime), and
 * the view directory's own stat. A run compares that record with the stats it took anyway (one
 * read), and only when they differ takes the lock and rewrites what differs. A copy whose source's
 * ctime was within a second of the copy is recorded as such and made again at the next run: a
 * write in the same tick of the coarse clock as the copy's read leaves the file's times unchanged.
 * A copy is replaced by a rename, never emptied first: a running sandbox sees the old file or the
 * new one. The bundle directory is the caller's (root's) own, mode 0700. */
#include "sandbox-etc-view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "json-out.h"
#include "sandbox-etc-covers.h"
#include "utils.h"

#define STAMPS_HEADER "fsrun etc view 1"
#define STAMPS_MAX    (64 * 1024)
#define NS_PER_S      1000000000LL

static void sb_freep(struct strbuf *b) {
  free(b->data);
}
#define cleanup_sb __attribute__((cleanup(sb_freep)))

static void header_line(struct strbuf *b, const struct stat *view) {
  sb_printf(b, "%s %ju %ju %jd.%09ld %jd.%09ld\n", STAMPS_HEADER, (uintmax_t)view->st_dev,
            (uintmax_t)view->st_ino, (intmax_t)view->st_mtim.tv_sec, view->st_mtim.tv_nsec,
            (intmax_t)view->st_ctim.tv_sec, view->st_ctim.tv_nsec);
}

/* kind: 'c' a copy of st, 'd' 'f' mount points; a record says 'r' (racy) or 'x' (not made) for a
 * copy to be made again, which the line of a wanted copy never matches */
static void entry_line(struct strbuf *b, const char *name, char kind, const struct stat *st) {
  if (kind == 'd' || kind == 'f') {
    sb_printf(b, "%s %c\n", name, kind);
    return;
  }
  sb_printf(b, "%s %c %ju %ju %jd %o %u %u %jd.%09ld %jd.%09ld\n", name, kind,
            (uintmax_t)st->st_dev, (uintmax_t)st->st_ino, (intmax_t)st->st_size,
            (unsigned)st->st_mode, (unsigned)st->st_uid, (unsigned)st->st_gid,
            (intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (intmax_t)st->st_ctim.tv_sec,
            st->st_ctim.tv_nsec);
}

static char kind_letter(enum etc_view_kind k) {
  return k == ETC_VIEW_COPY ? 'c' : k == ETC_VIEW_DIR ? 'd' : 'f';
}

/* ETC_VIEW_STAMPS's text, or NULL when there is none (or it is not a plain small file) */
static char *read_stamps(int bundle_fd) {
  cleanup_close int fd =
      openat(bundle_fd, ETC_VIEW_STAMPS, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  char *buf;
  size_t n = 0;
  if (fd < 0)
    return NULL;
  buf = xmalloc0(STAMPS_MAX + 1);
  for (;;) {
    ssize_t r = read(fd, buf + n, STAMPS_MAX - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (r == 0 && n == 0) || (r > 0 && n + (size_t)r == STAMPS_MAX)) {
      free(buf);
      return NULL;
    }
    if (r == 0)
      return buf;
    n += (size_t)r;
  }
}

static bool has_line(const char *text, const char *line) {
  size_t len = strlen(line);
  for (const char *p = text; p != NULL && *p != '\0';) {
    const char *nl = strchr(p, '\n');
    if (nl != NULL && (size_t)(nl - p + 1) == len && strncmp(p, line, len) == 0)
      return true;
    p = nl ? nl + 1 : NULL;
  }
  return false;
}

static bool same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mode == b->st_mode && a->st_uid == b->st_uid && a->st_gid == b->st_gid &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static long long ns_of(const struct timespec *t) {
  return (long long)t->tv_sec * NS_PER_S + t->tv_nsec;
}

/* the whole of fd, whose stat is st, into buf (st->st_size bytes); the same stat after */
static int read_exactly(int fd, const struct stat *st, char *buf) {
  size_t size = (size_t)st->st_size;
  struct stat after;
  /* one byte more than the stat says: a file grown since reads long */
  ssize_t n = safe_read_all(fd, buf, size + 1);
  if (n < 0)
    return -1;
  if ((size_t)n != size || fstat(fd, &after) < 0 || !same_file(st, &after))
    return errno = ESTALE, -1;
  return 0;
}

/* A copy of etc_fd's name (whose stat must still be *want) renamed into view_fd under the same
 * name, with its mode, owner and times. 1: made, and its source was changed too recently to
 * trust its times (racy); 0: made; -1 errno: not made (ESTALE: the host's file changed). */
static int copy_entry(int bundle_fd, int view_fd, int etc_fd, const char *name,
                      const struct stat *want) {
  cleanup_close int src = openat(etc_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_close int dst = -1;
  cleanup_free char *buf = NULL;
  cleanup_free char *tmp = xasprintf("%s.%s.%d", ETC_VIEW_STAMPS, name, (int)getpid());
  struct stat st, made;
  if (src < 0 || fstat(src, &st) < 0)
    return -1;
  if (!same_file(&st, want))
    return errno = ESTALE, -1;
  buf = xmalloc0((size_t)st.st_size + 1);
  if (read_exactly(src, &st, buf) < 0)
    return -1;
  dst = openat(bundle_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (dst < 0)
    return -1;
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (safe_write_all(dst, buf, (size_t)st.st_size) < 0 || fchown(dst, st.st_uid, st.st_gid) < 0 ||
      fchmod(dst, st.st_mode & 0777) < 0 || futimens(dst, times) < 0 || fstat(dst, &made) < 0 ||
      renameat(bundle_fd, tmp, view_fd, name) < 0) {
    int saved = errno;
    unlinkat(bundle_fd, tmp, 0);
    return errno = saved, -1;
  }
  return ns_of(&made.st_ctim) - ns_of(&st.st_ctim) < NS_PER_S ? 1 : 0;
}

/* whatever is at name in view_fd, gone */
static int remove_name(int view_fd, const char *name) {
  if (unlinkat(view_fd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno == EISDIR && unlinkat(view_fd, name, AT_REMOVEDIR) == 0)
    return 0;
  return -1;
}

/* an empty directory (dir) or file at name, kept when one is there */
static int make_mount_point(int view_fd, const char *name, bool dir) {
  struct stat st;
  cleanup_close int fd = -1;
  if (fstatat(view_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode) && st.st_size == 0)
      return 0;
    if (remove_name(view_fd, name) < 0)
      return -1;
  }
  if (dir)
    return mkdirat(view_fd, name, 0755) < 0 && errno != EEXIST ? -1 : 0;
  fd = openat(view_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
  return fd < 0 ? -1 : 0;
}

static bool wanted(const char *name, const struct etc_view_entry *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (e[i].kind != ETC_VIEW_ABSENT && strcmp(e[i].name, name) == 0)
      return true;
  return false;
}

/* every name in the view that entries do not want, removed */
static int remove_unwanted(int view_fd, const struct etc_view_entry *e, size_t n) {
  int fd = openat(view_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *de;
  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || wanted(de->d_name, e, n))
      continue;
    if (remove_name(view_fd, de->d_name) < 0)
      return -1;
  }
  return 0;
}

/* One entry made as it is wanted, unless the old record (kept: the view still matches it) has
 * its line; its line for the new record into out. */
static int sync_entry(int bundle_fd, int view_fd, int etc_fd, const struct etc_view_entry *e,
                      const char *kept, struct strbuf *out) {
  cleanup_sb struct strbuf line = {0};
  int r;
  if (e->kind == ETC_VIEW_ABSENT)
    return remove_name(view_fd, e->name);
  entry_line(&line, e->name, kind_letter(e->kind), &e->st);
  if (kept != NULL && has_line(kept, line.data)) {
    sb_puts(out, line.data);
    return 0;
  }
  if (e->kind != ETC_VIEW_COPY) {
    r = make_mount_point(view_fd, e->name, e->kind == ETC_VIEW_DIR);
    if (r == 0)
      sb_puts(out, line.data);
    return r;
  }
  r = copy_entry(bundle_fd, view_fd, etc_fd, e->name, &e->st);
  /* changed since the caller's stat (another run may have copied the newer file): what the view
   * has is left, and made again at the next run */
  if (r < 0 && errno != ESTALE)
    return -1;
  if (r != 0)
    line.data[strlen(e->name) + 1] = r == 1 ? 'r' : 'x';
  sb_puts(out, line.data);
  return 0;
}

/* the temporary files of a sync killed midway (ETC_VIEW_STAMPS.*): only a sync holding the lock
 * makes them, so none is in use; and those of a run killed while it wrote the covers' record
 * (ETC_COVERS_RECORD.*, written without the lock: one removed in use only leaves that run's record
 * unwritten) */
static void remove_leftovers(int bundle_fd) {
  int fd = openat(bundle_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *de;
  size_t len = strlen(ETC_VIEW_STAMPS), covers_len = strlen(ETC_COVERS_RECORD);
  if (d == NULL && fd >= 0)
    close(fd);
  while (d != NULL && (de = readdir(d)) != NULL)
    if (strncmp(de->d_name, ETC_VIEW_STAMPS ".", len + 1) == 0 ||
        strncmp(de->d_name, ETC_COVERS_RECORD ".", covers_len + 1) == 0)
      unlinkat(bundle_fd, de->d_name, 0);
}

static int write_stamps(int bundle_fd, const struct strbuf *text) {
  cleanup_free char *tmp = xasprintf("%s.%d", ETC_VIEW_STAMPS, (int)getpid());
  cleanup_close int fd = -1;
  fd = openat(bundle_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  if (safe_write_all(fd, text->data, text->len) < 0 ||
      renameat(bundle_fd, tmp, bundle_fd, ETC_VIEW_STAMPS) < 0) {
    int saved = errno;
    unlinkat(bundle_fd, tmp, 0);
    return errno = saved, -1;
  }
  return 0;
}

/* the record the view would have if it matched entries */
static void expected_stamps(struct strbuf *b, const struct stat *view,
                            const struct etc_view_entry *e, size_t n) {
  header_line(b, view);
  for (size_t i = 0; i < n; i++)
    if (e[i].kind != ETC_VIEW_ABSENT)
      entry_line(b, e[i].name, kind_letter(e[i].kind), &e[i].st);
}

static int open_view(int bundle_fd) {
  int fd = openat(bundle_fd, ETC_VIEW_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 || errno != ENOENT)
    return fd;
  if (mkdirat(bundle_fd, ETC_VIEW_NAME, 0755) < 0 && errno != EEXIST)
    return -1;
  fd = openat(bundle_fd, ETC_VIEW_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && fchmod(fd, 0755) < 0) { /* whatever the umask */
    close(fd);
    return -1;
  }
  return fd;
}

int etc_view_sync(int bundle_fd, int etc_fd, const struct etc_view_entry *entries, size_t n) {
  cleanup_close int view_fd = open_view(bundle_fd);
  cleanup_free char *old = NULL;
  cleanup_sb struct strbuf want = {0};
  cleanup_sb struct strbuf head = {0};
  cleanup_sb struct strbuf body = {0};
  cleanup_sb struct strbuf made = {0};
  struct stat view;
  if (view_fd < 0 || fstat(view_fd, &view) < 0)
    return -1;
  expected_stamps(&want, &view, entries, n);
  old = read_stamps(bundle_fd);
  if (old != NULL && strcmp(old, want.data) == 0)
    return 0;
  /* one writer at a time; what another one did meanwhile is read again */
  if (flock(view_fd, LOCK_EX) < 0 || fstat(view_fd, &view) < 0)
    return -1;
  free(old);
  old = read_stamps(bundle_fd);
  remove_leftovers(bundle_fd);
  header_line(&head, &view);
  /* a view changed by someone else than a sync (its own times moved): every entry made again */
  const char *kept = old != NULL && strncmp(old, head.data, head.len) == 0 ? old : NULL;
  for (size_t i = 0; i < n; i++)
    if (sync_entry(bundle_fd, view_fd, etc_fd, &entries[i], kept, &body) < 0)
      return -1;
  if (remove_unwanted(view_fd, entries, n) < 0 || fstat(view_fd, &view) < 0)
    return -1;
  header_line(&made, &view);
  if (body.len > 0)
    sb_append(&made, body.data, body.len);
  return write_stamps(bundle_fd, &made);
}
