/* The host's index after a run on a worktree whose file times may not show the run's writes
 * (review24 B3): wherever file-time.h trusts no times. On tmpfs and ramfs a page of a shared
 * mapping that was read first is mapped writable with no write fault, so a write through it
 * changes a file without moving its mtime or ctime; on FUSE whose ctime is the mtime (sshfs) the
 * command puts the mtime back. The host's git, trusting an entry whose stat data match the
 * file's, then shows nothing of the change (`git status`, `git diff`, `add -A`). The index's own
 * mtime is set back to 1 s after the epoch: every entry with a later mtime is then racily clean
 * for git (not before the index's mtime, 0 meaning "unknown"), so the host's next `git status`
 * hashes every tracked file once and rewrites the index. With a split index (core.splitIndex)
 * git takes the racy cut-off from this file too, not from the shared index (checked, git 2.39). */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-time.h"
#include "log.h"
#include "utils.h"

/* cannot tell (fstatfs fails) counts as untrusted: the index made racy costs one hashing */
bool sandbox_git_times_untrusted(int fd) {
  return !file_time_fd_stamps_writes(fd);
}

/* the index's mtime set back: 0, -1 with errno (ENOENT: there is none) */
static int set_back(int common_fd, const char *rel) {
  static const struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 1}};
  /* beneath the common dir checked before the run, through no link: never what a run planted */
  cleanup_close int fd = sandbox_git_open_beneath(common_fd, rel, O_RDONLY | O_NOCTTY, 0);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return -1;
  if (!S_ISREG(st.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  return futimens(fd, times);
}

void sandbox_git_index_racy(int common_fd, const char *common_dir, const char *admin) {
  cleanup_free char *rel = admin[0] ? xasprintf("%s/index", admin) : xstrdup("index");
  if (set_back(common_fd, rel) == 0) {
    log_info("sandbox: git: the worktree is on a filesystem whose file times may not show writes "
             "(tmpfs, FUSE, network): the host's index is made racily clean, its next `git "
             "status` hashes every tracked file");
  } else if (errno != ENOENT) { /* no index: git trusts no stat data */
    log_warning("sandbox: git: `%s/%s`: %s; on this worktree, whose file times may not show "
                "writes, the host's `git status` may not show a file the run changed",
                common_dir, rel, strerror(errno));
  }
}
