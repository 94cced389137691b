/* restore of a container with process.terminal: the checkpoint declared its pty slave external
 * (its master was outside, with the console socket's receiver); restore makes a new pty, gives
 * criu the slave under the old key (--inherit-fd fd[N]:tty[RDEV:DEV]) and hands the master over
 * as create does: to --console-socket, or to a foreground restore's own stdio. */
#include "criu-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "terminal.h"
#include "utils.h"

/* The slave's path, for criu to bind on /dev/console: a path of criu's mount namespace (a bind
 * of /proc/PID/fd/N would cross mount namespaces, which the kernel refuses) */
static int find_slave_path(struct criu_terminal *t, fsrun_error_t *err) {
  struct stat by_fd, by_path;
  int index;
  if (ioctl(t->master, TIOCGPTN, &index) < 0 || fstat(t->slave, &by_fd) < 0)
    return fsrun_error_errno(err, "restore: the new pty");
  snprintf(t->slave_path, sizeof(t->slave_path), "/dev/pts/%d", index);
  if (stat(t->slave_path, &by_path) < 0 || by_path.st_rdev != by_fd.st_rdev ||
      by_path.st_dev != by_fd.st_dev)
    return fsrun_error_make(err, 0,
                            "restore: the pty made through /dev/ptmx is not `%s`: /dev/pts is "
                            "not the devpts of /dev/ptmx",
                            t->slave_path);
  return 0;
}

int criu_terminal_open(const oci_config *config, const char *console_socket,
                       struct criu_terminal *t, fsrun_error_t *err) {
  const oci_process *p = config->process;
  const oci_linux *lx = config->linux_;
  t->master = t->slave = t->console = -1;
  if (p == NULL || !p->terminal)
    return 0;
  /* the host's devpts: the container's own instance is restored only with its mounts */
  if (terminal_open_pty(p->has_console_size ? p->console_height : 0,
                        p->has_console_size ? p->console_width : 0, &t->master, &t->slave, err) < 0)
    return fsrun_error_wrap(err, "restore");
  if (find_slave_path(t, err) < 0)
    return fsrun_error_code(err);
  /* the process's own, as create makes it (a uid of a user namespace is not the host's) */
  if ((lx == NULL || lx->n_uid_mappings == 0) &&
      terminal_set_owner(t->slave, p->user.uid, p->user.gid, err) < 0)
    return fsrun_error_wrap(err, "restore");
  if (console_socket != NULL) {
    t->console = terminal_connect_console_socket(console_socket, err);
    if (t->console < 0)
      return fsrun_error_wrap(err, "restore");
  }
  return 0;
}

void criu_terminal_inherit(struct criu_argv *a, const struct criu_terminal *t, const char *key) {
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->v[i], "--inherit-fd") == 0 && i + 1 < a->n && strstr(a->v[i + 1], key) != NULL)
      return; /* fds 0-2 are one pty: one key */
  criu_argv_add(a, "--inherit-fd");
  criu_argv_addf(a, "fd[%d]:%s", t->slave, key);
}

void criu_terminal_console(struct criu_argv *a, const struct criu_terminal *t) {
  if (t->slave < 0)
    return;
  criu_argv_add(a, "--ext-mount-map");
  criu_argv_addf(a, "%s:%s", CRIU_CONSOLE, t->slave_path);
}

int criu_terminal_for_criu(const struct criu_terminal *t) {
  /* criu takes the slave by its number in criu's own fd table */
  if (t->slave >= 0 && fcntl(t->slave, F_SETFD, 0) < 0)
    return -1;
  return 0;
}

int criu_terminal_hand_over(struct criu_terminal *t, fsrun_error_t *err) {
  if (t->slave >= 0)
    close(steal_fd(&t->slave)); /* the restored process holds its own */
  if (t->console < 0 || t->master < 0)
    return 0;
  if (terminal_send_fd(t->console, t->master, "/dev/ptmx", err) < 0)
    return fsrun_error_wrap(err, "restore");
  close(steal_fd(&t->master));
  return 0;
}

void criu_terminal_clear(struct criu_terminal *t) {
  if (t->master >= 0)
    close(t->master);
  if (t->slave >= 0)
    close(t->slave);
  if (t->console >= 0)
    close(t->console);
  t->master = t->slave = t->console = -1;
}
