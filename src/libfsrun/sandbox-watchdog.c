#include "sandbox-watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "sandbox-git.h"
#include "status.h"
#include "utils.h"

/* One message, written whole (smaller than PIPE_BUF, so never interleaved or split). */
struct watch_msg {
  char kind; /* 'c' a container, 'n' a native process group, 'i' the container's init, 'd' disarm */
  pid_t pgid;            /* 'n': the group; 'i': the init's pid */
  int64_t deadline;      /* CLOCK_MONOTONIC ms; 0: none */
  int64_t cpu_budget_ms; /* 'c': the CPU time the container's cgroup may use; 0: no budget */
  char id[1025];         /* container ids are at most 1024 characters (status_validate_id) */
};

/* the runtime's side */
static pid_t watchdog_pid = -1;
static int command_fd = -1; /* write end: the messages */
static int fired_fd = -1;   /* read end: one byte once the deadline passed */
static bool cpu_budget_spent;

/* --- the watchdog child ------------------------------------------------------------------------
 */

struct watch {
  bool armed;
  bool fired;
  int64_t deadline; /* INT64_MAX: none */
  struct watch_msg what;
  int init_pidfd; /* the container's init while it is being created (its state says pid 0) */
  struct fsrun_cgroup *cg; /* the container's, once its state names it (the CPU budget) */
};

/* How often the CPU time of a container with a budget is read: a command can overrun its budget
 * by up to this much CPU time per core. */
#define CPU_BUDGET_POLL_MS 100

/* The container's cgroup, from its state once create has written it. */
static void open_watched_cgroup(const struct fsrun_context *ctx, struct watch *w) {
  cleanup_error fsrun_error_t err = NULL;
  struct container_status st = {0};
  int dirfd;
  if (w->cg != NULL)
    return;
  dirfd = status_dir_open(ctx->state_root, w->what.id, &err);
  if (dirfd < 0)
    return;
  if (status_read(dirfd, &st, &err) == 0 && st.cgroup != NULL)
    (void)cgroup_open(st.cgroup, &w->cg, &err);
  status_clear(&st);
  close(dirfd);
}

static bool has_cpu_budget(const struct watch *w) {
  return w->armed && w->what.kind == 'c' && w->what.cpu_budget_ms > 0;
}

static bool cpu_budget_exceeded(const struct fsrun_context *ctx, struct watch *w) {
  uint64_t used_ns = 0;
  if (!has_cpu_budget(w))
    return false;
  open_watched_cgroup(ctx, w);
  return w->cg != NULL && cgroup_cpu_usage_ns(w->cg, &used_ns) &&
         used_ns >= (uint64_t)w->what.cpu_budget_ms * 1000000;
}

static void kill_watched(const struct fsrun_context *ctx, const struct watch *w) {
  if (w->init_pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, w->init_pidfd, SIGKILL, NULL, 0);
  if (w->what.kind == 'n') {
    kill(-w->what.pgid, SIGKILL);
  } else {
    cleanup_error fsrun_error_t kerr = NULL;
    (void)container_kill(ctx, w->what.id, "KILL", true, &kerr);
  }
}

/* fsrun is gone: what it watched goes too (the container deleted as `delete --force` would) */
static _Noreturn void orphaned(const struct fsrun_context *ctx, const struct watch *w) {
  if (w->init_pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, w->init_pidfd, SIGKILL, NULL, 0);
  if (w->armed && w->what.kind == 'n') {
    kill(-w->what.pgid, SIGKILL);
  } else if (w->armed) {
    cleanup_error fsrun_error_t derr = NULL;
    (void)container_delete(ctx, w->what.id, true, &derr);
    /* the run's git overlay dirs; nothing of them was applied to the repository */
    sandbox_git_remove_leftover(ctx->state_root, w->what.id);
  }
  _exit(0);
}

/* Reads the messages waiting; false on EOF (every write end closed: the runtime is gone). */
static bool read_messages(int fd, struct watch *w) {
  for (;;) {
    struct watch_msg msg;
    ssize_t n = read(fd, &msg, sizeof(msg));
    if (n == 0)
      return false;
    if (n != (ssize_t)sizeof(msg))
      return true; /* EAGAIN: nothing more for now */
    if (msg.kind == 'd') {
      w->armed = false;
      if (w->init_pidfd >= 0)
        close(w->init_pidfd);
      w->init_pidfd = -1;
      continue;
    }
    if (msg.kind == 'i') {
      /* pinned now, while the init is the runtime's unreaped child: a later kill never reaches
       * a process that took its pid */
      if (w->init_pidfd < 0)
        w->init_pidfd = (int)syscall(SYS_pidfd_open, msg.pgid, 0);
      continue;
    }
    msg.id[sizeof(msg.id) - 1] = '\0';
    w->what = msg;
    cgroup_free(w->cg);
    w->cg = NULL;
    w->armed = true;
    w->fired = false;
    w->deadline = msg.deadline > 0 ? msg.deadline : INT64_MAX;
  }
}

/* The runtime's first write to a v1 cgroup.procs (the sandbox's init into its cgroups) waits for
 * an RCU grace period, 11-14 ms of wall time here, no CPU: the writer side of the kernel's
 * cgroup_threadgroup_rwsem, which is cheap again for one more grace period after each writer. The
 * watchdog, running beside the runtime from its start, moves itself into the pids cgroup it is
 * already in (a no-op) so that wait overlaps the runtime's set-up. Best effort: skipped without a
 * v1 pids hierarchy (wherever mounted) or write access to its cgroup.procs (an ordinary user). */
static void prime_cgroup_migration(void) {
  cleanup_free char *own = cgroup_v1_own_dir("pids");
  cleanup_free char *procs = own != NULL ? xasprintf("%s/cgroup.procs", own) : NULL;
  cleanup_close int fd = procs != NULL ? open(procs, O_WRONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (fd >= 0)
    (void)!write(fd, "0", 1); /* 0: the writer itself */
}

static _Noreturn void watchdog_main(const struct fsrun_context *ctx, pid_t parent, int command_rd,
                                    int fired_wr) {
  struct watch w = {.deadline = INT64_MAX, .init_pidfd = -1};
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
  prime_cgroup_migration();
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sfd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (sfd < 0 || getppid() != parent)
    _exit(0); /* the runtime died before it could arm us: nothing to clean up */
  for (;;) {
    struct pollfd fds[2] = {{.fd = command_rd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    int timeout = -1;
    if (w.armed && w.fired) {
      timeout = 100;
    } else if (w.armed && w.deadline != INT64_MAX) {
      int64_t left = w.deadline - monotonic_ms();
      timeout = left < 0 ? 0 : left > 3600 * 1000 ? 3600 * 1000 : (int)left;
    }
    if (!w.fired && has_cpu_budget(&w) && (timeout < 0 || timeout > CPU_BUDGET_POLL_MS))
      timeout = CPU_BUDGET_POLL_MS;
    (void)poll(fds, 2, timeout);
    /* messages first: a disarm written just before the runtime exits is seen before its death */
    if (!read_messages(command_rd, &w))
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
      (void)!write(fired_wr, "t", 1);
    }
    if (w.armed && !w.fired && cpu_budget_exceeded(ctx, &w)) {
      w.fired = true;
      (void)!write(fired_wr, "c", 1);
    }
    if (w.armed && w.fired)
      kill_watched(ctx, &w);
  }
}

/* --- the runtime's side ------------------------------------------------------------------------
 */

void sandbox_watchdog_fork(const struct fsrun_context *ctx) {
  int command[2], fired[2];
  sigset_t term, old;
  pid_t parent = getpid(), pid;

  if (pipe2(command, O_CLOEXEC) < 0)
    return;
  if (pipe2(fired, O_CLOEXEC | O_NONBLOCK) < 0) {
    close(command[0]), close(command[1]);
    return;
  }
  /* blocked from before the fork: the child takes SIGTERM (its parent-death signal) from a
   * signalfd */
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &old);
  pid = fork();
  if (pid == 0) {
    close(command[1]);
    close(fired[0]);
    (void)fcntl(command[0], F_SETFL, O_NONBLOCK);
    watchdog_main(ctx, parent, command[0], fired[1]);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  close(command[0]);
  close(fired[1]);
  if (pid < 0) {
    close(command[1]);
    close(fired[0]);
    return;
  }
  watchdog_pid = pid;
  command_fd = command[1];
  fired_fd = fired[0];
}

static int send_message(const struct watch_msg *msg, fsrun_error_t *err) {
  if (watchdog_pid < 0)
    return fsrun_error_make(err, 0, "sandbox: no watchdog (it could not be forked)");
  if (write(command_fd, msg, sizeof(*msg)) != (ssize_t)sizeof(*msg))
    return fsrun_error_errno(err, "sandbox: arm the watchdog");
  return 0;
}

int sandbox_watchdog_arm_container(const char *id, int64_t deadline, fsrun_error_t *err) {
  return sandbox_watchdog_arm_container_budget(id, deadline, 0, err);
}

int sandbox_watchdog_arm_container_budget(const char *id, int64_t deadline, int64_t cpu_budget_ms,
                                          fsrun_error_t *err) {
  struct watch_msg msg = {.kind = 'c', .deadline = deadline, .cpu_budget_ms = cpu_budget_ms};
  if (strlen(id) >= sizeof(msg.id))
    return fsrun_error_make(err, 0, "sandbox: container id `%s` is too long", id);
  strcpy(msg.id, id);
  return send_message(&msg, err);
}

int sandbox_watchdog_arm_native(pid_t pgid, int64_t deadline, fsrun_error_t *err) {
  struct watch_msg msg = {.kind = 'n', .pgid = pgid, .deadline = deadline};
  return send_message(&msg, err);
}

void sandbox_watchdog_watch_init(pid_t pid) {
  struct watch_msg msg = {.kind = 'i', .pgid = pid};
  cleanup_error fsrun_error_t err = NULL;
  (void)send_message(&msg, &err);
}

bool sandbox_watchdog_disarm(void) {
  struct watch_msg msg = {.kind = 'd'};
  char byte;
  bool fired = false;
  if (watchdog_pid < 0)
    return false;
  (void)!write(command_fd, &msg, sizeof(msg));
  cpu_budget_spent = false;
  while (read(fired_fd, &byte, 1) == 1) {
    if (byte == 'c')
      cpu_budget_spent = true;
    else
      fired = true;
  }
  return fired;
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
  close(command_fd);
  close(fired_fd);
  watchdog_pid = command_fd = fired_fd = -1;
}
