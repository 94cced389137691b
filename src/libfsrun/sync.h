/* The parent/child sync protocol of `create`: one SOCK_SEQPACKET socketpair, one message per
 * packet (a small header, an optional payload, optionally one fd through SCM_RIGHTS). */
#ifndef FSRUN_SYNC_H
#define FSRUN_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "error.h"

typedef enum {
  SYNC_GO = 1,      /* parent -> child: continue (payload: hook state JSON, may be empty) */
  SYNC_ERROR,       /* child -> parent: setup failed (payload: message, errno in the header) */
  SYNC_MOUNTS_DONE, /* child -> parent: rootfs mounted, run prestart/createRuntime hooks */
  SYNC_PTY,         /* child -> parent: the pty master (fd) */
  SYNC_SECCOMP_FD,  /* child -> parent: the seccomp notify fd, for linux.seccomp.listenerPath */
  SYNC_INIT_PID,    /* intermediate child -> parent: the init's pid (payload, decimal) */
  SYNC_CREATED,     /* child -> parent: ready, about to block on the exec fifo */
  SYNC_IDMAP,       /* child -> parent: idmap this detached tree (fd; payload: mounts[] index) */
  SYNC_EXEC_READY,  /* exec child -> parent: set up; only execve follows */
  SYNC_EXIT_STATUS, /* fsrun's init -> parent, as it exits: the process's wait status (an int) */
  SYNC_BIND_SOURCE, /* child -> parent: open a bind source for me (bind-source.h) */
  SYNC_NAMESPACES,  /* first init -> parent: in its namespaces (ns_plan.pid_join_early) */
  SYNC_PROCFS,      /* late init -> parent: a procfs of the joined pid namespace (proc-mounter.h) */
  SYNC_COMMAND_NEXT, /* fsrun's init -> parent: every filter loaded; the command may exist after */
  SYNC_LIMIT_GAP,    /* child -> parent: a limit the set-up could not put in place (payload: the
                        limit's key, NUL, why); the parent answers GO, or ends the set-up */
} sync_msg_type;

struct sync_msg {
  uint32_t type;
  int32_t errno_value;
  char *data; /* NUL-terminated payload (malloc'd), NULL when empty */
  size_t len;
  int fd; /* received fd or -1 */
  /* the sending process in our pid namespace (SCM_CREDENTIALS: the kernel's, never the sender's
   * word) on a socket of sync_pass_credentials; 0 otherwise, or when it is not in our namespace */
  pid_t sender;
};

/* Both ends are CLOEXEC. */
int sync_socketpair(int fds[2], fsrun_error_t *err);
/* Every message sock receives from now on names its sender (sync_msg.sender): SO_PASSCRED. */
int sync_pass_credentials(int sock, fsrun_error_t *err);
/* Sends one message; fd < 0 sends none. Returns 0 or -errno (EPIPE when the peer is gone; never
 * raises SIGPIPE). */
int sync_send(int sock, sync_msg_type type, int errno_value, const void *data, size_t len, int fd);
/* sync_send without an fd, by writev(2) alone: for a process whose seccomp filter may refuse
 * sendmsg (a profile that lists what its program needs). The receiver's SO_PASSCRED still names
 * the sender. A peer gone gives EPIPE and SIGPIPE (no MSG_NOSIGNAL through writev). */
int sync_send_by_write(int sock, sync_msg_type type, const void *data, size_t len);
/* Sends one packet of iov[0..iovcnt) as it is (no header: another protocol on such a socket), with
 * fd (SCM_RIGHTS) when >= 0. Returns 0 or -errno, as sync_send. */
int sync_sendv(int sock, struct iovec *iov, size_t iovcnt, int fd);
/* Receives one message. Returns 0, -EPIPE when the peer closed its end, or another -errno. */
int sync_recv(int sock, struct sync_msg *msg);
/* Receives one message's type by read(2) alone, for a process whose seccomp filter may refuse
 * recvmsg/recvfrom; a payload or fd is dropped. Returns 0, -EPIPE, or another -errno. */
int sync_recv_type(int sock, uint32_t *type);
void sync_msg_clear(struct sync_msg *msg);
/* The other end is closed (the runtime died): asked without waiting. */
bool sync_peer_gone(int sock);

#endif
