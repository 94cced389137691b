#include "json-out.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* room for n more bytes and the NUL */
static void sb_reserve(struct strbuf *b, size_t n) {
  size_t cap = b->cap ? b->cap : 256;
  char *data;
  if (b->len + n + 1 <= b->cap)
    return;
  while (cap < b->len + n + 1)
    cap *= 2;
  data = realloc(b->data, cap);
  if (data == NULL)
    abort();
  b->data = data;
  b->cap = cap;
}

void sb_append(struct strbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void sb_puts(struct strbuf *b, const char *s) {
  sb_append(b, s, strlen(s));
}

/* however long the result: measured first, then formatted in place */
void sb_printf(struct strbuf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0)
    return;
  sb_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
  size_t len;
  uint32_t cp;
  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xe0) == 0xc0)
    len = 2, cp = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    len = 3, cp = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

void sb_json_string(struct strbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  sb_puts(b, "\"");
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    size_t len;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      sb_append(b, esc, 2);
      i++;
    } else if (c == '\n') {
      sb_puts(b, "\\n"), i++;
    } else if (c == '\r') {
      sb_puts(b, "\\r"), i++;
    } else if (c == '\t') {
      sb_puts(b, "\\t"), i++;
    } else if (c < 0x20 || c == 0x7f) {
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
      sb_append(b, esc, sizeof(esc)), i++;
    } else if ((len = utf8_sequence(p + i, n - i)) > 0) {
      sb_append(b, s + i, len), i += len;
    } else {
      sb_puts(b, "\\ufffd"), i++;
    }
  }
  sb_puts(b, "\"");
}

size_t json_string_size(const char *s) {
  struct strbuf b = {0};
  size_t n;
  sb_json_string(&b, s, strlen(s));
  n = b.len;
  free(b.data);
  return n;
}

void sb_json_key_string(struct strbuf *b, const char *key, const char *value) {
  sb_printf(b, ",\"%s\":", key);
  if (value == NULL)
    sb_puts(b, "null");
  else
    sb_json_string(b, value, strlen(value));
}

void sb_json_array(struct strbuf *b, char **items) {
  sb_puts(b, "[");
  for (char **p = items; p != NULL && *p != NULL; p++) {
    sb_puts(b, p == items ? "" : ",");
    sb_json_string(b, *p, strlen(*p));
  }
  sb_puts(b, "]");
}

void sb_json_string_array(struct strbuf *b, const char *key, char **items) {
  sb_printf(b, ",\"%s\":", key);
  sb_json_array(b, items);
}
