#include "bind-identity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "json.h"
#include "mounts.h"
#include "sandbox.h"
#include "utils.h"

static bool carries_checks(const oci_mount *m) {
  return m->has_source_id || m->needs_source_id || m->dest_no_symlinks || m->covers[0] != NULL ||
         m->overlay_view;
}

/* mounts[i]'s checks as the annotation's JSON text (caller frees) */
static char *checks_json(const oci_mount *m) {
  struct strbuf b = {0};
  sb_puts(&b, "{\"destination\":");
  sb_json_string(&b, m->destination, strlen(m->destination));
  /* needs_source_id without an identity cannot be met: 0:0 is no object's */
  if (m->has_source_id || m->needs_source_id)
    sb_printf(&b, ",\"sourceId\":\"%" PRIu64 ":%" PRIu64 "\"", m->has_source_id ? m->source_dev : 0,
              m->has_source_id ? m->source_ino : 0);
  if (m->dest_no_symlinks)
    sb_puts(&b, ",\"destinationNoSymlinks\":true");
  if (m->overlay_view)
    sb_puts(&b, ",\"overlayView\":true");
  if (m->covers[0] != NULL) {
    sb_puts(&b, ",\"covers\":[");
    for (size_t k = 0; k < OCI_MOUNT_MAX_COVERS && m->covers[k]; k++) {
      sb_puts(&b, k ? "," : "");
      sb_json_string(&b, m->covers[k], strlen(m->covers[k]));
    }
    sb_puts(&b, "]");
  }
  sb_puts(&b, "}");
  return b.data;
}

int bind_checks_to_annotations(oci_config *c, fsrun_error_t *err) {
  for (size_t i = 0; i < c->n_mounts; i++) {
    const oci_mount *m = &c->mounts[i];
    cleanup_free char *key = NULL;
    cleanup_free char *value = NULL;
    if (!carries_checks(m))
      continue;
    /* covers ride on a bind only; another mount's are entries of their own (sandbox.h) */
    if (m->covers[0] != NULL &&
        (m->cover_source == NULL || strcmp(m->cover_source, SANDBOX_UNREADABLE_FILE) != 0))
      return fsrun_error_make(err, 0, "mounts[%zu]: covers of another file than `%s`", i,
                              SANDBOX_UNREADABLE_FILE);
    key = xasprintf(BIND_CHECKS_ANNOTATION_PREFIX "%zu", i);
    value = checks_json(m);
    if (oci_map_set(&c->annotations, key, value) < 0)
      return fsrun_error_make(err, ENOMEM, "annotations[\"%s\"]", key);
  }
  return 0;
}

/* --- create ---------------------------------------------------------------------------------- */

/* N of "run.fsrun.mounts.N": digits only, no leading zero, below n */
static int annotation_index(const char *key, size_t n, size_t *index) {
  const char *digits = key + strlen(BIND_CHECKS_ANNOTATION_PREFIX);
  char *end = NULL;
  unsigned long long v;
  if (digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && digits[1] != '\0'))
    return -1;
  errno = 0;
  v = strtoull(digits, &end, 10);
  if (errno != 0 || *end != '\0' || v >= n)
    return -1;
  *index = (size_t)v;
  return 0;
}

/* "DEV:INO", both decimal */
static int parse_source_id(const char *text, uint64_t *dev, uint64_t *ino) {
  char *end = NULL;
  if (text[0] < '0' || text[0] > '9')
    return -1;
  errno = 0;
  *dev = strtoull(text, &end, 10);
  if (errno != 0 || *end != ':' || end[1] < '0' || end[1] > '9')
    return -1;
  *ino = strtoull(end + 1, &end, 10);
  return errno != 0 || *end != '\0' ? -1 : 0;
}

static int apply_source_id(oci_mount *m, const json_value *v, const char *what,
                           fsrun_error_t *err) {
  uint64_t dev, ino;
  if (v->type != JSON_STRING || parse_source_id(v->u.str.text, &dev, &ino) < 0)
    return fsrun_error_make(err, 0, "%s: sourceId: not \"DEVICE:INODE\" (decimal)", what);
  if (m->has_source_id && (m->source_dev != dev || m->source_ino != ino))
    return fsrun_error_make(err, 0, "%s: sourceId: differs from the identity the mount has", what);
  m->has_source_id = true;
  m->needs_source_id = true;
  m->source_dev = dev;
  m->source_ino = ino;
  return 0;
}

/* each cover one of the secret files' places (sandbox.h), the cover file the bundle's */
static int apply_covers(oci_mount *m, const json_value *v, const char *what, fsrun_error_t *err) {
  size_t n = 0;
  if (v->type != JSON_ARRAY)
    return fsrun_error_make(err, 0, "%s: covers: not an array", what);
  if (m->cover_source != NULL && strcmp(m->cover_source, SANDBOX_UNREADABLE_FILE) != 0)
    return fsrun_error_make(err, 0, "%s: covers: the mount has covers of another file", what);
  while (n < OCI_MOUNT_MAX_COVERS && m->covers[n] != NULL)
    n++;
  for (size_t k = 0; k < v->u.array.len; k++) {
    const json_value *item = v->u.array.items[k];
    const char *place = item->type == JSON_STRING ? sandbox_secret_cover(item->u.str.text) : NULL;
    bool have = false;
    if (place == NULL)
      return fsrun_error_make(err, 0, "%s: covers[%zu]: not the place of a secret file", what, k);
    for (size_t j = 0; j < n; j++)
      have = have || strcmp(m->covers[j], place) == 0;
    if (have)
      continue;
    if (n == OCI_MOUNT_MAX_COVERS)
      return fsrun_error_make(err, 0, "%s: covers: more than %d", what, OCI_MOUNT_MAX_COVERS);
    m->covers[n++] = place;
    m->cover_source = SANDBOX_UNREADABLE_FILE;
  }
  return 0;
}

static int apply_key(oci_mount *m, const char *key, const json_value *v, const char *what,
                     fsrun_error_t *err) {
  if (strcmp(key, "destination") == 0)
    return 0; /* checked first */
  if (strcmp(key, "sourceId") == 0)
    return apply_source_id(m, v, what, err);
  if (strcmp(key, "covers") == 0)
    return apply_covers(m, v, what, err);
  if (strcmp(key, "destinationNoSymlinks") == 0) {
    if (v->type != JSON_BOOL || !v->u.boolean)
      return fsrun_error_make(err, 0, "%s: destinationNoSymlinks: only true is allowed", what);
    m->dest_no_symlinks = true;
    return 0;
  }
  if (strcmp(key, "overlayView") == 0) {
    if (v->type != JSON_BOOL || !v->u.boolean)
      return fsrun_error_make(err, 0, "%s: overlayView: only true is allowed", what);
    m->overlay_view = true;
    return 0;
  }
  return fsrun_error_make(err, 0,
                          "%s: unknown key `%s` (known: destination, sourceId, "
                          "destinationNoSymlinks, covers, overlayView)",
                          what, key);
}

static int apply_annotation(oci_config *c, const char *key, const char *value, fsrun_error_t *err) {
  cleanup_free char *what = xasprintf("annotations[\"%s\"]", key);
  const json_parse_options opts = {.reject_duplicate_keys = true};
  const json_value *dest;
  json_value *v = NULL;
  char quoted[256];
  char *msg = NULL;
  size_t index;
  oci_mount *m;
  int r = 0;

  if (annotation_index(key, c->n_mounts, &index) < 0)
    return fsrun_error_make(err, 0, "%s: names no entry of mounts (%zu of them)", what,
                            c->n_mounts);
  m = &c->mounts[index];
  if (json_parse(value, strlen(value), what, &opts, &v, &msg) < 0)
    return fsrun_error_take(err, 0, msg);
  dest = v->type == JSON_OBJECT ? json_object_get(v, "destination") : NULL;
  if (dest == NULL || dest->type != JSON_STRING)
    r = fsrun_error_make(err, 0, "%s: not an object with a string `destination`", what);
  else if (m->destination == NULL || strcmp(dest->u.str.text, m->destination) != 0)
    r = fsrun_error_make(err, 0, "%s: destination %s is not that of mounts[%zu]", what,
                         json_quote(quoted, sizeof(quoted), dest->u.str.text), index);
  else if (!mount_entry_is_bind(m))
    r = fsrun_error_make(err, 0, "%s: mounts[%zu] is not a bind mount", what, index);
  for (size_t k = 0; r == 0 && k < v->u.object.len; k++)
    r = apply_key(m, v->u.object.keys[k], v->u.object.values[k], what, err);
  json_free(v);
  return r;
}

int bind_checks_from_annotations(oci_config *c, fsrun_error_t *err) {
  const oci_map *a = &c->annotations;
  for (size_t i = 0; i < a->len; i++)
    if (strncmp(a->keys[i], BIND_CHECKS_ANNOTATION_PREFIX, strlen(BIND_CHECKS_ANNOTATION_PREFIX)) ==
            0 &&
        apply_annotation(c, a->keys[i], a->values[i], err) < 0)
      return fsrun_error_code(err);
  return 0;
}
