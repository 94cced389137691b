/* A small JSON tree built with yajl's callback parser, plus the path/error helpers the typed
 * decoders share. Numbers keep their raw text so that integers are converted exactly (strtoull /
 * strtoll), never through a double. Nesting is limited, and nothing here recurses over the tree. */
#ifndef FSRUN_OCI_JSON_H
#define FSRUN_OCI_JSON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest nesting of arrays/objects a document may have. */
#define JSON_MAX_DEPTH 256
/* Largest document (and file) accepted. */
#define JSON_MAX_SIZE (64u * 1024u * 1024u)

typedef enum {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT,
} json_type;

typedef struct json_value json_value;
struct json_value {
  json_type type;
  json_value *free_next; /* intrusive work list: frees the tree without recursion */
  union {
    bool boolean;
    struct {
      char *text; /* NUL-terminated; strings never contain a NUL, numbers are raw JSON text */
      size_t len;
    } str;
    struct {
      json_value **items;
      size_t len, cap;
    } array;
    struct {
      char **keys; /* unique: a repeated key keeps its last value, as encoding/json does */
      json_value **values;
      size_t len, cap;
    } object;
  } u;
};

typedef struct {
  bool reject_duplicate_keys; /* strict documents (the Fusion policy) refuse repeated keys */
} json_parse_options;

/* Parses text into a tree. On failure returns -1 and sets *err to one line starting with what. */
int json_parse(const char *text, size_t len, const char *what, const json_parse_options *opts,
               json_value **out, char **err);
void json_free(json_value *v);

/* The value under key, or NULL. */
const json_value *json_object_get(const json_value *obj, const char *key);

/* --- paths and messages ---------------------------------------------------------------------- */

/* A JSON path such as `process.rlimits[1].soft`, grown and shrunk as decoders descend. */
typedef struct {
  char *buf;
  size_t len, cap;
} json_path;

/* Each push returns the previous length, to be handed to json_path_pop. */
size_t json_path_push_key(json_path *p, const char *key);
size_t json_path_push_index(json_path *p, size_t index);
void json_path_pop(json_path *p, size_t old_len);
void json_path_free(json_path *p);

/* "WHAT: PATH: MESSAGE" (or "WHAT: MESSAGE" when path is empty), malloc'd, always one line. */
char *json_error_format(const char *what, const char *path, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Writes a printable, quoted, length-limited rendering of s into buf (for messages). */
const char *json_quote(char *buf, size_t size, const char *s);

#endif
