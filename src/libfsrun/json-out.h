/* JSON output: a growable string and the one JSON string escaper every writer of JSON lines uses
 * (`fsrun sandbox --json`, its audit log, `exec --status-json`'s git members, the limits not
 * enforced). The output is always valid JSON: control characters and DEL as \u00hh escapes (\n,
 * \r, \t short), valid UTF-8 kept as it is, any byte that is not UTF-8 as \ufffd. */
#ifndef FSRUN_JSON_OUT_H
#define FSRUN_JSON_OUT_H

#include <stddef.h>

/* data is NUL-terminated once anything was appended (NULL before); the owner frees it */
struct strbuf {
  char *data;
  size_t len, cap;
};

void sb_append(struct strbuf *b, const char *s, size_t n);
void sb_puts(struct strbuf *b, const char *s);
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* n bytes of s as a JSON string literal */
void sb_json_string(struct strbuf *b, const char *s, size_t n);
/* the bytes sb_json_string makes of s (NUL-terminated), quotes included */
size_t json_string_size(const char *s);
/* `,"key":"value"`, or `,"key":null` when value is NULL */
void sb_json_key_string(struct strbuf *b, const char *key, const char *value);
/* `["item",...]` (items NULL-terminated; NULL: an empty array) */
void sb_json_array(struct strbuf *b, char **items);
/* `,"key":["item",...]` */
void sb_json_string_array(struct strbuf *b, const char *key, char **items);

#endif
