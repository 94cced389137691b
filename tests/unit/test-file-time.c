/* file-time.c: a cutoff taken now is after every file time set so far; once file_time_wait_floor
 * has returned, a file changed has a time not before it; a clock that never reaches the cutoff (as
 * one set back) lowers it to the coarse clock instead of waiting on; the text form the container's
 * init reports a lowered cutoff in reads back exactly, and nothing else reads as a time; a file
 * time is compared with a cutoff at its own grain (whole seconds, FAT's 2 s, 10 ms); the kernel's
 * floor of file times raised past a cutoff taken now holds every time made after it (Linux 6.13).
 * Content only: no assertion on how long anything took. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "file-time.h"
#include "tap.h"

/* the ctime of dir/name, made now (a directory) */
static bool make_and_stat(const char *dir, const char *name, struct timespec *ctime) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (mkdir(path, 0755) < 0 || stat(path, &st) < 0)
    return false;
  *ctime = st.st_ctim;
  return true;
}

static void test_floor(const char *dir) {
  struct timespec cutoff, before, after;
  bool made = make_and_stat(dir, "before", &before);
  int r;
  file_time_after_now(&cutoff);
  r = file_time_wait_floor(&cutoff, FILE_TIME_WAIT_MAX_MS);
  made = made && make_and_stat(dir, "after", &after);
  tap_ok(made && r == 0, "the coarse clock reaches a cutoff taken now (%d)", r);
  tap_ok(made && file_time_before(&before, &cutoff),
         "a directory made before the cutoff has a time before it");
  tap_ok(made && !file_time_before(&after, &cutoff),
         "a directory made once the wait has returned has a time not before the cutoff");
}

static void test_never_reached(void) {
  struct timespec cutoff, coarse;
  int r;
  clock_gettime(CLOCK_REALTIME, &cutoff);
  cutoff.tv_sec += 3600; /* as for a clock set back an hour after the cutoff was taken */
  r = file_time_wait_floor(&cutoff, 10);
  clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
  tap_ok(r == -ETIMEDOUT && cutoff.tv_sec > 0 && !file_time_before(&coarse, &cutoff),
         "a cutoff the clock does not reach becomes the coarse clock (%d, %lld)", r,
         (long long)cutoff.tv_sec);
}

static struct timespec ts(time_t sec, long nsec) {
  return (struct timespec){.tv_sec = sec, .tv_nsec = nsec};
}

/* the grain a time shows: whole even seconds (FAT), whole seconds (ext2/3, 128-byte-inode ext4),
 * 10 ms (exFAT), a fine time's few ns */
static void test_grain(void) {
  struct timespec t = ts(1796583609, 987654321);
  tap_ok(file_time_grain_ns(&(struct timespec){1796583610, 0}) == 2000000000LL &&
             file_time_grain_ns(&(struct timespec){1796583609, 0}) == 1000000000LL &&
             file_time_grain_ns(&(struct timespec){1796583609, 120000000}) == 10000000LL &&
             file_time_grain_ns(&(struct timespec){1796583609, 100000000}) == 100000000LL &&
             file_time_grain_ns(&t) == 1,
         "a time's grain: 2 s, 1 s, 10 ms, 100 ms, 1 ns");
  file_time_floor(&t, 2000000000LL);
  tap_ok(t.tv_sec == 1796583608 && t.tv_nsec == 0, "floored to 2 s: the even second before");
  t = ts(1796583609, 987654321);
  file_time_floor(&t, 10000000LL);
  tap_ok(t.tv_sec == 1796583609 && t.tv_nsec == 980000000, "floored to 10 ms");
}

/* a change the filesystem stored at its grain's start, made at or after the cutoff, is reached;
 * one of an earlier grain is not; on a fine filesystem the cutoff stays exact */
static void test_reached(void) {
  const struct timespec odd = ts(1796583609, 500000001), even = ts(1796583610, 250000000);
  tap_ok(file_time_reached(&(struct timespec){1796583609, 0}, &odd) &&
             !file_time_reached(&(struct timespec){1796583607, 0}, &odd),
         "whole seconds: the cutoff's own second is reached, the one before not");
  tap_ok(file_time_reached(&(struct timespec){1796583608, 0}, &odd) &&
             !file_time_reached(&(struct timespec){1796583606, 0}, &odd),
         "FAT's 2 s: the even second the cutoff's odd one is stored at is reached");
  tap_ok(file_time_reached(&(struct timespec){1796583610, 0}, &even) &&
             file_time_reached(&(struct timespec){1796583610, 250000000}, &even) &&
             !file_time_reached(&(struct timespec){1796583609, 0}, &even),
         "the cutoff's even second is reached, the odd one before it not");
  tap_ok(file_time_reached(&(struct timespec){1796583609, 500000000}, &odd) &&
             !file_time_reached(&(struct timespec){1796583609, 490000000}, &odd),
         "10 ms: the cutoff's 10 ms is reached, the one before not");
  tap_ok(file_time_reached(&(struct timespec){1796583609, 500000001}, &odd) &&
             !file_time_reached(&(struct timespec){1796583609, 500000000 - 3}, &odd) &&
             !file_time_reached(&(struct timespec){1796583609, 499999999}, &odd),
         "a fine time: exact");
}

static void test_text(void) {
  static const char *const bad[] = {"", "1", "1 1000000000", "-1 0", "1 -1", "1 2 3", "1 2x", "x"};
  char buf[FILE_TIME_TEXT_MAX];
  struct timespec t = {.tv_sec = 1796583609, .tv_nsec = 999999999}, back = {0};
  bool none = true;
  file_time_format(buf, sizeof(buf), &t);
  tap_ok(file_time_parse(buf, &back) && back.tv_sec == t.tv_sec && back.tv_nsec == t.tv_nsec,
         "a time reads back as it was written (`%s`)", buf);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    if (file_time_parse(bad[i], &back)) {
      tap_diag("`%s` read as a time", bad[i]);
      none = false;
    }
  tap_ok(none && !file_time_parse(NULL, &back), "what is not `SEC NSEC` is no time");
}

/* the filesystems whose times a write may not move (review24 B0/B1), and the disks that stamp
 * every first write to a mapped page; a file on /dev/shm (a tmpfs) and on /proc decided by fd */
static void test_fs_stamps(void) {
  static const unsigned long stamping[] = {0xEF53, 0x58465342, 0x9123683E, 0xF2F52010};
  static const unsigned long not_stamping[] = {0x01021994 /* tmpfs */,     0x858458f6 /* ramfs */,
                                               0x65735546 /* FUSE */,      0x6969 /* NFS */,
                                               0xFE534D42 /* SMB2 */,      0xFF534D42 /* CIFS */,
                                               0x01021997 /* 9p */,        0x00c36400 /* Ceph */,
                                               0x794c7630 /* overlayfs */, 0 /* unknown */};
  bool all = true;
  int fd;
  for (size_t i = 0; i < sizeof(stamping) / sizeof(stamping[0]); i++)
    all = all && file_time_fs_stamps_writes(stamping[i]);
  tap_ok(all, "ext4, XFS, Btrfs and F2FS stamp every write");
  all = true;
  for (size_t i = 0; i < sizeof(not_stamping) / sizeof(not_stamping[0]); i++)
    if (file_time_fs_stamps_writes(not_stamping[i])) {
      tap_diag("f_type %#lx taken as stamping every write", not_stamping[i]);
      all = false;
    }
  tap_ok(all, "tmpfs, ramfs, FUSE, NFS, SMB, 9p, Ceph, overlayfs and an unknown one do not");
  fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  tap_ok(fd >= 0 && !file_time_fd_stamps_writes(fd), "/dev/shm (a tmpfs) by its fd: does not");
  if (fd >= 0)
    close(fd);
  tap_ok(!file_time_fd_stamps_writes(-1), "no fd: does not");
}

/* the kernel has multigrain file times and their floor (Linux 6.13) */
static bool kernel_has_floor(void) {
  struct utsname u;
  int major = 0, minor = 0;
  return uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
         (major > 6 || (major == 6 && minor >= 13));
}

/* a cutoff taken now is passed by the kernel's floor of file times once raised (with a memfd): a
 * directory made right after on two filesystems (a disk's and a tmpfs) is not before it, where the
 * coarse clock is still behind it. A cutoff an hour ahead is never reached (the floor only ever
 * takes a time the clock has shown). */
static void test_raise_floor(const char *dir, const char *other) {
  struct timespec cutoff, here, there, coarse;
  bool raised, made;
  file_time_after_now(&cutoff);
  raised = file_time_raise_floor(&cutoff);
  made = make_and_stat(dir, "raised", &here) && make_and_stat(other, "raised", &there);
  clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
  tap_diag("raised %d; the coarse clock %lld us behind the cutoff", raised,
           ((long long)(cutoff.tv_sec - coarse.tv_sec) * 1000000000LL + cutoff.tv_nsec -
            coarse.tv_nsec) /
               1000);
  if (kernel_has_floor())
    tap_ok(raised, "Linux 6.13 and later: the floor passes a cutoff taken now");
  else
    tap_skip("before Linux 6.13: no floor of file times to raise");
  tap_ok(made &&
             (!raised || (!file_time_before(&here, &cutoff) && !file_time_before(&there, &cutoff))),
         "once raised, directories made on a disk and on a tmpfs are not before it");
  clock_gettime(CLOCK_REALTIME, &cutoff);
  cutoff.tv_sec += 3600;
  tap_ok(!file_time_raise_floor(&cutoff), "a cutoff an hour ahead is not reached");
  tap_ok(file_time_fs_kernel_clock(0xEF53) && file_time_fs_kernel_clock(0x01021994) &&
             !file_time_fs_kernel_clock(0x65735546) && !file_time_fs_kernel_clock(0x6969) &&
             !file_time_fs_kernel_clock(0x2FC12FC1) && !file_time_fs_kernel_clock(0),
         "ext4 and tmpfs take the kernel's times; FUSE, NFS, ZFS and an unknown one do not");
}

int main(void) {
  char dir[] = "/tmp/fsrun-test-file-time.XXXXXX";
  char shm[] = "/dev/shm/fsrun-test-file-time.XXXXXX";
  char path[sizeof(shm) + 16];
  if (mkdtemp(dir) == NULL || mkdtemp(shm) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_floor(dir);
  test_never_reached();
  test_text();
  test_grain();
  test_reached();
  test_fs_stamps();
  test_raise_floor(dir, shm);
  snprintf(path, sizeof(path), "%s/raised", dir);
  rmdir(path);
  snprintf(path, sizeof(path), "%s/raised", shm);
  rmdir(path);
  rmdir(shm);
  snprintf(path, sizeof(path), "%s/before", dir);
  rmdir(path);
  snprintf(path, sizeof(path), "%s/after", dir);
  rmdir(path);
  rmdir(dir);
  return tap_done();
}
