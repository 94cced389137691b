/* git's config file syntax, read as git 2.39 reads it (config.c's parser: get_next_char,
 * get_base_var, get_value, parse_value), to find what a repository's config names. Every check was
 * compared with `git config -f F --list` (review22 F4's differential fuzzer). Nothing is cut: the
 * buffers hold as much as the text could give. */
#include "git-config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

#define END (-1) /* past the text: git reads it as one more newline */

struct reader {
  const char *p, *end;
  char *var; /* "section.", "section.sub." or "" (a key before any section), then the name */
  size_t var_len, base_len;
  char *value;
  size_t value_len;
};

/* the next character as git's get_next_char gives it: CR LF is one LF (a Windows-edited file) */
static int next(struct reader *r) {
  if (r->p >= r->end)
    return END;
  if (r->p[0] == '\r' && r->end - r->p > 1 && r->p[1] == '\n')
    r->p++;
  return (unsigned char)*r->p++;
}

static bool eol(int ch) {
  return ch == '\n' || ch == END;
}

/* git's own isspace (sane_ctype): no vertical tab, no form feed */
static bool space(int ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* git's ctype is ASCII whatever the locale */
static bool alpha(int ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int lower(int ch) {
  return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static bool key_char(int ch) {
  return alpha(ch) || (ch >= '0' && ch <= '9') || ch == '-';
}

/* a NUL byte is kept: it ends the key or value as a C string there, as git's callbacks see it */
static void put_var(struct reader *r, int ch) {
  r->var[r->var_len++] = (char)ch;
  r->var[r->var_len] = '\0';
}

static void put_value(struct reader *r, int ch) {
  r->value[r->value_len++] = (char)ch;
  r->value[r->value_len] = '\0';
}

/* ` "sub"]` after `[section`: git takes blanks (not a newline) then the quoted name, whose `\`
 * keeps the next character whatever it is, then `]` at once */
static bool read_subsection(struct reader *r, int ch) {
  for (; space(ch); ch = next(r))
    if (ch == '\n')
      return false;
  if (ch != '"')
    return false;
  put_var(r, '.');
  while ((ch = next(r)) != '"') {
    if (ch == '\\')
      ch = next(r);
    if (eol(ch))
      return false;
    put_var(r, ch);
  }
  return next(r) == ']';
}

/* after `[`: `section]` (lower-cased, `.` allowed: the legacy `[section.sub]`) or
 * `section "sub"]`; `[ "sub"]` is git's section "" with a subsection */
static bool read_section(struct reader *r) {
  int ch;
  r->var_len = 0;
  r->var[0] = '\0';
  while ((ch = next(r)) != ']') {
    if (ch == END)
      return false;
    if (space(ch)) {
      if (!read_subsection(r, ch))
        return false;
      break;
    }
    if (!key_char(ch) && ch != '.')
      return false;
    put_var(r, lower(ch));
  }
  if (r->var_len == 0)
    return false;
  put_var(r, '.');
  r->base_len = r->var_len;
  return true;
}

/* `\` and the character after it in a value; END: an escape git refuses */
static int escaped(int ch) {
  switch (ch) {
  case 'n':
    return '\n';
  case 't':
    return '\t';
  case 'b':
    return '\b';
  case '\\':
  case '"':
    return ch;
  default:
    return END;
  }
}

/* the value after `=`, as git's parse_value: blanks outside quotes before the first character
 * dropped, each inside the value one space, those at its end dropped; a comment outside quotes
 * to the line's end; `\` newline joins the next line. false: a line git refuses */
static bool read_value(struct reader *r) {
  bool quoted = false, comment = false;
  size_t blanks = 0;
  int ch;
  r->value_len = 0;
  r->value[0] = '\0';
  while (!eol(ch = next(r))) {
    if (comment)
      continue;
    if (!quoted && space(ch)) {
      blanks += r->value_len > 0;
      continue;
    }
    if (!quoted && (ch == '#' || ch == ';')) {
      comment = true;
      continue;
    }
    for (; blanks > 0; blanks--)
      put_value(r, ' ');
    if (ch == '\\') {
      ch = next(r);
      if (eol(ch))
        continue; /* a continuation; at the text's end, git's extra newline then ends the value */
      if ((ch = escaped(ch)) == END)
        return false;
      put_value(r, ch);
    } else if (ch == '"') {
      quoted = !quoted;
    } else {
      put_value(r, ch);
    }
  }
  return !quoted;
}

/* a variable whose name starts with first: `name`, `name = value`; false: a line git refuses */
static bool read_variable(struct reader *r, int first,
                          void (*fn)(void *arg, const char *key, const char *value), void *arg) {
  int ch;
  r->var_len = r->base_len;
  r->var[r->var_len] = '\0';
  put_var(r, lower(first));
  while (key_char(ch = next(r)))
    put_var(r, lower(ch));
  while (ch == ' ' || ch == '\t')
    ch = next(r);
  if (eol(ch)) {
    fn(arg, r->var, NULL);
    return true;
  }
  if (ch != '=' || !read_value(r))
    return false;
  fn(arg, r->var, r->value);
  return true;
}

bool git_config_each(const char *text, size_t len,
                     void (*fn)(void *arg, const char *key, const char *value), void *arg) {
  /* each character put consumes one of the text's, but for the `.`s a section adds */
  cleanup_free char *var = xmalloc0(len + 3);
  cleanup_free char *value = xmalloc0(len + 1);
  struct reader r = {.p = text, .end = text, .var = var, .value = value};
  bool comment = false;
  int ch;
  if (text == NULL)
    return true;
  r.end = text + len;
  /* git skips a UTF-8 byte-order mark at a file's start (what some Windows editors save); a part
   * of one is refused below (0xEF is no letter) */
  if (len >= 3 && memcmp(r.p, "\xef\xbb\xbf", 3) == 0)
    r.p += 3;
  while ((ch = next(&r)) != END) {
    if (ch == '\n')
      comment = false;
    else if (comment || space(ch))
      continue;
    else if (ch == '#' || ch == ';')
      comment = true;
    else if (ch == '[' ? !read_section(&r) : !alpha(ch) || !read_variable(&r, ch, fn, arg))
      return false;
  }
  return true;
}
