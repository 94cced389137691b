/* process.terminal: the pty is created inside the container (its /dev/ptmx, after pivot); the
 * master goes to the caller over --console-socket (SCM_RIGHTS, as runc does: conmon and the
 * containerd shim expect exactly that), or `run` relays it to its own stdio. */
#ifndef FSRUN_TERMINAL_H
#define FSRUN_TERMINAL_H

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "error.h"
#include "oci.h"

/* In the init: opens /dev/ptmx, unlocks it and opens the slave through the master (TIOCGPTPEER:
 * no path lookup in /dev/pts). Sets the size when rows/cols are non-zero. */
int terminal_open_pty(unsigned rows, unsigned cols, int *master, int *slave, fsrun_error_t *err);
/* In the init (or exec's child), before it changes user: the slave becomes the process's, as runc
 * makes it: owner uid, mode 0620 (owner rw, group w: `write`/`wall`). The group stays the one
 * devpts gave the pty when that is not 0: its gid= mount option, the tty group (5) in the default
 * spec, which is how a config names its tty group (the image's /etc/group is not consulted).
 * A devpts without gid= leaves the creator's group (0): then the process's gid. */
int terminal_set_owner(int slave, uid_t uid, gid_t gid, fsrun_error_t *err);
/* process.terminal in the init (or exec's child), still privileged: opens the pty, sends the
 * master to the runtime (SYNC_PTY on sync_fd), gives the slave to p's user (terminal_set_owner)
 * and puts it on stdin, stdout and stderr. Returns the slave, or a negative code (EPIPE: the
 * runtime is gone). */
int terminal_give_process(const oci_process *p, int sync_fd, fsrun_error_t *err);
/* In the process that execs: a new session with the slave as its controlling tty. */
int terminal_take_controlling(int slave, fsrun_error_t *err);

/* Connects to the console socket (a unix stream socket path). */
int terminal_connect_console_socket(const char *path, fsrun_error_t *err);
/* Sends fd with SCM_RIGHTS; the payload is name, as runc sends it. */
int terminal_send_fd(int sock, int fd, const char *name, fsrun_error_t *err);

/* Relay state for `run` with a terminal and no console socket. */
struct terminal_relay {
  int master;
  bool stdin_open;
  bool raw;
  struct termios saved;
};
/* Puts stdin in raw mode when it is a tty and copies its window size to the pty. */
void terminal_relay_init(struct terminal_relay *r, int master);
/* Copies the caller's window size to the pty (on SIGWINCH). */
void terminal_relay_resize(struct terminal_relay *r);
/* Moves what is ready: stdin -> master, master -> stdout. from_master: the master is readable.
 * Returns false once the master reported EOF/EIO. */
bool terminal_relay_pump(struct terminal_relay *r, bool stdin_ready, bool master_ready);
/* Drains the master's remaining output and restores the caller's terminal. */
void terminal_relay_finish(struct terminal_relay *r);

#endif
