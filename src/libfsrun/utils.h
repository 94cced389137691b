/* Small helpers used across libfsrun: cleanup attributes, safe I/O, fd-relative paths. */
#ifndef FSRUN_UTILS_H
#define FSRUN_UTILS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

void cleanup_freep(void *p);
void cleanup_closep(int *fd);
void cleanup_fclosep(void *f);
void cleanup_dirp(void *d);
/* A DIR stream of its own on the directory dirfd names (closedir leaves dirfd open); NULL with
 * errno */
DIR *opendir_at(int dirfd);

#define cleanup_free  __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_file  __attribute__((cleanup(cleanup_fclosep)))
#define cleanup_dir   __attribute__((cleanup(cleanup_dirp)))

/* Returns the value of *p and sets *p to a "moved-out" value, so the cleanup attribute skips it. */
static inline int steal_fd(int *fd) {
  int r = *fd;
  *fd = -1;
  return r;
}
static inline void *steal_ptr(void *pp) {
  void **p = (void **)pp;
  void *r = *p;
  *p = NULL;
  return r;
}

void *xmalloc0(size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* dirfd/name opened for reading only if it is a regular file: first as O_PATH (links followed
 * unless follow is false), then, after fstat, reopened through /proc/self/fd. A fifo or a device
 * (a link a sandboxed run left, to one of the host's) is never opened, so its open has no effect
 * (a blocked writer released, a watchdog armed). st gets what fstat said. -1 with errno: EINVAL
 * for anything but a regular file. */
int open_regular_at(int dirfd, const char *name, bool follow, struct stat *st);
/* the same for an O_PATH fd already taken (-1: errno as its open left it) */
int open_regular_of(int path_fd, struct stat *st);

/* Full read/write, restarting on EINTR and short transfers. */
ssize_t safe_read_all(int fd, void *buf, size_t len);
int safe_write_all(int fd, const void *buf, size_t len);

/* Reads a whole (small) file relative to dirfd (AT_FDCWD for a path) into a NUL-terminated buffer.
 */
int read_file_at(int dirfd, const char *path, char **out, size_t *len, fsrun_error_t *err);
/* Whether we are in a user namespace other than the initial one (rootless podman runs the runtime
 * as uid 0 of one it set up). */
bool in_child_user_namespace(void);
/* read_file_at, but a symlink at path is an error (ELOOP), not followed. */
int read_file_at_nofollow(int dirfd, const char *path, char **out, size_t *len, fsrun_error_t *err);
/* Writes len bytes to an existing file (O_WRONLY|O_CLOEXEC|O_NOFOLLOW) relative to dirfd. */
int write_file_at(int dirfd, const char *path, const void *data, size_t len, fsrun_error_t *err);
/* Writes a file atomically: a temporary file in the same directory, fsync'd, renamed over path. */
int write_file_atomic_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode,
                         fsrun_error_t *err);

/* mkdir -p relative to dirfd with mode for the created parts; never follows symlinks out. */
int mkdir_p_at(int dirfd, const char *path, mode_t mode, fsrun_error_t *err);

/* Whether we run in the host's user namespace (one stat: its inode number is fixed); true when
 * that cannot be told. */
bool in_initial_user_namespace(void);

/* CLOCK_MONOTONIC in milliseconds (deadlines and durations). */
int64_t monotonic_ms(void);
/* The CPU time (user and system) this process has used, in milliseconds: work done, whatever the
 * load (a wall-clock limit is reached sooner on a busy machine). */
int64_t process_cpu_ms(void);

/* Current time as RFC 3339 with nanoseconds, UTC ("2026-11-29T19:35:41.123456789Z"). */
char *rfc3339_now(void);
/* The same into buf (64 bytes are enough), without allocating. */
void rfc3339_format(char *buf, size_t cap);
/* ts (CLOCK_REALTIME) formatted so. */
void rfc3339_format_time(const struct timespec *ts, char *buf, size_t cap);

#endif
