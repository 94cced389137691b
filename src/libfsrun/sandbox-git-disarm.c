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
 * run changed is read again as it is now, and each command key it sets is disarmed; a key there
 * that is neither such a key nor on a short list of inert ones (inert_key), what fsrun cannot read
 * whole there, any `config:unread:` entry, and a list too long for one warning line cannot be
 * disarmed (cannot_disarm). No file is read for a run that reported nothing. */
#include <errno.h>
#include <stdint.h>
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
 * new-hex new-mode; only the path for an unmerged one), exit 1 meaning "they differ"; %s: git's
 * path (sandbox_git_host_program), `[` a builtin of every sh */
#define OWN_DIFF                                                                                   \
  "f() { [ $# -lt 7 ] || %s --no-pager diff --no-index --no-ext-diff --no-textconv -- \"$2\" "     \
  "\"$5\"; [ $? -le 1 ]; }; f"

/* What replaces a key's value. A program is never a bare word: the host's git looks a bare word up
 * on its PATH, where an entry the run writes may hold a planted `cat` (review29 G3); it is the
 * path sandbox_git_host_program finds, or `false`'s where there is none (what needed it fails, as
 * on a host without it), or "cannot disarm" where neither is. */
enum neutral_kind {
  NEUTRAL_NONE,     /* not a key git runs */
  NEUTRAL_VALUE,    /* value as it is: git's own "none" (`core.pager=cat`, `core.editor=:`) */
  NEUTRAL_PROGRAM,  /* value names a program, by its path */
  NEUTRAL_OWN_DIFF, /* OWN_DIFF with git's path */
  NEUTRAL_CANNOT,   /* no value keeps git from running it */
};

struct neutral {
  enum neutral_kind kind;
  const char *value;
};

/* the programs the tables name (cat, false, true, ssh, gpg, gpgsm, ssh-keygen, git), each looked
 * for once a list */
#define PROGRAMS_MAX 8

struct program {
  const char *name;
  char *path; /* NULL: none found */
};

/* The list as a JSON array fits one warning line (log.c cuts a message at 2,048 bytes; this with
 * the line's own text), so a caller that kills fsrun after that line has the whole list (the Fusion
 * adapter reads it there). Past it the list is "cannot disarm" alone and takes nothing more: a
 * config with that many drivers needs a person anyway, and the list's cost stays bounded whatever
 * a run writes (review22 F7: 20,000 filter sections were 160,000 options and half a minute). */
#define LIST_JSON_MAX 1536
/* the options' hash set: a power of two, above what LIST_JSON_MAX holds (at least 8 bytes each) */
#define SEEN_SLOTS 512

struct args {
  char **v;
  size_t n;
  size_t json;                  /* bytes of v as a JSON array (json_cost) */
  size_t reads;                 /* included configs read */
  struct sandbox_git_pins pins; /* what a config is read through; worktree NULL: not known */
  const char *top;              /* the trees the run writes, where no program is taken from */
  const oci_strv *writable;
  struct program programs[PROGRAMS_MAX];
  size_t n_programs;
  const char *seen[SEEN_SLOTS]; /* each option of v once, by its hash */
  bool cannot;                  /* cannot_disarm's options are in v */
  bool full;                    /* past LIST_JSON_MAX: cannot disarm alone, nothing more added */
};

/* what makes every git command fail at once (git 2.39: status, diff, add, credential, fetch die
 * reading their config: "bad numeric config value 'fsrun-cannot-disarm' for 'core.abbrev'"), so
 * that git run with the list runs nothing even when the caller misses what the value says */
#define CANNOT_KEY   "core.abbrev"
#define CANNOT_VALUE "fsrun-cannot-disarm"

static void cannot_disarm(struct args *a);

/* git cuts `-c KEY=VALUE` at the first `=` and reads one line: a subsection holding `=` or a
 * newline would name another key, with a value the run chose (review21 P1) */
static bool expressible(const char *key) {
  return key[0] != '\0' && strpbrk(key, "=\n") == NULL;
}

/* FNV-1a */
static size_t option_hash(const char *s) {
  uint64_t h = 14695981039346656037ULL;
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)h;
}

/* at most what a word adds to a JSON array (sb_json_string): its escapes, the quotes, a comma */
static size_t json_cost(const char *word) {
  size_t n = 3;
  for (const unsigned char *c = (const unsigned char *)word; *c != '\0'; c++)
    n += *c == '"' || *c == '\\' ? 2 : *c < 0x20 || *c >= 0x7f ? 6 : 1;
  return n;
}

/* `-c option` appended unless the list has it: O(1), whatever the list's length */
static void add_option(struct args *a, const char *option) {
  size_t i = option_hash(option) & (SEEN_SLOTS - 1);
  for (; a->seen[i] != NULL; i = (i + 1) & (SEEN_SLOTS - 1))
    if (strcmp(a->seen[i], option) == 0)
      return;
  sandbox_git_strv_push(&a->v, &a->n, "-c");
  sandbox_git_strv_push(&a->v, &a->n, option);
  a->seen[i] = a->v[a->n - 1];
  a->json += json_cost("-c") + json_cost(option);
}

static void add_pair(struct args *a, const char *key, const char *value) {
  cleanup_free char *option = xasprintf("%s=%s", key, value);
  add_option(a, option);
}

/* the list emptied, to hold cannot_disarm's options alone from now on */
static void drop_all(struct args *a) {
  sandbox_git_strv_free(a->v);
  a->v = NULL;
  a->n = a->json = 0;
  memset(a->seen, 0, sizeof(a->seen));
  a->cannot = false;
  a->full = true;
}

/* one more option; past LIST_JSON_MAX "cannot disarm" alone */
static void push_raw(struct args *a, const char *key, const char *value) {
  cleanup_free char *option = NULL;
  if (a->full)
    return;
  option = xasprintf("%s=%s", key, value);
  if (a->json + json_cost("-c") + json_cost(option) <= LIST_JSON_MAX) {
    add_option(a, option);
    return;
  }
  drop_all(a);
  cannot_disarm(a);
}

/* name's path for the host's git (struct neutral), found once a list; NULL: none */
static const char *host_program(struct args *a, const char *name) {
  size_t i = 0;
  for (; i < a->n_programs; i++)
    if (strcmp(a->programs[i].name, name) == 0)
      return a->programs[i].path;
  if (a->n_programs == PROGRAMS_MAX)
    abort(); /* the tables name more programs than PROGRAMS_MAX */
  a->programs[a->n_programs++] =
      (struct program){name, sandbox_git_host_program(a->top, a->writable, name)};
  return a->programs[i].path;
}

/* the option's value for n (caller frees); NULL: none runs nothing */
static char *host_value(struct args *a, struct neutral n) {
  const char *path;
  switch (n.kind) {
  case NEUTRAL_VALUE:
    return xstrdup(n.value);
  case NEUTRAL_PROGRAM:
    path = host_program(a, n.value);
    path = path != NULL ? path : host_program(a, "false");
    return path != NULL ? xstrdup(path) : NULL;
  case NEUTRAL_OWN_DIFF:
    path = host_program(a, "git");
    return path != NULL ? xasprintf(OWN_DIFF, path) : NULL;
  case NEUTRAL_NONE:
  case NEUTRAL_CANNOT:
    break;
  }
  return NULL;
}

static void push_option(struct args *a, const char *key, struct neutral n) {
  cleanup_free char *value = expressible(key) ? host_value(a, n) : NULL;
  if (value != NULL)
    push_raw(a, key, value);
  else
    cannot_disarm(a);
}

#define VALUE(v)   ((struct neutral){NEUTRAL_VALUE, (v)})
#define PROGRAM(p) ((struct neutral){NEUTRAL_PROGRAM, (p)})

/* filter.<x>.* : no clean, smudge or process command, and none required */
static void disarm_filter(struct args *a, const char *key) {
  const char *last = strrchr(key, '.');
  static const char *const names[][2] = {
      {"clean", ""}, {"smudge", ""}, {"process", ""}, {"required", "false"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    cleanup_free char *k = xasprintf("%.*s.%s", (int)(last - key), key, names[i][0]);
    push_option(a, k, VALUE(names[i][1]));
  }
}

/* gpg.<format>.program: the format's usual program */
static struct neutral gpg_program(const char *key) {
  if (strcmp(key, "gpg.x509.program") == 0)
    return PROGRAM("gpgsm");
  if (strcmp(key, "gpg.ssh.program") == 0)
    return PROGRAM("ssh-keygen");
  return PROGRAM("gpg");
}

/* keys of two levels and what keeps git from running what they name: git's own no-ops run
 * nothing (a pager `cat` and an editor `:` are never started, git 2.39 pager.c, editor.c) */
static const struct {
  const char *key;
  struct neutral neutral;
} plain_keys[] = {{"core.fsmonitor", VALUE("false")},
                  {"core.hooksPath", VALUE("/dev/null")},
                  {"core.pager", VALUE("cat")},
                  {"core.editor", VALUE(":")},
                  {"sequence.editor", VALUE(":")},
                  {"core.sshCommand", PROGRAM("ssh")},
                  {"core.askPass", VALUE("")},
                  {"diff.external", {NEUTRAL_OWN_DIFF, NULL}},
                  {"interactive.diffFilter", PROGRAM("cat")},
                  {"core.alternateRefsCommand", PROGRAM("true")},
                  {"credential.helper", VALUE("")},
                  {"gpg.program", PROGRAM("gpg")}};

/* key (section and name lower-cased, as git_config_each and the entries name it) to what keeps
 * git from running what it names; NEUTRAL_CANNOT: nothing does (core.gitProxy: git takes the first
 * that matches, the repository's before any -c); NEUTRAL_NONE: not a key git runs. The remote's
 * upload-pack and receive-pack stay names: the remote's git runs them, and a local one is found
 * in git's exec path, which git puts first on its PATH */
static struct neutral neutral_of(const char *key) {
  static const struct {
    const char *section, *name;
    struct neutral neutral;
  } sub[] = {{"diff", "textconv", PROGRAM("cat")},
             {"diff", "command", {NEUTRAL_OWN_DIFF, NULL}},
             {"merge", "driver", PROGRAM("false")},
             {"mergetool", "cmd", PROGRAM("false")},
             {"difftool", "cmd", PROGRAM("false")},
             {"credential", "helper", VALUE("")},
             {"gpg", "defaultkeycommand", PROGRAM("true")},
             {"remote", "uploadpack", VALUE("git-upload-pack")},
             {"remote", "receivepack", VALUE("git-receive-pack")},
             {"submodule", "update", VALUE("checkout")}};
  for (size_t i = 0; i < sizeof(plain_keys) / sizeof(plain_keys[0]); i++)
    if (strcasecmp(key, plain_keys[i].key) == 0) /* two levels: the entries' core.hooksPath too */
      return plain_keys[i].neutral;
  if (strcasecmp(key, "core.gitproxy") == 0)
    return (struct neutral){NEUTRAL_CANNOT, NULL};
  if (sandbox_git_key_is(key, "gpg", "program"))
    return gpg_program(key);
  for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
    if (sandbox_git_key_is(key, sub[i].section, sub[i].name))
      return sub[i].neutral;
  /* pager.<command>: two levels */
  if (strncmp(key, "pager.", 6) == 0 && key[6] != '\0' && strchr(key + 6, '.') == NULL)
    return VALUE("false");
  return (struct neutral){NEUTRAL_NONE, NULL};
}

bool sandbox_git_runs_key(const char *key) {
  return strncmp(key, "filter.", 7) == 0
             ? sandbox_git_key_is(key, "filter", "clean") ||
                   sandbox_git_key_is(key, "filter", "smudge") ||
                   sandbox_git_key_is(key, "filter", "process")
             : strcasecmp(key, "core.hookspath") != 0 && neutral_of(key).kind != NEUTRAL_NONE;
}

/* filter.<x>.required too: the filter's options make it not required */
static bool filter_key(const char *key) {
  return strncmp(key, "filter.", 7) == 0 &&
         (sandbox_git_runs_key(key) || sandbox_git_key_is(key, "filter", "required"));
}

static void disarm_key(struct args *a, const char *key) {
  struct neutral n = neutral_of(key);
  if (filter_key(key))
    disarm_filter(a, key);
  else if (n.kind == NEUTRAL_CANNOT)
    cannot_disarm(a);
  else if (n.kind != NEUTRAL_NONE)
    push_option(a, key, n);
}

/* Keys an included or global config the run wrote may set with no option at all: whatever their
 * value, git runs no program for them and sends nothing anywhere (review22 F1: every other key of
 * such a config is "cannot disarm"). Two levels, any case. Not here, on purpose: alias.* (`!cmd`),
 * core.excludesFile, status.showUntrackedFiles, core.fileMode (they hide a planted file or a mode
 * change from the person reviewing), push.*, remote.*, url.*, http.*, protocol.*, trailer.*. */
static const char *const inert_keys[] = {"user.name",       "user.email",        "author.name",
                                         "author.email",    "committer.name",    "committer.email",
                                         "core.autocrlf",   "core.eol",          "core.safecrlf",
                                         "core.whitespace", "init.defaultbranch"};

/* <section>.<driver>.<name>: what a diff or merge driver is called and how its hunks are read,
 * never what it runs */
static const char *const inert_driver_keys[][2] = {{"diff", "binary"},
                                                   {"diff", "xfuncname"},
                                                   {"diff", "funcname"},
                                                   {"diff", "wordregex"},
                                                   {"merge", "name"}};

static bool inert_key(const char *key) {
  for (size_t i = 0; i < sizeof(inert_keys) / sizeof(inert_keys[0]); i++)
    if (strcasecmp(key, inert_keys[i]) == 0)
      return true;
  /* color.ui, color.diff, ...: on or off. Not color.<slot>.<x>: black on black hides the lines
   * of a diff from the person who reviews it */
  if (strncmp(key, "color.", 6) == 0 && key[6] != '\0' && strchr(key + 6, '.') == NULL)
    return true;
  for (size_t i = 0; i < sizeof(inert_driver_keys) / sizeof(inert_driver_keys[0]); i++)
    if (sandbox_git_key_is(key, inert_driver_keys[i][0], inert_driver_keys[i][1]))
      return true;
  return false;
}

/* a key of a config read again: its options when git runs what it names, nothing when it is
 * inert, else "cannot disarm" (protocol.ext.allow with url.<ext::cmd>.insteadOf,
 * trailer.<t>.command, remote.<r>.pushurl, http.proxy: a denylist of program keys would keep
 * missing some) */
static void reread_key(struct args *a, const char *key) {
  if (filter_key(key) || neutral_of(key).kind != NEUTRAL_NONE)
    disarm_key(a, key);
  else if (!inert_key(key))
    cannot_disarm(a);
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
  if (r->a->full)
    return;
  if (!sandbox_git_key_includes(key)) {
    reread_key(r->a, key);
    return;
  }
  if (value == NULL || value[0] == '\0')
    return;
  cleanup_free char *path = sandbox_git_config_resolve(r->dir, value, &unread);
  if (unread != NULL ||
      (path != NULL && (r->depth >= INCLUDE_MAX_DEPTH || r->a->reads >= INCLUDE_MAX_READS)))
    cannot_disarm(r->a);
  else if (path != NULL)
    reread_file(r->a, path, r->depth + 1);
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
  if (a->full)
    return;
  cleanup_free char *text = sandbox_git_config_read_text(&a->pins, path, &len, &too_big);
  int error = errno;
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  struct reread r = {.a = a, .dir = dir, .depth = depth};
  a->reads++;
  if (slash != NULL)
    *slash = '\0';
  if (text != NULL ? sandbox_git_config_leads_out(&a->pins, path) ||
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
    push_option(a, "core.hooksPath", VALUE("/dev/null"));
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
static const char *const nested_keys[][2] = {{"core.fsmonitor", "false"},
                                             {"submodule.recurse", "false"},
                                             {"diff.ignoreSubmodules", "all"},
                                             {"status.submoduleSummary", "false"}};

static void disarm_nested(struct args *a) {
  for (size_t i = 0; i < sizeof(nested_keys) / sizeof(nested_keys[0]); i++)
    push_raw(a, nested_keys[i][0], nested_keys[i][1]);
}

/* what the run set cannot be named in -c options (a key holding `=`, core.gitProxy, a key off
 * the inert list, a config fsrun no longer knows the path of or cannot read whole, a list past
 * LIST_JSON_MAX): the option that makes the host's git fail at once, and every option that needs
 * no driver's name (these alone past LIST_JSON_MAX); the caller must not run git there (docs) */
static void cannot_disarm(struct args *a) {
  if (a->cannot)
    return;
  add_pair(a, CANNOT_KEY, CANNOT_VALUE);
  for (size_t i = 0; i < sizeof(plain_keys) / sizeof(plain_keys[0]); i++) {
    cleanup_free char *value = host_value(a, plain_keys[i].neutral);
    if (value != NULL) /* none: git fails at CANNOT_KEY before it could run the key's program */
      add_pair(a, plain_keys[i].key, value);
  }
  for (size_t i = 0; i < sizeof(nested_keys) / sizeof(nested_keys[0]); i++)
    add_pair(a, nested_keys[i][0], nested_keys[i][1]);
  a->cannot = true;
  if (a->json > LIST_JSON_MAX) { /* the drivers' options before them and these: too long */
    drop_all(a);
    cannot_disarm(a);
  }
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
  struct args a = {.pins = {.top = -1, .common = -1}};
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int top = -1;
  if (g != NULL) {
    a.pins = sandbox_git_pins_of(g, g->worktree);
    a.top = g->worktree;
    a.writable = g->writable;
  }
  /* no walk held the top: one checked now (another object: what is below it cannot disarm) */
  if (g != NULL && !g->top_held && g->worktree != NULL)
    a.pins.top = top = sandbox_git_top_checked(g->worktree, &err);
  /* a repository of its own below the top, new or not: its config is the run's to write (a write
   * inside its `.git` moves no time the walk reads: review25 C3), and the host's `git add` runs
   * `git status` inside a gitlink's checkout, which runs the filters that config names; no option
   * keeps `add` out (review26 D1): cannot disarm */
  if (g != NULL && g->nested_seen)
    cannot_disarm(&a);
  for (char **t = tamper; t != NULL && *t != NULL; t++) {
    if (strncmp(*t, "hooks:", 6) == 0)
      push_option(&a, "core.hooksPath", VALUE("/dev/null"));
    else if (strncmp(*t, "config:global:", 14) == 0)
      disarm_global(&a, g, *t);
    else if (strncmp(*t, "config:unread:", 14) == 0 || strcmp(*t, SANDBOX_GIT_TAMPER_UNWALKED) == 0)
      disarm_unread(&a); /* unwalked: neither the worktree nor what its config names was read */
    else if (strncmp(*t, "config:", 7) == 0)
      disarm_config(&a, g, *t);
    else
      disarm_nested(&a);
  }
  cannot_disarm_first(&a);
  for (size_t i = 0; i < a.n_programs; i++)
    free(a.programs[i].path);
  return a.v != NULL ? a.v : xmalloc0(sizeof(char *));
}

void sandbox_git_warn_host_args(const char *context, char **args) {
  sandbox_git_warn_json_list(context,
                             "until a person has reviewed the change, run the host's git in this "
                             "worktree as `git ARGS ...`" SANDBOX_GIT_HOST_ARGS_LINE_TAG,
                             args);
}
