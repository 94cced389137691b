/* sandbox-git-gitfile.c: a `.git` file's text read as git 2.39's read_gitfile_gently reads it (the
 * whole file, only trailing LF and CR stripped), and a path with a control character or NUL in it
 * not read at all (review27 E2: `gitdir: cd\nx` was `cd` for fsrun and `cd\nx` for git). */
#include <string.h>

#include "sandbox-git.h"
#include "tap.h"

/* text (len bytes) parsed: the outcome, and the path it gives (or NULL) */
static enum sandbox_git_gitfile parse(const char *text, size_t len, char out[64]) {
  char buf[64];
  const char *path;
  enum sandbox_git_gitfile r;
  memcpy(buf, text, len);
  buf[len] = 'Z'; /* the byte past the text: the parser's to overwrite */
  r = sandbox_git_gitfile_parse(buf, len, &path);
  strcpy(out, path != NULL ? path : "(none)");
  return r;
}

static void path_is(const char *text, size_t len, const char *want, const char *what) {
  char got[64];
  enum sandbox_git_gitfile r = parse(text, len, got);
  tap_ok(r == SANDBOX_GIT_GITFILE_PATH && strcmp(got, want) == 0, "%s: `%s`", what, got);
}

static void outcome_is(const char *text, size_t len, enum sandbox_git_gitfile want,
                       const char *what) {
  char got[64];
  tap_ok(parse(text, len, got) == want, "%s", what);
}

#define T(s) s, sizeof(s) - 1

int main(void) {
  path_is(T("gitdir: ../.git/modules/sub\n"), "../.git/modules/sub", "git's own, one LF");
  path_is(T("gitdir: /r/.git/worktrees/t"), "/r/.git/worktrees/t", "no line break");
  path_is(T("gitdir: a\r\n\n\r\n"), "a", "every trailing CR and LF stripped");
  path_is(T("gitdir:  a b\n"), " a b", "spaces are the path's (git takes them)");
  outcome_is(T("gitdir: cd\nx\n"), SANDBOX_GIT_GITFILE_ODD, "a LF inside the path (E2)");
  outcome_is(T("gitdir: cd\rx"), SANDBOX_GIT_GITFILE_ODD, "a CR inside the path");
  outcome_is(T("gitdir: cd\0x\n"), SANDBOX_GIT_GITFILE_ODD, "a NUL inside the path");
  outcome_is(T("gitdir: cd\0\n"), SANDBOX_GIT_GITFILE_ODD, "a NUL before the trailing LF");
  outcome_is(T("gitdir: \tcd\n"), SANDBOX_GIT_GITFILE_ODD, "a tab in the path");
  outcome_is(T("gitdir: cd\x7f\n"), SANDBOX_GIT_GITFILE_ODD, "a DEL in the path");
  outcome_is(T("gitdir: \n\n"), SANDBOX_GIT_GITFILE_NONE, "no path");
  outcome_is(T("gitdir:x\n"), SANDBOX_GIT_GITFILE_NONE, "no space after the colon");
  outcome_is(T("Gitdir: x\n"), SANDBOX_GIT_GITFILE_NONE, "another case");
  outcome_is(T(""), SANDBOX_GIT_GITFILE_NONE, "empty");
  return tap_done();
}
