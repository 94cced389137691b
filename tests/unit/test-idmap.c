/* Unit tests for idmap.c: the uid_map text written for a mount's mappings, filesystem names for
 * error messages, and (as root) a user namespace that really carries the mapping. TAP output. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idmap.h"
#include "procfs.h"
#include "tap.h"
#include "utils.h"

static void test_format_map(void) {
  oci_id_mapping m[2] = {{.container_id = 1000, .host_id = 0, .size = 1},
                         {.container_id = 0, .host_id = 4294967294U, .size = 1}};
  cleanup_free char *one = idmap_format_map(m, 1);
  cleanup_free char *two = idmap_format_map(m, 2);
  cleanup_free char *none = idmap_format_map(m, 0);
  if (!tap_ok(strcmp(one, "1000 0 1\n") == 0, "one entry: containerID hostID size"))
    tap_diag("got `%s`", one);
  tap_ok(strcmp(two, "1000 0 1\n0 4294967294 1\n") == 0, "two entries, the largest id fits");
  tap_ok(strcmp(none, "") == 0, "no entries: empty text");
}

static void test_fs_name(void) {
  char buf[24];
  tap_ok(strcmp(idmap_fs_name(TMPFS_MAGIC, buf, sizeof(buf)), "tmpfs") == 0, "tmpfs");
  tap_ok(strcmp(idmap_fs_name(SYSFS_MAGIC, buf, sizeof(buf)), "sysfs") == 0, "sysfs");
  tap_ok(strcmp(idmap_fs_name(EXT4_SUPER_MAGIC, buf, sizeof(buf)), "ext4") == 0, "ext4");
  tap_ok(strcmp(idmap_fs_name(0x12345678UL, buf, sizeof(buf)), "0x12345678") == 0,
         "an unknown magic is shown in hex");
}

/* In a child: joins userns_fd and reads its own uid_map and gid_map into out. */
static int read_maps_in(int userns_fd, char *out, size_t size) {
  int pipefd[2];
  pid_t pid;
  ssize_t n = 0, r;
  if (pipe(pipefd) < 0)
    return -1;
  pid = fork();
  if (pid == 0) {
    char buf[256];
    int len = 0;
    int fd;
    close(pipefd[0]);
    if (setns(userns_fd, CLONE_NEWUSER) < 0)
      _exit(1);
    for (int i = 0; i < 2; i++) {
      fd = open(i == 0 ? "/proc/self/uid_map" : "/proc/self/gid_map", O_RDONLY);
      if (fd < 0)
        _exit(1);
      r = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len);
      if (r > 0)
        len += (int)r;
      close(fd);
    }
    if (write(pipefd[1], buf, (size_t)len) != len)
      _exit(1);
    _exit(0);
  }
  close(pipefd[1]);
  while ((r = read(pipefd[0], out + n, size - 1 - (size_t)n)) > 0)
    n += r;
  out[n] = '\0';
  close(pipefd[0]);
  waitpid(pid, NULL, 0);
  return 0;
}

static void test_userns(void) {
  oci_id_mapping uids[2] = {{.container_id = 1000, .host_id = 0, .size = 1},
                            {.container_id = 0, .host_id = 100000, .size = 1000}};
  oci_id_mapping gids[1] = {{.container_id = 1000, .host_id = 5, .size = 2}};
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int procfs = -1;
  cleanup_close int userns = -1;
  char maps[512];
  if (geteuid() != 0) {
    tap_ok(true, "# SKIP the user namespace test needs root");
    return;
  }
  procfs = procfs_open(&err);
  tap_ok(procfs >= 0, "procfs handle");
  userns = idmap_userns_open(uids, 2, gids, 1, procfs, &err);
  tap_ok(userns >= 0, "a user namespace with the mapping: %s", err ? err->msg : "ok");
  if (userns < 0)
    return;
  tap_ok(read_maps_in(userns, maps, sizeof(maps)) == 0, "read its maps from inside");
  /* the kernel right-aligns the columns; compare the numbers */
  {
    unsigned a, b, c, d, e, f, g, h, i;
    int n = sscanf(maps, "%u %u %u %u %u %u %u %u %u", &a, &b, &c, &d, &e, &f, &g, &h, &i);
    if (!tap_ok(n == 9 && a == 1000 && b == 0 && c == 1 && d == 0 && e == 100000 && f == 1000 &&
                    g == 1000 && h == 5 && i == 2,
                "uid_map and gid_map are the mount's mappings"))
      tap_diag("got `%s`", maps);
  }
  /* no process is left holding it: the child was reaped */
  tap_ok(waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD, "the helper child was reaped");
}

int main(void) {
  test_format_map();
  test_fs_name();
  test_userns();
  return tap_done();
}
