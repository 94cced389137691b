/* A seccomp agent for the integration tests: listens on a unix socket (linux.seccomp.listenerPath),
 * receives the notify fd and the containerProcessState JSON from the runtime, then answers the
 * intercepted syscalls until the container is gone.
 *
 *   seccomp-listener SOCKET STATE_OUT CALLS_OUT [ERRNO [HOLD]]
 *
 * STATE_OUT gets the JSON as received; CALLS_OUT one line per intercepted syscall ("mkdir" or the
 * syscall number). mkdir/mkdirat are answered with -ERRNO, or with a fake success (0, nothing
 * created) when ERRNO is 0 or absent; any other intercepted syscall is let through (CONTINUE).
 * With HOLD, the first other syscall is held: the caller's pid (in our pid namespace) goes to the
 * file HOLD, and the answer waits until HOLD.go exists (at most 60 s), so that a test can look at
 * the caller while it is stopped in that syscall. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "unix-listen.h"

static int die(const char *what) {
  fprintf(stderr, "seccomp-listener: %s: %s\n", what, strerror(errno));
  return 1;
}

static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* HOLD: publish pid (written aside, then renamed: the test never reads half a line), then wait
 * for HOLD.go, polling every 10 ms for at most 60 s */
static void hold(const char *path, unsigned pid) {
  char tmp[4096], go[4096], line[32];
  const struct timespec step = {.tv_sec = 0, .tv_nsec = 10000000};
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  snprintf(go, sizeof(go), "%s.go", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  snprintf(line, sizeof(line), "%u\n", pid);
  if (fd < 0 || write_all(fd, line, strlen(line)) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
    die("write HOLD");
    return;
  }
  for (int i = 0; i < 6000 && access(go, F_OK) < 0; i++)
    nanosleep(&step, NULL);
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 6) {
    fprintf(stderr, "usage: %s SOCKET STATE_OUT CALLS_OUT [ERRNO [HOLD]]\n", argv[0]);
    return 2;
  }
  const char *socket_path = argv[1];
  int answer_errno = argc >= 5 ? atoi(argv[4]) : 0;
  const char *hold_path = argc == 6 ? argv[5] : NULL;

  int calls = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (calls < 0)
    return die("open CALLS_OUT");
  int srv = unix_listen_at(socket_path, SOCK_STREAM | SOCK_CLOEXEC);
  if (srv < 0)
    return die("listen");
  int conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    return die("accept");

  /* The fd arrives with the first bytes of the JSON; the rest follows until the runtime closes. */
  static char text[1 << 16];
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control.buf,
                       .msg_controllen = sizeof(control.buf)};
  ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    return die("recvmsg");
  size_t len = (size_t)n;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == NULL || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) {
    fprintf(stderr, "seccomp-listener: no fd received\n");
    return 1;
  }
  int notify_fd;
  memcpy(&notify_fd, CMSG_DATA(cmsg), sizeof(int));
  while (len < sizeof(text) - 1 && (n = read(conn, text + len, sizeof(text) - 1 - len)) > 0)
    len += (size_t)n;
  close(conn);
  close(srv);
  unlink(socket_path);

  int state = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (state < 0 || write_all(state, text, len) < 0)
    return die("write STATE_OUT");
  close(state);

  for (;;) {
    struct pollfd pfd = {.fd = notify_fd, .events = POLLIN};
    if (poll(&pfd, 1, -1) < 0) {
      if (errno == EINTR)
        continue;
      return die("poll");
    }
    if (!(pfd.revents & POLLIN))
      break; /* POLLHUP: every process using the filter is gone */

    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof(req));
    if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
      if (errno == EINTR || errno == ENOENT)
        continue; /* the caller went away before we read it */
      return die("SECCOMP_IOCTL_NOTIF_RECV");
    }
    memset(&resp, 0, sizeof(resp));
    resp.id = req.id;
    char line[64];
    if (req.data.nr == SYS_mkdir || req.data.nr == SYS_mkdirat) {
      snprintf(line, sizeof(line), "mkdir\n");
      resp.error = answer_errno ? -answer_errno : 0;
      resp.val = 0;
    } else {
      snprintf(line, sizeof(line), "%d\n", req.data.nr);
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      if (hold_path != NULL) {
        hold(hold_path, req.pid);
        hold_path = NULL;
      }
    }
    write_all(calls, line, strlen(line));
    if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
      return die("SECCOMP_IOCTL_NOTIF_SEND");
  }
  return 0;
}
