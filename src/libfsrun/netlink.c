/* rtnetlink requests with libmnl: link lookup, link up, moving a device into another network
 * namespace with its permanent addresses.
 *
 * Requests that must run inside the target namespace (name checks, addresses, link up) go through a
 * NETLINK_ROUTE socket created there: a netlink socket stays bound to the namespace it was created
 * in, so the thread enters the namespace only for the socket(2) call and comes straight back. */
#include "netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#ifndef IFA_FLAGS
#define IFA_FLAGS 8
#endif

/* IFA_F_* flags userspace may set on RTM_NEWADDR (the others are state the kernel keeps). */
#define ADDR_SETTABLE_FLAGS                                                                        \
  (IFA_F_NODAD | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR | IFA_F_NOPREFIXROUTE | IFA_F_MCAUTOJOIN)

#define RTNL_BUF_SIZE 32768 /* answers: a dump message can be large */
#define RTNL_REQ_SIZE 1024  /* our requests: a header and a few attributes */

struct rtnl {
  struct mnl_socket *nl;
  unsigned int portid;
  unsigned int seq;
};

static void rtnl_close(struct rtnl *s) {
  if (s->nl != NULL)
    mnl_socket_close(s->nl);
  s->nl = NULL;
}

static int rtnl_open(struct rtnl *s, fsrun_error_t *err) {
  s->seq = 0;
  s->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
  if (s->nl == NULL)
    return fsrun_error_errno(err, "open rtnetlink socket");
  if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
    int ret = fsrun_error_errno(err, "bind rtnetlink socket");
    rtnl_close(s);
    return ret;
  }
  s->portid = mnl_socket_get_portid(s->nl);
  return 0;
}

/* A socket in the network namespace netns_fd; the calling thread's namespace is unchanged after. */
static int rtnl_open_in_netns(struct rtnl *s, int netns_fd, fsrun_error_t *err) {
  cleanup_close int self_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int ret;
  if (self_fd < 0)
    return fsrun_error_errno(err, "open `/proc/thread-self/ns/net`");
  if (setns(netns_fd, CLONE_NEWNET) < 0)
    return fsrun_error_errno(err, "enter the target network namespace");
  ret = rtnl_open(s, err);
  if (setns(self_fd, CLONE_NEWNET) < 0) {
    /* Staying in the container's namespace would be worse than failing loudly. */
    rtnl_close(s);
    return fsrun_error_errno(err, "return to the runtime's network namespace");
  }
  return ret;
}

static void rtnl_closep(struct rtnl *s) {
  rtnl_close(s);
}
#define cleanup_rtnl __attribute__((cleanup(rtnl_closep)))

/* Sends nlh and reads the answers until the ack (or NLMSG_DONE for a dump), passing data messages
 * to cb. Returns 0 or -errno (errno set), the kernel's error for a refused request. A dump is told
 * by the caller: NLM_F_DUMP's bits mean NLM_F_REPLACE/NLM_F_EXCL on a NEW request. */
static int rtnl_talk_full(struct rtnl *s, struct nlmsghdr *nlh, bool dump, mnl_cb_t cb,
                          void *data) {
  char buf[RTNL_BUF_SIZE] __attribute__((aligned(8)));
  int ret;
  nlh->nlmsg_seq = ++s->seq;
  if (!dump)
    nlh->nlmsg_flags |= NLM_F_ACK;
  if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
    return -errno;
  do {
    ssize_t n = mnl_socket_recvfrom(s->nl, buf, sizeof(buf));
    if (n < 0)
      return -errno;
    ret = mnl_cb_run(buf, (size_t)n, s->seq, s->portid, cb, data);
  } while (ret > MNL_CB_STOP);
  return ret < 0 ? -errno : 0;
}

static int rtnl_talk(struct rtnl *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data) {
  return rtnl_talk_full(s, nlh, false, cb, data);
}

static int rtnl_dump(struct rtnl *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data) {
  return rtnl_talk_full(s, nlh, true, cb, data);
}

/* --- links
 * ---------------------------------------------------------------------------------------- */

struct link_info {
  int index;
  unsigned int flags;
  char name[IFNAMSIZ];
};

static int link_attr_cb(const struct nlattr *attr, void *data) {
  struct link_info *info = data;
  if (mnl_attr_get_type(attr) == IFLA_IFNAME && mnl_attr_validate(attr, MNL_TYPE_STRING) >= 0)
    snprintf(info->name, sizeof(info->name), "%s", mnl_attr_get_str(attr));
  return MNL_CB_OK;
}

static int link_msg_cb(const struct nlmsghdr *nlh, void *data) {
  struct link_info *info = data;
  const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
  if (nlh->nlmsg_type != RTM_NEWLINK)
    return MNL_CB_OK;
  info->index = ifm->ifi_index;
  info->flags = ifm->ifi_flags;
  mnl_attr_parse(nlh, sizeof(*ifm), link_attr_cb, info);
  return MNL_CB_OK;
}

/* Looks a link up by name (index 0) or by index (name NULL). Returns 0, or -errno (-ENODEV when
 * there is no such link). */
static int rtnl_get_link(struct rtnl *s, const char *name, int index, struct link_info *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifinfomsg *ifm;
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  if (name != NULL)
    mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
  memset(out, 0, sizeof(*out));
  return rtnl_talk(s, nlh, link_msg_cb, out);
}

struct index_list {
  int *items;
  size_t len;
};

static int link_dump_cb(const struct nlmsghdr *nlh, void *data) {
  struct index_list *l = data;
  const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
  int *items;
  if (nlh->nlmsg_type != RTM_NEWLINK)
    return MNL_CB_OK;
  items = reallocarray(l->items, l->len + 1, sizeof(int));
  if (items == NULL)
    abort();
  l->items = items;
  l->items[l->len++] = ifm->ifi_index;
  return MNL_CB_OK;
}

static int rtnl_dump_link_indexes(struct rtnl *s, struct index_list *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifinfomsg *ifm;
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
  ifm->ifi_family = AF_UNSPEC;
  return rtnl_dump(s, nlh, link_dump_cb, out);
}

static bool index_list_has(const struct index_list *l, int index) {
  for (size_t i = 0; i < l->len; i++)
    if (l->items[i] == index)
      return true;
  return false;
}

static int rtnl_set_link_up(struct rtnl *s, int index, const char *name) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifinfomsg *ifm;
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;
  if (index == 0 && name != NULL)
    mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
  return rtnl_talk(s, nlh, NULL, NULL);
}

/* Moves link `index` of s's namespace into netns_fd, naming it new_name there (NULL: keep). */
static int rtnl_move_link(struct rtnl *s, int index, int netns_fd, const char *new_name) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifinfomsg *ifm;
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST;
  ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)netns_fd);
  /* With an index, IFLA_IFNAME renames; the kernel applies it in the new namespace. */
  if (new_name != NULL)
    mnl_attr_put_strz(nlh, IFLA_IFNAME, new_name);
  return rtnl_talk(s, nlh, NULL, NULL);
}

int netlink_link_up(const char *ifname, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl s = {0};
  int ret = rtnl_open(&s, err);
  if (ret < 0)
    return ret;
  ret = rtnl_set_link_up(&s, 0, ifname);
  if (ret < 0)
    return fsrun_error_make(err, -ret, "set link `%s` up", ifname);
  return 0;
}

int netlink_loopback_up(fsrun_error_t *err) {
  return netlink_link_up("lo", err);
}

/* --- addresses
 * ------------------------------------------------------------------------------------ */

struct saved_addr {
  unsigned char family, prefixlen, scope;
  uint32_t flags;
  unsigned char local[16], address[16], broadcast[16];
  size_t local_len, address_len, broadcast_len;
};

struct addr_list {
  int index; /* only addresses of this link */
  struct saved_addr *items;
  size_t len;
};

struct addr_attrs {
  const struct nlattr *tb[IFA_MAX + 1];
};

static int addr_attr_cb(const struct nlattr *attr, void *data) {
  struct addr_attrs *a = data;
  int type = mnl_attr_get_type(attr);
  if (mnl_attr_type_valid(attr, IFA_MAX) < 0)
    return MNL_CB_OK; /* newer attribute than we know */
  a->tb[type] = attr;
  return MNL_CB_OK;
}

static void copy_addr_attr(const struct nlattr *attr, unsigned char *dst, size_t *len) {
  size_t n = attr != NULL ? mnl_attr_get_payload_len(attr) : 0;
  if (n > 16)
    n = 0; /* not an IPv4/IPv6 address */
  if (n > 0)
    memcpy(dst, mnl_attr_get_payload(attr), n);
  *len = n;
}

static int addr_dump_cb(const struct nlmsghdr *nlh, void *data) {
  struct addr_list *l = data;
  const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
  struct addr_attrs a = {0};
  struct saved_addr sa = {0};
  struct saved_addr *items;

  if (nlh->nlmsg_type != RTM_NEWADDR || (int)ifa->ifa_index != l->index)
    return MNL_CB_OK;
  mnl_attr_parse(nlh, sizeof(*ifa), addr_attr_cb, &a);
  sa.flags = ifa->ifa_flags;
  if (a.tb[IFA_FLAGS] != NULL && mnl_attr_validate(a.tb[IFA_FLAGS], MNL_TYPE_U32) >= 0)
    sa.flags = mnl_attr_get_u32(a.tb[IFA_FLAGS]);
  /* The spec keeps permanent addresses of global scope: no autoconfigured or link-local ones. */
  if (!(sa.flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE)
    return MNL_CB_OK;
  sa.family = ifa->ifa_family;
  sa.prefixlen = ifa->ifa_prefixlen;
  sa.scope = ifa->ifa_scope;
  copy_addr_attr(a.tb[IFA_LOCAL], sa.local, &sa.local_len);
  copy_addr_attr(a.tb[IFA_ADDRESS], sa.address, &sa.address_len);
  copy_addr_attr(a.tb[IFA_BROADCAST], sa.broadcast, &sa.broadcast_len);
  if (sa.local_len == 0 && sa.address_len == 0)
    return MNL_CB_OK;
  items = reallocarray(l->items, l->len + 1, sizeof(*items));
  if (items == NULL)
    abort();
  l->items = items;
  l->items[l->len++] = sa;
  return MNL_CB_OK;
}

static int rtnl_dump_addrs(struct rtnl *s, int index, struct addr_list *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifaddrmsg *ifa;
  nlh->nlmsg_type = RTM_GETADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
  ifa->ifa_family = AF_UNSPEC;
  out->index = index;
  return rtnl_dump(s, nlh, addr_dump_cb, out);
}

static int rtnl_add_addr(struct rtnl *s, int index, const struct saved_addr *sa) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifaddrmsg *ifa;
  uint32_t flags = sa->flags & ADDR_SETTABLE_FLAGS;
  nlh->nlmsg_type = RTM_NEWADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
  ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
  ifa->ifa_family = sa->family;
  ifa->ifa_prefixlen = sa->prefixlen;
  ifa->ifa_scope = sa->scope;
  ifa->ifa_flags = (unsigned char)(flags & 0xff);
  ifa->ifa_index = (unsigned int)index;
  if (sa->local_len > 0)
    mnl_attr_put(nlh, IFA_LOCAL, sa->local_len, sa->local);
  if (sa->address_len > 0)
    mnl_attr_put(nlh, IFA_ADDRESS, sa->address_len, sa->address);
  if (sa->broadcast_len > 0)
    mnl_attr_put(nlh, IFA_BROADCAST, sa->broadcast_len, sa->broadcast);
  if (flags > 0xff)
    mnl_attr_put_u32(nlh, IFA_FLAGS, flags);
  return rtnl_talk(s, nlh, NULL, NULL);
}

static void format_addr(const struct saved_addr *sa, char *out, size_t size) {
  const unsigned char *a = sa->local_len > 0 ? sa->local : sa->address;
  char text[INET6_ADDRSTRLEN] = "?";
  inet_ntop(sa->family == AF_INET6 ? AF_INET6 : AF_INET, a, text, sizeof(text));
  snprintf(out, size, "%s/%u", text, (unsigned)sa->prefixlen);
}

/* --- validation
 * ----------------------------------------------------------------------------------- */

static bool ifname_valid(const char *name, bool allow_template) {
  size_t len = name != NULL ? strlen(name) : 0;
  const char *pct;
  if (len == 0 || len >= IFNAMSIZ || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return false;
  for (const char *p = name; *p; p++)
    if (*p == '/' || *p == ':' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
        *p == '\v' || *p == '\f')
      return false;
  pct = strchr(name, '%');
  if (pct == NULL)
    return true;
  /* the kernel accepts exactly one "%d" */
  return allow_template && pct[1] == 'd' && strchr(pct + 1, '%') == NULL;
}

static const char *target_name(const oci_net_device *d) {
  return d->name != NULL && d->name[0] != '\0' ? d->name : d->host_name;
}

int netlink_validate_net_devices(const oci_linux *l, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl s = {0};
  bool have_netns = false;
  int ret;

  if (l == NULL || l->n_net_devices == 0)
    return 0;
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type != NULL && strcmp(l->namespaces[i].type, "network") == 0)
      have_netns = true;
  if (!have_netns)
    return fsrun_error_make(
        err, 0,
        "linux.netDevices: needs a `network` entry in linux.namespaces (devices "
        "are never moved out of the runtime's own network namespace)");

  /* the config's own mistakes first, then what the host has */
  for (size_t i = 0; i < l->n_net_devices; i++) {
    const oci_net_device *d = &l->net_devices[i];
    if (!ifname_valid(d->host_name, false))
      return fsrun_error_make(err, 0,
                              "linux.netDevices[\"%s\"]: invalid interface name (1-15 bytes, no "
                              "`/`, `:`, `%%` or white space)",
                              d->host_name != NULL ? d->host_name : "");
    if (d->name != NULL && d->name[0] != '\0' && !ifname_valid(d->name, true))
      return fsrun_error_make(err, 0,
                              "linux.netDevices[\"%s\"].name: invalid interface name `%s` (1-15 "
                              "bytes, no `/`, `:` or white space, at most one `%%d`)",
                              d->host_name, d->name);
    for (size_t j = 0; j < i; j++)
      if (strchr(target_name(d), '%') == NULL &&
          strcmp(target_name(&l->net_devices[j]), target_name(d)) == 0)
        return fsrun_error_make(err, 0,
                                "linux.netDevices[\"%s\"]: `%s` is also the name of "
                                "linux.netDevices[\"%s\"] inside the container",
                                d->host_name, target_name(d), l->net_devices[j].host_name);
  }

  ret = rtnl_open(&s, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "linux.netDevices");
  for (size_t i = 0; i < l->n_net_devices; i++) {
    const oci_net_device *d = &l->net_devices[i];
    struct link_info info;
    ret = rtnl_get_link(&s, d->host_name, 0, &info);
    if (ret == -ENODEV)
      return fsrun_error_make(
          err, 0, "linux.netDevices[\"%s\"]: no such network device on the host", d->host_name);
    if (ret < 0)
      return fsrun_error_make(err, -ret, "linux.netDevices[\"%s\"]: look up the device",
                              d->host_name);
    if (info.flags & IFF_LOOPBACK)
      return fsrun_error_make(err, 0,
                              "linux.netDevices[\"%s\"]: a loopback device cannot change namespace",
                              d->host_name);
  }
  return 0;
}

int netlink_open_netns_of(pid_t pid, int pidfd, fsrun_error_t *err) {
  char path[64];
  int fd;
  snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s`", path);
  /* The pidfd pins the process we mean: if it is gone, the pid may now belong to someone else. */
  if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
    int ret = fsrun_error_errno(err, "open `%s`: the container init is gone", path);
    close(fd);
    return ret;
  }
  return fd;
}

/* --- moving
 * ---------------------------------------------------------------------------------------- */

/* Where a moved device ended up inside, to undo a move. */
struct moved_device {
  const char *host_name;
  int inner_index;
  struct addr_list addrs;
};

static void moved_device_release(struct moved_device *m) {
  free(m->addrs.items);
  m->addrs.items = NULL;
  m->addrs.len = 0;
}

/* Puts a moved device back into host_netns_fd under its host name, with its addresses; best effort,
 * every failure is logged. */
static void move_back(const struct moved_device *m, int netns_fd, int host_netns_fd,
                      const char *what) {
  struct rtnl inner = {0}, host = {0};
  struct link_info info;
  fsrun_error_t err = NULL;
  int ret;

  if (rtnl_open_in_netns(&inner, netns_fd, &err) < 0 || rtnl_open(&host, &err) < 0) {
    log_warning("%s: could not move `%s` back to the host: %s", what, m->host_name, err->msg);
    goto out;
  }
  ret = rtnl_move_link(&inner, m->inner_index, host_netns_fd, m->host_name);
  if (ret < 0) {
    log_warning("%s: could not move `%s` back to the host: %s", what, m->host_name, strerror(-ret));
    goto out;
  }
  if (rtnl_get_link(&host, m->host_name, 0, &info) < 0)
    goto out;
  for (size_t i = 0; i < m->addrs.len; i++)
    if ((ret = rtnl_add_addr(&host, info.index, &m->addrs.items[i])) < 0) {
      char text[64];
      format_addr(&m->addrs.items[i], text, sizeof(text));
      log_warning("%s: could not restore address %s on `%s`: %s", what, text, m->host_name,
                  strerror(-ret));
    }
out:
  rtnl_close(&inner);
  rtnl_close(&host);
  fsrun_error_release(&err);
}

/* Moves a device that move_device() already moved back to the calling thread's namespace. */
static void undo_move(struct moved_device *m, int netns_fd, const char *what) {
  cleanup_close int host_netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host_netns_fd >= 0)
    move_back(m, netns_fd, host_netns_fd, what);
  else
    log_warning("%s: could not move `%s` back to the host: %s", what, m->host_name,
                strerror(errno));
  moved_device_release(m);
}

/* The move itself; on success *moved says where the device is (for an undo) and owns its address
 * list. */
static int move_device(const char *host_name, const char *new_name, int netns_fd, const char *what,
                       struct moved_device *moved, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl host = {0};
  cleanup_rtnl struct rtnl inner = {0};
  struct index_list before = {0};
  struct link_info info, inner_info;
  bool template_name, index_free;
  int ret;

  memset(moved, 0, sizeof(*moved));
  moved->host_name = host_name;
  if (new_name != NULL && (new_name[0] == '\0' || strcmp(new_name, host_name) == 0))
    new_name = NULL;
  template_name = new_name != NULL && strchr(new_name, '%') != NULL;

  ret = rtnl_open(&host, err);
  if (ret == 0)
    ret = rtnl_open_in_netns(&inner, netns_fd, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "%s", what);

  ret = rtnl_get_link(&host, host_name, 0, &info);
  if (ret == -ENODEV)
    return fsrun_error_make(err, 0, "%s: no such network device on the host", what);
  if (ret < 0)
    return fsrun_error_make(err, -ret, "%s: look up `%s`", what, host_name);

  /* Check first that the move can work, so that a refused move changes nothing. */
  if (!template_name) {
    const char *inside = new_name != NULL ? new_name : host_name;
    ret = rtnl_get_link(&inner, inside, 0, &inner_info);
    if (ret == 0)
      return fsrun_error_make(err, 0,
                              "%s: a device named `%s` already exists in the container's network "
                              "namespace",
                              what, inside);
    if (ret != -ENODEV)
      return fsrun_error_make(err, -ret, "%s: look up `%s` in the container's namespace", what,
                              inside);
  }
  /* The kernel keeps the ifindex when it is free inside; otherwise the device is the new index. */
  ret = rtnl_get_link(&inner, NULL, info.index, &inner_info);
  index_free = ret == -ENODEV;
  if (!index_free) {
    ret = rtnl_dump_link_indexes(&inner, &before);
    if (ret < 0) {
      free(before.items);
      return fsrun_error_make(err, -ret, "%s: list the container's devices", what);
    }
  }

  /* The kernel drops a device's addresses when it changes namespace: keep them to re-add. */
  ret = rtnl_dump_addrs(&host, info.index, &moved->addrs);
  if (ret < 0) {
    free(before.items);
    moved_device_release(moved);
    return fsrun_error_make(err, -ret, "%s: list the addresses of `%s`", what, host_name);
  }

  ret = rtnl_move_link(&host, info.index, netns_fd, new_name);
  if (ret < 0) {
    free(before.items);
    moved_device_release(moved);
    return fsrun_error_make(err, -ret, "%s: move `%s` into the container's network namespace", what,
                            host_name);
  }

  if (index_free) {
    moved->inner_index = info.index;
  } else {
    struct index_list after = {0};
    ret = rtnl_dump_link_indexes(&inner, &after);
    for (size_t i = 0; ret == 0 && i < after.len; i++)
      if (!index_list_has(&before, after.items[i]))
        moved->inner_index = after.items[i];
    free(after.items);
  }
  free(before.items);
  if (moved->inner_index <= 0) {
    moved_device_release(moved);
    return fsrun_error_make(err, 0, "%s: `%s` was moved but cannot be found inside", what,
                            host_name);
  }

  for (size_t i = 0; i < moved->addrs.len; i++) {
    ret = rtnl_add_addr(&inner, moved->inner_index, &moved->addrs.items[i]);
    if (ret < 0) {
      char text[64];
      format_addr(&moved->addrs.items[i], text, sizeof(text));
      fsrun_error_make(err, -ret, "%s: add address %s inside", what, text);
      goto undo;
    }
  }
  ret = rtnl_set_link_up(&inner, moved->inner_index, NULL);
  if (ret < 0) {
    fsrun_error_make(err, -ret, "%s: set the device up inside", what);
    goto undo;
  }
  if (rtnl_get_link(&inner, NULL, moved->inner_index, &inner_info) == 0)
    log_debug("%s: moved `%s` into the container as `%s` (%zu addresses)", what, host_name,
              inner_info.name, moved->addrs.len);
  return 0;

undo:
  undo_move(moved, netns_fd, what);
  return fsrun_error_code(err);
}

int netlink_move_device(const char *host_name, const char *new_name, int netns_fd, const char *what,
                        fsrun_error_t *err) {
  cleanup_free char *default_what = NULL;
  struct moved_device moved;
  int ret;
  if (what == NULL)
    what = default_what = xasprintf("network device `%s`", host_name);
  ret = move_device(host_name, new_name, netns_fd, what, &moved, err);
  if (ret == 0)
    moved_device_release(&moved);
  return ret;
}

int netlink_move_net_devices(const oci_linux *l, int netns_fd, fsrun_error_t *err) {
  cleanup_free struct moved_device *moved = NULL;
  cleanup_close int host_netns_fd = -1;
  size_t n_moved = 0;
  int ret = 0;

  if (l == NULL || l->n_net_devices == 0)
    return 0;
  host_netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (host_netns_fd < 0)
    return fsrun_error_errno(err, "linux.netDevices: open `/proc/thread-self/ns/net`");
  moved = xmalloc0(l->n_net_devices * sizeof(*moved));

  for (size_t i = 0; i < l->n_net_devices; i++) {
    const oci_net_device *d = &l->net_devices[i];
    cleanup_free char *what = xasprintf("linux.netDevices[\"%s\"]", d->host_name);
    ret = move_device(d->host_name, d->name, netns_fd, what, &moved[i], err);
    if (ret < 0)
      break;
    n_moved++;
  }
  if (ret < 0) {
    for (size_t i = n_moved; i-- > 0;) {
      cleanup_free char *what = xasprintf("linux.netDevices[\"%s\"]", moved[i].host_name);
      move_back(&moved[i], netns_fd, host_netns_fd, what);
    }
  }
  for (size_t i = 0; i < n_moved; i++)
    moved_device_release(&moved[i]);
  return ret;
}
