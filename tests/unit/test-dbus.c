/* Unit tests for dbus.c: the exact bytes of a marshalled method call (worked out by hand from the
 * D-Bus specification), parsing of replies, errors and signals in both byte orders, and that
 * truncated, mutated and random input is refused without reading outside the buffer (run under
 * ASan in CI). A forked fake peer on an abstract unix socket checks the EXTERNAL handshake, a call
 * with a signal before its reply, an ERROR reply, garbage and a peer that hangs up. TAP output. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbus.h"
#include "error.h"
#include "tap.h"
#include "utils.h"

/* --- building test messages as a peer would send them ----------------------------------------- */

typedef struct {
  uint8_t type;
  uint32_t serial, reply_serial;
  const char *path, *interface, *member, *error_name, *signature;
  uint32_t unix_fds;
  bool unknown_field; /* add a field with code 200 holding a struct (must be skipped) */
} test_header;

static void field_str(dbus_writer *w, uint8_t code, const char *type, const char *v) {
  dbus_struct_open(w);
  dbus_put_byte(w, code);
  dbus_put_variant_signature(w, type);
  if (type[0] == 'g')
    dbus_put_signature(w, v);
  else
    dbus_put_string(w, v);
}

static void field_u32(dbus_writer *w, uint8_t code, uint32_t v) {
  dbus_struct_open(w);
  dbus_put_byte(w, code);
  dbus_put_variant_signature(w, "u");
  dbus_put_u32(w, v);
}

/* A little-endian message from h and body (may be NULL). */
static void build_message(const test_header *h, const dbus_writer *body, dbus_writer *out) {
  size_t body_len = body ? body->len : 0;
  uint8_t fixed[4] = {'l', h->type, 0, 1};
  dbus_array fields;
  out->len = 0;
  for (int i = 0; i < 4; i++)
    dbus_put_byte(out, fixed[i]);
  dbus_put_u32(out, (uint32_t)body_len);
  dbus_put_u32(out, h->serial);
  dbus_array_open(out, 8, &fields);
  if (h->path)
    field_str(out, 1, "o", h->path);
  if (h->interface)
    field_str(out, 2, "s", h->interface);
  if (h->member)
    field_str(out, 3, "s", h->member);
  if (h->error_name)
    field_str(out, 4, "s", h->error_name);
  if (h->reply_serial)
    field_u32(out, 5, h->reply_serial);
  if (h->unknown_field) {
    dbus_struct_open(out);
    dbus_put_byte(out, 200);
    dbus_put_variant_signature(out, "(yat)");
    dbus_struct_open(out);
    dbus_put_byte(out, 1);
    {
      dbus_array a;
      dbus_array_open(out, 8, &a);
      dbus_put_u64(out, 42);
      dbus_put_u64(out, 43);
      dbus_array_close(out, &a);
    }
  }
  if (h->signature)
    field_str(out, 8, "g", h->signature);
  if (h->unix_fds)
    field_u32(out, 9, h->unix_fds);
  dbus_array_close(out, &fields);
  dbus_struct_open(out); /* body on an 8-byte boundary */
  for (size_t i = 0; i < body_len; i++)
    dbus_put_byte(out, body->data[i]);
}

/* Parses a private, exactly sized copy, so that ASan sees any read past the end. */
static int parse_copy(const uint8_t *data, size_t len, fsrun_error_t *err) {
  uint8_t *copy = malloc(len ? len : 1);
  dbus_message m;
  int ret;
  memcpy(copy, data, len);
  ret = dbus_message_parse(copy, len, &m, err);
  if (ret == 0) {
    /* walk the body too, as a caller would */
    dbus_reader r;
    dbus_reader_init(&r, &m);
    while (r.sig[0] != '\0' && dbus_skip(&r, err) == 0)
      ;
  }
  free(copy);
  return ret;
}

static const uint8_t *find(const uint8_t *hay, size_t len, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(hay + i, needle, n) == 0)
      return hay + i;
  return NULL;
}

/* --- tests -------------------------------------------------------------------------------------
 */

static void test_exact_bytes(void) {
  cleanup_error fsrun_error_t err = NULL;
  dbus_writer out = {0};
  /* worked out from the specification: fixed header (16 bytes with the fields' array length),
   * field PATH at 16 (code, sig "o", pad, u32 2, "/a\0"), pad to 32, field MEMBER (code, sig "s",
   * u32 1, "M\0") ends at 42; array length 42 - 16 = 26; pad to 48; empty body */
  static const uint8_t want[48] = {
      'l', 1, 0,   1, 0, 0, 0, 0, 7,   0,   0, 0, 26, 0, 0, 0, /**/
      1,   1, 'o', 0, 2, 0, 0, 0, '/', 'a', 0, 0, 0,  0, 0, 0, /**/
      3,   1, 's', 0, 1, 0, 0, 0, 'M', 0,   0, 0, 0,  0, 0, 0,
  };
  int ret = dbus_build_method_call(7, NULL, "/a", NULL, "M", NULL, NULL, &out, &err);
  tap_ok(ret == 0 && out.len == sizeof(want) && memcmp(out.data, want, sizeof(want)) == 0,
         "a method call without body is marshalled byte for byte as the specification says");
  if (out.len == sizeof(want) && memcmp(out.data, want, sizeof(want)) != 0)
    for (size_t i = 0; i < out.len; i++)
      if (out.data[i] != want[i])
        tap_diag("  byte %zu: got 0x%02x, want 0x%02x", i, out.data[i], want[i]);
  dbus_writer_free(&out);

  tap_ok(dbus_build_method_call(0, NULL, "/a", NULL, "M", NULL, NULL, &out, &err) < 0,
         "serial 0 is refused");
  {
    dbus_writer body = {0};
    dbus_put_u32(&body, 1);
    tap_ok(dbus_build_method_call(1, NULL, "/a", NULL, "M", NULL, &body, &out, &err) < 0,
           "a body without a signature is refused");
    dbus_writer_free(&body);
  }
  dbus_writer_free(&out);
}

static void test_body_alignment(void) {
  dbus_writer w = {0};
  dbus_array props, empty, pids;
  /* s "ab" (0..6), pad to 8, a(sv): length at 8, elements from 16 */
  dbus_put_string(&w, "ab");
  dbus_array_open(&w, 8, &props);
  tap_ok(props.length_pos == 8 && props.start == 16, "a(sv) after a string: length at 8, first "
                                                     "element at 16");
  dbus_struct_open(&w);
  dbus_put_string(&w, "PIDs");          /* 16..24 */
  dbus_put_variant_signature(&w, "au"); /* 25..28 */
  dbus_array_open(&w, 4, &pids);        /* length at 32, elements at 36 */
  dbus_put_u32(&w, 1234);
  dbus_array_close(&w, &pids);
  dbus_array_close(&w, &props);
  tap_ok(pids.length_pos == 32 && pids.start == 36 && w.len == 40,
         "au in a variant: 4-aligned length and elements");
  tap_ok(w.data[8] == 24 && w.data[32] == 4, "array lengths count element bytes only (24, 4)");
  /* an empty array of structs still pads to 8: length at 40, "start" at 48, length 0 */
  dbus_array_open(&w, 8, &empty);
  dbus_array_close(&w, &empty);
  tap_ok(empty.length_pos == 40 && empty.start == 48 && w.len == 48 && w.data[40] == 0,
         "an empty a(sa(sv)) is its length and the padding to 8");
  dbus_put_bool(&w, true);
  dbus_put_u64(&w, UINT64_MAX);
  tap_ok(w.len == 64 && w.data[48] == 1 && w.data[56] == 0xff && w.data[63] == 0xff,
         "a bool is 4 bytes, a uint64 is 8-aligned");
  dbus_writer_free(&w);
}

static void test_roundtrip(void) {
  cleanup_error fsrun_error_t err = NULL;
  dbus_writer body = {0}, out = {0};
  dbus_array props, pids, aux;
  dbus_message m;
  dbus_reader r;
  const char *s1 = NULL, *s2 = NULL;
  uint32_t u = 0;
  size_t size = 0;

  dbus_put_string(&body, "x.scope");
  dbus_put_string(&body, "replace");
  dbus_array_open(&body, 8, &props);
  dbus_struct_open(&body);
  dbus_put_string(&body, "Delegate");
  dbus_put_variant_signature(&body, "b");
  dbus_put_bool(&body, true);
  dbus_struct_open(&body);
  dbus_put_string(&body, "PIDs");
  dbus_put_variant_signature(&body, "au");
  dbus_array_open(&body, 4, &pids);
  dbus_put_u32(&body, 77);
  dbus_array_close(&body, &pids);
  dbus_struct_open(&body);
  dbus_put_string(&body, "MemoryMax");
  dbus_put_variant_signature(&body, "t");
  dbus_put_u64(&body, 1 << 20);
  dbus_array_close(&body, &props);
  dbus_array_open(&body, 8, &aux);
  dbus_array_close(&body, &aux);
  dbus_put_u32(&body, 5);

  tap_ok(dbus_build_method_call(3, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                "org.freedesktop.systemd1.Manager", "StartTransientUnit",
                                "ssa(sv)a(sa(sv))u", &body, &out, &err) == 0,
         "StartTransientUnit is marshalled");
  tap_ok(dbus_message_size(out.data, out.len, &size, &err) == 0 && size == out.len,
         "dbus_message_size gives the whole length from the first 16 bytes");
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "and parses back");
  tap_ok(m.type == DBUS_MESSAGE_METHOD_CALL && m.serial == 3 &&
             strcmp(m.path, "/org/freedesktop/systemd1") == 0 &&
             strcmp(m.member, "StartTransientUnit") == 0 &&
             strcmp(m.destination, "org.freedesktop.systemd1") == 0 &&
             strcmp(m.signature, "ssa(sv)a(sa(sv))u") == 0 && m.body_len == body.len,
         "header fields survive the round trip");
  dbus_reader_init(&r, &m);
  tap_ok(dbus_read_string(&r, &s1, &err) == 0 && dbus_read_string(&r, &s2, &err) == 0 &&
             strcmp(s1, "x.scope") == 0 && strcmp(s2, "replace") == 0,
         "the body's strings read back");
  tap_ok(dbus_read_u32(&r, &u, &err) < 0, "reading a uint32 where an array is refused");
  tap_ok(dbus_skip(&r, &err) == 0 && dbus_skip(&r, &err) == 0 && dbus_read_u32(&r, &u, &err) == 0 &&
             u == 5 && r.sig[0] == '\0' && r.pos == r.len,
         "a(sv) and a(sa(sv)) are skipped, the last value reads 5 and the body is used up");
  tap_ok(dbus_skip(&r, &err) < 0, "nothing left to skip");
  dbus_writer_free(&body);
  dbus_writer_free(&out);
}

static void test_replies(void) {
  cleanup_error fsrun_error_t err = NULL;
  dbus_writer body = {0}, out = {0};
  dbus_message m;
  dbus_reader r;
  const char *s = NULL;
  uint32_t u;
  cleanup_free char *text = NULL;

  dbus_put_string(&body, "Unit x.scope already exists.");
  build_message(&(test_header){.type = DBUS_MESSAGE_ERROR,
                               .serial = 9,
                               .reply_serial = 4,
                               .error_name = "org.freedesktop.systemd1.UnitExists",
                               .signature = "s",
                               .unknown_field = true},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0 && m.type == DBUS_MESSAGE_ERROR &&
             m.reply_serial == 4,
         "an ERROR with an unknown header field parses (the field is skipped)");
  text = dbus_error_text(&m);
  tap_ok(strcmp(text, "org.freedesktop.systemd1.UnitExists: Unit x.scope already exists.") == 0,
         "the error text is `NAME: message`");
  if (err)
    tap_diag("%s", err->msg);
  dbus_writer_free(&body);

  build_message(&(test_header){.type = DBUS_MESSAGE_ERROR, .serial = 9, .reply_serial = 4}, NULL,
                &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) < 0, "an ERROR without a name is refused");

  dbus_put_u32(&body, 1);
  dbus_put_object_path(&body, "/org/freedesktop/systemd1/job/1");
  dbus_put_string(&body, "x.scope");
  dbus_put_string(&body, "done");
  build_message(&(test_header){.type = DBUS_MESSAGE_SIGNAL,
                               .serial = 10,
                               .path = "/org/freedesktop/systemd1",
                               .interface = "org.freedesktop.systemd1.Manager",
                               .member = "JobRemoved",
                               .signature = "uoss"},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "a JobRemoved signal parses");
  dbus_reader_init(&r, &m);
  tap_ok(dbus_read_u32(&r, &u, &err) == 0 && u == 1 && dbus_read_string(&r, &s, &err) == 0 &&
             strcmp(s, "/org/freedesktop/systemd1/job/1") == 0 && dbus_skip(&r, &err) == 0 &&
             dbus_read_string(&r, &s, &err) == 0 && strcmp(s, "done") == 0,
         "its values read back");
  build_message(&(test_header){.type = DBUS_MESSAGE_SIGNAL,
                               .serial = 10,
                               .path = "/a",
                               .member = "JobRemoved",
                               .signature = "uoss"},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) < 0,
         "a signal without interface is refused");
  build_message(&(test_header){.type = DBUS_MESSAGE_METHOD_RETURN, .serial = 10, .reply_serial = 1},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) < 0,
         "a body without signature is refused");
  build_message(&(test_header){.type = DBUS_MESSAGE_METHOD_RETURN,
                               .serial = 10,
                               .reply_serial = 1,
                               .signature = "uoss",
                               .unix_fds = 1},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) < 0,
         "file descriptors that were never negotiated are refused");
  build_message(&(test_header){.type = DBUS_MESSAGE_METHOD_RETURN,
                               .serial = 10,
                               .reply_serial = 1,
                               .signature = "uosss"},
                &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "a signature longer than the body "
                                                               "parses (the header is fine)");
  dbus_reader_init(&r, &m);
  for (int i = 0; i < 4; i++)
    (void)dbus_skip(&r, &err);
  {
    int ret = dbus_skip(&r, &err);
    tap_ok(ret < 0 && err != NULL && strstr(err->msg, "truncated") != NULL,
           "but reading past the body's end is an error: %s", err ? err->msg : "");
  }
  build_message(&(test_header){.type = DBUS_MESSAGE_METHOD_RETURN, .serial = 0, .reply_serial = 1},
                NULL, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) < 0, "serial 0 is refused");
  dbus_writer_free(&body);
  dbus_writer_free(&out);
}

static void test_big_endian(void) {
  cleanup_error fsrun_error_t err = NULL;
  /* METHOD_RETURN, serial 2, REPLY_SERIAL 7, SIGNATURE "u", body 0x01020304, all big-endian */
  static const uint8_t msg[] = {
      'B', 2, 0,   1, 0, 0, 0, 4, 0, 0, 0,   2, 0, 0,   0, 15, /* fields: 8 + 7 bytes */
      5,   1, 'u', 0, 0, 0, 0, 7, 8, 1, 'g', 0, 1, 'u', 0, 0,  /* pad to 32 */
      1,   2, 3,   4,
  };
  dbus_message m;
  dbus_reader r;
  uint32_t u = 0;
  int ret = dbus_message_parse(msg, sizeof(msg), &m, &err);
  tap_ok(ret == 0 && m.big_endian && m.serial == 2 && m.reply_serial == 7,
         "a big-endian reply parses");
  if (ret < 0)
    tap_diag("%s", err->msg);
  dbus_reader_init(&r, &m);
  tap_ok(ret == 0 && dbus_read_u32(&r, &u, &err) == 0 && u == 0x01020304,
         "and its uint32 reads in its byte order");
}

static void test_malformed(void) {
  cleanup_error fsrun_error_t err = NULL;
  dbus_writer body = {0}, out = {0};
  uint8_t *bad;
  size_t size;

  dbus_put_string(&body, "a message");
  build_message(&(test_header){.type = DBUS_MESSAGE_ERROR,
                               .serial = 3,
                               .reply_serial = 2,
                               .error_name = "a.B",
                               .signature = "s",
                               .unknown_field = true},
                &body, &out);
  tap_ok(parse_copy(out.data, out.len, &err) == 0, "the reference message parses");

  {
    int all_refused = 1;
    for (size_t len = 0; len < out.len; len++)
      if (parse_copy(out.data, len, &err) == 0)
        all_refused = 0;
    tap_ok(all_refused, "every truncation of it (0..%zu bytes) is refused", out.len - 1);
  }

  bad = malloc(out.len);
  memcpy(bad, out.data, out.len);
  bad[0] = 'X';
  tap_ok(parse_copy(bad, out.len, &err) < 0 && strstr(err->msg, "endianness") != NULL,
         "a bad endianness byte is refused");
  memcpy(bad, out.data, out.len);
  bad[3] = 2;
  tap_ok(parse_copy(bad, out.len, &err) < 0, "protocol version 2 is refused");
  memcpy(bad, out.data, out.len);
  bad[4] = bad[5] = bad[6] = bad[7] = 0xff; /* body length 4 GiB */
  tap_ok(dbus_message_size(bad, out.len, &size, &err) < 0 && err->status == EMSGSIZE,
         "a 4 GiB body length is refused before anything is read");
  memcpy(bad, out.data, out.len);
  bad[12] = 0xf0; /* fields length past the message */
  tap_ok(parse_copy(bad, out.len, &err) < 0, "a header-fields length past the end is refused");
  {
    /* the error name's length, then its NUL, overwritten */
    uint8_t *p = (uint8_t *)find(out.data, out.len, "a.B");
    size_t at = p ? (size_t)(p - out.data) : 4;
    memcpy(bad, out.data, out.len);
    bad[at + 3] = 'x';
    tap_ok(p && parse_copy(bad, out.len, &err) < 0, "a string without its NUL is refused");
    memcpy(bad, out.data, out.len);
    bad[at - 4] = 200;
    tap_ok(p && parse_copy(bad, out.len, &err) < 0, "a string length past the end is refused");
    memcpy(bad, out.data, out.len);
    bad[at + 1] = 0;
    tap_ok(p && parse_copy(bad, out.len, &err) < 0, "a NUL inside a string is refused");
  }
  {
    /* the unknown field's variant signature "(yat)" -> "(ya" + bad */
    uint8_t *p = (uint8_t *)find(out.data, out.len, "(yat)");
    memcpy(bad, out.data, out.len);
    if (p)
      bad[(size_t)(p - out.data) + 4] = '!';
    tap_ok(p && parse_copy(bad, out.len, &err) < 0, "an invalid variant signature is refused");
  }
  free(bad);

  {
    /* every single byte changed to each of a few values: refused or parsed, never a crash */
    static const uint8_t values[] = {0x00, 0x01, 0x07, 0x20, 0x61, 0x7f, 0x80, 0xff};
    size_t parsed = 0, refused = 0;
    bad = malloc(out.len);
    for (size_t i = 0; i < out.len; i++)
      for (size_t v = 0; v < sizeof(values); v++) {
        memcpy(bad, out.data, out.len);
        bad[i] = values[v];
        if (parse_copy(bad, out.len, &err) == 0)
          parsed++;
        else
          refused++;
      }
    free(bad);
    tap_ok(refused > 0 && parsed + refused == out.len * sizeof(values),
           "%zu single-byte mutations: %zu refused, %zu parsed, no crash", parsed + refused,
           refused, parsed);
  }
  {
    /* random bytes behind a plausible fixed header */
    uint32_t seed = 12345;
    size_t refused = 0, total = 0;
    for (int round = 0; round < 3000; round++) {
      size_t len = 16 + (size_t)(round % 200);
      uint8_t *buf = malloc(len);
      for (size_t i = 0; i < len; i++) {
        seed = seed * 1103515245u + 12345u;
        buf[i] = (uint8_t)(seed >> 16);
      }
      buf[0] = 'l';
      buf[1] = (uint8_t)(1 + round % 4);
      buf[3] = 1;
      /* lengths that fit the buffer, half of the time */
      if (round % 2 == 0) {
        uint32_t fl = (uint32_t)(len - 16) / 2;
        size_t body_len = len - ((16 + fl + 7) / 8 * 8);
        if ((16 + fl + 7) / 8 * 8 <= len) {
          buf[4] = (uint8_t)body_len, buf[5] = buf[6] = buf[7] = 0;
          buf[12] = (uint8_t)fl, buf[13] = buf[14] = buf[15] = 0;
        }
      }
      total++;
      if (parse_copy(buf, len, &err) < 0)
        refused++;
      free(buf);
    }
    tap_ok(refused > 0, "%zu random messages: %zu refused, no crash", total, refused);
  }
  {
    /* a variant nested 200 deep in a body: refused, not a stack overflow */
    dbus_writer deep = {0}, msg = {0};
    dbus_message m;
    dbus_reader r;
    for (int i = 0; i < 200; i++)
      dbus_put_variant_signature(&deep, "v");
    dbus_put_variant_signature(&deep, "y");
    dbus_put_byte(&deep, 1);
    build_message(
        &(test_header){
            .type = DBUS_MESSAGE_METHOD_RETURN, .serial = 1, .reply_serial = 1, .signature = "v"},
        &deep, &msg);
    tap_ok(dbus_message_parse(msg.data, msg.len, &m, &err) == 0, "a deep variant's header parses");
    dbus_reader_init(&r, &m);
    int ret = dbus_skip(&r, &err);
    tap_ok(ret < 0 && strstr(err->msg, "deep") != NULL,
           "skipping 200 nested variants is refused: %s", err ? err->msg : "");
    dbus_writer_free(&deep);
    dbus_writer_free(&msg);
  }
  dbus_writer_free(&body);
  dbus_writer_free(&out);
}

/* --- a fake peer -------------------------------------------------------------------------------
 */

enum { PEER_REPLY, PEER_ERROR, PEER_GARBAGE, PEER_HANG_UP, PEER_REJECT };

static int read_line(int fd, char *buf, size_t size) {
  size_t n = 0;
  while (n + 1 < size) {
    if (read(fd, buf + n, 1) != 1)
      return -1;
    if (n > 0 && buf[n - 1] == '\r' && buf[n] == '\n') {
      buf[n + 1] = '\0';
      return (int)(n + 1);
    }
    n++;
  }
  return -1;
}

static void send_message(int fd, const test_header *h, const dbus_writer *body) {
  dbus_writer out = {0};
  build_message(h, body, &out);
  if (write(fd, out.data, out.len) != (ssize_t)out.len)
    _exit(3);
  dbus_writer_free(&out);
}

/* Serves one connection per scenario, in order; exits 0 when every check held. */
static void peer_main(int listen_fd) {
  static const int scenarios[] = {PEER_REPLY, PEER_ERROR, PEER_GARBAGE, PEER_HANG_UP, PEER_REJECT};
  for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
    char line[256], want[64], uid[16];
    uint8_t buf[4096];
    size_t have = 0, size = 0, wl;
    fsrun_error_t err = NULL;
    dbus_message m;
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
      _exit(2);
    /* NUL, then AUTH EXTERNAL with our uid as hex digits of its decimal string */
    snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
    wl = (size_t)snprintf(want, sizeof(want), "AUTH EXTERNAL ");
    for (char *p = uid; *p; p++)
      wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%02x", (unsigned char)*p);
    snprintf(want + wl, sizeof(want) - wl, "\r\n");
    if (read(fd, line, 1) != 1 || line[0] != '\0' || read_line(fd, line, sizeof(line)) < 0 ||
        strcmp(line, want) != 0)
      _exit(10 + (int)i);
    if (scenarios[i] == PEER_REJECT) {
      (void)!write(fd, "REJECTED EXTERNAL\r\n", 19);
      close(fd);
      continue;
    }
    /* BEGIN comes with AUTH, before our OK (see authenticate() in dbus.c): a client that waits
     * for the OK first is left without one and fails here */
    if (read_line(fd, line, sizeof(line)) < 0 || strcmp(line, "BEGIN\r\n") != 0)
      _exit(20 + (int)i);
    (void)!write(fd, "OK 0123456789abcdef0123456789abcdef\r\n", 37);
    while (have < 16 || have < size) {
      ssize_t n = read(fd, buf + have, sizeof(buf) - have);
      if (n <= 0)
        _exit(30 + (int)i);
      have += (size_t)n;
      if (have >= 16 && dbus_message_size(buf, have, &size, &err) < 0)
        _exit(40 + (int)i);
    }
    if (dbus_message_parse(buf, size, &m, &err) < 0 || strcmp(m.member, "StartTransientUnit") != 0)
      _exit(50 + (int)i);
    switch (scenarios[i]) {
    case PEER_REPLY: {
      dbus_writer sig = {0}, reply = {0};
      dbus_put_u32(&sig, 1);
      dbus_put_object_path(&sig, "/job/1");
      dbus_put_string(&sig, "x.scope");
      dbus_put_string(&sig, "done");
      /* a signal first, a stale reply, then ours */
      send_message(fd,
                   &(test_header){.type = DBUS_MESSAGE_SIGNAL,
                                  .serial = 1,
                                  .path = "/o",
                                  .interface = "org.freedesktop.systemd1.Manager",
                                  .member = "JobRemoved",
                                  .signature = "uoss"},
                   &sig);
      dbus_put_object_path(&reply, "/job/1");
      send_message(fd,
                   &(test_header){.type = DBUS_MESSAGE_METHOD_RETURN,
                                  .serial = 2,
                                  .reply_serial = m.serial + 100,
                                  .signature = "o"},
                   &reply);
      send_message(fd,
                   &(test_header){.type = DBUS_MESSAGE_METHOD_RETURN,
                                  .serial = 3,
                                  .reply_serial = m.serial,
                                  .signature = "o"},
                   &reply);
      dbus_writer_free(&sig);
      dbus_writer_free(&reply);
      break;
    }
    case PEER_ERROR: {
      dbus_writer text = {0};
      dbus_put_string(&text, "Unit x.scope already exists.");
      send_message(fd,
                   &(test_header){.type = DBUS_MESSAGE_ERROR,
                                  .serial = 2,
                                  .reply_serial = m.serial,
                                  .error_name = "org.freedesktop.systemd1.UnitExists",
                                  .signature = "s"},
                   &text);
      dbus_writer_free(&text);
      break;
    }
    case PEER_GARBAGE:
      (void)!write(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
      break;
    case PEER_HANG_UP:
      (void)!write(fd, "l\2\0\1", 4); /* the start of a message, then nothing */
      break;
    }
    fsrun_error_release(&err);
    close(fd);
  }
  _exit(0);
}

static bool count_signal(const dbus_message *m, void *userdata) {
  if (m->member && strcmp(m->member, "JobRemoved") == 0)
    (*(int *)userdata)++;
  return false;
}

static int call_start(dbus_conn *c, int *signals, char **error_name, fsrun_error_t *err) {
  dbus_writer body = {0};
  dbus_message reply;
  int ret;
  dbus_put_string(&body, "x.scope");
  dbus_put_string(&body, "replace");
  ret = dbus_call(c, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                  "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ss", &body,
                  count_signal, signals, 5000, &reply, error_name, err);
  dbus_writer_free(&body);
  if (ret == 0) {
    dbus_reader r;
    const char *job;
    dbus_reader_init(&r, &reply);
    ret = dbus_read_string(&r, &job, err);
    if (ret == 0 && strcmp(job, "/job/1") != 0)
      ret = -1;
  }
  return ret;
}

static void test_connection(void) {
  char name[64], address[128];
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int listen_fd, status = -1;
  pid_t peer;

  snprintf(name, sizeof(name), "fsrun-test-dbus-%d", (int)getpid());
  memcpy(sa.sun_path + 1, name, strlen(name));
  listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0 ||
      bind(listen_fd, (struct sockaddr *)&sa,
           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) < 0 ||
      listen(listen_fd, 8) < 0) {
    tap_ok(false, "listen on an abstract socket: %s", strerror(errno));
    return;
  }
  peer = fork();
  if (peer == 0)
    peer_main(listen_fd);
  close(listen_fd);
  /* a list: the tcp entry is skipped, the guid key ignored */
  snprintf(address, sizeof(address), "tcp:host=localhost,port=1;unix:abstract=%s,guid=00", name);

  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    cleanup_free char *error_name = NULL;
    int signals = 0;
    int ret = dbus_connect(address, false, 5000, &c, &err);
    tap_ok(ret == 0, "EXTERNAL authentication with the peer: %s", err ? err->msg : "ok");
    ret = ret == 0 ? call_start(c, &signals, &error_name, &err) : -1;
    tap_ok(ret == 0 && signals == 1,
           "a call returns its own reply, after a stale one and a signal handed to the callback");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    cleanup_free char *error_name = NULL;
    int signals = 0;
    int ret = dbus_connect(address, false, 5000, &c, &err);
    ret = ret == 0 ? call_start(c, &signals, &error_name, &err) : 0;
    tap_ok(ret < 0 && error_name && strcmp(error_name, "org.freedesktop.systemd1.UnitExists") == 0,
           "an ERROR reply fails the call and names the D-Bus error");
    tap_ok(err && strcmp(err->msg, "StartTransientUnit: org.freedesktop.systemd1.UnitExists: Unit "
                                   "x.scope already exists.") == 0,
           "the message is `MEMBER: NAME: text`: %s", err ? err->msg : "");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    int signals = 0;
    int ret = dbus_connect(address, false, 5000, &c, &err);
    ret = ret == 0 ? call_start(c, &signals, NULL, &err) : 0;
    tap_ok(ret < 0 && err && strstr(err->msg, "endianness") != NULL,
           "a peer that answers garbage gives an error: %s", err ? err->msg : "");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    int signals = 0;
    int ret = dbus_connect(address, false, 5000, &c, &err);
    ret = ret == 0 ? call_start(c, &signals, NULL, &err) : 0;
    tap_ok(ret < 0 && err && strstr(err->msg, "closed") != NULL,
           "a peer that hangs up mid-message gives an error: %s", err ? err->msg : "");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    int ret = dbus_connect(address, false, 5000, &c, &err);
    tap_ok(ret < 0 && err && strstr(err->msg, "authentication refused") != NULL,
           "a REJECTED authentication fails the connection: %s", err ? err->msg : "");
  }
  waitpid(peer, &status, 0);
  tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "the peer saw `\\0AUTH EXTERNAL <uid in hex>`, BEGIN before its OK, and our calls "
         "(status %d)",
         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_dbus_conn dbus_conn *c = NULL;
    tap_ok(dbus_connect("tcp:host=x,port=1", false, 1000, &c, &err) < 0 &&
               strstr(err->msg, "no usable unix socket") != NULL,
           "an address without a unix socket is refused");
    int ret = dbus_connect(address, false, 1000, &c, &err);
    tap_ok(ret < 0 && strstr(err->msg, "connect") != NULL, "nobody listening: %s",
           err ? err->msg : "");
  }
}

/* Properties.Get answers a variant: the user manager's ControlGroup */
static void test_variant_string(void) {
  cleanup_error fsrun_error_t err = NULL;
  dbus_writer body = {0}, out = {0};
  dbus_message m;
  dbus_reader r;
  const char *s = NULL;

  dbus_put_variant_signature(&body, "s");
  dbus_put_string(&body, "/user.slice/user-1000.slice/user@1000.service");
  build_message(
      &(test_header){
          .type = DBUS_MESSAGE_METHOD_RETURN, .serial = 5, .reply_serial = 2, .signature = "v"},
      &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "a variant reply parses");
  dbus_reader_init(&r, &m);
  tap_ok(dbus_read_variant_string(&r, &s, &err) == 0 &&
             strcmp(s, "/user.slice/user-1000.slice/user@1000.service") == 0 && r.sig[0] == '\0' &&
             r.pos == r.len,
         "its string reads back and the body is used up");
  dbus_writer_free(&body);

  dbus_put_variant_signature(&body, "t");
  dbus_put_u64(&body, 7);
  build_message(
      &(test_header){
          .type = DBUS_MESSAGE_METHOD_RETURN, .serial = 6, .reply_serial = 3, .signature = "v"},
      &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "a variant of a uint64 parses");
  dbus_reader_init(&r, &m);
  fsrun_error_release(&err);
  tap_ok(dbus_read_variant_string(&r, &s, &err) < 0 && strstr(err->msg, "`t`") != NULL,
         "reading it as a string is refused, naming what it holds");
  dbus_writer_free(&body);

  dbus_put_string(&body, "not a variant");
  build_message(
      &(test_header){
          .type = DBUS_MESSAGE_METHOD_RETURN, .serial = 7, .reply_serial = 4, .signature = "s"},
      &body, &out);
  tap_ok(dbus_message_parse(out.data, out.len, &m, &err) == 0, "a plain string reply parses");
  dbus_reader_init(&r, &m);
  tap_ok(dbus_read_variant_string(&r, &s, &err) < 0, "and is no variant");
  dbus_writer_free(&body);
  dbus_writer_free(&out);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  test_variant_string();
  test_exact_bytes();
  test_body_alignment();
  test_roundtrip();
  test_replies();
  test_big_endian();
  test_malformed();
  test_connection();
  return tap_done();
}
