/* writablePaths against the host's device nodes (review27 E9): `nodev` stops the command opening
 * a node under a writable entry, not changing it. Root's command owns every root-owned node there,
 * so it could chmod the host's /dev/null (every other user's git then fails) or unlink it. An
 * entry that is a device node, lies on /dev's filesystem or a devpts (the terminals), or holds /dev
 * is refused (/dev/shm, a tmpfs of its own, is not); the
 * sandbox's own /dev has the nodes a command needs. */
#include "sandbox-device-paths.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "sandbox-state-root.h"
#include "utils.h"

static bool on_dev(const char *entry, const struct stat *dev) {
  struct stat st;
  struct statfs fs;
  cleanup_free char *real = entry[0] == '/' ? realpath(entry, NULL) : NULL;
  if (real == NULL || stat(real, &st) < 0)
    return false; /* missing: made as an empty directory; relative: refused where bound */
  return S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || st.st_dev == dev->st_dev ||
         (statfs(real, &fs) == 0 && fs.f_type == DEVPTS_SUPER_MAGIC);
}

int sandbox_check_device_paths(const oci_policy *p, fsrun_error_t *err) {
  struct stat dev, root;
  ssize_t hit = -1;
  /* a /dev on the root filesystem (no devtmpfs): only nodes themselves and /dev's holders */
  bool have_dev = stat("/dev", &dev) == 0 && S_ISDIR(dev.st_mode) && stat("/", &root) == 0;
  if (have_dev && dev.st_dev == root.st_dev)
    dev.st_dev = (dev_t)-1;
  for (size_t i = 0; have_dev && i < p->writable_paths.len; i++)
    if (on_dev(p->writable_paths.items[i], &dev))
      hit = (ssize_t)i;
  if (hit < 0 && have_dev && sandbox_writable_reaches(p, "/dev", &hit) < 0)
    return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they hold `/dev`");
  if (hit < 0)
    return 0;
  return fsrun_error_make(err, 0,
                          "policy: writablePaths[%zd]: `%s` is, holds or lies in the host's "
                          "device nodes (`/dev`), whose modes and names the command could change "
                          "for every user: the sandbox has a /dev of its own",
                          hit, p->writable_paths.items[hit]);
}
