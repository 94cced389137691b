/* The host probe of fallback-native (sandbox-probe.h). A set-up failure says nothing of whose doing
 * it was: the command of the run before may have written a `.git` file, flipped a symlink under a
 * policy path or shaped `.gitmodules` so that the next set-up fails. The probe asks again without
 * any of that: this same binary (/proc/self/exe, not a path someone could swap), the same cgroup
 * options, the policy stripped of its paths (and of a seccomp profile file, which is the request's
 * too), over an empty directory of its own with a state root of its own (the run's may have been
 * written by a command that could write there: `.sandbox-bundle` replaced by a file failed both),
 * under fail-hard. Both are in a directory made for the probe in the run's state root and named
 * after the run (never one that existed), so that a fsrun killed during the probe leaves nothing:
 * its watchdog's clean-up removes it (sandbox_probe_remove_leftover). Only a host that
 * cannot run that either is a host the command may run natively on, and only for want of a host
 * capability (sandbox_probe_report, through a pipe only this parent holds): a disk or a limit the
 * command filled, or anything written into the probe's directory meanwhile (it is checked after),
 * leaves the host undecided. A child process, not a second set-up in this one: the run's watchdog,
 * capture and deadline timer stay as they are. */
#include "sandbox-probe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "container.h"
#include "log.h"
#include "remove-tree.h"
#include "sandbox-internal.h"
#include "sandbox-state-root.h"
#include "utils.h"

#define PROBE_REASON_MAX 1024
/* the probe's tree: its state root, the shared bundle's and the container's few levels */
#define PROBE_MAX_DEPTH 8
/* what the probe says on its report pipe (sandbox_probe_report) */
#define PROBE_CANNOT    "cannot\n"
#define PROBE_UNDECIDED "undecided\n"

/* the probe's directory as made: what it must still be after the probe */
struct probe_dir {
  dev_t dev;
  ino_t dir, wt, state;
  struct timespec dir_mtime, wt_mtime, wt_ctime;
};

static bool capability_errno(int errnum) {
  return errnum == ENOSYS || errnum == EPERM || errnum == EINVAL || errnum == EOPNOTSUPP;
}

void sandbox_probe_report(int fd, bool in_container_setup, int errnum) {
  const char *class =
      in_container_setup && capability_errno(errnum) ? PROBE_CANNOT : PROBE_UNDECIDED;
  (void)safe_write_all(fd, class, strlen(class));
}

/* The caller's network profile, limits, ports, environment allowlist and seccomp choice; none of
 * the paths it names. */
static char *probe_policy_json(const oci_policy *p, char **err) {
  oci_policy bare = *p;
  bare.allowed_paths = (oci_strv){0};
  bare.writable_paths = (oci_strv){0};
  bare.backend = NULL;
  bare.failure_mode = NULL;
  if (bare.seccomp != NULL && strcmp(bare.seccomp, "none") != 0) {
    bare.seccomp = NULL; /* the default profile */
    bare.seccomp_profile_text = NULL;
    bare.seccomp_profile_len = 0;
  }
  return oci_policy_serialize(&bare, err);
}

/* A memfd holding text, read from its start (the probe's stdin); -1 with *why set on failure. */
static int text_memfd(const char *text, char **why) {
  int fd = memfd_create("fsrun-probe-policy", MFD_CLOEXEC);
  if (fd < 0 || safe_write_all(fd, text, strlen(text)) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
    *why = xasprintf("the probe's policy: %s", strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

/* The strings are borrowed: argv lives no longer than state_root, worktree and id. */
static char **probe_argv(const struct fsrun_context *ctx, const char *state_root,
                         const char *worktree, const char *id, int64_t timeout_ms,
                         char *timeout_buf, size_t timeout_len, char *report_buf, size_t report_len,
                         int report_fd) {
  char **argv = xmalloc0(28 * sizeof(char *));
  size_t n = 0;
  argv[n++] = "fsrun";
  argv[n++] = "--root";
  argv[n++] = (char *)state_root;
  if (ctx->systemd_cgroup)
    argv[n++] = "--systemd-cgroup";
  if (ctx->rootless != ROOTLESS_AUTO) {
    argv[n++] = "--rootless";
    argv[n++] = ctx->rootless == ROOTLESS_TRUE ? "true" : "false";
  }
  argv[n++] = "sandbox";
  argv[n++] = "--policy";
  argv[n++] = "-";
  argv[n++] = "--worktree";
  argv[n++] = (char *)worktree;
  argv[n++] = "--task-id";
  argv[n++] = "fsrun-probe";
  /* the probe's container id (its cgroup's name) holds the id of the run it probes for */
  argv[n++] = "--run-id";
  argv[n++] = (char *)id;
  argv[n++] = "--failure-mode";
  argv[n++] = "fail-hard";
  snprintf(report_buf, report_len, "%d", report_fd);
  argv[n++] = "--probe-report-fd";
  argv[n++] = report_buf;
  if (timeout_ms > 0) {
    snprintf(timeout_buf, timeout_len, "%lld", (long long)timeout_ms);
    argv[n++] = "--timeout-ms";
    argv[n++] = timeout_buf;
  }
  argv[n++] = "--";
  argv[n++] = "true";
  return argv;
}

/* In the child, async-signal-safe calls only (the run may have a reader thread). */
static void exec_probe(char **argv, pid_t parent, int policy_fd, int null_fd, int err_fd,
                       int report_fd) {
  sigset_t none;
  /* a parent killed before the prctl would leave the probe running over a removed directory */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
    _exit(127);
  if (fcntl(report_fd, F_SETFD, 0) < 0)
    _exit(127);
  if (dup2(policy_fd, STDIN_FILENO) < 0 || dup2(null_fd, STDOUT_FILENO) < 0 ||
      dup2(err_fd, STDERR_FILENO) < 0)
    _exit(127);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execv("/proc/self/exe", argv);
  _exit(127);
}

/* The last line the probe wrote on stderr, its "fsrun: " dropped; what it exited with otherwise. */
static char *probe_reason(int err_fd, int status) {
  char buf[PROBE_REASON_MAX + 1];
  off_t size = lseek(err_fd, 0, SEEK_END);
  off_t from = size > PROBE_REASON_MAX ? size - PROBE_REASON_MAX : 0;
  ssize_t n = size > 0 ? pread(err_fd, buf, (size_t)(size - from), from) : 0;
  char *line;
  if (n < 0)
    n = 0;
  buf[n] = '\0';
  while (n > 0 && buf[n - 1] == '\n')
    buf[--n] = '\0';
  line = strrchr(buf, '\n');
  line = line ? line + 1 : buf;
  if (strncmp(line, "fsrun: ", 7) == 0)
    line += 7;
  if (*line != '\0')
    return xstrdup(line);
  if (WIFSIGNALED(status))
    return xasprintf("the probe was killed by signal %d", WTERMSIG(status));
  return xasprintf("the probe exited %d", WEXITSTATUS(status));
}

/* What the probe said on its report pipe: whether its set-up failed for want of a host capability.
 * Read once it has exited (O_NONBLOCK: its watchdog may still hold the write end). */
static bool probe_reported_cannot(int report_fd) {
  char buf[16];
  ssize_t n = read(report_fd, buf, sizeof(buf) - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, PROBE_CANNOT) == 0;
}

/* Runs the probe over dir (dir/state its state root, dir/wt its worktree); its wait status, or -1
 * with *why set. *cannot: it said its set-up failed for want of a host capability. */
static int run_probe(const struct fsrun_context *ctx, const oci_policy *policy, const char *dir,
                     const char *id, int64_t timeout_ms, int err_fd, bool *cannot, char **why) {
  cleanup_free char *json_err = NULL;
  cleanup_free char *json = probe_policy_json(policy, &json_err);
  cleanup_free char *state_root = xasprintf("%s/state", dir);
  cleanup_free char *worktree = xasprintf("%s/wt", dir);
  cleanup_free char **argv = NULL;
  cleanup_close int policy_fd = -1;
  cleanup_close int null_fd = -1;
  cleanup_close int report_r = -1;
  cleanup_close int report_w = -1;
  int report[2];
  char timeout_buf[24], report_buf[24];
  int status = 0;
  pid_t parent = getpid(), child;

  if (json == NULL) {
    *why = xasprintf("the probe's policy: %s", json_err);
    return -1;
  }
  policy_fd = text_memfd(json, why);
  if (policy_fd < 0)
    return -1;
  null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) {
    *why = xasprintf("the probe: /dev/null: %s", strerror(errno));
    return -1;
  }
  if (pipe2(report, O_CLOEXEC | O_NONBLOCK) < 0) {
    *why = xasprintf("the probe's report pipe: %s", strerror(errno));
    return -1;
  }
  report_r = report[0];
  report_w = report[1];
  argv = probe_argv(ctx, state_root, worktree, id, timeout_ms, timeout_buf, sizeof(timeout_buf),
                    report_buf, sizeof(report_buf), report_w);
  child = fork();
  if (child < 0) {
    *why = xasprintf("the probe: fork: %s", strerror(errno));
    return -1;
  }
  if (child == 0)
    exec_probe(argv, parent, policy_fd, null_fd, err_fd, report_w);
  while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  *cannot = probe_reported_cannot(report_r);
  return status;
}

/* Reads what make_probe_dir made: 0, or -1 with errno set. */
static int probe_dir_record(int dir, struct probe_dir *made) {
  struct stat d, wt, state;
  if (fstat(dir, &d) < 0 || fstatat(dir, "wt", &wt, AT_SYMLINK_NOFOLLOW) < 0 ||
      fstatat(dir, "state", &state, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  *made = (struct probe_dir){.dev = d.st_dev,
                             .dir = d.st_ino,
                             .wt = wt.st_ino,
                             .state = state.st_ino,
                             .dir_mtime = d.st_mtim,
                             .wt_mtime = wt.st_mtim,
                             .wt_ctime = wt.st_ctim};
  return 0;
}

/* The probe's directory: `<state root>/.sandbox-probe.<run's id>`, made here and never taken over
 * (mkdir fails on what exists), so nothing the run's command could have prepared is used. Named
 * after the run so that the clean-up of a killed run (sandbox_watchdog_cleanup) finds it. 0, or -1
 * with *why set. */
static int make_probe_dir(const char *state_root, const char *name, struct probe_dir *made,
                          char **why) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int root = -1;
  cleanup_close int dir = -1;
  if (mkdir_p_at(AT_FDCWD, state_root, 0700, &err) < 0) {
    *why = xasprintf("the probe's directory: %s", err->msg);
    return -1;
  }
  root = open(state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || mkdirat(root, name, 0700) < 0) {
    *why = xasprintf("the probe's directory `%s/%s`: %s", state_root, name, strerror(errno));
    return -1;
  }
  dir = openat(root, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 || mkdirat(dir, "wt", 0700) < 0 || mkdirat(dir, "state", 0700) < 0 ||
      probe_dir_record(dir, made) < 0) {
    *why = xasprintf("the probe's directory `%s/%s`: %s", state_root, name, strerror(errno));
    remove_tree_at(root, name, PROBE_MAX_DEPTH);
    return -1;
  }
  return 0;
}

static bool same_time(struct timespec a, struct timespec b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether the directory dirfd holds nothing but the entries named in keep (NULL-ended). */
static bool holds_only(int dirfd, const char *const *keep) {
  cleanup_dir DIR *d = opendir_at(dirfd);
  struct dirent *e;
  if (d == NULL)
    return false;
  while ((e = readdir(d)) != NULL) {
    const char *const *k = keep;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    while (*k != NULL && strcmp(*k, e->d_name) != 0)
      k++;
    if (*k == NULL)
      return false;
  }
  return true;
}

/* Whether the probe's directory is still what make_probe_dir made: the same directory holding the
 * same `wt` and `state` and nothing else, `wt` empty and never written (its mtime and ctime: an
 * entry made and removed again counts), nothing made or removed beside them. What someone else
 * wrote there may be what failed the probe. */
static bool probe_dir_untouched(const char *state_root, const char *name,
                                const struct probe_dir *made) {
  static const char *const top[] = {"wt", "state", NULL};
  static const char *const none[] = {NULL};
  cleanup_close int root = open(state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int dir = -1;
  cleanup_close int wt = -1;
  struct probe_dir now;
  if (root < 0)
    return false;
  dir = openat(root, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 || probe_dir_record(dir, &now) < 0)
    return false;
  wt = openat(dir, "wt", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return wt >= 0 && now.dev == made->dev && now.dir == made->dir && now.wt == made->wt &&
         now.state == made->state && same_time(now.dir_mtime, made->dir_mtime) &&
         same_time(now.wt_mtime, made->wt_mtime) && same_time(now.wt_ctime, made->wt_ctime) &&
         holds_only(dir, top) && holds_only(wt, none);
}

/* Removes the probe's directory (never leaving its filesystem: what the probe's state root holds
 * is a few files and directories, the shared bundle's and the container's). */
static void remove_probe_dir(const char *state_root, const char *name) {
  cleanup_close int root = open(state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return;
  remove_tree_at(root, name, PROBE_MAX_DEPTH);
  if (faccessat(root, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    log_warning("sandbox: the probe's directory `%s/%s` could not be removed", state_root, name);
}

void sandbox_probe_remove_leftover(const struct fsrun_context *ctx, const char *id) {
  cleanup_free char *name = xasprintf(SANDBOX_PROBE_DIR_PREFIX "%s", id);
  cleanup_free char *state = xasprintf("%s/%s/state", ctx->state_root, name);
  struct fsrun_context probe_ctx = *ctx;
  cleanup_dir DIR *d = opendir(state);
  struct dirent *e;
  probe_ctx.state_root = state;
  probe_ctx.state_root_held = false;
  /* the probe's own watchdog deletes its container too; whichever comes first, the cgroup and
   * the init go before the state that names them */
  while (d != NULL && (e = readdir(d)) != NULL) {
    cleanup_error fsrun_error_t err = NULL;
    if (e->d_name[0] != '.')
      (void)container_delete(&probe_ctx, e->d_name, true, &err);
  }
  remove_probe_dir(ctx->state_root, name);
}

enum sandbox_probe sandbox_probe_host(const struct fsrun_context *ctx, const oci_policy *policy,
                                      const char *id, int64_t deadline, char **why) {
  cleanup_free char *name = xasprintf(SANDBOX_PROBE_DIR_PREFIX "%s", id);
  cleanup_free char *dir = xasprintf("%s/%s", ctx->state_root, name);
  cleanup_close int err_fd = -1;
  struct probe_dir made;
  int64_t timeout_ms = 0;
  bool cannot = false, untouched;
  ssize_t writable;
  int status;

  *why = NULL;
  if (deadline > 0) {
    timeout_ms = deadline - monotonic_ms();
    if (timeout_ms <= 0) {
      *why = xstrdup("no time was left to probe the host");
      return SANDBOX_PROBE_UNDECIDED;
    }
  }
  err_fd = memfd_create("fsrun-probe-stderr", MFD_CLOEXEC);
  if (err_fd < 0) {
    *why = xasprintf("the probe's stderr: %s", strerror(errno));
    return SANDBOX_PROBE_UNDECIDED;
  }
  /* a run refuses such a policy before its set-up (sandbox_check_state_root); the probe asks
   * again so that it never runs over a state root someone's command could write */
  if (sandbox_writable_over_state_root(policy, ctx->state_root, &writable) < 0) {
    *why = xasprintf("whether policy writablePaths reach the state root `%s`: %s", ctx->state_root,
                     strerror(errno));
    return SANDBOX_PROBE_UNDECIDED;
  }
  if (writable >= 0) {
    *why = xasprintf("the state root `%s` is reached by policy writablePaths[%zd] `%s`, which the "
                     "command can write, so it could have failed the probe",
                     ctx->state_root, writable, policy->writable_paths.items[writable]);
    return SANDBOX_PROBE_UNDECIDED;
  }
  if (make_probe_dir(ctx->state_root, name, &made, why) < 0)
    return SANDBOX_PROBE_UNDECIDED;
  status = run_probe(ctx, policy, dir, id, timeout_ms, err_fd, &cannot, why);
  untouched = status >= 0 && probe_dir_untouched(ctx->state_root, name, &made);
  remove_probe_dir(ctx->state_root, name);
  if (status < 0)
    return SANDBOX_PROBE_UNDECIDED;
  if (!untouched) {
    cleanup_free char *line = probe_reason(err_fd, status);
    *why = xasprintf("the probe's directory `%s` was written by someone else during the probe (%s)",
                     dir, line);
    return SANDBOX_PROBE_UNDECIDED;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return SANDBOX_PROBE_WORKS;
  *why = probe_reason(err_fd, status);
  /* only its container's set-up failing for want of a host capability says the host cannot; an
   * exec failure (127), bad options (1), a kill, a timeout, a disk or a limit the command may
   * have filled, a file in the way say nothing of the host */
  if (WIFEXITED(status) && WEXITSTATUS(status) == 125 && cannot)
    return SANDBOX_PROBE_CANNOT;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 125) {
    char *said = xasprintf("its set-up failed, not for want of a host capability: %s", *why);
    free(*why);
    *why = said;
  }
  return SANDBOX_PROBE_UNDECIDED;
}
