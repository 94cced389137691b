#include "sealed-exe.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mount-children.h"
#include "sealed-image.h"
#include "utils.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* statmount(2) (Linux 6.8) of fd's mount in our mount namespace: 1 when it is there, 0 when it
 * is not (ENOENT), -1 when the kernel cannot say */
static int statmount_attached(int fd) {
#ifdef SYS_statmount
  struct mnt_id_request req = {.size = 24, .param = 1 /* STATMOUNT_SB_BASIC */};
  uint64_t buf[128];
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
    return -1;
  req.mnt_id = stx.stx_mnt_id;
  if (syscall(SYS_statmount, &req, buf, sizeof(buf), 0) == 0)
    return 1;
  return errno == ENOENT ? 0 : -1;
#else
  (void)fd;
  return -1;
#endif
}

/* whether fd's mount is attached in our mount namespace: statmount, or listed in our mountinfo */
static bool mount_attached(int fd) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *info = NULL, *key = NULL;
  struct statx stx;
  int attached = statmount_attached(fd);
  if (attached >= 0)
    return attached == 1;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID) ||
      read_file_at(AT_FDCWD, "/proc/self/mountinfo", &info, NULL, &err) < 0)
    return true;
  key = xasprintf("\n%llu ", (unsigned long long)stx.stx_mnt_id);
  return strncmp(info, key + 1, strlen(key + 1)) == 0 || strstr(info, key) != NULL;
}

/* the memfd copy, or the binary seen through a read-only overlay mounted nowhere */
static bool is_sealed_copy(int fd) {
  enum sealed_image_kind kind = sealed_image_kind(fd);
  return kind == SEALED_MEMFD || (kind == SEALED_OVERLAY && !mount_attached(fd));
}

bool sealed_exe_running(void) {
  cleanup_close int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  return exe >= 0 && is_sealed_copy(exe);
}

int sealed_exe_ensure(char **argv, fsrun_error_t *err) {
  extern char **environ;
  cleanup_close int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  const char *step = "re-execute fsrun from its protected image";
  int r;

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
  r = sealed_exe_exec(exe, argv, environ, &step);
  return fsrun_error_make(err, -r, "%s", step);
}
