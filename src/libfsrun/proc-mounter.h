/* A pid namespace joined late (ns_plan.pid_join_late) from a user namespace: the kernel mounts a
 * procfs for a user namespace's mount namespace only where one is already fully visible, which
 * after pivot_root nothing is. The first init (in the runtime's pid namespace, invisible to the
 * joined one) keeps a mount namespace that still shows the host's /proc and, there, turns the
 * filesystem contexts the late init makes (its pid namespace's procfs) into detached mounts,
 * which the late init attaches in the container's root. The late init never holds that mount
 * namespace. See docs/process-model.md. */
#ifndef FSRUN_PROC_MOUNTER_H
#define FSRUN_PROC_MOUNTER_H

#include "error.h"

/* The first init, after cloning the late init: enters mntns_fd and answers each request on sock
 * (a procfs context, the mount attributes) with the detached mount, until the late init closes
 * its end. Never returns. */
__attribute__((noreturn)) void proc_mounter_serve(int mntns_fd, int sock);

/* The late init: a detached procfs mount of our pid namespace with options data (comma-separated,
 * may be NULL) and the MOUNT_ATTR_* attrs, made through the mounter on sock. */
int proc_mounter_mount(int sock, const char *data, unsigned int attrs, fsrun_error_t *err);

/* ns_plan.pid_join_early: the late init's user namespace has no right to a procfs of its pid
 * namespace, the runtime has. The late init asks the runtime for a proc context of the joined pid
 * namespace (procfs's pidns=), sets the options data on it, and gets back the detached mount with
 * attrs; the runtime creates and mounts only its own context, never an fd the init sends. */
int proc_runtime_mount(int sync_fd, const char *data, unsigned int attrs, fsrun_error_t *err);
/* Runtime side of one SYNC_PROCFS request ("context", then "mount ATTRS"): *context is the
 * context handed out (-1: none); *fd_out the fd to send back (the caller closes it). */
int proc_runtime_serve(int pidns_fd, int *context, const char *request, int *fd_out,
                       fsrun_error_t *err);

#endif
