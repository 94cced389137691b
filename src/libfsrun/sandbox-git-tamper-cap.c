/* The tamper list's order and bound (review25 C5). The list is capped at SANDBOX_GIT_MAX_REPORTED
 * entries (the `--json` result, the audit event and the adapter's buffers stay bounded), and the
 * nested-repository walk runs first: 64 nested repositories used to fill the list before any
 * `config:` entry was added, so a rewritten filter driver was neither named nor disarmed. So the
 * entries that name what hostGitArgs disarm (config, hooks, the standing ones, an unwalked top)
 * come first, every nested path after them (each gives the same four options), and a list that
 * had to leave anything out says so with SANDBOX_GIT_TAMPER_MORE, first: a `config:unread:` entry,
 * so hostGitArgs are "cannot disarm" (sandbox-git-disarm.c) and so is the adapter's reading. */
#include "sandbox-git.h"

#include <stdlib.h>
#include <string.h>

#include "utils.h"

static bool is_more(const char *entry) {
  return strcmp(entry, SANDBOX_GIT_TAMPER_MORE) == 0;
}

/* what the host's git would run or read: named before any nested path */
static bool names_config(const char *entry) {
  return strncmp(entry, "config:", 7) == 0 || strncmp(entry, "hooks:", 6) == 0 ||
         strcmp(entry, SANDBOX_GIT_TAMPER_UNWALKED) == 0;
}

/* the entries of v of one kind (config first or nested), in v's order, while room is left */
static void take(char **v, bool config, size_t room, char ***out, size_t *n) {
  for (char **p = v; *p != NULL && *n < room; p++)
    if (!is_more(*p) && names_config(*p) == config)
      sandbox_git_strv_push(out, n, *p);
}

void sandbox_git_tamper_settle(char ***tamper) {
  char **v = *tamper, **out = NULL;
  size_t total = 0, n = 0;
  bool more = false;
  if (v == NULL)
    return;
  for (; v[total] != NULL; total++)
    more = more || is_more(v[total]); /* the walk's own cut, or an earlier settle's */
  more = more || total > SANDBOX_GIT_MAX_REPORTED;
  if (more)
    sandbox_git_strv_push(&out, &n, SANDBOX_GIT_TAMPER_MORE);
  take(v, true, SANDBOX_GIT_MAX_REPORTED, &out, &n);
  take(v, false, SANDBOX_GIT_MAX_REPORTED, &out, &n);
  sandbox_git_strv_free(v);
  *tamper = out != NULL ? out : xmalloc0(sizeof(char *)); /* an empty list stays one, not NULL */
}
