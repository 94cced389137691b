/* Unit tests for netlink.c: linux.netDevices validation messages, and, as root, bringing `lo` up in
 * a new network namespace and moving veth devices (made with iproute2) into a namespace held by a
 * forked child: renamed, up, with their addresses; refused names change nothing; a failed batch is
 * rolled back. The host's own devices are never touched. TAP output. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "tap.h"
#include "netlink.h"
#include "oci.h"

static char msgbuf[512];
static const char *take(fsrun_error_t *err) {
  snprintf(msgbuf, sizeof(msgbuf), "%s", *err != NULL ? (*err)->msg : "");
  fsrun_error_release(err);
  return msgbuf;
}

/* Device names for this run: fsrxNNNNN[a-f], unique per test process, 15 bytes at most. */
static char dev[6][IFNAMSIZ];

static int sh(const char *fmt, ...) {
  char cmd[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof(cmd), fmt, ap);
  va_end(ap);
  return system(cmd);
}

static void test_validate(void) {
  oci_namespace netns = {.type = "network"};
  oci_net_device devs[2] = {{.host_name = "fsrx-nope"}};
  oci_linux l = {.net_devices = devs, .n_net_devices = 1};
  fsrun_error_t err = NULL;
  const char *m;

  tap_ok(netlink_validate_net_devices(NULL, &err) == 0, "no linux section: nothing to check");
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices: needs a `network` entry in linux.namespaces") != NULL,
         "netDevices without a network namespace is refused: \"%s\"", m);

  l.namespaces = &netns;
  l.n_namespaces = 1;
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strcmp(m, "linux.netDevices[\"fsrx-nope\"]: no such network device on the host") == 0,
         "a missing host device names the entry: \"%s\"", m);

  devs[0].host_name = "bad/name";
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices[\"bad/name\"]: invalid interface name") != NULL,
         "a host name with `/` is refused: \"%s\"", m);

  devs[0].host_name = "abcdefghijklmnop";
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "invalid interface name") != NULL, "a 16-byte name is refused");

  devs[0].host_name = "lo";
  devs[0].name = "x%s";
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices[\"lo\"].name: invalid interface name `x%s`") != NULL,
         "a new name with a template other than %%d is refused: \"%s\"", m);

  devs[0].name = "lo2";
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices[\"lo\"]: a loopback device cannot change namespace") != NULL,
         "the loopback device is refused: \"%s\"", m);

  devs[0] = (oci_net_device){.host_name = dev[0], .name = "ceth0"};
  devs[1] = (oci_net_device){.host_name = dev[2], .name = "ceth0"};
  l.n_net_devices = 2;
  m = (netlink_validate_net_devices(&l, &err), take(&err));
  tap_ok(strstr(m, "`ceth0` is also the name of") != NULL,
         "two devices with one name inside are refused: \"%s\"", m);
}

/* --- a child holding a new network namespace, answering questions about it
 * ------------------------ */

struct query {
  char cmd; /* 'q' query, 'x' exit */
  char name[IFNAMSIZ];
};

struct answer {
  int exists;
  unsigned flags;
  char addr[INET_ADDRSTRLEN];
  int loopback_connect; /* errno of a TCP connect to 127.0.0.1 (0 = worked) */
};

struct netns_child {
  pid_t pid;
  int to_child, from_child;
};

static int loopback_tcp_roundtrip(void) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, rc = 0;
  if (l < 0)
    return errno;
  if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
      getsockname(l, (struct sockaddr *)&a, &len) < 0) {
    rc = errno;
    close(l);
    return rc;
  }
  c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
    rc = errno;
  close(c);
  close(l);
  return rc;
}

static void answer_query(const char *name, struct answer *ans) {
  struct ifreq ifr;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  memset(ans, 0, sizeof(*ans));
  memset(&ifr, 0, sizeof(ifr));
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
  if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
    ans->exists = 1;
    ans->flags = (unsigned short)ifr.ifr_flags;
    if (ioctl(s, SIOCGIFADDR, &ifr) == 0)
      inet_ntop(AF_INET, &((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr, ans->addr,
                sizeof(ans->addr));
  }
  close(s);
  ans->loopback_connect = loopback_tcp_roundtrip();
}

static int netns_child_start(struct netns_child *c, bool loopback_up) {
  int down[2], up[2];
  if (pipe(down) < 0 || pipe(up) < 0)
    return -1;
  fflush(stdout);
  c->pid = fork();
  if (c->pid == 0) {
    struct query q;
    struct answer ans;
    char ready = 'r';
    close(down[1]);
    close(up[0]);
    if (unshare(CLONE_NEWNET) < 0)
      _exit(3);
    if (loopback_up) {
      fsrun_error_t err = NULL;
      struct answer before;
      answer_query("lo", &before);
      if (before.flags & IFF_UP)
        ready = 'u'; /* a new namespace should start with lo down */
      else if (netlink_loopback_up(&err) < 0)
        ready = 'e';
    }
    if (write(up[1], &ready, 1) != 1)
      _exit(4);
    while (read(down[0], &q, sizeof(q)) == (ssize_t)sizeof(q) && q.cmd == 'q') {
      answer_query(q.name, &ans);
      if (write(up[1], &ans, sizeof(ans)) != (ssize_t)sizeof(ans))
        _exit(5);
    }
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  c->to_child = down[1];
  c->from_child = up[0];
  if (c->pid < 0)
    return -1;
  char ready = 0;
  if (read(c->from_child, &ready, 1) != 1)
    return -1;
  return ready;
}

static int netns_child_query(struct netns_child *c, const char *name, struct answer *ans) {
  struct query q = {.cmd = 'q'};
  snprintf(q.name, sizeof(q.name), "%s", name);
  if (write(c->to_child, &q, sizeof(q)) != (ssize_t)sizeof(q) ||
      read(c->from_child, ans, sizeof(*ans)) != (ssize_t)sizeof(*ans)) {
    memset(ans, 0, sizeof(*ans));
    return -1;
  }
  return 0;
}

static void netns_child_stop(struct netns_child *c) {
  struct query q = {.cmd = 'x'};
  int status;
  if (write(c->to_child, &q, sizeof(q)) < 0)
    kill(c->pid, SIGKILL);
  close(c->to_child);
  close(c->from_child);
  waitpid(c->pid, &status, 0);
}

static void test_loopback(void) {
  struct netns_child c;
  struct answer ans;
  int ready = netns_child_start(&c, true);
  tap_ok(ready == 'r',
         "in a new network namespace lo starts down and netlink_loopback_up succeeds");
  netns_child_query(&c, "lo", &ans);
  tap_ok(ans.exists && (ans.flags & IFF_UP), "lo is up in the new namespace (flags 0x%x)",
         ans.flags);
  tap_ok(ans.loopback_connect == 0, "a TCP connection over 127.0.0.1 works there (%s)",
         strerror(ans.loopback_connect));
  netns_child_stop(&c);

  ready = netns_child_start(&c, false);
  netns_child_query(&c, "lo", &ans);
  tap_ok(ready == 'r' && !(ans.flags & IFF_UP) && ans.loopback_connect != 0,
         "control: without it, lo stays down and 127.0.0.1 is unreachable (%s)",
         strerror(ans.loopback_connect));
  netns_child_stop(&c);
}

static bool host_has(const char *name) {
  return if_nametoindex(name) != 0;
}

static void test_move(void) {
  struct netns_child c;
  struct answer ans;
  fsrun_error_t err = NULL;
  oci_namespace netns = {.type = "network"};
  oci_net_device one = {.host_name = dev[0], .name = "ceth1"};
  oci_linux l = {.namespaces = &netns, .n_namespaces = 1, .net_devices = &one, .n_net_devices = 1};
  int netns_fd, pidfd, ret;
  const char *m;

  for (int i = 0; i < 6; i += 2)
    sh("ip link del %s >/dev/null 2>&1", dev[i]);
  if (sh("ip link add %s type veth peer name %s", dev[0], dev[1]) != 0 ||
      sh("ip link add %s type veth peer name %s", dev[2], dev[3]) != 0 ||
      sh("ip link add %s type veth peer name %s", dev[4], dev[5]) != 0 ||
      sh("ip addr add 10.231.7.1/24 dev %s", dev[0]) != 0 ||
      sh("ip addr add 10.231.8.1/24 dev %s", dev[2]) != 0) {
    tap_skip("cannot create veth devices with iproute2");
    return;
  }
  if (netns_child_start(&c, false) != 'r') {
    tap_ok(0, "start a child in a new network namespace");
    return;
  }

  pidfd = (int)syscall(SYS_pidfd_open, c.pid, 0);
  netns_fd = netlink_open_netns_of(c.pid, pidfd, &err);
  tap_ok(netns_fd >= 0, "open the child's network namespace by pid, checked with its pidfd (%s)",
         netns_fd < 0 ? take(&err) : "ok");
  if (netns_fd < 0) {
    netns_child_stop(&c);
    return;
  }

  ret = netlink_validate_net_devices(&l, &err);
  tap_ok(ret == 0, "validation accepts an existing veth (%s)", ret < 0 ? take(&err) : "ok");
  ret = netlink_move_net_devices(&l, netns_fd, &err);
  tap_ok(ret == 0, "move %s into the namespace as ceth1 (%s)", dev[0], ret < 0 ? take(&err) : "ok");
  tap_ok(!host_has(dev[0]), "%s is gone from the host", dev[0]);
  netns_child_query(&c, "ceth1", &ans);
  tap_ok(ans.exists, "ceth1 exists inside");
  tap_ok(ans.flags & IFF_UP, "ceth1 is up inside (flags 0x%x)", ans.flags);
  tap_ok(strcmp(ans.addr, "10.231.7.1") == 0, "ceth1 kept its permanent address (got `%s`)",
         ans.addr);
  netns_child_query(&c, dev[0], &ans);
  tap_ok(!ans.exists, "no device with the host name inside");

  /* a name that is taken inside: refused before anything moves */
  m = (netlink_move_device(dev[2], "ceth1", netns_fd, "linux.netDevices[\"x\"]", &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices[\"x\"]: a device named `ceth1` already exists in the "
                   "container's network namespace") != NULL,
         "a taken name inside is refused: \"%s\"", m);
  tap_ok(host_has(dev[2]), "the refused device is still on the host");

  /* a batch whose second entry fails: the first is moved back, with its address */
  oci_net_device two[2] = {{.host_name = dev[2], .name = "ceth2"}, {.host_name = "fsrx-missing"}};
  l.net_devices = two;
  l.n_net_devices = 2;
  m = (netlink_move_net_devices(&l, netns_fd, &err), take(&err));
  tap_ok(strstr(m, "linux.netDevices[\"fsrx-missing\"]: no such network device on the host") !=
             NULL,
         "the failing entry is named: \"%s\"", m);
  tap_ok(host_has(dev[2]), "the device moved before the failure is back on the host as %s", dev[2]);
  netns_child_query(&c, "ceth2", &ans);
  tap_ok(!ans.exists, "and it is not left inside");
  {
    char out[256] = "";
    FILE *p;
    snprintf(msgbuf, sizeof(msgbuf), "ip -o -4 addr show dev %s", dev[2]);
    p = popen(msgbuf, "r");
    if (p != NULL) {
      if (fgets(out, sizeof(out), p) == NULL)
        out[0] = '\0';
      pclose(p);
    }
    tap_ok(strstr(out, "10.231.8.1/24") != NULL, "its address was restored on the host");
  }

  /* a %d template: the kernel picks the number */
  ret = netlink_move_device(dev[4], "tmpl%d", netns_fd, NULL, &err);
  tap_ok(ret == 0, "move %s with the template name tmpl%%d (%s)", dev[4],
         ret < 0 ? take(&err) : "ok");
  netns_child_query(&c, "tmpl0", &ans);
  tap_ok(ans.exists && (ans.flags & IFF_UP), "it is tmpl0 inside, and up");

  /* same name inside (no rename) */
  ret = netlink_move_device(dev[2], NULL, netns_fd, NULL, &err);
  netns_child_query(&c, dev[2], &ans);
  tap_ok(ret == 0 && ans.exists && strcmp(ans.addr, "10.231.8.1") == 0,
         "without a new name the device keeps its name and address inside (%s)",
         ret < 0 ? take(&err) : ans.addr);

  close(netns_fd);
  netns_child_stop(&c);
  /* the namespace is gone: its veth ends are destroyed and with them their host peers */
  if (pidfd >= 0) {
    err = NULL;
    ret = netlink_open_netns_of(c.pid, pidfd, &err);
    tap_ok(ret < 0, "a pidfd whose process has exited is refused (%s)", take(&err));
    if (ret >= 0)
      close(ret);
    close(pidfd);
  }
  for (int i = 0; i < 6; i++)
    sh("ip link del %s >/dev/null 2>&1", dev[i]);
}

int main(void) {
  for (int i = 0; i < 6; i++)
    snprintf(dev[i], sizeof(dev[i]), "fsrx%d%c", (int)(getpid() % 100000), 'a' + i);
  test_validate();
  if (geteuid() != 0) {
    tap_skip("not root: namespace and device tests skipped");
  } else {
    test_loopback();
    if (system("ip -V >/dev/null 2>&1") != 0)
      tap_skip("iproute2 (`ip`) is not installed");
    else
      test_move();
  }
  return tap_done();
}
