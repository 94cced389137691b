#include "foreground.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidfd-compat.h"
#include "terminal.h"
#include "utils.h"

void foreground_signals(sigset_t *set) {
  static const int keep[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE, SIGTRAP,
                             SIGSYS,  SIGABRT, SIGKILL, SIGSTOP};
  sigfillset(set);
  for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
    sigdelset(set, keep[i]);
}

int foreground_reap(int pidfd, siginfo_t *info) {
  memset(info, 0, sizeof(*info));
  while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, info, WEXITED) < 0) {
    if (errno != EINTR)
      return -errno;
  }
  return 0;
}

int foreground_exit_status(const siginfo_t *info) {
  if (info->si_code == CLD_EXITED)
    return info->si_status;
  return 128 + info->si_status;
}

static void forward_pending(int sfd, int pidfd, struct terminal_relay *relay, bool relaying) {
  struct signalfd_siginfo si;
  while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
    if (si.ssi_signo == SIGCHLD)
      continue;
    if (si.ssi_signo == SIGWINCH && relaying) {
      terminal_relay_resize(relay);
      continue;
    }
    (void)pidfd_signal_child(pidfd, (int)si.ssi_signo);
  }
}

int foreground_wait(int pidfd, int master, const sigset_t *forwarded) {
  siginfo_t info;
  return foreground_wait_info(pidfd, master, forwarded, &info);
}

int foreground_wait_info(int pidfd, int master, const sigset_t *forwarded, siginfo_t *info) {
  return foreground_wait_group(pidfd, 0, master, forwarded, info);
}

/* Only once the process is a zombie of ours: a wait that failed early leaves it running. */
static void end_group(int pidfd, pid_t group) {
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  if (group <= 0 ||
      waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOWAIT | WNOHANG) < 0 ||
      info.si_pid == 0)
    return;
  (void)kill(-group, SIGKILL);
}

int foreground_wait_group(int pidfd, pid_t group, int master, const sigset_t *forwarded,
                          siginfo_t *info) {
  cleanup_close int sfd = signalfd(-1, forwarded, SFD_CLOEXEC | SFD_NONBLOCK);
  struct terminal_relay relay;
  bool relaying = master >= 0;

  if (relaying)
    terminal_relay_init(&relay, master);
  for (;;) {
    struct pollfd fds[4];
    nfds_t n = 0;
    int r;
    fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
    if (relaying) {
      fds[n++] = (struct pollfd){.fd = master, .events = POLLIN};
      if (relay.stdin_open)
        fds[n++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    }
    r = poll(fds, n, -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      break;
    if (fds[1].revents & POLLIN)
      forward_pending(sfd, pidfd, &relay, relaying);
    if (relaying) {
      bool master_ready = (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      bool stdin_ready = n > 3 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR));
      if (!terminal_relay_pump(&relay, stdin_ready, master_ready)) {
        relaying = false;
        terminal_relay_finish(&relay);
      }
    }
    if (fds[0].revents & POLLIN)
      break;
  }
  if (relaying)
    terminal_relay_finish(&relay);
  end_group(pidfd, group);
  if (foreground_reap(pidfd, info) < 0) {
    memset(info, 0, sizeof(*info));
    return 255;
  }
  return foreground_exit_status(info);
}
