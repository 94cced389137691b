/* The egress profile: slirp4netns gives the sandbox's own network namespace a tap device whose
 * traffic it sends out through ordinary sockets of the host, so the command reaches the outside
 * (TCP, UDP, DNS through its forwarder at 10.0.2.3) but nothing bound to the host's loopback, no
 * abstract unix socket of the host (those belong to a network namespace), and none of the host's
 * ports: no port is forwarded in either direction and the gateway does not lead to the host.
 *
 * slirp4netns starts while the container init waits for GO (sandbox_net_attach) and configures
 * the network while the init makes its mounts; the init stops after them, and the command runs
 * only once slirp4netns has said it is ready (sandbox_net_wait_ready): its 3-5 ms start overlaps
 * the mounts instead of coming before them.
 *
 * slirp4netns runs as our child with a parent-death signal and an exit fd (it quits when our end
 * closes), so a SIGKILLed fsrun takes it along; otherwise sandbox_net_kill() kills it once the
 * container's init has been reaped and sandbox_net_reap() waits for it last. tap0 is made
 * persistent before slirp4netns attaches to it: the last close of a tap that is not unregisters
 * it, in the closing process, and that waits for an rcu_barrier (20-30 ms of every egress run's
 * wall, in the helper's death we wait for). A persistent tap goes with the namespace instead, in
 * the kernel's asynchronous clean-up of a namespace nothing holds (tests/bench/README.md, session
 * 20). Why not pasta: see docs/sandbox.md ("Network"). */
#include "sandbox-net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "log.h"
#include "pidfd-compat.h"
#include "utils.h"

/* slirp4netns configures the namespace in milliseconds; this only bounds a stuck one */
#define HELPER_READY_TIMEOUT_MS 30000
/* where slirp4netns is looked for when FSRUN_SLIRP4NETNS does not name it */
static const char *const helper_paths[] = {"/usr/local/bin/slirp4netns", "/usr/bin/slirp4netns",
                                           "/bin/slirp4netns", NULL};
/* the child's fd numbers of what it is given */
enum { CHILD_USERNS_FD = 3, CHILD_NETNS_FD, CHILD_READY_FD, CHILD_EXIT_FD, CHILD_FIRST_UNUSED_FD };

enum sandbox_network sandbox_network_profile(const oci_policy *p) {
  if (!p->allow_network)
    return SANDBOX_NET_NONE;
  if (p->network != NULL && strcmp(p->network, "host") == 0)
    return SANDBOX_NET_HOST;
  return SANDBOX_NET_EGRESS;
}

/* IPv4 only: slirp4netns runs without --enable-ipv6, so no IPv6 packet leaves the namespace. 10/8
 * does not cover slirp4netns's own 10.0.2.0/24 (its gateway and DNS forwarder): tap0's connected
 * route is the longer prefix. The cloud instance services: link-local (the metadata service of
 * most clouds), Azure's WireServer (its firewall trusts host uid 0, which a root caller's
 * slirp4netns is) and Alibaba's metadata service, both outside 169.254/16 (review21 L2). */
#define CLOUD_SERVICES "169.254.0.0/16 168.63.129.16/32 100.100.100.200/32"
/* RFC 1918, the shared address space of carrier-grade NAT (100.64.0.0/10: a Tailscale tailnet,
 * its MagicDNS, carriers' and clouds' internal networks) and the benchmarking range (198.18.0.0/15:
 * the fake-IP mode of Clash-like proxies) (review22 F3). 100.64/10 holds Alibaba's metadata
 * service: blockPrivateNetworks keeps it out even with allowLinkLocal. */
#define PRIVATE_RANGES "10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 100.64.0.0/10 198.18.0.0/15"

const char *sandbox_net_unreachable(const oci_policy *p) {
  if (sandbox_network_profile(p) != SANDBOX_NET_EGRESS)
    return NULL;
  if (p->block_private_networks)
    return p->allow_link_local ? PRIVATE_RANGES : CLOUD_SERVICES " " PRIVATE_RANGES;
  return p->allow_link_local ? NULL : CLOUD_SERVICES;
}

const char *sandbox_net_tcp_only(const oci_policy *p) {
  if (sandbox_network_profile(p) != SANDBOX_NET_EGRESS || p->n_allowed_tcp_ports == 0)
    return NULL;
  return SANDBOX_DNS_FORWARD ":53";
}

const char *sandbox_network_name(enum sandbox_network n) {
  switch (n) {
  case SANDBOX_NET_EGRESS:
    return "egress";
  case SANDBOX_NET_HOST:
    return "host";
  default:
    return "none";
  }
}

static int find_helper(const char **out, fsrun_error_t *err) {
  const char *env = getenv("FSRUN_SLIRP4NETNS");
  if (env != NULL && env[0] != '\0') {
    if (access(env, X_OK) < 0)
      return fsrun_error_errno(err, "sandbox: network egress: FSRUN_SLIRP4NETNS `%s`", env);
    *out = env;
    return 0;
  }
  for (const char *const *p = helper_paths; *p; p++)
    if (access(*p, X_OK) == 0) {
      *out = *p;
      return 0;
    }
  return fsrun_error_make(err, 0,
                          "sandbox: network egress needs slirp4netns (Debian package slirp4netns), "
                          "not found in /usr/local/bin, /usr/bin or /bin");
}

/* slirp4netns opens /dev/net/tun inside the sandbox's user namespace, where the file's owner is
 * unmapped: only its mode for others counts there (udev's default is 0666) */
static int check_tun(bool userns, fsrun_error_t *err) {
  struct stat st;
  if (stat("/dev/net/tun", &st) < 0)
    return fsrun_error_errno(err, "sandbox: network egress: /dev/net/tun");
  if (userns && (st.st_mode & 0006) != 0006)
    return fsrun_error_make(err, 0,
                            "sandbox: network egress: /dev/net/tun has mode %04o: an ordinary user "
                            "needs it readable and writable by all (0666, as udev makes it)",
                            (unsigned)(st.st_mode & 07777));
  return 0;
}

/* The last line the helper wrote to stderr: what went wrong. */
static char *helper_failure(int stderr_fd) {
  char buf[4096];
  ssize_t n = pread(stderr_fd, buf, sizeof(buf) - 1, 0);
  char *line = NULL;
  if (n <= 0)
    return xstrdup("no message");
  buf[n] = '\0';
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    line = l;
  return xstrdup(line ? line : "no message");
}

/* In the child of vfork (sharing our memory until its execv): only system calls, then the
 * helper. */
static void __attribute__((noreturn))
exec_helper(const char *path, char *const argv[], const int fds[CHILD_FIRST_UNUSED_FD],
            pid_t parent, const sigset_t *mask) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
    _exit(127);
  /* fds[] are all at 10 or above: no dup2 here overwrites one still to be moved */
  for (int i = 0; i < CHILD_FIRST_UNUSED_FD; i++)
    if (fds[i] >= 0 && dup2(fds[i], i) < 0)
      _exit(127);
  syscall(SYS_close_range, CHILD_FIRST_UNUSED_FD, ~0U, 0);
  sigprocmask(SIG_SETMASK, mask, NULL);
  execv(path, argv);
  _exit(127);
}

/* what make_tap_in() did, as its exit status */
enum { TAP_MADE = 0, TAP_NOT_MADE = 1, TAP_MADE_WITH_IPV6 = 2 };

/* In the child of vfork: joins the sandbox's namespaces (its user namespace first, where it has
 * one: only there may we add a device to its network namespace) and makes tap0 persistent, with
 * the flags slirp4netns asks for, and without IPv6: egress is IPv4 only (slirp4netns runs without
 * --enable-ipv6), so the link-local address, the duplicate address detection and the router
 * solicitations and multicast reports that bringing tap0 up would start are work for the kernel
 * and for slirp4netns (which reads each packet and drops it) that nothing uses. The sysctl of
 * the namespace we joined: /proc/sys/net follows the opener's network namespace. */
static void __attribute__((noreturn)) make_tap_in(int userns_fd, int netns_fd) {
  struct ifreq ifr;
  int fd, v6;
  if ((userns_fd >= 0 && setns(userns_fd, CLONE_NEWUSER) < 0) || setns(netns_fd, CLONE_NEWNET) < 0)
    _exit(TAP_NOT_MADE);
  fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  memset(&ifr, 0, sizeof(ifr));
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  memcpy(ifr.ifr_name, SANDBOX_TAP_NAME, sizeof(SANDBOX_TAP_NAME));
  if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETPERSIST, 1) < 0)
    _exit(TAP_NOT_MADE);
  v6 = open("/proc/sys/net/ipv6/conf/" SANDBOX_TAP_NAME "/disable_ipv6", O_WRONLY | O_CLOEXEC);
  if (v6 < 0 || write(v6, "1", 1) != 1)
    _exit(TAP_MADE_WITH_IPV6);
  _exit(TAP_MADE);
}

/* tap0, persistent and IPv4 only, before slirp4netns attaches to it. Where it cannot be made,
 * slirp4netns makes its own as before, and only its death is slower. */
static void make_persistent_tap(int userns_fd, int netns_fd) {
  int status = 0;
  pid_t child = vfork();
  if (child == 0)
    make_tap_in(userns_fd, netns_fd);
  if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status))
    status = W_EXITCODE(TAP_NOT_MADE, 0);
  if (WEXITSTATUS(status) == TAP_NOT_MADE)
    log_debug("sandbox: network egress: no persistent %s; slirp4netns makes its own",
              SANDBOX_TAP_NAME);
  else if (WEXITSTATUS(status) == TAP_MADE_WITH_IPV6)
    log_debug("sandbox: network egress: IPv6 could not be turned off on %s (no route leads "
              "anywhere: slirp4netns answers no IPv6)",
              SANDBOX_TAP_NAME);
}

/* fds kept above the numbers the child moves them to */
static int high_fd(int fd) {
  int moved;
  if (fd < 0)
    return fd;
  moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return moved;
}

static int open_ns(pid_t pid, const char *type, fsrun_error_t *err) {
  char path[64];
  int fd;
  snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, type);
  fd = high_fd(open(path, O_RDONLY | O_CLOEXEC));
  if (fd < 0)
    return fsrun_error_errno(err, "sandbox: network egress: open `%s`", path);
  return fd;
}

/* Waits for the helper's byte on the ready pipe (written once the namespace is configured). */
static int wait_ready(struct sandbox_net *net, fsrun_error_t *err) {
  int64_t deadline = net->started + HELPER_READY_TIMEOUT_MS;
  if (net->deadline > 0 && net->deadline < deadline)
    deadline = net->deadline; /* fsrun sandbox's --timeout-ms bounds the set-up too */
  for (;;) {
    struct pollfd p[2] = {{.fd = net->ready_fd, .events = POLLIN},
                          {.fd = net->pidfd, .events = POLLIN}};
    int64_t left = deadline - monotonic_ms();
    char buf[32];
    int r;
    if (left <= 0)
      return fsrun_error_make(err, ETIMEDOUT,
                              "sandbox: network egress: slirp4netns did not configure the network "
                              "in %lld ms",
                              (long long)(deadline - net->started));
    r = poll(p, 2, (int)left);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fsrun_error_errno(err, "sandbox: network egress: wait for slirp4netns");
    if (p[0].revents & POLLIN) {
      ssize_t n = read(net->ready_fd, buf, sizeof(buf));
      if (n > 0)
        return 0;
    }
    if (p[0].revents & (POLLIN | POLLHUP) || p[1].revents & POLLIN) {
      cleanup_free char *why = helper_failure(net->stderr_fd);
      return fsrun_error_make(err, 0, "sandbox: network egress: slirp4netns failed: %s", why);
    }
  }
}

int sandbox_net_wait_ready(void *data, fsrun_error_t *err) {
  struct sandbox_net *net = data;
  int r;
  if (net->ready_fd < 0)
    return 0;
  r = wait_ready(net, err);
  cleanup_closep(&net->ready_fd);
  cleanup_closep(&net->stderr_fd);
  if (r == 0)
    log_debug("sandbox: network egress: %s configured the network %lld ms after its start",
              net->path, (long long)(monotonic_ms() - net->started));
  return r;
}

static int start_helper(struct sandbox_net *net, const char *path, int userns_fd, int netns_fd,
                        fsrun_error_t *err) {
  char netns_arg[32], userns_arg[48], ready_arg[32], exit_arg[32];
  cleanup_close int null_fd = high_fd(open("/dev/null", O_RDWR | O_CLOEXEC));
  int stderr_fd = net->stderr_fd = high_fd(memfd_create("fsrun-slirp4netns-stderr", MFD_CLOEXEC));
  int ready[2] = {-1, -1}, exit_pipe[2] = {-1, -1};
  int fds[CHILD_FIRST_UNUSED_FD];
  sigset_t empty;
  const char *argv[24];
  size_t n = 0;
  pid_t parent = getpid(), child;

  if (null_fd < 0 || stderr_fd < 0 || pipe2(ready, O_CLOEXEC) < 0)
    return fsrun_error_errno(err, "sandbox: network egress: set up the helper's pipes");
  if (pipe2(exit_pipe, O_CLOEXEC) < 0) {
    close(ready[0]), close(ready[1]);
    return fsrun_error_errno(err, "sandbox: network egress: set up the helper's pipes");
  }
  ready[0] = net->ready_fd = high_fd(ready[0]);
  ready[1] = high_fd(ready[1]);
  exit_pipe[0] = high_fd(exit_pipe[0]);
  net->exit_fd = high_fd(exit_pipe[1]);
  snprintf(netns_arg, sizeof(netns_arg), "/proc/self/fd/%d", CHILD_NETNS_FD);
  snprintf(userns_arg, sizeof(userns_arg), "--userns-path=/proc/self/fd/%d", CHILD_USERNS_FD);
  snprintf(ready_arg, sizeof(ready_arg), "--ready-fd=%d", CHILD_READY_FD);
  snprintf(exit_arg, sizeof(exit_arg), "--exit-fd=%d", CHILD_EXIT_FD);
  argv[n++] = "slirp4netns";
  argv[n++] = "--configure";
  argv[n++] = "--mtu=65520";
  /* 10.0.2.2 is the outside's gateway, never the host's loopback; no port is forwarded (that
   * takes --api-socket, which is not given) */
  argv[n++] = "--disable-host-loopback";
  argv[n++] = "--enable-seccomp";
  /* its own mount namespace and no capabilities; it needs to be uid 0 in the namespace's user
   * namespace for that, which an ordinary user's sandbox (its uid mapped to itself) is not */
  if (!net->userns)
    argv[n++] = "--enable-sandbox";
  argv[n++] = ready_arg;
  argv[n++] = exit_arg;
  argv[n++] = "--netns-type=path";
  if (net->userns)
    argv[n++] = userns_arg;
  argv[n++] = netns_arg;
  argv[n++] = SANDBOX_TAP_NAME;
  argv[n] = NULL;

  fds[STDIN_FILENO] = fds[STDOUT_FILENO] = null_fd;
  fds[STDERR_FILENO] = stderr_fd;
  fds[CHILD_USERNS_FD] = userns_fd;
  fds[CHILD_NETNS_FD] = netns_fd;
  fds[CHILD_READY_FD] = ready[1];
  fds[CHILD_EXIT_FD] = exit_pipe[0];
  sigemptyset(&empty);
  net->path = path;
  net->started = monotonic_ms();
  /* vfork: a fork made every page of ours copy-on-write for the rest of the run */
  child = vfork();
  if (child == 0)
    exec_helper(path, (char *const *)argv, fds, parent, &empty);
  close(ready[1]);
  close(exit_pipe[0]);
  if (child < 0)
    return fsrun_error_errno(err, "sandbox: network egress: fork slirp4netns");
  net->pid = child;
  net->pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  if (net->pidfd < 0)
    return fsrun_error_errno(err, "sandbox: network egress: pidfd_open slirp4netns");
  return 0;
}

int sandbox_net_attach(pid_t init_pid, void *data, fsrun_error_t *err) {
  struct sandbox_net *net = data;
  cleanup_close int userns_fd = -1;
  cleanup_close int netns_fd = -1;
  const char *helper = NULL;

  if (find_helper(&helper, err) < 0 || check_tun(net->userns, err) < 0)
    return fsrun_error_code(err);
  netns_fd = open_ns(init_pid, "net", err);
  if (netns_fd < 0)
    return fsrun_error_code(err);
  if (net->userns) {
    userns_fd = open_ns(init_pid, "user", err);
    if (userns_fd < 0)
      return fsrun_error_code(err);
  }
  make_persistent_tap(userns_fd, netns_fd);
  return start_helper(net, helper, userns_fd, netns_fd, err);
}

void sandbox_net_kill(struct sandbox_net *net) {
  if (net->pid <= 0 || net->killed)
    return;
  /* through its pidfd; by its pid only where pidfd_open failed: our unreaped child (fsrun runs
   * with SIGCHLD at its default: no auto-reap freed the pid) */
  if (net->pidfd >= 0)
    (void)pidfd_signal_child(net->pidfd, SIGKILL);
  else
    kill(net->pid, SIGKILL);
  net->killed = true;
}

void sandbox_net_reap(struct sandbox_net *net) {
  cleanup_closep(&net->ready_fd);
  cleanup_closep(&net->stderr_fd);
  if (net->pid <= 0)
    return;
  sandbox_net_kill(net);
  while (waitpid(net->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  net->pid = 0;
  if (net->exit_fd >= 0)
    close(net->exit_fd);
  net->exit_fd = -1;
  if (net->pidfd >= 0)
    close(net->pidfd);
  net->pidfd = -1;
}
