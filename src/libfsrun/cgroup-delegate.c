/* An unprivileged caller's delegated cgroup v2 subtree (what systemd's user@UID.service hands its
 * user, or what an administrator sets up the same way): a directory the caller owns with its
 * cgroup.procs, cgroup.subtree_control and cgroup.threads. The caller's own cgroup has processes,
 * so by the no-internal-processes rule no controller can be enabled below it: the container's
 * cgroup goes beside it, under its parent, when the caller owns that parent.
 *
 * Every later command finds that cgroup again in the state (`unified:BASE/fsrun/ID`) and takes it
 * for the container's only when BASE is still delegated to the state directory's owner, the rest is
 * what the id and linux.cgroupsPath lead to, and a live init is in it (review25 C10). */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "openat2-compat.h"
#include "utils.h"

/* "/a/b": absolute, no empty, `.` or `..` component, not the root */
static bool plain_path(const char *path, size_t len) {
  if (len < 2 || path[0] != '/')
    return false;
  for (size_t i = 0; i < len;) {
    size_t n = 0;
    i++; /* the slash */
    while (i + n < len && path[i + n] != '/')
      n++;
    if (n == 0 || (n == 1 && path[i] == '.') || (n == 2 && path[i] == '.' && path[i + 1] == '.'))
      return false;
    i += n;
  }
  return true;
}

/* path (relative to the cgroup2 root, plain) is a directory of that mount which uid owns, with its
 * cgroup.procs, cgroup.subtree_control and cgroup.threads: how systemd delegates a subtree. Opened
 * beneath the mount without symlinks, so the files looked at are the cgroup's own. */
static bool owned_as_delegated(const char *path, uid_t uid) {
  static const char *const files[] = {"cgroup.procs", "cgroup.subtree_control", "cgroup.threads"};
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};
  cleanup_close int root = -1;
  cleanup_close int dir = -1;
  struct stat st;
  if (!plain_path(path, strlen(path)))
    return false;
  root = open(CGROUP_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return false;
  dir = openat2_compat(root, path + 1, &how);
  if (dir < 0 || fstat(dir, &st) < 0 || st.st_uid != uid)
    return false;
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    if (fstatat(dir, files[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != uid)
      return false;
  return true;
}

static bool writable(const char *dir, const char *file) {
  cleanup_free char *p = file ? xasprintf("%s/%s", dir, file) : xstrdup(dir);
  return access(p, W_OK) == 0;
}

bool cgroup_is_delegated(const char *path) {
  cleanup_free char *dir = cgroup_join(CGROUP_ROOT, path);
  /* owned as the later commands check it (cgroup_is_delegated_to), and writable */
  if (!owned_as_delegated(path, getuid()))
    return false;
  return writable(dir, NULL) && writable(dir, "cgroup.procs") &&
         writable(dir, "cgroup.subtree_control") && writable(dir, "cgroup.threads");
}

char *cgroup_delegated_base_of(const char *id, const char *cgroups_path, const char *path) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *own = NULL;
  size_t len = strlen(path), own_len;
  /* create puts only a relative linux.cgroupsPath (or none) below the subtree */
  if ((cgroups_path != NULL && cgroups_path[0] == '/') ||
      cgroup_resolve_path(id, cgroups_path, false, &own, &ignored) < 0)
    return NULL;
  own_len = strlen(own);
  if (len <= own_len || strcmp(path + len - own_len, own) != 0 || !plain_path(path, len - own_len))
    return NULL;
  return xasprintf("%.*s", (int)(len - own_len), path);
}

bool cgroup_is_delegated_to(const char *base, uid_t owner) {
  /* a subtree is delegated to an ordinary user: root needs none, and never makes one */
  return owner != 0 && owned_as_delegated(base, owner);
}

bool cgroup_pid_is_in(pid_t pid, const char *path) {
  cleanup_free char *proc = xasprintf("/proc/%d/cgroup", (int)pid);
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t err = NULL;
  size_t len = strlen(path);
  const char *line;
  if (read_file_at(AT_FDCWD, proc, &text, NULL, &err) < 0)
    return false;
  for (line = text; line != NULL && strncmp(line, "0::", 3) != 0;
       line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    ;
  if (line == NULL)
    return false;
  line += 3;
  /* the cgroup itself, or one the container made below it */
  return strncmp(line, path, len) == 0 &&
         (line[len] == '\n' || line[len] == '\0' || line[len] == '/');
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
