/* `hostGitArgs`: the `-c key=value` options under which the host's git does not run what a run
 * planted (docs/sandbox.md, "Disarming the host's git"). A `config:` entry in `tamper` says that a
 * file a configured command runs or loads changed (nbstripout's `python3 -m nbstripout` and a
 * planted `nbstripout.py`); reporting it does not stop the host's next `git add` from running it.
 * Each entry gives the options that replace what git would run with nothing or with the host's own
 * program: an empty filter (git skips it; `required=false` keeps that from failing), `cat` as a
 * textconv, git's own diff for an external one, `false` as a merge driver (a conflict to resolve by
 * hand), no hooks, no fsmonitor. The filter, textconv, external diff and merge driver values were
 * run with git 2.39: the planted code did not run, and `status`, `add -A`, `commit`, `diff` did not
 * fail (the values git would try to run when empty are not empty). An included or global config the
 * run changed is read again as it is now, and each command key it sets is disarmed; what fsrun
 * cannot read whole there, or any `config:unread:` entry, cannot be disarmed (cannot_disarm). No
 * file is read for a run that reported nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git-config.h"
#include "sandbox-git.h"
#include "utils.h"

#define INCLUDE_MAX_DEPTH SANDBOX_GIT_INCLUDE_MAX_DEPTH
#define INCLUDE_MAX_READS SANDBOX_GIT_INCLUDE_MAX_READS

/* diff.external and diff.<x>.command: git runs an empty value as "" and dies; this is git's own
 * diff of the two files it hands an external driver (path old-file old-hex old-mode new-file
 * new-hex new-mode; only the path for an unmerged one), exit 1 meaning "they differ" */
#define OWN_DIFF                                                                                   \
  "f() { [ $# -lt 7 ] || git --no-pager diff --no-index --no-ext-diff --no-textconv -- \"$2\" "    \
  "\"$5\"; [ $? -le 1 ]; }; f"

struct args {
  char **v;
  size_t n;
  size_t reads;         /* included configs read */
  const char *worktree; /* NULL: not known */
};

/* what makes every git command fail at once (git 2.39: status, diff, add, credential, fetch die
 * reading their config: "bad numeric config value 'fsrun-cannot-disarm' for 'core.abbrev'"), so
 * that git run with the list runs nothing even when the caller misses what the value says */
#define CANNOT_KEY   "core.abbrev"
#define CANNOT_VALUE "fsrun-cannot-disarm"

/* neutral_value's answer for a key whose command no -c option replaces */
static const char CANNOT[] = "";

static void cannot_disarm(struct args *a);

/* git cuts `-c KEY=VALUE` at the first `=` and reads one line: a subsection holding `=` or a
 * newline would name another key, with a value the run chose (review21 P1) */
static bool expressible(const char *key) {
  return key[0] != '\0' && strpbrk(key, "=\n") == NULL;
}

static void push_raw(struct args *a, const char *key, const char *value) {
  cleanup_free char *option = xasprintf("%s=%s", key, value);
  for (size_t i = 1; i < a->n; i += 2)
    if (strcmp(a->v[i], option) == 0)
      return;
  sandbox_git_strv_push(&a->v, &a->n, "-c");
  sandbox_git_strv_push(&a->v, &a->n, option);
}

static void push_option(struct args *a, const char *key, const char *value) {
  if (expressible(key))
    push_raw(a, key, value);
  else
    cannot_disarm(a);
}

/* filter.<x>.* : no clean, smudge or process command, and none required */
static void disarm_filter(struct args *a, const char *key) {
  const char *last = strrchr(key, '.');
  static const char *const names[][2] = {
      {"clean", ""}, {"smudge", ""}, {"process", ""}, {"required", "false"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    cleanup_free char *k = xasprintf("%.*s.%s", (int)(last - key), key, names[i][0]);
    push_option(a, k, names[i][1]);
  }
}

/* gpg.<format>.program: the format's usual program, from the host's PATH */
static const char *gpg_program(const char *key) {
  if (strcmp(key, "gpg.x509.program") == 0)
    return "gpgsm";
  if (strcmp(key, "gpg.ssh.program") == 0)
    return "ssh-keygen";
  return "gpg";
}

/* keys of two levels and the value that keeps git from running what they name */
static const char *const plain_keys[][2] = {{"core.fsmonitor", "false"},
                                            {"core.hooksPath", "/dev/null"},
                                            {"core.pager", "cat"},
                                            {"core.editor", ":"},
                                            {"sequence.editor", ":"},
                                            {"core.sshCommand", "ssh"},
                                            {"core.askPass", ""},
                                            {"diff.external", OWN_DIFF},
                                            {"interactive.diffFilter", "cat"},
                                            {"core.alternateRefsCommand", "true"},
                                            {"credential.helper", ""},
                                            {"gpg.program", "gpg"}};

/* key (section and name lower-cased, as git_config_each and the entries name it) to the value
 * that keeps git from running what it names; CANNOT: no value does (core.gitProxy: git takes the
 * first that matches, the repository's before any -c); NULL: not a key git runs */
static const char *neutral_value(const char *key) {
  static const char *const sub[][3] = {{"diff", "textconv", "cat"},
                                       {"diff", "command", OWN_DIFF},
                                       {"merge", "driver", "false"},
                                       {"mergetool", "cmd", "false"},
                                       {"difftool", "cmd", "false"},
                                       {"credential", "helper", ""},
                                       {"gpg", "defaultkeycommand", "true"},
                                       {"remote", "uploadpack", "git-upload-pack"},
                                       {"remote", "receivepack", "git-receive-pack"},
                                       {"submodule", "update", "checkout"}};
  for (size_t i = 0; i < sizeof(plain_keys) / sizeof(plain_keys[0]); i++)
    if (strcasecmp(key, plain_keys[i][0]) == 0) /* two levels: the entries' core.hooksPath too */
      return plain_keys[i][1];
  if (strcasecmp(key, "core.gitproxy") == 0)
    return CANNOT;
  if (sandbox_git_key_is(key, "gpg", "program"))
    return gpg_program(key);
  for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
    if (sandbox_git_key_is(key, sub[i][0], sub[i][1]))
      return sub[i][2];
  /* pager.<command>: two levels */
  if (strncmp(key, "pager.", 6) == 0 && key[6] != '\0' && strchr(key + 6, '.') == NULL)
    return "false";
  return NULL;
}

bool sandbox_git_runs_key(const char *key) {
  return strncmp(key, "filter.", 7) == 0
             ? sandbox_git_key_is(key, "filter", "clean") ||
                   sandbox_git_key_is(key, "filter", "smudge") ||
                   sandbox_git_key_is(key, "filter", "process")
             : strcasecmp(key, "core.hookspath") != 0 && neutral_value(key) != NULL;
}

static void disarm_key(struct args *a, const char *key) {
  const char *value = neutral_value(key);
  if (strncmp(key, "filter.", 7) == 0 && sandbox_git_runs_key(key))
    disarm_filter(a, key);
  else if (value == CANNOT)
    cannot_disarm(a);
  else if (value != NULL)
    push_option(a, key, value);
}

struct reread {
  struct args *a;
  const char *dir; /* a relative include is taken from the including file's dir */
  int depth;
};

static void reread_file(struct args *a, const char *path, int depth);

/* an include fsrun does not follow (a `~user/` /etc/passwd does not name, git's prefix, past the
 * depth or the budget) may set any driver: "cannot tell" is not "nothing set" */
static void on_variable(void *arg, const char *key, const char *value) {
  struct reread *r = arg;
  const char *unread;
  if (value == NULL || value[0] == '\0')
    return;
  if (sandbox_git_key_includes(key)) {
    cleanup_free char *path = sandbox_git_config_resolve(r->dir, value, &unread);
    if (unread != NULL ||
        (path != NULL && (r->depth >= INCLUDE_MAX_DEPTH || r->a->reads >= INCLUDE_MAX_READS)))
      cannot_disarm(r->a);
    else if (path != NULL)
      reread_file(r->a, path, r->depth + 1);
    return;
  }
  disarm_key(r->a, key);
}

/* nothing is at path (git skips a missing include), not something fsrun could not open (git
 * reads it, or dies trying; a magic link: git's cwd or fds) */
static bool missing(int error) {
  return error == ENOENT || error == ENOTDIR;
}

/* a config file as it is after the run: every command key it (and what it includes) sets; one
 * fsrun cannot read whole (over 1 MiB, not a regular file, a line git refuses, a magic link, a
 * link the run made out of the worktree) cannot be disarmed */
static void reread_file(struct args *a, const char *path, int depth) {
  size_t len = 0;
  bool too_big;
  cleanup_free char *text = sandbox_git_config_read_text(path, &len, &too_big);
  int error = errno;
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  struct reread r = {.a = a, .dir = dir, .depth = depth};
  a->reads++;
  if (slash != NULL)
    *slash = '\0';
  if (text != NULL ? sandbox_git_config_leads_out(path, a->worktree) ||
                         !git_config_each(text, len, on_variable, &r)
                   : too_big || !missing(error))
    cannot_disarm(a);
}

/* the pointer an entry of g's names (an included or global config's path) */
static const struct sandbox_git_pointer *pointer_of(const struct sandbox_git_run *g,
                                                    const char *entry) {
  for (size_t i = 0; g != NULL && i < g->n_pointers; i++)
    if (strcmp(g->pointers[i].entry, entry) == 0)
      return &g->pointers[i];
  return NULL;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n >= t && strcmp(s + n - t, tail) == 0;
}

/* `config:global:<path>`: husky's init.sh is run by hooks; attributes name drivers only the
 * user's config defines; a config is read again (not known: not disarmed) */
static void disarm_global(struct args *a, const struct sandbox_git_run *g, const char *entry) {
  const struct sandbox_git_pointer *p = pointer_of(g, entry);
  if (ends_with(entry, "/husky/init.sh"))
    push_option(a, "core.hooksPath", "/dev/null");
  else if (ends_with(entry, "/git/attributes"))
    return;
  else if (p != NULL)
    reread_file(a, p->path, 0);
  else
    cannot_disarm(a);
}

/* rest (`<key>=<value>`) cut at a later `=` names a key git runs or an include: the key's
 * subsection holds `=`, which no -c option names (`[filter "a=b"] clean = ...`) */
static bool key_holds_equals(const char *rest) {
  for (const char *eq = strchr(rest, '='); eq != NULL && (eq = strchr(eq + 1, '=')) != NULL;) {
    cleanup_free char *key = xasprintf("%.*s", (int)(eq - rest), rest);
    if (sandbox_git_runs_key(key) || sandbox_git_key_includes(key))
      return true;
  }
  return false;
}

/* `config:<key>=<value>`: the key's own options; an include's file read again (not known: not
 * disarmed) */
static void disarm_config(struct args *a, const struct sandbox_git_run *g, const char *entry) {
  const char *rest = entry + strlen("config:");
  cleanup_free char *key = xasprintf("%.*s", (int)strcspn(rest, "="), rest);
  const struct sandbox_git_pointer *p;
  if (key_holds_equals(rest)) {
    cannot_disarm(a);
  } else if (sandbox_git_key_includes(key)) {
    if ((p = pointer_of(g, entry)) != NULL)
      reread_file(a, p->path, 0);
    else
      cannot_disarm(a);
  } else {
    disarm_key(a, key);
  }
}

/* `config:unread:`: a config fsrun could not read whole (sandbox-git-config-paths.c), reported on
 * every run. Cannot disarm, changed or not: fsrun never read what it includes, so a file the run
 * wrote may be behind it (a same digest of an unread file proves nothing of that), and what its
 * drivers are named is not known (docs/sandbox.md) */
static void disarm_unread(struct args *a) {
  cannot_disarm(a);
}

/* a nested repository or gitlink: git must not enter it (its own fsmonitor, its hooks on a
 * recursing checkout); the options of the documented status line */
static void disarm_nested(struct args *a) {
  push_option(a, "core.fsmonitor", "false");
  push_option(a, "submodule.recurse", "false");
  push_option(a, "diff.ignoreSubmodules", "all");
  push_option(a, "status.submoduleSummary", "false");
}

/* what the run set cannot be named in -c options (a key holding `=`, core.gitProxy, a config
 * fsrun no longer knows the path of or cannot read whole): the option that makes the host's git
 * fail at once, and every option that needs no driver's name; the caller must not run git in the
 * worktree (docs) */
static void cannot_disarm(struct args *a) {
  push_raw(a, CANNOT_KEY, CANNOT_VALUE);
  for (size_t i = 0; i < sizeof(plain_keys) / sizeof(plain_keys[0]); i++)
    push_raw(a, plain_keys[i][0], plain_keys[i][1]);
  disarm_nested(a);
}

/* the failing option goes first, whatever entry asked for it: the list "starts with" it (docs) */
static void cannot_disarm_first(struct args *a) {
  for (size_t i = 3; i < a->n; i += 2)
    if (strcmp(a->v[i], CANNOT_KEY "=" CANNOT_VALUE) == 0) {
      char *flag = a->v[i - 1], *option = a->v[i];
      memmove(&a->v[2], &a->v[0], (i - 1) * sizeof(char *)); /* the pairs before it, one on */
      a->v[0] = flag;
      a->v[1] = option;
      return;
    }
}

char **sandbox_git_host_args(const struct sandbox_git_run *g, char **tamper) {
  struct args a = {.worktree = g != NULL ? g->worktree : NULL};
  for (char **t = tamper; t != NULL && *t != NULL; t++) {
    if (strncmp(*t, "hooks:", 6) == 0)
      push_option(&a, "core.hooksPath", "/dev/null");
    else if (strncmp(*t, "config:global:", 14) == 0)
      disarm_global(&a, g, *t);
    else if (strncmp(*t, "config:unread:", 14) == 0)
      disarm_unread(&a);
    else if (strncmp(*t, "config:", 7) == 0)
      disarm_config(&a, g, *t);
    else
      disarm_nested(&a);
  }
  cannot_disarm_first(&a);
  return a.v != NULL ? a.v : xmalloc0(sizeof(char *));
}

void sandbox_git_warn_host_args(const char *context, char **args) {
  sandbox_git_warn_json_list(context,
                             "until a person has reviewed the change, run the host's git in this "
                             "worktree as `git ARGS ...`" SANDBOX_GIT_HOST_ARGS_LINE_TAG,
                             args);
}
