/* forge-created: a prestart hook standing in for a process that took the container init's sync
 * socket (the late init of a joined pid namespace, seized by a watcher with CAP_SYS_PTRACE, holds
 * the first init's end before its pid reached the runtime). Takes the socket of the init that the
 * state on stdin names (pidfd_getfd) and queues, ahead of the init's own messages, "the container
 * is created" (SYNC_CREATED): a runtime that took it for the init's would end `create` there,
 * with the init half set up. */
#define _GNU_SOURCE
#include "forge-sync.h"

int main(void) {
  int sock = take_init_socket();
  if (sock < 0)
    return -sock;
  return send_msg(sock, SYNC_CREATED, "4026531836") < 0 ? 5 : 0;
}
