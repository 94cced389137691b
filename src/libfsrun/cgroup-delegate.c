/* An unprivileged caller's delegated cgroup v2 subtree (what systemd's user@UID.service hands its
 * user, or what an administrator sets up the same way): a directory the caller owns with its
 * cgroup.procs, cgroup.subtree_control and cgroup.threads. The caller's own cgroup has processes,
 * so by the no-internal-processes rule no controller can be enabled below it: the container's
 * cgroup goes beside it, under its parent, when the caller owns that parent. */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

static bool writable(const char *dir, const char *file) {
  cleanup_free char *p = file ? xasprintf("%s/%s", dir, file) : xstrdup(dir);
  return access(p, W_OK) == 0;
}

bool cgroup_is_delegated(const char *path) {
  cleanup_free char *dir = cgroup_join(CGROUP_ROOT, path);
  struct stat st;
  if (stat(dir, &st) < 0 || st.st_uid != getuid())
    return false;
  return writable(dir, NULL) && writable(dir, "cgroup.procs") &&
         writable(dir, "cgroup.subtree_control") && writable(dir, "cgroup.threads");
}

/* The 0:: line of /proc/self/cgroup: the caller's cgroup v2 path. Caller frees. */
static char *own_v2_cgroup(void) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t err = NULL;
  size_t len = 0;
  if (read_file_at(AT_FDCWD, "/proc/self/cgroup", &text, &len, &err) < 0)
    return NULL;
  for (char *line = text; line && *line;) {
    char *next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    if (strncmp(line, "0::/", 4) == 0)
      return xstrdup(line + 3);
    line = next;
  }
  return NULL;
}

char *cgroup_rootless_delegated_base(void) {
  cleanup_free char *own = own_v2_cgroup();
  cleanup_free char *user_service = NULL;
  char *slash;
  if (own != NULL && (slash = strrchr(own, '/')) != NULL && slash != own) {
    *slash = '\0';
    if (cgroup_is_delegated(own))
      return steal_ptr(&own);
  }
  /* systemd's delegation to the user's manager, when the caller runs elsewhere (a login scope) */
  user_service = xasprintf("/user.slice/user-%u.slice/user@%u.service", (unsigned)getuid(),
                           (unsigned)getuid());
  if (cgroup_is_delegated(user_service))
    return steal_ptr(&user_service);
  return NULL;
}
