/* The runtime's protected image (docs/process-model.md "The binary"), made with system calls
 * alone. fsrun_entry (src/prefault-entry-x86_64.S) calls sealed_exe_early before the C library
 * has started, so that the first image of `create`, `run`, `exec` and `sandbox`, which only hands
 * over to the protected one, does not pay libc's start-up too; sealed_exe_ensure (sealed-exe.c)
 * uses the same code once libc runs, where there is no such entry point.
 *
 * Before libc has started there is no thread pointer (so no stack protector), no relocation has
 * been applied (so no static data may hold a pointer) and no IFUNC is resolved (so no libc string
 * function, and nothing the compiler turns into memset or memcpy: no zeroed arrays, no struct
 * copies). Makefile.am builds this file alone with the flags that keep it so (libsealed.a). */
#include "sealed-image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* on every function: a caller's CFLAGS may ask for the protector (Debian's hardening does) */
#define EARLY __attribute__((no_stack_protector))

/* the sandbox needs no image when its init becomes the tiny init (fsrun.c's needs_protected_image
 * says when at run time, and makes the image then) */
#ifdef HAVE_TINY_INIT
#define BUILT_WITH_TINY_INIT true
#else
#define BUILT_WITH_TINY_INIT false
#endif

#define SEALS      (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define PATH_BYTES 4096

#if defined(__x86_64__)
EARLY static long sc(long n, long a, long b, long c, long d, long e) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}
#else
/* no early entry on other architectures: only called once libc runs */
long syscall(long number, ...);
EARLY static long sc(long n, long a, long b, long c, long d, long e) {
  long r = syscall(n, a, b, c, d, e);
  return r < 0 ? -errno : r;
}
#endif

#define SC1(n, a)             sc(SYS_##n, (long)(a), 0, 0, 0, 0)
#define SC2(n, a, b)          sc(SYS_##n, (long)(a), (long)(b), 0, 0, 0)
#define SC3(n, a, b, c)       sc(SYS_##n, (long)(a), (long)(b), (long)(c), 0, 0)
#define SC4(n, a, b, c, d)    sc(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), 0)
#define SC5(n, a, b, c, d, e) sc(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))

EARLY static void close_fd(int fd) {
  if (fd >= 0)
    (void)SC1(close, fd);
}

EARLY static bool str_eq(const char *a, const char *b) {
  while (*a != '\0' && *a == *b)
    a++, b++;
  return *a == *b;
}

EARLY static bool has_char_of(const char *s, const char *set) {
  for (; *s != '\0'; s++)
    for (const char *c = set; *c != '\0'; c++)
      if (*s == *c)
        return true;
  return false;
}

EARLY static bool has_substring(const char *s, const char *sub) {
  for (; *s != '\0'; s++) {
    const char *a = s, *b = sub;
    while (*b != '\0' && *a == *b)
      a++, b++;
    if (*b == '\0')
      return true;
  }
  return false;
}

EARLY static bool names_one_of(int argc, char **argv, const char *names) {
  for (int a = 1; a < argc; a++)
    for (const char *n = names; *n != '\0';) {
      if (str_eq(argv[a], n))
        return true;
      while (*n++ != '\0')
        ;
    }
  return false;
}

EARLY bool sealed_exe_wanted(int argc, char **argv, bool with_sandbox) {
  /* any argument that names one counts: before the options are parsed, a global option's value
   * cannot be told from the command (at worst a needless image, never a missed one) */
  static const char names[] = "create\0run\0exec\0", sandbox[] = "sandbox\0";
  return names_one_of(argc, argv, names) || (with_sandbox && names_one_of(argc, argv, sandbox));
}

EARLY enum sealed_image_kind sealed_image_kind(int fd) {
  struct statfs sf;
  long seals = SC2(fcntl, fd, F_GET_SEALS);
  if (seals >= 0 && (seals & SEALS) == SEALS)
    return SEALED_MEMFD;
  if (SC2(fstatfs, fd, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC && (sf.f_flags & ST_RDONLY))
    return SEALED_OVERLAY;
  return SEALED_NONE;
}

EARLY static int empty_tmpfs(void) {
  int fs = (int)SC2(fsopen, "tmpfs", FSOPEN_CLOEXEC), mnt = -1;
  if (fs >= 0 && SC5(fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
      SC5(fsconfig, fs, FSCONFIG_CMD_CREATE, 0, 0, 0) == 0)
    mnt = (int)SC3(fsmount, fs, FSMOUNT_CLOEXEC,
                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  close_fd(fs);
  return mnt < 0 ? -1 : mnt;
}

/* "/proc/self/fd/N" into buf (32 bytes) */
EARLY static void fd_path(char *buf, int fd) {
  static const char prefix[] = "/proc/self/fd/";
  char digits[12];
  int n = 0, i = 0;
  do
    digits[n++] = (char)('0' + fd % 10);
  while ((fd /= 10) > 0);
  for (; prefix[i] != '\0'; i++)
    buf[i] = prefix[i];
  while (n > 0)
    buf[i++] = digits[--n];
  buf[i] = '\0';
}

EARLY static bool same_file(int fd, const struct statx *exe) {
  struct statx st;
  return SC5(statx, fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_SIZE | STATX_MTIME, &st) == 0 &&
         (st.stx_mode & S_IFMT) == S_IFREG && st.stx_size == exe->stx_size &&
         st.stx_mtime.tv_sec == exe->stx_mtime.tv_sec &&
         st.stx_mtime.tv_nsec == exe->stx_mtime.tv_nsec;
}

/* Closing the last fd of a mount made with fsmount (never attached) dissolves it, and that waits
 * for an expedited RCU grace period (namespace_unlock): 0.1 to 7 ms of wall time each on a busy
 * machine, in our caller's wait. Instead the fds (a, and b unless -1) go into a unix socket that
 * holds its own receiving end, and both ends are closed: the kernel's collector of such cycles (a
 * worker on recent kernels) frees it, and the last fput, from a kernel thread, dissolves the
 * mounts there. A kernel that collects in the closing process costs what a close does. Nothing
 * can reach the fds in between (no end of the socket is left open); on any failure they are
 * simply closed. */
EARLY void sealed_close_mounts_later(int a, int b) {
  union {
    struct cmsghdr h;
    char bytes[CMSG_SPACE(3 * sizeof(int))];
  } control;
  struct msghdr msg;
  struct iovec iov;
  char byte = 0;
  int sp[2] = {-1, -1}, n = 0;
  if (a >= 0 && SC4(socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) == 0) {
    int *fds = (int *)(void *)CMSG_DATA(&control.h);
    fds[n++] = sp[1];
    fds[n++] = a;
    if (b >= 0)
      fds[n++] = b;
    iov.iov_base = &byte;
    iov.iov_len = 1;
    msg.msg_name = 0;
    msg.msg_namelen = 0;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
    msg.msg_flags = 0;
    control.h.cmsg_len = CMSG_LEN(n * sizeof(int));
    control.h.cmsg_level = SOL_SOCKET;
    control.h.cmsg_type = SCM_RIGHTS;
    (void)SC3(sendmsg, sp[0], &msg, MSG_DONTWAIT);
  }
  close_fd(sp[0]);
  close_fd(sp[1]);
  close_fd(a);
  close_fd(b);
}

/* An overlay of dir above below (key: "lowerdir+" or "datadir+"), with no upper layer, read-only,
 * mounted nowhere; -1 when the kernel refuses it */
EARLY static int overlay_mount(const char *dir, const char *key, const char *below) {
  int fs = (int)SC2(fsopen, "overlay", FSOPEN_CLOEXEC), mnt = -1;
  if (fs >= 0 && SC5(fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir+", dir, 0) == 0 &&
      SC5(fsconfig, fs, FSCONFIG_SET_STRING, key, below, 0) == 0 &&
      SC5(fsconfig, fs, FSCONFIG_CMD_CREATE, 0, 0, 0) == 0)
    mnt = (int)SC3(fsmount, fs, FSMOUNT_CLOEXEC,
                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
  close_fd(fs);
  return mnt < 0 ? -1 : mnt;
}

/* Root: the binary's own file, opened through an overlay of its directory with no upper layer (so
 * its superblock is read-only and no write reaches the file below, whatever is done to the
 * mount), mounted nowhere (fsmount, never attached: no path leads to it, and nothing but us holds
 * it). No copy: the pages are the page cache's. -1 when the kernel or the path does not allow it
 * (an ordinary user, a directory name overlayfs cannot take, a lower filesystem it refuses). */
EARLY static int open_through_overlay(const struct statx *exe) {
  char path[PATH_BYTES], empty_path[32];
  long n = SC4(readlinkat, AT_FDCWD, "/proc/self/exe", path, sizeof(path) - 1);
  int mnt = -1, empty = -1, fd = -1;
  char *slash = 0;
  const char *dir = path;

  if (n <= 0 || n >= (long)sizeof(path) - 1)
    return -1;
  path[n] = '\0';
  for (char *p = path; *p != '\0'; p++)
    if (*p == '/')
      slash = p;
  if (path[0] != '/' || slash == 0 || has_char_of(path, ",:\\") ||
      has_substring(path, " (deleted)"))
    return -1;
  *slash = '\0';
  if (slash == path)
    dir = "/";
  /* without an upper layer overlayfs wants a second layer. A data-only one (datadir+, Linux 6.7
   * as lowerdir+ is) never shows in the merged directory: /dev, a directory every system has;
   * where it overlaps the binary's directory (or is missing), an empty tmpfs mounted nowhere */
  mnt = overlay_mount(dir, "datadir+", "/dev");
  if (mnt < 0) {
    empty = empty_tmpfs();
    if (empty < 0)
      return -1;
    fd_path(empty_path, empty);
    mnt = overlay_mount(dir, "lowerdir+", empty_path);
  }
  if (mnt >= 0)
    fd = (int)SC3(openat, mnt, slash + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  sealed_close_mounts_later(mnt, empty);
  /* the same file as the one we run, read-only */
  if (fd >= 0 && !(same_file(fd, exe) && sealed_image_kind(fd) == SEALED_OVERLAY)) {
    close_fd(fd);
    fd = -1;
  }
  return fd < 0 ? -1 : fd;
}

/* The bytes of the image execve needs: up to the end of the last segment in the file. What follows
 * (debug info, symbol and section tables: half of an unstripped fsrun) is left out of the copy. */
EARLY static uint64_t image_size(int fd, uint64_t file_size) {
  Elf64_Ehdr eh;
  uint64_t end;
  if (SC4(pread64, fd, &eh, sizeof(eh), 0) != (long)sizeof(eh) || eh.e_ident[EI_MAG0] != ELFMAG0 ||
      eh.e_ident[EI_MAG1] != ELFMAG1 || eh.e_ident[EI_MAG2] != ELFMAG2 ||
      eh.e_ident[EI_MAG3] != ELFMAG3 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return file_size;
  end = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (SC4(pread64, fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != (long)sizeof(ph))
      return file_size;
    if (ph.p_offset + ph.p_filesz > end)
      end = ph.p_offset + ph.p_filesz;
  }
  return end > 0 && end <= file_size ? end : file_size;
}

/* A memfd holding the image, sealed against writing, growing, shrinking and further sealing */
EARLY static int sealed_copy(int exe_fd, const struct statx *exe, const char **step) {
  int copy = (int)SC2(memfd_create, "fsrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  uint64_t size = image_size(exe_fd, exe->stx_size), done = 0;
  long r = 0;
  if (copy < 0) {
    *step = "memfd_create the runtime binary's sealed copy";
    return copy;
  }
  while (done < size) {
    r = SC4(sendfile, copy, exe_fd, 0, size - done);
    if (r == -EINTR)
      continue;
    if (r <= 0)
      break;
    done += (uint64_t)r;
  }
  if (done < size) {
    *step = "copy the runtime binary into its sealed memfd";
    close_fd(copy);
    return r < 0 ? (int)r : -EIO;
  }
  r = SC3(fcntl, copy, F_ADD_SEALS, SEALS);
  if (r < 0) {
    *step = "seal the runtime binary's memfd copy";
    close_fd(copy);
    return (int)r;
  }
  return copy;
}

EARLY int sealed_exe_exec(int exe_fd, char **argv, char **envp, const char **step) {
  struct statx exe;
  int image;
  long r = SC5(statx, exe_fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_SIZE | STATX_MTIME, &exe);
  if (r < 0) {
    *step = "stat the runtime binary";
    return (int)r;
  }
  if (SC1(geteuid, 0) == 0 && (image = open_through_overlay(&exe)) >= 0) {
    (void)SC5(execveat, image, "", argv, envp, AT_EMPTY_PATH);
    close_fd(image);
  }
  image = sealed_copy(exe_fd, &exe, step);
  if (image < 0)
    return image;
  r = SC5(execveat, image, "", argv, envp, AT_EMPTY_PATH);
  close_fd(image);
  *step = "re-execute fsrun from its sealed memfd copy";
  return (int)r;
}

EARLY void sealed_exe_early(long *sp) {
  int argc = (int)sp[0];
  char **argv = (char **)(sp + 1), **envp = argv + argc + 1;
  const char *step;
  int exe;
  if (!sealed_exe_wanted(argc, argv, !BUILT_WITH_TINY_INIT) || RUNNING_ON_VALGRIND)
    return;
  exe = (int)SC4(openat, AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
  if (exe < 0)
    return;
  /* a protected image already (the second one, or a caller's); main's sealed_exe_ensure checks
   * that an overlay is mounted nowhere. What fails here, it does again and reports. */
  if (sealed_image_kind(exe) == SEALED_NONE)
    (void)sealed_exe_exec(exe, argv, envp, &step);
  close_fd(exe);
}
