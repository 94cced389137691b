/* Table-driven decoding, encoding, freeing and comparing of the oci.h structs.
 *
 * Each struct is described once by a type_desc (its JSON keys, where each value lives in the C
 * struct, its type, range and allowed values); one generic engine walks the description for all
 * four operations, so that the parser, the serialiser, free and the round-trip check can never
 * disagree about a field. Nothing here recurses over input data: the recursion follows the static
 * descriptions, a handful of levels deep. */
#ifndef FSRUN_OCI_MODEL_H
#define FSRUN_OCI_MODEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "oci.h"

typedef enum {
  FK_STRING,    /* char * */
  FK_BOOL,      /* bool */
  FK_U64,       /* uint64_t */
  FK_U32,       /* uint32_t */
  FK_U16,       /* uint16_t */
  FK_I64,       /* int64_t */
  FK_I32,       /* int32_t (and int) */
  FK_DOUBLE,    /* double */
  FK_STRV,      /* oci_strv */
  FK_MAP,       /* oci_map of string -> string */
  FK_U32_ARRAY, /* uint32_t *, size_t count at count_off */
  FK_U16_ARRAY, /* uint16_t *, size_t count at count_off */
  FK_OBJECT,    /* T * (NULL when absent) described by sub */
  FK_INLINE,    /* a JSON object whose fields live in this same C struct (at off) */
  FK_OBJ_ARRAY, /* T *, size_t count at count_off */
  FK_OBJ_MAP,   /* JSON object name -> object, as T * + count; the name goes to key_off in T */
} field_kind;

#define F_REQUIRED 0x1u /* absent (or null) is an error */
#define F_NONEMPTY 0x2u /* strings: not ""; arrays: at least one entry */
#define F_ABSPATH  0x4u /* strings (and strv entries): must start with '/' */
#define F_OMIT_ZERO                                                                                \
  0x8u /* output: scalars without a has_ flag are left out when 0/false; strv                      \
          fields are left out when empty (and empty == absent) */

typedef struct type_desc type_desc;
typedef struct decode_ctx decode_ctx;

typedef struct {
  const char *key;
  field_kind kind;
  size_t off;
  size_t has_off; /* offsetof(has_ flag) + 1; 0 when the field has none */
  size_t count_off;
  unsigned flags;
  bool ranged;               /* the limits below apply (otherwise: the C type's range) */
  int64_t min;               /* signed kinds */
  int64_t max;               /* signed kinds */
  uint64_t umin;             /* unsigned kinds */
  uint64_t umax;             /* unsigned kinds */
  const char *const *values; /* allowed strings (NULL-terminated) for FK_STRING / FK_STRV */
  const char *values_what;   /* "namespace type": the message says `unknown namespace type "x"` */
  const type_desc *sub;
  size_t key_off; /* FK_OBJ_MAP */
} field_desc;

struct type_desc {
  const char *name;
  size_t size;
  const field_desc *fields;
  size_t n_fields;
  bool strict; /* unknown keys are errors */
  /* shape checks across fields (duplicates, conditional requirements); the path is the object's */
  int (*validate)(decode_ctx *c, const void *obj);
};

#define HAS(T, m) (offsetof(T, m) + 1)
#define FIELD(key_, kind_, T, m, ...)                                                              \
  { .key = key_, .kind = kind_, .off = offsetof(T, m), __VA_ARGS__ }
#define COUNT(T, m)        .count_off = offsetof(T, m)
#define URANGE(a, b)       .ranged = true, .umin = (a), .umax = (b)
#define SRANGE(a, b)       .ranged = true, .min = (a), .max = (b)
#define ONE_OF(list, what) .values = (list), .values_what = (what)
#define DESC(T, fields_, ...)                                                                      \
  {                                                                                                \
    .name = #T, .size = sizeof(T), .fields = fields_,                                              \
    .n_fields = sizeof(fields_) / sizeof((fields_)[0]), __VA_ARGS__                                \
  }

struct decode_ctx {
  const char *what;
  json_path path;
  char *err;
};

/* Records the first error ("WHAT: PATH: MESSAGE") and returns -1. */
int decode_fail(decode_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with key (or index) appended to the current path for this message only. */
int decode_fail_at_key(decode_ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int decode_fail_at_index(decode_ctx *c, size_t index, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Decodes a JSON object into obj (zeroed by the caller) following d. On error obj may be half
 * filled and must still be released with model_free_fields. */
int model_decode(decode_ctx *c, const type_desc *d, const json_value *v, void *obj);
void model_free_fields(const type_desc *d, void *obj);
bool model_equal(const type_desc *d, const void *a, const void *b);
/* Deep copy of obj into out (zeroed by the caller); false on allocation failure (out must then be
 * released with model_free_fields). */
bool model_copy(const type_desc *d, const void *obj, void *out);

/* Parses text as a document of type d: allocates *out (d->size bytes). */
int model_parse(const type_desc *d, const char *text, size_t len, const char *what,
                bool strict_json, void **out, char **err);
/* Serialises obj following d. pretty: two-space indentation and a final newline. */
char *model_serialize(const type_desc *d, const void *obj, const char *what, bool pretty,
                      char **err);

/* the descriptions, shared between files */
extern const type_desc oci_process_desc;
extern const type_desc oci_resources_desc;
extern const type_desc oci_seccomp_desc;
extern const type_desc oci_id_mapping_desc;
extern const type_desc oci_config_desc;
extern const type_desc oci_state_desc;
extern const type_desc oci_features_desc;
extern const type_desc oci_policy_desc;
extern const type_desc oci_policy_settings_desc;

/* allowed values shared by several descriptions */
extern const char *const oci_namespace_types[];
extern const char *const oci_rlimit_types[];
extern const char *const oci_seccomp_actions[];
extern const char *const oci_seccomp_archs[];
extern const char *const oci_seccomp_flags[];
extern const char *const oci_seccomp_operators[];

#endif
