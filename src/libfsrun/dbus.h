/* A minimal D-Bus client: a unix socket, SASL EXTERNAL, and little-endian method calls whose
 * replies (and signals) are parsed with a bounds check on every read. Enough to ask systemd for a
 * transient scope without loading libsystemd or libdbus into every `fsrun run`.
 *
 * Wire format (D-Bus specification, "Message Protocol"): a 12-byte fixed header (endianness,
 * type, flags, version, body length, serial), an array of (byte code, variant) header fields,
 * padding to 8, then the body. Every value is aligned to its own size (8 for structs, dict
 * entries and 64-bit integers) counted from the start of the message. */
#ifndef FSRUN_DBUS_H
#define FSRUN_DBUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* messages larger than this are refused (the specification allows 128 MiB; systemd's replies
 * and signals are a few KiB) */
#define DBUS_MAX_MESSAGE_SIZE (8u << 20)

enum {
  DBUS_MESSAGE_METHOD_CALL = 1,
  DBUS_MESSAGE_METHOD_RETURN = 2,
  DBUS_MESSAGE_ERROR = 3,
  DBUS_MESSAGE_SIGNAL = 4,
};

/* --- marshalling ----------------------------------------------------------------------------- */

/* A growing buffer of marshalled values; offsets are counted from its start, which must be
 * 8-aligned in the message (true for the body and for the header). */
typedef struct {
  uint8_t *data;
  size_t len, cap;
} dbus_writer;

void dbus_writer_free(dbus_writer *w);
void dbus_put_byte(dbus_writer *w, uint8_t v);
void dbus_put_bool(dbus_writer *w, bool v);
void dbus_put_u32(dbus_writer *w, uint32_t v);
void dbus_put_u64(dbus_writer *w, uint64_t v);
/* 's' (also used for 'o'): length, bytes, NUL */
void dbus_put_string(dbus_writer *w, const char *s);
void dbus_put_object_path(dbus_writer *w, const char *s);
/* 'g': one length byte, bytes, NUL */
void dbus_put_signature(dbus_writer *w, const char *s);
/* An array: dbus_array_open writes the length placeholder and the padding to the elements'
 * alignment (8 for structs and dict entries, 4 for 'u'); dbus_array_close fills in the length. */
typedef struct {
  size_t length_pos, start;
} dbus_array;
void dbus_array_open(dbus_writer *w, size_t element_alignment, dbus_array *a);
void dbus_array_close(dbus_writer *w, const dbus_array *a);
/* A struct or dict entry starts on an 8-byte boundary. */
void dbus_struct_open(dbus_writer *w);
/* A variant: its signature ("s", "b", "au", ...); the caller then writes the value. */
void dbus_put_variant_signature(dbus_writer *w, const char *signature);

/* A complete METHOD_CALL message (little-endian) in *out. destination and interface may be NULL;
 * signature may be NULL or "" for an empty body. */
int dbus_build_method_call(uint32_t serial, const char *destination, const char *path,
                           const char *interface, const char *member, const char *signature,
                           const dbus_writer *body, dbus_writer *out, fsrun_error_t *err);

/* --- parsing -----------------------------------------------------------------------------------
 */

/* A parsed message. Strings and body point into the buffer it was parsed from. */
typedef struct {
  uint8_t type, flags;
  bool big_endian;
  uint32_t serial, reply_serial;
  const char *path, *interface, *member, *error_name, *destination, *sender, *signature;
  const uint8_t *body;
  size_t body_len;
} dbus_message;

/* The size of the whole message whose first 16 bytes are hdr (len >= 16 of them), or an error
 * when it cannot be a message or is larger than DBUS_MAX_MESSAGE_SIZE. */
int dbus_message_size(const uint8_t *hdr, size_t len, size_t *size, fsrun_error_t *err);
/* Parses one complete message of exactly len bytes. Never reads outside data. */
int dbus_message_parse(const uint8_t *data, size_t len, dbus_message *m, fsrun_error_t *err);

/* Reads values from a message body, following its signature. */
typedef struct {
  const uint8_t *data; /* the body (8-aligned in its message) */
  size_t len, pos;
  bool big_endian;
  const char *sig; /* what is left of the body's signature */
} dbus_reader;

void dbus_reader_init(dbus_reader *r, const dbus_message *m);
/* Each reads the next complete value; it must be of the given type in the signature. */
int dbus_read_u32(dbus_reader *r, uint32_t *v, fsrun_error_t *err);
/* 's', 'o' or 'g' (whichever comes next). *v points into the message. */
int dbus_read_string(dbus_reader *r, const char **v, fsrun_error_t *err);
/* A variant holding a string or an object path (what Properties.Get answers for one). */
int dbus_read_variant_string(dbus_reader *r, const char **v, fsrun_error_t *err);
/* Skips the next complete value, whatever its type. */
int dbus_skip(dbus_reader *r, fsrun_error_t *err);

/* "ERROR_NAME: message" of an ERROR message (the message is the body's first string if any). */
char *dbus_error_text(const dbus_message *m);

/* --- connection ---------------------------------------------------------------------------------
 */

typedef struct dbus_conn dbus_conn;

/* Connects to a D-Bus address ("unix:path=/run/dbus/system_bus_socket", "unix:abstract=NAME";
 * the first usable entry of a ';' list), authenticates with EXTERNAL as the caller's uid, and,
 * when bus is true (a bus daemon is behind the socket), says Hello. Peer-to-peer servers such as
 * systemd's /run/systemd/private take bus false. The fd is CLOEXEC. */
int dbus_connect(const char *address, bool bus, int timeout_ms, dbus_conn **out,
                 fsrun_error_t *err);
void dbus_conn_free(dbus_conn *c);
void cleanup_dbus_connp(dbus_conn **c);
#define cleanup_dbus_conn __attribute__((cleanup(cleanup_dbus_connp)))

/* Called for each signal that arrives while dbus_call waits for its reply or while
 * dbus_wait_signals runs. Returning true ends dbus_wait_signals. */
typedef bool (*dbus_signal_fn)(const dbus_message *m, void *userdata);

/* Sends a method call and waits (up to timeout_ms) for its reply. A METHOD_RETURN is parsed into
 * *reply (valid until the next call on the connection); an ERROR becomes an fsrun error
 * "MEMBER: ERROR_NAME: message" with errno 0, and its D-Bus name is also left in error_name
 * (when not NULL; caller frees). Signals seen meanwhile go to on_signal (may be NULL). */
int dbus_call(dbus_conn *c, const char *destination, const char *path, const char *interface,
              const char *member, const char *signature, const dbus_writer *body,
              dbus_signal_fn on_signal, void *userdata, int timeout_ms, dbus_message *reply,
              char **error_name, fsrun_error_t *err);
/* Reads messages until on_signal returns true (returns 1) or timeout_ms passes (returns 0). */
int dbus_wait_signals(dbus_conn *c, dbus_signal_fn on_signal, void *userdata, int timeout_ms,
                      fsrun_error_t *err);

#endif
