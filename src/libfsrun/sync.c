#include "sync.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "utils.h"

struct sync_header {
  uint32_t type;
  int32_t errno_value;
};

int sync_socketpair(int fds[2], fsrun_error_t *err) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    return fsrun_error_errno(err, "create the sync socketpair");
  return 0;
}

int sync_pass_credentials(int sock, fsrun_error_t *err) {
  int on = 1;
  if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0)
    return fsrun_error_errno(err, "set SO_PASSCRED on the sync socket");
  return 0;
}

int sync_sendv(int sock, struct iovec *iov, size_t iovcnt, int fd) {
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr mh = {.msg_iov = iov, .msg_iovlen = iovcnt};
  ssize_t r;

  if (fd >= 0) {
    struct cmsghdr *c;
    memset(&control, 0, sizeof(control));
    mh.msg_control = control.buf;
    mh.msg_controllen = sizeof(control.buf);
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  do
    r = sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  return 0;
}

int sync_send(int sock, sync_msg_type type, int errno_value, const void *data, size_t len, int fd) {
  struct sync_header h = {.type = type, .errno_value = errno_value};
  struct iovec iov[2] = {{.iov_base = &h, .iov_len = sizeof(h)},
                         {.iov_base = (void *)data, .iov_len = data ? len : 0}};
  return sync_sendv(sock, iov, 2, fd);
}

int sync_send_by_write(int sock, sync_msg_type type, const void *data, size_t len) {
  struct sync_header h = {.type = type};
  struct iovec iov[2] = {{.iov_base = &h, .iov_len = sizeof(h)},
                         {.iov_base = (void *)data, .iov_len = data ? len : 0}};
  ssize_t r;
  do
    r = writev(sock, iov, 2);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int sync_recv_type(int sock, uint32_t *type) {
  struct sync_header h;
  ssize_t r;
  do
    r = read(sock, &h, sizeof(h));
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return errno == ECONNRESET ? -EPIPE : -errno;
  if (r == 0)
    return -EPIPE;
  if ((size_t)r < sizeof(h))
    return -EPROTO;
  *type = h.type;
  return 0;
}

/* the fd (SCM_RIGHTS) and the sender (SCM_CREDENTIALS) of a received message */
static void take_control(struct msghdr *mh, struct sync_msg *msg) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
      memcpy(&msg->fd, CMSG_DATA(c), sizeof(int));
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
        c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
      struct ucred cred;
      memcpy(&cred, CMSG_DATA(c), sizeof(cred));
      msg->sender = cred.pid;
    }
  }
}

int sync_recv(int sock, struct sync_msg *msg) {
  struct sync_header h;
  union {
    char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
    struct cmsghdr align;
  } control;
  struct iovec iov[2];
  struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
  cleanup_free char *payload = NULL;
  ssize_t size, r;

  memset(msg, 0, sizeof(*msg));
  msg->fd = -1;
  /* the packet's full size, so the payload buffer fits it */
  do
    size = recv(sock, &h, sizeof(h), MSG_PEEK | MSG_TRUNC);
  while (size < 0 && errno == EINTR);
  if (size < 0)
    return errno == ECONNRESET ? -EPIPE : -errno;
  if (size == 0)
    return -EPIPE;
  if ((size_t)size < sizeof(h))
    return -EPROTO;
  payload = malloc((size_t)size - sizeof(h) + 1);
  if (payload == NULL)
    return -ENOMEM;
  iov[0] = (struct iovec){.iov_base = &h, .iov_len = sizeof(h)};
  iov[1] = (struct iovec){.iov_base = payload, .iov_len = (size_t)size - sizeof(h)};
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof(control.buf);
  do
    r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  if (r != size)
    return -EPROTO;
  take_control(&mh, msg);
  msg->type = h.type;
  msg->errno_value = h.errno_value;
  msg->len = (size_t)size - sizeof(h);
  payload[msg->len] = '\0';
  if (msg->len > 0)
    msg->data = steal_ptr(&payload);
  return 0;
}

void sync_msg_clear(struct sync_msg *msg) {
  free(msg->data);
  msg->data = NULL;
  if (msg->fd >= 0)
    close(msg->fd);
  msg->fd = -1;
}

bool sync_peer_gone(int sock) {
  struct pollfd p = {.fd = sock, .events = POLLRDHUP};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}
