/* sandbox-etc-walk.c: the covers below a directory of root's /etc view. Each entry that is not
 * world-readable is covered at any depth (a directory by an empty one, a file or a FIFO by an
 * unreadable file), links never; world-readable neighbours are not; a directory deeper than
 * ETC_WALK_DEPTH_MAX, or one whose names would go past what is left of the walk's names, is
 * covered whole; what the record keeps of a directory two levels down is dropped when that
 * directory changes. A scratch directory stands for /etc (its "d" for /etc/ssl). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-etc-walk.h"
#include "sandbox.h"
#include "etc-fixture.h"
#include "tap.h"

static int etc_fd, bundle_fd;

static void put(const char *name, mode_t mode) {
  fixture_put(etc_fd, name, "", mode);
}

static void dir(const char *name, mode_t mode) {
  fixture_dir(etc_fd, name, mode);
}

static void free_list(struct mount_list *l) {
  for (size_t i = 0; i < l->len; i++) {
    free(l->items[i].destination);
    free(l->items[i].source);
    free(l->items[i].type);
    for (size_t j = 0; j < l->items[i].options.len; j++)
      free(l->items[i].options.items[j]);
    free(l->items[i].options.items);
  }
  free(l->items);
  memset(l, 0, sizeof(*l));
}

/* the source of the mount at dest ("" none) */
static const char *source_at(const struct mount_list *l, const char *dest) {
  for (size_t i = 0; i < l->len; i++)
    if (strcmp(l->items[i].destination, dest) == 0)
      return l->items[i].source;
  return "";
}

/* one walk of "d" with names_left names; covers (NULL: no record) */
static void walk(struct mount_list *l, struct etc_covers *covers, size_t names_left) {
  struct etc_walk w = {.covers = covers, .l = l, .names_left = names_left};
  free_list(l);
  etc_walk_covers(&w, etc_fd, "d");
}

/* a walk of "d" with the bundle's record, read and written */
static void walk_recorded(struct mount_list *l) {
  struct etc_covers c;
  etc_covers_begin(bundle_fd, &c);
  walk(l, &c, ETC_WALK_NAMES_MAX);
  etc_covers_end(bundle_fd, &c);
}

static bool recorded(const char *header_start) {
  char buf[4096];
  int fd = openat(bundle_fd, ETC_COVERS_RECORD, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  char line[256];
  snprintf(line, sizeof(line), "\n%s ", header_start);
  return strncmp(buf, header_start, strlen(header_start)) == 0 || strstr(buf, line) != NULL;
}

/* until name's ctime is more than a second old (the clock, not a guess at how long a step takes) */
static void wait_past_racy(const char *name) {
  struct stat st;
  struct timespec now, tick = {0, 50 * 1000 * 1000};
  for (int i = 0; i < 100; i++) {
    if (fstatat(etc_fd, name, &st, 0) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
      return;
    if (now.tv_sec > st.st_ctim.tv_sec + 1)
      return;
    nanosleep(&tick, NULL);
  }
}

static void deep_chain(void) {
  char path[256] = "d";
  for (int depth = 1; depth <= ETC_WALK_DEPTH_MAX + 1; depth++) {
    size_t len = strlen(path);
    snprintf(path + len, sizeof(path) - len, "/l%d", depth);
    dir(path, 0755);
  }
}

int main(void) {
  char etc[] = "/tmp/fsrun-test-etc-walk.XXXXXX";
  char bundle[] = "/tmp/fsrun-test-etc-walk-bundle.XXXXXX";
  char cmd[256];
  struct mount_list l = {0};
  if (mkdtemp(etc) == NULL || mkdtemp(bundle) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  etc_fd = open(etc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  dir("d", 0755);
  put("d/top.key", 0600);
  put("d/open", 0644);
  dir("d/certs", 0755);
  put("d/certs/open.pem", 0644);
  put("d/certs/nested.key", 0600);
  dir("d/certs/private", 0700);
  put("d/certs/private/inner", 0644);
  dir("d/tls", 0755);
  dir("d/tls/private", 0755);
  put("d/tls/private/localhost.key", 0600);
  put("d/tls/private/open.pem", 0644);
  dir("d/tls/private/CA", 0711); /* searchable, not listable: not world-readable */
  symlinkat("../top.key", etc_fd, "d/certs/link.key");
  if (mkfifoat(etc_fd, "d/certs/fifo", 0600) < 0)
    perror("mkfifoat");
  deep_chain();

  walk(&l, NULL, ETC_WALK_NAMES_MAX);
  tap_ok(strcmp(source_at(&l, "/etc/d/top.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a 0600 file in the directory is covered");
  tap_ok(strcmp(source_at(&l, "/etc/d/certs/nested.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a 0600 file at depth 2 is covered");
  tap_ok(strcmp(source_at(&l, "/etc/d/certs/private"), SANDBOX_EMPTY_DIR) == 0,
         "a 0700 directory at depth 2 is covered by an empty one");
  tap_ok(strcmp(source_at(&l, "/etc/d/tls/private/localhost.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a 0600 file at depth 3 is covered (RHEL's pki/tls/private/localhost.key)");
  tap_ok(strcmp(source_at(&l, "/etc/d/tls/private/CA"), SANDBOX_EMPTY_DIR) == 0,
         "a 0711 directory at depth 3 is covered");
  tap_ok(*source_at(&l, "/etc/d/open") == '\0' && *source_at(&l, "/etc/d/certs") == '\0' &&
             *source_at(&l, "/etc/d/certs/open.pem") == '\0' &&
             *source_at(&l, "/etc/d/tls/private/open.pem") == '\0',
         "world-readable neighbours are not covered");
  tap_ok(*source_at(&l, "/etc/d/certs/link.key") == '\0', "a link is never covered");
  tap_ok(strcmp(source_at(&l, "/etc/d/certs/fifo"), SANDBOX_UNREADABLE_FILE) == 0,
         "a 0600 FIFO at depth 2 is covered by an unreadable file (a bind does not stop its open)");
  tap_ok(*source_at(&l, "/etc/d/certs/private/inner") == '\0',
         "nothing below a covered directory is walked");
  {
    char deepest[256] = "/etc/d", last_walked[256];
    for (int depth = 1; depth <= ETC_WALK_DEPTH_MAX + 1; depth++) {
      size_t len = strlen(deepest);
      memcpy(last_walked, deepest, len + 1);
      snprintf(deepest + len, sizeof(deepest) - len, "/l%d", depth);
    }
    tap_ok(strcmp(source_at(&l, deepest), SANDBOX_EMPTY_DIR) == 0,
           "a directory deeper than %d levels is covered whole (%s)", ETC_WALK_DEPTH_MAX, deepest);
    tap_ok(*source_at(&l, last_walked) == '\0', "the one above it is walked, not covered (%s)",
           last_walked);
  }

  /* d has 5 names (top.key, open, certs, tls, l1): none left for its directories */
  walk(&l, NULL, 5);
  tap_ok(strcmp(source_at(&l, "/etc/d/top.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a directory within the walk's names is walked");
  tap_ok(strcmp(source_at(&l, "/etc/d/certs"), SANDBOX_EMPTY_DIR) == 0 &&
             strcmp(source_at(&l, "/etc/d/tls"), SANDBOX_EMPTY_DIR) == 0,
         "its directories, past what is left of the walk's names, are covered whole");
  walk(&l, NULL, 4);
  tap_ok(l.len == 1 && strcmp(source_at(&l, "/etc/d"), SANDBOX_EMPTY_DIR) == 0,
         "a bound directory with more names than the walk's is covered whole, and only that");

  /* the record: each directory walked kept on its own; a change two levels down is seen */
  put("made-last", 0644);
  wait_past_racy("made-last");
  walk_recorded(&l);
  tap_ok(recorded("d/tls/private") && recorded("d/certs") && recorded("d"),
         "every directory walked is recorded under its path");
  walk_recorded(&l);
  tap_ok(strcmp(source_at(&l, "/etc/d/tls/private/localhost.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a run from the record covers the same");
  put("d/tls/private/new.key", 0600);
  walk_recorded(&l);
  tap_ok(strcmp(source_at(&l, "/etc/d/tls/private/new.key"), SANDBOX_UNREADABLE_FILE) == 0,
         "a 0600 file added at depth 3 after a recorded run is covered at the next");
  fchmodat(etc_fd, "d/certs/open.pem", 0600, 0);
  walk_recorded(&l);
  tap_ok(strcmp(source_at(&l, "/etc/d/certs/open.pem"), SANDBOX_UNREADABLE_FILE) == 0,
         "a file at depth 2 made 0600 (its directory's ctime unmoved) is covered at the next run");

  free_list(&l);
  snprintf(cmd, sizeof(cmd), "rm -rf -- '%s' '%s'", etc, bundle);
  if (system(cmd) != 0)
    tap_diag("could not remove %s and %s", etc, bundle);
  return tap_done();
}
