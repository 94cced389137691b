/* Whether an exec into a container left a process of its own running (exec-leftovers.c). */
#ifndef FSRUN_EXEC_LEFTOVERS_H
#define FSRUN_EXEC_LEFTOVERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "pidfd-compat.h"

/* After the exec's process was reaped: false when no process is in the container's pid namespace
 * (or one below it) but its init (init_pid, the state's pid) and the init's session (config.json's
 * process); true when one is, or when that cannot be told (no pid namespace of its own, a helper
 * that could not join it, processes made there during every count). Counted over a procfs of
 * that namespace, else over the host's /proc. ns: the init's, its pidfd (to number the init in
 * that procfs) and namespaces to join; ns_flags: the container's CLONE_NEW* flags, as
 * init_ns_open took them. */
bool exec_left_running(const struct init_ns *ns, pid_t init_pid, int ns_flags);

#endif
