/* JSON tree on top of yajl's callback parser. See json.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "json.h"

/* --- paths ------------------------------------------------------------------------------------ */

static void path_append(json_path *p, const char *s, size_t n) {
  if (p->len + n + 1 > p->cap) {
    size_t cap = p->cap ? p->cap : 64;
    while (cap < p->len + n + 1)
      cap *= 2;
    char *buf = realloc(p->buf, cap);
    if (buf == NULL)
      return; /* the path only decorates messages; a shorter one is acceptable */
    p->buf = buf;
    p->cap = cap;
  }
  memcpy(p->buf + p->len, s, n);
  p->len += n;
  p->buf[p->len] = '\0';
}

static bool is_identifier(const char *key) {
  if (!((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= 'A' && key[0] <= 'Z') || key[0] == '_'))
    return false;
  for (const char *c = key; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_'))
      return false;
  return true;
}

size_t json_path_push_key(json_path *p, const char *key) {
  size_t old = p->len;
  if (is_identifier(key)) {
    if (p->len > 0)
      path_append(p, ".", 1);
    path_append(p, key, strlen(key));
  } else {
    char quoted[160];
    json_quote(quoted, sizeof quoted, key);
    path_append(p, "[", 1);
    path_append(p, quoted, strlen(quoted));
    path_append(p, "]", 1);
  }
  return old;
}

size_t json_path_push_index(json_path *p, size_t index) {
  size_t old = p->len;
  char buf[32];
  size_t n = sizeof buf;
  /* by hand: every array element of every document passes here, and snprintf was a tenth of what
   * parsing a config cost */
  buf[--n] = ']';
  do {
    buf[--n] = (char)('0' + index % 10);
    index /= 10;
  } while (index > 0);
  buf[--n] = '[';
  path_append(p, buf + n, sizeof buf - n);
  return old;
}

void json_path_pop(json_path *p, size_t old_len) {
  if (old_len < p->len) {
    p->len = old_len;
    if (p->buf)
      p->buf[p->len] = '\0';
  }
}

void json_path_free(json_path *p) {
  free(p->buf);
  p->buf = NULL;
  p->len = p->cap = 0;
}

const char *json_quote(char *buf, size_t size, const char *s) {
  size_t o = 0;
  const size_t limit = size - 6; /* room for `..."` and the NUL */
  buf[o++] = '"';
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    char tmp[8];
    size_t n;
    if (*c == '"' || *c == '\\') {
      tmp[0] = '\\';
      tmp[1] = (char)*c;
      n = 2;
    } else if (*c < 0x20 || *c == 0x7f) {
      n = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", *c);
    } else {
      tmp[0] = (char)*c;
      n = 1;
    }
    if (o + n > limit) {
      memcpy(buf + o, "...", 3);
      o += 3;
      break;
    }
    memcpy(buf + o, tmp, n);
    o += n;
  }
  buf[o++] = '"';
  buf[o] = '\0';
  return buf;
}

char *json_error_format(const char *what, const char *path, const char *fmt, va_list ap) {
  char *msg = NULL, *out = NULL;
  if (vasprintf(&msg, fmt, ap) < 0)
    return strdup("out of memory");
  int r;
  if (path != NULL && path[0] != '\0')
    r = asprintf(&out, "%s: %s: %s", what, path, msg);
  else
    r = asprintf(&out, "%s: %s", what, msg);
  free(msg);
  if (r < 0)
    return strdup("out of memory");
  /* one line, always: callers print it as-is after "fsrun: " */
  for (char *c = out; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = ' ';
  return out;
}

static char *error_make(const char *what, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *error_make(const char *what, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *r = json_error_format(what, path, fmt, ap);
  va_end(ap);
  return r;
}

/* --- the tree --------------------------------------------------------------------------------- */

void json_free(json_value *v) {
  if (v == NULL)
    return;
  v->free_next = NULL;
  json_value *todo = v;
  while (todo != NULL) {
    json_value *cur = todo;
    todo = cur->free_next;
    switch (cur->type) {
    case JSON_STRING:
    case JSON_NUMBER:
      free(cur->u.str.text);
      break;
    case JSON_ARRAY:
      for (size_t i = 0; i < cur->u.array.len; i++) {
        cur->u.array.items[i]->free_next = todo;
        todo = cur->u.array.items[i];
      }
      free(cur->u.array.items);
      break;
    case JSON_OBJECT:
      for (size_t i = 0; i < cur->u.object.len; i++) {
        free(cur->u.object.keys[i]);
        cur->u.object.values[i]->free_next = todo;
        todo = cur->u.object.values[i];
      }
      free(cur->u.object.keys);
      free(cur->u.object.values);
      break;
    default:
      break;
    }
    free(cur);
  }
}

const json_value *json_object_get(const json_value *obj, const char *key) {
  if (obj == NULL || obj->type != JSON_OBJECT)
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp(obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* --- building the tree from yajl callbacks -----------------------------------------------------
 */

typedef struct {
  const char *what;
  bool reject_duplicate_keys;
  json_value *root;
  json_value **stack; /* open containers, innermost last */
  size_t depth, cap;
  char *pending_key; /* key read in the innermost object, waiting for its value */
  char *err;
} builder;

static int builder_fail(builder *b, json_path *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int builder_fail(builder *b, json_path *path, const char *fmt, ...) {
  if (b->err == NULL) {
    va_list ap;
    va_start(ap, fmt);
    b->err = json_error_format(b->what, path ? path->buf : NULL, fmt, ap);
    va_end(ap);
  }
  return 0; /* yajl: cancel */
}

static int builder_oom(builder *b) {
  return builder_fail(b, NULL, "out of memory");
}

/* The path to the innermost value appended under the first n open containers. */
static void builder_path(builder *b, size_t n, json_path *path) {
  for (size_t i = 0; i < n; i++) {
    json_value *c = b->stack[i];
    if (c->type == JSON_ARRAY && c->u.array.len > 0)
      json_path_push_index(path, c->u.array.len - 1);
    else if (c->type == JSON_OBJECT && c->u.object.len > 0)
      json_path_push_key(path, c->u.object.keys[c->u.object.len - 1]);
  }
}

static bool grow(void **a, void **b, size_t elem, size_t *cap, size_t need) {
  if (need <= *cap)
    return true;
  size_t ncap = *cap ? *cap * 2 : 4;
  while (ncap < need)
    ncap *= 2;
  void *na = realloc(*a, ncap * elem);
  if (na == NULL)
    return false;
  *a = na;
  if (b != NULL) {
    void *nb = realloc(*b, ncap * elem);
    if (nb == NULL)
      return false; /* *a grew, which is harmless; cap stays so the next try regrows both */
    *b = nb;
  }
  *cap = ncap;
  return true;
}

/* Attaches v to the tree at once, so that every allocation is reachable from the root and a
 * cancelled parse frees everything with json_free(root). */
static int builder_append(builder *b, json_value *v) {
  if (b->depth == 0) {
    b->root = v;
    return 1;
  }
  json_value *top = b->stack[b->depth - 1];
  if (top->type == JSON_ARRAY) {
    if (!grow((void **)&top->u.array.items, NULL, sizeof(json_value *), &top->u.array.cap,
              top->u.array.len + 1)) {
      json_free(v);
      return builder_oom(b);
    }
    top->u.array.items[top->u.array.len++] = v;
  } else {
    if (!grow((void **)&top->u.object.keys, (void **)&top->u.object.values, sizeof(void *),
              &top->u.object.cap, top->u.object.len + 1)) {
      json_free(v);
      return builder_oom(b);
    }
    top->u.object.keys[top->u.object.len] = b->pending_key;
    top->u.object.values[top->u.object.len++] = v;
    b->pending_key = NULL;
  }
  return 1;
}

static json_value *value_new(json_type type) {
  json_value *v = calloc(1, sizeof *v);
  if (v)
    v->type = type;
  return v;
}

static int cb_null(void *ctx) {
  builder *b = ctx;
  json_value *v = value_new(JSON_NULL);
  return v ? builder_append(b, v) : builder_oom(b);
}

static int cb_boolean(void *ctx, int boolean) {
  builder *b = ctx;
  json_value *v = value_new(JSON_BOOL);
  if (v == NULL)
    return builder_oom(b);
  v->u.boolean = boolean != 0;
  return builder_append(b, v);
}

static json_value *text_value(json_type type, const char *s, size_t len) {
  json_value *v = value_new(type);
  if (v == NULL)
    return NULL;
  v->u.str.text = malloc(len + 1);
  if (v->u.str.text == NULL) {
    free(v);
    return NULL;
  }
  memcpy(v->u.str.text, s, len);
  v->u.str.text[len] = '\0';
  v->u.str.len = len;
  return v;
}

/* yajl's own check lets overlong forms (C0 80), UTF-16 surrogates and code points above U+10FFFF
 * through; this one follows RFC 3629. */
static bool utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (len > n - i)
      return false;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
      return false;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))
      return false;
    i += len;
  }
  return true;
}

static int cb_number(void *ctx, const char *s, size_t len) {
  builder *b = ctx;
  json_value *v = text_value(JSON_NUMBER, s, len);
  return v ? builder_append(b, v) : builder_oom(b);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len) {
  builder *b = ctx;
  json_value *v = text_value(JSON_STRING, (const char *)s, len);
  if (v == NULL)
    return builder_oom(b);
  if (!builder_append(b, v))
    return 0;
  /* a C string would silently end at an escaped \u0000: "/ok\u0000/../../etc" */
  bool has_nul = memchr(s, '\0', len) != NULL;
  if (has_nul || !utf8_valid(s, len)) {
    json_path path = {0};
    builder_path(b, b->depth, &path);
    builder_fail(b, &path,
                 has_nul ? "string contains a NUL character (\\u0000)"
                         : "string is not valid UTF-8");
    json_path_free(&path);
    return 0;
  }
  return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len) {
  builder *b = ctx;
  if (memchr(s, '\0', len) != NULL) {
    json_path path = {0};
    builder_path(b, b->depth, &path);
    builder_fail(b, &path, "object key contains a NUL character (\\u0000)");
    json_path_free(&path);
    return 0;
  }
  if (!utf8_valid(s, len)) {
    json_path path = {0};
    builder_path(b, b->depth, &path);
    builder_fail(b, &path, "object key is not valid UTF-8");
    json_path_free(&path);
    return 0;
  }
  free(b->pending_key);
  b->pending_key = malloc(len + 1);
  if (b->pending_key == NULL)
    return builder_oom(b);
  memcpy(b->pending_key, s, len);
  b->pending_key[len] = '\0';
  return 1;
}

static int open_container(builder *b, json_type type) {
  if (b->depth >= JSON_MAX_DEPTH)
    return builder_fail(b, NULL, "JSON nesting deeper than %d levels of arrays/objects",
                        JSON_MAX_DEPTH);
  json_value *v = value_new(type);
  if (v == NULL)
    return builder_oom(b);
  if (!builder_append(b, v))
    return 0;
  if (!grow((void **)&b->stack, NULL, sizeof(json_value *), &b->cap, b->depth + 1))
    return builder_oom(b);
  b->stack[b->depth++] = v;
  return 1;
}

static int cb_start_map(void *ctx) {
  return open_container(ctx, JSON_OBJECT);
}

static int cb_start_array(void *ctx) {
  return open_container(ctx, JSON_ARRAY);
}

static int cb_end_array(void *ctx) {
  builder *b = ctx;
  b->depth--;
  return 1;
}

typedef struct {
  const char *key;
  size_t index;
} key_ref;

static int key_ref_cmp(const void *a, const void *b) {
  const key_ref *x = a, *y = b;
  int r = strcmp(x->key, y->key);
  if (r != 0)
    return r;
  return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

/* Makes the keys of the innermost object unique (the last value wins), or fails when the document
 * is strict. Sorting keeps this O(n log n) for objects with many keys (annotations, sysctl). */
static int dedupe_object(builder *b) {
  json_value *o = b->stack[b->depth - 1];
  size_t n = o->u.object.len;
  if (n < 2)
    return 1;
  bool small_drop[16] = {false};
  bool *drop = small_drop;
  bool any = false;
  const char *dup_key = NULL;
  if (n <= 16) {
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n && !drop[i]; j++)
        if (strcmp(o->u.object.keys[i], o->u.object.keys[j]) == 0) {
          drop[i] = true;
          if (!any)
            dup_key = o->u.object.keys[i];
          any = true;
        }
  } else {
    key_ref *refs = malloc(n * sizeof *refs);
    if (refs == NULL)
      return builder_oom(b);
    for (size_t i = 0; i < n; i++)
      refs[i] = (key_ref){o->u.object.keys[i], i};
    qsort(refs, n, sizeof *refs, key_ref_cmp);
    for (size_t i = 0; i + 1 < n; i++)
      if (strcmp(refs[i].key, refs[i + 1].key) == 0) {
        if (!any) {
          drop = calloc(n, sizeof *drop);
          if (drop == NULL) {
            free(refs);
            return builder_oom(b);
          }
          dup_key = refs[i].key;
        }
        any = true;
        drop[refs[i].index] = true;
      }
    free(refs);
  }
  int ret = 1;
  if (any && b->reject_duplicate_keys) {
    json_path path = {0};
    builder_path(b, b->depth - 1, &path);
    json_path_push_key(&path, dup_key);
    ret = builder_fail(b, &path, "duplicate key");
    json_path_free(&path);
  } else if (any) {
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      if (drop[i]) {
        free(o->u.object.keys[i]);
        json_free(o->u.object.values[i]);
        continue;
      }
      o->u.object.keys[w] = o->u.object.keys[i];
      o->u.object.values[w++] = o->u.object.values[i];
    }
    o->u.object.len = w;
  }
  if (drop != small_drop)
    free(drop);
  return ret;
}

static int cb_end_map(void *ctx) {
  builder *b = ctx;
  if (!dedupe_object(b))
    return 0;
  b->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number, /* raw text: integers are converted exactly later */
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* yajl's message ("lexical error: invalid char in json text.\n") as one line with a position. */
static char *yajl_message(yajl_handle h, const char *what, const char *text, size_t len,
                          size_t offset) {
  unsigned char *raw = yajl_get_error(h, 0, (const unsigned char *)text, len);
  char msg[256];
  snprintf(msg, sizeof msg, "%s", raw ? (const char *)raw : "parse error");
  if (raw)
    yajl_free_error(h, raw);
  size_t n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
    msg[--n] = '\0';
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < len; i++) {
    if (text[i] == '\n') {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return error_make(what, NULL, "invalid JSON at line %zu, column %zu: %s", line, column, msg);
}

int json_parse(const char *text, size_t len, const char *what, const json_parse_options *opts,
               json_value **out, char **err) {
  *out = NULL;
  *err = NULL;
  if (len > JSON_MAX_SIZE) {
    *err = error_make(what, NULL, "document larger than %u bytes", JSON_MAX_SIZE);
    return -1;
  }
  size_t first = 0;
  while (first < len &&
         (text[first] == ' ' || text[first] == '\t' || text[first] == '\n' || text[first] == '\r'))
    first++;
  if (first == len) {
    *err = error_make(what, NULL, "empty document: expected JSON");
    return -1;
  }

  builder b = {.what = what, .reject_duplicate_keys = opts && opts->reject_duplicate_keys};
  yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
  if (h == NULL) {
    *err = error_make(what, NULL, "out of memory");
    return -1;
  }
  /* yajl's defaults are what we want: no comments, strings validated as UTF-8, one value, no
   * trailing garbage, no partial values. */
  yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
  size_t offset = yajl_get_bytes_consumed(h);
  if (offset > 0)
    offset--; /* the count includes the offending byte */
  if (st == yajl_status_ok) {
    st = yajl_complete_parse(h);
    offset = len;
  }
  int ret = 0;
  if (st == yajl_status_client_canceled) {
    *err = b.err ? b.err : error_make(what, NULL, "parse cancelled");
    b.err = NULL;
    ret = -1;
  } else if (st != yajl_status_ok) {
    *err = yajl_message(h, what, text, len, offset);
    ret = -1;
  } else if (b.root == NULL) {
    *err = error_make(what, NULL, "empty document: expected JSON");
    ret = -1;
  }
  yajl_free(h);
  free(b.pending_key);
  free(b.stack);
  free(b.err);
  if (ret < 0) {
    json_free(b.root);
    return -1;
  }
  *out = b.root;
  return 0;
}
