/* `fsrun sandbox`'s watchdog (sandbox-watchdog.h), without the C library: fsrun clones it sharing
 * its memory (CLONE_VM, no exec: no copy of fsrun's pages, none of the copy-on-write faults a fork
 * left fsrun with, no image to load) onto a stack of its own, in a session of its own with every
 * signal blocked, and it runs only this code: its own system calls, nothing of the C library's
 * state (errno included) is touched while fsrun runs beside it. It
 *  - kills the sandbox at the deadline (--timeout-ms), again every 100 ms in case its init was
 *    still being cloned, and when its cgroup has used the CPU budget (cpuLimit.maxMs), read every
 *    100 ms from the file the runtime sends it; and tells the runtime which ended it;
 *  - when the runtime dies (its pidfd is readable, or, where pidfd_open answers ENOSYS, its
 *    parent-death signal is pending; or its end of the socket closes): kills what it watched and,
 *    for a container, execs fsrun again as `fsrun-sandbox-cleanup [GLOBAL OPTIONS] ID`
 *    (sandbox_watchdog_cleanup), which deletes the container and the run's git dir. */
#include "tiny-params.h"
#include "tiny-sys.h"

struct watch {
  int armed, fired;
  int64_t deadline;
  struct tiny_watch_msg what;
  int init_pidfd; /* the container's init while it is being created, or -1 */
  int usage_fd;   /* the cgroup's CPU time ('u'), or -1 */
  int usage_v2;
};

/* the kernel's struct user_msghdr, iovec and cmsghdr (SCM_RIGHTS with one fd) */
struct t_iovec {
  void *base;
  size_t len;
};
struct t_msghdr {
  void *name;
  int namelen;
  struct t_iovec *iov;
  size_t iovlen;
  void *control;
  size_t controllen;
  unsigned flags;
};
struct t_cmsg_fd {
  size_t len;
  int level, type;
  int fd;
  int pad;
};

static int64_t now_ms(void) {
  struct {
    long sec, nsec;
  } ts = {0, 0};
  SYS(__NR_clock_gettime, T_CLOCK_MONO, &ts, 0);
  return (int64_t)ts.sec * 1000 + ts.nsec / 1000000;
}

static void close_fd(int *fd) {
  if (*fd >= 0)
    SYS(__NR_close, *fd, 0, 0);
  *fd = -1;
}

/* one message, and the fd it carries (-1 when none); 0 on EOF, < 0 when none waits */
static long receive(int sock, struct tiny_watch_msg *msg, int *fd) {
  struct t_cmsg_fd cmsg;
  struct t_iovec iov = {msg, sizeof(*msg)};
  struct t_msghdr mh = {0, 0, &iov, 1, &cmsg, sizeof(cmsg), 0};
  long n;
  cmsg.len = 0;
  *fd = -1;
  n = SYS(__NR_recvmsg, sock, &mh, T_MSG_DONTWAIT | T_MSG_CMSG_CLOEXEC);
  if (n > 0 && mh.controllen >= 20 && cmsg.level == T_SOL_SOCKET && cmsg.type == T_SCM_RIGHTS)
    *fd = cmsg.fd;
  return n;
}

/* Takes the messages waiting; 0 on EOF (the runtime is gone). */
static int read_messages(int sock, struct watch *w) {
  for (;;) {
    struct tiny_watch_msg msg;
    int fd;
    long n = receive(sock, &msg, &fd);
    if (n == 0)
      return 0;
    if (n != (long)sizeof(msg)) {
      close_fd(&fd);
      if (n < 0)
        return 1; /* nothing more for now */
      continue;
    }
    if (msg.kind == 'd') {
      w->armed = 0;
      close_fd(&w->init_pidfd);
    } else if (msg.kind == 'i') {
      /* create's own pidfd on the init (CLONE_PIDFD): it names the init from its clone on, so a
       * later kill never reaches a process that took its pid, and needs no pidfd_open */
      if (w->init_pidfd < 0) {
        w->init_pidfd = fd;
        fd = -1;
      }
    } else if (msg.kind == 'u') {
      close_fd(&w->usage_fd);
      w->usage_fd = fd;
      w->usage_v2 = msg.usage_v2;
      fd = -1;
    } else if (msg.kind == 'm') {
      /* the last reference: the namespace's teardown (its grace periods) runs here, in this
       * close, while the runtime syncs; the runtime reaps us before it exits */
      close_fd(&fd);
    } else if (msg.kind == 'c' || msg.kind == 'n') {
      msg.id[sizeof(msg.id) - 1] = '\0';
      w->what = msg;
      w->armed = 1;
      w->fired = 0;
      w->deadline = msg.deadline > 0 ? msg.deadline : TINY_WATCH_NO_DEADLINE;
    }
    close_fd(&fd);
  }
}

/* --- the CPU budget -----------------------------------------------------------------------------
 */

static uint64_t number_at(const char *s) {
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9')
    v = v * 10 + (uint64_t)(*s++ - '0');
  return v;
}

/* the cgroup's CPU time in ns; 0 when it cannot be read */
static uint64_t cpu_used_ns(const struct watch *w) {
  static const char key[] = "usage_usec ";
  char buf[4096];
  long n = SYS4(__NR_pread64, w->usage_fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  if (!w->usage_v2)
    return number_at(buf);
  for (char *line = buf; *line; line++) {
    size_t i = 0;
    while (key[i] && line[i] == key[i])
      i++;
    if (key[i] == '\0')
      return number_at(line + i) * 1000;
    while (*line && *line != '\n')
      line++;
    if (*line == '\0')
      break;
  }
  return 0;
}

static int has_budget(const struct watch *w) {
  return w->armed && w->what.kind == 'c' && w->what.cpu_budget_ms > 0;
}

static int budget_spent(const struct watch *w) {
  return has_budget(w) && w->usage_fd >= 0 &&
         cpu_used_ns(w) >= (uint64_t)w->what.cpu_budget_ms * 1000000;
}

/* --- the end of what is watched -----------------------------------------------------------------
 */

static void kill_watched(const struct watch *w) {
  if (w->init_pidfd >= 0)
    SYS4(__NR_pidfd_send_signal, w->init_pidfd, T_SIGKILL, 0, 0);
  if (w->armed && w->what.kind == 'n')
    SYS(__NR_kill, -w->what.pid, T_SIGKILL, 0);
}

#define MAX_CLEANUP_ARGS 16

/* The runtime is gone: what it watched goes too; a container is deleted by a fresh fsrun. */
static _Noreturn void orphaned(const struct watch *w, int exe_fd, char **cleanup, char **envp) {
  char *argv[MAX_CLEANUP_ARGS + 2];
  int n = 0;
  kill_watched(w);
  if (!w->armed || w->what.kind != 'c')
    die(0);
  for (; cleanup[n] != NULL && n < MAX_CLEANUP_ARGS; n++)
    argv[n] = cleanup[n];
  argv[n++] = (char *)w->what.id;
  argv[n] = NULL;
  SYS5(__NR_execveat, exe_fd, "", argv, envp, T_AT_EMPTY);
  die(0);
}

static void notify(int sock, char why) {
  SYS4(__NR_sendto, sock, &why, 1, T_MSG_DONTWAIT | T_MSG_NOSIGNAL);
}

/* The first write to a v1 cgroup.procs after a quiet spell waits for an RCU grace period (5-14 ms
 * of wall time on the development machine, no CPU): moving ourselves into the pids cgroup we are
 * already in lets that wait overlap the runtime's set-up instead of its move of the init. Given a
 * path only where the runtime will make such a move (procs_to_prime in sandbox-watchdog.c). */
static void prime_cgroup_migration(const char *path) {
  int fd;
  if (path == NULL || path[0] == '\0')
    return;
  fd = (int)SYS(__NR_open, path, T_O_WRONLY | T_O_NOFOLLOW | T_O_CLOEXEC, 0);
  if (fd >= 0) {
    SYS(__NR_write, fd, "0", 1);
    SYS(__NR_close, fd, 0, 0);
  }
}

/* --- the runtime's death ------------------------------------------------------------------------
 */

/* An fd that turns readable when the runtime dies, or -1 when it is already gone: a pidfd on it,
 * or, where pidfd_open answers ENOSYS (an older kernel, fsrun nested under a seccomp profile), a
 * signalfd for the parent-death signal (*pdeath set): every signal is blocked here, so that
 * signal stays pending for the signalfd. The signal is asked for before the parent check, so a
 * runtime that dies in between is seen by one or the other. It follows the thread that cloned
 * us: fsrun's main thread, which lives as long as fsrun does. */
static int watch_runtime(int parent, int *pdeath) {
  long fd = SYS(__NR_pidfd_open, parent, 0, 0);
  *pdeath = 0;
  if (fd == -T_ENOSYS) {
    uint64_t term = 1ULL << (T_SIGTERM - 1);
    *pdeath = 1;
    fd = SYS(__NR_prctl, T_PR_SET_PDEATHSIG, T_SIGTERM, 0) < 0
             ? -1
             : SYS4(__NR_signalfd4, -1, &term, sizeof(term), T_SFD_CLOEXEC | T_SFD_NONBLOCK);
  }
  if (fd < 0 || SYS(__NR_getppid, 0, 0, 0) != parent)
    return -1;
  return (int)fd;
}

/* The runtime's fd is readable: whether the runtime is gone. A pending SIGTERM is taken off (else
 * the signalfd stays readable and the loop spins) and counts only once the runtime is no longer
 * our parent: any process of our uid may send one. */
static int runtime_gone(int fd, int pdeath, int parent) {
  char info[128]; /* struct signalfd_siginfo */
  if (!pdeath)
    return 1;
  while (SYS(__NR_read, fd, info, sizeof(info)) == (long)sizeof(info))
    ;
  return SYS(__NR_getppid, 0, 0, 0) != parent;
}

static int next_timeout(const struct watch *w) {
  return tiny_watch_timeout(w->armed, w->fired, w->deadline, now_ms(), has_budget(w));
}

/* Closes every fd from 3 on but the two it keeps (a clone of fsrun got a copy of all of fsrun's).
 */
static void close_others(int a, int b) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  if (lo > 3)
    SYS(__NR_close_range, 3, lo - 1, 0);
  if (hi > lo + 1)
    SYS(__NR_close_range, lo + 1, hi - 1, 0);
  SYS(__NR_close_range, hi + 1, ~0U, 0);
}

_Noreturn void tiny_watchdog_run(const struct tiny_watchdog_args *a) {
  struct watch w = {.deadline = TINY_WATCH_NO_DEADLINE, .init_pidfd = -1, .usage_fd = -1};
  int parent_fd, null_fd, pdeath;

  /* a session of its own (a kill of fsrun's process group leaves it to clean up); already one
   * when spawned by fsrun's vfork child */
  SYS(__NR_setsid, 0, 0, 0);
  close_others(a->sock, a->exe_fd);
  /* neither reaches the cleanup's fsrun (execveat of an ELF binary takes a close-on-exec fd) */
  SYS(__NR_fcntl, a->sock, T_F_SETFD, T_FD_CLOEXEC);
  SYS(__NR_fcntl, a->exe_fd, T_F_SETFD, T_FD_CLOEXEC);
  /* nothing of the runtime's stdio is held: a caller waiting for EOF on fsrun's output must not
   * wait for us (and the cleanup's fsrun gets /dev/null) */
  null_fd = (int)SYS(__NR_open, "/dev/null", T_O_RDWR | T_O_CLOEXEC, 0);
  for (int fd = 0; fd < 3 && null_fd >= 0; fd++)
    SYS(__NR_dup3, null_fd, fd, 0);
  if (null_fd > 2)
    SYS(__NR_close, null_fd, 0, 0);
  parent_fd = watch_runtime(a->parent, &pdeath);
  if (parent_fd < 0)
    die(0); /* the runtime died before it could arm us: nothing to clean up */
  prime_cgroup_migration(a->prime);
  for (;;) {
    struct {
      int fd;
      short events, revents;
    } fds[2] = {{a->sock, T_POLLIN, 0}, {parent_fd, T_POLLIN, 0}};
    SYS(__NR_poll, fds, 2, next_timeout(&w));
    /* messages first: a disarm written just before the runtime exits is seen before its death */
    if (!read_messages(a->sock, &w) ||
        (fds[1].revents && runtime_gone(parent_fd, pdeath, a->parent)))
      orphaned(&w, a->exe_fd, a->cleanup, a->envp);
    if (w.armed && !w.fired && now_ms() >= w.deadline) {
      w.fired = 1;
      notify(a->sock, 't');
    }
    if (w.armed && !w.fired && budget_spent(&w)) {
      w.fired = 1;
      notify(a->sock, 'c');
    }
    if (w.armed && w.fired)
      kill_watched(&w);
  }
}
