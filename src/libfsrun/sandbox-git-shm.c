/* An ordinary user's per-run git dir when the state root is not a tmpfs (fsrun's default
 * /tmp/fsrun-UID without $XDG_RUNTIME_DIR): a directory of its own in /dev/shm. Root mounts a tmpfs
 * over the per-run dir instead (sandbox-git-sync.c); a user cannot, and on a disk each directory
 * overlayfs and fsrun make is an inode allocation and its journal work. On an ext4 without a
 * journal the allocator also skips every inode of the group freed in the last minute
 * (`recently_deleted`), so the cost grows with how many runs came just before
 * (tests/bench/README.md, "Session 18").
 *
 * The name, /dev/shm/fsrun-git.<uid>.<state root's dev>.<its inode>.<id>, is derived from the run
 * so that the watchdog and the next exec find a leftover without a pointer on the disk. /dev/shm is
 * shared: another user may take the name first. mkdir then fails and the run keeps the state root's
 * directory; the sticky bit keeps anyone but root from renaming or removing the directory once it
 * is ours. */
#include "sandbox-git.h"

#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "utils.h"

#define SHM_DIR SANDBOX_GIT_SHM_DIR
/* what a run may write into its upper dir (a `git fetch` of a large pack) must still fit: below
 * this much free room the disk is the better place */
#define SHM_MIN_FREE (1024ull * 1024 * 1024)

char *sandbox_git_shm_prefix(const char *state_root) {
  struct stat st;
  if (geteuid() == 0 || stat(state_root, &st) < 0)
    return NULL;
  return xasprintf(SHM_DIR "/fsrun-git.%u.%ju.%ju.", (unsigned)geteuid(), (uintmax_t)st.st_dev,
                   (uintmax_t)st.st_ino);
}

char *sandbox_git_shm_run_dir(const char *state_root, const char *id) {
  cleanup_free char *prefix = sandbox_git_shm_prefix(state_root);
  if (prefix == NULL || strlen(prefix) - strlen(SHM_DIR "/") + strlen(id) > NAME_MAX)
    return NULL;
  return xasprintf("%s%s", prefix, id);
}

/* a tmpfs with room, while the state root is not one */
static bool shm_wanted(const char *state_root) {
  struct statfs root, shm;
  if (statfs(state_root, &root) < 0 || root.f_type == TMPFS_MAGIC)
    return false;
  return statfs(SHM_DIR, &shm) == 0 && shm.f_type == TMPFS_MAGIC &&
         (unsigned long long)shm.f_bavail * (unsigned long long)shm.f_bsize >= SHM_MIN_FREE;
}

char *sandbox_git_shm_claim(const char *state_root, const char *id) {
  char *dir;
  if (!shm_wanted(state_root) || (dir = sandbox_git_shm_run_dir(state_root, id)) == NULL)
    return NULL;
  if (mkdir(dir, 0700) == 0)
    return dir;
  free(dir); /* taken (by a leftover of ours, or by another user): the state root's dir */
  return NULL;
}

bool sandbox_git_shm_may_use(const char *state_root) {
  cleanup_free char *dir = xstrdup(state_root);
  struct statfs fs;
  char *slash;
  if (geteuid() == 0)
    return false;
  while (statfs(dir, &fs) < 0) {
    if (errno != ENOENT || (slash = strrchr(dir, '/')) == NULL)
      return true; /* cannot tell: it may */
    slash[slash == dir ? 1 : 0] = '\0';
  }
  return fs.f_type != TMPFS_MAGIC;
}
