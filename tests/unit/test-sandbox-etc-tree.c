/* sandbox-etc-tree.c through etc_view_sync: a directory of root's /etc view is a copy of what in
 * it everyone may read (world-readable directories and regular files at any depth, with mode,
 * owner and times; symbolic links as links), never a file or directory that is not
 * world-readable, a FIFO or a socket; one past its bounds (a file over the copy's size, more
 * names than allowed, deeper than allowed) is bound instead (an empty directory in the view). Once
 * its record is settled (its ctimes more than a second old), a sync with nothing changed writes
 * nothing, and each change (a file rewritten in place, made root-only, a root-only one made
 * readable, a name added two levels down, the directory replaced by a file, removed) is seen at
 * the next sync, each in a directory of its own. Scratch directories stand for /etc and the
 * bundle. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-etc-tree.h"
#include "sandbox-etc-view.h"
#include "sandbox-etc-walk.h"
#include "etc-fixture.h"
#include "tap.h"

static int etc_fd, bundle_fd;

static void put(const char *path, const char *text, mode_t mode) {
  fixture_put(etc_fd, path, text, mode);
}

static void dir(const char *path, mode_t mode) {
  fixture_dir(etc_fd, path, mode);
}

/* the view's copy of path, or "" */
static const char *view_text(const char *path) {
  static char buf[256];
  char at[PATH_MAX];
  snprintf(at, sizeof(at), "%s/%s", ETC_VIEW_NAME, path);
  return fixture_read(bundle_fd, at, buf, sizeof(buf));
}

static bool view_stat(const char *path, struct stat *st) {
  char at[PATH_MAX];
  snprintf(at, sizeof(at), "%s/%s", ETC_VIEW_NAME, path);
  return fstatat(bundle_fd, at, st, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool in_view(const char *path) {
  struct stat st;
  return view_stat(path, &st);
}

/* the entries as sandbox-etc.c makes them: stat with links followed, a directory a tree */
static void fill(struct etc_view_entry *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    e[i].bound = false;
    if (fstatat(etc_fd, e[i].name, &e[i].st, 0) < 0 || !etc_world_readable(e[i].st.st_mode))
      e[i].kind = ETC_VIEW_ABSENT;
    else
      e[i].kind = S_ISDIR(e[i].st.st_mode) ? ETC_VIEW_TREE : ETC_VIEW_COPY;
  }
}

static bool synced(struct etc_view_entry *e, size_t n) {
  fill(e, n);
  return etc_view_sync(bundle_fd, etc_fd, e, n) == 0;
}

static bool bound(const struct etc_view_entry *e, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(e[i].name, name) == 0)
      return e[i].kind == ETC_VIEW_TREE && e[i].bound;
  return false;
}

static void make_ssl(void) {
  dir("ssl", 0755);
  dir("ssl/certs", 0755);
  dir("ssl/tls", 0755);
  dir("ssl/tls/private", 0755);
  dir("ssl/private", 0700);
  put("ssl/openssl.cnf", "cnf\n", 0644);
  put("ssl/certs/ca.pem", "ca\n", 0644);
  put("ssl/certs/nested.key", "SECRET2\n", 0600);
  put("ssl/tls/private/localhost.key", "SECRET3\n", 0640);
  put("ssl/tls/private/open.pem", "open3\n", 0644);
  put("ssl/private/in-closed.pem", "SECRETDIR\n", 0644);
  symlinkat("ca.pem", etc_fd, "ssl/certs/abcd.0");
  symlinkat("/nowhere/at/all", etc_fd, "ssl/certs/dangling");
  mkfifoat(etc_fd, "ssl/certs/fifo", 0644);
}

static void test_copy(struct etc_view_entry *e, size_t n) {
  struct stat st, host;
  char target[64] = {0};
  tap_ok(synced(e, n), "the first sync makes the view");
  tap_ok(!bound(e, n, "ssl"), "a directory within the bounds is copied, not bound");
  tap_ok(strcmp(view_text("ssl/openssl.cnf"), "cnf\n") == 0 &&
             strcmp(view_text("ssl/certs/ca.pem"), "ca\n") == 0 &&
             strcmp(view_text("ssl/tls/private/open.pem"), "open3\n") == 0,
         "world-readable files one, two and three levels down are copied");
  tap_ok(view_stat("ssl/certs/ca.pem", &st) && fstatat(etc_fd, "ssl/certs/ca.pem", &host, 0) == 0 &&
             (st.st_mode & 07777) == 0644 && st.st_uid == host.st_uid && st.st_gid == host.st_gid &&
             st.st_mtim.tv_sec == host.st_mtim.tv_sec && st.st_mtim.tv_nsec == host.st_mtim.tv_nsec,
         "a copy has the host file's mode, owner and mtime");
  tap_ok(!in_view("ssl/certs/nested.key") && !in_view("ssl/tls/private/localhost.key"),
         "a file that is not world-readable, two and three levels down, is not there");
  tap_ok(!in_view("ssl/private"), "a directory that is not world-readable is not there");
  tap_ok(!in_view("ssl/certs/fifo"), "a FIFO is not there");
  tap_ok(view_stat("ssl/certs/abcd.0", &st) && S_ISLNK(st.st_mode) &&
             readlinkat(bundle_fd, ETC_VIEW_NAME "/ssl/certs/abcd.0", target, sizeof(target) - 1) >
                 0 &&
             strcmp(target, "ca.pem") == 0,
         "a symbolic link is a link with the same text");
  tap_ok(view_stat("ssl/certs/dangling", &st) && S_ISLNK(st.st_mode),
         "a dangling symbolic link is a link too");
  tap_ok(view_stat("ssl/certs", &st) && (st.st_mode & 07777) == 0755,
         "a directory has the host's mode");
}

/* bounds: a file over the copy's size, more names than the walk's, a directory too deep */
static void test_bounds(void) {
  struct etc_view_entry e[] = {{.name = "big"}, {.name = "many"}, {.name = "deep"}};
  char path[PATH_MAX] = "deep";
  int fd;
  dir("big", 0755);
  fd = openat(etc_fd, "big/large", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, ETC_VIEW_COPY_MAX + 1) < 0)
    perror("big/large");
  if (fd >= 0)
    close(fd);
  dir("many", 0755);
  for (int i = 0; i <= ETC_TREE_NAMES_MAX; i++) {
    snprintf(path, sizeof(path), "many/%d", i);
    put(path, "", 0644);
  }
  snprintf(path, sizeof(path), "deep");
  dir(path, 0755);
  for (int i = 0; i <= ETC_WALK_DEPTH_MAX; i++) {
    strcat(path, "/d");
    dir(path, 0755);
  }
  tap_ok(synced(e, 3), "a sync with directories past the bounds succeeds");
  tap_ok(bound(e, 3, "big") && !in_view("big/large"), "a file over the copy's size: bound");
  tap_ok(bound(e, 3, "many") && !in_view("many/0"), "more names than allowed: bound");
  tap_ok(bound(e, 3, "deep") && !in_view("deep/d"), "deeper than allowed: bound");
  struct stat st;
  tap_ok(view_stat("big", &st) && S_ISDIR(st.st_mode), "a bound one is an empty mount point");
  tap_ok(synced(e, 3) && bound(e, 3, "big") && bound(e, 3, "many") && bound(e, 3, "deep"),
         "and stays bound at the next sync");
}

/* waits until every ctime under the scratch /etc is more than a second old */
static void settle(void) {
  struct timespec now;
  struct stat st;
  int fd = openat(etc_fd, "settle-mark", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || fstat(fd, &st) < 0)
    perror("settle-mark");
  if (fd >= 0)
    close(fd);
  do {
    struct timespec tick = {0, 50 * 1000 * 1000};
    nanosleep(&tick, NULL);
    clock_gettime(CLOCK_REALTIME, &now);
  } while (now.tv_sec <= st.st_ctim.tv_sec + 1);
}

static bool stamps_ino(ino_t *ino) {
  struct stat st;
  if (fstatat(bundle_fd, ETC_VIEW_STAMPS, &st, 0) < 0)
    return false;
  *ino = st.st_ino;
  return true;
}

static void test_changes(void) {
  struct etc_view_entry e[] = {{.name = "inplace"}, {.name = "closed"}, {.name = "opened"},
                               {.name = "added"},   {.name = "kept"},   {.name = "typed"},
                               {.name = "gone"}};
  const size_t n = sizeof(e) / sizeof(e[0]);
  struct stat kept_before, kept_after;
  ino_t stamps, stamps_again;
  for (size_t i = 0; i < n; i++) {
    char path[64];
    dir(e[i].name, 0755);
    snprintf(path, sizeof(path), "%s/sub", e[i].name);
    dir(path, 0755);
    snprintf(path, sizeof(path), "%s/sub/file", e[i].name);
    put(path, "first\n", strcmp(e[i].name, "opened") == 0 ? 0600 : 0644);
  }
  settle();
  tap_ok(synced(e, n), "the directories are copied");
  tap_ok(stamps_ino(&stamps) && synced(e, n) && stamps_ino(&stamps_again) && stamps == stamps_again,
         "once settled, a sync with nothing changed writes nothing");
  tap_ok(view_stat("kept/sub/file", &kept_before), "the copies are there");
  put("inplace/sub/file", "again\n", 0644);
  fchmodat(etc_fd, "closed/sub/file", 0600, 0);
  fchmodat(etc_fd, "opened/sub/file", 0644, 0);
  put("added/sub/new", "new\n", 0644);
  unlinkat(etc_fd, "typed/sub/file", 0);
  unlinkat(etc_fd, "typed/sub", AT_REMOVEDIR);
  unlinkat(etc_fd, "typed", AT_REMOVEDIR);
  put("typed", "now a file\n", 0644);
  unlinkat(etc_fd, "gone/sub/file", 0);
  unlinkat(etc_fd, "gone/sub", AT_REMOVEDIR);
  unlinkat(etc_fd, "gone", AT_REMOVEDIR);
  tap_ok(synced(e, n), "the next sync succeeds");
  tap_ok(strcmp(view_text("inplace/sub/file"), "again\n") == 0,
         "a file rewritten in place two levels down is copied again");
  tap_ok(!in_view("closed/sub/file"), "a file made root-only is gone");
  tap_ok(strcmp(view_text("opened/sub/file"), "first\n") == 0,
         "a root-only file made world-readable is copied");
  tap_ok(strcmp(view_text("added/sub/new"), "new\n") == 0,
         "a file added two levels down is copied");
  tap_ok(view_stat("kept/sub/file", &kept_after) && kept_after.st_ino == kept_before.st_ino,
         "an unchanged directory is kept as it was");
  tap_ok(strcmp(view_text("typed"), "now a file\n") == 0,
         "a directory replaced by a file: the file is copied");
  tap_ok(!in_view("gone"), "a directory gone from the host is gone from the view");
}

int main(void) {
  char etc[] = "/tmp/fsrun-test-etc-tree.XXXXXX";
  char bundle[] = "/tmp/fsrun-test-etc-tree-bundle.XXXXXX";
  char cmd[256];
  struct etc_view_entry e[] = {{.name = "ssl"}, {.name = "missing"}};
  if (mkdtemp(etc) == NULL || mkdtemp(bundle) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  etc_fd = open(etc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  make_ssl();
  test_copy(e, sizeof(e) / sizeof(e[0]));
  test_bounds();
  test_changes();
  snprintf(cmd, sizeof(cmd), "rm -rf -- '%s' '%s'", etc, bundle);
  if (system(cmd) != 0)
    tap_diag("could not remove %s and %s", etc, bundle);
  return tap_done();
}
