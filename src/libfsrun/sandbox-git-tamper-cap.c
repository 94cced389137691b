/* The tamper list's order and bound (review25 C5). The list is capped at SANDBOX_GIT_MAX_REPORTED
 * entries and SANDBOX_GIT_REPORTED_BYTES as JSON (the `--json` result, the audit event and the
 * adapter's buffers stay bounded: the names are the run's, and a control character costs 6 bytes
 * escaped), and the nested-repository walk runs first: 64 nested repositories used to fill the
 * list before any `config:` entry was added, so a rewritten filter driver was neither named nor
 * disarmed. So the entries that name what hostGitArgs disarm (config, hooks, the standing ones, an
 * unwalked top) come first, every nested path after them (each gives the same four options), and a
 * list that had to leave anything out says so with SANDBOX_GIT_TAMPER_MORE, first: a
 * `config:unread:` entry, so hostGitArgs are "cannot disarm" (sandbox-git-disarm.c) and so is the
 * adapter's reading. */
#include "sandbox-git.h"

#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "utils.h"

static bool is_more(const char *entry) {
  return strcmp(entry, SANDBOX_GIT_TAMPER_MORE) == 0;
}

/* what the host's git would run or read: named before any nested path */
static bool names_config(const char *entry) {
  return strncmp(entry, "config:", 7) == 0 || strncmp(entry, "hooks:", 6) == 0 ||
         strcmp(entry, SANDBOX_GIT_TAMPER_UNWALKED) == 0;
}

size_t sandbox_git_reported_size(const char *entry) {
  return json_string_size(entry) + 1; /* and its comma */
}

bool sandbox_git_room_take(struct room_left *r, const char *entry) {
  size_t size = sandbox_git_reported_size(entry);
  if (r->entries == 0 || size > r->bytes)
    return false;
  r->entries--;
  r->bytes -= size;
  return true;
}

/* the entries of v of one kind (config first or nested), in v's order, each that fits in r (an
 * entry too large for what is left is passed over, a shorter one after it is not); false when any
 * was left out */
static bool take(char **v, bool config, struct room_left *r, char ***out, size_t *n) {
  bool all = true;
  for (char **p = v; *p != NULL; p++) {
    if (is_more(*p) || names_config(*p) != config)
      continue;
    if (sandbox_git_room_take(r, *p))
      sandbox_git_strv_push(out, n, *p);
    else
      all = false;
  }
  return all;
}

/* v's entries, config first, within the list's bounds, after more when more is not NULL (its
 * room taken first); false when any was left out */
static bool fill(char **v, const char *more, char ***out) {
  struct room_left r = {SANDBOX_GIT_MAX_REPORTED, SANDBOX_GIT_REPORTED_BYTES};
  size_t n = 0;
  bool all;
  if (more != NULL) {
    (void)sandbox_git_room_take(&r, more);
    sandbox_git_strv_push(out, &n, more);
  }
  all = take(v, true, &r, out, &n);
  return take(v, false, &r, out, &n) && all;
}

void sandbox_git_tamper_settle(char ***tamper) {
  char **v = *tamper, **out = NULL;
  bool more = false;
  if (v == NULL)
    return;
  for (char **p = v; *p != NULL; p++)
    more = more || is_more(*p); /* the walk's own cut, or an earlier settle's */
  if (more || !fill(v, NULL, &out)) {
    sandbox_git_strv_free(out);
    out = NULL;
    fill(v, SANDBOX_GIT_TAMPER_MORE, &out);
  }
  sandbox_git_strv_free(v);
  *tamper = out != NULL ? out : xmalloc0(sizeof(char *)); /* an empty list stays one, not NULL */
}
