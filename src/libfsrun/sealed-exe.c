#include "sealed-exe.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define FSRUN_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* whether fd's mount is attached in our mount namespace (listed in our mountinfo) */
static bool mount_attached(int fd) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *info = NULL, *key = NULL;
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID) ||
      read_file_at(AT_FDCWD, "/proc/self/mountinfo", &info, NULL, &err) < 0)
    return true;
  key = xasprintf("\n%llu ", (unsigned long long)stx.stx_mnt_id);
  return strncmp(info, key + 1, strlen(key + 1)) == 0 || strstr(info, key) != NULL;
}

/* the memfd copy, or the binary seen through a read-only overlay mounted nowhere
 * (open_through_overlay: no upper layer, so no write reaches the file below whatever is done to
 * the mount, and no path leads to it) */
static bool is_sealed_copy(int fd) {
  int seals = fcntl(fd, F_GET_SEALS);
  struct statfs sf;
  if (seals >= 0 && (seals & FSRUN_SEALS) == FSRUN_SEALS)
    return true;
  return fstatfs(fd, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC && (sf.f_flags & ST_RDONLY) &&
         !mount_attached(fd);
}

static int empty_tmpfs(void) {
  cleanup_close int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
}

/* Root: the binary's own file, opened through an overlay of its directory with no upper layer,
 * mounted nowhere (fsmount, never attached), so nothing writes through it and no path leads to
 * it. No copy: the pages are the page cache's. -1 when the kernel or the path does not allow it
 * (an ordinary user, a directory name overlayfs cannot take, a lower filesystem it refuses). */
static int open_through_overlay(const struct stat *exe_st) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  cleanup_close int fs = -1, mnt = -1;
  cleanup_close int empty = -1;
  char empty_path[32];
  const char *dir;
  char *slash;
  struct stat st;
  int fd;

  if (n <= 0 || (size_t)n >= sizeof(path) - 1)
    return -1;
  path[n] = '\0';
  slash = strrchr(path, '/');
  if (path[0] != '/' || slash == NULL || strpbrk(path, ",:\\") != NULL ||
      strstr(path, " (deleted)") != NULL)
    return -1;
  *slash = '\0';
  dir = slash == path ? "/" : path;
  /* without an upper layer overlayfs wants two lower ones that do not overlap: an empty tmpfs,
   * itself mounted nowhere, below the binary's directory */
  empty = empty_tmpfs();
  if (empty < 0)
    return -1;
  snprintf(empty_path, sizeof(empty_path), "/proc/self/fd/%d", empty);
  fs = fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", dir, 0) < 0 ||
      fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", empty_path, 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  if (mnt < 0)
    return -1;
  fd = openat(mnt, slash + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  /* the same file as the one we run */
  if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != exe_st->st_size ||
                  st.st_mtim.tv_sec != exe_st->st_mtim.tv_sec ||
                  st.st_mtim.tv_nsec != exe_st->st_mtim.tv_nsec || !is_sealed_copy(fd))) {
    close(fd);
    return -1;
  }
  return fd;
}

static int copy_all(int from, int to, off_t size, fsrun_error_t *err) {
  off_t done = 0;
  while (done < size) {
    ssize_t n = sendfile(to, from, NULL, (size_t)(size - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fsrun_error_errno(err, "copy the runtime binary into its sealed memfd");
    done += n;
  }
  return 0;
}

/* The bytes of the image execve needs: up to the end of the last segment in the file. What follows
 * (debug info, symbol and section tables: half of an unstripped fsrun) is left out of the copy. */
static off_t image_size(int fd, off_t file_size) {
  Elf64_Ehdr eh;
  off_t end = 0;
  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return file_size;
  end = (off_t)(eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr));
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
      return file_size;
    if ((off_t)(ph.p_offset + ph.p_filesz) > end)
      end = (off_t)(ph.p_offset + ph.p_filesz);
  }
  return end > 0 && end <= file_size ? end : file_size;
}

bool sealed_exe_running(void) {
  cleanup_close int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  return exe >= 0 && is_sealed_copy(exe);
}

int sealed_exe_ensure(char **argv, fsrun_error_t *err) {
  extern char **environ;
  cleanup_close int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  cleanup_close int copy = -1;
  struct stat st;

  if (exe < 0)
    return fsrun_error_errno(err, "open the runtime binary (/proc/self/exe)");
  /* memcheck cannot follow an execveat of a memfd. The copy only guards the binary on disk, which
   * no container can reach through a process valgrind runs: it cannot clone3 one. */
  if (RUNNING_ON_VALGRIND)
    return 0;
  if (is_sealed_copy(exe)) {
    /* execveat named us after the fd ("3"): ps, pgrep and the kernel's messages say fsrun */
    (void)prctl(PR_SET_NAME, "fsrun", 0, 0, 0);
    return 0;
  }
  if (fstat(exe, &st) < 0)
    return fsrun_error_errno(err, "stat the runtime binary");
  if (geteuid() == 0) {
    cleanup_close int ro = open_through_overlay(&st);
    if (ro >= 0)
      syscall(SYS_execveat, ro, "", argv, environ, AT_EMPTY_PATH);
  }
  copy = memfd_create("fsrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0)
    return fsrun_error_errno(err, "memfd_create the runtime binary's sealed copy");
  if (copy_all(exe, copy, image_size(exe, st.st_size), err) < 0)
    return fsrun_error_code(err);
  if (fcntl(copy, F_ADD_SEALS, FSRUN_SEALS) < 0)
    return fsrun_error_errno(err, "seal the runtime binary's memfd copy");
  syscall(SYS_execveat, copy, "", argv, environ, AT_EMPTY_PATH);
  return fsrun_error_errno(err, "re-execute fsrun from its sealed memfd copy");
}
