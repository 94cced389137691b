/* writablePaths against the host's device nodes and kernel interfaces (review27 E9, E10).
 * `nodev` stops the command opening a node under a writable entry, not changing it, and sysfs's
 * attributes check the file's owner, not a capability: root's command owns them all. Under a
 * writable /dev it chmodded the host's /dev/null (every other user's git then failed); under a
 * writable /sys it could suspend the host (`/sys/power/state`) or unbind its drivers. An entry
 * that is a device node, lies on /dev's filesystem or on a kernel interface filesystem, or holds
 * /dev, /sys or /proc is refused; the sandbox has its own /dev and /proc and a read-only /sys.
 * /dev/shm, a tmpfs of its own, is not refused. */
#include "sandbox-kernel-paths.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "sandbox-state-root.h"
#include "utils.h"

#define CONFIGFS_MAGIC 0x62656570
#define FUSECTL_MAGIC  0x65735543

static const unsigned long kernel_fs_types[] = {
    SYSFS_MAGIC,    PROC_SUPER_MAGIC,   CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,
    TRACEFS_MAGIC,  SECURITYFS_MAGIC,   BPF_FS_MAGIC,       EFIVARFS_MAGIC,      PSTOREFS_MAGIC,
    BINFMTFS_MAGIC, DEVPTS_SUPER_MAGIC, CONFIGFS_MAGIC,     FUSECTL_MAGIC,
};
static const char *const kernel_dirs[] = {"/dev", "/sys", "/proc"};

static bool kernel_fs(const char *real) {
  struct statfs fs;
  if (statfs(real, &fs) < 0)
    return false;
  for (size_t i = 0; i < sizeof(kernel_fs_types) / sizeof(kernel_fs_types[0]); i++)
    if ((unsigned long)fs.f_type == kernel_fs_types[i])
      return true;
  return false;
}

/* dev: /dev's device, or (dev_t)-1 where /dev is no filesystem of its own */
static bool on_kernel_fs(const char *entry, dev_t dev) {
  struct stat st;
  cleanup_free char *real = entry[0] == '/' ? realpath(entry, NULL) : NULL;
  if (real == NULL || stat(real, &st) < 0)
    return false; /* missing: made as an empty directory; relative: refused where bound */
  return S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || st.st_dev == dev || kernel_fs(real);
}

static dev_t dev_filesystem(void) {
  struct stat dev, root;
  if (stat("/dev", &dev) < 0 || stat("/", &root) < 0 || dev.st_dev == root.st_dev)
    return (dev_t)-1;
  return dev.st_dev;
}

int sandbox_check_kernel_paths(const oci_policy *p, fsrun_error_t *err) {
  dev_t dev = dev_filesystem();
  ssize_t hit = -1;
  for (size_t i = 0; hit < 0 && i < p->writable_paths.len; i++)
    if (on_kernel_fs(p->writable_paths.items[i], dev))
      hit = (ssize_t)i;
  for (size_t i = 0; hit < 0 && i < sizeof(kernel_dirs) / sizeof(kernel_dirs[0]); i++)
    if (sandbox_writable_reaches(p, kernel_dirs[i], &hit) < 0)
      return fsrun_error_errno(err, "policy: writablePaths: cannot tell whether they hold `%s`",
                               kernel_dirs[i]);
  if (hit < 0)
    return 0;
  return fsrun_error_make(err, 0,
                          "policy: writablePaths[%zd]: `%s` is, holds or lies in the host's "
                          "device nodes or kernel interfaces (`/dev`, `/sys`, `/proc`, cgroupfs, "
                          "debugfs ...), whose nodes and knobs root's command could change for "
                          "every user: the sandbox has its own /dev and /proc and a read-only /sys",
                          hit, p->writable_paths.items[hit]);
}
