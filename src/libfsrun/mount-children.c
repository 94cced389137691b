#include "mount-children.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#if defined(SYS_statmount) && defined(SYS_listmount)
#define STATMOUNT_MNT_BASIC  0x2U
#define STATMOUNT_MNT_POINT  0x10U
#define STATMOUNT_STR_OFFSET 512 /* the fixed part of struct statmount (uapi linux/mount.h) */
#define IDS_PER_CALL         32

/* The fields of struct statmount read here, at their uapi offsets. */
struct statmount_head {
  uint32_t size, mnt_opts;
  uint64_t mask;
  uint32_t sb_dev_major, sb_dev_minor;
  uint64_t sb_magic;
  uint32_t sb_flags, fs_type;
  uint64_t mnt_id, mnt_parent_id;
  uint32_t mnt_id_old, mnt_parent_id_old;
  uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
  uint32_t mnt_root, mnt_point;
};

/* child's parent and mount point: 0, or -1 when statmount cannot say */
static int child_point(uint64_t child, uint64_t *parent, char *buf, size_t size,
                       const char **point) {
  struct mnt_id_request req = {
      .size = 24, .mnt_id = child, .param = STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT};
  struct statmount_head head;
  if (syscall(SYS_statmount, &req, buf, size, 0) < 0)
    return -1;
  memcpy(&head, buf, sizeof(head));
  if ((head.mask & (STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT)) !=
          (STATMOUNT_MNT_BASIC | STATMOUNT_MNT_POINT) ||
      head.size > size || STATMOUNT_STR_OFFSET + (size_t)head.mnt_point >= head.size)
    return -1;
  buf[head.size - 1] = '\0';
  *parent = head.mnt_parent_id;
  *point = buf + STATMOUNT_STR_OFFSET + head.mnt_point;
  return 0;
}

int mount_child_below(int fd, const char *path, size_t len, char **point) {
  struct mnt_id_request req = {.size = 24};
  uint64_t ids[IDS_PER_CALL];
  char buf[STATMOUNT_STR_OFFSET + PATH_MAX + 64];
  struct statx stx;
  long n;
  if (point != NULL)
    *point = NULL;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
    return -1;
  req.mnt_id = stx.stx_mnt_id;
  do {
    n = syscall(SYS_listmount, &req, ids, IDS_PER_CALL, 0);
    if (n < 0)
      return -1;
    for (long i = 0; i < n; i++) {
      uint64_t parent;
      const char *at;
      if (child_point(ids[i], &parent, buf, sizeof(buf), &at) < 0)
        return -1;
      /* listmount lists the children; a child's parent is checked all the same */
      if (parent == req.mnt_id && strncmp(at, path, len) == 0 && at[len] == '/') {
        if (point != NULL)
          *point = xstrdup(at);
        return 1;
      }
    }
    if (n > 0)
      req.param = ids[n - 1]; /* the next call lists the children after it */
  } while (n == IDS_PER_CALL);
  return 0;
}
#else
int mount_child_below(int fd, const char *path, size_t len, char **point) {
  (void)fd, (void)path, (void)len;
  if (point != NULL)
    *point = NULL;
  return -1;
}
#endif
