/* refs/stash after a sandbox run (docs/sandbox.md, "Git"). The stash is the repository's, shared by
 * the main checkout and every linked worktree: a run in a task worktree keeps its stash to itself
 * (its changes are reported, never applied), and a run in the main checkout may only push on top,
 * so that `git stash clear`, `drop` or `pop` inside never takes the user's entries away. */
#include "sandbox-git.h"

#include <string.h>

/* the reflog line's old (field 0) or new (field 1) id, when it is one */
static bool line_id(const char *line, int field, char out[65]) {
  const char *p = line;
  size_t n;
  if (field == 1) {
    p = strchr(line, ' ');
    if (p == NULL)
      return false;
    p++;
  }
  n = strcspn(p, " \n");
  if ((n != 40 && n != 64) || strspn(p, "0123456789abcdef") < n)
    return false;
  memcpy(out, p, n);
  out[n] = '\0';
  return true;
}

/* the last line of text (without its newline) */
static const char *last_line(const char *text, size_t len) {
  const char *end = text + len;
  if (end > text && end[-1] == '\n')
    end--;
  while (end > text && end[-1] != '\n')
    end--;
  return end;
}

bool sandbox_git_stash_pushed(const char *host_log, const char *run_log, const char *before,
                              const char *value) {
  size_t host_len = strlen(host_log), run_len = strlen(run_log);
  const char *added = run_log + host_len;
  char old_id[65], new_id[65];
  if (run_len <= host_len || memcmp(run_log, host_log, host_len) != 0 ||
      (host_len > 0 && host_log[host_len - 1] != '\n'))
    return false; /* an older entry rewritten or dropped */
  if (!line_id(added, 0, old_id) || !line_id(last_line(added, strlen(added)), 1, new_id))
    return false;
  /* the first new entry's previous value is the host's at the start (git writes zeros for none) */
  if (before[0] != '\0' ? strcmp(old_id, before) != 0 : strspn(old_id, "0") != strlen(old_id))
    return false;
  return strcmp(new_id, value) == 0;
}
