/* A minimal D-Bus client (see dbus.h). Written from the D-Bus specification; everything read from
 * the peer is bounds-checked, so a buggy or hostile peer gets an error, never a crash. */
#include "dbus.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define DBUS_PROTOCOL_VERSION 1
#define DBUS_MAX_ARRAY_LEN    (64u << 20) /* the specification's limit */
#define DBUS_MAX_DEPTH        64          /* 32 array + 32 struct levels */
#define DBUS_MAX_SIGNATURE    255

enum {
  FIELD_PATH = 1,
  FIELD_INTERFACE = 2,
  FIELD_MEMBER = 3,
  FIELD_ERROR_NAME = 4,
  FIELD_REPLY_SERIAL = 5,
  FIELD_DESTINATION = 6,
  FIELD_SENDER = 7,
  FIELD_SIGNATURE = 8,
  FIELD_UNIX_FDS = 9,
};

static size_t align_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

/* --- marshalling -------------------------------------------------------------------------------
 */

void dbus_writer_free(dbus_writer *w) {
  free(w->data);
  w->data = NULL;
  w->len = w->cap = 0;
}

static void reserve(dbus_writer *w, size_t n) {
  size_t cap = w->cap ? w->cap : 256;
  if (w->len + n <= w->cap)
    return;
  while (cap < w->len + n)
    cap *= 2;
  w->data = realloc(w->data, cap);
  if (w->data == NULL)
    abort();
  w->cap = cap;
}

static void pad_to(dbus_writer *w, size_t alignment) {
  size_t target = align_up(w->len, alignment);
  reserve(w, target - w->len);
  while (w->len < target)
    w->data[w->len++] = 0;
}

static void put_bytes(dbus_writer *w, const void *p, size_t n) {
  reserve(w, n);
  memcpy(w->data + w->len, p, n);
  w->len += n;
}

static void store_u32_le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

void dbus_put_byte(dbus_writer *w, uint8_t v) {
  put_bytes(w, &v, 1);
}

void dbus_put_u32(dbus_writer *w, uint32_t v) {
  uint8_t b[4];
  pad_to(w, 4);
  store_u32_le(b, v);
  put_bytes(w, b, 4);
}

void dbus_put_bool(dbus_writer *w, bool v) {
  dbus_put_u32(w, v ? 1 : 0);
}

void dbus_put_u64(dbus_writer *w, uint64_t v) {
  uint8_t b[8];
  pad_to(w, 8);
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  put_bytes(w, b, 8);
}

void dbus_put_string(dbus_writer *w, const char *s) {
  size_t n = strlen(s);
  dbus_put_u32(w, (uint32_t)n);
  put_bytes(w, s, n + 1);
}

void dbus_put_object_path(dbus_writer *w, const char *s) {
  dbus_put_string(w, s);
}

void dbus_put_signature(dbus_writer *w, const char *s) {
  size_t n = strlen(s);
  dbus_put_byte(w, (uint8_t)n);
  put_bytes(w, s, n + 1);
}

void dbus_array_open(dbus_writer *w, size_t element_alignment, dbus_array *a) {
  dbus_put_u32(w, 0);
  a->length_pos = w->len - 4;
  /* the padding to the first element is there even when the array is empty, and is not counted
   * in the length */
  pad_to(w, element_alignment);
  a->start = w->len;
}

void dbus_array_close(dbus_writer *w, const dbus_array *a) {
  store_u32_le(w->data + a->length_pos, (uint32_t)(w->len - a->start));
}

void dbus_struct_open(dbus_writer *w) {
  pad_to(w, 8);
}

void dbus_put_variant_signature(dbus_writer *w, const char *signature) {
  dbus_put_signature(w, signature);
}

static void put_field(dbus_writer *w, uint8_t code, const char *type, const char *value) {
  dbus_struct_open(w);
  dbus_put_byte(w, code);
  dbus_put_variant_signature(w, type);
  if (type[0] == 'g')
    dbus_put_signature(w, value);
  else
    dbus_put_string(w, value);
}

int dbus_build_method_call(uint32_t serial, const char *destination, const char *path,
                           const char *interface, const char *member, const char *signature,
                           const dbus_writer *body, dbus_writer *out, fsrun_error_t *err) {
  size_t body_len = body ? body->len : 0;
  dbus_array fields;
  uint8_t fixed[4] = {'l', DBUS_MESSAGE_METHOD_CALL, 0, DBUS_PROTOCOL_VERSION};

  if (serial == 0 || path == NULL || member == NULL)
    return fsrun_error_make(err, EINVAL, "D-Bus: a method call needs a serial, path and member");
  if (body_len > 0 && (signature == NULL || signature[0] == '\0'))
    return fsrun_error_make(err, EINVAL, "D-Bus: a body without a signature");
  if (signature != NULL && strlen(signature) > DBUS_MAX_SIGNATURE)
    return fsrun_error_make(err, EINVAL, "D-Bus: signature too long");
  if (body_len > DBUS_MAX_MESSAGE_SIZE)
    return fsrun_error_make(err, E2BIG, "D-Bus: message body too large");

  out->len = 0;
  put_bytes(out, fixed, sizeof(fixed));
  dbus_put_u32(out, (uint32_t)body_len);
  dbus_put_u32(out, serial);
  dbus_array_open(out, 8, &fields);
  put_field(out, FIELD_PATH, "o", path);
  if (interface != NULL)
    put_field(out, FIELD_INTERFACE, "s", interface);
  put_field(out, FIELD_MEMBER, "s", member);
  if (destination != NULL)
    put_field(out, FIELD_DESTINATION, "s", destination);
  if (signature != NULL && signature[0] != '\0')
    put_field(out, FIELD_SIGNATURE, "g", signature);
  dbus_array_close(out, &fields);
  /* the body starts on an 8-byte boundary */
  pad_to(out, 8);
  if (body_len > 0)
    put_bytes(out, body->data, body_len);
  return 0;
}

/* --- signatures --------------------------------------------------------------------------------
 */

static bool is_basic_type(char c) {
  return c != '\0' && strchr("ybnqiuxtdsogh", c) != NULL;
}

/* The length of the single complete type at s, or 0 when there is none (invalid or too deep). */
static size_t complete_type_len(const char *s, int depth) {
  size_t n, total;
  if (depth > DBUS_MAX_DEPTH)
    return 0;
  if (is_basic_type(s[0]) || s[0] == 'v')
    return 1;
  switch (s[0]) {
  case 'a':
    if (s[1] == '{') {
      /* a dict entry: a basic key and one complete value, only as an array element */
      if (!is_basic_type(s[2]))
        return 0;
      n = complete_type_len(s + 3, depth + 1);
      if (n == 0 || s[3 + n] != '}')
        return 0;
      return 3 + n + 1;
    }
    n = complete_type_len(s + 1, depth + 1);
    return n ? n + 1 : 0;
  case '(':
    total = 1;
    while (s[total] != ')') {
      n = complete_type_len(s + total, depth + 1);
      if (n == 0)
        return 0;
      total += n;
    }
    return total > 1 ? total + 1 : 0; /* "()" is not a type */
  default:
    return 0;
  }
}

/* A sequence of complete types (a message body's signature), at most 255 characters. */
static bool signature_valid(const char *s) {
  size_t len = strlen(s);
  if (len > DBUS_MAX_SIGNATURE)
    return false;
  for (size_t i = 0; i < len;) {
    size_t n = complete_type_len(s + i, 0);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}

static bool single_complete_type(const char *s) {
  size_t n = complete_type_len(s, 0);
  return n > 0 && s[n] == '\0';
}

static size_t type_alignment(char c) {
  switch (c) {
  case 'y':
  case 'g':
  case 'v':
    return 1;
  case 'n':
  case 'q':
    return 2;
  case 'x':
  case 't':
  case 'd':
  case '(':
  case '{':
    return 8;
  default:
    return 4;
  }
}

/* --- reading -----------------------------------------------------------------------------------
 */

static int truncated(fsrun_error_t *err) {
  return fsrun_error_make(err, EBADMSG, "D-Bus: truncated or malformed message");
}

static int skip_padding(dbus_reader *r, size_t alignment, fsrun_error_t *err) {
  size_t target = align_up(r->pos, alignment);
  if (target > r->len)
    return truncated(err);
  r->pos = target;
  return 0;
}

static int take_u32(dbus_reader *r, uint32_t *v, fsrun_error_t *err) {
  const uint8_t *p;
  if (skip_padding(r, 4, err) < 0)
    return -EBADMSG;
  if (r->len - r->pos < 4)
    return truncated(err);
  p = r->data + r->pos;
  if (r->big_endian)
    *v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
  else
    *v = (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
  r->pos += 4;
  return 0;
}

/* a string of n bytes at pos, then a NUL, with no NUL inside */
static int take_string_bytes(dbus_reader *r, size_t n, const char **v, fsrun_error_t *err) {
  const char *s;
  if (n >= r->len - r->pos)
    return truncated(err);
  s = (const char *)r->data + r->pos;
  if (s[n] != '\0' || memchr(s, '\0', n) != NULL)
    return fsrun_error_make(err, EBADMSG, "D-Bus: malformed string");
  *v = s;
  r->pos += n + 1;
  return 0;
}

static int take_string(dbus_reader *r, char type, const char **v, fsrun_error_t *err) {
  uint32_t n;
  if (type == 'g') {
    if (r->pos >= r->len)
      return truncated(err);
    n = r->data[r->pos++];
  } else if (take_u32(r, &n, err) < 0) {
    return -EBADMSG;
  }
  if (take_string_bytes(r, n, v, err) < 0)
    return -EBADMSG;
  if (type == 'g' && !signature_valid(*v))
    return fsrun_error_make(err, EBADMSG, "D-Bus: invalid signature `%s`", *v);
  if (type == 'o' && (*v)[0] != '/')
    return fsrun_error_make(err, EBADMSG, "D-Bus: invalid object path");
  return 0;
}

/* Skips one value of the complete type at *sig, advancing *sig past it. */
static int skip_value(dbus_reader *r, const char **sig, int depth, fsrun_error_t *err) {
  char t = **sig;
  const char *s;
  if (depth > DBUS_MAX_DEPTH)
    return fsrun_error_make(err, EBADMSG, "D-Bus: values nested too deeply");
  switch (t) {
  case 'y':
    if (r->pos >= r->len)
      return truncated(err);
    r->pos++;
    (*sig)++;
    return 0;
  case 'n':
  case 'q':
  case 'b':
  case 'i':
  case 'u':
  case 'h':
  case 'x':
  case 't':
  case 'd': {
    size_t size = type_alignment(t);
    if (skip_padding(r, size, err) < 0)
      return -EBADMSG;
    if (r->len - r->pos < size)
      return truncated(err);
    r->pos += size;
    (*sig)++;
    return 0;
  }
  case 's':
  case 'o':
  case 'g':
    (*sig)++;
    return take_string(r, t, &s, err);
  case 'v': {
    const char *inner;
    if (take_string(r, 'g', &inner, err) < 0)
      return -EBADMSG;
    if (!single_complete_type(inner))
      return fsrun_error_make(err, EBADMSG, "D-Bus: a variant must hold one complete type");
    (*sig)++;
    return skip_value(r, &inner, depth + 1, err);
  }
  case 'a': {
    const char *element = *sig + 1;
    size_t element_len = complete_type_len(element[0] == '{' ? *sig : element, depth);
    uint32_t n;
    size_t end;
    if (element_len == 0)
      return fsrun_error_make(err, EBADMSG, "D-Bus: invalid array signature");
    if (element[0] == '{')
      element_len -= 1; /* complete_type_len counted the 'a' */
    if (take_u32(r, &n, err) < 0)
      return -EBADMSG;
    if (n > DBUS_MAX_ARRAY_LEN)
      return fsrun_error_make(err, EBADMSG, "D-Bus: array too long");
    if (skip_padding(r, type_alignment(element[0]), err) < 0)
      return -EBADMSG;
    if (n > r->len - r->pos)
      return truncated(err);
    end = r->pos + n;
    while (r->pos < end) {
      const char *e = element;
      size_t before = r->pos;
      if (skip_value(r, &e, depth + 1, err) < 0)
        return -EBADMSG;
      if (r->pos > end || r->pos == before)
        return fsrun_error_make(err, EBADMSG, "D-Bus: array elements overrun its length");
    }
    *sig = element + element_len;
    return 0;
  }
  case '(':
  case '{': {
    char close = t == '(' ? ')' : '}';
    if (skip_padding(r, 8, err) < 0)
      return -EBADMSG;
    (*sig)++;
    while (**sig != close) {
      if (**sig == '\0')
        return fsrun_error_make(err, EBADMSG, "D-Bus: unterminated struct signature");
      if (skip_value(r, sig, depth + 1, err) < 0)
        return -EBADMSG;
    }
    (*sig)++;
    return 0;
  }
  default:
    return fsrun_error_make(err, EBADMSG, "D-Bus: unknown type `%c` in a signature", t);
  }
}

void dbus_reader_init(dbus_reader *r, const dbus_message *m) {
  r->data = m->body;
  r->len = m->body_len;
  r->pos = 0;
  r->big_endian = m->big_endian;
  r->sig = m->signature ? m->signature : "";
}

int dbus_read_u32(dbus_reader *r, uint32_t *v, fsrun_error_t *err) {
  if (r->sig[0] != 'u')
    return fsrun_error_make(err, EBADMSG, "D-Bus: expected a uint32, the signature has `%s`",
                            r->sig);
  if (take_u32(r, v, err) < 0)
    return -EBADMSG;
  r->sig++;
  return 0;
}

int dbus_read_string(dbus_reader *r, const char **v, fsrun_error_t *err) {
  char t = r->sig[0];
  if (t != 's' && t != 'o' && t != 'g')
    return fsrun_error_make(err, EBADMSG, "D-Bus: expected a string, the signature has `%s`",
                            r->sig);
  if (take_string(r, t, v, err) < 0)
    return -EBADMSG;
  r->sig++;
  return 0;
}

int dbus_read_variant_string(dbus_reader *r, const char **v, fsrun_error_t *err) {
  const char *inner;
  if (r->sig[0] != 'v')
    return fsrun_error_make(err, EBADMSG, "D-Bus: expected a variant, the signature has `%s`",
                            r->sig);
  if (take_string(r, 'g', &inner, err) < 0)
    return -EBADMSG;
  if (strcmp(inner, "s") != 0 && strcmp(inner, "o") != 0)
    return fsrun_error_make(err, EBADMSG, "D-Bus: expected a string in the variant, it has `%s`",
                            inner);
  if (take_string(r, inner[0], v, err) < 0)
    return -EBADMSG;
  r->sig++;
  return 0;
}

int dbus_skip(dbus_reader *r, fsrun_error_t *err) {
  if (r->sig[0] == '\0')
    return fsrun_error_make(err, EBADMSG, "D-Bus: no more values in the message");
  return skip_value(r, &r->sig, 0, err);
}

/* --- message parsing ---------------------------------------------------------------------------
 */

static uint32_t load_u32(const uint8_t *p, bool big_endian) {
  if (big_endian)
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
  return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int dbus_message_size(const uint8_t *hdr, size_t len, size_t *size, fsrun_error_t *err) {
  bool be;
  uint64_t body_len, fields_len, total;
  if (len < 16)
    return truncated(err);
  if (hdr[0] != 'l' && hdr[0] != 'B')
    return fsrun_error_make(err, EBADMSG, "D-Bus: bad endianness byte 0x%02x", hdr[0]);
  if (hdr[3] != DBUS_PROTOCOL_VERSION)
    return fsrun_error_make(err, EBADMSG, "D-Bus: unsupported protocol version %u", hdr[3]);
  be = hdr[0] == 'B';
  body_len = load_u32(hdr + 4, be);
  fields_len = load_u32(hdr + 12, be);
  if (fields_len > DBUS_MAX_ARRAY_LEN)
    return fsrun_error_make(err, EBADMSG, "D-Bus: header fields too long");
  total = align_up(16 + fields_len, 8) + body_len;
  if (total > DBUS_MAX_MESSAGE_SIZE)
    return fsrun_error_make(err, EMSGSIZE, "D-Bus: a message of %llu bytes is too large",
                            (unsigned long long)total);
  *size = (size_t)total;
  return 0;
}

int dbus_message_parse(const uint8_t *data, size_t len, dbus_message *m, fsrun_error_t *err) {
  dbus_reader r;
  size_t size, fields_end;
  uint32_t fields_len;
  int ret;

  memset(m, 0, sizeof(*m));
  ret = dbus_message_size(data, len, &size, err);
  if (ret < 0)
    return ret;
  if (size != len)
    return truncated(err);
  m->big_endian = data[0] == 'B';
  m->type = data[1];
  m->flags = data[2];
  m->body_len = load_u32(data + 4, m->big_endian);
  m->serial = load_u32(data + 8, m->big_endian);
  fields_len = load_u32(data + 12, m->big_endian);
  if (m->type == 0)
    return fsrun_error_make(err, EBADMSG, "D-Bus: invalid message type 0");
  if (m->serial == 0)
    return fsrun_error_make(err, EBADMSG, "D-Bus: message with serial 0");

  /* the header fields: alignment counts from the message start, so read within data */
  fields_end = 16 + (size_t)fields_len;
  r = (dbus_reader){.data = data, .len = fields_end, .pos = 16, .big_endian = m->big_endian};
  while (r.pos < fields_end) {
    const char *type, *str = NULL;
    uint32_t u = 0;
    uint8_t code;
    if (skip_padding(&r, 8, err) < 0 || r.pos >= fields_end)
      return truncated(err);
    code = data[r.pos++];
    if (take_string(&r, 'g', &type, err) < 0)
      return -EBADMSG;
    if (!single_complete_type(type))
      return fsrun_error_make(err, EBADMSG, "D-Bus: header field %u is not one value", code);
    if (code >= FIELD_PATH && code <= FIELD_UNIX_FDS) {
      static const char expected[] = {0, 'o', 's', 's', 's', 'u', 's', 's', 'g', 'u'};
      if (type[0] != expected[code] || type[1] != '\0')
        return fsrun_error_make(err, EBADMSG, "D-Bus: header field %u has type `%s`", code, type);
      ret = type[0] == 'u' ? take_u32(&r, &u, err) : take_string(&r, type[0], &str, err);
      if (ret < 0)
        return ret;
    } else {
      /* unknown fields are skipped, as the specification requires */
      if (skip_value(&r, &type, 1, err) < 0)
        return -EBADMSG;
      continue;
    }
    switch (code) {
    case FIELD_PATH:
      m->path = str;
      break;
    case FIELD_INTERFACE:
      m->interface = str;
      break;
    case FIELD_MEMBER:
      m->member = str;
      break;
    case FIELD_ERROR_NAME:
      m->error_name = str;
      break;
    case FIELD_REPLY_SERIAL:
      m->reply_serial = u;
      break;
    case FIELD_DESTINATION:
      m->destination = str;
      break;
    case FIELD_SENDER:
      m->sender = str;
      break;
    case FIELD_SIGNATURE:
      m->signature = str;
      break;
    case FIELD_UNIX_FDS:
      if (u != 0)
        return fsrun_error_make(err, EBADMSG, "D-Bus: file descriptors were not negotiated");
      break;
    }
  }
  if (r.pos != fields_end)
    return truncated(err);
  /* dbus_message_size made sure the body fits exactly after the padding */
  m->body = data + align_up(fields_end, 8);
  if (m->signature == NULL)
    m->signature = "";
  if (m->body_len > 0 && m->signature[0] == '\0')
    return fsrun_error_make(err, EBADMSG, "D-Bus: a body without a signature");

  switch (m->type) {
  case DBUS_MESSAGE_METHOD_CALL:
    if (m->path == NULL || m->member == NULL)
      return fsrun_error_make(err, EBADMSG, "D-Bus: method call without path or member");
    break;
  case DBUS_MESSAGE_METHOD_RETURN:
    if (m->reply_serial == 0)
      return fsrun_error_make(err, EBADMSG, "D-Bus: method return without reply serial");
    break;
  case DBUS_MESSAGE_ERROR:
    if (m->reply_serial == 0 || m->error_name == NULL)
      return fsrun_error_make(err, EBADMSG, "D-Bus: error without reply serial or name");
    break;
  case DBUS_MESSAGE_SIGNAL:
    if (m->path == NULL || m->interface == NULL || m->member == NULL)
      return fsrun_error_make(err, EBADMSG, "D-Bus: signal without path, interface or member");
    break;
  default:
    break; /* unknown types are ignored by the caller */
  }
  return 0;
}

char *dbus_error_text(const dbus_message *m) {
  cleanup_error fsrun_error_t ignored = NULL;
  const char *text = NULL;
  dbus_reader r;
  dbus_reader_init(&r, m);
  if (r.sig[0] == 's' && dbus_read_string(&r, &text, &ignored) == 0 && text[0] != '\0')
    return xasprintf("%s: %s", m->error_name ? m->error_name : "(unnamed error)", text);
  return xstrdup(m->error_name ? m->error_name : "(unnamed error)");
}

/* --- connection --------------------------------------------------------------------------------
 */

struct dbus_conn {
  int fd;
  bool bus;
  uint32_t serial;
  uint8_t *in; /* bytes received and not yet taken as a message */
  size_t in_len, in_cap;
  uint8_t *current; /* the last message returned (the one a dbus_message points into) */
};

void dbus_conn_free(dbus_conn *c) {
  if (c == NULL)
    return;
  if (c->fd >= 0)
    close(c->fd);
  free(c->in);
  free(c->current);
  free(c);
}

void cleanup_dbus_connp(dbus_conn **c) {
  dbus_conn_free(*c);
  *c = NULL;
}

/* Waits for events on the socket until the deadline; 0 = timed out. */
static int wait_fd(int fd, short events, int64_t deadline, fsrun_error_t *err) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = events};
    int64_t left = deadline - monotonic_ms();
    int r;
    if (left <= 0)
      return 0;
    r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
    if (r > 0)
      return 1;
    if (r < 0 && errno != EINTR)
      return fsrun_error_errno(err, "D-Bus: poll");
  }
}

static int send_all(dbus_conn *c, const void *data, size_t len, int64_t deadline,
                    fsrun_error_t *err) {
  const uint8_t *p = data;
  while (len > 0) {
    ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int r = wait_fd(c->fd, POLLOUT, deadline, err);
      if (r < 0)
        return r;
      if (r == 0)
        return fsrun_error_make(err, ETIMEDOUT, "D-Bus: send");
      continue;
    }
    return fsrun_error_errno(err, "D-Bus: send");
  }
  return 0;
}

/* Reads more bytes into c->in; 0 = timed out. */
static int receive_some(dbus_conn *c, int64_t deadline, fsrun_error_t *err) {
  for (;;) {
    ssize_t n;
    if (c->in_cap - c->in_len < 4096) {
      c->in_cap = c->in_cap ? c->in_cap * 2 : 16384;
      c->in = realloc(c->in, c->in_cap);
      if (c->in == NULL)
        abort();
    }
    n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n > 0) {
      c->in_len += (size_t)n;
      return 1;
    }
    if (n == 0)
      return fsrun_error_make(err, ECONNRESET, "D-Bus: the peer closed the connection");
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int r = wait_fd(c->fd, POLLIN, deadline, err);
      if (r <= 0)
        return r;
      continue;
    }
    return fsrun_error_errno(err, "D-Bus: receive");
  }
}

/* The next message, parsed into *m (valid until the next call); 0 = timed out. */
static int receive_message(dbus_conn *c, dbus_message *m, int64_t deadline, fsrun_error_t *err) {
  size_t size;
  int r;
  while (c->in_len < 16) {
    r = receive_some(c, deadline, err);
    if (r <= 0)
      return r;
  }
  r = dbus_message_size(c->in, c->in_len, &size, err);
  if (r < 0)
    return r;
  while (c->in_len < size) {
    r = receive_some(c, deadline, err);
    if (r <= 0)
      return r;
  }
  free(c->current);
  c->current = xmalloc0(size);
  memcpy(c->current, c->in, size);
  memmove(c->in, c->in + size, c->in_len - size);
  c->in_len -= size;
  r = dbus_message_parse(c->current, size, m, err);
  return r < 0 ? r : 1;
}

/* One line of the authentication exchange, without its "\r\n". */
static int auth_read_line(dbus_conn *c, char *line, size_t size, int64_t deadline,
                          fsrun_error_t *err) {
  size_t n = 0;
  for (;;) {
    char ch;
    ssize_t r = recv(c->fd, &ch, 1, 0);
    if (r == 1) {
      if (ch == '\n' && n > 0 && line[n - 1] == '\r') {
        line[n - 1] = '\0';
        return 0;
      }
      if (n + 1 >= size)
        return fsrun_error_make(err, EPROTO, "D-Bus: authentication line too long");
      line[n++] = ch;
      continue;
    }
    if (r == 0)
      return fsrun_error_make(err, ECONNRESET, "D-Bus: the peer closed the connection");
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int w = wait_fd(c->fd, POLLIN, deadline, err);
      if (w < 0)
        return w;
      if (w == 0)
        return fsrun_error_make(err, ETIMEDOUT, "D-Bus: authentication");
      continue;
    }
    return fsrun_error_errno(err, "D-Bus: receive");
  }
}

/* Our euid as the peer sees it: through our user namespace's uid_map (root of a rootless podman's
 * namespace is the user's own uid outside). */
static unsigned host_euid(void) {
  unsigned euid = (unsigned)geteuid(), inside, outside, count;
  cleanup_file FILE *f = fopen("/proc/self/uid_map", "re");
  while (f != NULL && fscanf(f, "%u %u %u", &inside, &outside, &count) == 3)
    if (euid >= inside && euid - inside < count)
      return outside + (euid - inside);
  return euid;
}

/* SASL EXTERNAL: the peer checks our uid on the socket (SO_PEERCRED, in its own user namespace)
 * against the one we name, as ASCII decimal digits in hex ("0" -> "30").
 *
 * BEGIN goes in the same write as AUTH, before the OK is read (pipelined, as sd-bus's own clients
 * do), never just before the first message. systemd's sd-bus server reads whatever is in the
 * socket: when BEGIN and the first message arrive together it starts the connection with that
 * message already in its buffer and does not look at it until more bytes come, so the call went
 * unanswered until its timeout. In the cgroup v2 VM (slow, emulated) that happened to one create
 * in three. Sent with AUTH, BEGIN is taken as soon as the server has written its OK, before our
 * first message can be there. */
static int authenticate(dbus_conn *c, int64_t deadline, fsrun_error_t *err) {
  char uid[16], request[80], line[512];
  size_t len;
  int ret;
  snprintf(uid, sizeof(uid), "%u", host_euid());
  len = (size_t)snprintf(request, sizeof(request), "%cAUTH EXTERNAL ", '\0');
  for (const char *p = uid; *p; p++)
    len += (size_t)snprintf(request + len, sizeof(request) - len, "%02x", (unsigned char)*p);
  len += (size_t)snprintf(request + len, sizeof(request) - len, "\r\nBEGIN\r\n");
  ret = send_all(c, request, len, deadline, err);
  if (ret < 0)
    return ret;
  ret = auth_read_line(c, line, sizeof(line), deadline, err);
  if (ret < 0)
    return ret;
  if (strncmp(line, "OK ", 3) != 0)
    return fsrun_error_make(err, EACCES, "D-Bus: authentication refused (`%.100s`)", line);
  return 0;
}

/* "unix:path=P" or "unix:abstract=N" (with ",guid=..." and other keys ignored) into addr. */
static bool parse_unix_address(const char *entry, size_t len, struct sockaddr_un *addr,
                               socklen_t *addr_len) {
  const char *p = entry + 5, *end = entry + len;
  if (len < 5 || strncmp(entry, "unix:", 5) != 0)
    return false;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *key_end = comma ? comma : end;
    bool abstract = false;
    size_t vlen;
    const char *value = NULL;
    if ((size_t)(key_end - p) > 5 && strncmp(p, "path=", 5) == 0) {
      value = p + 5;
    } else if ((size_t)(key_end - p) > 9 && strncmp(p, "abstract=", 9) == 0) {
      value = p + 9;
      abstract = true;
    }
    if (value != NULL) {
      vlen = (size_t)(key_end - value);
      /* values may be %-escaped; plain paths are all we accept */
      if (memchr(value, '%', vlen) != NULL || vlen + 1 + abstract > sizeof(addr->sun_path))
        return false;
      memset(addr, 0, sizeof(*addr));
      addr->sun_family = AF_UNIX;
      memcpy(addr->sun_path + abstract, value, vlen);
      *addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + vlen +
                              (abstract ? 0 : 1));
      return true;
    }
    p = comma ? comma + 1 : end;
  }
  return false;
}

int dbus_connect(const char *address, bool bus, int timeout_ms, dbus_conn **out,
                 fsrun_error_t *err) {
  cleanup_dbus_conn dbus_conn *c = NULL;
  int64_t deadline = monotonic_ms() + timeout_ms;
  struct sockaddr_un addr;
  socklen_t addr_len = 0;
  bool found = false;
  int ret;

  *out = NULL;
  for (const char *p = address; p && *p && !found;) {
    const char *semi = strchr(p, ';');
    size_t len = semi ? (size_t)(semi - p) : strlen(p);
    found = parse_unix_address(p, len, &addr, &addr_len);
    p = semi ? semi + 1 : NULL;
  }
  if (!found)
    return fsrun_error_make(err, EINVAL, "D-Bus: no usable unix socket in the address `%s`",
                            address ? address : "");
  c = xmalloc0(sizeof(*c));
  c->bus = bus;
  c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (c->fd < 0)
    return fsrun_error_errno(err, "D-Bus: socket");
  /* a unix socket connects at once, or says EAGAIN while the listener's backlog is full */
  while (connect(c->fd, (struct sockaddr *)&addr, addr_len) < 0) {
    struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN || monotonic_ms() >= deadline)
      return fsrun_error_errno(err, "D-Bus: connect to `%s`", address);
    nanosleep(&pause, NULL);
  }
  ret = authenticate(c, deadline, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "%s", address);
  if (bus) {
    dbus_message reply;
    const char *name;
    dbus_reader r;
    ret = dbus_call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "Hello", NULL, NULL, NULL, NULL, timeout_ms, &reply, NULL, err);
    if (ret < 0)
      return ret;
    dbus_reader_init(&r, &reply);
    if (dbus_read_string(&r, &name, err) < 0)
      return fsrun_error_wrap(err, "Hello");
  }
  *out = steal_ptr(&c);
  return 0;
}

int dbus_call(dbus_conn *c, const char *destination, const char *path, const char *interface,
              const char *member, const char *signature, const dbus_writer *body,
              dbus_signal_fn on_signal, void *userdata, int timeout_ms, dbus_message *reply,
              char **error_name, fsrun_error_t *err) {
  dbus_writer msg = {0};
  int64_t deadline = monotonic_ms() + timeout_ms;
  uint32_t serial;
  int ret;

  if (error_name != NULL)
    *error_name = NULL;
  if (++c->serial == 0)
    c->serial = 1;
  serial = c->serial;
  ret = dbus_build_method_call(serial, destination, path, interface, member, signature, body, &msg,
                               err);
  if (ret == 0)
    ret = send_all(c, msg.data, msg.len, deadline, err);
  dbus_writer_free(&msg);
  if (ret < 0)
    return fsrun_error_wrap(err, "%s", member);
  for (;;) {
    dbus_message m;
    ret = receive_message(c, &m, deadline, err);
    if (ret < 0)
      return fsrun_error_wrap(err, "%s", member);
    if (ret == 0)
      return fsrun_error_make(err, ETIMEDOUT, "%s: no reply from D-Bus within %d ms", member,
                              timeout_ms);
    if (m.type == DBUS_MESSAGE_SIGNAL) {
      if (on_signal != NULL)
        (void)on_signal(&m, userdata);
      continue;
    }
    if ((m.type != DBUS_MESSAGE_METHOD_RETURN && m.type != DBUS_MESSAGE_ERROR) ||
        m.reply_serial != serial)
      continue; /* not ours: calls to us, unknown types, stale replies */
    if (m.type == DBUS_MESSAGE_ERROR) {
      cleanup_free char *text = dbus_error_text(&m);
      if (error_name != NULL)
        *error_name = xstrdup(m.error_name);
      return fsrun_error_make(err, 0, "%s: %s", member, text);
    }
    log_debug("D-Bus: %s answered in %lld ms", member,
              (long long)(monotonic_ms() - (deadline - timeout_ms)));
    *reply = m;
    return 0;
  }
}

int dbus_wait_signals(dbus_conn *c, dbus_signal_fn on_signal, void *userdata, int timeout_ms,
                      fsrun_error_t *err) {
  int64_t deadline = monotonic_ms() + timeout_ms;
  for (;;) {
    dbus_message m;
    int ret = receive_message(c, &m, deadline, err);
    if (ret <= 0)
      return ret;
    if (m.type == DBUS_MESSAGE_SIGNAL && on_signal(&m, userdata))
      return 1;
  }
}
