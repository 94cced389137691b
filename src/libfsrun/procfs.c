#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "openat2-compat.h"
#include "utils.h"

#define PROC_ROOT_INO 1

static int verify_procfs(int fd, bool want_root, fsrun_error_t *err) {
  struct statfs sfs;
  if (fstatfs(fd, &sfs) < 0)
    return fsrun_error_errno(err, "fstatfs on procfs handle");
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return fsrun_error_make(err, EXDEV, "procfs handle is not on procfs (type 0x%lx)",
                            (unsigned long)sfs.f_type);
  if (want_root) {
    struct stat st;
    if (fstat(fd, &st) < 0)
      return fsrun_error_errno(err, "fstat on procfs handle");
    if (st.st_ino != PROC_ROOT_INO)
      return fsrun_error_make(err, EXDEV, "procfs handle is not the root of a procfs");
  }
  return 0;
}

/* A detached procfs instance of our own: nothing in any mount namespace can cover it. */
int procfs_open_instance(void) {
  cleanup_close int fs_fd = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
  if (fs_fd < 0)
    return -1;
  if (syscall(SYS_fsconfig, fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return (int)syscall(SYS_fsmount, fs_fd, FSMOUNT_CLOEXEC,
                      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

int procfs_open(fsrun_error_t *err) {
  cleanup_close int fd = procfs_open_instance();
  if (fd < 0) {
    /* no new mount API or no right to mount (unprivileged): the host's /proc, verified */
    fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return fsrun_error_errno(err, "open `/proc`");
  }
  if (verify_procfs(fd, true, err) < 0)
    return fsrun_error_code(err);
  return steal_fd(&fd);
}

int procfs_openat(int procfs_fd, const char *path, int flags, fsrun_error_t *err) {
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
      .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH | RESOLVE_NO_XDEV,
  };
  cleanup_close int fd = (int)openat2_compat(procfs_fd, path, &how);
  if (fd < 0)
    return fsrun_error_errno(err, "open `/proc/%s`", path);
  if (verify_procfs(fd, false, err) < 0)
    return fsrun_error_wrap(err, "`/proc/%s`", path);
  return steal_fd(&fd);
}

int procfs_write(int procfs_fd, const char *path, const char *data, size_t len,
                 fsrun_error_t *err) {
  cleanup_close int fd = procfs_openat(procfs_fd, path, O_WRONLY, err);
  ssize_t r;
  if (fd < 0)
    return fd;
  do
    r = write(fd, data, len);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return fsrun_error_errno(err, "write `/proc/%s`", path);
  if ((size_t)r != len)
    return fsrun_error_make(err, EIO, "write `/proc/%s`: short write", path);
  return 0;
}

pid_t procfs_self_pid(int procfs_fd) {
  char buf[32];
  ssize_t n = readlinkat(procfs_fd, "self", buf, sizeof(buf) - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return (pid_t)strtol(buf, NULL, 10);
}

unsigned long long procfs_pid_start_time(pid_t pid, bool *zombie) {
  char path[64], buf[1024];
  cleanup_close int fd = -1;
  unsigned long long start = 0;
  char state = 0;
  ssize_t n;
  const char *p;

  if (zombie)
    *zombie = false;
  if (pid <= 0)
    return 0;
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = safe_read_all(fd, buf, sizeof(buf) - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields start after the last ')' */
  p = strrchr(buf, ')');
  if (p == NULL)
    return 0;
  /* state is field 3, starttime field 22 */
  if (sscanf(p + 1,
             " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
             &state, &start) != 2)
    return 0;
  if (zombie)
    *zombie = state == 'Z' || state == 'X';
  return start;
}

unsigned long long procfs_pid_pidns(pid_t pid) {
  char path[64];
  struct stat sb;
  if (pid <= 0)
    return 0;
  snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
  if (stat(path, &sb) < 0)
    return 0;
  return (unsigned long long)sb.st_ino;
}

const char *procfs_boot_id(void) {
  static char id[40];
  static bool read_once;
  cleanup_close int fd = -1;
  ssize_t n;
  if (read_once)
    return id;
  read_once = true;
  fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  n = fd < 0 ? -1 : read(fd, id, sizeof(id) - 1);
  id[n > 0 ? strcspn(id, "\n") : 0] = '\0';
  return id;
}

int procfs_set_oom_score_adj(int procfs_fd, pid_t pid, int value, fsrun_error_t *err) {
  char path[64], buf[16];
  int len = snprintf(buf, sizeof(buf), "%d", value);
  snprintf(path, sizeof(path), "%d/oom_score_adj", (int)pid);
  if (procfs_write(procfs_fd, path, buf, (size_t)len, err) < 0) {
    if (fsrun_error_code(err) == -EACCES && value < 0)
      return fsrun_error_make(err, EACCES,
                              "process.oomScoreAdj: setting %d (lowering the score) needs "
                              "CAP_SYS_RESOURCE, which fsrun does not have",
                              value);
    return fsrun_error_wrap(err, "process.oomScoreAdj");
  }
  return 0;
}
