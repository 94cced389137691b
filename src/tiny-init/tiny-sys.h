/* The system layer of the code fsrun runs without its C library (src/tiny-init): the tiny init's
 * program, and the sandbox's watchdog (tiny-watchdog.c, a clone sharing fsrun's memory). Raw x86-64
 * system calls: nothing here touches errno or any other process-wide state; a call returns the
 * kernel's value (-errno on failure). */
#ifndef FSRUN_TINY_SYS_H
#define FSRUN_TINY_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>

#define T_SEEK_END         2
#define T_PROT_RW          3 /* PROT_READ | PROT_WRITE */
#define T_MAP_PRIVATE      2
#define T_O_RDONLY         0
#define T_O_WRONLY         1
#define T_O_RDWR           2
#define T_O_NOFOLLOW       0400000
#define T_O_CLOEXEC        02000000
#define T_F_SETFD          2
#define T_FD_CLOEXEC       1
#define T_TIOCSPGRP        0x5410
#define T_SIG_SETMASK      2
#define T_WNOHANG          1
#define T_MSG_NOSIGNAL     0x4000
#define T_MSG_DONTWAIT     0x40
#define T_MSG_CMSG_CLOEXEC 0x40000000
#define T_SIGKILL          9
#define T_SIGTERM          15
#define T_ENOSYS           38
#define T_PR_SET_PDEATHSIG 1
#define T_SFD_NONBLOCK     04000    /* O_NONBLOCK */
#define T_SFD_CLOEXEC      02000000 /* O_CLOEXEC */
#define T_SIGCHLD          17
#define T_SIGCONT          18
#define T_ENOENT           2
#define T_EAGAIN           11
#define T_POLLIN           0x1
#define T_AT_EMPTY         0x1000 /* AT_EMPTY_PATH */
#define T_CLOCK_MONO       1
#define T_SCM_RIGHTS       1
#define T_SOL_SOCKET       1

static inline long sys6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long r;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return r;
}
#define SYS(n, a, b, c)        sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d)    sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SYS5(n, a, b, c, d, e) sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static inline _Noreturn void die(int status) {
  for (;;)
    SYS(__NR_exit_group, status, 0, 0);
}

/* "fsrun: WHAT[ \"ARG\"]: ERROR\n" on stderr, in one write; err is an errno value */
void report(const char *what, const char *arg, long err);
/* a decimal number that fits an int, or -1 */
static inline int parse_int(const char *s) {
  int v = 0;
  if (s == NULL || *s == '\0')
    return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > 100000000)
      return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

/* the tiny init (tiny-init.c) */
_Noreturn void tiny_init_main(long argc, char **argv);

#endif
