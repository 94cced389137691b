/* One message of the runtime's sync protocol (src/libfsrun/sync.c), as the tests' forgers send it
 * on a socket they took from a container's init. */
#ifndef FORGE_SYNC_H
#define FORGE_SYNC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { SYNC_ERROR = 2, SYNC_INIT_PID = 6, SYNC_CREATED = 7 }; /* src/libfsrun/sync.h */

static int send_msg(int sock, uint32_t type, const char *payload) {
  struct {
    uint32_t type;
    int32_t errno_value;
  } h = {type, 0};
  struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, strlen(payload)}};
  struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
  return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* For a hook: the SOCK_SEQPACKET socket of the init that the state on stdin names, taken with
 * pidfd_getfd; a negative exit status for main when there is none. */
static int take_init_socket(void) {
  char state[65536], *p;
  ssize_t n = read(0, state, sizeof(state) - 1);
  int pidfd, type;
  socklen_t len = sizeof(type);
  if (n <= 0)
    return -2;
  state[n] = '\0';
  p = strstr(state, "\"pid\":");
  if (p == NULL)
    return -3;
  pidfd = (int)syscall(SYS_pidfd_open, atoi(p + 6), 0);
  if (pidfd < 0)
    return -4;
  for (int fd = 0; fd < 1024; fd++) {
    int sock = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (sock < 0)
      continue;
    if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET)
      return sock;
    close(sock);
  }
  return -6;
}

#endif
