/* Loading the container's seccomp filter in a runtime process (the init, exec's child) and handing
 * a NOTIFY profile's listener fd to the runtime, with the process never dumpable. */
#ifndef FSRUN_SECCOMP_HANDOVER_H
#define FSRUN_SECCOMP_HANDOVER_H

#include "error.h"
#include "seccomp.h"

/* Loads filter into the calling process. With a NOTIFY profile the listener fd reaches the runtime
 * as SYNC_SECCOMP_FD (the fd itself) on sync_fd before this returns, and is closed here: a courier
 * cloned before the load (sharing our fd table, carrying no filter) finds it in the table and
 * sends it, so that none of our syscalls after the load (any of which the profile may notify)
 * stands between the listener and its fd. The courier is gone when this returns. */
int seccomp_load_handing_over(const struct fsrun_seccomp *filter, int sync_fd, fsrun_error_t *err);

#endif
