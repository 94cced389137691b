/* git's config file syntax, read as git reads it (config.c's parser: get_base_var, get_value,
 * parse_value), to find what a repository's config names. */
#include "git-config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

#define KEY_MAX   1024
#define VALUE_MAX 4096

/* text[0, len): git reads a NUL byte as any other (config.c's get_next_char), so does this */
struct cursor {
  const char *p, *end;
};

static bool more(const struct cursor *c) {
  return c->p < c->end;
}

/* the character k after the cursor, as an unsigned value for ctype; -1 past the end */
static int peek_at(const struct cursor *c, size_t k) {
  return (size_t)(c->end - c->p) > k ? (unsigned char)c->p[k] : -1;
}

static int peek(const struct cursor *c) {
  return peek_at(c, 0);
}

static void skip_line(struct cursor *c) {
  while (more(c) && *c->p != '\n')
    c->p++;
}

static void skip_blank(struct cursor *c) {
  while (more(c) && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
    c->p++;
}

static bool key_char(int ch) {
  return ch >= 0 && (isalnum(ch) || ch == '-');
}

/* a NUL appended ends buf as a C string there, as git's callbacks see a key or value with one */
static void append(char *buf, size_t *n, size_t max, int ch) {
  if (*n + 1 < max)
    buf[(*n)++] = (char)ch;
  buf[*n] = '\0';
}

/* `[section]`, `[section "sub"]` or `[section.sub]` into base ("section" or "section.sub") */
static bool read_section(struct cursor *c, char *base, size_t max) {
  size_t n = 0;
  base[0] = '\0';
  c->p++; /* '[' */
  while (key_char(peek(c)) || peek(c) == '.')
    append(base, &n, max, tolower(*c->p++));
  skip_blank(c);
  if (peek(c) == ']') {
    c->p++;
    return n > 0;
  }
  if (peek(c) != '"' || n == 0)
    return false;
  c->p++;
  append(base, &n, max, '.');
  while (more(c) && *c->p != '"' && *c->p != '\n') {
    if (*c->p == '\\' && peek_at(c, 1) >= 0 && peek_at(c, 1) != '\n')
      c->p++;
    append(base, &n, max, *c->p++);
  }
  if (peek(c) != '"' || peek_at(c, 1) != ']')
    return false;
  c->p += 2;
  return true;
}

/* the value after `=`: quotes dropped, escapes applied, a comment cut, outer blanks trimmed */
static bool read_value(struct cursor *c, char *out, size_t max) {
  size_t n = 0, kept = 0; /* kept: the length without trailing blanks outside quotes */
  bool quoted = false;
  out[0] = '\0';
  skip_blank(c);
  for (; more(c) && (*c->p != '\n' || quoted); c->p++) {
    int ch = peek(c);
    if (ch == '\n')
      return false; /* a newline inside quotes */
    if (ch == '\\') {
      int e;
      c->p++;
      if (!more(c))
        break; /* git reads the file's end as a newline: a continuation, then the end */
      e = peek(c);
      if (e == '\n')
        continue;
      /* git knows these escapes only; a NUL after the backslash is none of them */
      if (e == '\0' || strchr("ntb\\\"", e) == NULL)
        return false;
      ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
      append(out, &n, max, ch);
      kept = n;
      continue;
    }
    if (ch == '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && (ch == '#' || ch == ';')) {
      skip_line(c);
      break;
    }
    append(out, &n, max, ch);
    if (quoted || (ch != ' ' && ch != '\t' && ch != '\r'))
      kept = n;
  }
  out[kept < max ? kept : max - 1] = '\0';
  return !quoted;
}

void git_config_each(const char *text, size_t len,
                     void (*fn)(void *arg, const char *key, const char *value), void *arg) {
  struct cursor c = {.p = text, .end = text != NULL ? text + len : NULL};
  cleanup_free char *base = xmalloc0(KEY_MAX);
  cleanup_free char *key = xmalloc0(KEY_MAX + 64);
  cleanup_free char *value = xmalloc0(VALUE_MAX);
  if (text == NULL)
    return;
  /* git skips a UTF-8 byte-order mark at a file's start (what some Windows editors save) */
  if (len >= 3 && memcmp(c.p, "\xef\xbb\xbf", 3) == 0)
    c.p += 3;
  while (more(&c)) {
    char name[64];
    size_t n = 0;
    skip_blank(&c);
    if (!more(&c))
      break;
    if (*c.p == '\n') {
      c.p++;
      continue;
    }
    if (*c.p == '#' || *c.p == ';') {
      skip_line(&c);
      continue;
    }
    if (*c.p == '[') {
      if (!read_section(&c, base, KEY_MAX))
        return;
      continue;
    }
    /* a NUL byte here too: git refuses the line (and with it the file) */
    if (!isalpha(peek(&c)) || base[0] == '\0')
      return;
    name[0] = '\0';
    while (key_char(peek(&c)))
      append(name, &n, sizeof(name), tolower(*c.p++));
    skip_blank(&c);
    snprintf(key, KEY_MAX + 64, "%s.%s", base, name);
    if (peek(&c) == '=') {
      c.p++;
      if (!read_value(&c, value, VALUE_MAX))
        return;
      fn(arg, key, value);
    } else if (!more(&c) || *c.p == '\n' || *c.p == '#' || *c.p == ';') {
      skip_line(&c);
      fn(arg, key, NULL);
    } else {
      return;
    }
  }
}
