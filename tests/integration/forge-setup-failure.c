/* forge-setup-failure MARKER STATUS: the command of a sandbox that forges "the set-up failed". It
 * takes every SOCK_SEQPACKET socket the sandbox's pid 1 holds (pidfd_getfd: pid 1 is dumpable, so
 * that `fsrun exec` can join through it), queues on each a SYNC_ERROR naming the seccomp filter,
 * says so on stderr and exits STATUS. A runtime that believed the error would report a set-up
 * failure, and under --failure-mode fallback-native run the command again natively: there MARKER's
 * directory exists, and it makes MARKER. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "forge-sync.h"

/* Forges on every seqpacket socket of pid 1; returns how many took the message. A refusal of
 * pidfd_getfd other than "no such fd" is said on stderr. */
static int forge(void) {
  int pidfd = (int)syscall(SYS_pidfd_open, 1, 0), sent = 0, refused = 0;
  if (pidfd < 0) {
    perror("forge: pidfd_open(1)");
    return 0;
  }
  for (int n = 0; n < 64; n++) {
    int type = 0, fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
    socklen_t len = sizeof(type);
    if (fd < 0) {
      refused = errno == EBADF ? refused : errno;
      continue;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET &&
        send_msg(fd, SYNC_ERROR, "load the seccomp filter: Function not implemented") == 0)
      sent++;
    close(fd);
  }
  if (refused != 0)
    fprintf(stderr, "forge: pidfd_getfd: %s\n", strerror(refused));
  return sent;
}

int main(int argc, char **argv) {
  char *dir;
  if (argc != 3)
    return 2;
  dir = strdup(argv[1]);
  *strrchr(dir, '/') = '\0';
  if (access(dir, F_OK) == 0) {
    FILE *f = fopen(argv[1], "w");
    fprintf(stderr, "forge: ran natively\n");
    return f != NULL && fclose(f) == 0 ? 0 : 3;
  }
  fprintf(stderr, "forge: sent on %d socket(s) of pid 1\n", forge());
  return atoi(argv[2]);
}
