/* The mounts attached on one mount, from listmount(2) and statmount(2) (Linux 6.8): asked of the
 * kernel for that mount alone, where /proc/self/mountinfo formats the whole table (its cost grows
 * with every mount of the namespace, a desktop's snaps and containers included). */
#ifndef FSRUN_MOUNT_CHILDREN_H
#define FSRUN_MOUNT_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

/* The calls' numbers and request, where the C library's headers predate them (Debian 12's) */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif
#if !defined(SYS_statmount) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_statmount 457
#endif
#if !defined(SYS_listmount) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_listmount 458
#endif

/* struct mnt_id_req as Linux 6.8 made it (size 24) */
struct mnt_id_request {
  uint32_t size, spare;
  uint64_t mnt_id, param;
};

/* Is a mount attached on fd's mount at a point strictly below path (the first len bytes of fd's
 * own path as the caller's root sees it; len 0: anywhere)? 1, with *point (may be NULL; the
 * caller frees) its mount point; 0 when none is; -1 when the kernel cannot tell (before 6.8, or
 * a mount the caller may not look at): then the caller reads the mount table instead. */
int mount_child_below(int fd, const char *path, size_t len, char **point);

#endif
