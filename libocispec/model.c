/* The generic engine behind every oci.h document: see model.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "model.h"

#define AT(obj, off, T)  ((T *)((char *)(obj) + (off)))
#define CAT(obj, off, T) ((const T *)((const char *)(obj) + (off)))

/* --- errors ------------------------------------------------------------------------------------
 */

static int decode_vfail(decode_ctx *c, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static int decode_vfail(decode_ctx *c, const char *fmt, va_list ap) {
  if (c->err == NULL)
    c->err = json_error_format(c->what, c->path.buf, fmt, ap);
  return -1;
}

int decode_fail(decode_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  decode_vfail(c, fmt, ap);
  va_end(ap);
  return -1;
}

int decode_fail_at_key(decode_ctx *c, const char *key, const char *fmt, ...) {
  size_t old = json_path_push_key(&c->path, key);
  va_list ap;
  va_start(ap, fmt);
  decode_vfail(c, fmt, ap);
  va_end(ap);
  json_path_pop(&c->path, old);
  return -1;
}

int decode_fail_at_index(decode_ctx *c, size_t index, const char *key, const char *fmt, ...) {
  size_t old = json_path_push_index(&c->path, index);
  if (key != NULL)
    json_path_push_key(&c->path, key);
  va_list ap;
  va_start(ap, fmt);
  decode_vfail(c, fmt, ap);
  va_end(ap);
  json_path_pop(&c->path, old);
  return -1;
}

static const char *type_name(const json_value *v) {
  switch (v->type) {
  case JSON_NULL:
    return "null";
  case JSON_BOOL:
    return "a boolean";
  case JSON_NUMBER:
    return "a number";
  case JSON_STRING:
    return "a string";
  case JSON_ARRAY:
    return "an array";
  case JSON_OBJECT:
    return "an object";
  }
  return "?";
}

/* A number's text for a message, shortened. */
static const char *number_text(char *buf, size_t size, const char *text) {
  size_t n = strlen(text);
  if (n < size)
    return text;
  snprintf(buf, size, "%.*s...", (int)(size - 4), text);
  return buf;
}

/* --- scalars -----------------------------------------------------------------------------------
 */

static bool is_integer_text(const char *t) {
  return strpbrk(t, ".eE") == NULL;
}

static int parse_unsigned(decode_ctx *c, const json_value *v, uint64_t min, uint64_t max,
                          uint64_t *out) {
  char buf[48];
  if (v->type != JSON_NUMBER)
    return decode_fail(c, "expected an unsigned integer, got %s", type_name(v));
  const char *t = v->u.str.text;
  if (t[0] == '-' || !is_integer_text(t))
    return decode_fail(c, "expected an unsigned integer, got %s", number_text(buf, sizeof buf, t));
  errno = 0;
  char *end = NULL;
  unsigned long long x = strtoull(t, &end, 10);
  if (errno == ERANGE || end == t || *end != '\0' || x < min || x > max)
    return decode_fail(c, "value %s is out of range %" PRIu64 "..%" PRIu64,
                       number_text(buf, sizeof buf, t), min, max);
  *out = x;
  return 0;
}

static int parse_signed(decode_ctx *c, const json_value *v, int64_t min, int64_t max,
                        int64_t *out) {
  char buf[48];
  if (v->type != JSON_NUMBER)
    return decode_fail(c, "expected an integer, got %s", type_name(v));
  const char *t = v->u.str.text;
  if (!is_integer_text(t))
    return decode_fail(c, "expected an integer, got %s", number_text(buf, sizeof buf, t));
  errno = 0;
  char *end = NULL;
  long long x = strtoll(t, &end, 10);
  if (errno == ERANGE || end == t || *end != '\0' || x < min || x > max)
    return decode_fail(c, "value %s is out of range %" PRId64 "..%" PRId64,
                       number_text(buf, sizeof buf, t), min, max);
  *out = x;
  return 0;
}

static void natural_unsigned(field_kind k, uint64_t *min, uint64_t *max) {
  *min = 0;
  *max = k == FK_U16 || k == FK_U16_ARRAY   ? UINT16_MAX
         : k == FK_U32 || k == FK_U32_ARRAY ? UINT32_MAX
                                            : UINT64_MAX;
}

static void field_urange(const field_desc *f, uint64_t *min, uint64_t *max) {
  natural_unsigned(f->kind, min, max);
  if (f->ranged) {
    *min = f->umin;
    *max = f->umax;
  }
}

static void field_srange(const field_desc *f, int64_t *min, int64_t *max) {
  *min = f->kind == FK_I32 ? INT32_MIN : INT64_MIN;
  *max = f->kind == FK_I32 ? INT32_MAX : INT64_MAX;
  if (f->ranged) {
    *min = f->min;
    *max = f->max;
  }
}

static bool in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (strcmp(*list, s) == 0)
      return true;
  return false;
}

/* Checks a string value against the field's constraints; used for FK_STRING and strv entries. */
static int check_string(decode_ctx *c, const field_desc *f, const json_value *v, bool entry) {
  char q[96];
  if (v->type != JSON_STRING)
    return decode_fail(c, "expected a string, got %s", type_name(v));
  const char *s = v->u.str.text;
  if (!entry && (f->flags & F_NONEMPTY) && s[0] == '\0')
    return decode_fail(c, "must not be empty");
  if ((f->flags & F_ABSPATH) && s[0] != '/')
    return decode_fail(c, "must be an absolute path, got %s", json_quote(q, sizeof q, s));
  if (f->values != NULL && !in_list(f->values, s))
    return decode_fail(c, "unknown %s %s", f->values_what ? f->values_what : "value",
                       json_quote(q, sizeof q, s));
  return 0;
}

static int oom(decode_ctx *c) {
  return decode_fail(c, "out of memory");
}

static int decode_strv(decode_ctx *c, const field_desc *f, const json_value *v, oci_strv *out) {
  if (v->type != JSON_ARRAY)
    return decode_fail(c, "expected an array of strings, got %s", type_name(v));
  size_t n = v->u.array.len;
  if ((f->flags & F_NONEMPTY) && n == 0)
    return decode_fail(c, "must have at least one entry");
  /* NULL-terminated, so that e.g. process.args.items can go to execve as it is */
  out->items = calloc(n + 1, sizeof(char *));
  if (out->items == NULL)
    return oom(c);
  for (size_t i = 0; i < n; i++) {
    size_t old = json_path_push_index(&c->path, i);
    int r = check_string(c, f, v->u.array.items[i], true);
    json_path_pop(&c->path, old);
    if (r < 0)
      return r;
    out->items[i] = strdup(v->u.array.items[i]->u.str.text);
    if (out->items[i] == NULL)
      return oom(c);
    out->len = i + 1;
  }
  return 0;
}

static int decode_map(decode_ctx *c, const json_value *v, oci_map *out) {
  if (v->type != JSON_OBJECT)
    return decode_fail(c, "expected an object of strings, got %s", type_name(v));
  size_t n = v->u.object.len;
  if (n == 0)
    return 0;
  out->keys = calloc(n, sizeof(char *));
  out->values = calloc(n, sizeof(char *));
  if (out->keys == NULL || out->values == NULL)
    return oom(c);
  for (size_t i = 0; i < n; i++) {
    const json_value *val = v->u.object.values[i];
    if (val->type != JSON_STRING)
      return decode_fail_at_key(c, v->u.object.keys[i], "expected a string, got %s",
                                type_name(val));
    out->keys[i] = strdup(v->u.object.keys[i]);
    out->values[i] = strdup(val->u.str.text);
    out->len = i + 1; /* counted before the check, so that free releases both */
    if (out->keys[i] == NULL || out->values[i] == NULL)
      return oom(c);
  }
  return 0;
}

static int decode_int_array(decode_ctx *c, const field_desc *f, const json_value *v, void *obj) {
  if (v->type != JSON_ARRAY)
    return decode_fail(c, "expected an array of unsigned integers, got %s", type_name(v));
  size_t n = v->u.array.len;
  if ((f->flags & F_NONEMPTY) && n == 0)
    return decode_fail(c, "must have at least one entry");
  if (n == 0)
    return 0;
  size_t elem = f->kind == FK_U16_ARRAY ? sizeof(uint16_t) : sizeof(uint32_t);
  void *items = calloc(n, elem);
  if (items == NULL)
    return oom(c);
  *AT(obj, f->off, void *) = items;
  *AT(obj, f->count_off, size_t) = n;
  uint64_t min, max;
  field_urange(f, &min, &max);
  for (size_t i = 0; i < n; i++) {
    uint64_t x;
    size_t old = json_path_push_index(&c->path, i);
    int r = parse_unsigned(c, v->u.array.items[i], min, max, &x);
    json_path_pop(&c->path, old);
    if (r < 0)
      return r;
    if (f->kind == FK_U16_ARRAY)
      ((uint16_t *)items)[i] = (uint16_t)x;
    else
      ((uint32_t *)items)[i] = (uint32_t)x;
  }
  return 0;
}

static int decode_obj_array(decode_ctx *c, const field_desc *f, const json_value *v, void *obj) {
  if (v->type != JSON_ARRAY)
    return decode_fail(c, "expected an array of objects, got %s", type_name(v));
  size_t n = v->u.array.len;
  if ((f->flags & F_NONEMPTY) && n == 0)
    return decode_fail(c, "must have at least one entry");
  if (n == 0)
    return 0;
  char *items = calloc(n, f->sub->size);
  if (items == NULL)
    return oom(c);
  *AT(obj, f->off, void *) = items;
  *AT(obj, f->count_off, size_t) = n;
  for (size_t i = 0; i < n; i++) {
    size_t old = json_path_push_index(&c->path, i);
    int r = model_decode(c, f->sub, v->u.array.items[i], items + i * f->sub->size);
    json_path_pop(&c->path, old);
    if (r < 0)
      return r;
  }
  return 0;
}

static int decode_obj_map(decode_ctx *c, const field_desc *f, const json_value *v, void *obj) {
  if (v->type != JSON_OBJECT)
    return decode_fail(c, "expected an object, got %s", type_name(v));
  size_t n = v->u.object.len;
  if (n == 0)
    return 0;
  char *items = calloc(n, f->sub->size);
  if (items == NULL)
    return oom(c);
  *AT(obj, f->off, void *) = items;
  *AT(obj, f->count_off, size_t) = n;
  for (size_t i = 0; i < n; i++) {
    char *elem = items + i * f->sub->size;
    *AT(elem, f->key_off, char *) = strdup(v->u.object.keys[i]);
    if (*AT(elem, f->key_off, char *) == NULL)
      return oom(c);
    size_t old = json_path_push_key(&c->path, v->u.object.keys[i]);
    int r = model_decode(c, f->sub, v->u.object.values[i], elem);
    json_path_pop(&c->path, old);
    if (r < 0)
      return r;
  }
  return 0;
}

static int decode_field(decode_ctx *c, const field_desc *f, const json_value *v, void *obj) {
  uint64_t u = 0, umin, umax;
  int64_t s = 0, smin, smax;
  switch (f->kind) {
  case FK_STRING:
    if (check_string(c, f, v, false) < 0)
      return -1;
    *AT(obj, f->off, char *) = strdup(v->u.str.text);
    return *AT(obj, f->off, char *) ? 0 : oom(c);
  case FK_BOOL:
    if (v->type != JSON_BOOL)
      return decode_fail(c, "expected a boolean, got %s", type_name(v));
    *AT(obj, f->off, bool) = v->u.boolean;
    return 0;
  case FK_U64:
  case FK_U32:
  case FK_U16:
    field_urange(f, &umin, &umax);
    if (parse_unsigned(c, v, umin, umax, &u) < 0)
      return -1;
    if (f->kind == FK_U64)
      *AT(obj, f->off, uint64_t) = u;
    else if (f->kind == FK_U32)
      *AT(obj, f->off, uint32_t) = (uint32_t)u;
    else
      *AT(obj, f->off, uint16_t) = (uint16_t)u;
    return 0;
  case FK_I64:
  case FK_I32:
    field_srange(f, &smin, &smax);
    if (parse_signed(c, v, smin, smax, &s) < 0)
      return -1;
    if (f->kind == FK_I64)
      *AT(obj, f->off, int64_t) = s;
    else
      *AT(obj, f->off, int32_t) = (int32_t)s;
    return 0;
  case FK_DOUBLE: {
    if (v->type != JSON_NUMBER)
      return decode_fail(c, "expected a number, got %s", type_name(v));
    errno = 0;
    double d = strtod(v->u.str.text, NULL);
    if (errno == ERANGE || !isfinite(d))
      return decode_fail(c, "number out of range");
    *AT(obj, f->off, double) = d;
    return 0;
  }
  case FK_STRV:
    return decode_strv(c, f, v, AT(obj, f->off, oci_strv));
  case FK_MAP:
    return decode_map(c, v, AT(obj, f->off, oci_map));
  case FK_U32_ARRAY:
  case FK_U16_ARRAY:
    return decode_int_array(c, f, v, obj);
  case FK_OBJECT: {
    void *sub = calloc(1, f->sub->size);
    if (sub == NULL)
      return oom(c);
    *AT(obj, f->off, void *) = sub;
    return model_decode(c, f->sub, v, sub);
  }
  case FK_INLINE:
    return model_decode(c, f->sub, v, AT(obj, f->off, char));
  case FK_OBJ_ARRAY:
    return decode_obj_array(c, f, v, obj);
  case FK_OBJ_MAP:
    return decode_obj_map(c, f, v, obj);
  }
  return decode_fail(c, "internal error: unknown field kind");
}

/* Edit distance, to suggest the key meant by a misspelt one. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return SIZE_MAX;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

static int reject_unknown_keys(decode_ctx *c, const type_desc *d, const json_value *v) {
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *key = v->u.object.keys[i];
    const char *closest = NULL;
    size_t best = 3; /* suggest only close matches */
    bool known = false;
    for (size_t j = 0; j < d->n_fields && !known; j++) {
      if (strcmp(d->fields[j].key, key) == 0) {
        known = true;
        break;
      }
      size_t dist = edit_distance(key, d->fields[j].key);
      if (dist < best) {
        best = dist;
        closest = d->fields[j].key;
      }
    }
    if (known)
      continue;
    if (closest)
      return decode_fail_at_key(c, key, "unknown key (did you mean \"%s\"?)", closest);
    return decode_fail_at_key(c, key, "unknown key");
  }
  return 0;
}

int model_decode(decode_ctx *c, const type_desc *d, const json_value *v, void *obj) {
  if (v->type != JSON_OBJECT)
    return decode_fail(c, "expected an object, got %s", type_name(v));
  if (d->strict && reject_unknown_keys(c, d, v) < 0)
    return -1;
  for (size_t i = 0; i < d->n_fields; i++) {
    const field_desc *f = &d->fields[i];
    const json_value *fv = json_object_get(v, f->key);
    /* null means absent, as encoding/json (runc, containerd, podman) treats it */
    if (fv == NULL || fv->type == JSON_NULL) {
      if (f->flags & F_REQUIRED)
        return decode_fail_at_key(c, f->key, "required field missing");
      continue;
    }
    size_t old = json_path_push_key(&c->path, f->key);
    int r = decode_field(c, f, fv, obj);
    json_path_pop(&c->path, old);
    if (r < 0)
      return r;
    if (f->has_off)
      *AT(obj, f->has_off - 1, bool) = true;
  }
  if (d->validate)
    return d->validate(c, obj);
  return 0;
}

/* --- free --------------------------------------------------------------------------------------
 */

void model_free_fields(const type_desc *d, void *obj) {
  if (obj == NULL)
    return;
  for (size_t i = 0; i < d->n_fields; i++) {
    const field_desc *f = &d->fields[i];
    switch (f->kind) {
    case FK_STRING:
      free(*AT(obj, f->off, char *));
      *AT(obj, f->off, char *) = NULL;
      break;
    case FK_STRV:
      oci_strv_free(AT(obj, f->off, oci_strv));
      break;
    case FK_MAP:
      oci_map_free(AT(obj, f->off, oci_map));
      break;
    case FK_U32_ARRAY:
    case FK_U16_ARRAY:
      free(*AT(obj, f->off, void *));
      *AT(obj, f->off, void *) = NULL;
      *AT(obj, f->count_off, size_t) = 0;
      break;
    case FK_OBJECT: {
      void *sub = *AT(obj, f->off, void *);
      model_free_fields(f->sub, sub);
      free(sub);
      *AT(obj, f->off, void *) = NULL;
      break;
    }
    case FK_INLINE:
      model_free_fields(f->sub, AT(obj, f->off, char));
      break;
    case FK_OBJ_ARRAY:
    case FK_OBJ_MAP: {
      char *items = *AT(obj, f->off, char *);
      size_t n = *AT(obj, f->count_off, size_t);
      for (size_t j = 0; items && j < n; j++) {
        char *elem = items + j * f->sub->size;
        if (f->kind == FK_OBJ_MAP)
          free(*AT(elem, f->key_off, char *));
        model_free_fields(f->sub, elem);
      }
      free(items);
      *AT(obj, f->off, void *) = NULL;
      *AT(obj, f->count_off, size_t) = 0;
      break;
    }
    default:
      break;
    }
  }
}

/* --- equality ----------------------------------------------------------------------------------
 */

static bool str_equal(const char *a, const char *b) {
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp(a, b) == 0;
}

static bool strv_equal(const oci_strv *a, const oci_strv *b, bool presence) {
  if (a->len != b->len)
    return false;
  if (presence && (a->items == NULL) != (b->items == NULL))
    return false;
  for (size_t i = 0; i < a->len; i++)
    if (!str_equal(a->items[i], b->items[i]))
      return false;
  return true;
}

static bool field_equal(const field_desc *f, const void *a, const void *b) {
  if (f->has_off) {
    bool ha = *CAT(a, f->has_off - 1, bool), hb = *CAT(b, f->has_off - 1, bool);
    if (ha != hb)
      return false;
  }
  switch (f->kind) {
  case FK_STRING:
    return str_equal(*CAT(a, f->off, char *), *CAT(b, f->off, char *));
  case FK_BOOL:
    return *CAT(a, f->off, bool) == *CAT(b, f->off, bool);
  case FK_U64:
  case FK_I64:
    return *CAT(a, f->off, uint64_t) == *CAT(b, f->off, uint64_t);
  case FK_U32:
  case FK_I32:
    return *CAT(a, f->off, uint32_t) == *CAT(b, f->off, uint32_t);
  case FK_U16:
    return *CAT(a, f->off, uint16_t) == *CAT(b, f->off, uint16_t);
  case FK_DOUBLE:
    return *CAT(a, f->off, double) == *CAT(b, f->off, double);
  case FK_STRV:
    return strv_equal(CAT(a, f->off, oci_strv), CAT(b, f->off, oci_strv),
                      !(f->flags & F_OMIT_ZERO));
  case FK_MAP: {
    const oci_map *ma = CAT(a, f->off, oci_map), *mb = CAT(b, f->off, oci_map);
    if (ma->len != mb->len)
      return false;
    for (size_t i = 0; i < ma->len; i++)
      if (!str_equal(ma->keys[i], mb->keys[i]) || !str_equal(ma->values[i], mb->values[i]))
        return false;
    return true;
  }
  case FK_U32_ARRAY:
  case FK_U16_ARRAY: {
    size_t n = *CAT(a, f->count_off, size_t);
    if (n != *CAT(b, f->count_off, size_t))
      return false;
    size_t elem = f->kind == FK_U16_ARRAY ? sizeof(uint16_t) : sizeof(uint32_t);
    return n == 0 || memcmp(*CAT(a, f->off, void *), *CAT(b, f->off, void *), n * elem) == 0;
  }
  case FK_OBJECT: {
    const void *sa = *CAT(a, f->off, void *), *sb = *CAT(b, f->off, void *);
    if (sa == NULL || sb == NULL)
      return sa == sb;
    return model_equal(f->sub, sa, sb);
  }
  case FK_INLINE:
    return model_equal(f->sub, CAT(a, f->off, char), CAT(b, f->off, char));
  case FK_OBJ_ARRAY:
  case FK_OBJ_MAP: {
    size_t n = *CAT(a, f->count_off, size_t);
    if (n != *CAT(b, f->count_off, size_t))
      return false;
    const char *ia = *CAT(a, f->off, char *), *ib = *CAT(b, f->off, char *);
    for (size_t i = 0; i < n; i++) {
      const char *ea = ia + i * f->sub->size, *eb = ib + i * f->sub->size;
      if (f->kind == FK_OBJ_MAP &&
          !str_equal(*CAT(ea, f->key_off, char *), *CAT(eb, f->key_off, char *)))
        return false;
      if (!model_equal(f->sub, ea, eb))
        return false;
    }
    return true;
  }
  }
  return false;
}

bool model_equal(const type_desc *d, const void *a, const void *b) {
  for (size_t i = 0; i < d->n_fields; i++)
    if (!field_equal(&d->fields[i], a, b))
      return false;
  return true;
}

/* --- encoding ----------------------------------------------------------------------------------
 */

typedef struct {
  yajl_gen g;
  const char *what;
  json_path path;
  char *err;
} encode_ctx;

static int encode_fail(encode_ctx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int encode_fail(encode_ctx *e, const char *fmt, ...) {
  if (e->err == NULL) {
    va_list ap;
    va_start(ap, fmt);
    e->err = json_error_format(e->what, e->path.buf, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int gen_check(encode_ctx *e, yajl_gen_status st) {
  if (st == yajl_gen_status_ok)
    return 0;
  if (st == yajl_gen_invalid_string)
    return encode_fail(e, "string is not valid UTF-8");
  if (st == yajl_gen_invalid_number)
    return encode_fail(e, "number cannot be represented in JSON");
  return encode_fail(e, "cannot generate JSON (yajl_gen status %d)", (int)st);
}

static int gen_string(encode_ctx *e, const char *s) {
  return gen_check(e, yajl_gen_string(e->g, (const unsigned char *)s, strlen(s)));
}

static int gen_u64(encode_ctx *e, uint64_t x) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%" PRIu64, x);
  return gen_check(e, yajl_gen_number(e->g, buf, (size_t)n));
}

static int gen_i64(encode_ctx *e, int64_t x) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%" PRId64, x);
  return gen_check(e, yajl_gen_number(e->g, buf, (size_t)n));
}

/* The shortest text that reads back as the same double: canonical and exact. */
static int gen_double(encode_ctx *e, double d) {
  if (!isfinite(d))
    return encode_fail(e, "number is not finite");
  char buf[40];
  int n = 0;
  for (int prec = 1; prec <= 17; prec++) {
    n = snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  return gen_check(e, yajl_gen_number(e->g, buf, (size_t)n));
}

static int encode_object(encode_ctx *e, const type_desc *d, const void *obj);

static bool desc_has_content(const type_desc *d, const void *obj);

static bool field_present(const field_desc *f, const void *obj) {
  if (f->has_off && f->kind != FK_STRV)
    return *CAT(obj, f->has_off - 1, bool);
  bool required = (f->flags & F_REQUIRED) != 0;
  bool omit_zero = (f->flags & F_OMIT_ZERO) != 0;
  switch (f->kind) {
  case FK_STRING:
    return required || *CAT(obj, f->off, char *) != NULL;
  case FK_BOOL:
    return !omit_zero || *CAT(obj, f->off, bool);
  case FK_U64:
  case FK_I64:
    return !omit_zero || *CAT(obj, f->off, uint64_t) != 0;
  case FK_U32:
  case FK_I32:
    return !omit_zero || *CAT(obj, f->off, uint32_t) != 0;
  case FK_U16:
    return !omit_zero || *CAT(obj, f->off, uint16_t) != 0;
  case FK_DOUBLE:
    return !omit_zero || *CAT(obj, f->off, double) != 0;
  case FK_STRV: {
    const oci_strv *v = CAT(obj, f->off, oci_strv);
    if (required || (f->has_off && *CAT(obj, f->has_off - 1, bool)))
      return true;
    if (omit_zero)
      return v->len > 0;
    return v->items != NULL || v->len > 0;
  }
  case FK_MAP:
    return required || CAT(obj, f->off, oci_map)->len > 0;
  case FK_U32_ARRAY:
  case FK_U16_ARRAY:
  case FK_OBJ_ARRAY:
  case FK_OBJ_MAP:
    return required || *CAT(obj, f->count_off, size_t) > 0;
  case FK_OBJECT:
    return required || *CAT(obj, f->off, void *) != NULL;
  case FK_INLINE:
    return required || desc_has_content(f->sub, CAT(obj, f->off, char));
  }
  return false;
}

static bool desc_has_content(const type_desc *d, const void *obj) {
  for (size_t i = 0; i < d->n_fields; i++)
    if (field_present(&d->fields[i], obj))
      return true;
  return false;
}

static int encode_field(encode_ctx *e, const field_desc *f, const void *obj) {
  switch (f->kind) {
  case FK_STRING: {
    const char *s = *CAT(obj, f->off, char *);
    if (s == NULL)
      return encode_fail(e, "required field missing");
    return gen_string(e, s);
  }
  case FK_BOOL:
    return gen_check(e, yajl_gen_bool(e->g, *CAT(obj, f->off, bool)));
  case FK_U64:
    return gen_u64(e, *CAT(obj, f->off, uint64_t));
  case FK_U32:
    return gen_u64(e, *CAT(obj, f->off, uint32_t));
  case FK_U16:
    return gen_u64(e, *CAT(obj, f->off, uint16_t));
  case FK_I64:
    return gen_i64(e, *CAT(obj, f->off, int64_t));
  case FK_I32:
    return gen_i64(e, *CAT(obj, f->off, int32_t));
  case FK_DOUBLE:
    return gen_double(e, *CAT(obj, f->off, double));
  case FK_STRV: {
    const oci_strv *v = CAT(obj, f->off, oci_strv);
    if (gen_check(e, yajl_gen_array_open(e->g)) < 0)
      return -1;
    for (size_t i = 0; v->items && i < v->len; i++) {
      size_t old = json_path_push_index(&e->path, i);
      int r = v->items[i] ? gen_string(e, v->items[i]) : encode_fail(e, "NULL string");
      json_path_pop(&e->path, old);
      if (r < 0)
        return r;
    }
    return gen_check(e, yajl_gen_array_close(e->g));
  }
  case FK_MAP: {
    const oci_map *m = CAT(obj, f->off, oci_map);
    if (gen_check(e, yajl_gen_map_open(e->g)) < 0)
      return -1;
    for (size_t i = 0; i < m->len; i++) {
      if (m->keys[i] == NULL || m->values[i] == NULL)
        return encode_fail(e, "NULL key or value");
      size_t old = json_path_push_key(&e->path, m->keys[i]);
      int r = gen_string(e, m->keys[i]) < 0 ? -1 : gen_string(e, m->values[i]);
      json_path_pop(&e->path, old);
      if (r < 0)
        return r;
    }
    return gen_check(e, yajl_gen_map_close(e->g));
  }
  case FK_U32_ARRAY:
  case FK_U16_ARRAY: {
    size_t n = *CAT(obj, f->count_off, size_t);
    const void *items = *CAT(obj, f->off, void *);
    if (gen_check(e, yajl_gen_array_open(e->g)) < 0)
      return -1;
    for (size_t i = 0; items && i < n; i++) {
      uint64_t x =
          f->kind == FK_U16_ARRAY ? ((const uint16_t *)items)[i] : ((const uint32_t *)items)[i];
      if (gen_u64(e, x) < 0)
        return -1;
    }
    return gen_check(e, yajl_gen_array_close(e->g));
  }
  case FK_OBJECT: {
    const void *sub = *CAT(obj, f->off, void *);
    if (sub == NULL)
      return encode_fail(e, "required field missing");
    return encode_object(e, f->sub, sub);
  }
  case FK_INLINE:
    return encode_object(e, f->sub, CAT(obj, f->off, char));
  case FK_OBJ_ARRAY: {
    size_t n = *CAT(obj, f->count_off, size_t);
    const char *items = *CAT(obj, f->off, char *);
    if (gen_check(e, yajl_gen_array_open(e->g)) < 0)
      return -1;
    for (size_t i = 0; items && i < n; i++) {
      size_t old = json_path_push_index(&e->path, i);
      int r = encode_object(e, f->sub, items + i * f->sub->size);
      json_path_pop(&e->path, old);
      if (r < 0)
        return r;
    }
    return gen_check(e, yajl_gen_array_close(e->g));
  }
  case FK_OBJ_MAP: {
    size_t n = *CAT(obj, f->count_off, size_t);
    const char *items = *CAT(obj, f->off, char *);
    if (gen_check(e, yajl_gen_map_open(e->g)) < 0)
      return -1;
    for (size_t i = 0; items && i < n; i++) {
      const char *elem = items + i * f->sub->size;
      const char *key = *CAT(elem, f->key_off, char *);
      if (key == NULL)
        return encode_fail(e, "NULL key");
      size_t old = json_path_push_key(&e->path, key);
      int r = gen_string(e, key) < 0 ? -1 : encode_object(e, f->sub, elem);
      json_path_pop(&e->path, old);
      if (r < 0)
        return r;
    }
    return gen_check(e, yajl_gen_map_close(e->g));
  }
  }
  return encode_fail(e, "internal error: unknown field kind");
}

static int encode_object(encode_ctx *e, const type_desc *d, const void *obj) {
  if (gen_check(e, yajl_gen_map_open(e->g)) < 0)
    return -1;
  for (size_t i = 0; i < d->n_fields; i++) {
    const field_desc *f = &d->fields[i];
    if (!field_present(f, obj))
      continue;
    size_t old = json_path_push_key(&e->path, f->key);
    int r = gen_string(e, f->key) < 0 ? -1 : encode_field(e, f, obj);
    json_path_pop(&e->path, old);
    if (r < 0)
      return r;
  }
  return gen_check(e, yajl_gen_map_close(e->g));
}

/* Indents compact JSON with two spaces per level and writes empty containers as [] and {}
 * (yajl's beautifier leaves blank lines in them). */
static char *reindent(const char *in, size_t len) {
  size_t depth = 0, cap = len * 2 + 64, o = 0;
  char *out = malloc(cap);
  bool in_string = false, escaped = false;
  for (size_t i = 0; out != NULL && i < len; i++) {
    char ch = in[i];
    if (o + 2 * depth + 8 > cap) {
      cap = cap * 2 + 2 * depth + 8;
      char *n = realloc(out, cap);
      if (n == NULL) {
        free(out);
        return NULL;
      }
      out = n;
    }
    if (in_string) {
      out[o++] = ch;
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
      continue;
    }
    switch (ch) {
    case '"':
      in_string = true;
      out[o++] = ch;
      break;
    case '{':
    case '[':
      out[o++] = ch;
      if (i + 1 < len && (in[i + 1] == '}' || in[i + 1] == ']')) {
        out[o++] = in[++i];
        break;
      }
      depth++;
      out[o++] = '\n';
      for (size_t k = 0; k < depth; k++, o += 2)
        memcpy(out + o, "  ", 2);
      break;
    case '}':
    case ']':
      depth--;
      out[o++] = '\n';
      for (size_t k = 0; k < depth; k++, o += 2)
        memcpy(out + o, "  ", 2);
      out[o++] = ch;
      break;
    case ',':
      out[o++] = ',';
      out[o++] = '\n';
      for (size_t k = 0; k < depth; k++, o += 2)
        memcpy(out + o, "  ", 2);
      break;
    case ':':
      out[o++] = ':';
      out[o++] = ' ';
      break;
    default:
      out[o++] = ch;
      break;
    }
  }
  if (out != NULL) {
    out[o++] = '\n';
    out[o] = '\0';
  }
  return out;
}

char *model_serialize(const type_desc *d, const void *obj, const char *what, bool pretty,
                      char **err) {
  *err = NULL;
  if (obj == NULL) {
    *err = strdup("serialise: no document");
    return NULL;
  }
  encode_ctx e = {.what = what};
  e.g = yajl_gen_alloc(NULL);
  if (e.g == NULL) {
    *err = strdup("out of memory");
    return NULL;
  }
  yajl_gen_config(e.g, yajl_gen_validate_utf8, 1);
  char *out = NULL;
  if (encode_object(&e, d, obj) == 0) {
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(e.g, &buf, &len);
    if (pretty) {
      out = reindent((const char *)buf, len);
    } else if ((out = malloc(len + 1)) != NULL) {
      memcpy(out, buf, len);
      out[len] = '\0';
    }
    if (out == NULL)
      e.err = strdup("out of memory");
  }
  yajl_gen_free(e.g);
  json_path_free(&e.path);
  *err = e.err;
  return out;
}

int model_parse(const type_desc *d, const char *text, size_t len, const char *what,
                bool strict_json, void **out, char **err) {
  *out = NULL;
  *err = NULL;
  if (text == NULL) {
    text = "";
    len = 0;
  }
  json_parse_options opts = {.reject_duplicate_keys = strict_json};
  json_value *root = NULL;
  if (json_parse(text, len, what, &opts, &root, err) < 0)
    return -1;
  void *obj = calloc(1, d->size);
  if (obj == NULL) {
    json_free(root);
    *err = strdup("out of memory");
    return -1;
  }
  decode_ctx c = {.what = what};
  int r = model_decode(&c, d, root, obj);
  json_free(root);
  json_path_free(&c.path);
  if (r < 0) {
    model_free_fields(d, obj);
    free(obj);
    *err = c.err ? c.err : strdup("invalid document");
    return -1;
  }
  free(c.err);
  *out = obj;
  return 0;
}
