/* `fsrun sandbox`: a one-shot run of a command in the bundle sandbox.c builds, with its output
 * passed through or captured (--json), a timeout that kills the whole sandbox, the audit log, and
 * the native fallback. The container is run by container_run() like `fsrun run` does; what is
 * around it is done by two helpers, so that the runtime's own wait loop stays untouched:
 *  - a watchdog child (sandbox-watchdog.c) that kills every process of the container at the
 *    deadline (--timeout-ms), and cleans up after a killed fsrun;
 *  - a reader thread (--json) that drains the stdout/stderr pipes into memfds, up to --max-buffer
 *    each. A thread, not a child: a fork would cost its own start-up and a copy-on-write fault on
 *    every page the runtime writes afterwards. It is started only once the container's process
 *    runs (container_run_opts.on_started), never before the init is cloned: the init is cloned
 *    with a bare clone3, and a child of a process that has another thread inherits libc's view of
 *    that thread. Its setresgid then waited forever for a reader that had not started running
 *    (glibc's setxid broadcast, seen in 27 of 200 loaded runs as an ordinary user), and any lock
 *    the thread held (malloc, stdio) would stay held in the child. Until the reader starts, the
 *    pipes hold what the command writes (the command only starts at the end of the set-up). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "caller-output.h"
#include "cgroup.h"
#include "container.h"
#include "file-time.h"
#include "json-out.h"
#include "log.h"
#include "pidfd-compat.h"
#include "prefault.h"
#include "sandbox-limits.h"
#include "sandbox-net.h"
#include "sandbox-paths.h"
#include "sandbox-probe.h"
#include "sandbox-spelling.h"
#include "sandbox-checkouts.h"
#include "sandbox-devices.h"
#include "sandbox-kernel-paths.h"
#include "sandbox-state-root.h"
#include "sandbox-git.h"
#include "sandbox-id.h"
#include "sandbox-watchdog.h"
#include "utils.h"

/* --- time, ids, files ----------------------------------------------------------------------- */

/* the sandbox-id.h id, its random part from getrandom */
static char *make_container_id(const char *task_id, const char *run_id) {
  uint32_t rnd = 0;
  if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
    rnd = (uint32_t)getpid() ^ (uint32_t)monotonic_ms();
  return sandbox_container_id(task_id, run_id, rnd);
}

static char *read_memfd(int fd, size_t *len) {
  struct stat st;
  char *buf;
  size_t n = 0;
  *len = 0;
  if (fd < 0 || fstat(fd, &st) < 0)
    return xstrdup("");
  buf = xmalloc0((size_t)st.st_size + 1);
  while (n < (size_t)st.st_size) {
    ssize_t r = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* --- the result ----------------------------------------------------------------------------- */

struct run_result {
  const char *backend; /* "fsrun" | "native" */
  int exit_code;       /* fsrun's exit status: 128+N for signal N */
  int signal;          /* the signal that ended the command (its wait status), 0 when it exited */
  bool timed_out;
  int truncated; /* bit 0 stdout, bit 1 stderr */
  int64_t duration_ms;
  char *error;              /* set-up failure under fail-hard */
  char **tamper;            /* the nested git dirs / gitlinks the run made */
  char **host_git_args;     /* the `-c` options that keep the host's git from running them */
  char **discarded;         /* the common-dir paths it wrote outside the git allowlist */
  bool oom_killed;          /* the OOM killer killed a process of the sandbox's cgroup */
  bool cpu_budget_exceeded; /* cpuLimit.maxMs spent by the whole command: ended by the watchdog */
  bool in_container_setup;  /* the set-up got as far as the container's own (container_run) */
  /* just after every file time set before the run (its inputs read): a one-shot run's tamper
   * cutoff (sandbox_git_tamper_cutoff) */
  struct timespec began;
  struct sandbox_limits limits;
  struct sandbox_net net; /* the egress helper: killed once the init is reaped, reaped last */
  int mntns_fd; /* the container's mount namespace while the command runs (mntns_hold), or -1 */
};

/* `,"oomKilled":...,"cpuBudgetExceeded":...,"limitsNotEnforced":[...]`: the result's and the
 * sandbox:run event's */
static void sb_limits_outcome(struct strbuf *b, const struct run_result *r) {
  sb_printf(b, ",\"oomKilled\":%s,\"cpuBudgetExceeded\":%s,", r->oom_killed ? "true" : "false",
            r->cpu_budget_exceeded ? "true" : "false");
  sandbox_limits_gaps_json(b, &r->limits);
}

/* "exitCode" and "signal": a number and null when the command exited, null and the signal's name
 * when a signal ended it (SIGKILL on timeout), never a guess from a status above 128 */
static void sb_exit_fields(struct strbuf *b, const struct run_result *r) {
  int sig = r->timed_out || r->cpu_budget_exceeded ? SIGKILL : r->error != NULL ? 0 : r->signal;
  if (sig > 0) {
    const char *name = sigabbrev_np(sig);
    if (name != NULL)
      sb_printf(b, ",\"exitCode\":null,\"signal\":\"SIG%s\"", name);
    else
      sb_printf(b, ",\"exitCode\":null,\"signal\":\"SIG%d\"", sig);
  } else {
    sb_printf(b, ",\"exitCode\":%d,\"signal\":null", r->exit_code);
  }
}

/* --- the audit log -------------------------------------------------------------------------- */

struct audit {
  int fd; /* -1: no audit log */
  const char *task_id, *run_id;
  const char *policy_hash;
};

/* One event's line. r: the run's result, for sandbox:run (NULL: the other events). */
static char *audit_line(const struct audit *a, const char *event, const char *backend,
                        const char *reason, const struct run_result *r) {
  struct strbuf b = {0};
  cleanup_free char *time = rfc3339_now();
  sb_puts(&b, "{\"event\":");
  sb_json_string(&b, event, strlen(event));
  sb_json_key_string(&b, "taskId", a->task_id);
  sb_json_key_string(&b, "runId", a->run_id);
  sb_json_key_string(&b, "backend", backend);
  sb_json_key_string(&b, "policyHash", a->policy_hash);
  sb_json_key_string(&b, "time", time);
  if (reason != NULL)
    sb_json_key_string(&b, "reason", reason);
  if (r != NULL) {
    sb_exit_fields(&b, r);
    sb_printf(&b, ",\"timedOut\":%s,\"durationMs\":%lld", r->timed_out ? "true" : "false",
              (long long)r->duration_ms);
    sb_limits_outcome(&b, r);
  }
  sb_puts(&b, "}\n");
  return b.data;
}

static void audit_event(const struct audit *a, const char *event, const char *backend,
                        const char *reason, const struct run_result *r) {
  cleanup_free char *line = NULL;
  if (a->fd < 0)
    return;
  line = audit_line(a, event, backend, reason, r);
  /* one write on an O_APPEND fd: concurrent sandboxes never interleave their lines */
  if (safe_write_all(a->fd, line, strlen(line)) < 0)
    log_warning("sandbox: write the audit log: %s", strerror(errno));
}

/* sandbox:tamper: the nested repositories the run made, the config-named files it changed, and
 * its git changes that were left out */
static void audit_tamper(const struct audit *a, const struct sandbox_git_run *g) {
  struct strbuf b = {0};
  cleanup_free char *time = NULL;
  /* hostGitArgs alone: the walk met a nested repository that was there before (review25 C3) */
  bool args = g->host_git_args != NULL && g->host_git_args[0] != NULL;
  if (a->fd < 0 || (g->tamper == NULL && g->discarded == NULL && !args))
    return;
  time = rfc3339_now();
  sb_puts(&b, "{\"event\":\"sandbox:tamper\"");
  sb_json_key_string(&b, "taskId", a->task_id);
  sb_json_key_string(&b, "runId", a->run_id);
  sb_json_key_string(&b, "backend", "fsrun");
  sb_json_key_string(&b, "policyHash", a->policy_hash);
  sb_json_key_string(&b, "time", time);
  sb_json_string_array(&b, "paths", g->tamper);
  sb_json_string_array(&b, "hostGitArgs", g->host_git_args);
  sb_json_string_array(&b, "discarded", g->discarded);
  sb_puts(&b, "}\n");
  if (safe_write_all(a->fd, b.data, b.len) < 0)
    log_warning("sandbox: write the audit log: %s", strerror(errno));
  free(b.data);
}

/* sandbox_git_finish's said: on stderr before hostGitArgs and the sync, which a run can make
 * slow enough for its caller to kill fsrun (review19 #15, review22 F7) */
static void say_tamper(const struct sandbox_git_run *g, void *arg) {
  (void)arg;
  sandbox_git_warn_tamper("sandbox", g->tamper);
}

static void say_host_args(const struct sandbox_git_run *g, void *arg) {
  (void)arg;
  sandbox_git_warn_host_args("sandbox", g->host_git_args);
}

static const struct sandbox_git_said say_git = {.tamper = say_tamper, .host_args = say_host_args};

/* one line on stderr: what was left out, as a JSON list: the names are the run's, and a raw one
 * could pass for a list of fsrun's own on that line (review25 C2) */
static void warn_discarded(const struct sandbox_git_run *g) {
  sandbox_git_warn_json_list(
      "sandbox", "git: left out what the run wrote outside the task's allowlist: ", g->discarded);
}

/* --- capture --------------------------------------------------------------------------------- */

struct capture {
  bool active;
  int saved_stdout, saved_stderr;
  int mem_out, mem_err;
  int pipe_out, pipe_err; /* the read ends, the reader's */
  int cancel_fd;          /* an eventfd: the reader gives up (something outside holds a pipe) */
  size_t max;
  int truncated; /* the reader's result: bit 0 stdout, bit 1 stderr went past max */
  /* --max-buffer-kill: what the reader kills when a stream goes past max (Node's exec does) */
  bool kill_on_overflow;
  int kill_pidfd;  /* the container's init (its pid namespace dies with it), or -1 */
  pid_t kill_pgid; /* the native command's process group, or 0 */
  /* the three above: the reader reads them while run_native changes them */
  pthread_mutex_t kill_lock;
  pthread_t reader;
  bool reader_started;
};

/* Until the killed init has exited, and with it every process of its pid namespace (the kernel
 * kills and waits for them first). The reader must not drain the pipes meanwhile: a writer that
 * is not yet killed would run on past the flood (a loaded machine gave it the time). */
static void capture_wait_init_gone(struct capture *c) {
  struct pollfd p[2] = {{.fd = c->kill_pidfd, .events = POLLIN},
                        {.fd = c->cancel_fd, .events = POLLIN}};
  while (poll(p, 2, -1) < 0 && errno == EINTR)
    ;
}

/* The whole command, once: a pidfd cannot name a reused pid (where pidfd_send_signal answers
 * ENOSYS, pidfd_signal_child's kill(2) reaches the init only while it is our unreaped child; the
 * main thread's reap could still come between its check and its kill, which would then need the
 * pid reused in that instant), and the native child's group id is
 * ours until run_native reaps its leader, which it does only after capture_retarget_kill(c, 0)
 * (under the same lock: a kill here either comes before the reap or not at all). A group's SIGKILL
 * is final when kill returns; the init's takes the rest of its pid namespace only as the init
 * exits. */
static void capture_kill_command(struct capture *c) {
  bool init_killed = false;
  pthread_mutex_lock(&c->kill_lock);
  if (c->kill_on_overflow) {
    c->kill_on_overflow = false;
    if (c->kill_pgid > 0)
      (void)kill(-c->kill_pgid, SIGKILL);
    else if (c->kill_pidfd >= 0)
      init_killed = pidfd_signal_child(c->kill_pidfd, SIGKILL) == 0;
  }
  pthread_mutex_unlock(&c->kill_lock);
  if (init_killed)
    capture_wait_init_gone(c);
}

/* --max-buffer-kill is for the native command's group from here on (it takes precedence over the
 * pidfd of an init cloned before the set-up failed, which is gone); pgid 0: for nothing any
 * more, the group's leader is about to be reaped. */
static void capture_retarget_kill(struct capture *c, pid_t pgid) {
  pthread_mutex_lock(&c->kill_lock);
  if (pgid == 0)
    c->kill_on_overflow = false;
  c->kill_pgid = pgid;
  pthread_mutex_unlock(&c->kill_lock);
}

/* The reader thread: both pipes into the memfds, at most max bytes each, until both close or
 * cancel_fd is signalled. A small buffer: each page of it is a fault the first time. */
static void *reader_main(void *arg) {
  struct capture *c = arg;
  struct pollfd p[3] = {{.fd = c->pipe_out, .events = POLLIN},
                        {.fd = c->pipe_err, .events = POLLIN},
                        {.fd = c->cancel_fd, .events = POLLIN}};
  int mem[2] = {c->mem_out, c->mem_err};
  size_t kept[2] = {0, 0};
  int open_streams = 2;
  char buf[16384];
  while (open_streams > 0) {
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[2].revents & POLLIN)
      break;
    for (int i = 0; i < 2; i++) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t n = read(p[i].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        p[i].fd = -1;
        open_streams--;
        continue;
      }
      size_t keep = (size_t)n;
      if (kept[i] + keep > c->max) {
        keep = c->max - kept[i];
        c->truncated |= 1 << i;
        capture_kill_command(c);
      }
      if (keep > 0 && safe_write_all(mem[i], buf, keep) == 0)
        kept[i] += keep;
    }
  }
  return NULL;
}

static void close_fd(int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

/* A capture not started, its lock ready: what capture_start begins from, and what
 * capture_retarget_kill, capture_finish and capture_release accept without a start. */
#define CAPTURE_IDLE                                                                               \
  {                                                                                                \
    .saved_stdout = -1, .saved_stderr = -1, .mem_out = -1, .mem_err = -1, .pipe_out = -1,          \
    .pipe_err = -1, .cancel_fd = -1, .kill_pidfd = -1, .kill_lock = PTHREAD_MUTEX_INITIALIZER      \
  }

/* The pipes, in place of fds 1 and 2; the reader is started later (capture_start_reader). c is
 * CAPTURE_IDLE. */
static int capture_start(struct capture *c, size_t max, bool kill_on_overflow, fsrun_error_t *err) {
  int out[2] = {-1, -1}, errp[2] = {-1, -1};
  c->kill_on_overflow = kill_on_overflow;
  c->max = max;
  c->mem_out = memfd_create("fsrun-sandbox-stdout", MFD_CLOEXEC);
  c->mem_err = memfd_create("fsrun-sandbox-stderr", MFD_CLOEXEC);
  c->cancel_fd = eventfd(0, EFD_CLOEXEC);
  if (c->mem_out < 0 || c->mem_err < 0 || c->cancel_fd < 0 || pipe2(out, O_CLOEXEC) < 0 ||
      pipe2(errp, O_CLOEXEC) < 0) {
    int saved = errno;
    for (int i = 0; i < 2; i++) {
      close_fd(&out[i]);
      close_fd(&errp[i]);
    }
    return fsrun_error_make(err, saved, "sandbox: set up the output capture");
  }
  c->pipe_out = out[0];
  c->pipe_err = errp[0];
  c->saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  c->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  /* fds 1 and 2 (without CLOEXEC) are what the container's process inherits */
  dup2(out[1], STDOUT_FILENO);
  dup2(errp[1], STDERR_FILENO);
  close(out[1]);
  close(errp[1]);
  /* fsrun's own warnings and errors are not the command's output */
  fsrun_log_to_stderr_fd(c->saved_stderr);
  c->active = true;
  return 0;
}

/* Starts the reader. Only once no more processes are cloned with a bare clone3 (see the top). */
static void capture_start_reader(struct capture *c) {
  sigset_t all, old;
  int r;
  if (!c->active || c->reader_started)
    return;
  /* every signal stays the main thread's: one delivered to the reader would take its default
   * action for the whole process instead of being forwarded to the command */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  r = pthread_create(&c->reader, NULL, reader_main, c);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (r != 0) {
    /* the command's output stays in the pipes; read once the command is gone */
    log_warning("sandbox: start the output reader: %s", strerror(r));
    return;
  }
  c->reader_started = true;
}

struct started {
  struct capture *cap;
  bool cpu_budget;
  int init_pidfd; /* a copy of create's pidfd on the init (watch_init), or -1 */
  int *mntns_fd;  /* where mntns_hold puts its fd */
};

#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3) /* linux/pidfd.h, Linux 6.11 */
#endif

/* The init's mount namespace, held from here until the init is reaped (-1 where the kernel has no
 * such ioctl, or the init is gone already): the init's exit then only drops a reference instead
 * of tearing the namespace down, which waits for expedited RCU grace periods (its own, and one for
 * each overlay's superblock: ~0.3 ms of a quiet ordinary user's run, several ms each on a loaded
 * machine; tests/bench/README.md, session 25). The runtime waits for that exit before its
 * clean-up; the watchdog does the teardown beside it (sandbox_watchdog_drop_mntns). Nothing is
 * left to write the upper dir or the worktree meanwhile: the init's pidfd turns readable only once
 * every process of its pid namespace is gone (the kernel kills them and waits, in the init's
 * exit), and nobody else holds the namespace. After the start: pid 1 is the tiny init by then,
 * exec'd in the container's user namespace, whose owner may read it (before, an ordinary user's
 * runtime may not). */
static int mntns_hold(int init_pidfd) {
  return init_pidfd < 0 ? -1 : ioctl(init_pidfd, PIDFD_GET_MNT_NAMESPACE, 0);
}

/* container_run_opts.on_started: the output reader, the cgroup's CPU time for the budget, and the
 * mount namespace held for its teardown beside ours */
static void on_started(const struct fsrun_cgroup *cg, void *arg) {
  struct started *st = arg;
  if (st->cpu_budget)
    sandbox_watchdog_watch_cgroup(cg);
  capture_start_reader(st->cap);
  *st->mntns_fd = mntns_hold(st->init_pidfd);
}

/* Puts our stdio back (closing our ends of the pipes), then waits for the reader: at most a grace
 * period when something outside the sandbox (a native command's orphan) still holds a pipe. */
#define CAPTURE_GRACE_MS 5000

static void capture_finish(struct capture *c, int *truncated) {
  *truncated = 0;
  if (!c->active)
    return;
  fflush(stdout);
  dup2(c->saved_stdout, STDOUT_FILENO);
  dup2(c->saved_stderr, STDERR_FILENO);
  fsrun_log_to_stderr_fd(-1);
  close_fd(&c->saved_stdout);
  close_fd(&c->saved_stderr);
  if (!c->reader_started) /* the set-up failed: the pipes may still hold something */
    capture_start_reader(c);
  if (c->reader_started) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += CAPTURE_GRACE_MS / 1000;
    if (pthread_timedjoin_np(c->reader, NULL, &deadline) != 0) {
      uint64_t one = 1;
      (void)!write(c->cancel_fd, &one, sizeof(one));
      pthread_join(c->reader, NULL);
    }
    c->reader_started = false;
  }
  *truncated = c->truncated;
  c->active = false;
}

static void capture_release(struct capture *c) {
  close_fd(&c->mem_out);
  close_fd(&c->mem_err);
  close_fd(&c->pipe_out);
  close_fd(&c->pipe_err);
  close_fd(&c->cancel_fd);
  close_fd(&c->kill_pidfd);
}

/* --- the native fallback -------------------------------------------------------------------- */

/* The native command's end: its leader waited for but left a zombie, so that its pid, and with it
 * the group id, is no other process's while what the command left in its group is killed and
 * the reader's --max-buffer-kill and the watchdog (timed_out: whether it fired; NULL: it was not
 * armed) are disarmed; only then reaped. Its wait status. */
static int native_end(struct capture *cap, pid_t child, bool *timed_out) {
  siginfo_t info;
  int status = 0;
  memset(&info, 0, sizeof(info));
  while (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
    ;
  kill(-child, SIGKILL);
  capture_retarget_kill(cap, 0);
  if (timed_out != NULL)
    *timed_out = sandbox_watchdog_disarm();
  while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  return status;
}

static int run_native(const struct sandbox_run_opts *o, const char *worktree, int64_t deadline,
                      const oci_policy *policy, struct capture *cap, int *status_out,
                      int *signal_out, bool *timed_out, fsrun_error_t *err) {
  sigset_t all, old;
  int status;
  pid_t child;

  *timed_out = false;
  /* blocked until the child's exec, so that a ^C reaches both the same way as without us */
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  child = fork();
  if (child < 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    return fsrun_error_errno(err, "fallback-native: fork");
  }
  if (child == 0) {
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (policy->has_cpu_max_ms) {
      rlim_t seconds = (rlim_t)(policy->cpu_max_ms / 1000 + (policy->cpu_max_ms % 1000 != 0));
      struct rlimit rl = {.rlim_cur = seconds, .rlim_max = seconds};
      setrlimit(RLIMIT_CPU, &rl);
    }
    if (chdir(worktree) < 0)
      _exit(125);
    execvp(o->args[0], o->args);
    _exit(errno == ENOENT ? 127 : 126);
  }
  setpgid(child, child); /* both sides: no race with the watchdog's kill(-pgid) */
  capture_retarget_kill(cap, child);
  capture_start_reader(cap);
  if (sandbox_watchdog_arm_native(child, deadline, err) < 0) {
    kill(child, SIGKILL);
    (void)native_end(cap, child, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return fsrun_error_code(err);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  status = native_end(cap, child, timed_out);
  *status_out = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  *signal_out = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return 0;
}

/* --- the set-up deadline ------------------------------------------------------------------- */

/* --timeout-ms bounds the whole invocation, set-up included. Up to the container's creation (from
 * there the watchdog kills the init it was told of, and create fails), a set-up step that blocks
 * (a policy read from a pipe nobody writes, a worktree file that is a FIFO) is ended by a timer:
 * its handler writes what was prepared for this case, with write(2) only, and exits 124. The
 * watchdog then sees fsrun gone and removes what the set-up had made. */
static struct {
  volatile sig_atomic_t armed;
  timer_t timer;
  int out_fd, err_fd, audit_fd;
  char *json, *line, *audit; /* what to write: the result (--json), fsrun's line, the event */
} setup_deadline = {.out_fd = -1, .err_fd = -1, .audit_fd = -1};

static void write_prepared(int fd, const char *s) {
  if (fd >= 0 && s != NULL)
    (void)!write(fd, s, strlen(s));
}

static void setup_deadline_fired(int sig, siginfo_t *info, void *ucontext) {
  (void)sig, (void)ucontext;
  if (!setup_deadline.armed || info->si_code != SI_TIMER)
    return; /* a SIGALRM someone sent: not ours */
  write_prepared(setup_deadline.err_fd, setup_deadline.line);
  write_prepared(setup_deadline.audit_fd, setup_deadline.audit);
  write_prepared(setup_deadline.out_fd, setup_deadline.json);
  _exit(SANDBOX_EXIT_TIMEOUT);
}

/* Arms the timer at deadline (CLOCK_MONOTONIC ms) with the result and the line to give. */
static void setup_deadline_arm(int64_t deadline, int64_t timeout_ms, bool json) {
  struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
  struct itimerspec at = {
      .it_value = {.tv_sec = deadline / 1000, .tv_nsec = (long)(deadline % 1000) * 1000000}};
  struct sigaction sa = {.sa_sigaction = setup_deadline_fired, .sa_flags = SA_SIGINFO};
  cleanup_free char *msg = xasprintf(
      "sandbox: --timeout-ms: the set-up did not finish within %lld ms", (long long)timeout_ms);
  struct strbuf b = {0};
  if (deadline <= 0)
    return;
  sb_puts(&b, "{\"stdout\":\"\",\"stderr\":\"\",\"exitCode\":null,\"signal\":\"SIGKILL\",");
  sb_printf(&b, "\"timedOut\":true,\"truncated\":false,\"durationMs\":%lld,",
            (long long)timeout_ms);
  sb_puts(&b, "\"backend\":\"fsrun\",\"limits\":{}");
  sb_json_key_string(&b, "error", msg);
  sb_puts(&b, "}\n");
  setup_deadline.json = json ? b.data : (free(b.data), NULL);
  setup_deadline.line = xasprintf("fsrun: %s\n", msg);
  setup_deadline.out_fd = STDOUT_FILENO;
  setup_deadline.err_fd = STDERR_FILENO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL) < 0 ||
      timer_create(CLOCK_MONOTONIC, &sev, &setup_deadline.timer) < 0)
    return; /* the watchdog still ends the run once the container exists */
  setup_deadline.armed = 1;
  if (timer_settime(setup_deadline.timer, TIMER_ABSTIME, &at, NULL) < 0) {
    setup_deadline.armed = 0;
    timer_delete(setup_deadline.timer);
  }
}

/* The set-up is past the point where it can block by itself: the watchdog takes over. */
static void setup_deadline_disarm(void) {
  if (setup_deadline.armed) {
    setup_deadline.armed = 0;
    timer_delete(setup_deadline.timer);
    signal(SIGALRM, SIG_DFL);
  }
  free(setup_deadline.json);
  free(setup_deadline.line);
  free(setup_deadline.audit);
  setup_deadline.json = setup_deadline.line = setup_deadline.audit = NULL;
}

/* container_create_opts.on_cloned (data: the struct started). The watchdog, --max-buffer-kill and
 * mntns_hold each get a copy of create's own pidfd on the init (from CLONE_PIDFD): a pidfd_open of
 * their own could answer ENOSYS and leave the kill without a target. The reader is not started
 * yet: nothing reads kill_pidfd meanwhile. */
static int watch_init(pid_t pid, int pidfd, void *data, fsrun_error_t *err) {
  struct started *st = data;
  struct capture *cap = st->cap;
  (void)pid;
  sandbox_watchdog_watch_init(pidfd);
  if (st->init_pidfd < 0)
    st->init_pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
  if (!cap->active || !cap->kill_on_overflow || cap->kill_pidfd >= 0)
    return 0;
  cap->kill_pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
  if (cap->kill_pidfd < 0)
    return fsrun_error_errno(err, "sandbox: --max-buffer-kill: a pidfd on the container init");
  return 0;
}

/* --- the run -------------------------------------------------------------------------------- */

static void print_result_json(const struct run_result *r, const struct capture *c,
                              const oci_policy *p, int64_t timeout_ms) {
  const struct sandbox_limits *l = &r->limits;
  struct strbuf b = {0};
  size_t out_len = 0, err_len = 0;
  cleanup_free char *out = read_memfd(c->mem_out, &out_len);
  cleanup_free char *errs = read_memfd(c->mem_err, &err_len);
  bool sandboxed = strcmp(r->backend, "fsrun") == 0;
  bool first = true;

  sb_puts(&b, "{\"stdout\":");
  sb_json_string(&b, out, out_len);
  sb_puts(&b, ",\"stderr\":");
  sb_json_string(&b, errs, err_len);
  sb_exit_fields(&b, r);
  sb_printf(&b, ",\"timedOut\":%s,\"truncated\":%s,\"durationMs\":%lld,\"backend\":\"%s\"",
            r->timed_out ? "true" : "false", r->truncated ? "true" : "false",
            (long long)r->duration_ms, r->backend);
  /* what was enforced, not what was asked for */
  sb_puts(&b, ",\"limits\":{");
#define LIMIT(...)                                                                                 \
  do {                                                                                             \
    sb_puts(&b, first ? "" : ",");                                                                 \
    first = false;                                                                                 \
    sb_printf(&b, __VA_ARGS__);                                                                    \
  } while (0)
  if (sandboxed && r->error == NULL) {
    if (p->has_memory_limit_mb && l->memory_in_cgroup)
      LIMIT("\"memoryLimitMb\":%llu", (unsigned long long)p->memory_limit_mb);
    if (l->data_bytes > 0)
      LIMIT("\"memoryPerProcessMb\":%llu", (unsigned long long)(l->data_bytes >> 20));
    if (p->has_cpu_max_cores && l->cpu_in_cgroup)
      LIMIT("\"cpuMaxCores\":%g", p->cpu_max_cores);
    if (l->pids_in_cgroup || l->nproc > 0)
      LIMIT("\"pidsLimit\":%llu,\"pidsLimitBy\":\"%s\"",
            (unsigned long long)(p->has_pids_limit ? p->pids_limit : SANDBOX_DEFAULT_PIDS_LIMIT),
            l->pids_in_cgroup ? "cgroup" : "RLIMIT_NPROC");
  }
  if (p->has_cpu_max_ms && r->error == NULL)
    LIMIT("\"cpuMaxMs\":%llu,\"cpuMaxMsScope\":\"%s\"", (unsigned long long)p->cpu_max_ms,
          sandboxed && l->cpu_budget ? "command" : "process");
  if (timeout_ms > 0 && r->error == NULL)
    LIMIT("\"timeoutMs\":%lld", (long long)timeout_ms);
  if (sandboxed && r->error == NULL)
    LIMIT("\"network\":\"%s\"", sandbox_network_name(sandbox_network_profile(p)));
#undef LIMIT
  sb_puts(&b, "}");
  sb_limits_outcome(&b, r);
  if (r->error != NULL)
    sb_json_key_string(&b, "error", r->error);
  sb_json_string_array(&b, "tamper", r->tamper);
  sb_json_string_array(&b, "hostGitArgs", r->host_git_args);
  sb_json_string_array(&b, "discarded", r->discarded);
  sb_puts(&b, "}\n");
  (void)safe_write_all(STDOUT_FILENO, b.data, b.len);
  free(b.data);
}

/* container_run's on_exit: what the cgroup counted, read before it is removed; and the network
 * helper, which nothing of the sandbox uses any more, is killed to die while the container is
 * removed */
static void command_ended(const struct fsrun_cgroup *cg, void *data) {
  struct run_result *res = data;
  uint64_t kills = 0;
  /* the init, cloned from us, is reaped: what is left to do writes pages it shared (a forked
   * watchdog still shares them all) */
  if (!sandbox_watchdog_forked())
    prefault_after_child();
  res->oom_killed = cg != NULL && cgroup_oom_kills(cg, &kills) && kills > 0;
  sandbox_net_kill(&res->net);
  sandbox_watchdog_drop_mntns(&res->mntns_fd);
}

/* Builds the config and runs it over the shared bundle. Returns < 0 when the sandbox could not be
 * set up (nothing ran); res->exit_code, signal and timed_out say how the command ended otherwise.
 */
/* create's on_limit_gap: what the runtime could not put in place joins the planned gaps */
struct runtime_gaps {
  const oci_policy *policy;
  struct sandbox_limits *limits;
};

static int runtime_gap(const char *limit, const char *why, void *data, fsrun_error_t *err) {
  struct runtime_gaps *g = data;
  return sandbox_limits_runtime_gap(g->policy, g->limits, limit, why, err);
}

/* What the init waits for before the command (container_create_opts.exec_not_before): the coarse
 * clock to reach the cutoff, unless file times are past it already (the kernel's floor of file
 * times raised, Linux 6.13: file_time_raise_floor) and the worktree's filesystem takes its times
 * from that clock. Nothing to wait for then: nothing the command changes can look older than the
 * cutoff. */
static struct timespec *init_waits_for(const char *worktree, struct timespec *cutoff) {
  struct statfs fs;
  if (cutoff == NULL || statfs(worktree, &fs) < 0 ||
      !file_time_fs_kernel_clock((unsigned long)fs.f_type) || !file_time_raise_floor(cutoff))
    return cutoff;
  log_debug("file times are past the tamper cutoff already: the init does not wait");
  return NULL;
}

static int run_in_sandbox(const struct fsrun_context *ctx, const struct sandbox_run_opts *o,
                          const oci_policy *policy, const char *worktree, const char *id,
                          bool userns, int64_t deadline, struct capture *cap,
                          struct sandbox_git_run *git, struct run_result *res, fsrun_error_t *err) {
  cleanup_free char *bundle = NULL;
  cleanup_free char *json = NULL;
  cleanup_free char *json_err = NULL;
  oci_config *config = NULL;
  struct timespec *cutoff;
  int status = -1, r;
  /* an ordinary user's command is in a user namespace, where no device node opens anyway */
  const struct sandbox_one_shot one_shot = {.no_device_rules =
                                                !userns && !sandbox_device_rules_needed()};

  res->timed_out = false;
  bundle = sandbox_shared_bundle(ctx->state_root, err);
  if (bundle == NULL)
    return fsrun_error_code(err);
  if (sandbox_config_for_caller(policy, worktree, ctx->state_root, o->args, o->n_args, userns,
                                userns ? NULL : bundle, &one_shot, &config, err) < 0)
    return fsrun_error_code(err);
  /* the git common dir as an overlay, its upper dir applied afterwards (sandbox-git-sync.c) */
  r = sandbox_git_prepare(git, ctx->state_root, id, worktree, &policy->writable_paths, err);
  /* the set-up's last layout lookup: from here a command exists, and any lookup walks again */
  sandbox_git_layout_memo_end();
  if (r < 0) {
    oci_config_free(config);
    return fsrun_error_code(err);
  }
  cutoff = init_waits_for(worktree, sandbox_git_tamper_cutoff(git, &res->began));
  /* before the command exists: what it may backdate is compared with this too */
  sandbox_git_dotgits_before(git, worktree);
  sandbox_git_overlay_config(git, config, userns);
  sandbox_covers_as_entries(config, false);
  sandbox_limits_apply(&res->limits, config);
  /* the config goes to create in memory, over the one bundle every run shares: nothing is written
   * to disk for a run but the container's state. create takes the struct as it is (no parse of
   * the JSON back); the JSON is what the state dir keeps for `fsrun exec`. */
  json = oci_config_serialize(config, false, &json_err);
  if (json == NULL) {
    oci_config_free(config);
    return fsrun_error_take(err, 0, steal_ptr(&json_err));
  }
  r = sandbox_watchdog_arm_container_budget(
      id, deadline, res->limits.cpu_budget ? (int64_t)res->limits.cpu_budget_ms : 0, err);
  if (r < 0)
    oci_config_free(config);
  if (r == 0) {
    struct started started = {.cap = cap,
                              .cpu_budget = res->limits.cpu_budget,
                              .init_pidfd = -1,
                              .mntns_fd = &res->mntns_fd};
    struct runtime_gaps gaps = {.policy = policy, .limits = &res->limits};
    res->net.deadline = deadline;
    struct container_run_opts ro = {.create = {.id = id,
                                               .bundle = bundle,
                                               .config_json = json,
                                               .config_len = strlen(json),
                                               .config = config, /* create frees it */
                                               .on_cloned = watch_init,
                                               .on_cloned_data = &started,
                                               .on_limit_gap = runtime_gap,
                                               .on_limit_gap_data = &gaps,
                                               .exec_not_before = cutoff,
                                               .one_shot = true,
                                               .no_cgroup = res->limits.no_cgroup,
                                               .no_device_rules = one_shot.no_device_rules},
                                    .on_started = on_started,
                                    .on_started_arg = &started,
                                    .term_signal = &res->signal,
                                    .on_exit = command_ended,
                                    .on_exit_data = res};
    if (sandbox_network_profile(policy) == SANDBOX_NET_EGRESS) {
      ro.create.on_namespaces = sandbox_net_attach;
      ro.create.on_mounts_done = sandbox_net_wait_ready;
      ro.create.on_namespaces_data = &res->net;
    }
    setup_deadline_disarm();
    res->in_container_setup = true;
    r = container_run(ctx, &ro, &status, err);
    /* a run that failed before its command ended never dropped it */
    close_fd(&res->mntns_fd);
    close_fd(&started.init_pidfd);
    /* the sandbox has ended (or never started): its network helper goes with it, reaped last */
    sandbox_net_kill(&res->net);
    /* no deadline any more, but a fsrun killed during the git sync (seconds: objects inflated and
     * hashed) still has its per-run dir unmounted and removed by the watchdog */
    res->timed_out = sandbox_watchdog_cleanup_only(id);
    res->cpu_budget_exceeded = sandbox_watchdog_cpu_budget_spent();
    if (status >= 0)
      sandbox_git_finish(git, worktree, &say_git);
    if (r < 0 && status >= 0) {
      /* the command ran; only the clean-up failed: say so, keep its status */
      log_warning("sandbox: %s", (*err)->msg);
      fsrun_error_release(err);
      r = 0;
    }
  }
  if (r < 0)
    return r;
  res->exit_code = status;
  return 0;
}

enum fallback { FALLBACK_REFUSED, FALLBACK_NATIVE, FALLBACK_TIMED_OUT };

/* Whether a set-up that failed (*reason) under fallback-native may run the command natively: only
 * when the host cannot sandbox even a request without the worktree and the policy's paths
 * (sandbox-probe.h); *reason then says both. Otherwise it says that the sandbox works here. */
static enum fallback fallback_decide(const struct fsrun_context *ctx, const oci_policy *policy,
                                     const char *id, int64_t deadline, char **reason) {
  cleanup_error fsrun_error_t arm_err = NULL;
  cleanup_free char *host_why = NULL;
  char *said;
  enum sandbox_probe probe;
  /* armed again (no deadline: the probe has its own) so that a fsrun killed during the probe has
   * its watchdog remove the probe's directory and container (sandbox_watchdog_cleanup) */
  (void)sandbox_watchdog_arm_container(id, 0, &arm_err);
  probe = sandbox_probe_host(ctx, policy, id, deadline, &host_why);
  (void)sandbox_watchdog_disarm();
  if (probe != SANDBOX_PROBE_WORKS && deadline > 0 && monotonic_ms() >= deadline)
    return FALLBACK_TIMED_OUT;
  if (probe == SANDBOX_PROBE_WORKS)
    said = xasprintf("%s; the sandbox works on this host, so the command was not run natively",
                     *reason);
  else if (probe == SANDBOX_PROBE_CANNOT)
    said = xasprintf("%s; no sandbox can be set up on this host either (%s)", *reason, host_why);
  else /* fail closed: only a host known to be unable may run the command natively */
    said = xasprintf("%s; the host could not be probed (%s), so the command was not run natively",
                     *reason, host_why);
  free(*reason);
  *reason = said;
  return probe == SANDBOX_PROBE_CANNOT ? FALLBACK_NATIVE : FALLBACK_REFUSED;
}

static bool failure_mode_valid(const char *mode) {
  return strcmp(mode, "fail-hard") == 0 || strcmp(mode, "fallback-native") == 0;
}

/* err, said in one line; exit 125 */
static int refuse_setup(fsrun_error_t *err, int *exit_status) {
  fsrun_log_error((*err)->msg);
  fsrun_error_release(err);
  *exit_status = SANDBOX_EXIT_SETUP;
  return 0;
}

/* The audit log is the caller's file, appended to after the run too: never in a tree the command
 * writes (a link it leaves there would send the next run's records, agent-chosen strings in them,
 * into ~/.bashrc), never through a final link, never a fifo that would block us. */
static int open_audit_log(const char *path, const oci_policy *policy, const char *worktree,
                          fsrun_error_t *err) {
  cleanup_free char *common_dir = NULL, *wt_git_dir = NULL, *tree = NULL;
  struct agent_trees t;
  int fd;
  /* a worktree whose git dir is broken fails its set-up later, where fallback-native decides */
  if (sandbox_git_dirs(worktree, &common_dir, &wt_git_dir, err) < 0)
    fsrun_error_release(err);
  t = (struct agent_trees){.worktree = worktree,
                           .common_dir = common_dir,
                           .wt_git_dir = wt_git_dir,
                           .writable = &policy->writable_paths};
  tree = agent_tree_holding_any(&t, path);
  if (tree != NULL)
    return fsrun_error_make(err, 0,
                            "sandbox: --audit-log `%s` is in `%s`, which the sandboxed command "
                            "can write",
                            path, tree);
  /* nor a link, FIFO or second hard link at it, nor a parent another user could change */
  fd = caller_output_append("--audit-log", path, 0600, err);
  return fd < 0 ? fsrun_error_wrap(err, "sandbox") : fd;
}

/* Whether reading path ("-": stdin) returned at once: a regular file. A pipe, a FIFO or a socket
 * waits for the caller, which may change the worktree before it writes. */
static bool read_at_once(const char *path) {
  struct stat st;
  if (strcmp(path, "-") == 0)
    return fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where the run begins (its tamper cutoff): at fsrun's own start when the caller could not hold us
 * back since, the policy and its seccomp profile being regular files. The coarse clock then reaches
 * it the sooner, and the init waits the less for it (tests/bench/README.md, session 24). Otherwise
 * just after they were read: a caller that writes the policy into a pipe may change the worktree
 * until then (sandbox-git.bats, `a linked worktree the host made right before a run`). Nothing we
 * did since our start changed a time the walk reads: the state root and the audit log are outside
 * the trees it walks (refused above). */
static void run_began(const struct fsrun_context *ctx, const char *policy_path,
                      const oci_policy *policy, struct timespec *began) {
  bool at_once = (policy_path == NULL || read_at_once(policy_path)) &&
                 (policy->seccomp_profile_text == NULL || read_at_once(policy->seccomp));
  if (at_once && ctx->started.tv_sec != 0)
    *began = ctx->started;
  else
    file_time_after_now(began);
}

static int run_once(const struct fsrun_context *ctx, const struct sandbox_run_opts *o,
                    int *exit_status, fsrun_error_t *err) {
  oci_policy *policy = NULL;
  cleanup_free char *worktree = NULL;
  cleanup_free char *id = NULL;
  cleanup_close int audit_fd = -1;
  char hash[65];
  const char *failure_mode;
  struct run_result result = {.backend = "fsrun", .mntns_fd = -1};
  struct capture cap = CAPTURE_IDLE;
  struct audit audit;
  struct sandbox_git_run git = {0};
  bool userns = geteuid() != 0;
  int64_t start, deadline = o->timeout_ms > 0 ? monotonic_ms() + o->timeout_ms : 0;
  int r;

  result.net = SANDBOX_NET_INIT(userns);
  /* --- bad options: exit 1, nothing run, nothing logged --- */
  if (o->args == NULL || o->n_args == 0)
    return fsrun_error_make(err, 0, "sandbox: a COMMAND is required after `--`");
  if (o->timeout_ms < 0)
    return fsrun_error_make(err, 0, "sandbox: --timeout-ms: must not be negative");
  if (o->failure_mode != NULL && !failure_mode_valid(o->failure_mode))
    return fsrun_error_make(err, 0,
                            "sandbox: --failure-mode: expected fail-hard or fallback-native, got "
                            "`%s`",
                            o->failure_mode);
  /* from here --timeout-ms counts; the watchdog watches the container from before it exists */
  id = make_container_id(o->task_id, o->run_id);
  (void)sandbox_watchdog_arm_container(id, deadline, err);
  fsrun_error_release(err);
  setup_deadline_arm(deadline, o->timeout_ms, o->json);
  /* --- a policy or worktree no sandbox can be built from: the sandbox cannot be set up, exit 125
   * (never 1, which a failing command gives too), one line, nothing run, nothing logged --- */
  if (sandbox_policy_load(o->policy_path, &policy, err) < 0)
    return refuse_setup(err, exit_status);
  failure_mode = o->failure_mode        ? o->failure_mode
                 : policy->failure_mode ? policy->failure_mode
                                        : "fail-hard";
  if (!failure_mode_valid(failure_mode)) {
    oci_policy_free(policy);
    fsrun_error_make(err, 0,
                     "policy: sandbox.failureMode: expected fail-hard or fallback-native, got `%s`",
                     failure_mode);
    return refuse_setup(err, exit_status);
  }
  if (sandbox_resolve_worktree(o->worktree, &worktree, err) < 0 ||
      sandbox_policy_hash(policy, hash, err) < 0 ||
      sandbox_policy_respell(policy, worktree, err) < 0 ||
      sandbox_check_state_root(policy, worktree, ctx->state_root, err) < 0 ||
      sandbox_check_runtime_dir(policy, err) < 0 ||
      sandbox_check_other_checkouts(policy, worktree, err) < 0 ||
      sandbox_check_kernel_paths(policy, err) < 0) {
    oci_policy_free(policy);
    return refuse_setup(err, exit_status);
  }
  if (o->audit_log != NULL &&
      (audit_fd = open_audit_log(o->audit_log, policy, worktree, err)) < 0) {
    oci_policy_free(policy);
    return refuse_setup(err, exit_status);
  }
  audit = (struct audit){
      .fd = audit_fd, .task_id = o->task_id, .run_id = o->run_id, .policy_hash = hash};

  audit_event(&audit, "sandbox:prepare", "fsrun", NULL, NULL);
  /* the run begins: what the caller did before it (the host's `git worktree add` right before)
   * is not the run's, and the wait for file times to reach it overlaps the set-up from there */
  run_began(ctx, o->policy_path, policy, &result.began);
  /* the event a set-up that times out from here gives */
  if (audit_fd >= 0 && setup_deadline.armed) {
    cleanup_free char *why = xstrdup(setup_deadline.line + strlen("fsrun: "));
    why[strcspn(why, "\n")] = '\0';
    setup_deadline.audit = audit_line(&audit, "sandbox:failure", "fsrun", why, NULL);
    setup_deadline.audit_fd = audit_fd;
  }
  if (o->json && capture_start(&cap, o->max_buffer, o->max_buffer_kill, err) < 0) {
    capture_release(&cap);
    audit_event(&audit, "sandbox:failure", "fsrun", (*err)->msg, NULL);
    oci_policy_free(policy);
    return fsrun_error_code(err);
  }
  if (cap.active) {
    setup_deadline.out_fd = cap.saved_stdout;
    setup_deadline.err_fd = cap.saved_stderr;
  }
  start = monotonic_ms();
  sandbox_limits_plan(policy, userns, false, &result.limits);
  /* limitsMode "require": refused before anything runs, and never run natively instead */
  r = sandbox_limits_check(policy, &result.limits, err);
  if (r < 0) {
    result.error = xstrdup((*err)->msg);
    fsrun_error_release(err);
  } else {
    sandbox_limits_warn(&result.limits);
    r = run_in_sandbox(ctx, o, policy, worktree, id, userns, deadline, &cap, &git, &result, err);
    sandbox_git_layout_memo_end(); /* a set-up that failed before its git prepare */
    result.tamper = git.tamper;
    result.host_git_args = git.host_git_args;
    result.discarded = git.discarded;
  }
  setup_deadline_disarm();
  /* past the deadline, a failed set-up is the deadline's doing even before the watchdog says so */
  if (r < 0 && result.error == NULL && deadline > 0 && monotonic_ms() >= deadline)
    result.timed_out = true;
  if (r < 0 && result.error == NULL && result.timed_out) {
    /* the deadline ended the set-up (the watchdog killed the init): no fallback, 124 */
    cleanup_free char *why = xstrdup((*err)->msg);
    fsrun_error_release(err);
    result.error = xasprintf("sandbox: --timeout-ms: the set-up did not finish within %lld ms (%s)",
                             (long long)o->timeout_ms, why);
    r = 0;
  }
  if (r < 0 && result.error != NULL) {
    result.exit_code = SANDBOX_EXIT_SETUP;
  } else if (r < 0) {
    cleanup_free char *reason = NULL;
    if (o->probe_report_fd >= 0)
      sandbox_probe_report(o->probe_report_fd, result.in_container_setup, (*err)->status);
    reason = xstrdup((*err)->msg);
    fsrun_error_release(err);
    enum fallback fb = FALLBACK_REFUSED;
    if (strcmp(failure_mode, "fallback-native") == 0) {
      /* the failed run's git tmpfs goes before the probe: the probe's watchdog is disarmed after
       * it, so a fsrun killed from there on would otherwise leave it mounted in the state root */
      if (git.run_dir != NULL) {
        sandbox_git_remove_run_dir(&git);
        free(git.run_dir);
        git.run_dir = NULL;
      }
      fb = fallback_decide(ctx, policy, id, deadline, &reason);
    }
    if (fb == FALLBACK_TIMED_OUT) {
      result.timed_out = true;
      result.error =
          xasprintf("sandbox: --timeout-ms: the set-up did not finish within %lld ms (%s)",
                    (long long)o->timeout_ms, reason);
      r = 0;
    } else if (fb == FALLBACK_NATIVE) {
      /* said on stderr (ours: the command's may be captured) and in the audit log */
      if (cap.active)
        dprintf(cap.saved_stderr, "fsrun: warning: sandbox: %s; running the command natively\n",
                reason);
      else
        log_warning("sandbox: %s; running the command natively", reason);
      audit_event(&audit, "sandbox:fallback", "native", reason, NULL);
      result.backend = "native";
      sandbox_limits_clear(&result.limits);
      sandbox_limits_plan(policy, userns, true, &result.limits);
      r = sandbox_limits_check(policy, &result.limits, err);
      if (r == 0) {
        sandbox_limits_warn(&result.limits);
        r = run_native(o, worktree, deadline, policy, &cap, &result.exit_code, &result.signal,
                       &result.timed_out, err);
      }
      if (r < 0) {
        free(reason);
        reason = xstrdup((*err)->msg);
        fsrun_error_release(err);
      }
    }
    if (r < 0) {
      result.exit_code = SANDBOX_EXIT_SETUP;
      result.error = steal_ptr(&reason);
    }
  }
  result.duration_ms = monotonic_ms() - start;
  /* a spent CPU budget ends the command as the timeout does; the JSON tells them apart */
  if (result.timed_out || result.cpu_budget_exceeded)
    result.exit_code = SANDBOX_EXIT_TIMEOUT;
  capture_finish(&cap, &result.truncated);

  if (result.error != NULL) {
    audit_event(&audit, "sandbox:failure", result.backend, result.error, NULL);
    fsrun_log_error(result.error);
  } else {
    audit_event(&audit, "sandbox:run", result.backend, NULL, &result);
    audit_tamper(&audit, &git);
    warn_discarded(&git);
  }
  if (o->json)
    print_result_json(&result, &cap, policy, o->timeout_ms);
  capture_release(&cap);
  /* the killed helper has been dying meanwhile; none outlives us */
  sandbox_net_reap(&result.net);
  sandbox_limits_clear(&result.limits);
  free(result.error);
  sandbox_git_run_free(&git);
  /* the per-run dir is gone: nothing is left for the watchdog to clean up */
  (void)sandbox_watchdog_disarm();
  oci_policy_free(policy);
  *exit_status = result.exit_code;
  return 0;
}

int sandbox_run(const struct fsrun_context *ctx, const struct sandbox_run_opts *o, int *exit_status,
                fsrun_error_t *err) {
  int r;
  /* the worktree's git layout, walked once for the set-up's lookups (sandbox-git-layout-memo.c) */
  sandbox_git_layout_memo_begin();
  r = run_once(ctx, o, exit_status, err);
  sandbox_git_layout_memo_end();
  setup_deadline_disarm();
  /* on every path, bad input included: no watchdog outlives us */
  sandbox_watchdog_end();
  return r;
}
