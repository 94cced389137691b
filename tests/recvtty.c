/* recvtty SOCKET [--input TEXT] [--timeout SECONDS]: a console-socket receiver for the terminal
 * tests. Listens on SOCKET, accepts one connection, receives the pty master (SCM_RIGHTS), writes
 * TEXT (if any) to it and copies everything the container writes to stdout until the pty closes.
 * Prints "recvtty: ready" on stderr once listening. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "unix-listen.h"

static int receive_fd(int conn) {
  char data[256];
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = control.buf,
                      .msg_controllen = sizeof(control.buf)};
  struct cmsghdr *c;
  int fd = -1;
  if (recvmsg(conn, &mh, 0) < 0)
    return -1;
  for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

int main(int argc, char **argv) {
  const char *input = NULL;
  int timeout = 30, sock, conn, master;
  char buf[4096];

  if (argc < 2) {
    fprintf(stderr, "usage: recvtty SOCKET [--input TEXT] [--timeout SECONDS]\n");
    return 2;
  }
  for (int i = 2; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--input") == 0)
      input = argv[i + 1];
    else if (strcmp(argv[i], "--timeout") == 0)
      timeout = atoi(argv[i + 1]);
  }
  sock = unix_listen_at(argv[1], SOCK_STREAM);
  if (sock < 0) {
    perror("recvtty: listen");
    return 1;
  }
  fprintf(stderr, "recvtty: ready\n");
  alarm((unsigned)timeout);
  conn = accept(sock, NULL, NULL);
  if (conn < 0) {
    perror("recvtty: accept");
    return 1;
  }
  master = receive_fd(conn);
  close(conn);
  if (master < 0) {
    fprintf(stderr, "recvtty: no fd received\n");
    return 1;
  }
  if (!isatty(master)) {
    fprintf(stderr, "recvtty: the received fd is not a terminal\n");
    return 1;
  }
  if (input != NULL && write(master, input, strlen(input)) < 0) {
    perror("recvtty: write");
    return 1;
  }
  for (;;) {
    ssize_t n = read(master, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) /* EIO once every slave is closed */
      break;
    fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
  }
  return 0;
}
