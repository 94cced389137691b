/* sandbox-etc-view.c: root's /etc view in a bundle. A sync makes the wanted copies (content, mode,
 * owner, times) and mount points, and nothing else: a name it does not want is removed, also one
 * planted in the view; a second sync with nothing changed writes nothing; a source rewritten in
 * place with the same size, made unreadable or gone is followed at the next sync; a copy whose
 * source changed after the caller's stat is made again at the next sync; a copy made within a
 * second of its source's change is made again. Scratch directories stand for /etc and the bundle
 * (one entry a link to the system's os-release: a file whose times are old). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-etc-view.h"
#include "etc-fixture.h"
#include "tap.h"

static int etc_fd, bundle_fd;

static void put(const char *name, const char *text, mode_t mode) {
  fixture_put(etc_fd, name, text, mode);
}

/* the view's copy of name, or "" */
static const char *view_text(const char *name) {
  static char buf[256];
  char path[64];
  snprintf(path, sizeof(path), "%s/%s", ETC_VIEW_NAME, name);
  return fixture_read(bundle_fd, path, buf, sizeof(buf));
}

static bool view_stat(const char *name, struct stat *st) {
  char path[64];
  snprintf(path, sizeof(path), "%s/%s", ETC_VIEW_NAME, name);
  return fstatat(bundle_fd, path, st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* the entries as sandbox-etc.c makes them: stat with links followed, kind by type */
static void fill(struct etc_view_entry *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (fstatat(etc_fd, e[i].name, &e[i].st, 0) < 0 || (e[i].st.st_mode & S_IROTH) == 0)
      e[i].kind = ETC_VIEW_ABSENT;
    else
      e[i].kind = S_ISDIR(e[i].st.st_mode) ? ETC_VIEW_DIR : ETC_VIEW_COPY;
  }
}

static size_t view_count(void) {
  int fd = openat(bundle_fd, ETC_VIEW_NAME, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *de;
  size_t n = 0;
  while (d != NULL && (de = readdir(d)) != NULL)
    n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
  if (d != NULL)
    closedir(d);
  return n;
}

static bool stamps_stat(struct stat *st) {
  return fstatat(bundle_fd, ETC_VIEW_STAMPS, st, 0) == 0;
}

/* whether the record says name's copy is to be made again (r or x) */
static bool recorded_again(const char *name) {
  char buf[4096], want[64];
  int fd = openat(bundle_fd, ETC_VIEW_STAMPS, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
  if (fd >= 0)
    close(fd);
  buf[n > 0 ? n : 0] = '\0';
  snprintf(want, sizeof(want), "\n%s r ", name);
  if (strstr(buf, want) != NULL)
    return true;
  snprintf(want, sizeof(want), "\n%s x ", name);
  return strstr(buf, want) != NULL;
}

static void test_first(struct etc_view_entry *e, size_t n) {
  struct stat st, host, before, after;
  fill(e, n);
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, n) == 0, "the first sync makes the view");
  tap_ok(strcmp(view_text("passwd"), "root:x:0:0\n") == 0, "a world-readable file is copied");
  tap_ok(view_stat("passwd", &st) && fstatat(etc_fd, "passwd", &host, 0) == 0 &&
             (st.st_mode & 07777) == 0644 && st.st_uid == host.st_uid &&
             st.st_mtim.tv_sec == host.st_mtim.tv_sec && st.st_mtim.tv_nsec == host.st_mtim.tv_nsec,
         "the copy has the host file's mode, owner and mtime");
  tap_ok(strcmp(view_text("localtime"), "root:x:0:0\n") == 0,
         "a symlink's target is what is copied");
  tap_ok(!view_stat("private.key", &st), "a file that is not world-readable is not in the view");
  tap_ok(view_stat("ssl", &st) && S_ISDIR(st.st_mode), "a directory is an empty mount point");
  tap_ok(view_count() == 3, "nothing else is in the view (%zu names)", view_count());
  /* passwd was written just now: its times may not show a write in the same tick. The copy's
   * ctime is not before the time the sync compared, so within a second it must say racy. */
  long long gap = ((long long)st.st_ctim.tv_sec - host.st_ctim.tv_sec) * 1000000000LL +
                  (st.st_ctim.tv_nsec - host.st_ctim.tv_nsec);
  if (gap >= 1000000000LL) {
    tap_skip("passwd was copied more than a second after it was written (a stalled test)");
    return;
  }
  tap_ok(recorded_again("passwd"),
         "a copy made within a second of its source's change is "
         "recorded to be made again (%lld ns)",
         gap);
  tap_ok(view_stat("passwd", &before) && etc_view_sync(bundle_fd, etc_fd, e, n) == 0 &&
             view_stat("passwd", &after) && after.st_ino != before.st_ino,
         "a copy made within a second of its source's change is made again at the next sync");
}

/* a source whose times are old (the system's os-release): the second sync writes nothing */
static void test_steady(void) {
  struct etc_view_entry e[] = {{.name = "release"}, {.name = "ssl"}};
  struct stat stamps, again, copy, copy_again;
  struct timespec now;
  fill(e, 2);
  clock_gettime(CLOCK_REALTIME, &now);
  if (e[0].kind != ETC_VIEW_COPY || now.tv_sec - e[0].st.st_ctim.tv_sec < 2) {
    tap_skip("no /usr/lib/os-release older than two seconds");
    return;
  }
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, 2) == 0 && view_count() == 2 &&
             !recorded_again("release"),
         "a copy of an old file is recorded as it is");
  tap_ok(stamps_stat(&stamps) && view_stat("release", &copy) &&
             etc_view_sync(bundle_fd, etc_fd, e, 2) == 0 && stamps_stat(&again) &&
             view_stat("release", &copy_again) && again.st_ino == stamps.st_ino &&
             copy_again.st_ino == copy.st_ino,
         "a sync with nothing changed writes nothing");
}

/* the record of name's copy as if it had been made long after its source's change */
static bool record_as_settled(const char *name) {
  char buf[4096], racy[64];
  int fd = openat(bundle_fd, ETC_VIEW_STAMPS, O_RDWR | O_CLOEXEC);
  ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
  char *p;
  bool ok = false;
  buf[n > 0 ? n : 0] = '\0';
  snprintf(racy, sizeof(racy), "\n%s r ", name);
  p = strstr(buf, racy);
  if (p != NULL)
    p[strlen(name) + 2] = 'c';
  if (fd >= 0 && (p != NULL || strstr(buf, racy) == NULL))
    ok = pwrite(fd, buf, (size_t)n, 0) == n;
  if (fd >= 0)
    close(fd);
  return ok;
}

static void test_changes(struct etc_view_entry *e, size_t n) {
  struct timespec later[2] = {{0, UTIME_OMIT}, {2000000000, 0}};
  struct stat before, after;
  int fd;
  tap_ok(record_as_settled("passwd") && view_stat("passwd", &before) &&
             etc_view_sync(bundle_fd, etc_fd, e, n) == 0 && view_stat("passwd", &after) &&
             after.st_ino == before.st_ino,
         "a settled copy whose source is unchanged is kept");
  /* the same size in place, and an mtime of its own: only the stat tells */
  put("passwd", "root:y:0:0\n", 0644);
  utimensat(etc_fd, "passwd", later, 0);
  fill(e, n);
  tap_ok(record_as_settled("passwd") && etc_view_sync(bundle_fd, etc_fd, e, n) == 0 &&
             strcmp(view_text("passwd"), "root:y:0:0\n") == 0,
         "a settled copy whose source was rewritten in place (same size) is made again");
  fchmodat(etc_fd, "passwd", 0600, 0);
  fill(e, n);
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, n) == 0 && view_text("passwd")[0] == '\0',
         "a file made root-only is gone from the view");
  fchmodat(etc_fd, "passwd", 0644, 0);
  fill(e, n);
  fd = openat(bundle_fd, ETC_VIEW_NAME "/shadow", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0)
    close(fd);
  tap_ok(fd >= 0 && etc_view_sync(bundle_fd, etc_fd, e, n) == 0 && view_count() == 3,
         "a name planted in the view is removed");
  /* changed after the caller's stat: the view keeps what it had, and follows at the next sync */
  put("passwd", "root:z:0:0:changed\n", 0644);
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, n) == 0 && recorded_again("passwd"),
         "a file changed since the caller's stat is recorded to be made again");
  fill(e, n);
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, n) == 0 &&
             strcmp(view_text("passwd"), "root:z:0:0:changed\n") == 0,
         "and is made at the next sync");
  unlinkat(etc_fd, "passwd", 0);
  fill(e, n);
  tap_ok(etc_view_sync(bundle_fd, etc_fd, e, n) == 0 && !view_stat("passwd", &(struct stat){0}),
         "a file gone from the host is gone from the view");
}

int main(void) {
  char etc[] = "/tmp/fsrun-test-etc-view.XXXXXX";
  char bundle[] = "/tmp/fsrun-test-etc-bundle.XXXXXX";
  char cmd[256];
  struct etc_view_entry e[] = {{.name = "passwd"},
                               {.name = "localtime"},
                               {.name = "private.key"},
                               {.name = "ssl"},
                               {.name = "missing"}};
  if (mkdtemp(etc) == NULL || mkdtemp(bundle) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  etc_fd = open(etc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  put("passwd", "root:x:0:0\n", 0644);
  put("private.key", "secret\n", 0600);
  symlinkat("passwd", etc_fd, "localtime");
  symlinkat("/usr/lib/os-release", etc_fd, "release");
  mkdirat(etc_fd, "ssl", 0755);
  test_steady();
  test_first(e, sizeof(e) / sizeof(e[0]));
  test_changes(e, sizeof(e) / sizeof(e[0]));
  snprintf(cmd, sizeof(cmd), "rm -rf -- '%s' '%s'", etc, bundle);
  if (system(cmd) != 0)
    tap_diag("could not remove %s and %s", etc, bundle);
  return tap_done();
}
