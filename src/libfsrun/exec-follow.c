/* The parent's side of exec's setup. See exec-follow.h. */
#include "exec-follow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone.h"
#include "foreground.h"
#include "pidfd-compat.h"
#include "seccomp-handover.h"
#include "seccomp.h"
#include "status.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

struct follow {
  struct exec_follow *f;
  bool ready;   /* SYNC_EXEC_READY */
  bool execs;   /* an EOF from now on is execve: ready, and let go when it waits for SYNC_GO */
  bool written; /* the pid file */
  bool got_pty, got_listener, got_pid;
  int listener; /* the seccomp listener, held until the process that execs has a pid, or -1 */
};

/* "exit status N" or "killed by signal N (NAME)" */
static char *describe_exit(const siginfo_t *info) {
  if (info->si_code == CLD_EXITED)
    return xasprintf("exit status %d", info->si_status);
  return xasprintf("killed by signal %d (%s)", info->si_status, strsignal(info->si_status));
}

/* The socket reached EOF before SYNC_EXEC_READY: the child died during setup (its socket closes
 * a moment before it can be reaped: this waits for that). */
static int report_died_before_execve(int pidfd, const char *command, fsrun_error_t *err) {
  siginfo_t info;
  cleanup_free char *how = NULL;
  if (foreground_reap(pidfd, &info) < 0)
    return fsrun_error_make(err, 0, "exec: \"%s\": the process died before execve", command);
  how = describe_exit(&info);
  return fsrun_error_make(err, 0, "exec: \"%s\": the process died before execve (%s)", command,
                          how);
}

static int write_pid_file(struct follow *s, fsrun_error_t *err) {
  char buf[32];
  int len = snprintf(buf, sizeof(buf), "%d", (int)s->f->child);
  if (status_write_file_atomic(AT_FDCWD, s->f->pid_file, buf, (size_t)len, 0644, err) < 0)
    return fsrun_error_wrap(err, "--pid-file");
  s->written = true;
  return 0;
}

/* go_after_pid_file: once the process that execs is ready and known (pid_late: its pid came), the
 * pid file, then SYNC_GO */
static int let_go(struct follow *s, fsrun_error_t *err) {
  if (!s->ready || s->execs || (s->f->pid_late && !s->got_pid))
    return 0;
  if (s->f->pid_file != NULL && write_pid_file(s, err) < 0)
    return fsrun_error_code(err);
  if (sync_send(s->f->sync_fd, SYNC_GO, 0, NULL, 0, -1) < 0)
    return report_died_before_execve(s->f->pidfd, s->f->config->process->args.items[0], err);
  s->execs = true;
  return 0;
}

static int unexpected(const struct sync_msg *msg, fsrun_error_t *err) {
  return fsrun_error_make(err, 0, "exec: unexpected message %u from the exec process",
                          (unsigned)msg->type);
}

static int forward_listener(struct follow *s, fsrun_error_t *err) {
  const struct live_container *c = s->f->c;
  const oci_seccomp *sc = s->f->config->linux_->seccomp;
  cleanup_close int fd = steal_fd(&s->listener);
  cleanup_free char *state = status_state_json(&c->st, c->status, c->pid, NULL, false, err);
  if (state == NULL)
    return fsrun_error_code(err);
  return seccomp_send_listener(sc->listener_path, sc->listener_metadata, fd, s->f->child, state,
                               err);
}

/* the pty master, from the child before its clone */
static int take_pty(struct follow *s, struct sync_msg *msg, fsrun_error_t *err) {
  if (s->got_pty || s->got_pid || s->ready || msg->fd < 0 || !s->f->config->process->terminal)
    return unexpected(msg, err);
  s->got_pty = true;
  if (s->f->console_fd >= 0)
    return terminal_send_fd(s->f->console_fd, msg->fd, "/dev/ptmx", err);
  s->f->master = steal_fd(&msg->fd);
  return 0;
}

/* the listener, from the courier of the child before its clone (without noNewPrivileges) or of
 * the process that execs (seccomp-handover.h): held until that process has a pid (the listener's
 * state names it) */
static int take_listener(struct follow *s, struct sync_msg *msg, fsrun_error_t *err) {
  const oci_linux *lx = s->f->config->linux_;
  if (s->got_listener || s->ready || lx == NULL || lx->seccomp == NULL)
    return unexpected(msg, err);
  if (msg->fd < 0)
    return fsrun_error_make(err, 0, "linux.seccomp.listenerPath: the exec process sent no fd");
  s->got_listener = true;
  s->listener = steal_fd(&msg->fd);
  return s->f->pid_late && !s->got_pid ? 0 : forward_listener(s, err);
}

/* pid_late: the child hands over to its sibling in the pid namespace, our child too (its pid
 * cannot be reused before we reap it), and exits. A process of the container that seized that
 * sibling could name any process here, which we would then signal: only our own child is taken. */
static int take_pid(struct follow *s, struct sync_msg *msg, fsrun_error_t *err) {
  pid_t pid = msg->data != NULL ? (pid_t)strtol(msg->data, NULL, 10) : 0;
  siginfo_t info;
  int pidfd;
  if (!s->f->pid_late || s->got_pid || pid <= 0 || pid == s->f->child)
    return unexpected(msg, err);
  pidfd = pidfd_own_child_or(pid, steal_fd(&msg->fd));
  if (pidfd < 0)
    return fsrun_error_errno(err, "exec: the exec process's pid %d is not the runtime's child",
                             (int)pid);
  s->got_pid = true;
  foreground_reap(s->f->pidfd, &info);
  close(s->f->pidfd);
  s->f->pidfd = pidfd;
  s->f->child = pid;
  if (s->listener >= 0 && forward_listener(s, err) < 0)
    return fsrun_error_code(err);
  return s->f->go_after_pid_file ? let_go(s, err) : 0;
}

/* 1 with the next message, 0 at EOF (or when the socket fails: the child is gone either way), or
 * a negative code. A listener held back goes to listenerPath first when a notification waits on
 * it: the child's next system calls are the filter's too, and a notified one would wait for the
 * listener forever (the listener then learns the child's pid). */
static int next_message(struct follow *s, struct sync_msg *msg, fsrun_error_t *err) {
  int r = s->listener >= 0 ? seccomp_handover_wait(s->f->sync_fd, s->listener) : 1;
  if (r < 0)
    return fsrun_error_make(err, -r, "exec: wait for the exec process");
  if (r == 0 && forward_listener(s, err) < 0)
    return fsrun_error_code(err);
  return sync_recv(s->f->sync_fd, msg) == 0 ? 1 : 0;
}

static int take_message(struct follow *s, struct sync_msg *msg, fsrun_error_t *err) {
  switch (msg->type) {
  case SYNC_EXEC_READY:
    if (s->ready)
      return unexpected(msg, err);
    s->ready = true;
    s->execs = !s->f->go_after_pid_file;
    return s->execs ? 0 : let_go(s, err);
  case SYNC_ERROR:
    return fsrun_error_take(err, msg->errno_value, steal_ptr(&msg->data));
  case SYNC_PTY:
    return take_pty(s, msg, err);
  case SYNC_SECCOMP_FD:
    return take_listener(s, msg, err);
  case SYNC_INIT_PID:
    return take_pid(s, msg, err);
  default:
    return unexpected(msg, err);
  }
}

int exec_follow_setup(struct exec_follow *f, fsrun_error_t *err) {
  struct follow s = {.f = f, .listener = -1};
  int r;
  f->master = -1;
  for (;;) {
    struct sync_msg msg = {.fd = -1};
    r = next_message(&s, &msg, err);
    if (r == 0) /* EOF: execve closed the socket, or the child died */
      r = s.execs ? 0 : report_died_before_execve(f->pidfd, f->config->process->args.items[0], err);
    if (r == 0 && f->pid_file != NULL && !s.written)
      r = write_pid_file(&s, err); /* --detach: after execve, as runc */
    if (r <= 0)
      break;
    r = take_message(&s, &msg, err);
    sync_msg_clear(&msg);
    if (r < 0)
      break;
  }
  if (s.listener >= 0)
    close(s.listener);
  /* the caller must not take the pid of a process that failed for the command's */
  if (r < 0 && s.written)
    (void)unlink(f->pid_file);
  return r;
}
