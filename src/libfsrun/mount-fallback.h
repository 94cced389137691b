/* mount(2) where the new mount API (open_tree, move_mount, mount_setattr, fsopen, fsconfig,
 * fsmount) answers ENOSYS: valgrind 3.19 does not know those calls, and a seccomp profile may
 * refuse them. Each function is taken only after the new call answered ENOSYS, and keeps its
 * guarantees (docs/mounts.md, "Without the new mount API"):
 *  - mount(2) is given /proc/self/fd/N of the O_PATH fds the caller already holds, never a path
 *    looked up again;
 *  - a remount carries the flags the mount already has (fstatfs), so that the ones a user
 *    namespace locks are kept and the remount is not refused;
 *  - a recursive change reaches every submount (found in mountinfo, each opened beneath the mount
 *    and checked by its mount id), or fails: never the top mount alone;
 *  - a detached tree becomes "mount, then remount": the mount has weaker flags in between. That
 *    happens only while the container's mounts are made, in its own mount namespace, below a
 *    rootfs mount that is the host's slave (or private until the end): nothing propagates back.
 *    No process of the container runs yet, and a failure ends the namespace with the init. A
 *    mount namespace joined by path holds other processes: there the fallback is refused before
 *    anything is made (mount_api_missing). */
#ifndef FSRUN_MOUNT_FALLBACK_H
#define FSRUN_MOUNT_FALLBACK_H
#include <stdbool.h>
#include <sys/mount.h>

/* mount_setattr(fd, "", AT_EMPTY_PATH | at_flags, attr) for an attached mount: MS_REMOUNT|MS_BIND
 * of each mount (with AT_RECURSIVE, each submount too) with its own flags, attr's set and cleared;
 * the propagation through mount(MS_SHARED...). A submount that cannot be reached (hidden under
 * another mount) fails with EBUSY. 0, or -1 with errno. */
int mount_fallback_setattr(int fd, unsigned int at_flags, const struct mount_attr *attr);

/* mount_setattr(2) of an attached mount, and mount_fallback_setattr where it answers ENOSYS. */
int mount_setattr_compat(int fd, unsigned int at_flags, struct mount_attr *attr);

/* A bind of source_fd onto target_fd (MS_BIND, MS_REC when recursive). Returns an O_PATH fd on the
 * new mount (checked: the root of the one mount the table did not have before, whose parent is
 * the target's mount; the source's inode), or -1 with errno. */
int mount_fallback_bind(int source_fd, int target_fd, bool recursive);

/* mount(2) of a new filesystem onto target_fd. Returns an O_PATH fd on it (checked: the root of
 * the one new mount whose parent is the target's mount), or -1 with errno (EXDEV: not found). */
int mount_fallback_fs(const char *source, const char *type, unsigned long flags, const char *data,
                      int target_fd);

/* The name of the first call of the new mount API that answers ENOSYS here (each is tried with
 * arguments the kernel refuses otherwise), or NULL when all are there. */
const char *mount_api_missing(void);
#endif
