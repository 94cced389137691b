/* forge-init-pid VICTIM: a prestart hook standing in for a process that took the container init's
 * sync socket (a watcher with CAP_SYS_PTRACE can, with pidfd_getfd, once the late init of a joined
 * pid namespace is visible to it). Reads the state on stdin for the init's pid, takes its
 * SOCK_SEQPACKET socket with pidfd_getfd and queues, ahead of the init's own messages, "the init
 * is VICTIM" (SYNC_INIT_PID) and an error (SYNC_ERROR), so that a runtime that believed the first
 * would signal VICTIM while it undoes the create. */
#define _GNU_SOURCE
#include "forge-sync.h"

int main(int argc, char **argv) {
  int sock = argc == 2 ? take_init_socket() : -2;
  if (sock < 0)
    return -sock;
  return send_msg(sock, SYNC_INIT_PID, argv[1]) < 0 || send_msg(sock, SYNC_ERROR, "forged") < 0 ? 5
                                                                                                : 0;
}
