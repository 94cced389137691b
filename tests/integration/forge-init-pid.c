/* forge-init-pid VICTIM: a prestart hook standing in for a process that took the container init's
 * sync socket (a watcher with CAP_SYS_PTRACE can, with pidfd_getfd, once the late init of a joined
 * pid namespace is visible to it). Reads the state on stdin for the init's pid, takes its
 * SOCK_SEQPACKET socket with pidfd_getfd and queues, ahead of the init's own messages, "the init
 * is VICTIM" (SYNC_INIT_PID) and an error (SYNC_ERROR), so that a runtime that believed the first
 * would signal VICTIM while it undoes the create. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "forge-sync.h"

int main(int argc, char **argv) {
  char state[65536], *p;
  ssize_t n = read(0, state, sizeof(state) - 1);
  int pidfd, type;
  socklen_t len = sizeof(type);
  if (argc != 2 || n <= 0)
    return 2;
  state[n] = '\0';
  p = strstr(state, "\"pid\":");
  if (p == NULL)
    return 3;
  pidfd = (int)syscall(SYS_pidfd_open, atoi(p + 6), 0);
  if (pidfd < 0)
    return 4;
  for (int fd = 0; fd < 1024; fd++) {
    int sock = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (sock < 0)
      continue;
    if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET)
      return send_msg(sock, SYNC_INIT_PID, argv[1]) < 0 || send_msg(sock, SYNC_ERROR, "forged") < 0
                 ? 5
                 : 0;
    close(sock);
  }
  return 6;
}
