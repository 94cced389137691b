/* sync_send_by_write: a message a process under a seccomp filter refusing sendmsg can still send,
 * and that still names its sender (SO_PASSCRED). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sync.h"
#include "tap.h"

/* sendmsg answers EPERM, everything else is allowed */
static int refuse_sendmsg(void) {
  struct sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendmsg, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fprog = {.len = sizeof(prog) / sizeof(prog[0]), .filter = prog};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog);
}

/* exit status: 0 sent by write, 2 no filter, 3 sendmsg was not refused, 4 the write failed */
__attribute__((noreturn)) static void sender(int sock) {
  if (refuse_sendmsg() < 0)
    _exit(2);
  if (sync_send(sock, SYNC_ERROR, 0, NULL, 0, -1) != -EPERM)
    _exit(3);
  _exit(sync_send_by_write(sock, SYNC_CREATED, "4026531836", 10) == 0 ? 0 : 4);
}

int main(void) {
  struct sync_msg msg = {.fd = -1};
  int sock[2], status = -1;
  pid_t child;

  if (sync_socketpair(sock, NULL) < 0 || sync_pass_credentials(sock[0], NULL) < 0)
    return 1;
  child = fork();
  if (child == 0) {
    close(sock[0]);
    sender(sock[1]);
  }
  close(sock[1]);
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    tap_skip("no seccomp filter here");
    return tap_done();
  }
  tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "under a filter refusing sendmsg, sync_send fails and sync_send_by_write sends (0x%x)",
         status);
  tap_ok(sync_recv(sock[0], &msg) == 0 && msg.type == SYNC_CREATED && msg.errno_value == 0,
         "the message arrives whole");
  tap_ok(msg.data != NULL && msg.len == 10 && strcmp(msg.data, "4026531836") == 0,
         "with its payload");
  tap_ok(msg.sender == child, "and names its sender (%d, want %d)", (int)msg.sender, (int)child);
  tap_ok(msg.fd < 0, "and no fd");
  sync_msg_clear(&msg);

  signal(SIGPIPE, SIG_IGN);
  tap_ok(sync_send_by_write(sock[0], SYNC_CREATED, NULL, 0) == -EPIPE, "a peer gone gives -EPIPE");
  return tap_done();
}
