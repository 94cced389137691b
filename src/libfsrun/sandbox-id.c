/* The container id of a sandbox run (sandbox-id.h). */
#include "sandbox-id.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "sha256.h"
#include "utils.h"

static bool kept_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-';
}

static void append_encoded(struct strbuf *b, const char *s) {
  for (; s != NULL && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (kept_byte(c))
      sb_append(b, (const char *)&c, 1);
    else
      sb_printf(b, "_%02x", c);
  }
}

/* The longest start of an encoded part within max bytes that splits no `_HH`: a start ending in
 * `_` would make `_h` read as the separator `__` and a run beginning with `h`. */
static size_t token_cut(const char *enc, size_t max) {
  size_t at = 0;
  while (enc[at] != '\0') {
    size_t token = enc[at] == '_' ? 3 : 1;
    if (at + token > max)
      break;
    at += token;
  }
  return at;
}

/* sha256(TASK NUL RUN): the two parts cannot trade bytes either */
static void pair_digest(const char *task_id, const char *run_id, char hex[65]) {
  struct strbuf pair = {0};
  sb_puts(&pair, task_id != NULL ? task_id : "");
  sb_append(&pair, "", 1);
  sb_puts(&pair, run_id != NULL ? run_id : "");
  sha256_hex(pair.data, pair.len, hex);
  free(pair.data);
}

char *sandbox_id_stem(const char *task_id, const char *run_id) {
  struct strbuf task = {0}, run = {0}, b = {0};
  char hex[65];
  sb_puts(&task, ""); /* never NULL data, even for an empty part */
  sb_puts(&run, "");
  append_encoded(&task, task_id);
  append_encoded(&run, run_id);
  sb_puts(&b, "sandbox-");
  if (task.len + run.len <= SANDBOX_ID_PARTS_MAX) {
    sb_append(&b, task.data, task.len);
    sb_puts(&b, "__");
    sb_append(&b, run.data, run.len);
  } else {
    pair_digest(task_id, run_id, hex);
    sb_append(&b, task.data, token_cut(task.data, SANDBOX_ID_DIGEST_TASK));
    sb_printf(&b, "_h%.32s", hex);
  }
  free(task.data);
  free(run.data);
  return b.data;
}

char *sandbox_container_id(const char *task_id, const char *run_id, uint32_t rnd) {
  struct strbuf b = {0};
  char *stem;
  /* no ids: `sandbox-RANDOM`, as before (no `__`, so no other form's) */
  if ((task_id == NULL || *task_id == '\0') && (run_id == NULL || *run_id == '\0'))
    return xasprintf("sandbox-%08x", rnd);
  stem = sandbox_id_stem(task_id, run_id);
  sb_printf(&b, "%s__%08x", stem, rnd);
  free(stem);
  return b.data;
}
