/* `exec`, the parent's side of the setup: the child's messages on the sync socket until execve.
 *
 * The child (invisible to the container) sends the pty master (SYNC_PTY) and, through its
 * courier, the seccomp listener of a filter that needs CAP_SYS_ADMIN (SYNC_SECCOMP_FD) before it
 * clones the process that execs into the container's pid namespace; then it reports that
 * process's pid (SYNC_INIT_PID) and exits. The process that execs sends the listener of a filter
 * with noNewPrivileges, then SYNC_EXEC_READY (an EOF from then on is its execve) or SYNC_ERROR.
 * That process is the container's to seize (docs/process-model.md), so it may send anything on the
 * socket it inherits: every message is taken only in its place and once, and a pid only when it is
 * a child of ours (CLONE_PARENT) other than the child.
 *
 * The pid file: with go_after_pid_file (a foreground exec), it is written when the process that
 * execs is known and has sent SYNC_EXEC_READY, and only then does that process go on to execve
 * (SYNC_GO; it dies at the EOF of our death instead). So the file exists before the command runs: a
 * caller that kills fsrun exec and then finds no pid file knows that the command never ran and
 * never will (docs/process-model.md, "The pid file of a foreground exec"). Otherwise (--detach) it
 * is written after execve, as runc does. A pid file written for a process that then failed is
 * removed. */
#ifndef FSRUN_EXEC_FOLLOW_H
#define FSRUN_EXEC_FOLLOW_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "live.h"
#include "oci.h"

struct exec_follow {
  int sync_fd;
  int console_fd; /* --console-socket, or -1 */
  const oci_config *config;
  const struct live_container *c;
  bool pid_late;          /* the child clones the process that execs, which reports SYNC_INIT_PID */
  pid_t child;            /* in: the child; out: the process that execs */
  int pidfd;              /* the same as a pidfd (ours: replaced, the old one closed) */
  int master;             /* out: the pty master without a console socket, to relay, or -1 */
  const char *pid_file;   /* --pid-file, or NULL */
  bool go_after_pid_file; /* the process that execs waits for SYNC_GO (exec_child.wait_go) */
};

/* Until EOF: the pty master to the console socket or into f->master, the seccomp listener to
 * linux.seccomp.listenerPath (with the pid of the process that execs, once known), the switch to
 * that process, the pid file. 0 when execve succeeded; else the child's error, or what went wrong
 * here (and no pid file). */
int exec_follow_setup(struct exec_follow *f, fsrun_error_t *err);

#endif
