#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

extern char **environ;

/* The state JSON goes into the pipe before the hook starts, so a hook that never reads its stdin
 * cannot block us and one that exits early cannot raise SIGPIPE in us. */
static int make_stdin(const char *json, size_t len, fsrun_error_t *err) {
  int fds[2];
  cleanup_close int wfd = -1;
  if (pipe2(fds, O_CLOEXEC) < 0)
    return fsrun_error_errno(err, "create a pipe for the hook's stdin");
  wfd = fds[1];
  if (len > 65536 && fcntl(wfd, F_SETPIPE_SZ, (int)len) < 0) {
    close(fds[0]);
    return fsrun_error_errno(err, "size the hook's stdin pipe for %zu bytes", len);
  }
  if (safe_write_all(wfd, json, len) < 0) {
    close(fds[0]);
    return fsrun_error_errno(err, "write the state to the hook's stdin");
  }
  return fds[0];
}

/* Without a pidfd: the child's exit, polled (nothing is reaped) */
static bool child_exits_within_polled(pid_t pid, long long ms) {
  const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};
  int64_t deadline = monotonic_ms() + ms;
  siginfo_t info;
  for (;;) {
    memset(&info, 0, sizeof(info));
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 && errno != EINTR)
      return true; /* nothing to wait for: the caller's waitpid says why */
    if (info.si_pid == pid)
      return true;
    if (monotonic_ms() >= deadline)
      return false;
    nanosleep(&tick, NULL);
  }
}

/* true when pid, our own unreaped child, exits within ms (nothing is reaped) */
static bool child_exits_within(pid_t pid, long long ms) {
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  int r;
  ms = ms > 0x7fffffff ? 0x7fffffff : ms; /* about 24 days: poll's bound */
  if (pidfd < 0) /* ENOSYS (valgrind 3.19, a seccomp profile), or out of fds */
    return child_exits_within_polled(pid, ms);
  do
    r = poll(&p, 1, (int)ms);
  while (r < 0 && errno == EINTR);
  return r != 0;
}

/* hooks_spawn_with_mask's mask; unset, a hook starts with ours */
static sigset_t spawn_mask;
static bool spawn_mask_set;

void hooks_spawn_with_mask(const sigset_t *mask) {
  spawn_mask = *mask;
  spawn_mask_set = true;
}

static int spawn_hook(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                      char *const argv[], char *const envp[]) {
  posix_spawnattr_t attr;
  int r;
  if (!spawn_mask_set)
    return posix_spawn(pid, path, fa, NULL, argv, envp);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &spawn_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  r = posix_spawn(pid, path, fa, &attr, argv, envp);
  posix_spawnattr_destroy(&attr);
  return r;
}

static int run_one(const oci_hook *h, const char *kind, size_t index, const char *state_json,
                   fsrun_error_t *err) {
  size_t json_len = state_json ? strlen(state_json) : 0;
  cleanup_close int in = make_stdin(state_json ? state_json : "", json_len, err);
  posix_spawn_file_actions_t fa;
  /* oci_strv arrays are not NULL-terminated */
  cleanup_free char **argv = xmalloc0(sizeof(char *) * (h->args.len + 2));
  cleanup_free char **own_env = h->env.len > 0 ? xmalloc0(sizeof(char *) * (h->env.len + 1)) : NULL;
  char **envp = own_env ? own_env : environ;
  pid_t pid;
  int status = 0, r;

  if (in < 0)
    return fsrun_error_wrap(err, "%s hook #%zu (`%s`)", kind, index, h->path);
  if (h->args.len > 0)
    memcpy(argv, h->args.items, sizeof(char *) * h->args.len);
  else
    argv[0] = h->path;
  if (own_env)
    memcpy(own_env, h->env.items, sizeof(char *) * h->env.len);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
  r = spawn_hook(&pid, h->path, &fa, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  if (r != 0)
    return fsrun_error_make(err, r, "%s hook #%zu (`%s`): exec", kind, index, h->path);

  if (h->has_timeout && h->timeout > 0 && !child_exits_within(pid, h->timeout * 1000LL)) {
    /* our own child, not reaped yet: its pid is no other process's, kill(2) is as safe as a
     * pidfd and works where pidfd_send_signal answers ENOSYS */
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
    return fsrun_error_make(err, ETIMEDOUT,
                            "%s hook #%zu (`%s`): killed after its timeout of %lld s", kind, index,
                            h->path, (long long)h->timeout);
  }
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return fsrun_error_errno(err, "%s hook #%zu (`%s`): wait", kind, index, h->path);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (WIFEXITED(status))
    return fsrun_error_make(err, 0, "%s hook #%zu (`%s`): exited with status %d", kind, index,
                            h->path, WEXITSTATUS(status));
  return fsrun_error_make(err, 0, "%s hook #%zu (`%s`): killed by signal %d", kind, index, h->path,
                          WTERMSIG(status));
}

int hooks_run(const oci_hook_list *hooks, const char *kind, const char *state_json,
              fsrun_error_t *err) {
  for (size_t i = 0; hooks != NULL && i < hooks->len; i++)
    if (run_one(&hooks->items[i], kind, i, state_json, err) < 0)
      return fsrun_error_code(err);
  return 0;
}

void hooks_run_warn(const oci_hook_list *hooks, const char *kind, const char *state_json) {
  for (size_t i = 0; hooks != NULL && i < hooks->len; i++) {
    cleanup_error fsrun_error_t err = NULL;
    if (run_one(&hooks->items[i], kind, i, state_json, &err) < 0)
      log_warning("%s", err->msg);
  }
}
