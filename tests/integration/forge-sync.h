/* One message of the runtime's sync protocol (src/libfsrun/sync.c), as the tests' forgers send it
 * on a socket they took from a container's init. */
#ifndef FORGE_SYNC_H
#define FORGE_SYNC_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

enum { SYNC_ERROR = 2, SYNC_INIT_PID = 6 }; /* src/libfsrun/sync.h */

static int send_msg(int sock, uint32_t type, const char *payload) {
  struct {
    uint32_t type;
    int32_t errno_value;
  } h = {type, 0};
  struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, strlen(payload)}};
  struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
  return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

#endif
