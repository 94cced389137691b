#include "sandbox-watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "clone.h"
#include "container.h"
#include "exec-git.h"
#include "sandbox-git.h"
#include "sandbox-probe.h"
#include "status-kept.h"
#include "sync.h"
#include "tiny-init.h"
#include "tiny-params.h"
#include "utils.h"

/* the runtime's side */
static pid_t watchdog_pid = -1;
static bool watchdog_forked; /* it shares our pages copy-on-write, not our memory */
static int sock_fd = -1;     /* ours: the messages out, the watchdog's one-byte answers in */
static bool cpu_budget_spent;

/* --- the forked watchdog: where the tiny program is not there (tiny-watchdog.c is the other) -- */

struct watch {
  bool armed;
  bool fired;
  int64_t deadline; /* TINY_WATCH_NO_DEADLINE: none */
  struct tiny_watch_msg what;
  int init_pidfd; /* the container's init while it is being created (its state says pid 0) */
  int usage_fd;   /* the cgroup's CPU time (the budget), or -1 */
  bool usage_v2;
};

static bool has_cpu_budget(const struct watch *w) {
  return w->armed && w->what.kind == 'c' && w->what.cpu_budget_ms > 0;
}

static bool cpu_budget_exceeded(const struct watch *w) {
  uint64_t used_ns = 0;
  return has_cpu_budget(w) && w->usage_fd >= 0 &&
         cgroup_cpu_usage_read(w->usage_fd, w->usage_v2, &used_ns) &&
         used_ns >= (uint64_t)w->what.cpu_budget_ms * 1000000;
}

static void kill_watched(const struct fsrun_context *ctx, const struct watch *w) {
  if (w->init_pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, w->init_pidfd, SIGKILL, NULL, 0);
  if (w->what.kind == 'n') {
    kill(-w->what.pid, SIGKILL);
  } else {
    cleanup_error fsrun_error_t kerr = NULL;
    (void)container_kill(ctx, w->what.id, "KILL", true, &kerr);
  }
}

/* fsrun is gone: what it watched goes too (the container deleted as `delete --force` would) */
static _Noreturn void orphaned(const struct fsrun_context *ctx, const struct watch *w) {
  if (w->init_pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, w->init_pidfd, SIGKILL, NULL, 0);
  if (w->armed && w->what.kind == 'n')
    kill(-w->what.pid, SIGKILL);
  else if (w->armed)
    (void)sandbox_watchdog_cleanup(ctx, w->what.id);
  _exit(0);
}

/* Takes the messages waiting; false on EOF (the runtime is gone). */
static bool read_messages(int sock, struct watch *w) {
  for (;;) {
    struct tiny_watch_msg msg;
    union {
      char buf[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = &msg, .iov_len = sizeof(msg)};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof(control.buf)};
    ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    int fd = -1;
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    if (n == 0)
      return false;
    if (n != (ssize_t)sizeof(msg)) {
      if (fd >= 0)
        close(fd);
      if (n < 0)
        return true; /* EAGAIN: nothing more for now */
      continue;
    }
    if (msg.kind == 'd') {
      w->armed = false;
      if (w->init_pidfd >= 0)
        close(w->init_pidfd);
      w->init_pidfd = -1;
    } else if (msg.kind == 'i') {
      /* create's own pidfd on the init (CLONE_PIDFD), as the tiny watchdog takes it */
      if (w->init_pidfd < 0) {
        w->init_pidfd = fd;
        fd = -1;
      }
    } else if (msg.kind == 'm') {
      close(fd); /* as the tiny watchdog: the mount namespace's teardown, here */
      fd = -1;
    } else if (msg.kind == 'u') {
      if (w->usage_fd >= 0)
        close(w->usage_fd);
      w->usage_fd = fd;
      w->usage_v2 = msg.usage_v2;
      fd = -1;
    } else {
      msg.id[sizeof(msg.id) - 1] = '\0';
      w->what = msg;
      w->armed = true;
      w->fired = false;
      w->deadline = msg.deadline > 0 ? msg.deadline : TINY_WATCH_NO_DEADLINE;
    }
    if (fd >= 0)
      close(fd);
  }
}

static int next_timeout(const struct watch *w) {
  return tiny_watch_timeout(w->armed, w->fired, w->deadline, monotonic_ms(), has_cpu_budget(w));
}

static _Noreturn void forked_main(const struct fsrun_context *ctx, pid_t parent, int sock,
                                  const char *prime) {
  struct watch w = {.deadline = TINY_WATCH_NO_DEADLINE, .init_pidfd = -1, .usage_fd = -1};
  sigset_t term;
  int sfd, null_fd;

  /* nothing of the runtime's stdio is held: a caller waiting for EOF on fsrun's output must not
   * wait for us */
  null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    if (null_fd > STDERR_FILENO)
      close(null_fd);
  }
  /* a session of its own: a kill of fsrun's process group (timeout(1), a caller ending the group)
   * leaves the watchdog to clean up after fsrun */
  (void)setsid();
  if (prime != NULL) {
    cleanup_close int fd = open(prime, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
      (void)!write(fd, "0", 1);
  }
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sfd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (sfd < 0 || getppid() != parent)
    _exit(0); /* the runtime died before it could arm us: nothing to clean up */
  for (;;) {
    struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    (void)poll(fds, 2, next_timeout(&w));
    /* messages first: a disarm written just before the runtime exits is seen before its death */
    if (!read_messages(sock, &w))
      orphaned(ctx, &w);
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        ;
      if (getppid() != parent)
        orphaned(ctx, &w);
    }
    if (w.armed && !w.fired && monotonic_ms() >= w.deadline) {
      w.fired = true;
      (void)!send(sock, "t", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (w.armed && !w.fired && cpu_budget_exceeded(&w)) {
      w.fired = true;
      (void)!send(sock, "c", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (w.armed && w.fired)
      kill_watched(ctx, &w);
  }
}

/* blocked from before the fork: the child takes SIGTERM (its parent-death signal) from a signalfd
 */
static pid_t fork_watchdog(const struct fsrun_context *ctx, int sock, const char *prime) {
  sigset_t term, old;
  pid_t parent = getpid(), pid;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &old);
  pid = fork();
  if (pid == 0)
    forked_main(ctx, parent, sock, prime);
  sigprocmask(SIG_SETMASK, &old, NULL);
  /* vfork returns once the child has exec'd or exited: an exited one failed (the caller forks) */
  if (pid > 0 && waitpid(pid, NULL, WNOHANG) == pid)
    pid = -1;
  return pid;
}

/* --- the tiny program's watchdog -------------------------------------------------------------- */

#if defined(HAVE_TINY_INIT) && !defined(__SANITIZE_ADDRESS__)
/* The cleanup's argv but the id: fsrun's global options as this run has them. */
static int cleanup_argv(const struct fsrun_context *ctx, char **argv, int at) {
  argv[at++] = SANDBOX_WATCHDOG_CLEANUP;
  argv[at++] = "--root";
  argv[at++] = (char *)ctx->state_root;
  if (ctx->systemd_cgroup)
    argv[at++] = "--systemd-cgroup";
  if (ctx->rootless != ROOTLESS_AUTO) {
    argv[at++] = "--rootless";
    argv[at++] = ctx->rootless == ROOTLESS_TRUE ? "true" : "false";
  }
  if (ctx->log_path != NULL) {
    argv[at++] = "--log";
    argv[at++] = (char *)ctx->log_path;
  }
  argv[at] = NULL;
  return at;
}

/* The watchdog's own memory when cloned: its stack, and at the bottom what it is given (a copy:
 * the runtime may free or reuse its own). Never unmapped: the watchdog may outlive the runtime. */
#define CLONED_REGION (64 * 1024)

struct cloned_start {
  struct tiny_watchdog_args args;
  char *cleanup[20];
  char strings[8192];
};

static int cloned_main(void *arg) {
  tiny_watchdog_run(&((struct cloned_start *)arg)->args);
}

static char *copy_into(struct cloned_start *st, size_t *used, const char *s) {
  size_t n = strlen(s) + 1;
  char *at = st->strings + *used;
  if (*used + n > sizeof(st->strings))
    return NULL;
  memcpy(at, s, n);
  *used += n;
  return at;
}

/* A clone sharing our memory, without an exec: no copy of our pages, no copy-on-write faults
 * afterwards, and no image to load. It runs tiny-watchdog.c only: system calls of its own (no C
 * library, so nothing of ours it could disturb: not even errno), on a stack of its own. */
static pid_t clone_watchdog(const struct fsrun_context *ctx, int sock, const char *prime) {
  extern char **environ;
  char *argv[20];
  cleanup_close int exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
  struct cloned_start *st;
  size_t used = 0;
  sigset_t all, old;
  pid_t pid;
  int n;

  if (exe < 0)
    return -1;
  st = mmap(NULL, CLONED_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
            -1, 0);
  if (st == MAP_FAILED)
    return -1;
  n = cleanup_argv(ctx, argv, 0);
  for (int i = 0; i < n; i++)
    if ((st->cleanup[i] = copy_into(st, &used, argv[i])) == NULL)
      return -1;
  st->cleanup[n] = NULL;
  st->args = (struct tiny_watchdog_args){.sock = sock,
                                         .exe_fd = exe,
                                         .parent = getpid(),
                                         .prime = copy_into(st, &used, prime ? prime : ""),
                                         .cleanup = st->cleanup,
                                         .envp = environ};
  /* every signal blocked in the watchdog for good (only SIGKILL ends it) */
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  pid = clone(cloned_main, (char *)st + CLONED_REGION, CLONE_VM | SIGCHLD, st);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return pid;
}
#else
static pid_t clone_watchdog(const struct fsrun_context *ctx, int sock, const char *prime) {
  (void)ctx, (void)sock, (void)prime;
  return -1;
}
#endif

/* The pids cgroup.procs the watchdog primes, only where the runtime itself will move the init
 * through a cgroup.procs (clone3 refused: no CLONE_INTO_CGROUP on a hybrid host). Elsewhere no
 * process of the run takes the kernel's global threadgroup lock (the init joins its v1 cgroups
 * through `tasks`), and a prime would make one: its writer holds cgroup_mutex through a whole RCU
 * grace period, which the runtime's mkdirs and its clone into the cgroup then wait for. As root
 * only: an ordinary user cannot write it. */
static char *procs_to_prime(void) {
  cleanup_free char *own = geteuid() == 0 && clone3_refused() ? cgroup_v1_own_dir("pids") : NULL;
  return own != NULL ? xasprintf("%s/cgroup.procs", own) : NULL;
}

/* --- the runtime's side ------------------------------------------------------------------------
 */

void sandbox_watchdog_fork(const struct fsrun_context *ctx) {
  cleanup_free char *prime = procs_to_prime();
  int image = tiny_init_image_fd();
  int sv[2];
  pid_t pid = -1;

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return;
  if (image >= 0)
    pid = clone_watchdog(ctx, sv[1], prime);
  if (pid < 0)
    watchdog_forked = (pid = fork_watchdog(ctx, sv[1], prime)) > 0;
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return;
  }
  watchdog_pid = pid;
  sock_fd = sv[0];
}

static int send_message(const struct tiny_watch_msg *msg, int fd, fsrun_error_t *err) {
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof(*msg)};
  int r;
  if (watchdog_pid < 0)
    return fsrun_error_make(err, 0, "sandbox: no watchdog (it could not be started)");
  r = sync_sendv(sock_fd, &iov, 1, fd);
  if (r < 0)
    return fsrun_error_make(err, -r, "sandbox: arm the watchdog");
  return 0;
}

int sandbox_watchdog_arm_container(const char *id, int64_t deadline, fsrun_error_t *err) {
  return sandbox_watchdog_arm_container_budget(id, deadline, 0, err);
}

int sandbox_watchdog_arm_container_budget(const char *id, int64_t deadline, int64_t cpu_budget_ms,
                                          fsrun_error_t *err) {
  struct tiny_watch_msg msg = {.kind = 'c', .deadline = deadline, .cpu_budget_ms = cpu_budget_ms};
  if (strlen(id) >= sizeof(msg.id))
    return fsrun_error_make(err, 0, "sandbox: container id `%s` is too long", id);
  strcpy(msg.id, id);
  return send_message(&msg, -1, err);
}

int sandbox_watchdog_arm_native(pid_t pgid, int64_t deadline, fsrun_error_t *err) {
  struct tiny_watch_msg msg = {.kind = 'n', .pid = pgid, .deadline = deadline};
  return send_message(&msg, -1, err);
}

void sandbox_watchdog_watch_init(int init_pidfd) {
  struct tiny_watch_msg msg = {.kind = 'i'};
  cleanup_error fsrun_error_t err = NULL;
  (void)send_message(&msg, init_pidfd, &err);
}

void sandbox_watchdog_watch_cgroup(const struct fsrun_cgroup *cg) {
  struct tiny_watch_msg msg = {.kind = 'u'};
  cleanup_error fsrun_error_t err = NULL;
  bool v2 = false;
  cleanup_close int fd = cg != NULL ? cgroup_cpu_usage_open(cg, &v2) : -1;
  msg.usage_v2 = v2;
  if (fd >= 0)
    (void)send_message(&msg, fd, &err);
}

void sandbox_watchdog_drop_mntns(int *mntns_fd) {
  struct tiny_watch_msg msg = {.kind = 'm'};
  cleanup_error fsrun_error_t err = NULL;
  if (*mntns_fd < 0)
    return;
  /* in flight, the fd keeps the namespace until the watchdog takes it; unsent, our close below
   * is the last and tears it down here, as the init's exit would have */
  (void)send_message(&msg, *mntns_fd, &err);
  close(*mntns_fd);
  *mntns_fd = -1;
}

/* the watchdog's answers so far: true when the deadline fired (cpu_budget_spent: the budget) */
static bool take_answers(void) {
  char byte;
  bool fired = false;
  cpu_budget_spent = false;
  while (recv(sock_fd, &byte, 1, MSG_DONTWAIT) == 1) {
    if (byte == 'c')
      cpu_budget_spent = true;
    else
      fired = true;
  }
  return fired;
}

bool sandbox_watchdog_disarm(void) {
  struct tiny_watch_msg msg = {.kind = 'd'};
  cleanup_error fsrun_error_t err = NULL;
  if (watchdog_pid < 0)
    return false;
  (void)send_message(&msg, -1, &err);
  return take_answers();
}

bool sandbox_watchdog_cleanup_only(const char *id) {
  cleanup_error fsrun_error_t err = NULL;
  if (watchdog_pid < 0)
    return false;
  /* one message replaces the deadline: no instant in which a killed fsrun leaves it disarmed */
  (void)sandbox_watchdog_arm_container(id, 0, &err);
  return take_answers();
}

bool sandbox_watchdog_forked(void) {
  return watchdog_forked;
}

bool sandbox_watchdog_cpu_budget_spent(void) {
  return cpu_budget_spent;
}

void sandbox_watchdog_end(void) {
  if (watchdog_pid < 0)
    return;
  kill(watchdog_pid, SIGKILL);
  while (waitpid(watchdog_pid, NULL, 0) < 0 && errno == EINTR)
    ;
  close(sock_fd);
  watchdog_pid = sock_fd = -1;
}

int sandbox_watchdog_cleanup(const struct fsrun_context *ctx, const char *id) {
  cleanup_error fsrun_error_t err = NULL;
  int r;
  /* a killed `fsrun exec`'s per-run git dir: no container to delete */
  if (exec_git_watch_cleanup(ctx->state_root, id))
    return 0;
  r = container_delete(ctx, id, true, &err);
  sandbox_run_leftovers_remove(ctx, id);
  return r;
}

void sandbox_run_leftovers_remove(const struct fsrun_context *ctx, const char *id) {
  /* killed between a kept state dir's claim and its rename to the id (status-kept.h) */
  status_kept_remove_hidden(ctx, id);
  /* the run's git overlay dirs; nothing of them was applied to the repository */
  sandbox_git_remove_leftover(ctx->state_root, id);
  /* a probe of the host it was killed during (fallback-native) */
  sandbox_probe_remove_leftover(ctx, id);
}
