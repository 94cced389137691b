#include "tiny-init.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sync.h"
#include "tiny-params.h"
#include "utils.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define TINY_INIT_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

#ifdef HAVE_TINY_INIT
static int make_image_fd(void) {
  /* MFD_EXEC: a kernel with vm.memfd_noexec would otherwise make it non-executable (6.3+); an
   * older kernel does not know the flag */
  int fd = memfd_create("fsrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create("fsrun-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return -1;
  if (safe_write_all(fd, tiny_init_image, tiny_init_image_size) < 0 ||
      fcntl(fd, F_ADD_SEALS, TINY_INIT_SEALS) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}
#endif

int tiny_init_image_fd(void) {
  static int fd = -2;
  if (fd != -2)
    return fd;
  fd = -1;
#ifdef HAVE_TINY_INIT
  /* memcheck cannot follow an execveat of a memfd; FSRUN_NO_TINY=1 makes fsrun do what it does
   * where the tiny program is missing (for the tests of that path) */
  if (!RUNNING_ON_VALGRIND && getenv("FSRUN_NO_TINY") == NULL)
    fd = make_image_fd();
#endif
  return fd;
}

static uint64_t kernel_sigmask(const sigset_t *set) {
  uint64_t mask = 0;
  for (int sig = 1; sig <= 64; sig++)
    if (sigismember(set, sig) == 1)
      mask |= 1ULL << (sig - 1);
  return mask;
}

static size_t strv_count(char *const v[]) {
  size_t n = 0;
  while (v[n] != NULL)
    n++;
  return n;
}

/* Appends the strings of v at *off in block, their offsets at ptrs[0..n), 0 after them. */
static void put_strings(char *block, size_t *off, uint64_t *ptrs, char *const v[]) {
  size_t i = 0;
  for (; v[i] != NULL; i++) {
    size_t len = strlen(v[i]) + 1;
    ptrs[i] = *off;
    memcpy(block + *off, v[i], len);
    *off += len;
  }
  ptrs[i] = 0;
}

/* The parameter block (tiny-params.h) in a memfd the exec keeps (no CLOEXEC). */
static int write_params(const char *exe, char *const argv[], char *const envp[],
                        const sigset_t *child_mask, bool terminal, int status_fd, pid_t child) {
  size_t argc = strv_count(argv), envc = strv_count(envp), size, off;
  struct tiny_init_params *p;
  cleanup_free char *block = NULL;
  int fd, r;

  size = sizeof(*p) + (argc + 1 + envc + 1) * sizeof(uint64_t) + strlen(exe) + 1;
  for (size_t i = 0; i < argc; i++)
    size += strlen(argv[i]) + 1;
  for (size_t i = 0; i < envc; i++)
    size += strlen(envp[i]) + 1;
  block = xmalloc0(size);
  p = (struct tiny_init_params *)block;
  *p = (struct tiny_init_params){.magic = TINY_INIT_MAGIC,
                                 .version = TINY_INIT_VERSION,
                                 .status_fd = status_fd,
                                 .status_msg_type = SYNC_EXIT_STATUS,
                                 .terminal = terminal,
                                 .argc = (uint32_t)argc,
                                 .envc = (uint32_t)envc,
                                 .child = (int32_t)child,
                                 .child_mask = kernel_sigmask(child_mask)};
  off = sizeof(*p) + (argc + 1 + envc + 1) * sizeof(uint64_t);
  p->exe = off;
  memcpy(block + off, exe, strlen(exe) + 1);
  off += strlen(exe) + 1;
  put_strings(block, &off, p->ptrs, argv);
  put_strings(block, &off, p->ptrs + argc + 1, envp);
  fd = memfd_create("fsrun-init-params", 0);
  if (fd < 0)
    return -1;
  r = safe_write_all(fd, block, size);
  if (r < 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

/* The status fd crosses the exec (the tiny init marks it CLOEXEC again before its fork). */
static int keep_across_exec(int fd, bool keep) {
  return fcntl(fd, F_SETFD, keep ? 0 : FD_CLOEXEC);
}

void tiny_init_exec(int image_fd, const char *exe, char *const argv[], char *const envp[],
                    const sigset_t *child_mask, bool terminal, int status_fd, pid_t child) {
  char fd_arg[16];
  char *init_argv[] = {"fsrun-init", fd_arg, NULL};
  char *init_envp[] = {NULL};
  int params, saved;

  if (image_fd < 0) {
    errno = ENOEXEC;
    return;
  }
  if (status_fd >= 0 && keep_across_exec(status_fd, true) < 0)
    return;
  params = write_params(exe, argv, envp, child_mask, terminal, status_fd, child);
  if (params >= 0) {
    snprintf(fd_arg, sizeof(fd_arg), "%d", params);
    syscall(SYS_execveat, image_fd, "", init_argv, init_envp, AT_EMPTY_PATH);
  }
  saved = errno;
  if (params >= 0)
    close(params);
  if (status_fd >= 0)
    (void)keep_across_exec(status_fd, false);
  errno = saved;
}
