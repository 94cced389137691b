/* File times against the clock, for a cutoff that tells what changed before a moment from what
 * changed after it. A file time is CLOCK_REALTIME_COARSE when it is set (or, for a ctime someone
 * has read, since Linux 6.13, a finer time, never behind it), so every file time set so far is at
 * most CLOCK_REALTIME now, and every one set once the coarse clock has reached T is not before T.
 */
#ifndef FSRUN_FILE_TIME_H
#define FSRUN_FILE_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* a coarse clock still behind after this long was set back */
#define FILE_TIME_WAIT_MAX_MS 1000
/* "SEC NSEC" of a time as file_time_format writes it, with its NUL */
#define FILE_TIME_TEXT_MAX 32

bool file_time_before(const struct timespec *a, const struct timespec *b);
/* The step a file time was stored at, as far as the time itself shows it (ns): a filesystem that
 * keeps whole seconds (ext2/3, ext4 with 128-byte inodes, some NFS/FUSE) stores multiples of 1 s,
 * FAT of 2 s, exFAT of 10 ms; the largest of 2 s, 1 s and the powers of ten below that t is a
 * multiple of. On a fine filesystem that is a few ns, or more for 1 time in 10^k. */
long long file_time_grain_ns(const struct timespec *t);
/* t rounded down to a multiple of grain_ns (1 ns .. 2 s) */
void file_time_floor(struct timespec *t, long long grain_ns);
/* Whether a file time t was set at or after cutoff, compared at t's grain: the cutoff floored to
 * it, as the filesystem floored the time it stored. A change made before the cutoff in the same
 * grain is named too (a false alarm, never a miss). */
bool file_time_reached(const struct timespec *t, const struct timespec *cutoff);
/* Just after every file time set so far: CLOCK_REALTIME now plus 1 ns. */
void file_time_after_now(struct timespec *t);
/* *t plus 1 ns: just after every file time set by then, for a time read from CLOCK_REALTIME */
void file_time_just_after(struct timespec *t);
/* Returns once the coarse clock has reached *t (0: from then on a changed file's time is not
 * before *t). When it has not after max_ms (the clock was set back), *t becomes the coarse clock
 * and -ETIMEDOUT is returned: a cutoff that early names more, never less. Sleeps until the coarse
 * clock's next tick (its resolution after its last), not in steps. */
int file_time_wait_floor(struct timespec *t, int max_ms);
/* Whether every file time set from now on is not before *cutoff already, so that nothing need
 * wait for the coarse clock (file_time_wait_floor): since Linux 6.13 a change of a file whose ctime
 * was read, in the coarse clock's tick that stamped it, gets a fine time and raises the kernel's
 * floor of file times to it, and every time a filesystem then sets through the kernel's clock
 * (current_time, inode_set_ctime_current), fine or coarse, of every inode, is at least that floor.
 * Made so with a memfd (tmpfs: multigrain), and confirmed with a second one made after it, whose
 * ctime nobody read: its time is the coarse clock or the floor, the later, so when it is not
 * before *cutoff neither is any later time. On an older kernel that second time is the coarse
 * clock (false unless it has passed *cutoff). A clock set back after the call lowers both, as it
 * lowers the coarse clock after a wait. */
bool file_time_raise_floor(const struct timespec *cutoff);
/* Whether a filesystem (statfs f_type) takes its file times from the kernel's clock when a file
 * changes, through the helpers that honour that floor: ext2/3/4, XFS, Btrfs and tmpfs (the ones
 * Linux 6.13 made multigrain). Not FUSE or network filesystems (the daemon's or the server's
 * times), nor ZFS or bcachefs (their own reads of the coarse clock), nor any unknown one. */
bool file_time_fs_kernel_clock(unsigned long f_type);
/* t as "SEC NSEC" in buf (FILE_TIME_TEXT_MAX bytes); and back: false when text is no such time */
/* Whether a filesystem (statfs f_type) stamps a file's mtime and ctime on every write to its
 * content, a write through a shared mapping too: the block filesystems whose mapped pages are
 * write-protected until page_mkwrite, which updates the times on the first write of each page
 * (ext2/3/4, XFS, Btrfs, F2FS, ZFS, bcachefs). Not tmpfs or ramfs (a page read first is mapped
 * writable: later writes move no time, review24 B0), not FUSE or network filesystems (the times
 * are the daemon's or the server's, and may be put back: review24 B1), nor any other: unknown
 * ones count as not stamping. */
bool file_time_fs_stamps_writes(unsigned long f_type);
/* the same for the filesystem of an open fd; false when fstatfs fails */
bool file_time_fd_stamps_writes(int fd);
void file_time_format(char *buf, size_t size, const struct timespec *t);
bool file_time_parse(const char *text, struct timespec *t);

#endif
