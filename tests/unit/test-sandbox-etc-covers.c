/* sandbox-etc-covers.c: the entries of root's /etc view directories that may need a cover, kept
 * between runs. Every entry but the symlinks is visited; a directory changed within the last
 * second is not recorded (read again next time); one older is, and the next run visits the
 * record's names without reading it (a name planted in the record is visited); a name added
 * changes the directory's ctime, and it is read again. Scratch directories stand for /etc and the
 * bundle. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-etc-covers.h"
#include "etc-fixture.h"
#include "tap.h"

static int etc_fd, bundle_fd;
static char visited[256];

/* one run's pass over the directory d: the names listed, in order */
static const char *run(void) {
  struct etc_covers c;
  struct etc_names names;
  int fd = openat(etc_fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  visited[0] = '\0';
  if (fd < 0)
    return "(no d)";
  etc_covers_begin(bundle_fd, &c);
  if (etc_covers_names(&c, fd, "d", 64, &names) == 0) {
    for (const char *n = etc_names_next(&names, NULL); n; n = etc_names_next(&names, n)) {
      strncat(visited, n, sizeof(visited) - strlen(visited) - 2);
      strcat(visited, " ");
    }
    etc_names_free(&names);
  }
  etc_covers_end(bundle_fd, &c);
  close(fd);
  return visited;
}

/* the record in the bundle, or "" */
static const char *record(void) {
  static char buf[512];
  return fixture_read(bundle_fd, ETC_COVERS_RECORD, buf, sizeof(buf));
}

static bool has_name(const char *list, const char *name) {
  char word[64];
  snprintf(word, sizeof(word), " %s ", name);
  char padded[300];
  snprintf(padded, sizeof(padded), " %s", list);
  return strstr(padded, word) != NULL;
}

/* until d's ctime is more than a second old (the clock, not a guess at how long a step takes) */
static void wait_past_racy(void) {
  struct stat st;
  struct timespec now, tick = {0, 50 * 1000 * 1000};
  for (int i = 0; i < 100; i++) {
    if (fstatat(etc_fd, "d", &st, 0) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
      return;
    if (now.tv_sec > st.st_ctim.tv_sec + 1)
      return;
    nanosleep(&tick, NULL);
  }
}

static void put(const char *name, mode_t mode) {
  fixture_put(etc_fd, name, "", mode);
}

int main(void) {
  char etc[] = "/tmp/fsrun-test-etc-covers.XXXXXX";
  char bundle[] = "/tmp/fsrun-test-etc-covers-bundle.XXXXXX";
  char cmd[256];
  const char *v;
  if (mkdtemp(etc) == NULL || mkdtemp(bundle) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  etc_fd = open(etc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  mkdirat(etc_fd, "d", 0755);
  put("d/open", 0644);
  put("d/secret", 0600);
  mkdirat(etc_fd, "d/private", 0700);
  symlinkat("open", etc_fd, "d/link");

  v = run();
  tap_ok(has_name(v, "open") && has_name(v, "secret") && has_name(v, "private"),
         "every entry but the link is visited (%s)", v);
  tap_ok(!has_name(v, "link"), "the link is not visited");
  tap_ok(strstr(record(), "d ") == NULL, "a directory changed within the second is not recorded");

  wait_past_racy();
  v = run();
  tap_ok(has_name(v, "open") && has_name(v, "secret") && !has_name(v, "link"),
         "read again: the same names (%s)", v);
  tap_ok(strncmp(record(), "d ", 2) == 0 && strstr(record(), "\tsecret\n") != NULL &&
             strstr(record(), "\tlink\n") == NULL,
         "an older directory is recorded, its link left out");

  /* the record's names are what the next run visits: one planted there is visited */
  {
    char text[512];
    snprintf(text, sizeof(text), "%s\tplanted\n", record());
    int fd = openat(bundle_fd, ETC_COVERS_RECORD, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
      perror("plant");
    if (fd >= 0)
      close(fd);
  }
  v = run();
  tap_ok(has_name(v, "planted") && has_name(v, "secret"), "a matching record is used (%s)", v);

  /* a name added changes the directory's ctime: read again, the new name visited */
  put("d/new-secret", 0600);
  v = run();
  tap_ok(has_name(v, "new-secret") && !has_name(v, "planted"),
         "a new name is seen at the next run (%s)", v);
  tap_ok(strstr(record(), "d ") == NULL, "and not recorded while the change is within the second");

  snprintf(cmd, sizeof(cmd), "rm -rf -- '%s' '%s'", etc, bundle);
  if (system(cmd) != 0)
    tap_diag("could not remove %s and %s", etc, bundle);
  return tap_done();
}
