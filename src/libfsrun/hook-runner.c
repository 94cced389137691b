#include "hook-runner.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "clone.h"
#include "hooks.h"
#include "sync.h"
#include "utils.h"

#define INIT_NAMESPACES                                                                            \
  (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

/* The first init's namespaces (its root before pivot_root: its mount namespace's), its cwd
 * (opened while we may still look at a non-dumpable process), and root of its user namespace with
 * as_root. */
static int enter_init(int init_pidfd, pid_t init, bool as_root, fsrun_error_t *err) {
  cleanup_close int cwd = -1;
  char path[48];
  snprintf(path, sizeof(path), "/proc/%d/cwd", (int)init);
  cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0)
    return fsrun_error_errno(err, "createContainer hooks: open the init's cwd");
  if (setns(init_pidfd, INIT_NAMESPACES) < 0)
    return fsrun_error_errno(err, "createContainer hooks: enter the init's namespaces");
  if (fchdir(cwd) < 0)
    return fsrun_error_errno(err, "createContainer hooks: enter the init's cwd");
  if (as_root && process_become_userns_root(err) < 0)
    return fsrun_error_wrap(err, "createContainer hooks");
  return 0;
}

__attribute__((noreturn)) static void serve(int sock, pid_t init, const oci_hook_list *hooks,
                                            bool as_root) {
  cleanup_error fsrun_error_t err = NULL;
  struct sync_msg msg = {.fd = -1};
  int init_pidfd;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != init)
    _exit(1);
  init_pidfd = (int)syscall(SYS_pidfd_open, init, 0);
  if (init_pidfd < 0 || sync_recv(sock, &msg) < 0)
    _exit(1);
  if (enter_init(init_pidfd, init, as_root, &err) == 0)
    (void)hooks_run(hooks, "createContainer", msg.data, &err);
  if (err != NULL)
    (void)sync_send(sock, SYNC_ERROR, err->status, err->msg, strlen(err->msg), -1);
  else
    (void)sync_send(sock, SYNC_GO, 0, NULL, 0, -1);
  _exit(0);
}

int hook_runner_start(struct hook_runner *r, const oci_hook_list *hooks, bool as_root,
                      fsrun_error_t *err) {
  struct fsrun_clone_args args = {.exit_signal = SIGCHLD};
  pid_t init = getpid();
  int sock[2];
  long pid;
  if (sync_socketpair(sock, err) < 0)
    return fsrun_error_code(err);
  pid = fsrun_clone(&args);
  if (pid < 0) {
    close(sock[0]);
    close(sock[1]);
    return fsrun_error_errno(err, "start the createContainer hook runner");
  }
  if (pid == 0) {
    close(sock[1]);
    serve(sock[0], init, hooks, as_root);
  }
  close(sock[0]);
  r->sock = sock[1];
  r->pid = (pid_t)pid;
  return 0;
}

int hook_runner_run(struct hook_runner *r, const char *state_json, fsrun_error_t *err) {
  struct sync_msg reply = {.fd = -1};
  const char *state = state_json != NULL ? state_json : "";
  int status, got;
  got = sync_send(r->sock, SYNC_GO, 0, state, strlen(state), -1) < 0 ? -1
                                                                     : sync_recv(r->sock, &reply);
  close(r->sock);
  r->sock = -1;
  while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got < 0)
    return fsrun_error_make(err, EPIPE, "createContainer hooks: the hook runner is gone");
  if (reply.type == SYNC_ERROR) {
    fsrun_error_take(err, reply.errno_value, steal_ptr(&reply.data));
    sync_msg_clear(&reply);
    return fsrun_error_code(err);
  }
  sync_msg_clear(&reply);
  return 0;
}
