/* Root's /etc view binds 9 directories of the host's (ssl, alternatives, ...) and covers what in
 * them is not world-readable; finding that took a readdir of each every run, /etc/alternatives's
 * hundreds of links among them (~3 % of a root run's CPU). The set of names in a directory and
 * their types change only with the directory's ctime, which nothing but the clock sets, so the
 * names that are not links are kept in the bundle against (device, inode, ctime): a run whose
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
#include <time.h>
#include <unistd.h>

#include "utils.h"

#define NS_PER_S 1000000000LL

static void dir_header(struct strbuf *b, const char *name, const struct stat *st) {
  sb_printf(b, "%s %llu %llu %lld %ld\n", name, (unsigned long long)st->st_dev,
            (unsigned long long)st->st_ino, (long long)st->st_ctim.tv_sec,
            (long)st->st_ctim.tv_nsec);
}

static bool same_dir(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
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

static void visit_recorded(struct etc_covers *c, int dir_fd, const char *entries,
                           void (*visit)(int, const char *, void *), void *arg) {
  while (*entries == '\t') {
    const char *end = strchr(entries, '\n');
    if (end == NULL)
      return;
    size_t len = (size_t)(end - entries - 1);
    cleanup_free char *entry = xmalloc0(len + 1);
    memcpy(entry, entries + 1, len);
    entries = end + 1;
    /* a name readdir gave; anything else in the record is not one */
    if (len == 0 || strchr(entry, '/') != NULL || strcmp(entry, ".") == 0 ||
        strcmp(entry, "..") == 0)
      continue;
    visit(dir_fd, entry, arg);
    sb_printf(&c->next, "\t%s\n", entry);
  }
}

/* the directory read; its entries recorded when they can be told apart and trusted */
static void visit_read(struct etc_covers *c, int dir_fd, const char *name, const struct stat *st,
                       void (*visit)(int, const char *, void *), void *arg) {
  int fd = dup(dir_fd);
  cleanup_dir DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct strbuf block = {0};
  bool keep = !racy(st);
  struct dirent *e;
  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  dir_header(&block, name, st);
  while ((e = readdir(d)) != NULL) {
    /* a symlink is never covered: no stat for it (/etc/alternatives holds hundreds) */
    if (e->d_type == DT_LNK || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    visit(dir_fd, e->d_name, arg);
    keep = keep && strchr(e->d_name, '\n') == NULL;
    sb_printf(&block, "\t%s\n", e->d_name);
  }
  if (keep)
    sb_append(&c->next, block.data, block.len);
  free(block.data);
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

void etc_covers_each(struct etc_covers *c, int etc_fd, const char *name, const struct stat *st,
                     void (*visit)(int dir_fd, const char *entry, void *arg), void *arg) {
  cleanup_close int dir_fd = openat(etc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct strbuf header = {0};
  struct stat now;
  const char *entries;
  if (dir_fd < 0 || fstat(dir_fd, &now) < 0)
    return;
  dir_header(&header, name, &now);
  /* the directory opened is the one stat'ed (else read, and the record made of what it is now) */
  entries = same_dir(&now, st) && c->old != NULL ? recorded_entries(c->old, header.data) : NULL;
  free(header.data);
  if (entries != NULL) {
    dir_header(&c->next, name, &now);
    visit_recorded(c, dir_fd, entries, visit, arg);
  } else
    visit_read(c, dir_fd, name, &now, visit, arg);
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
