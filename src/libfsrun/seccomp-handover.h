/* Loading the container's seccomp filter in a runtime process (the init, exec's child) and handing
 * a NOTIFY profile's listener fd to the runtime, with the process never dumpable. */
#ifndef FSRUN_SECCOMP_HANDOVER_H
#define FSRUN_SECCOMP_HANDOVER_H

#include <sys/types.h>

#include "error.h"
#include "seccomp.h"

/* Loads filter into the calling process. With a NOTIFY profile the listener fd reaches the runtime
 * as SYNC_SECCOMP_FD (the fd itself) on sync_fd before this returns, and is closed here: a courier
 * cloned before the load (sharing our fd table, carrying no filter) finds it in the table and
 * sends it, so that none of our syscalls after the load (any of which the profile may notify)
 * stands between the listener and its fd. The courier is gone when this returns. */
int seccomp_load_handing_over(const struct fsrun_seccomp *filter, int sync_fd, fsrun_error_t *err);

/* The same in two steps, for a caller that must clone the courier before it enters a pid
 * namespace (its children are born there) and load after: the courier would otherwise be born
 * visible to the container, with the privilege the load needs (or, with no_new_privs, unfiltered).
 * The listener's fd number is predicted: an fd opened in between must be closed again before the
 * load, and none closed that was open at start (the courier takes only a listener at that
 * number). start does nothing without a NOTIFY profile; load kills and reaps the courier when it
 * fails. */
struct seccomp_handover {
  long courier; /* its pid, or 0 */
  int fd_number;
  pid_t parent;
};
int seccomp_handover_start(const struct fsrun_seccomp *filter, int sync_fd,
                           struct seccomp_handover *h, fsrun_error_t *err);
int seccomp_handover_load(const struct fsrun_seccomp *filter, struct seccomp_handover *h,
                          fsrun_error_t *err);

/* The runtime's side, holding a listener fd back until it knows the pid that the listener's state
 * names (the process it was loaded in hands over to another): 1 when sync_fd has a message (or its
 * EOF) to read, 0 when a notification waits on listener first (one of the sender's system calls,
 * which would wait for the listener forever: forward it now), or a negative errno. */
int seccomp_handover_wait(int sync_fd, int listener);

#endif
