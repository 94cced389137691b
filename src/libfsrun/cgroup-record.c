/* The v1 hierarchies a container's cgroup was made in, recorded at create and checked at every
 * later command, so that exec (and kill, delete, ...) need not read and parse the whole
 * /proc/self/mountinfo again: its cost grows with the host's mount table.
 *
 * A record line is "MNT_ID CONTROLLERS MOUNT_POINT": the unique id (statx STATX_MNT_ID_UNIQUE,
 * Linux 6.8, never reused while the system runs) of the mount that the discovery found at
 * MOUNT_POINT. It holds when MOUNT_POINT still resolves to the root of that same mount: an
 * unmount, a mount over it or a move of it gives another id, and a remount cannot change a v1
 * hierarchy's controllers while the container's cgroup is in it (the kernel refuses EBUSY). When
 * any line does not hold, or the kernel has no unique ids, the caller discovers the hierarchies
 * from the mount table as before. */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mount-children.h"
#include "utils.h"

/* The unique id of the mount whose root path is, or 0 (no such root, no unique ids) */
static uint64_t mount_root_id(const char *path, unsigned long long *dev) {
  struct statx stx;
  if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID_UNIQUE) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
      !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
    return 0;
  if (dev != NULL)
    *dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  return stx.stx_mnt_id;
}

char *cgroup_hierarchy_record(const struct fsrun_cgroup *cg) {
  cleanup_free char *record = xstrdup("");
  if (cg->mode == CGROUP_MODE_UNIFIED || cg->n_v1 == 0)
    return NULL;
  for (size_t i = 0; i < cg->n_v1; i++) {
    const cgroup_hierarchy *h = &cg->v1[i];
    unsigned long long dev = 0;
    uint64_t id = mount_root_id(h->mountpoint, &dev);
    char *longer;
    /* the mount at the point must be of the superblock the mount table named */
    if (id == 0 || dev != h->dev || strpbrk(h->controllers, " \n") != NULL ||
        strchr(h->mountpoint, '\n') != NULL)
      return NULL;
    longer = xasprintf("%s%" PRIu64 " %s %s\n", record, id, h->controllers, h->mountpoint);
    free(record);
    record = longer;
  }
  return steal_ptr(&record);
}

static void free_hierarchies(cgroup_hierarchy *v1, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v1[i].mountpoint);
    free(v1[i].controllers);
  }
  free(v1);
}

/* One line into *h, checked against the mount now at its point: 0, or -1 */
static int take_line(const char *line, size_t len, cgroup_hierarchy *h) {
  cleanup_free char *copy = xasprintf("%.*s", (int)len, line);
  char *end = NULL, *controllers, *point;
  uint64_t id;
  errno = 0;
  id = strtoull(copy, &end, 10);
  if (errno != 0 || end == copy || *end != ' ' || id == 0)
    return -1;
  controllers = end + 1;
  point = strchr(controllers, ' ');
  if (point == NULL || point == controllers || point[1] != '/')
    return -1;
  *point++ = '\0';
  if (mount_root_id(point, NULL) != id)
    return -1;
  h->controllers = xstrdup(controllers);
  h->mountpoint = xstrdup(point);
  return 0;
}

int cgroup_hierarchies_from_record(struct fsrun_cgroup *cg, const char *record) {
  cgroup_hierarchy *v1 = NULL;
  size_t n = 0;
  for (const char *line = record; line != NULL && *line != '\0';) {
    const char *nl = strchr(line, '\n');
    size_t len = nl != NULL ? (size_t)(nl - line) : strlen(line);
    cgroup_hierarchy *more = realloc(v1, (n + 1) * sizeof(*v1));
    if (more == NULL)
      abort();
    v1 = more;
    v1[n] = (cgroup_hierarchy){0};
    if (take_line(line, len, &v1[n]) < 0) {
      free_hierarchies(v1, n);
      return -1;
    }
    n++;
    line = nl != NULL ? nl + 1 : NULL;
  }
  if (n == 0) {
    free(v1);
    return -1;
  }
  cg->v1 = v1;
  cg->n_v1 = n;
  return 0;
}
