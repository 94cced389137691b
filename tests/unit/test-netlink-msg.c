/* netlink.c's own message code, without a socket: the request builder (layout, padding, the
 * bounds check at the end of the buffer), the attribute parser (malformed lengths, unknown types,
 * strings without their NUL, u32 sizes), the answer walk (seq/port filtering, ack, errors, dump
 * end, callback failures) and the link/address callbacks on crafted kernel messages.
 *
 * The helpers are static, so this file includes netlink.c itself instead of widening netlink.h;
 * the public functions it brings along are not called. TAP output. */
#include "netlink.c"

#include <stdlib.h>

#include "tap.h"

/* --- the builder
 * ---------------------------------------------------------------------------------- */

#define FILL 0xAA /* bytes the builder must not have written */

static bool all_bytes(const unsigned char *p, size_t len, unsigned char value) {
  for (size_t i = 0; i < len; i++)
    if (p[i] != value)
      return false;
  return true;
}

static void test_builder_layout(void) {
  unsigned char buf[256] __attribute__((aligned(8)));
  struct nl_request req;
  struct ifinfomsg *ifm;
  const struct nlattr *attr;
  uint32_t mtu;

  memset(buf, FILL, sizeof(buf));
  ifm = nl_request_init(&req, buf, sizeof(buf), RTM_NEWLINK, NLM_F_CREATE, sizeof(*ifm));
  tap_ok(ifm == (void *)(buf + NLMSG_HDRLEN) && req.nlh->nlmsg_len == NLMSG_HDRLEN + sizeof(*ifm),
         "init: the family header follows nlmsghdr (nlmsg_len %u)", req.nlh->nlmsg_len);
  tap_ok(req.nlh->nlmsg_type == RTM_NEWLINK && req.nlh->nlmsg_flags == NLM_F_CREATE &&
             req.nlh->nlmsg_seq == 0 && all_bytes(buf + NLMSG_HDRLEN, sizeof(*ifm), 0),
         "init: type and flags set, the rest of the headers zeroed");

  tap_ok(nl_put_str(&req, IFLA_IFNAME, "eth0") == 0, "put a 4-character name");
  attr = (const struct nlattr *)(buf + NLMSG_SPACE(sizeof(*ifm)));
  tap_ok(attr->nla_type == IFLA_IFNAME && attr->nla_len == NLA_HDRLEN + 5 &&
             memcmp(nl_attr_data(attr), "eth0", 5) == 0,
         "the name attribute carries the string with its NUL (nla_len %u)", attr->nla_len);
  tap_ok(all_bytes((const unsigned char *)attr + NLA_HDRLEN + 5, 3, 0) &&
             req.nlh->nlmsg_len == NLMSG_SPACE(sizeof(*ifm)) + 12,
         "it is zero-padded to 4 bytes and nlmsg_len counts the padding (%u)", req.nlh->nlmsg_len);

  tap_ok(nl_put_u32(&req, IFLA_MTU, 1500) == 0, "put a u32");
  attr = (const struct nlattr *)(buf + NLMSG_SPACE(sizeof(*ifm)) + 12);
  memcpy(&mtu, nl_attr_data(attr), sizeof(mtu));
  tap_ok(attr->nla_type == IFLA_MTU && attr->nla_len == 8 && mtu == 1500 &&
             req.nlh->nlmsg_len == NLMSG_SPACE(sizeof(*ifm)) + 20,
         "the u32 attribute follows, aligned");
  tap_ok(all_bytes(buf + req.nlh->nlmsg_len, sizeof(buf) - req.nlh->nlmsg_len, FILL),
         "nothing written after nlmsg_len");
}

static void test_builder_bounds(void) {
  /* room for the headers and exactly one u32 attribute, then 16 bytes the builder must not touch */
  enum { FITS = NLMSG_SPACE(sizeof(struct ifinfomsg)) + 8 };
  unsigned char buf[FITS + 16] __attribute__((aligned(8)));
  struct nl_request req;
  struct rtnl closed = RTNL_CLOSED;
  unsigned char *big, *data;

  memset(buf, FILL, sizeof(buf));
  nl_request_init(&req, buf, FITS, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_u32(&req, IFLA_MTU, 1) == 0 && req.nlh->nlmsg_len == FITS,
         "an attribute that ends exactly at the end of the buffer fits");
  tap_ok(nl_put_u32(&req, IFLA_MTU, 2) == -EMSGSIZE && req.nlh->nlmsg_len == FITS,
         "one more returns -EMSGSIZE and leaves nlmsg_len");
  tap_ok(all_bytes(buf + FITS, 16, FILL), "and writes nothing past the end");

  /* a 12-byte attribute does not fit, an 8-byte one would: the request must stay failed */
  nl_request_init(&req, buf, FITS, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_str(&req, IFLA_IFNAME, "abcd") == -EMSGSIZE &&
             nl_put_u32(&req, IFLA_MTU, 1) == -EMSGSIZE &&
             req.nlh->nlmsg_len == NLMSG_SPACE(sizeof(struct ifinfomsg)),
         "after a failure a smaller attribute that would fit is refused too: the request stays "
         "failed");
  /* fd -1: a send would fail with EBADF, so -EMSGSIZE shows nothing was sent */
  tap_ok(rtnl_talk(&closed, &req, NULL, NULL) == -EMSGSIZE,
         "a failed request is never sent: rtnl_talk returns -EMSGSIZE");

  memset(buf, FILL, sizeof(buf));
  nl_request_init(&req, buf, FITS - 1, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_u32(&req, IFLA_MTU, 1) == -EMSGSIZE &&
             all_bytes(buf + NLMSG_SPACE(sizeof(struct ifinfomsg)), 8 + 16, FILL),
         "one byte short: refused, and none of its bytes written");

  memset(buf, FILL, sizeof(buf));
  nl_request_init(&req, buf, FITS, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_str(&req, IFLA_IFNAME, "abc") == 0, "a 4-byte string fills 8 bytes exactly");
  nl_request_init(&req, buf, FITS, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_str(&req, IFLA_IFNAME, "abcd") == -EMSGSIZE && all_bytes(buf + FITS, 16, FILL),
         "a 5-byte string whose padding would not fit is refused");

  tap_ok(nl_request_init(&req, buf, NLMSG_SPACE(sizeof(struct ifinfomsg)) - 1, RTM_NEWLINK, 0,
                         sizeof(struct ifinfomsg)) == NULL &&
             req.error == -EMSGSIZE,
         "a buffer too small for the headers: init returns NULL and the request is failed");

  big = malloc(UINT16_MAX * 2);
  data = calloc(1, UINT16_MAX);
  if (big == NULL || data == NULL)
    abort();
  nl_request_init(&req, big, UINT16_MAX * 2, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_attr(&req, IFLA_IFALIAS, data, UINT16_MAX - NLA_HDRLEN) == 0,
         "the largest attribute (nla_len 65535) fits a large buffer");
  nl_request_init(&req, big, UINT16_MAX * 2, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
  tap_ok(nl_put_attr(&req, IFLA_IFALIAS, data, UINT16_MAX - NLA_HDRLEN + 1) == -EMSGSIZE,
         "one byte more cannot be described by the 16-bit nla_len: -EMSGSIZE");
  free(big);
  free(data);
}

/* --- the parser
 * ----------------------------------------------------------------------------------- */

/* A RTM_NEWLINK message with a name, an MTU, a nested attribute and a type newer than IFLA_MAX. */
static struct nlmsghdr *make_link_msg(unsigned char *buf, size_t size, const char *name) {
  struct nl_request req;
  struct ifinfomsg *ifm = nl_request_init(&req, buf, size, RTM_NEWLINK, 0, sizeof(*ifm));
  ifm->ifi_index = 42;
  ifm->ifi_flags = IFF_UP | IFF_LOOPBACK;
  nl_put_str(&req, IFLA_IFNAME, name);
  nl_put_u32(&req, IFLA_MTU, 1500);
  nl_put_attr(&req, IFLA_LINKINFO | NLA_F_NESTED, "\0\0\0\0", 4);
  nl_put_u32(&req, IFLA_MAX + 5, 7);
  return req.error == 0 ? req.nlh : NULL;
}

/* The last attribute of a message built by make_link_msg (the unknown type, 8 bytes). */
static struct nlattr *last_attr(struct nlmsghdr *nlh) {
  return (struct nlattr *)((char *)nlh + nlh->nlmsg_len - 8);
}

static void test_parser(void) {
  unsigned char buf[256] __attribute__((aligned(8)));
  const struct nlattr *tb[IFLA_MAX + 1];
  const struct nlattr *small[IFLA_IFNAME + 2];
  const struct nlattr *sentinel = (const void *)buf;
  struct nlmsghdr *nlh = make_link_msg(buf, sizeof(buf), "eth0");
  uint32_t value = 0;
  bool ok;

  tap_ok(nlh != NULL && nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == 0,
         "a well-formed message parses");
  tap_ok(nl_attr_get_str(tb[IFLA_IFNAME]) != NULL &&
             strcmp(nl_attr_get_str(tb[IFLA_IFNAME]), "eth0") == 0,
         "the name is found by its type");
  ok = nl_attr_get_u32(tb[IFLA_MTU], &value);
  tap_ok(ok && value == 1500, "the MTU reads as a u32 (%u)", value);
  tap_ok(tb[IFLA_LINKINFO] != NULL, "a nested attribute is indexed without its NLA_F_NESTED bit");
  tap_ok(tb[IFLA_ADDRESS] == NULL, "absent types are NULL");

  small[IFLA_IFNAME + 1] = sentinel;
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), small, IFLA_IFNAME) == 0 &&
             small[IFLA_IFNAME] != NULL && small[IFLA_IFNAME + 1] == sentinel,
         "types above max are skipped, and the table is not written past max");

  last_attr(nlh)->nla_len = 12; /* 4 bytes more than the message holds */
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == -EBADMSG,
         "an attribute running past the message is -EBADMSG");
  last_attr(nlh)->nla_len = 0; /* would never advance */
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == -EBADMSG,
         "an attribute shorter than its header (nla_len 0) is -EBADMSG, not a loop");
  last_attr(nlh)->nla_len = 3;
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == -EBADMSG,
         "nla_len 3 is -EBADMSG");

  nlh = make_link_msg(buf, sizeof(buf), "eth0");
  nlh->nlmsg_len -= 6; /* the last attribute's header is cut: 2 stray bytes at the end */
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == 0 && tb[IFLA_MTU] != NULL,
         "fewer trailing bytes than an attribute header are ignored");

  nlh->nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg) - 1);
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == -EBADMSG,
         "a message shorter than its family header is -EBADMSG");
  nlh->nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
  tap_ok(nl_parse_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX) == 0 &&
             tb[IFLA_IFNAME] == NULL,
         "a message with no attributes parses to an empty table");
}

/* An attribute of the given payload in a buffer, for the accessor checks. */
static const struct nlattr *make_attr(unsigned char *buf, const void *data, uint16_t len) {
  struct nlattr *attr = (struct nlattr *)buf;
  attr->nla_len = NLA_HDRLEN + len;
  attr->nla_type = 1;
  memcpy(buf + NLA_HDRLEN, data, len);
  return attr;
}

static void test_attr_values(void) {
  unsigned char buf[32] __attribute__((aligned(8)));
  uint32_t value = 0;
  const char *s;

  tap_ok(nl_attr_get_str(make_attr(buf, "eth0", 4)) == NULL,
         "a string without a NUL within the attribute is refused");
  tap_ok(nl_attr_get_str(make_attr(buf, "", 0)) == NULL, "an empty attribute is not a string");
  s = nl_attr_get_str(make_attr(buf, "a\0bc", 4));
  tap_ok(s != NULL && strcmp(s, "a") == 0, "a NUL inside the attribute ends the string");
  tap_ok(nl_attr_get_str(NULL) == NULL, "an absent string is NULL");

  tap_ok(!nl_attr_get_u32(make_attr(buf, "\1\0", 2), &value), "a 2-byte u32 is refused");
  tap_ok(!nl_attr_get_u32(make_attr(buf, "\1\0\0\0\0\0\0\0", 8), &value),
         "an 8-byte u32 is refused");
  tap_ok(!nl_attr_get_u32(NULL, &value), "an absent u32 is refused");
}

/* --- the answer walk
 * ------------------------------------------------------------------------------ */

/* Datagrams are written message by message into a heap buffer of the exact size, so that any read
 * past the end shows under ASan. */
struct datagram {
  unsigned char bytes[1024] __attribute__((aligned(8)));
  size_t len;
};

static void put_msg(struct datagram *d, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid,
                    const void *payload, size_t len) {
  struct nlmsghdr *nlh = (struct nlmsghdr *)(d->bytes + d->len);
  memset(nlh, 0, NLMSG_SPACE(len));
  nlh->nlmsg_len = NLMSG_LENGTH(len);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
  nlh->nlmsg_pid = pid;
  if (len > 0)
    memcpy(NLMSG_DATA(nlh), payload, len);
  d->len += NLMSG_SPACE(len);
}

static void put_error(struct datagram *d, uint32_t seq, uint32_t pid, int error) {
  struct nlmsgerr e = {.error = error};
  put_msg(d, NLMSG_ERROR, 0, seq, pid, &e, sizeof(e));
}

static void put_done(struct datagram *d, uint32_t seq, uint32_t pid, int code) {
  put_msg(d, NLMSG_DONE, NLM_F_MULTI, seq, pid, &code, sizeof(code));
}

static void put_link(struct datagram *d, uint16_t flags, uint32_t seq, uint32_t pid) {
  struct ifinfomsg ifm = {.ifi_index = 1};
  put_msg(d, RTM_NEWLINK, flags, seq, pid, &ifm, sizeof(ifm));
}

struct calls {
  int count;
  int fail_with; /* returned by every call when not 0 */
};

static int count_cb(const struct nlmsghdr *nlh, void *data) {
  struct calls *c = data;
  c->count++;
  return c->fail_with;
}

enum { SEQ = 5, PORT = 7 };

static void feed(struct rtnl_answer *a, const struct datagram *d) {
  unsigned char *copy = malloc(d->len > 0 ? d->len : 1);
  if (copy == NULL)
    abort();
  memcpy(copy, d->bytes, d->len);
  rtnl_answer_feed(a, copy, d->len);
  free(copy);
}

static void test_answer(void) {
  struct calls calls = {0};
  struct rtnl_answer a;
  struct datagram d;

#define START()                                                                                    \
  do {                                                                                             \
    calls = (struct calls){0};                                                                     \
    a = (struct rtnl_answer){.seq = SEQ, .portid = PORT, .cb = count_cb, .data = &calls};          \
    d.len = 0;                                                                                     \
  } while (0)

  START();
  put_link(&d, 0, SEQ, PORT);
  put_error(&d, SEQ, PORT, 0);
  feed(&a, &d);
  tap_ok(calls.count == 1 && a.done && a.error == 0,
         "a reply then the ack: one callback, done, no error");

  START();
  put_link(&d, 0, SEQ - 1, PORT);
  put_link(&d, 0, SEQ, PORT + 1);
  put_error(&d, SEQ - 1, PORT, -EPERM);
  put_error(&d, SEQ, PORT, -ENODEV);
  feed(&a, &d);
  tap_ok(calls.count == 0 && a.done && a.error == -ENODEV,
         "messages of another seq or port are skipped, ours ends it with the kernel's error "
         "(%d)",
         a.error);

  START();
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  feed(&a, &d);
  tap_ok(calls.count == 2 && !a.done, "a dump's first datagram: two callbacks, not done yet");
  d.len = 0;
  put_msg(&d, NLMSG_NOOP, 0, SEQ, PORT, NULL, 0);
  put_done(&d, SEQ, PORT, 0);
  feed(&a, &d);
  tap_ok(calls.count == 2 && a.done && a.error == 0, "NLMSG_NOOP is ignored, NLMSG_DONE ends it");

  START();
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  put_done(&d, SEQ, PORT, -EOPNOTSUPP);
  feed(&a, &d);
  tap_ok(a.done && a.error == -EOPNOTSUPP, "an error carried by NLMSG_DONE is returned");

  START();
  calls.fail_with = -ENOMEM;
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  put_done(&d, SEQ, PORT, -EIO);
  feed(&a, &d);
  tap_ok(calls.count == 1 && a.done && a.error == -ENOMEM,
         "a callback failure stops the callbacks, the answer is still read to its end, and the "
         "first error wins");

  START();
  put_link(&d, NLM_F_MULTI, SEQ, PORT);
  put_link(&d, NLM_F_MULTI | NLM_F_DUMP_INTR, SEQ, PORT);
  put_done(&d, SEQ, PORT, 0);
  feed(&a, &d);
  tap_ok(calls.count == 1 && a.done && a.error == -EINTR,
         "a dump the kernel marks as interrupted is -EINTR");

  START();
  put_msg(&d, NLMSG_ERROR, 0, SEQ, PORT, "\0\0\0\0", 4);
  feed(&a, &d);
  tap_ok(a.done && a.error == -EBADMSG, "an NLMSG_ERROR too short for nlmsgerr is -EBADMSG");

  START();
  put_link(&d, 0, SEQ, PORT);
  put_error(&d, SEQ, PORT, 0);
  ((struct nlmsghdr *)d.bytes)->nlmsg_len = (uint32_t)d.len + 4;
  feed(&a, &d);
  tap_ok(calls.count == 0 && !a.done, "a message longer than the datagram stops the walk");

  START();
  put_link(&d, 0, SEQ, PORT);
  ((struct nlmsghdr *)d.bytes)->nlmsg_len = 8;
  feed(&a, &d);
  tap_ok(calls.count == 0 && !a.done, "a message shorter than nlmsghdr stops the walk");

  START();
  put_error(&d, SEQ, PORT, 0);
  d.len -= 2; /* the datagram ends inside the message */
  feed(&a, &d);
  tap_ok(!a.done, "a message cut by the datagram's end is not read");
#undef START
}

/* --- the link and address callbacks
 * --------------------------------------------------------------- */

static void test_link_cb(void) {
  unsigned char buf[256] __attribute__((aligned(8)));
  struct link_info info;
  struct nlmsghdr *nlh = make_link_msg(buf, sizeof(buf), "lo");
  struct nlattr *name;

  memset(&info, 0, sizeof(info));
  tap_ok(link_msg_cb(nlh, &info) == 0 && info.index == 42 &&
             info.flags == (IFF_UP | IFF_LOOPBACK) && strcmp(info.name, "lo") == 0,
         "link_msg_cb: index, flags and name of RTM_NEWLINK");

  /* the name attribute made to hold "lo\0\0" without any NUL */
  name = (struct nlattr *)(buf + NLMSG_SPACE(sizeof(struct ifinfomsg)));
  memcpy((char *)name + NLA_HDRLEN, "lozz", 4);
  name->nla_len = NLA_HDRLEN + 4;
  memset(&info, 0, sizeof(info));
  tap_ok(link_msg_cb(nlh, &info) == 0 && info.index == 42 && info.name[0] == '\0',
         "link_msg_cb: a name without its NUL is not taken");

  nlh->nlmsg_len = NLMSG_LENGTH(4);
  tap_ok(link_msg_cb(nlh, &info) == -EBADMSG, "link_msg_cb: a truncated message is -EBADMSG");
}

static struct nlmsghdr *make_addr_msg(unsigned char *buf, size_t size, unsigned index,
                                      unsigned char ifa_flags, const void *flags_attr,
                                      size_t flags_len, size_t local_len) {
  static const unsigned char addr[17] = {10, 1, 2, 3};
  struct nl_request req;
  struct ifaddrmsg *ifa = nl_request_init(&req, buf, size, RTM_NEWADDR, 0, sizeof(*ifa));
  ifa->ifa_family = AF_INET;
  ifa->ifa_prefixlen = 24;
  ifa->ifa_scope = RT_SCOPE_UNIVERSE;
  ifa->ifa_flags = ifa_flags;
  ifa->ifa_index = index;
  nl_put_attr(&req, IFA_LOCAL, addr, local_len);
  if (flags_attr != NULL)
    nl_put_attr(&req, IFA_FLAGS, flags_attr, flags_len);
  return req.nlh;
}

static void test_addr_cb(void) {
  unsigned char buf[256] __attribute__((aligned(8)));
  uint32_t flags32 = IFA_F_PERMANENT | IFA_F_NOPREFIXROUTE;
  struct addr_list l = {.index = 9};
  struct nlmsghdr *nlh;
  int ret;

  nlh = make_addr_msg(buf, sizeof(buf), 9, 0, &flags32, 4, 4);
  tap_ok(addr_dump_cb(nlh, &l) == 0 && l.len == 1 && l.items[0].flags == flags32 &&
             l.items[0].local_len == 4 && l.items[0].local[0] == 10 && l.items[0].prefixlen == 24,
         "addr_dump_cb: a permanent address is kept with its 32-bit IFA_FLAGS");

  nlh = make_addr_msg(buf, sizeof(buf), 8, 0, &flags32, 4, 4);
  tap_ok(addr_dump_cb(nlh, &l) == 0 && l.len == 1, "addr_dump_cb: another link's address is "
                                                   "skipped");

  nlh = make_addr_msg(buf, sizeof(buf), 9, 0, "\x80\0", 2, 4);
  tap_ok(addr_dump_cb(nlh, &l) == 0 && l.len == 1,
         "addr_dump_cb: a 2-byte IFA_FLAGS is not read; ifa_flags (not permanent) decides");

  nlh = make_addr_msg(buf, sizeof(buf), 9, IFA_F_PERMANENT, "\x80\0", 2, 4);
  ret = addr_dump_cb(nlh, &l);
  tap_ok(ret == 0 && l.len == 2 && l.items[1].flags == IFA_F_PERMANENT,
         "addr_dump_cb: with ifa_flags permanent it is kept, flags 0x%x",
         l.len == 2 ? l.items[1].flags : 0);

  nlh = make_addr_msg(buf, sizeof(buf), 9, IFA_F_PERMANENT, NULL, 0, 17);
  tap_ok(addr_dump_cb(nlh, &l) == 0 && l.len == 2,
         "addr_dump_cb: a 17-byte address is no address, so nothing is kept");
  free(l.items);
}

int main(void) {
  test_builder_layout();
  test_builder_bounds();
  test_parser();
  test_attr_values();
  test_answer();
  test_link_cb();
  test_addr_cb();
  return tap_done();
}
