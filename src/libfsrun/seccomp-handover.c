/* The seccomp listener's hand-over. See seccomp-handover.h.
 *
 * Why a courier: from the load on, any syscall of ours may be notified, and a notified syscall
 * waits for a listener, which has no fd until the runtime has it. Sending the fd ourselves
 * (sendmsg), telling anyone that it exists (write, futex) or even closing it could wait forever.
 * The runtime taking it with pidfd_getfd needs no syscall of ours, but an ordinary user's runtime
 * may do that only while we are dumpable: inside the container's root, where a process with
 * CAP_SYS_PTRACE and our uid could attach and take the fd too. The courier needs nothing from us
 * after the load: the kernel installs the fd in the table it shares, at the number we predicted,
 * only once the filter is attached, and a filter loaded by its parent is not its own. It inherits
 * our non-dumpable mm flags and our mm's user namespace (the runtime's), so the container can
 * reach it no more than us, and it is reaped before we go on. */
#include "seccomp-handover.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clone.h"
#include "sync.h"

/* fd is a seccomp listener: only a listener knows this ioctl, and for a notification id that is
 * not pending it answers ENOENT (any other fd: ENOTTY, EBADF for none or an O_PATH one) */
static bool is_listener(int fd) {
  uint64_t id = 0;
  return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 || errno == ENOENT;
}

/* The courier: waits for the listener at fd_number in the shared table, sends it, exits. Another
 * fd there (one our parent opens and closes again before its load, as the credentials' check of
 * /proc/self/setgroups does) is not taken for it. It dies with us (its parent), and we kill it if
 * the load fails, so the wait is bounded by our own. */
__attribute__((noreturn)) static void courier_main(int sync_fd, int fd_number, pid_t parent) {
  /* ~20 us asked, the timer slack (50 us) on top: the load is a few syscalls away */
  const struct timespec step = {.tv_sec = 0, .tv_nsec = 20000};
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
    _exit(1);
  while (!is_listener(fd_number))
    nanosleep(&step, NULL);
  _exit(sync_send(sync_fd, SYNC_SECCOMP_FD, 0, NULL, 0, fd_number) < 0 ? 1 : 0);
}

/* true when the courier exited 0; exit signal 0 and __WALL: a SIGCHLD the caller left ignored
 * does not reap it behind our back */
static bool reap_courier(pid_t courier) {
  int status;
  while (waitpid(courier, &status, __WALL) < 0)
    if (errno != EINTR)
      return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int seccomp_handover_start(const struct fsrun_seccomp *filter, int sync_fd,
                           struct seccomp_handover *h, fsrun_error_t *err) {
  struct fsrun_clone_args args = {.flags = CLONE_FILES};
  h->courier = 0;
  if (!seccomp_has_notify(filter))
    return 0;
  h->parent = getpid();
  /* the lowest free number, which seccomp(2) gives the listener: nothing opens an fd in between
   * (the clone makes no pidfd, the courier opens nothing) */
  h->fd_number = fcntl(sync_fd, F_DUPFD_CLOEXEC, 0);
  if (h->fd_number < 0)
    return fsrun_error_errno(err, "find the seccomp listener's fd number");
  close(h->fd_number);
  h->courier = fsrun_clone(&args);
  if (h->courier < 0)
    return fsrun_error_errno(err, "clone the seccomp listener's courier");
  if (h->courier == 0)
    courier_main(sync_fd, h->fd_number, h->parent);
  return 0;
}

int seccomp_handover_load(const struct fsrun_seccomp *filter, struct seccomp_handover *h,
                          fsrun_error_t *err) {
  int notify_fd = -1;
  if (seccomp_load_filter(filter, &notify_fd, err) < 0) {
    if (h->courier > 0) {
      kill((pid_t)h->courier, SIGKILL);
      (void)reap_courier((pid_t)h->courier);
    }
    return fsrun_error_code(err);
  }
  if (h->courier <= 0)
    return 0;
  /* Filtered from here. Nothing to report an error with that could not itself wait: the runtime
   * sees us die (and the courier dies with us). */
  if (notify_fd != h->fd_number || !reap_courier((pid_t)h->courier))
    _exit(1);
  close(notify_fd);
  return 0;
}

int seccomp_load_handing_over(const struct fsrun_seccomp *filter, int sync_fd, fsrun_error_t *err) {
  struct seccomp_handover h;
  if (seccomp_handover_start(filter, sync_fd, &h, err) < 0)
    return fsrun_error_code(err);
  return seccomp_handover_load(filter, &h, err);
}

int seccomp_handover_wait(int sync_fd, int listener) {
  for (;;) {
    struct pollfd p[2] = {{.fd = sync_fd, .events = POLLIN}, {.fd = listener, .events = POLLIN}};
    if (poll(p, 2, -1) < 0 && errno != EINTR)
      return -errno;
    if (p[0].revents != 0)
      return 1;
    if (p[1].revents != 0)
      return 0;
  }
}
