/* File times against the clock (file-time.h). */
#include "file-time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "utils.h"

#define NSEC_PER_SEC 1000000000L
/* a tick due but not yet seen: it comes within microseconds; a step this short looks again */
#define LATE_TICK_STEP_NS 200000L
/* a tick of the coarse clock between a read and a change is rare; two in a row need a preemption */
#define RAISE_TRIES 3

bool file_time_before(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

long long file_time_grain_ns(const struct timespec *t) {
  long long grain = 1;
  if (t->tv_nsec == 0) /* FAT's 2 s: whole seconds of an even count */
    return t->tv_sec % 2 == 0 ? 2 * NSEC_PER_SEC : NSEC_PER_SEC;
  while (grain < NSEC_PER_SEC / 10 && t->tv_nsec % (grain * 10) == 0)
    grain *= 10;
  return grain;
}

void file_time_floor(struct timespec *t, long long grain_ns) {
  if (grain_ns >= NSEC_PER_SEC) {
    long long secs = grain_ns / NSEC_PER_SEC;
    t->tv_sec -= (time_t)(((long long)t->tv_sec % secs + secs) % secs);
    t->tv_nsec = 0;
  } else if (grain_ns > 1) {
    t->tv_nsec -= (long)(t->tv_nsec % grain_ns);
  }
}

bool file_time_reached(const struct timespec *t, const struct timespec *cutoff) {
  struct timespec floored = *cutoff;
  file_time_floor(&floored, file_time_grain_ns(t));
  return !file_time_before(t, &floored);
}

void file_time_just_after(struct timespec *t) {
  if (++t->tv_nsec == NSEC_PER_SEC) {
    t->tv_sec++;
    t->tv_nsec = 0;
  }
}

void file_time_after_now(struct timespec *t) {
  clock_gettime(CLOCK_REALTIME, t);
  file_time_just_after(t);
}

static int64_t ns_of(const struct timespec *t) {
  return (int64_t)t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static int64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ns_of(&ts);
}

/* The coarse clock moves at the timer tick by whole resolutions, to a time the fine clock has
 * passed (it may lag by more than a tick: what a tick has not accumulated yet): it cannot show t
 * before the fine clock has reached its first step at or past t. Sleeps until then, at most a
 * resolution, or a short step when that is past; a relative sleep, which a clock set back does not
 * stretch. */
static void sleep_towards(int64_t coarse_ns, int64_t t_ns, int64_t resolution_ns) {
  int64_t reach =
      coarse_ns + (t_ns - coarse_ns + resolution_ns - 1) / resolution_ns * resolution_ns;
  int64_t left = reach - clock_ns(CLOCK_REALTIME);
  if (left <= 0)
    left = LATE_TICK_STEP_NS;
  else if (left > resolution_ns)
    left = resolution_ns;
  (void)nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)left}, NULL);
}

int file_time_wait_floor(struct timespec *t, int max_ms) {
  struct timespec coarse, res = {.tv_nsec = 0};
  int64_t give_up = clock_ns(CLOCK_MONOTONIC) + (int64_t)max_ms * 1000000;
  if (clock_getres(CLOCK_REALTIME_COARSE, &res) < 0 || res.tv_sec > 0 || res.tv_nsec <= 0)
    res.tv_nsec = LATE_TICK_STEP_NS;
  for (;;) {
    clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
    if (!file_time_before(&coarse, t))
      return 0;
    if (clock_ns(CLOCK_MONOTONIC) >= give_up)
      break;
    sleep_towards(ns_of(&coarse), ns_of(t), res.tv_nsec);
  }
  *t = coarse;
  return -ETIMEDOUT;
}

/* a file of our own on the kernel's internal tmpfs, and its ctime, read as statx reads it: which
 * marks the ctime read */
static int own_file(struct timespec *ctime) {
  struct statx stx;
  int fd = memfd_create("fsrun-file-time", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_CTIME, &stx) < 0 || !(stx.stx_mask & STATX_CTIME)) {
    close(fd);
    return -1;
  }
  *ctime = (struct timespec){.tv_sec = (time_t)stx.stx_ctime.tv_sec,
                             .tv_nsec = (long)stx.stx_ctime.tv_nsec};
  return fd;
}

/* One try: a file's ctime read, then changed in the same tick of the coarse clock, takes a fine
 * time and raises the floor to it (a tick in between gives it the coarse time: try again) */
static bool raise_once(const struct timespec *cutoff) {
  struct timespec made, fresh;
  cleanup_close int read_one = own_file(&made);
  if (read_one < 0 || fchmod(read_one, 0600) < 0)
    return false;
  cleanup_close int later = own_file(&fresh);
  return later >= 0 && !file_time_before(&fresh, cutoff);
}

bool file_time_raise_floor(const struct timespec *cutoff) {
  for (int i = 0; i < RAISE_TRIES; i++)
    if (raise_once(cutoff))
      return true;
  return false;
}

bool file_time_fs_kernel_clock(unsigned long f_type) {
  /* the filesystems Linux 6.13 made multigrain (FS_MGTIME): their times are its helpers' */
  static const unsigned long kernel_clock[] = {
      0xEF53,     /* ext2, ext3, ext4 */
      0x58465342, /* XFS */
      0x9123683E, /* Btrfs */
      0x01021994, /* tmpfs */
  };
  for (size_t i = 0; i < sizeof(kernel_clock) / sizeof(kernel_clock[0]); i++)
    if (f_type == kernel_clock[i])
      return true;
  return false;
}

bool file_time_fs_stamps_writes(unsigned long f_type) {
  static const unsigned long stamping[] = {
      0xEF53,     /* ext2, ext3, ext4 */
      0x58465342, /* XFS */
      0x9123683E, /* Btrfs */
      0xF2F52010, /* F2FS */
      0x2FC12FC1, /* ZFS */
      0xCA451A4E, /* bcachefs */
  };
  for (size_t i = 0; i < sizeof(stamping) / sizeof(stamping[0]); i++)
    if (f_type == stamping[i])
      return true;
  return false;
}

bool file_time_fd_stamps_writes(int fd) {
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && file_time_fs_stamps_writes((unsigned long)fs.f_type);
}

void file_time_format(char *buf, size_t size, const struct timespec *t) {
  snprintf(buf, size, "%lld %ld", (long long)t->tv_sec, (long)t->tv_nsec);
}

bool file_time_parse(const char *text, struct timespec *t) {
  long long sec;
  long nsec;
  int end = -1;
  if (text == NULL || sscanf(text, "%lld %ld%n", &sec, &nsec, &end) != 2 || end < 0 ||
      text[end] != '\0' || sec < 0 || nsec < 0 || nsec >= NSEC_PER_SEC)
    return false;
  *t = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = nsec};
  return true;
}
