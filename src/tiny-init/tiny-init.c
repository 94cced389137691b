/* fsrun-init: what a container's pid 1 becomes when fsrun's init is asked for (run.fsrun.init,
 * and every `fsrun sandbox`): it starts the process as its child, forwards signals to it, reaps
 * orphans and exits with the child's status, sending its wait status to the runtime first.
 *
 * A role of the tiny program (tiny-main.c), without a C library, embedded in fsrun and exec'd from
 * a sealed memfd (tiny-init.h), instead of the init staying a clone of the runtime:
 *  - pid 1 is visible to the container for the process's whole life; as a clone it was the
 *    runtime's memory (the caller's whole environment in /proc/1/environ, the config in its heap)
 *    and the runtime's executable (the reason the runtime had to re-execute itself from a sealed
 *    image first: docs/process-model.md);
 *  - a few pages to load instead of a 3 MB image, no C library start-up (on the development VM a
 *    static glibc program's start-up alone costs more than 1 ms of CPU).
 * Its input is a block the init wrote (tiny-params.h), at the fd named by argv[1]. */
#include <linux/prctl.h>

#include "tiny-params.h"
#include "tiny-sys.h"

/* --- the parameters --------------------------------------------------------------------------- */

/* Maps the block privately and turns its offsets into pointers; NULL when it is not one. */
static struct tiny_init_params *load_params(int fd) {
  long size = SYS(__NR_lseek, fd, 0, T_SEEK_END);
  struct tiny_init_params *p;
  uint64_t n;
  if (size < (long)sizeof(*p))
    return NULL;
  p = (struct tiny_init_params *)sys6(__NR_mmap, 0, size, T_PROT_RW, T_MAP_PRIVATE, fd, 0);
  SYS(__NR_close, fd, 0, 0);
  if ((unsigned long)p > -4096UL || p->magic != TINY_INIT_MAGIC ||
      p->version != TINY_INIT_VERSION || ((char *)p)[size - 1] != '\0')
    return NULL;
  n = (uint64_t)p->argc + 1 + p->envc + 1;
  if (p->argc == 0 || sizeof(*p) + n * sizeof(uint64_t) > (uint64_t)size ||
      p->exe >= (uint64_t)size)
    return NULL;
  for (uint64_t i = 0; i < n; i++) {
    if (p->ptrs[i] >= (uint64_t)size)
      return NULL;
    if (p->ptrs[i] != 0)
      p->ptrs[i] += (uint64_t)(uintptr_t)p;
  }
  p->exe += (uint64_t)(uintptr_t)p;
  return p;
}

/* --- the process and the reaping ---------------------------------------------------------------
 */

static _Noreturn void start_child(const struct tiny_init_params *p) {
  char **argv = (char **)p->ptrs;
  char **envp = argv + p->argc + 1;
  const char *exe = (const char *)(uintptr_t)p->exe;
  long r;
  /* its own process group: signals the terminal sends reach the process once, not also pid 1
   * (which would forward them a second time); every signal is still blocked here */
  SYS(__NR_setpgid, 0, 0, 0);
  if (p->terminal) {
    int self = (int)SYS(__NR_getpid, 0, 0, 0);
    SYS(__NR_ioctl, 0, T_TIOCSPGRP, &self);
  }
  SYS4(__NR_rt_sigprocmask, T_SIG_SETMASK, &p->child_mask, 0, sizeof(p->child_mask));
  r = SYS(__NR_execve, exe, argv, envp);
  report("exec:", exe, -r);
  die(-r == T_ENOENT ? 127 : 126);
}

static int status_of(int wstatus) {
  if ((wstatus & 0x7f) == 0)
    return (wstatus >> 8) & 0xff;
  return 128 + (wstatus & 0x7f);
}

static _Noreturn void exit_with(const struct tiny_init_params *p, int wstatus) {
  if (p->status_fd >= 0) {
    /* one sync message (sync.c): its header, then the wait status */
    int32_t msg[3] = {(int32_t)p->status_msg_type, 0, wstatus};
    SYS4(__NR_sendto, p->status_fd, msg, sizeof(msg), T_MSG_NOSIGNAL);
  }
  die(status_of(wstatus));
}

static _Noreturn void reap_until(const struct tiny_init_params *p, int child) {
  uint64_t all = ~0ULL;
  unsigned char info[128];
  for (;;) {
    long sig = SYS4(__NR_rt_sigtimedwait, &all, info, 0, sizeof(all));
    if (sig < 0)
      continue;
    if (sig != T_SIGCHLD) {
      /* to its process group, as a terminal would */
      if (SYS(__NR_kill, -child, sig, 0) < 0)
        SYS(__NR_kill, child, sig, 0);
      continue;
    }
    for (;;) {
      int wstatus = 0;
      long pid = SYS4(__NR_wait4, -1, &wstatus, T_WNOHANG, 0);
      if (pid <= 0)
        break;
      if (pid == child)
        exit_with(p, wstatus);
    }
  }
}

/* The process: forked here, or (create's `start`) forked by fsrun's init before its exec of us,
 * held until a SIGCONT: it holds the exec fifo until its execve (`start` then returns), so it is
 * let go only once we are dumpable, and `exec` right after `start` can join pid 1. We never hold
 * the fifo: dumpable, we are open to the container's processes, one of which could take it
 * (pidfd_getfd) and keep `start` waiting. */
static int start_process(const struct tiny_init_params *p) {
  long child = p->child;
  if (child <= 0)
    child = SYS(__NR_fork, 0, 0, 0);
  if (child == 0)
    start_child(p);
  if (child < 0) {
    report("annotations[\"run.fsrun.init\"]: fork the process", NULL, -child);
    die(1);
  }
  /* `exec` joins the container through pid 1 (setns on its pidfd), which the kernel allows only
   * to whoever may ptrace-read it; it is all inside now and holds nothing of the runtime's */
  SYS(__NR_prctl, PR_SET_DUMPABLE, 1, 0);
  if (p->child > 0)
    SYS(__NR_kill, child, T_SIGCONT, 0);
  return (int)child;
}

_Noreturn void tiny_init_main(long argc, char **argv) {
  struct tiny_init_params *p;

  SYS(__NR_prctl, PR_SET_NAME, "fsrun-init", 0);
  p = argc == 2 ? load_params(parse_int(argv[1])) : NULL;
  if (p == NULL) {
    report("init: its parameters", NULL, 22);
    die(1);
  }
  /* /proc/1/cmdline says fsrun-init, not the fd */
  for (char *c = argv[1]; *c; c++)
    *c = '\0';
  if (p->status_fd >= 0)
    SYS(__NR_fcntl, p->status_fd, T_F_SETFD, T_FD_CLOEXEC); /* the process never holds it */
  reap_until(p, start_process(p));
}
