/* Root's one-shot sandbox without a device allow-list in its cgroup. The list (v1: a `devices`
 * cgroup with `deny a` and ~10 rules; v2: a BPF program) stops a process opening a device node;
 * the sandbox's command already cannot reach one: no CAP_MKNOD, every mount `nodev` but its own
 * /dev tmpfs (the default nodes only) and devpts. What is left is an fd it inherits: a magic link
 * /proc/self/fd/N reopens the host's node on the host's /dev mount, where only the list would
 * refuse it. So the list stays for a run whose stdio holds a node outside it. */
#include "sandbox-devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cgroup.h"

static bool fd_is_unlisted_device(int fd) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return false; /* not open: nothing to reopen */
  if (S_ISBLK(st.st_mode))
    return true;
  return S_ISCHR(st.st_mode) &&
         !cgroup_device_allowed_by_default('c', major(st.st_rdev), minor(st.st_rdev));
}

bool sandbox_device_rules_needed(void) {
  for (int fd = 0; fd <= 2; fd++)
    if (fd_is_unlisted_device(fd))
      return true;
  return false;
}
