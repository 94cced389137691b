/* clone_successor with told: the sibling sends nothing to the runtime before its pid did.
 * The caller is held at its report (sendmsg) by a seccomp listener we hold, while the sibling runs
 * on: it must first wait (read told), never send first. A `create` that took the
 * sibling's SYNC_CREATED for the first init's lost the container's output and status
 * (security-ptrace.bats, the ASan suite, session 18). And the runtime's end (SO_PASSCRED) names
 * each message's sender: the caller's report is the caller's, the sibling's message the
 * sibling's, whatever either says. Deterministic: no timing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clone.h"
#include "sync.h"
#include "tap.h"

/* sendmsg and read go to our listener; the rest is allowed */
static int notify_sendmsg_and_read(void) {
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendmsg, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
  struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                      &prog);
}

/* The first init's part: the filter, its fds to the test (info), then the clone. The sibling
 * sends "sibling" and exits. */
__attribute__((noreturn)) static void caller(int sync_fd, int info) {
  int told[2], listener;
  long pid;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, told) < 0 ||
      (listener = notify_sendmsg_and_read()) < 0)
    _exit(2);
  if (dprintf(info, "%d %d\n", listener, told[0]) < 0)
    _exit(2);
  close(info);
  pid = clone_successor(sync_fd, false, told);
  if (pid == 0)
    _exit(sync_send(sync_fd, SYNC_GO, 0, "sibling", 7, -1) < 0 ? 3 : 0);
  _exit(pid > 0 ? 0 : 4);
}

struct watch {
  pid_t caller, sibling;
  int caller_pidfd, sibling_pidfd, told_fd;
  bool held, released, sibling_waited, sibling_sent_first;
  struct seccomp_notif held_notif;
};

static int answer(int listener, const struct seccomp_notif *n) {
  struct seccomp_notif_resp r = {.id = n->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
  return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

/* One notification: the caller's first sendmsg is held until the sibling has shown what it does
 * first (a read of told, or a sendmsg of its own). */
static void take_notification(struct watch *w, int listener) {
  struct seccomp_notif n;
  memset(&n, 0, sizeof(n));
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
    return;
  if ((pid_t)n.pid == w->caller && n.data.nr == SYS_sendmsg && !w->held) {
    w->held = true;
    w->held_notif = n;
    if (w->sibling_waited || w->sibling_sent_first) {
      w->released = true;
      (void)answer(listener, &w->held_notif);
    }
    return;
  }
  if ((pid_t)n.pid != w->caller && w->sibling == 0) {
    w->sibling = (pid_t)n.pid;
    w->sibling_pidfd = (int)syscall(SYS_pidfd_open, w->sibling, 0);
  }
  if ((pid_t)n.pid == w->sibling && !w->sibling_waited && !w->sibling_sent_first) {
    if (n.data.nr == SYS_sendmsg)
      w->sibling_sent_first = true;
    else if ((int)n.data.args[0] == w->told_fd)
      w->sibling_waited = true;
  }
  (void)answer(listener, &n);
  if (w->held && !w->released && (w->sibling_waited || w->sibling_sent_first)) {
    w->released = true;
    (void)answer(listener, &w->held_notif);
  }
}

static bool exited(int pidfd) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  return pidfd >= 0 && poll(&p, 1, 0) == 1;
}

static void watch(struct watch *w, int listener) {
  while (!exited(w->caller_pidfd) || !exited(w->sibling_pidfd)) {
    struct pollfd p[3] = {{.fd = listener, .events = POLLIN},
                          {.fd = w->caller_pidfd, .events = POLLIN},
                          {.fd = w->sibling_pidfd, .events = POLLIN}};
    if (poll(p, w->sibling_pidfd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
      return;
    if (p[0].revents & POLLIN)
      take_notification(w, listener);
  }
}

static void check_order(int sync_fd, const struct watch *w) {
  struct sync_msg first = {.fd = -1}, second = {.fd = -1};
  bool got = sync_recv(sync_fd, &first) == 0 && sync_recv(sync_fd, &second) == 0;
  tap_ok(got && first.type == SYNC_INIT_PID && first.data != NULL &&
             strtol(first.data, NULL, 10) == w->sibling,
         "the runtime reads the sibling's pid first");
  tap_ok(got && second.type == SYNC_GO && second.data != NULL &&
             strcmp(second.data, "sibling") == 0,
         "then the sibling's message");
  if (!tap_ok(got && first.sender == w->caller && second.sender == w->sibling,
              "the kernel names each sender: the report the caller's, the message the sibling's"))
    tap_diag("  senders %d, %d; caller %d, sibling %d", (int)first.sender, (int)second.sender,
             (int)w->caller, (int)w->sibling);
  sync_msg_clear(&first);
  sync_msg_clear(&second);
}

int main(void) {
  struct watch w = {.caller_pidfd = -1, .sibling_pidfd = -1};
  int sync[2], info[2], listener_in_caller, listener, status, r;
  FILE *in;

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0 || pipe(info) < 0 ||
      sync_pass_credentials(sync[0], NULL) < 0)
    return 1;
  w.caller = fork();
  if (w.caller == 0) {
    close(sync[0]);
    close(info[0]);
    caller(sync[1], info[1]);
  }
  close(sync[1]);
  close(info[1]);
  in = fdopen(info[0], "r");
  if (in == NULL || fscanf(in, "%d %d", &listener_in_caller, &w.told_fd) != 2) {
    tap_skip("no seccomp listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) here");
    return tap_done();
  }
  fclose(in);
  w.caller_pidfd = (int)syscall(SYS_pidfd_open, w.caller, 0);
  listener = (int)syscall(SYS_pidfd_getfd, w.caller_pidfd, listener_in_caller, 0);
  if (listener < 0) {
    tap_skip("pidfd_getfd refused here");
    kill(w.caller, SIGKILL);
    return tap_done();
  }
  watch(&w, listener);
  tap_ok(w.sibling > 0 && !w.sibling_sent_first,
         "with the caller held at its report, the sibling sends nothing");
  tap_ok(w.sibling_waited, "it waits for the word on told");
  check_order(sync[0], &w);
  status = -1;
  r = waitpid(w.caller, &status, __WALL);
  if (!tap_ok(r == w.caller && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller exits 0"))
    tap_diag("  waitpid %d, status 0x%x, %s", r, status, strerror(errno));
  status = -1;
  r = w.sibling > 0 ? waitpid(w.sibling, &status, __WALL) : -1;
  if (!tap_ok(r == w.sibling && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the sibling (our child: CLONE_PARENT) exits 0"))
    tap_diag("  waitpid %d, status 0x%x, %s", r, status, strerror(errno));
  return tap_done();
}
