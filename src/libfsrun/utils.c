#include "utils.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void cleanup_freep(void *p) {
  void **pp = (void **)p;
  free(*pp);
  *pp = NULL;
}

void cleanup_closep(int *fd) {
  if (*fd >= 0) {
    int saved = errno;
    close(*fd);
    errno = saved;
  }
  *fd = -1;
}

void cleanup_fclosep(void *f) {
  FILE **fp = (FILE **)f;
  if (*fp != NULL)
    fclose(*fp);
  *fp = NULL;
}

void cleanup_dirp(void *d) {
  DIR **dp = (DIR **)d;
  if (*dp != NULL)
    closedir(*dp);
  *dp = NULL;
}

DIR *opendir_at(int dirfd) {
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (d == NULL && fd >= 0) {
    int saved = errno;
    close(fd);
    errno = saved;
  }
  return d;
}

void *xmalloc0(size_t size) {
  void *p = calloc(1, size ? size : 1);
  if (p == NULL)
    abort();
  return p;
}

char *xstrdup(const char *s) {
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup(s);
  if (r == NULL)
    abort();
  return r;
}

char *xasprintf(const char *fmt, ...) {
  char *r = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&r, fmt, ap) < 0)
    abort();
  va_end(ap);
  return r;
}

int open_regular_of(int path_fd, struct stat *st) {
  char self[64];
  if (path_fd < 0 || fstat(path_fd, st) < 0)
    return -1;
  if (!S_ISREG(st->st_mode)) {
    errno = EINVAL;
    return -1;
  }
  snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
  return open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

int open_regular_at(int dirfd, const char *name, bool follow, struct stat *st) {
  cleanup_close int path = openat(dirfd, name, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  return open_regular_of(path, st);
}

ssize_t safe_read_all(int fd, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t r = read(fd, (char *)buf + done, len - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    done += (size_t)r;
  }
  return (ssize_t)done;
}

int safe_write_all(int fd, const void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t r = write(fd, (const char *)buf + done, len - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    done += (size_t)r;
  }
  return 0;
}

static int read_file_flags(int dirfd, const char *path, int flags, char **out, size_t *len,
                           fsrun_error_t *err) {
  cleanup_close int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
  cleanup_free char *buf = NULL;
  size_t size = 0, cap = 0;
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s`", path);
  for (;;) {
    ssize_t r;
    if (cap - size < 4096) {
      char *n;
      cap = cap ? cap * 2 : 8192;
      n = realloc(buf, cap + 1);
      if (n == NULL)
        return fsrun_error_make(err, ENOMEM, "read `%s`", path);
      buf = n;
    }
    r = read(fd, buf + size, cap - size);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fsrun_error_errno(err, "read `%s`", path);
    if (r == 0)
      break;
    size += (size_t)r;
  }
  if (buf == NULL)
    buf = xmalloc0(1);
  buf[size] = '\0';
  *out = steal_ptr(&buf);
  if (len)
    *len = size;
  return 0;
}

int read_file_at(int dirfd, const char *path, char **out, size_t *len, fsrun_error_t *err) {
  return read_file_flags(dirfd, path, 0, out, len, err);
}

int read_file_at_nofollow(int dirfd, const char *path, char **out, size_t *len,
                          fsrun_error_t *err) {
  return read_file_flags(dirfd, path, O_NOFOLLOW, out, len, err);
}

int write_file_at(int dirfd, const char *path, const void *data, size_t len, fsrun_error_t *err) {
  cleanup_close int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s`", path);
  if (safe_write_all(fd, data, len) < 0)
    return fsrun_error_errno(err, "write `%s`", path);
  return 0;
}

int write_file_atomic_at(int dirfd, const char *path, const void *data, size_t len, mode_t mode,
                         fsrun_error_t *err) {
  cleanup_free char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
  cleanup_close int fd = -1;
  /* a new file, as status.c's: nothing another left at the temporary name is written through */
  if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
    return fsrun_error_errno(err, "remove `%s`", tmp);
  fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return fsrun_error_errno(err, "create `%s`", tmp);
  if (safe_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return fsrun_error_make(err, saved, "write `%s`", tmp);
  }
  if (renameat(dirfd, tmp, dirfd, path) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return fsrun_error_make(err, saved, "rename `%s` to `%s`", tmp, path);
  }
  return 0;
}

int mkdir_p_at(int dirfd, const char *path, mode_t mode, fsrun_error_t *err) {
  cleanup_free char *copy = xstrdup(path);
  char *p = copy;
  while (*p == '/' && dirfd != AT_FDCWD)
    p++;
  for (char *s = p + (*p == '/');; s++) {
    if (*s == '/' || *s == '\0') {
      char saved = *s;
      *s = '\0';
      if (*p != '\0' && mkdirat(dirfd, p, mode) < 0 && errno != EEXIST)
        return fsrun_error_errno(err, "mkdir `%s`", p);
      *s = saved;
      if (saved == '\0')
        break;
    }
  }
  return 0;
}

/* The civil date of a day count since 1970-01-01 (proleptic Gregorian calendar; the era
 * arithmetic of the usual days-from-civil inversion: 400-year eras of 146097 days, years that
 * start on March 1st so that the leap day comes last). */
static void civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day) {
  int64_t z = days + 719468; /* days since 0000-03-01 */
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);                          /* [0, 146096] */
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
  unsigned mp = (5 * doy + 2) / 153;                                    /* March = 0 */
  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = (int64_t)yoe + era * 400 + (*month <= 2);
}

/* Not gmtime_r (nor strftime): glibc initialises its time zone on the first call of either, which
 * reads /etc/localtime even for UTC (7 system calls in every create). */
void rfc3339_format_time(const struct timespec *ts, char *buf, size_t cap) {
  int64_t days = (int64_t)ts->tv_sec / 86400, secs = (int64_t)ts->tv_sec % 86400, year;
  unsigned month, day;
  if (secs < 0) {
    secs += 86400;
    days--;
  }
  civil_from_days(days, &year, &month, &day);
  snprintf(buf, cap, "%04lld-%02u-%02uT%02d:%02d:%02d.%09ldZ", (long long)year, month, day,
           (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), (long)ts->tv_nsec);
}

void rfc3339_format(char *buf, size_t cap) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  rfc3339_format_time(&ts, buf, cap);
}

char *rfc3339_now(void) {
  char buf[64];
  rfc3339_format(buf, sizeof(buf));
  return xstrdup(buf);
}

/* PROC_USER_INIT_INO of the kernel's include/linux/proc_ns.h: a fixed number, part of the ABI */
#define INITIAL_USER_NS_INODE 0xEFFFFFFDU

bool in_initial_user_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/user", &st) < 0 || st.st_ino == INITIAL_USER_NS_INODE;
}

int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t process_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the full identity map means the initial user namespace */
bool in_child_user_namespace(void) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *map = NULL;
  unsigned long inside, outside, count;
  if (read_file_at(AT_FDCWD, "/proc/self/uid_map", &map, NULL, &err) < 0)
    return false;
  if (sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3)
    return true;
  return !(inside == 0 && outside == 0 && count == 4294967295UL);
}
