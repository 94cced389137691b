/* openat2 and its ENOSYS fallback, a walk one component at a time. See openat2-compat.h.
 *
 * The walk keeps every directory it went through as an O_PATH fd, from the start directory down:
 * `..` is the fd before, never a lookup of the real `..`, so a directory moved during the walk
 * cannot lead above the start (the kernel answers EAGAIN there instead). Symlinks are read with
 * readlinkat and their text walked from where they are (relative) or from the start directory
 * (absolute, RESOLVE_IN_ROOT), as the kernel does under those flags. */
#include "openat2-compat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#define PROC_MAGIC     0x9fa0
#define PROC_ROOT_INO  1
#define WALK_MAX_LINKS 40 /* the kernel's MAXSYMLINKS */
#define WALK_RESOLVE                                                                               \
  (RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |               \
   RESOLVE_NO_XDEV)

struct walk {
  const struct open_how *how;
  int *dirs; /* dirs[0] the start directory, dirs[n - 1] the current one */
  size_t n, cap;
  char *rest; /* what is left to walk */
  int links;
  uint64_t mnt_id; /* of the start directory, for RESOLVE_NO_XDEV */
};

/* Under RESOLVE_BENEATH or RESOLVE_IN_ROOT the kernel answers EAGAIN to a path with `..` when any
 * rename or mount anywhere on the host happened during the lookup (openat2(2): "the caller may
 * retry"); on a host busy with containers that is often. Bounded: a file lease's EAGAIN stays. */
#define OPENAT2_EAGAIN_TRIES 64

int openat2_compat(int dirfd, const char *path, const struct open_how *how) {
  int fd, tries = 0;
  do
    fd = (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
  while (fd < 0 && errno == EAGAIN && ++tries < OPENAT2_EAGAIN_TRIES);
  if (fd < 0 && errno == ENOSYS)
    return openat2_walk(dirfd, path, how);
  return fd;
}

static int fail(int code) {
  errno = code;
  return -1;
}

static int mount_id(int fd, uint64_t *id) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
    return -1;
  if (!(stx.stx_mask & STATX_MNT_ID))
    return fail(EXDEV); /* cannot tell: refuse rather than cross unseen */
  *id = stx.stx_mnt_id;
  return 0;
}

/* RESOLVE_NO_XDEV: fd is on the start directory's mount. 0, or -1 with EXDEV. */
static int same_mount(const struct walk *w, int fd) {
  uint64_t id;
  if (!(w->how->resolve & RESOLVE_NO_XDEV))
    return 0;
  if (mount_id(fd, &id) < 0)
    return -1;
  return id == w->mnt_id ? 0 : fail(EXDEV);
}

static void push_dir(struct walk *w, int fd) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->dirs = realloc(w->dirs, w->cap * sizeof(*w->dirs));
    if (w->dirs == NULL)
      abort();
  }
  w->dirs[w->n++] = fd;
}

static void back_to(struct walk *w, size_t n) {
  while (w->n > n)
    close(w->dirs[--w->n]);
}

static int cur_dir(const struct walk *w) {
  return w->dirs[w->n - 1];
}

/* `..`: the directory before; at the start directory, EXDEV (RESOLVE_BENEATH) or the start
 * directory itself (RESOLVE_IN_ROOT, as `..` at a chroot's root). */
static int walk_up(struct walk *w) {
  if (w->n > 1) {
    back_to(w, w->n - 1);
    return 0;
  }
  return w->how->resolve & RESOLVE_IN_ROOT ? 0 : fail(EXDEV);
}

/* The kernel's magic links are procfs's (/proc/PID/fd/N, exe, cwd, root, ns/...). procfs's plain
 * symlinks (self, thread-self, mounts, net) are all in its root directory: every other symlink on
 * procfs counts as magic, which refuses more than the kernel would, never less. */
static bool magic_link(int parent, int link) {
  struct statfs sfs;
  struct stat st;
  if (fstatfs(link, &sfs) < 0 || sfs.f_type != PROC_MAGIC)
    return false;
  return fstat(parent, &st) < 0 || st.st_ino != PROC_ROOT_INO || fstatfs(parent, &sfs) < 0 ||
         sfs.f_type != PROC_MAGIC;
}

/* Walks the symlink `link` (in the current directory) next: its text, then after (as a directory
 * when dir, even with nothing after). 1 (w->rest replaced), or -1. */
static int follow_link(struct walk *w, int link, const char *after, bool dir) {
  char target[4096];
  ssize_t len;
  if (w->how->resolve & RESOLVE_NO_SYMLINKS || magic_link(cur_dir(w), link) ||
      ++w->links > WALK_MAX_LINKS)
    return fail(ELOOP);
  len = readlinkat(link, "", target, sizeof(target));
  if (len < 0)
    return -1;
  if (len == 0 || (size_t)len == sizeof(target))
    return fail(len == 0 ? ENOENT : ENAMETOOLONG);
  if (target[0] == '/') {
    if (!(w->how->resolve & RESOLVE_IN_ROOT))
      return fail(EXDEV);
    back_to(w, 1);
  }
  {
    char *rest = xasprintf("%.*s%s%s", (int)len, target, dir ? "/" : "", after);
    free(w->rest);
    w->rest = rest;
  }
  return 1;
}

/* A directory on the way: entered (0), or its symlink followed (1); -1 on error. */
static int step_dir(struct walk *w, const char *name, const char *after) {
  cleanup_close int fd = openat(cur_dir(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return -1;
  if (S_ISLNK(st.st_mode))
    return follow_link(w, fd, after, true);
  if (!S_ISDIR(st.st_mode))
    return fail(ENOTDIR);
  if (same_mount(w, fd) < 0)
    return -1;
  push_dir(w, steal_fd(&fd));
  return 0;
}

/* `.` at the end: the current directory, whose mount the walk checked when it entered it. */
static int open_current(const struct walk *w) {
  int fd = openat(cur_dir(w), ".", (int)w->how->flags, (mode_t)w->how->mode);
  if (fd >= 0 && same_mount(w, fd) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The last component, checked as `checked` (its O_PATH fd, stat want), opened with the caller's
 * flags. O_NONBLOCK (cleared after) so that a fifo swapped in cannot hold the open, O_NOCTTY so
 * that a tty cannot become ours; what was opened must be the file checked (EAGAIN: it changed, as
 * the kernel answers a race) on the start's mount (RESOLVE_NO_XDEV). The fd, or -1. */
static int reopen_checked(const struct walk *w, const char *name, const struct stat *want) {
  int flags = (int)w->how->flags, extra = O_NOFOLLOW | O_NOCTTY | (flags & O_PATH ? 0 : O_NONBLOCK);
  cleanup_close int fd = openat(cur_dir(w), name, flags | extra, (mode_t)w->how->mode);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return -1;
  if (st.st_dev != want->st_dev || st.st_ino != want->st_ino)
    return fail(EAGAIN);
  if (same_mount(w, fd) < 0)
    return -1;
  if (extra & O_NONBLOCK && !(flags & O_NONBLOCK) &&
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
    return -1;
  return steal_fd(&fd);
}

/* O_CREAT where nothing is: made with O_EXCL, so that the fd is the new file and never something
 * put there meanwhile (EAGAIN then, unless the caller asked O_EXCL). */
static int create_last(const struct walk *w, const char *name) {
  int flags = (int)w->how->flags;
  int fd = openat(cur_dir(w), name, flags | O_EXCL | O_NOFOLLOW | O_NOCTTY, (mode_t)w->how->mode);
  if (fd < 0 && errno == EEXIST && !(flags & O_EXCL))
    return fail(EAGAIN);
  return fd;
}

/* The last component: first an O_PATH|O_NOFOLLOW of it, checked as the resolve flags ask (its
 * mount, a symlink) before anything opens it with the caller's flags, as the kernel checks before
 * it opens: a fifo or a device mounted over it is refused unopened. A symlink there is followed (1
 * returned, the walk goes on) unless the caller asked O_NOFOLLOW. 0 with the fd, 1, or -1. */
static int open_last(struct walk *w, const char *name, int *out) {
  int flags = (int)w->how->flags;
  cleanup_close int path = openat(cur_dir(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (path < 0 && errno == ENOENT && flags & O_CREAT)
    return (*out = create_last(w, name)) < 0 ? -1 : 0;
  if (path < 0 || fstat(path, &st) < 0)
    return -1;
  if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
    return fail(EEXIST);
  if (S_ISLNK(st.st_mode) && !(flags & O_NOFOLLOW))
    return follow_link(w, path, "", false);
  if (same_mount(w, path) < 0)
    return -1;
  return (*out = reopen_checked(w, name, &st)) < 0 ? -1 : 0;
}

/* The next component of w->rest, NUL-terminated in place; *after is what follows it, *last true
 * when nothing but slashes does, *dir when a slash does (the component must be a directory). */
static char *next_component(struct walk *w, char **after, bool *last, bool *dir) {
  char *p = w->rest + strspn(w->rest, "/"), *end;
  if (*p == '\0')
    return NULL;
  end = strchrnul(p, '/');
  *dir = *end == '/';
  *after = *end ? end + 1 : end;
  *last = (*after)[strspn(*after, "/")] == '\0';
  *end = '\0';
  return p;
}

static int walk_rest(struct walk *w) {
  for (;;) {
    char *after, *name;
    bool last, dir;
    int r, fd = -1;
    name = next_component(w, &after, &last, &dir);
    if (name == NULL) /* "", ".", "a/..", "a/": the current directory itself */
      return open_current(w);
    if (strcmp(name, ".") == 0)
      r = 0;
    else if (strcmp(name, "..") == 0)
      r = walk_up(w);
    else if (!last || dir)
      r = step_dir(w, name, after);
    else if ((r = open_last(w, name, &fd)) == 0)
      return fd;
    if (r < 0)
      return -1;
    if (r == 0) /* rest moves on; follow_link replaced it otherwise */
      memmove(w->rest, after, strlen(after) + 1);
  }
}

static int walk_start(struct walk *w, int dirfd, const char *path) {
  uint64_t resolve = w->how->resolve;
  int fd;
  if (resolve & ~(uint64_t)WALK_RESOLVE || !(resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) ||
      (resolve & RESOLVE_BENEATH && resolve & RESOLVE_IN_ROOT))
    return fail(EINVAL);
  if (resolve & RESOLVE_NO_XDEV && w->how->flags & (O_CREAT | O_TRUNC))
    return fail(EINVAL);
  if (strnlen(path, PATH_MAX) == PATH_MAX)
    return fail(ENAMETOOLONG); /* as the kernel's getname: PATH_MAX with its NUL */
  if (path[0] == '\0')
    return fail(ENOENT);
  if (path[0] == '/' && resolve & RESOLVE_BENEATH)
    return fail(EXDEV);
  fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  push_dir(w, fd);
  if (resolve & RESOLVE_NO_XDEV && mount_id(fd, &w->mnt_id) < 0)
    return -1;
  w->rest = xstrdup(path);
  return 0;
}

int openat2_walk(int dirfd, const char *path, const struct open_how *how) {
  struct walk w = {.how = how};
  int fd = walk_start(&w, dirfd, path) < 0 ? -1 : walk_rest(&w);
  int code = errno;
  back_to(&w, 0);
  free(w.dirs);
  free(w.rest);
  errno = code;
  return fd;
}
