/* Root's /etc as one directory kept in the shared bundle (<state root>/.sandbox-bundle/etc): the
 * allowlist's regular files are copies there, its directories copies of what in them is
 * world-readable (sandbox-etc-tree.c; one past its bounds an empty mount point, as the other
 * files are, that a bind of the host's entry covers). A run binds the view read-only instead of
 * mounting a tmpfs and binding each entry (~40 mounts fewer a run, and as many fewer torn down).
 *
 * The view is made again only where the host changed: ETC_VIEW_STAMPS records, for each copy, the
 * stat of the host's file it was made from (device, inode, size, mode, owner, mtime, ctime), and
 * the view directory's own stat. A run compares that record with the stats it took anyway (one
 * read; a copied directory's record is checked by a stat of each directory and file it names), and
 * only when they differ takes the lock and rewrites what differs. A copy whose source's
 * ctime was within a second of the copy is recorded as such and made again at the next run: a
 * write in the same tick of the coarse clock as the copy's read leaves the file's times unchanged.
 * A copy is replaced by a rename, never emptied first: a running sandbox sees the old file or the
 * new one (a directory: the old tree or the new one, exchanged whole). The bundle directory is the
 * caller's (root's) own, mode 0700. */
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
#include "log.h"
#include "remove-tree.h"
#include "sandbox-etc-covers.h"
#include "sandbox-etc-tree.h"
#include "sandbox-etc-walk.h"
#include "utils.h"

#define STAMPS_HEADER "fsrun etc view 1"
#define STAMPS_MAX    (1024 * 1024)

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
  struct stat st;
  char *buf;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
      st.st_size > STAMPS_MAX)
    return NULL;
  /* one byte more than the stat says: a file grown since reads long */
  buf = xmalloc0((size_t)st.st_size + 2);
  if (safe_read_all(fd, buf, (size_t)st.st_size + 1) != st.st_size ||
      strlen(buf) != (size_t)st.st_size) {
    free(buf);
    return NULL;
  }
  return buf;
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

/* whatever is at name in view_fd, gone (a directory copied: with what is in it) */
static int remove_name(int view_fd, const char *name) {
  struct stat st;
  if (unlinkat(view_fd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR)
    return -1;
  remove_tree_at(view_fd, name, ETC_WALK_DEPTH_MAX + 2);
  return fstatat(view_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? -1 : 0;
}

/* A copy of etc_fd's name (whose stat must still be *want) renamed into view_fd under the same
 * name, with its mode, owner and times. 1: made, and its source was changed too recently to
 * trust its times (racy); 0: made; -1 errno: not made (ESTALE: the host's file changed). */
static int copy_entry(int bundle_fd, int view_fd, int etc_fd, const char *name,
                      const struct stat *want) {
  cleanup_close int src = openat(etc_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_close int dst = -1;
  cleanup_free char *tmp = xasprintf("%s.%s.%d", ETC_VIEW_STAMPS, name, (int)getpid());
  struct stat st, old;
  int r;
  if (src < 0 || fstat(src, &st) < 0)
    return -1;
  if (!etc_same_file(&st, want))
    return errno = ESTALE, -1;
  /* a directory there (the host's was one) is not replaced by a rename */
  if (fstatat(view_fd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(old.st_mode) &&
      remove_name(view_fd, name) < 0)
    return -1;
  dst = openat(bundle_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (dst < 0)
    return -1;
  r = etc_copy_contents(src, &st, dst);
  if (r < 0 || renameat(bundle_fd, tmp, view_fd, name) < 0) {
    int saved = errno;
    unlinkat(bundle_fd, tmp, 0);
    return errno = saved, -1;
  }
  return r;
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

/* a directory's line when the view binds it (it could not be copied): the identity of the host's
 * (a link followed), so that it is tried again only when that changes */
static void bound_line(struct strbuf *b, const struct etc_view_entry *e) {
  sb_printf(b, "%s b %ju %ju %jd.%09ld\n", e->name, (uintmax_t)e->st.st_dev,
            (uintmax_t)e->st.st_ino, (intmax_t)e->st.st_ctim.tv_sec, e->st.st_ctim.tv_nsec);
}

/* A directory's lines as the record old has them, into out, when they still describe the host (a
 * copy's, or a bind's: e->bound set); false when it is to be made again. */
static bool tree_kept(int etc_fd, const char *old, struct etc_view_entry *e, struct strbuf *out) {
  cleanup_sb struct strbuf line = {0};
  const char *block;
  size_t len;
  if (old == NULL)
    return false;
  bound_line(&line, e);
  if (has_line(old, line.data)) {
    e->bound = true;
    sb_puts(out, line.data);
    return true;
  }
  block = etc_tree_current(etc_fd, old, e->name, &len);
  if (block == NULL)
    return false;
  e->bound = false;
  sb_append(out, block, len);
  return true;
}

/* bundle_fd's tmp (a copied directory) at name in the view; what was there removed */
static int place_tree(int bundle_fd, const char *tmp, int view_fd, const char *name) {
  int r = renameat2(bundle_fd, tmp, view_fd, name, RENAME_NOREPLACE);
  if (r < 0 && errno == EEXIST)
    r = renameat2(bundle_fd, tmp, view_fd, name, RENAME_EXCHANGE);
  int saved = errno;
  /* after an exchange: the view's old entry */
  remove_tree_at(bundle_fd, tmp, ETC_WALK_DEPTH_MAX + 2);
  return errno = saved, r;
}

/* A directory copied into the view, or where it cannot be (sandbox-etc-tree.h), an empty
 * directory that the host's is bound over (e->bound); its lines for the new record into out. */
static int sync_tree(int bundle_fd, int view_fd, int etc_fd, struct etc_view_entry *e,
                     const char *kept, struct strbuf *out) {
  cleanup_free char *tmp = xasprintf("%s.%s.%d", ETC_VIEW_STAMPS, e->name, (int)getpid());
  struct timespec now;
  if (tree_kept(etc_fd, kept, e, out))
    return 0;
  e->bound = false;
  if (etc_tree_copy(etc_fd, e->name, bundle_fd, tmp, out) == 0)
    return place_tree(bundle_fd, tmp, view_fd, e->name);
  int why = errno;
  log_debug("sandbox: /etc/%s: not copied (%s): bound from the host", e->name, strerror(why));
  e->bound = true;
  if (remove_name(view_fd, e->name) < 0 || make_mount_point(view_fd, e->name, true) < 0)
    return -1;
  /* changed while it was copied, or too recently to trust its ctime: tried again next run */
  if (why == ESTALE || clock_gettime(CLOCK_REALTIME, &now) < 0 || etc_recent(&e->st.st_ctim, &now))
    sb_printf(out, "%s x\n", e->name);
  else
    bound_line(out, e);
  return 0;
}

/* One entry made as it is wanted, unless the old record (kept: the view still matches it) has
 * its line; its line for the new record into out. */
static int sync_entry(int bundle_fd, int view_fd, int etc_fd, struct etc_view_entry *e,
                      const char *kept, struct strbuf *out) {
  cleanup_sb struct strbuf line = {0};
  int r;
  if (e->kind == ETC_VIEW_ABSENT)
    return remove_name(view_fd, e->name);
  if (e->kind == ETC_VIEW_TREE)
    return sync_tree(bundle_fd, view_fd, etc_fd, e, kept, out);
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
    if (strncmp(de->d_name, ETC_VIEW_STAMPS ".", len + 1) == 0)
      remove_tree_at(bundle_fd, de->d_name, ETC_WALK_DEPTH_MAX + 2); /* a directory's copy too */
    else if (strncmp(de->d_name, ETC_COVERS_RECORD ".", covers_len + 1) == 0)
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

/* the record the view would have if it matched entries (a directory whose record old does not
 * still describe: a line no record has) */
static void expected_stamps(struct strbuf *b, const struct stat *view, int etc_fd, const char *old,
                            struct etc_view_entry *e, size_t n) {
  header_line(b, view);
  for (size_t i = 0; i < n; i++)
    if (e[i].kind == ETC_VIEW_TREE) {
      if (!tree_kept(etc_fd, old, &e[i], b))
        sb_printf(b, "%s ?\n", e[i].name);
    } else if (e[i].kind != ETC_VIEW_ABSENT)
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

int etc_view_sync(int bundle_fd, int etc_fd, struct etc_view_entry *entries, size_t n) {
  cleanup_close int view_fd = open_view(bundle_fd);
  cleanup_free char *old = NULL;
  cleanup_sb struct strbuf want = {0};
  cleanup_sb struct strbuf head = {0};
  cleanup_sb struct strbuf body = {0};
  cleanup_sb struct strbuf made = {0};
  struct stat view;
  if (view_fd < 0 || fstat(view_fd, &view) < 0)
    return -1;
  old = read_stamps(bundle_fd);
  expected_stamps(&want, &view, etc_fd, old, entries, n);
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
