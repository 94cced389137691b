/* rtnetlink requests: link lookup, link up, moving a device into another network namespace with
 * its permanent addresses.
 *
 * The messages are built and parsed here, without a netlink library: a handful of request shapes
 * do not need one, and fsrun links statically, which needs an archive of every library it uses.
 *
 * Requests that must run inside the target namespace (name checks, addresses, link up) go through a
 * NETLINK_ROUTE socket created there: a netlink socket stays bound to the namespace it was created
 * in, so the thread enters the namespace only for the socket(2) call and comes straight back. */
#include "netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

/* IFA_F_* flags userspace may set on RTM_NEWADDR (the others are state the kernel keeps). */
#define ADDR_SETTABLE_FLAGS                                                                        \
  (IFA_F_NODAD | IFA_F_HOMEADDRESS | IFA_F_MANAGETEMPADDR | IFA_F_NOPREFIXROUTE | IFA_F_MCAUTOJOIN)

/* Answers: the kernel sizes a dump datagram by our largest read, capped at 32 KiB, so a buffer of
 * that size is never truncated. */
#define RTNL_BUF_SIZE 32768
#define RTNL_REQ_SIZE 1024 /* our requests: a header and a few attributes */

/* --- building requests
 * ---------------------------------------------------------------------------- */

/* A request in a caller's buffer: nlmsghdr, the family header (ifinfomsg, ifaddrmsg), attributes.
 * An attribute that does not fit is not written; the request remembers the failure, so a request
 * missing an attribute is never sent (rtnl_talk returns the error instead). */
struct nl_request {
  struct nlmsghdr *nlh;
  size_t size;
  int error; /* 0, or -EMSGSIZE once something did not fit */
};

/* Starts a request of `type` with `flags` (rtnl_talk adds NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP)
 * and a zeroed family header of family_len bytes, which it returns; NULL when the buffer is too
 * small even for that. buf must be aligned for struct nlmsghdr. */
static void *nl_request_init(struct nl_request *req, void *buf, size_t size, uint16_t type,
                             uint16_t flags, size_t family_len) {
  req->nlh = buf;
  req->size = size;
  req->error = 0;
  if (size < NLMSG_SPACE(family_len)) {
    req->error = -EMSGSIZE;
    return NULL;
  }
  memset(buf, 0, NLMSG_SPACE(family_len));
  req->nlh->nlmsg_len = NLMSG_SPACE(family_len);
  req->nlh->nlmsg_type = type;
  req->nlh->nlmsg_flags = flags;
  return NLMSG_DATA(req->nlh);
}

/* Appends an attribute with len bytes of data, zero-padded to NLA_ALIGNTO. Returns 0 or
 * -EMSGSIZE. */
static int nl_put_attr(struct nl_request *req, uint16_t type, const void *data, size_t len) {
  size_t start, space;
  struct nlattr *attr;
  if (req->error != 0)
    return req->error;
  start = NLMSG_ALIGN(req->nlh->nlmsg_len);
  /* nla_len is 16 bits wide */
  if (len > UINT16_MAX - NLA_HDRLEN || start > req->size) {
    req->error = -EMSGSIZE;
    return req->error;
  }
  space = NLA_ALIGN(NLA_HDRLEN + len);
  if (space > req->size - start) {
    req->error = -EMSGSIZE;
    return req->error;
  }
  attr = (struct nlattr *)((char *)req->nlh + start);
  attr->nla_len = (uint16_t)(NLA_HDRLEN + len);
  attr->nla_type = type;
  if (len > 0)
    memcpy((char *)attr + NLA_HDRLEN, data, len);
  memset((char *)attr + NLA_HDRLEN + len, 0, space - NLA_HDRLEN - len);
  req->nlh->nlmsg_len = (uint32_t)(start + space);
  return 0;
}

static int nl_put_u32(struct nl_request *req, uint16_t type, uint32_t value) {
  return nl_put_attr(req, type, &value, sizeof(value));
}

/* The string with its NUL, as the kernel expects for names. */
static int nl_put_str(struct nl_request *req, uint16_t type, const char *s) {
  return nl_put_attr(req, type, s, strlen(s) + 1);
}

/* --- parsing answers
 * ------------------------------------------------------------------------------- */

/* Indexes the attributes that follow the family_len-byte family header of nlh: tb[type] for each
 * type <= max, NULL for absent ones. Higher types (newer than our headers) are skipped. nlh must
 * lie within the received bytes (NLMSG_OK). Returns 0, or -EBADMSG when the family header does not
 * fit or an attribute is shorter than its own header or runs past the message. */
static int nl_parse_attrs(const struct nlmsghdr *nlh, size_t family_len, const struct nlattr **tb,
                          uint16_t max) {
  size_t offset = NLMSG_SPACE(family_len);
  memset(tb, 0, ((size_t)max + 1) * sizeof(*tb));
  if (nlh->nlmsg_len < NLMSG_LENGTH(family_len))
    return -EBADMSG;
  while (offset + NLA_HDRLEN <= nlh->nlmsg_len) {
    const struct nlattr *attr = (const struct nlattr *)((const char *)nlh + offset);
    uint16_t type = attr->nla_type & NLA_TYPE_MASK; /* without the nested/byte-order bits */
    if (attr->nla_len < NLA_HDRLEN || attr->nla_len > nlh->nlmsg_len - offset)
      return -EBADMSG;
    if (type <= max)
      tb[type] = attr;
    offset += NLA_ALIGN(attr->nla_len);
  }
  return 0;
}

static const void *nl_attr_data(const struct nlattr *attr) {
  return (const char *)attr + NLA_HDRLEN;
}

static size_t nl_attr_data_len(const struct nlattr *attr) {
  return attr->nla_len - NLA_HDRLEN;
}

/* A u32 attribute: false when absent or not exactly 4 bytes. */
static bool nl_attr_get_u32(const struct nlattr *attr, uint32_t *out) {
  if (attr == NULL || nl_attr_data_len(attr) != sizeof(*out))
    return false;
  memcpy(out, nl_attr_data(attr), sizeof(*out));
  return true;
}

/* A string attribute: NULL when absent or when its NUL is not within the attribute. */
static const char *nl_attr_get_str(const struct nlattr *attr) {
  if (attr == NULL || memchr(nl_attr_data(attr), '\0', nl_attr_data_len(attr)) == NULL)
    return NULL;
  return nl_attr_data(attr);
}

/* Called for each data message of an answer; returns 0 or -errno (which ends the request with
 * that error once the answer has been read to its end). */
typedef int (*rtnl_msg_cb)(const struct nlmsghdr *nlh, void *data);

/* The state of one request's answer while its datagrams come in. */
struct rtnl_answer {
  uint32_t seq, portid; /* what the answer's messages carry */
  rtnl_msg_cb cb;
  void *data;
  bool done;
  int error; /* the first failure: the kernel's, or cb's */
};

static void rtnl_answer_fail(struct rtnl_answer *a, int error) {
  if (a->error == 0)
    a->error = error;
}

/* Walks the messages of one received datagram of len bytes. */
static void rtnl_answer_feed(struct rtnl_answer *a, const void *buf, size_t len) {
  ssize_t left = (ssize_t)len;
  for (const struct nlmsghdr *nlh = buf; !a->done && NLMSG_OK(nlh, left);
       nlh = NLMSG_NEXT(nlh, left)) {
    /* Another request's messages, e.g. the rest of a dump an earlier failure stopped reading. */
    if (nlh->nlmsg_seq != a->seq || nlh->nlmsg_pid != a->portid)
      continue;
    if (nlh->nlmsg_type == NLMSG_ERROR) {
      const struct nlmsgerr *e = NLMSG_DATA(nlh);
      a->done = true;
      if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
        rtnl_answer_fail(a, -EBADMSG);
      else if (e->error != 0) /* 0 is the ack */
        rtnl_answer_fail(a, e->error < 0 ? e->error : -EPROTO);
    } else if (nlh->nlmsg_type == NLMSG_DONE) {
      int code = 0; /* a dump that failed midway says why here */
      a->done = true;
      if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(code)))
        memcpy(&code, NLMSG_DATA(nlh), sizeof(code));
      if (code < 0)
        rtnl_answer_fail(a, code);
    } else if (nlh->nlmsg_type < NLMSG_MIN_TYPE) {
      continue; /* NLMSG_NOOP, NLMSG_OVERRUN */
    } else if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
      /* The table changed during the dump, so what we saw may be incomplete. */
      rtnl_answer_fail(a, -EINTR);
    } else if (a->cb != NULL && a->error == 0) {
      int ret = a->cb(nlh, a->data);
      if (ret < 0)
        rtnl_answer_fail(a, ret);
    }
  }
}

/* --- the socket
 * ----------------------------------------------------------------------------------- */

struct rtnl {
  int fd;
  uint32_t portid;
  uint32_t seq;
};
#define RTNL_CLOSED ((struct rtnl){.fd = -1}) /* fd 0 is a real fd: {0} would close stdin */

static void rtnl_close(struct rtnl *s) {
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
}

static int rtnl_open(struct rtnl *s, fsrun_error_t *err) {
  struct sockaddr_nl addr = {.nl_family = AF_NETLINK}; /* nl_pid 0: the kernel picks our port */
  socklen_t addr_len = sizeof(addr);
  int ret;
  s->seq = 0;
  s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (s->fd < 0)
    return fsrun_error_errno(err, "open rtnetlink socket");
  if (bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
    ret = fsrun_error_errno(err, "bind rtnetlink socket");
    rtnl_close(s);
    return ret;
  }
  /* The kernel addresses its answers to this port; anything else is not ours. */
  if (getsockname(s->fd, (struct sockaddr *)&addr, &addr_len) < 0) {
    ret = fsrun_error_errno(err, "read the rtnetlink socket's port id");
    rtnl_close(s);
    return ret;
  }
  s->portid = addr.nl_pid;
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

/* Sends the request and reads the answer to its end (the ack, or NLMSG_DONE for a dump), passing
 * data messages to cb (may be NULL). Returns 0 or -errno: the kernel's error for a refused
 * request. A dump is told by the caller: NLM_F_DUMP's bits mean NLM_F_REPLACE/NLM_F_EXCL on a NEW
 * request. */
static int rtnl_talk_full(struct rtnl *s, struct nl_request *req, bool dump, rtnl_msg_cb cb,
                          void *data) {
  char buf[RTNL_BUF_SIZE] __attribute__((aligned(8)));
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  struct rtnl_answer answer = {.portid = s->portid, .cb = cb, .data = data};
  struct nlmsghdr *nlh = req->nlh;
  ssize_t n;

  if (req->error != 0)
    return req->error;
  nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
  nlh->nlmsg_seq = answer.seq = ++s->seq;
  do
    n = sendto(s->fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if ((size_t)n != nlh->nlmsg_len)
    return -EIO;

  while (!answer.done) {
    struct sockaddr_nl from;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    struct msghdr msg = {
        .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
    n = recvmsg(s->fd, &msg, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    if (msg.msg_flags & MSG_TRUNC)
      return -EMSGSIZE;
    /* Other processes may send to our port too; only the kernel answers. */
    if (msg.msg_namelen != sizeof(from) || from.nl_pid != 0)
      continue;
    rtnl_answer_feed(&answer, buf, (size_t)n);
  }
  return answer.error;
}

static int rtnl_talk(struct rtnl *s, struct nl_request *req, rtnl_msg_cb cb, void *data) {
  return rtnl_talk_full(s, req, false, cb, data);
}

static int rtnl_dump(struct rtnl *s, struct nl_request *req, rtnl_msg_cb cb, void *data) {
  return rtnl_talk_full(s, req, true, cb, data);
}

/* --- links
 * ---------------------------------------------------------------------------------------- */

struct link_info {
  int index;
  unsigned int flags;
  char name[IFNAMSIZ];
};

static int link_msg_cb(const struct nlmsghdr *nlh, void *data) {
  struct link_info *info = data;
  const struct ifinfomsg *ifm = NLMSG_DATA(nlh);
  const struct nlattr *tb[IFLA_MAX + 1];
  const char *name;
  if (nlh->nlmsg_type != RTM_NEWLINK)
    return 0;
  if (nl_parse_attrs(nlh, sizeof(*ifm), tb, IFLA_MAX) < 0)
    return -EBADMSG;
  info->index = ifm->ifi_index;
  info->flags = ifm->ifi_flags;
  name = nl_attr_get_str(tb[IFLA_IFNAME]);
  if (name != NULL)
    snprintf(info->name, sizeof(info->name), "%s", name);
  return 0;
}

/* Looks a link up by name (index 0) or by index (name NULL). Returns 0, or -errno (-ENODEV when
 * there is no such link). */
static int rtnl_get_link(struct rtnl *s, const char *name, int index, struct link_info *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifinfomsg *ifm = nl_request_init(&req, buf, sizeof(buf), RTM_GETLINK, 0, sizeof(*ifm));
  if (ifm == NULL)
    return -EMSGSIZE;
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  if (name != NULL)
    nl_put_str(&req, IFLA_IFNAME, name);
  memset(out, 0, sizeof(*out));
  return rtnl_talk(s, &req, link_msg_cb, out);
}

struct index_list {
  int *items;
  size_t len;
};

static int link_dump_cb(const struct nlmsghdr *nlh, void *data) {
  struct index_list *l = data;
  const struct ifinfomsg *ifm = NLMSG_DATA(nlh);
  int *items;
  if (nlh->nlmsg_type != RTM_NEWLINK)
    return 0;
  if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifm)))
    return -EBADMSG;
  items = reallocarray(l->items, l->len + 1, sizeof(int));
  if (items == NULL)
    abort();
  l->items = items;
  l->items[l->len++] = ifm->ifi_index;
  return 0;
}

static int rtnl_dump_link_indexes(struct rtnl *s, struct index_list *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifinfomsg *ifm = nl_request_init(&req, buf, sizeof(buf), RTM_GETLINK, 0, sizeof(*ifm));
  if (ifm == NULL)
    return -EMSGSIZE;
  ifm->ifi_family = AF_UNSPEC;
  return rtnl_dump(s, &req, link_dump_cb, out);
}

static bool index_list_has(const struct index_list *l, int index) {
  for (size_t i = 0; i < l->len; i++)
    if (l->items[i] == index)
      return true;
  return false;
}

static int rtnl_set_link_up(struct rtnl *s, int index, const char *name) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifinfomsg *ifm = nl_request_init(&req, buf, sizeof(buf), RTM_NEWLINK, 0, sizeof(*ifm));
  if (ifm == NULL)
    return -EMSGSIZE;
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;
  if (index == 0 && name != NULL)
    nl_put_str(&req, IFLA_IFNAME, name);
  return rtnl_talk(s, &req, NULL, NULL);
}

/* Moves link `index` of s's namespace into netns_fd, naming it new_name there (NULL: keep). */
static int rtnl_move_link(struct rtnl *s, int index, int netns_fd, const char *new_name) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifinfomsg *ifm = nl_request_init(&req, buf, sizeof(buf), RTM_NEWLINK, 0, sizeof(*ifm));
  if (ifm == NULL)
    return -EMSGSIZE;
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = index;
  nl_put_u32(&req, IFLA_NET_NS_FD, (uint32_t)netns_fd);
  /* With an index, IFLA_IFNAME renames; the kernel applies it in the new namespace. */
  if (new_name != NULL)
    nl_put_str(&req, IFLA_IFNAME, new_name);
  return rtnl_talk(s, &req, NULL, NULL);
}

int netlink_link_up(const char *ifname, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl s = RTNL_CLOSED;
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

/* --- unreachable routes
 * ------------------------------------------------------------------------------ */

/* "A.B.C.D/N" or "X::Y/N" into family, address and length; false when it is neither (bits set
 * past the length are refused as the kernel would: EINVAL) */
static bool parse_prefix(const char *text, unsigned char *family, unsigned char addr[16],
                         unsigned char *len) {
  char host[INET6_ADDRSTRLEN];
  const char *slash = strchr(text, '/');
  char *end = NULL;
  long bits;
  size_t n = slash != NULL ? (size_t)(slash - text) : 0;
  if (n == 0 || n >= sizeof(host))
    return false;
  memcpy(host, text, n);
  host[n] = '\0';
  *family = strchr(host, ':') != NULL ? AF_INET6 : AF_INET;
  if (inet_pton(*family, host, addr) != 1)
    return false;
  errno = 0;
  bits = strtol(slash + 1, &end, 10);
  if (errno != 0 || end == slash + 1 || *end != '\0' || bits < 0 ||
      bits > (*family == AF_INET ? 32 : 128))
    return false;
  *len = (unsigned char)bits;
  return true;
}

static int rtnl_add_unreachable(struct rtnl *s, unsigned char family, const unsigned char *addr,
                                unsigned char len) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct rtmsg *rtm = nl_request_init(&req, buf, sizeof(buf), RTM_NEWROUTE,
                                      NLM_F_CREATE | NLM_F_EXCL, sizeof(*rtm));
  if (rtm == NULL)
    return -EMSGSIZE;
  rtm->rtm_family = family;
  rtm->rtm_dst_len = len;
  rtm->rtm_table = RT_TABLE_MAIN;
  rtm->rtm_protocol = RTPROT_STATIC;
  rtm->rtm_scope = RT_SCOPE_UNIVERSE;
  rtm->rtm_type = RTN_UNREACHABLE; /* connect(2): EHOSTUNREACH or ENETUNREACH, no packet sent */
  nl_put_attr(&req, RTA_DST, addr, family == AF_INET ? 4 : 16);
  return rtnl_talk(s, &req, NULL, NULL);
}

int netlink_add_unreachable_routes(const char *text, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl s = RTNL_CLOSED;
  char prefix[INET6_ADDRSTRLEN + 8];
  int ret;
  while (text != NULL && *text != '\0') {
    size_t n = strcspn(text, " ");
    unsigned char family, addr[16], len;
    if (n == 0) {
      text++;
      continue;
    }
    if (n >= sizeof(prefix))
      return fsrun_error_make(err, EINVAL, NETLINK_UNREACHABLE_ANNOTATION ": not a prefix: `%.*s`",
                              (int)n, text);
    memcpy(prefix, text, n);
    prefix[n] = '\0';
    text += n;
    if (!parse_prefix(prefix, &family, addr, &len))
      return fsrun_error_make(err, EINVAL, NETLINK_UNREACHABLE_ANNOTATION ": not a prefix: `%s`",
                              prefix);
    if (s.fd < 0 && (ret = rtnl_open(&s, err)) < 0)
      return ret;
    ret = rtnl_add_unreachable(&s, family, addr, len);
    if (ret < 0)
      return fsrun_error_make(err, -ret, NETLINK_UNREACHABLE_ANNOTATION ": add `%s`", prefix);
  }
  return 0;
}

/* --- TCP only: policy rules
 * -------------------------------------------------------------------------- */

/* The rules' priorities: after `local` (0: the namespace's own addresses, loopback, answer
 * first), before `main` (32766) */
enum { RULE_PRIO_TCP = 100, RULE_PRIO_DNS, RULE_PRIO_REST };

/* One IPv4 rule: ip_proto 0 = any; dst NULL = any; port 0 = any; action FR_ACT_TO_TBL (main)
 * or FR_ACT_UNREACHABLE */
static int rtnl_add_rule(struct rtnl *s, uint32_t prio, uint8_t ip_proto, const struct in_addr *dst,
                         uint16_t port, uint8_t action) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct fib_rule_hdr *frh =
      nl_request_init(&req, buf, sizeof(buf), RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, sizeof(*frh));
  uint32_t table = RT_TABLE_MAIN;
  if (frh == NULL)
    return -EMSGSIZE;
  frh->family = AF_INET;
  frh->action = action;
  frh->table = action == FR_ACT_TO_TBL ? RT_TABLE_MAIN : RT_TABLE_UNSPEC;
  nl_put_attr(&req, FRA_PRIORITY, &prio, sizeof(prio));
  if (action == FR_ACT_TO_TBL)
    nl_put_attr(&req, FRA_TABLE, &table, sizeof(table));
  if (ip_proto != 0)
    nl_put_attr(&req, FRA_IP_PROTO, &ip_proto, sizeof(ip_proto));
  if (dst != NULL) {
    frh->dst_len = 32;
    nl_put_attr(&req, FRA_DST, dst, sizeof(*dst));
  }
  if (port != 0) {
    struct fib_rule_port_range range = {.start = port, .end = port};
    nl_put_attr(&req, FRA_DPORT_RANGE, &range, sizeof(range));
  }
  return rtnl_talk(s, &req, NULL, NULL);
}

int netlink_tcp_only(const char *udp_allowed, fsrun_error_t *err) {
  cleanup_rtnl struct rtnl s = RTNL_CLOSED;
  char host[INET_ADDRSTRLEN];
  const char *colon = strchr(udp_allowed, ':');
  struct in_addr dst;
  char *end = NULL;
  unsigned long port;
  size_t n = colon != NULL ? (size_t)(colon - udp_allowed) : 0;
  int ret;
  if (n == 0 || n >= sizeof(host))
    return fsrun_error_make(err, EINVAL, NETLINK_TCP_ONLY_ANNOTATION ": not ADDRESS:PORT: `%s`",
                            udp_allowed);
  memcpy(host, udp_allowed, n);
  host[n] = '\0';
  errno = 0;
  port = strtoul(colon + 1, &end, 10);
  if (inet_pton(AF_INET, host, &dst) != 1 || errno != 0 || end == colon + 1 || *end != '\0' ||
      port == 0 || port > 65535)
    return fsrun_error_make(err, EINVAL, NETLINK_TCP_ONLY_ANNOTATION ": not ADDRESS:PORT: `%s`",
                            udp_allowed);
  ret = rtnl_open(&s, err);
  if (ret < 0)
    return ret;
  /* the selectors need Linux 4.17, which every kernel with Landlock (5.13) is; the catch-all
   * comes last: a failure before it leaves the namespace as it was, never TCP unreachable */
  ret = rtnl_add_rule(&s, RULE_PRIO_TCP, IPPROTO_TCP, NULL, 0, FR_ACT_TO_TBL);
  if (ret == 0)
    ret = rtnl_add_rule(&s, RULE_PRIO_DNS, IPPROTO_UDP, &dst, (uint16_t)port, FR_ACT_TO_TBL);
  if (ret == 0)
    ret = rtnl_add_rule(&s, RULE_PRIO_REST, 0, NULL, 0, FR_ACT_UNREACHABLE);
  if (ret < 0)
    return fsrun_error_make(err, -ret, NETLINK_TCP_ONLY_ANNOTATION ": add the policy rules");
  return 0;
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

static void copy_addr_attr(const struct nlattr *attr, unsigned char *dst, size_t *len) {
  size_t n = attr != NULL ? nl_attr_data_len(attr) : 0;
  if (n > 16)
    n = 0; /* not an IPv4/IPv6 address */
  if (n > 0)
    memcpy(dst, nl_attr_data(attr), n);
  *len = n;
}

static int addr_dump_cb(const struct nlmsghdr *nlh, void *data) {
  struct addr_list *l = data;
  const struct ifaddrmsg *ifa = NLMSG_DATA(nlh);
  const struct nlattr *tb[IFA_MAX + 1];
  struct saved_addr sa = {0};
  struct saved_addr *items;

  if (nlh->nlmsg_type != RTM_NEWADDR)
    return 0;
  if (nl_parse_attrs(nlh, sizeof(*ifa), tb, IFA_MAX) < 0)
    return -EBADMSG;
  if ((int)ifa->ifa_index != l->index)
    return 0;
  /* IFA_FLAGS has all 32 bits; ifa_flags only the low 8. */
  if (!nl_attr_get_u32(tb[IFA_FLAGS], &sa.flags))
    sa.flags = ifa->ifa_flags;
  /* The spec keeps permanent addresses of global scope: no autoconfigured or link-local ones. */
  if (!(sa.flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE)
    return 0;
  sa.family = ifa->ifa_family;
  sa.prefixlen = ifa->ifa_prefixlen;
  sa.scope = ifa->ifa_scope;
  copy_addr_attr(tb[IFA_LOCAL], sa.local, &sa.local_len);
  copy_addr_attr(tb[IFA_ADDRESS], sa.address, &sa.address_len);
  copy_addr_attr(tb[IFA_BROADCAST], sa.broadcast, &sa.broadcast_len);
  if (sa.local_len == 0 && sa.address_len == 0)
    return 0;
  items = reallocarray(l->items, l->len + 1, sizeof(*items));
  if (items == NULL)
    abort();
  l->items = items;
  l->items[l->len++] = sa;
  return 0;
}

static int rtnl_dump_addrs(struct rtnl *s, int index, struct addr_list *out) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifaddrmsg *ifa = nl_request_init(&req, buf, sizeof(buf), RTM_GETADDR, 0, sizeof(*ifa));
  if (ifa == NULL)
    return -EMSGSIZE;
  ifa->ifa_family = AF_UNSPEC;
  out->index = index;
  return rtnl_dump(s, &req, addr_dump_cb, out);
}

static int rtnl_add_addr(struct rtnl *s, int index, const struct saved_addr *sa) {
  char buf[RTNL_REQ_SIZE] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifaddrmsg *ifa = nl_request_init(&req, buf, sizeof(buf), RTM_NEWADDR,
                                          NLM_F_CREATE | NLM_F_REPLACE, sizeof(*ifa));
  uint32_t flags = sa->flags & ADDR_SETTABLE_FLAGS;
  if (ifa == NULL)
    return -EMSGSIZE;
  ifa->ifa_family = sa->family;
  ifa->ifa_prefixlen = sa->prefixlen;
  ifa->ifa_scope = sa->scope;
  ifa->ifa_flags = (unsigned char)(flags & 0xff);
  ifa->ifa_index = (unsigned int)index;
  if (sa->local_len > 0)
    nl_put_attr(&req, IFA_LOCAL, sa->local, sa->local_len);
  if (sa->address_len > 0)
    nl_put_attr(&req, IFA_ADDRESS, sa->address, sa->address_len);
  if (sa->broadcast_len > 0)
    nl_put_attr(&req, IFA_BROADCAST, sa->broadcast, sa->broadcast_len);
  if (flags > 0xff)
    nl_put_u32(&req, IFA_FLAGS, flags);
  return rtnl_talk(s, &req, NULL, NULL);
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
  cleanup_rtnl struct rtnl s = RTNL_CLOSED;
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
  struct rtnl inner = RTNL_CLOSED, host = RTNL_CLOSED;
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
  cleanup_rtnl struct rtnl host = RTNL_CLOSED;
  cleanup_rtnl struct rtnl inner = RTNL_CLOSED;
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
