/* Root's /etc view binds directories of the host's (ssl, alternatives, ...) and covers what in them
 * is not world-readable, at any depth (sandbox-etc-walk.c); finding that took a readdir of each
 * every run, /etc/alternatives's hundreds of links among them (~3 % of a root run's CPU). The set
 * of names in a directory and their types change only with the directory's ctime, which nothing
 * but the clock sets, so the names that are not links are kept in the bundle against the
 * directory's path under /etc and its (device, inode, ctime), each directory walked on its own
 * (a change two levels down moves that directory's ctime, not its parents'): a run whose
 * directory still has that stat stats only those names (their modes may have changed), and reads
 * the directory again otherwise. The record is root's, in its mode 0700 state root. */
#include "sandbox-etc-covers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

#define NS_PER_S 1000000000LL

static void dir_header(struct strbuf *b, const char *path, const struct stat *st) {
  sb_printf(b, "%s %llu %llu %lld %ld\n", path, (unsigned long long)st->st_dev,
            (unsigned long long)st->st_ino, (long long)st->st_ctim.tv_sec,
            (long)st->st_ctim.tv_nsec);
}

/* changed within the last second (or in the future): its ctime may not move for a change yet */
static bool racy(const struct stat *st) {
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) < 0)
    return true;
  long long ctime = (long long)st->st_ctim.tv_sec * NS_PER_S + st->st_ctim.tv_nsec;
  return (long long)now.tv_sec * NS_PER_S + now.tv_nsec - ctime < NS_PER_S;
}

/* the record's entries of a directory whose header is header: the first "\t" line after it */
static const char *recorded_entries(const char *record, const char *header) {
  size_t len = strlen(header);
  for (const char *p = record; p != NULL && *p != '\0';) {
    if (strncmp(p, header, len) == 0)
      return p + len;
    p = strchr(p, '\n');
    p = p != NULL ? p + 1 : NULL;
  }
  return NULL;
}

static int add_name(struct etc_names *out, const char *name, size_t max) {
  if (out->n == max)
    return errno = E2BIG, -1;
  sb_append(&out->text, name, strlen(name) + 1);
  out->n++;
  return 0;
}

static bool dot_or_dotdot(const char *name) {
  return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static int names_recorded(const char *entries, size_t max, struct etc_names *out) {
  while (*entries == '\t') {
    const char *end = strchr(entries, '\n');
    if (end == NULL)
      return 0;
    size_t len = (size_t)(end - entries - 1);
    cleanup_free char *name = xmalloc0(len + 1);
    memcpy(name, entries + 1, len);
    entries = end + 1;
    /* a name readdir gave; anything else in the record is not one */
    if (len == 0 || strchr(name, '/') != NULL || dot_or_dotdot(name))
      continue;
    if (add_name(out, name, max) < 0)
      return -1;
  }
  return 0;
}

/* *recordable: no name has a newline (the record's separator) */
static int names_read(int dir_fd, size_t max, struct etc_names *out, bool *recordable) {
  cleanup_dir DIR *d = opendir_at(dir_fd);
  struct dirent *e;
  if (d == NULL)
    return -1;
  while ((errno = 0, e = readdir(d)) != NULL) {
    /* a symlink is never covered: no stat for it (/etc/alternatives holds hundreds) */
    if (e->d_type == DT_LNK || dot_or_dotdot(e->d_name))
      continue;
    if (add_name(out, e->d_name, max) < 0)
      return -1;
    *recordable = *recordable && strchr(e->d_name, '\n') == NULL;
  }
  return errno != 0 ? -1 : 0;
}

static void record(struct etc_covers *c, const char *path, const struct stat *st,
                   const struct etc_names *names) {
  dir_header(&c->next, path, st);
  for (const char *n = etc_names_next(names, NULL); n != NULL; n = etc_names_next(names, n))
    sb_printf(&c->next, "\t%s\n", n);
}

int etc_covers_names(struct etc_covers *c, int dir_fd, const char *path, size_t max,
                     struct etc_names *out) {
  struct stat st;
  const char *entries = NULL;
  bool recordable = true;
  int r;
  memset(out, 0, sizeof(*out));
  if (fstat(dir_fd, &st) < 0)
    return -1;
  if (c != NULL && c->old != NULL) {
    struct strbuf header = {0};
    dir_header(&header, path, &st);
    entries = recorded_entries(c->old, header.data);
    free(header.data);
  }
  r = entries != NULL ? names_recorded(entries, max, out)
                      : names_read(dir_fd, max, out, &recordable);
  if (r < 0) {
    int saved = errno;
    etc_names_free(out);
    return errno = saved, -1;
  }
  if (c != NULL && (entries != NULL || (recordable && !racy(&st))))
    record(c, path, &st, out);
  return 0;
}

const char *etc_names_next(const struct etc_names *names, const char *name) {
  const char *p = name == NULL ? names->text.data : name + strlen(name) + 1;
  return p != NULL && p < names->text.data + names->text.len ? p : NULL;
}

void etc_names_free(struct etc_names *names) {
  free(names->text.data);
  memset(names, 0, sizeof(*names));
}

void etc_covers_begin(int bundle_fd, struct etc_covers *c) {
  cleanup_error fsrun_error_t err = NULL;
  size_t len = 0;
  memset(c, 0, sizeof(*c));
  if (read_file_at_nofollow(bundle_fd, ETC_COVERS_RECORD, &c->old, &len, &err) < 0 ||
      strlen(c->old) != len) {
    free(c->old);
    c->old = NULL;
  }
}

void etc_covers_end(int bundle_fd, struct etc_covers *c) {
  cleanup_free char *tmp = xasprintf("%s.%d", ETC_COVERS_RECORD, (int)getpid());
  const char *next = c->next.data != NULL ? c->next.data : "";
  if (c->old == NULL || strcmp(c->old, next) != 0) {
    int fd = openat(bundle_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      bool ok = safe_write_all(fd, next, strlen(next)) == 0;
      close(fd);
      if (!ok || renameat(bundle_fd, tmp, bundle_fd, ETC_COVERS_RECORD) < 0)
        unlinkat(bundle_fd, tmp, 0);
    }
  }
  free(c->old);
  free(c->next.data);
  memset(c, 0, sizeof(*c));
}
