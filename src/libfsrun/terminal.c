#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sync.h"
#include "utils.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

int terminal_open_pty(unsigned rows, unsigned cols, int *master, int *slave, fsrun_error_t *err) {
  cleanup_close int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int unlock = 0, s;
  if (m < 0)
    return fsrun_error_errno(err, "open `/dev/ptmx` in the container");
  if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
    return fsrun_error_errno(err, "unlock the pty");
  s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0)
    return fsrun_error_errno(err, "open the pty slave");
  if (rows > 0 || cols > 0) {
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (ioctl(s, TIOCSWINSZ, &ws) < 0) {
      int saved = errno;
      close(s);
      return fsrun_error_make(err, saved, "process.consoleSize: set the pty size");
    }
  }
  *slave = s;
  *master = steal_fd(&m);
  return 0;
}

int terminal_set_owner(int slave, uid_t uid, gid_t gid, fsrun_error_t *err) {
  struct stat st;
  gid_t group;
  if (fstat(slave, &st) < 0)
    return fsrun_error_errno(err, "stat the pty slave");
  group = st.st_gid != 0 ? st.st_gid : gid;
  if ((st.st_uid != uid || st.st_gid != group) && fchown(slave, uid, group) < 0)
    return fsrun_error_errno(err, "process.user: give the pty to uid %u gid %u", (unsigned)uid,
                             (unsigned)group);
  if ((st.st_mode & 07777) != 0620 && fchmod(slave, 0620) < 0)
    return fsrun_error_errno(err, "chmod the pty slave to 0620");
  return 0;
}

int terminal_take_controlling(int slave, fsrun_error_t *err) {
  if (setsid() < 0)
    return fsrun_error_errno(err, "setsid");
  if (ioctl(slave, TIOCSCTTY, 0) < 0)
    return fsrun_error_errno(err, "make the pty the controlling terminal");
  return 0;
}

int terminal_give_process(const oci_process *p, int sync_fd, fsrun_error_t *err) {
  cleanup_close int master = -1, slave = -1;
  if (terminal_open_pty(p->has_console_size ? p->console_height : 0,
                        p->has_console_size ? p->console_width : 0, &master, &slave, err) < 0)
    return fsrun_error_code(err);
  if (sync_send(sync_fd, SYNC_PTY, 0, NULL, 0, master) < 0)
    return fsrun_error_make(err, EPIPE, "send the pty to the runtime");
  if (terminal_set_owner(slave, p->user.uid, p->user.gid, err) < 0)
    return fsrun_error_code(err);
  for (int fd = 0; fd < 3; fd++)
    if (dup2(slave, fd) < 0)
      return fsrun_error_errno(err, "dup the pty onto fd %d", fd);
  return steal_fd(&slave);
}

int terminal_connect_console_socket(const char *path, fsrun_error_t *err) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  cleanup_close int fd = -1;
  cleanup_close int dirfd = -1;
  const char *name = path;
  cleanup_free char *dir = NULL;

  /* long paths: connect through /proc/self/fd/N of the directory */
  if (strlen(path) >= sizeof(addr.sun_path)) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
      return fsrun_error_make(err, ENAMETOOLONG, "console socket `%s`", path);
    dir = strndup(path, (size_t)(slash - path));
    dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
      return fsrun_error_errno(err, "console socket `%s`", path);
    free(dir);
    dir = xasprintf("/proc/self/fd/%d/%s", dirfd, slash + 1);
    name = dir;
    if (strlen(name) >= sizeof(addr.sun_path))
      return fsrun_error_make(err, ENAMETOOLONG, "console socket `%s`", path);
  }
  strcpy(addr.sun_path, name);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fsrun_error_errno(err, "console socket: socket");
  if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
    return fsrun_error_errno(err, "connect to the console socket `%s`", path);
  return steal_fd(&fd);
}

int terminal_send_fd(int sock, int fd, const char *name, fsrun_error_t *err) {
  struct iovec iov = {.iov_base = (void *)name, .iov_len = strlen(name)};
  int r = sync_sendv(sock, &iov, 1, fd);
  if (r < 0)
    return fsrun_error_make(err, -r, "send the pty master over the console socket");
  return 0;
}

/* --- relay ------------------------------------------------------------------------------------ */

void terminal_relay_init(struct terminal_relay *r, int master) {
  memset(r, 0, sizeof(*r));
  r->master = master;
  r->stdin_open = true;
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &r->saved) == 0) {
    struct termios raw = r->saved;
    cfmakeraw(&raw);
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
      r->raw = true;
  }
  terminal_relay_resize(r);
}

void terminal_relay_resize(struct terminal_relay *r) {
  struct winsize ws;
  if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
    ioctl(r->master, TIOCSWINSZ, &ws);
}

/* Copies one buffer's worth; false on EOF or error of the source. */
static bool copy_once(int from, int to) {
  char buf[16384];
  ssize_t n;
  do
    n = read(from, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return true;
  if (n <= 0)
    return false;
  if (to == STDOUT_FILENO || to == STDERR_FILENO) {
    (void)safe_write_all(to, buf, (size_t)n);
    return true;
  }
  /* the master is non-blocking: wait for room rather than drop input */
  for (ssize_t done = 0; done < n;) {
    ssize_t w = write(to, buf + done, (size_t)(n - done));
    if (w < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = to, .events = POLLOUT};
      poll(&p, 1, 100);
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return true;
    done += w;
  }
  return true;
}

bool terminal_relay_pump(struct terminal_relay *r, bool stdin_ready, bool master_ready) {
  if (stdin_ready && r->stdin_open && !copy_once(STDIN_FILENO, r->master))
    r->stdin_open = false;
  if (master_ready && !copy_once(r->master, STDOUT_FILENO))
    return false;
  return true;
}

void terminal_relay_finish(struct terminal_relay *r) {
  /* what the process wrote just before it exited is still in the pty */
  for (int i = 0; i < 1024; i++) {
    struct pollfd p = {.fd = r->master, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
      break;
    if (!copy_once(r->master, STDOUT_FILENO))
      break;
  }
  if (r->raw)
    tcsetattr(STDIN_FILENO, TCSANOW, &r->saved);
  r->raw = false;
}
