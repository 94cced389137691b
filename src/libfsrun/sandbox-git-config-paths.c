/* The files the repository's own config has the host's git run or read as config, and whether a
 * run changed them (docs/sandbox.md, "Git on the host"). fsrun keeps `config` and `hooks/`
 * read-only, but the config may name paths in the worktree: husky's `core.hooksPath=.husky`, a
 * `filter.<x>.clean=./scripts/x`, `core.fsmonitor=.git-fsmonitor`, `include.path=../.gitconfig`.
 * That is project content the command may need to edit, so it is not bound away; a change to it is
 * reported in `tamper` as `config:<key>=<value>`, since the host's next plain `git commit` or
 * `git status` runs what the run wrote.
 *
 * Before the run: the system's and the user's configs (read_user_configs: what they name runs in
 * every repository), the common dir's `config` and `config.worktree` (and the task worktree's),
 * with their includes followed (git's depth, at most INCLUDE_MAX_READS files; `includeIf`
 * conditions not evaluated: every one is taken), give a list of (entry, path) and a digest of what
 * each path is (pointer_digest). After the run an entry whose digest changed is reported: no clock
 * involved. Only changes are reported: a husky repository that the run leaves alone stays quiet.
 *
 * What fsrun cannot read as git does (a config over CONFIG_MAX_BYTES, past INCLUDE_MAX_READS, a
 * `~user/` /etc/passwd does not name, git's `%(prefix)/`, more than POINTERS_MAX paths) would be
 * watched less than git runs: it is a standing entry `config:unread:...`, reported on every run,
 * so that "cannot tell" never reads as "nothing changed". So is a command key whose command names
 * what it runs through an expansion or a glob (add_unknown_command). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-time.h"
#include "git-config.h"
#include "log.h"
#include "passwd.h"
#include "sha256.h"
#include "sandbox-git.h"
#include "sandbox-git-runner.h"
#include "mounts.h"
#include "sandbox-internal.h"
#include "utils.h"

#define INCLUDE_MAX_DEPTH       SANDBOX_GIT_INCLUDE_MAX_DEPTH
#define INCLUDE_MAX_READS       SANDBOX_GIT_INCLUDE_MAX_READS
#define CONFIG_MAX_BYTES        (1024 * 1024)
#define WALK_MAX_DEPTH          3
#define WALK_MAX_ENTRIES        4096               /* per pointer */
#define CONTENT_MAX_FILE        (64 * 1024)        /* a script, a hook, a config: read whole */
#define CONTENT_MAX_BYTES       (4 * 1024 * 1024)  /* per pointer, small files */
#define CONTENT_WHOLE_MAX_BYTES (16 * 1024 * 1024) /* per pointer, every file read */
#define POINTERS_MAX            256
#define ENTRY_VALUE_MAX         200

/* The absolute entries of fsrun's PATH at or below the worktree or a writablePaths entry, where a
 * bare command word is the run's to plant: each relative to the top (in_worktree) or as written. */
struct run_path_dir {
  char *dir;
  bool in_worktree;
};

struct run_path {
  const char *top; /* the task worktree's top (a submodule's config is read from its checkout) */
  bool found;
  size_t n;
  struct run_path_dir *dirs;
};

struct collect {
  struct sandbox_git_run *g;
  const struct sandbox_git_pins *pins; /* what a config below the top or common dir is read by */
  const char *worktree;
  const char *config_dir; /* relative include paths are taken from the including file's dir */
  int depth;
  char **hooks_dir; /* the last core.hooksPath, resolved as git does for a worktree's hooks */
  size_t *reads;    /* included files read so far, by every level */
  struct run_path *run_path; /* PATH's absolute entries the run writes, found once a read */
};

static void read_config_file(struct collect *c, const char *path);
static struct sandbox_git_digest pointer_digest(const struct sandbox_git_pointer *p,
                                                const struct sandbox_git_pins *pins);

/* an entry's control characters shown as `?` (stderr, JSON) */
static char *printable(char *e) {
  for (char *p = e; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  return e;
}

/* `config:<key>=<value>`, the value cut */
static char *entry_of(const char *key, const char *value) {
  return printable(xasprintf("config:%s=%.*s", key, ENTRY_VALUE_MAX, value));
}

/* `~user/rest` (or `~user`) with user's home from /etc/passwd, as git's interpolate_path takes it
 * from getpwnam; NULL when the file names no such user (NSS may: fsrun cannot tell) */
static char *resolve_user(const char *path) {
  size_t n = strcspn(path + 1, "/");
  cleanup_free char *user = xasprintf("%.*s", (int)n, path + 1);
  cleanup_free char *home = passwd_field_of_name("/etc/passwd", user, PASSWD_HOME);
  if (home == NULL)
    return NULL;
  return xasprintf("%s%s", home, path + 1 + n);
}

/* path as git takes it: absolute, `~/` from HOME, `~user/` from /etc/passwd, else relative to
 * base. NULL with *unread set: a path git may reach that fsrun cannot tell; NULL without: none
 * (HOME unset: git refuses `~/`) */
static char *resolve(const char *base, const char *path, const char **unread) {
  const char *home = getenv("HOME");
  char *r;
  *unread = NULL;
  if (path[0] == '/')
    return xstrdup(path);
  if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
    return home != NULL ? xasprintf("%s%s", home, path + 1) : NULL;
  if (path[0] == '~') {
    if ((r = resolve_user(path)) == NULL)
      *unread = "a user /etc/passwd does not name";
    return r;
  }
  if (strncmp(path, "%(prefix)/", 10) == 0) {
    *unread = "git's install prefix";
    return NULL;
  }
  return xasprintf("%s/%s", base, path);
}

char *sandbox_git_config_resolve(const char *base, const char *path, const char **unread) {
  return resolve(base, path, unread);
}

/* python_top: a dir's Python imports and the dir's whole tree (a script's dir) are two pointers */
static bool pointer_known(const struct sandbox_git_run *g, const char *entry, const char *path,
                          bool python_top) {
  for (size_t i = 0; i < g->n_pointers; i++)
    if (strcmp(g->pointers[i].entry, entry) == 0 && strcmp(g->pointers[i].path, path) == 0 &&
        g->pointers[i].python_top == python_top)
      return true;
  return false;
}

static void pointer_add(struct sandbox_git_run *g, char *entry, char *path, bool below_top,
                        bool python_top) {
  struct sandbox_git_pointer *p;
  /* once each: a config that includes itself names the same paths again and again */
  if (pointer_known(g, entry, path, python_top)) {
    free(entry);
    free(path);
    return;
  }
  if (g->n_pointers >= POINTERS_MAX) {
    g->pointers_dropped = true; /* a standing entry of its own (sandbox_git_config_tamper) */
    free(entry);
    free(path);
    return;
  }
  p = realloc(g->pointers, (g->n_pointers + 1) * sizeof(*g->pointers));
  if (p == NULL)
    abort();
  g->pointers = p;
  g->pointers[g->n_pointers++] = (struct sandbox_git_pointer){
      .entry = entry, .path = path, .below_top = below_top, .python_top = python_top};
}

void sandbox_git_pointer_add(struct sandbox_git_run *g, char *entry, char *path, bool below_top) {
  pointer_add(g, entry, path, below_top, false);
}

/* `config:unread:<what> (<why>)`, reported on every run: what git reads or runs there fsrun cannot
 * tell (the pointer's path: what, or "" when it is no path) */
static void add_standing(struct sandbox_git_run *g, const char *what, const char *why) {
  size_t n = g->n_pointers;
  sandbox_git_pointer_add(
      g, printable(xasprintf("config:unread:%.*s (%s)", ENTRY_VALUE_MAX, what, why)),
      xstrdup(what[0] == '/' ? what : ""), false);
  if (g->n_pointers > n)
    g->pointers[n].standing = true;
}

static void add_pointer(struct collect *c, const char *key, const char *value, const char *base,
                        const char *path) {
  const char *unread;
  char *abs = resolve(base, path, &unread);
  if (unread != NULL)
    add_standing(c->g, path, unread);
  if (abs == NULL)
    return;
  /* below the worktree's top: the directories on the way are checked too */
  sandbox_git_pointer_add(c->g, entry_of(key, value), abs,
                          base == c->worktree && path[0] != '/' && path[0] != '~');
}

bool sandbox_git_key_is(const char *key, const char *section, const char *name) {
  size_t s = strlen(section), k = strlen(key), n = strlen(name);
  return strncmp(key, section, s) == 0 && key[s] == '.' && k > s + n + 1 && key[k - n - 1] == '.' &&
         strcmp(key + k - n, name) == 0;
}

bool sandbox_git_key_includes(const char *key) {
  return strcmp(key, "include.path") == 0 || sandbox_git_key_is(key, "includeif", "path");
}

#define WORD_BREAK    " \t\n'\""
#define COMMAND_BREAK ";|&()"

/* a dir Python imports from before its own library (review22 F8): a `-m` driver's and a bare
 * `python3`'s current directory (git's: the worktree's top), a script's dir. Watched as what may be
 * imported there: a planted `X.pyc`, `X.*.so` or `argparse.py` runs as well as `X.py` */
static void add_python_dir(struct collect *c, const char *key, const char *value, const char *dir) {
  pointer_add(c->g, entry_of(key, value), xstrdup(dir), false, true);
}

/* `-m X`: python puts the current directory (git's: the worktree's top) first on sys.path, so the
 * top package X (or module X.py) there is what runs; the rest of the top is what X imports */
static void add_module(struct collect *c, const char *key, const char *value, const char *module) {
  size_t n = strcspn(module, ".");
  cleanup_free char *package = xasprintf("%.*s", (int)n, module);
  cleanup_free char *file = xasprintf("%s.py", package);
  add_python_dir(c, key, value, c->worktree);
  if (n == 0 || strchr(package, '/') != NULL)
    return;
  add_pointer(c, key, value, c->worktree, package);
  add_pointer(c, key, value, c->worktree, file);
}

/* `python`, `python3`, `/usr/bin/python3.11`: an interpreter that imports from a dir of the run's
 */
static bool python_word(const char *w) {
  const char *base = strrchr(w, '/');
  base = base != NULL ? base + 1 : w;
  return strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == strlen(base + 6);
}

/* `python3 [options] script.py`: the script's dir comes first on sys.path */
static void add_python_script(struct collect *c, const char *key, const char *value,
                              const char *script) {
  const char *unread;
  cleanup_free char *path = resolve(c->worktree, script, &unread);
  char *slash = path != NULL ? strrchr(path, '/') : NULL;
  if (slash == NULL)
    return;
  *slash = '\0';
  add_python_dir(c, key, value, path[0] != '\0' ? path : "/");
}

/* where add_command_words is in one command */
struct words {
  bool at_command;  /* the next word is the command (after VAR=value words) */
  bool module_next; /* the next word is `-m`'s module */
  bool python;      /* the command is a Python interpreter whose script has not come yet */
  /* the names the command resolves a file word to (`node clean`: clean.js...); NULL: none */
  const char *const *suffixes;
  /* the command runs the next word as a command (`env`, `nice -n 5`, sandbox-git-runner.c): its
   * word is looked up on PATH as the command is */
  struct git_runner_state runner;
  bool shell;       /* the command is a shell whose first operand has not come */
  bool shell_c;     /* that shell had `-c`: its first operand is a command string */
  bool shell_value; /* the next word is a shell option's value (`-o errexit`) */
  bool git;         /* the command is git, whose subcommand has not come */
  bool git_value;   /* the next word is git's `-c`/`-C` value */
  /* `PATH=dirs` before the command (env's or the shell's): where it is looked up; NULL: fsrun's */
  char *path;
};

/* The dir of a worktree file a command names (`tools/clean.sh`: `tools/`), watched as a pointer of
 * the same entry (review24 N1): what such a script loads beside it (`. tools/lib.sh`, Python's
 * imports from the script's own dir, a package there, node's `./lib`) is the driver's too. Not the
 * top itself (`./clean.sh`), whose every new file would be a change, nor a dir outside it. */
static void add_script_dir(struct collect *c, const char *key, const char *value, const char *w) {
  const char *unread;
  size_t top = strlen(c->worktree);
  cleanup_free char *path = resolve(c->worktree, w, &unread);
  char *slash = path != NULL ? strrchr(path, '/') : NULL;
  if (slash == NULL)
    return;
  *slash = '\0';
  while (strlen(path) >= 2 && strcmp(path + strlen(path) - 2, "/.") == 0)
    path[strlen(path) - 2] = '\0'; /* `./tools/x`'s `.` steps */
  if (strncmp(path, c->worktree, top) != 0 || path[top] != '/' || strstr(path + top, "/..") != NULL)
    return;
  add_pointer(c, key, value, c->worktree, path + top + 1);
}

/* A word with an expansion or a glob (`"$(git rev-parse --show-toplevel)/tools/clean.sh"`,
 * `$GIT_DIR/x`, a glob of `tools/`): what the key runs is not a name fsrun can know, so no digest
 * can say it is unchanged (review25 C9). The key's own entry stands: reported on every run, so that
 * hostGitArgs disarm the key every time (or cannot disarm, where no option does) */
static void add_unknown_command(struct sandbox_git_run *g, const char *key, const char *value) {
  size_t n = g->n_pointers;
  sandbox_git_pointer_add(g, entry_of(key, value), xstrdup(""), false);
  if (g->n_pointers > n)
    g->pointers[n].standing = true;
}

/* Interpreters that take a file word (or an option's value: `ruby -rx`, `lua -lx`) as a name they
 * add a suffix to (review26 D3): `node clean` runs a top-level `clean.js`, `ruby -I. -rx` a `x.rb`,
 * `lua -l x` a `x.lua` (its default package.path starts with `./?.lua`), `perl -I. -MFilt` a
 * `Filt.pm`. The word itself, a directory, is digested whole already (index.js, x/init.lua). */
static const char *const node_suffixes[] = {".js", ".mjs", ".cjs", ".json", ".node",
                                            ".ts", ".mts", ".cts", ".tsx",  NULL};
static const char *const ruby_suffixes[] = {".rb", ".so", NULL};
static const char *const lua_suffixes[] = {".lua", ".so", NULL};
static const char *const perl_suffixes[] = {".pm", ".pl", NULL};

static const struct {
  const char *name;
  const char *const *suffixes;
} interpreters[] = {{"node", node_suffixes}, {"nodejs", node_suffixes}, {"bun", node_suffixes},
                    {"deno", node_suffixes}, {"tsx", node_suffixes},    {"ts-node", node_suffixes},
                    {"ruby", ruby_suffixes}, {"lua", lua_suffixes},     {"luajit", lua_suffixes},
                    {"perl", perl_suffixes}};

/* w's suffixes when it names one of those (a path to one too; `ruby3.1`, `lua5.4` by their
 * version's digits and dots); NULL when none */
static const char *const *interpreter_suffixes(const char *w) {
  const char *base = strrchr(w, '/');
  base = base != NULL ? base + 1 : w;
  for (size_t i = 0; i < sizeof(interpreters) / sizeof(interpreters[0]); i++) {
    size_t n = strlen(interpreters[i].name);
    if (strncmp(base, interpreters[i].name, n) == 0 &&
        strspn(base + n, "0123456789.") == strlen(base + n))
      return interpreters[i].suffixes;
  }
  return NULL;
}

static bool has_suffix(const char *w, const char *const *suffixes) {
  size_t n = strlen(w);
  for (const char *const *x = suffixes; *x != NULL; x++) {
    size_t k = strlen(*x);
    if (n > k && strcmp(w + n - k, *x) == 0)
      return true;
  }
  return false;
}

/* a word that may be a file the command runs or loads: it and its script dir; after an
 * interpreter above, the names it resolves the word to too, unless it names one already (`node
 * x.js`: nine more pointers a word would spend POINTERS_MAX on names tried only when x.js is gone)
 */
static void add_file_word(struct collect *c, const char *key, const char *value, const char *w,
                          const char *const *suffixes) {
  add_pointer(c, key, value, c->worktree, w);
  add_script_dir(c, key, value, w);
  if (suffixes == NULL || has_suffix(w, suffixes))
    return;
  for (const char *const *x = suffixes; *x != NULL; x++) {
    cleanup_free char *name = xasprintf("%s%s", w, *x);
    add_pointer(c, key, value, c->worktree, name);
  }
}

/* path's real path, and in *st what it is; NULL where it cannot be opened. By an O_PATH fd and
 * its /proc link: three calls whatever its depth (realpath(3) reads each component's link) */
static char *real_of(const char *path, struct stat *st) {
  cleanup_close int fd = open(path, O_PATH | O_CLOEXEC);
  char proc[64], buf[PATH_MAX];
  ssize_t n;
  if (fd < 0 || fstat(fd, st) < 0)
    return NULL;
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  n = readlink(proc, buf, sizeof(buf) - 1);
  if (n <= 0 || buf[0] != '/')
    return NULL;
  buf[n] = '\0';
  return xstrdup(buf);
}

/* an absolute PATH entry (clean) resolved as far as it exists, the rest as written: a directory
 * the run may still make is judged by where it would be made; *st: the part that exists */
static char *resolve_entry(const char *entry, struct stat *st) {
  cleanup_free char *up = xstrdup(entry);
  for (;;) {
    cleanup_free char *real = real_of(up[0] != '\0' ? up : "/", st);
    char *slash;
    if (real != NULL && strcmp(real, "/") == 0 && entry[strlen(up)] != '\0')
      return xstrdup(entry + strlen(up));
    if (real != NULL)
      return xasprintf("%s%s", real, entry + strlen(up));
    if ((slash = strrchr(up, '/')) == NULL)
      return NULL;
    *slash = '\0';
  }
}

/* path is dir or below it, as strings */
static bool at_or_below(const char *dir, const char *path) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* a tree the run writes (the worktree, a writablePaths entry): as given, its real path, its
 * identity, each found once a read */
struct run_tree {
  char *given, *real;
  struct stat st;
};

static size_t run_trees_find(const char *top, const oci_strv *writable, struct run_tree *t) {
  size_t n = 0;
  for (size_t i = 0; i <= (writable != NULL ? writable->len : 0); i++) {
    if (i == 0 && top == NULL)
      continue; /* no worktree known (hostGitArgs of a repository gone) */
    t[n].given = path_clean_abs(i == 0 ? top : writable->items[i - 1]);
    t[n].real = real_of(t[n].given, &t[n].st);
    if (t[n].real == NULL)
      t[n].st = (struct stat){0}; /* no identity: not there (yet) */
    n++;
  }
  return n;
}

/* Whether the entry (clean; resolved: as resolve_entry made it, st its existing part's) is at or
 * below one of the trees: by its spelling, its real path (a link on the way counts) or identity
 * (an ancestor that is a tree under another name, a bind mount; looked for only on a tree's
 * filesystem, one stat a level) */
static bool run_writes(const struct run_tree *t, size_t n, const char *entry, const char *resolved,
                       const struct stat *st) {
  bool same_fs = false;
  for (size_t i = 0; i < n; i++) {
    if (path_within(entry, t[i].given) || (resolved != NULL && path_within(resolved, t[i].given)) ||
        (resolved != NULL && t[i].real != NULL && path_within(resolved, t[i].real)))
      return true;
    same_fs |= t[i].real != NULL && st != NULL && t[i].st.st_dev == st->st_dev;
  }
  if (!same_fs || resolved == NULL)
    return false;
  cleanup_free char *up = xstrdup(resolved);
  for (char *slash; (slash = strrchr(up, '/')) != NULL; *slash = '\0') {
    struct stat a;
    if (stat(up, &a) < 0)
      continue;
    for (size_t i = 0; i < n; i++)
      if (t[i].real != NULL && t[i].st.st_dev == a.st_dev && t[i].st.st_ino == a.st_ino)
        return true;
  }
  return false;
}

/* r's entries: each absolute entry of path (a PATH's value) the run writes */
static void run_path_find(struct collect *c, const char *path, struct run_path *r) {
  const oci_strv *writable = c->g->writable;
  size_t room = 1 + (writable != NULL ? writable->len : 0);
  cleanup_free struct run_tree *t = xmalloc0(room * sizeof(*t));
  size_t n = run_trees_find(r->top, writable, t);
  r->found = true;
  for (const char *p = path; p != NULL && *p != '\0'; p += *p == ':') {
    size_t len = strcspn(p, ":");
    struct stat st;
    cleanup_free char *entry = p[0] == '/' ? xasprintf("%.*s", (int)len, p) : NULL;
    cleanup_free char *clean = entry != NULL ? path_clean_abs(entry) : NULL;
    cleanup_free char *resolved = clean != NULL ? resolve_entry(clean, &st) : NULL;
    p += len;
    if (clean == NULL || !run_writes(t, n, clean, resolved, resolved != NULL ? &st : NULL))
      continue;
    r->dirs = realloc(r->dirs, (r->n + 1) * sizeof(r->dirs[0]));
    if (r->dirs == NULL)
      abort();
    /* below the top: watched from it, the directories on the way too */
    bool in_worktree = resolved != NULL && at_or_below(c->worktree, resolved);
    r->dirs[r->n++] = (struct run_path_dir){
        .dir = in_worktree ? xstrdup(resolved + strlen(c->worktree)) : xstrdup(clean),
        .in_worktree = in_worktree};
  }
  for (size_t i = 0; i < n; i++) {
    free(t[i].given);
    free(t[i].real);
  }
}

/* name in the absolute PATH entry dir (clean) when it is there to run, and neither dir nor the
 * file's real path is in a tree the run writes (a host link into the worktree counts as it) */
static char *program_in(const struct run_tree *t, size_t n, const char *dir, const char *name) {
  struct stat st, file;
  cleanup_free char *resolved = resolve_entry(dir, &st);
  cleanup_free char *path = xasprintf("%s/%s", strcmp(dir, "/") != 0 ? dir : "", name);
  cleanup_free char *real = NULL;
  if (resolved == NULL || run_writes(t, n, dir, resolved, &st))
    return NULL;
  real = real_of(path, &file);
  if (real == NULL || !S_ISREG(file.st_mode) || (file.st_mode & 0111) == 0 ||
      run_writes(t, n, real, real, &file))
    return NULL;
  return xstrdup(path);
}

#define PROGRAM_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+-"

char *sandbox_git_host_program(const char *top, const oci_strv *writable, const char *name) {
  const char *path = getenv("PATH") != NULL ? getenv("PATH") : "/usr/bin:/bin";
  size_t room = 1 + (writable != NULL ? writable->len : 0);
  cleanup_free struct run_tree *t = xmalloc0(room * sizeof(*t));
  size_t n = run_trees_find(top, writable, t);
  char *found = NULL;
  for (const char *p = path; found == NULL && *p != '\0'; p += *p == ':') {
    size_t len = strcspn(p, ":");
    cleanup_free char *entry = p[0] == '/' ? xasprintf("%.*s", (int)len, p) : NULL;
    cleanup_free char *clean = entry != NULL ? path_clean_abs(entry) : NULL;
    p += len;
    /* git runs a value with a space or a quote through the shell, which would split it */
    if (clean != NULL && clean[strspn(clean, PROGRAM_CHARS)] == '\0')
      found = program_in(t, n, clean, name);
  }
  for (size_t i = 0; i < n; i++) {
    free(t[i].given);
    free(t[i].real);
  }
  return found;
}

static void run_path_free(struct run_path *r) {
  for (size_t i = 0; i < r->n; i++)
    free(r->dirs[i].dir);
  free(r->dirs);
}

/* A command word without a `/` is looked up on PATH, and an empty, `.` or relative entry of it is
 * taken from the cwd, which for the host's git running a driver is the worktree's top (review26
 * D3 b: with `PATH=:/usr/bin` a run planting a top-level `myfilt` had `filter.x.clean = myfilt`
 * run it; `./node_modules/.bin` first in PATH the same). So the word is watched in each such
 * entry, as git's and the shell's lookup would reach it there, and in each absolute entry at or
 * below the worktree or a writablePaths entry (review27 E6: `<top>/bin`, `~/.npm-global/bin` with
 * `~/.npm-global` writable). The PATH is fsrun's own: the host git's when both come from one
 * environment (Fusion's adapter passes its process's to both); any other absolute entry is the
 * host's to keep. */
static void add_path_command(struct collect *c, const char *key, const char *value, const char *w,
                             const char *search) {
  const char *path = search != NULL ? search : getenv("PATH");
  __attribute__((cleanup(run_path_free))) struct run_path assigned = {0};
  const struct run_path *r = c->run_path;
  if (path == NULL)
    return; /* the default search path: absolute */
  for (const char *p = path;; p++) {
    size_t n = strcspn(p, ":");
    if (n == 0 || p[0] != '/') {
      cleanup_free char *name = n == 0 ? xstrdup(w) : xasprintf("%.*s/%s", (int)n, p, w);
      add_pointer(c, key, value, c->worktree, name);
    }
    p += n;
    if (*p == '\0')
      break;
  }
  if (c->run_path == NULL)
    return;
  if (search != NULL) { /* `PATH=...` before the command: its own entries, found for it alone */
    assigned.top = c->run_path->top;
    run_path_find(c, search, &assigned);
    r = &assigned;
  } else if (!c->run_path->found) {
    run_path_find(c, path, c->run_path);
  }
  for (size_t i = 0; i < r->n; i++) {
    const struct run_path_dir *d = &r->dirs[i];
    cleanup_free char *name =
        d->in_worktree ? xasprintf("%s%s%s", d->dir[0] ? d->dir + 1 : "", d->dir[0] ? "/" : "", w)
                       : xasprintf("%s/%s", d->dir, w);
    add_pointer(c, key, value, c->worktree, name);
  }
}

/* sh, bash, dash, zsh, ksh: with `-c` their first word starts a command string */
static bool shell_word(const char *w) {
  static const char *const names[] = {"sh", "bash", "dash", "zsh", "ksh"};
  const char *base = strrchr(w, '/');
  base = base != NULL ? base + 1 : w;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(base, names[i]) == 0)
      return true;
  return false;
}

static void add_word(struct collect *c, const char *key, const char *value, const char *w,
                     struct words *s);
/* a word a runner runs besides its command (`su -s SHELL`): watched as a command word is, on
 * PATH without a `/`, as a file with one; an expansion: not known, a standing entry */
static void add_program_word(struct collect *c, const char *key, const char *value, const char *w,
                             const struct words *s) {
  if (strpbrk(w, "$`*?[") != NULL)
    add_unknown_command(c->g, key, value);
  else if (strchr(w, '/') == NULL)
    add_path_command(c, key, value, w, s->path);
  else
    add_file_word(c, key, value, w, NULL);
}

/* A runner's word before its command: true when w was one (an option, its value, an operand), or
 * says that no command comes (`taskset -p`: the words after it are arguments), or held the
 * command (`su -cmyfilt`: read as the command word). False: w is the command, or (at_command
 * false) the first of the arguments (`su USER x.sh`: the shell's script, a file word). */
static bool runner_word_before_command(struct collect *c, const char *key, const char *value,
                                       const char *w, struct words *s) {
  size_t at;
  const char *word = w;
  enum git_runner_word kind = git_runner_word(&s->runner, w);
  /* env -S's options attached (`-S-u`, `-S-S-i`): read in place, each a shorter rest of w */
  while (kind == GIT_RUNNER_ATTACHED_ARGUMENT && w[s->runner.attached] == '-') {
    w += s->runner.attached;
    s->runner.attached = 0;
    kind = git_runner_word(&s->runner, w);
  }
  /* env -S's own syntax (`\_` separates, `\c` ends, `#` a comment: review30 H5) is not split
   * here: what it names is not known, a standing entry (reported and disarmed every run) */
  if (s->runner.split && strpbrk(word, "\\#") != NULL)
    add_unknown_command(c->g, key, value);
  switch (kind) {
  case GIT_RUNNER_BEFORE:
    return true;
  case GIT_RUNNER_NO_COMMAND:
    s->runner.runner = NULL;
    s->at_command = false;
    return true;
  case GIT_RUNNER_ATTACHED: /* one level: the rest of one word, which holds no other */
    at = s->runner.attached;
    s->runner = (struct git_runner_state){0};
    add_word(c, key, value, w + at, s);
    return true;
  case GIT_RUNNER_ATTACHED_ARGUMENT: /* no option: the command (or VAR=value), one level */
    at = s->runner.attached;
    s->runner.attached = 0;
    add_word(c, key, value, w + at, s);
    return true;
  case GIT_RUNNER_PROGRAM:
    add_program_word(c, key, value, w + s->runner.attached, s);
    s->runner.attached = 0;
    return true;
  case GIT_RUNNER_ARGUMENTS:
    s->runner.runner = NULL;
    s->at_command = false;
    return false;
  case GIT_RUNNER_COMMAND:
    break;
  }
  return false;
}

/* What a shell's word before its first operand is (review29 G3: `sh -o errexit -c X`) */
enum shell_word {
  SHELL_OPTION,  /* an option (`-e`, `-c`, `+o`), or `-o`'s value: nothing to watch */
  SHELL_COMMAND, /* the operand after `-c`: a command string, whose first word is a command */
  SHELL_SCRIPT,  /* the operand without `-c`: a script file (`sh tools/x.sh`), a file word */
  SHELL_LONG,    /* `--rcfile=tools/rc`: an option whose value may name a file */
};

/* sh/bash options are read as the shell reads them: letters bundled, `-o`/`+o`/`-O`/`+O` take the
 * next word, `-c` anywhere among them makes the first operand a command string (quotes break
 * words here: its first word) */
static enum shell_word shell_word_kind(struct words *s, const char *w) {
  if (s->shell_value) {
    s->shell_value = false;
    return SHELL_OPTION;
  }
  if (w[0] == '-' && w[1] == '-')
    return w[2] == '\0' ? SHELL_OPTION : SHELL_LONG;
  if ((w[0] == '-' || w[0] == '+') && w[1] != '\0') {
    s->shell_c = s->shell_c || (w[0] == '-' && strchr(w + 1, 'c') != NULL);
    s->shell_value = strpbrk(w + 1, "oO") != NULL;
    return SHELL_OPTION;
  }
  s->shell = false;
  return s->shell_c ? SHELL_COMMAND : SHELL_SCRIPT;
}

/* git's own dispatch (review29 G3): `git WORD` runs `git-WORD` from git's exec path, then PATH,
 * so the subcommand after git's options is watched on PATH as that command; true when w was
 * `-c`/`-C`'s value */
static bool git_subcommand(struct collect *c, const char *key, const char *value, const char *w,
                           struct words *s) {
  if (s->git_value) {
    s->git_value = false;
    return true;
  }
  if (w[0] == '-') {
    s->git_value = strcmp(w, "-c") == 0 || strcmp(w, "-C") == 0;
    return false;
  }
  s->git = false;
  if (strpbrk(w, "/$`*?[%") == NULL) {
    cleanup_free char *name = xasprintf("git-%s", w);
    add_path_command(c, key, value, name, s->path);
  }
  return false;
}

/* An option with its value attached names a file as well as a word does (review26 D3 c):
 * `--require=./hook.js`, `--rcfile=tools/rc`, `-rtools/x`, `-Ilib`, `-ftools/x.awk`. The value is
 * watched like a file word; a short option's letters (`-rf`) watched as a top-level name cost one
 * digest of an absent path, a false alarm only if such a file changes. */
static void add_option_value(struct collect *c, const char *key, const char *value, const char *w,
                             const char *const *suffixes) {
  const char *v = NULL;
  if (w[1] == '-')
    v = strchr(w, '=') != NULL ? strchr(w, '=') + 1 : NULL;
  else if (w[1] != '\0' && w[2] != '\0')
    v = w + 2;
  if (v != NULL && v[0] != '\0' && strcmp(v, ".") != 0 && strcmp(v, "./") != 0 &&
      strcmp(v, "..") != 0)
    add_file_word(c, key, value, v, suffixes);
}

/* `VAR=value` before the command: the value names where the command loads code from as often as
 * a word does (review26 D3 d): `PYTHONPATH=tools python3 -m filt`, `NODE_PATH=lib`,
 * `NODE_OPTIONS=--require=./x.js`, `PATH=./bin:$PATH`. Each `:`-separated part is watched as a
 * file word (an option as an option's value); an expansion names what fsrun cannot know (a
 * standing entry, as a word's); `.` is the top itself. */
static void add_assignment(struct collect *c, const char *key, const char *value, const char *v) {
  if (strpbrk(v, "$`") != NULL) {
    add_unknown_command(c->g, key, value);
    return;
  }
  while (*v != '\0') {
    size_t n = strcspn(v, ":");
    cleanup_free char *part = xasprintf("%.*s", (int)n, v);
    v += n + (v[n] == ':');
    if (part[0] == '-')
      add_option_value(c, key, value, part, NULL);
    else if (part[0] != '\0' && strchr(part, '%') == NULL && strcmp(part, ".") != 0 &&
             strcmp(part, "./") != 0 && strcmp(part, "..") != 0)
      add_file_word(c, key, value, part, NULL);
  }
}

/* one word of a command value: the command itself is a path only with a `/` (else found on PATH);
 * any other word not an option may be a file an interpreter runs from the worktree's top (`sh
 * clean.sh`, `node x.js`) */
static void add_word(struct collect *c, const char *key, const char *value, const char *w,
                     struct words *s) {
  bool command = s->at_command, module = s->module_next;
  s->module_next = false;
  if (command && s->runner.runner != NULL && s->runner.skip_next) {
    git_runner_word(&s->runner, w);
    return; /* a runner's option's value (`env -u NAME`) */
  }
  if (command && strncmp(w, "PATH=", 5) == 0 && strpbrk(w, "$`") == NULL) {
    free(s->path); /* search dirs, not files (review29 G8): the command is watched in them */
    s->path = xstrdup(w + 5);
    return;
  }
  if (command && w[0] != '=' && w[0] != '-' && strchr(w, '=') != NULL) {
    add_assignment(c, key, value, strchr(w, '=') + 1);
    return; /* VAR=value before the command */
  }
  if (command && s->runner.runner != NULL && runner_word_before_command(c, key, value, w, s))
    return;                /* a runner's option, its value or operand: the command comes after it */
  command = s->at_command; /* false: su's arguments begin at w */
  if (!command && s->shell) {
    switch (shell_word_kind(s, w)) {
    case SHELL_OPTION:
      return;
    case SHELL_COMMAND: /* `sh -c 'X ...'`: X read as a command (its runner, VAR=value...) */
      s->at_command = true;
      add_word(c, key, value, w, s);
      return;
    case SHELL_SCRIPT:
    case SHELL_LONG:
      break;
    }
  }
  if (!command && s->git && git_subcommand(c, key, value, w, s))
    return;
  s->at_command = false;
  if (command) {
    s->runner = (struct git_runner_state){.runner = git_runner_of(w)};
    s->at_command = s->runner.runner != NULL;
    s->shell = shell_word(w);
    s->shell_c = s->shell_value = false;
    s->git = strcmp(strrchr(w, '/') != NULL ? strrchr(w, '/') + 1 : w, "git") == 0;
  }
  if (s->suffixes == NULL)
    s->suffixes = interpreter_suffixes(w); /* the command, or env's, npx's */
  if (python_word(w)) {                    /* the command, or env's */
    s->python = true;
    add_python_dir(c, key, value, c->worktree); /* `-c`, stdin: the current directory */
  }
  if (strpbrk(w, "$`*?[") != NULL) {
    add_unknown_command(c->g, key, value);
    return;
  }
  if (strchr(w, '%') != NULL)
    return; /* git's own placeholders (%f, %O, ...): the file it hands the driver, not code */
  if (w[0] == '-') {
    s->module_next = strcmp(w, "-m") == 0;
    if (strncmp(w, "-m", 2) == 0 && w[2] != '\0')
      add_module(c, key, value, w + 2); /* `-mpre_commit` */
    else
      add_option_value(c, key, value, w, s->suffixes);
    return;
  }
  if (module) {
    s->python = false;
    add_module(c, key, value, w);
    return;
  }
  if (command && strchr(w, '/') == NULL) {
    add_path_command(c, key, value, w, s->path);
    return;
  }
  if (strcmp(w, ".") == 0 || strcmp(w, "..") == 0 || strcmp(w, "./") == 0)
    return; /* the top itself, whose every new file would be a change */
  if (s->python && !python_word(w)) {
    s->python = false;
    add_python_script(c, key, value, w);
  }
  add_file_word(c, key, value, w, s->suffixes);
}

/* a credential helper that is neither `!shell` nor an absolute path: git runs `git
 * credential-NAME`, found as `git-credential-NAME` in git's exec path, then PATH
 * (gitcredentials(7), review29 G3) */
static void add_credential_helper(struct collect *c, const char *key, const char *value) {
  size_t n = strcspn(value, WORD_BREAK COMMAND_BREAK);
  cleanup_free char *name = xasprintf("git-credential-%.*s", (int)n, value);
  if (n > 0 && strcspn(value, "/$`*?[%") >= n)
    add_path_command(c, key, value, name, NULL);
}

/* each word of a shell command that may name a file (no expansion), as the shell splits it
 * (roughly: quotes break words, `;|&()` start another command) */
static void add_command_words(struct collect *c, const char *key, const char *value) {
  struct words state = {.at_command = true};
  const char *s = value;
  if (strcmp(key, "credential.helper") == 0 || sandbox_git_key_is(key, "credential", "helper")) {
    if (s[0] == '!')
      s++;
    else if (s[0] != '/')
      add_credential_helper(c, key, value);
  }
  while (*s != '\0') {
    size_t n = strcspn(s, WORD_BREAK COMMAND_BREAK);
    cleanup_free char *w = NULL;
    if (n == 0) {
      if (strchr(COMMAND_BREAK, *s) != NULL) {
        free(state.path);
        state = (struct words){.at_command = true};
      }
      s++;
      continue;
    }
    w = xasprintf("%.*s", (int)n, s);
    s += n;
    add_word(c, key, value, w, &state);
  }
  free(state.path);
}

/* husky v9: core.hooksPath=.husky/_, whose stubs run .husky/<hook> */
static void add_hooks_path(struct collect *c, const char *key, const char *value) {
  size_t n = strlen(value);
  add_pointer(c, key, value, c->worktree, value);
  if (n > 2 && strcmp(value + n - 2, "/_") == 0) {
    cleanup_free char *parent = xstrdup(value);
    parent[n - 2] = '\0';
    add_pointer(c, key, value, c->worktree, parent);
  }
}

static void add_global(struct sandbox_git_run *g, char *path);

static void on_variable(void *arg, const char *key, const char *value) {
  struct collect *c = arg;
  if (value == NULL || value[0] == '\0')
    return;
  const char *unread;
  if (strcmp(key, "core.excludesfile") == 0) {
    /* the global ignore file it names (relative: from the top, git's usual cwd) */
    char *path = resolve(c->worktree, value, &unread);
    if (path != NULL)
      add_global(c->g, path);
  } else if (strcmp(key, "core.hookspath") == 0) {
    add_hooks_path(c, "core.hooksPath", value);
    free(*c->hooks_dir);
    *c->hooks_dir = resolve(c->worktree, value, &unread);
  } else if (sandbox_git_runs_key(key)) {
    add_command_words(c, key, value);
  } else if (sandbox_git_key_includes(key)) {
    cleanup_free char *path = resolve(c->config_dir, value, &unread);
    add_pointer(c, key, value, c->config_dir, value);
    if (path != NULL && c->depth < INCLUDE_MAX_DEPTH && *c->reads >= INCLUDE_MAX_READS)
      add_standing(c->g, path, "more included files than fsrun reads");
    else if (path != NULL && c->depth < INCLUDE_MAX_DEPTH) {
      struct collect inner = *c;
      cleanup_free char *dir = xstrdup(path);
      char *slash = strrchr(dir, '/');
      if (slash != NULL)
        *slash = '\0';
      inner.config_dir = dir;
      inner.depth++;
      (*c->reads)++;
      read_config_file(&inner, path);
    }
  }
}

char *sandbox_git_config_read_text(const struct sandbox_git_pins *pins, const char *path,
                                   size_t *len, bool *too_big) {
  struct stat st;
  cleanup_close int fd = sandbox_git_config_open(pins, path, &st);
  char *text;
  ssize_t n;
  *too_big = fd >= 0 && st.st_size > CONFIG_MAX_BYTES;
  if (fd < 0 || *too_big)
    return NULL; /* errno: why (ENOENT: git skips it too) */
  /* as much as fstat said (a file that grew meanwhile: that far); the last byte stays NUL */
  text = xmalloc0((size_t)st.st_size + 1);
  n = safe_read_all(fd, text, (size_t)st.st_size);
  if (n < 0) {
    free(text);
    return NULL;
  }
  *len = (size_t)n;
  return text;
}

static void read_config_file(struct collect *c, const char *path) {
  size_t len = 0;
  bool too_big;
  cleanup_free char *text = sandbox_git_config_read_text(c->pins, path, &len, &too_big);
  if (too_big)
    add_standing(c->g, path, "larger than fsrun reads");
  else if (text == NULL && errno == ELOOP)
    add_standing(c->g, path, "a link fsrun does not follow: git's own cwd or fds");
  else if (text == NULL && errno == ESTALE)
    add_standing(c->g, path, "below a worktree whose name led elsewhere");
  if (text != NULL && !git_config_each(text, len, on_variable, c))
    add_standing(c->g, path, "a line git refuses: what follows it not read");
}

/* `config:global:<path>`: a file git reads as the user's own config, content digested too */
static void add_global(struct sandbox_git_run *g, char *path) {
  size_t n = g->n_pointers;
  sandbox_git_pointer_add(g, printable(xasprintf("config:global:%.*s", ENTRY_VALUE_MAX, path)),
                          path, false);
  if (g->n_pointers > n)
    g->pointers[n].global = true;
}

/* The user's own git config files, from fsrun's environment, each NULL where it has none: one
 * list for what is watched (add_globals) and what is read (read_user_configs). */
struct user_configs {
  char *config_home; /* git's `${XDG_CONFIG_HOME:-$HOME/.config}` */
  char *xdg;         /* its git/config */
  char *home;        /* ~/.gitconfig */
  char *global;      /* GIT_CONFIG_GLOBAL, absolute */
};

static void user_configs_find(struct user_configs *u) {
  const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
  const char *global = getenv("GIT_CONFIG_GLOBAL");
  bool has_home = home != NULL && home[0] == '/';
  u->config_home = xdg != NULL && xdg[0] == '/' ? xstrdup(xdg)
                   : has_home                   ? xasprintf("%s/.config", home)
                                                : NULL;
  u->xdg = u->config_home != NULL ? xasprintf("%s/git/config", u->config_home) : NULL;
  u->home = has_home ? xasprintf("%s/.gitconfig", home) : NULL;
  u->global = global != NULL && global[0] == '/' ? xstrdup(global) : NULL;
}

static void user_configs_free(struct user_configs *u) {
  free(u->config_home);
  free(u->xdg);
  free(u->home);
  free(u->global);
}

/* The user's global git config and attributes (GIT_CONFIG_GLOBAL too), git's global ignore file
 * (the one core.excludesFile names: on_variable), and husky v9's init.sh, which every husky hook
 * sources: a policy with ~/.config or $HOME writable lets the run write them, and the host's next
 * git reads them (review20 E, review22 F14). What they name: read_user_configs. */
static void add_globals(struct sandbox_git_run *g) {
  __attribute__((cleanup(user_configs_free))) struct user_configs u = {0};
  user_configs_find(&u);
  if (u.home != NULL)
    add_global(g, xstrdup(u.home));
  if (u.config_home != NULL) {
    add_global(g, xstrdup(u.xdg));
    add_global(g, xasprintf("%s/git/attributes", u.config_home));
    /* git's global ignore file: what it names drops out of the host's `git status` review */
    add_global(g, xasprintf("%s/git/ignore", u.config_home));
    add_global(g, xasprintf("%s/husky/init.sh", u.config_home));
  }
  if (u.global != NULL && strcmp(u.global, "/dev/null") != 0)
    add_global(g, xstrdup(u.global));
}

/* one config git reads besides the repository's, includes from its own dir */
static void read_user_config(struct collect *c, const char *path) {
  struct collect user = *c;
  cleanup_free char *dir = xstrdup(path);
  *strrchr(dir, '/') = '\0';
  user.config_dir = dir[0] != '\0' ? dir : "/";
  read_config_file(&user, path);
}

/* What the system's and the user's configs name, with the worktree as the base as for the
 * repository's (review22 F6): nbstripout `--install --global` runs `-m nbstripout` in every
 * repository. Each file git may read (fsrun's environment need not be the host git's: all of
 * them), before the repository's config as git reads them (its core.hooksPath wins). */
static void read_user_configs(struct collect *c) {
  __attribute__((cleanup(user_configs_free))) struct user_configs u = {0};
  const char *system = getenv("GIT_CONFIG_SYSTEM");
  user_configs_find(&u);
  read_user_config(c, "/etc/gitconfig");
  if (system != NULL && system[0] == '/')
    read_user_config(c, system);
  /* git's order: the XDG one, ~/.gitconfig, then GIT_CONFIG_GLOBAL */
  const char *const user[] = {u.xdg, u.home, u.global};
  for (size_t i = 0; i < sizeof(user) / sizeof(user[0]); i++)
    if (user[i] != NULL)
      read_user_config(c, user[i]);
}

bool sandbox_git_module_names_files(const struct sandbox_git_run *g, const char *module,
                                    const char *checkout) {
  struct sandbox_git_run found = {.writable = g->writable};
  __attribute__((cleanup(run_path_free))) struct run_path run_path = {
      .top = g->worktree != NULL ? g->worktree : checkout};
  cleanup_free char *hooks_dir = NULL;
  cleanup_free char *config = xasprintf("%s/config", module);
  cleanup_free char *config_wt = xasprintf("%s/config.worktree", module);
  size_t user_reads = 0, reads = 0, n_user;
  struct sandbox_git_pins pins = {
      .worktree = NULL, .top = -1, .common_dir = g->common_dir, .common = g->common_fd};
  /* relative words resolve from the checkout: git runs a submodule's drivers there */
  struct collect c = {.g = &found,
                      .pins = &pins,
                      .worktree = checkout,
                      .config_dir = module,
                      .hooks_dir = &hooks_dir,
                      .reads = &user_reads,
                      .run_path = &run_path};
  bool names;
  read_user_configs(&c);
  n_user = found.n_pointers;
  c.reads = &reads;
  read_config_file(&c, config);
  read_config_file(&c, config_wt);
  /* the module's own: fsrun watches none of what they name, from anywhere */
  names = found.pointers_dropped || found.n_pointers > n_user;
  /* the system's and user's: from the top (config_paths), not from this checkout */
  for (size_t i = 0; !names && i < n_user; i++)
    names = found.pointers[i].path[0] != '\0' && at_or_below(checkout, found.pointers[i].path);
  sandbox_git_pointers_free(&found);
  return names;
}

/* the worktree's top for the reads of config_paths: the one held (the walk's, for a final walk),
 * else one checked now and held until its end (not through the run: an fd of the host's tree) */
static bool hold_top(struct sandbox_git_run *g, const char *worktree) {
  cleanup_error fsrun_error_t err = NULL;
  if (g->top_held)
    return false;
  sandbox_git_top_hold(g, sandbox_git_top_checked(worktree, &err));
  if (err != NULL)
    log_warning("git: %s: what the config names below it is not read", err->msg);
  return true;
}

void sandbox_git_config_paths(struct sandbox_git_run *g, const char *worktree) {
  cleanup_free char *hooks_dir = NULL;
  __attribute__((cleanup(run_path_free))) struct run_path run_path = {.top = worktree};
  size_t reads = 0;
  bool held_here = hold_top(g, worktree);
  struct sandbox_git_pins pins = sandbox_git_pins_of(g, worktree);
  struct collect c = {.g = g,
                      .pins = &pins,
                      .worktree = worktree,
                      .config_dir = g->common_dir,
                      .hooks_dir = &hooks_dir,
                      .reads = &reads,
                      .run_path = &run_path};
  cleanup_free char *config = xasprintf("%s/config", g->common_dir);
  cleanup_free char *common_wt = xasprintf("%s/config.worktree", g->common_dir);
  cleanup_free char *admin_dir = g->admin[0] ? xasprintf("%s/%s", g->common_dir, g->admin) : NULL;
  cleanup_free char *admin_wt =
      admin_dir != NULL ? xasprintf("%s/config.worktree", admin_dir) : NULL;
  free(g->worktree);
  g->worktree = xstrdup(worktree);
  size_t user_reads = 0;
  struct collect user = c;
  user.reads = &user_reads; /* the repository's includes keep their own budget */
  read_user_configs(&user);
  read_config_file(&c, config);
  /* a relative include.path is taken from the including file's dir, this one's too (git does) */
  if (admin_dir != NULL)
    c.config_dir = admin_dir;
  read_config_file(&c, admin_wt != NULL ? admin_wt : common_wt);
  if (hooks_dir == NULL)
    hooks_dir = xasprintf("%s/hooks", g->common_dir);
  sandbox_git_hook_managers(g, &pins, hooks_dir);
  add_globals(g);
  for (size_t i = 0; i < g->n_pointers; i++)
    g->pointers[i].before = pointer_digest(&g->pointers[i], &pins);
  if (held_here)
    sandbox_git_top_drop(g);
}

/* --- what each path is, before and after ---------------------------------------------------- */

/* A digest of a pointer's files' identities and change times: the path, not followed and followed,
 * the directories on the way to it below the worktree's top (a directory renamed into place
 * changes only its own ctime; not the top itself: any new file there changes it) and, a directory,
 * everything in it up to WALK_MAX_DEPTH levels (more than WALK_MAX_ENTRIES: unknown). SHA-256 of
 * each entry's, sorted: the same whatever order readdir gives, and no sum a run could aim at. Any
 * write, chmod, rename, link or replacement changes a ctime or an inode where the filesystem stamps
 * writes; where it may not (file_time_fs_stamps_writes: tmpfs, FUSE, network filesystems) or its
 * clock is coarse, a file's content is read whole, up to CONTENT_WHOLE_MAX_BYTES a pointer; past
 * that the digest is unknown, never "unchanged" (review24 B0, B1). On ext4/XFS/Btrfs a file over
 * CONTENT_MAX_FILE is taken by identity and ctime: their page_mkwrite stamps the first write to
 * each mapped page too. */
struct digest {
  uint8_t (*sums)[32]; /* each entry's */
  size_t entries, room;
  uint64_t bytes; /* of content read: CONTENT_MAX_BYTES small files, CONTENT_WHOLE_MAX_BYTES all */
  bool content;   /* read small files: only in the worktree (not the caller's ~/.ssh, say) */
  bool unknown;   /* a file whose content had to be read was not: past the budget */
  dev_t fs_dev;   /* the last filesystem seen, and whether it stamps writes (fs_known) */
  bool fs_known, fs_stamps;
};

static void digest_free(struct digest *d) {
  free(d->sums);
}

/* a change time of a grain of 1 ms or more (whole seconds, FAT's 2 s, exFAT's 10 ms: file-time.h):
 * a rewrite of the same size within it, long after the digest before the run, keeps the ctime */
static bool coarse_time(const struct stat *st) {
  return file_time_grain_ns(&st->st_ctim) >= 1000000;
}

/* whether a write to st's file moves its ctime: its filesystem's kind, learnt from fd once a dev */
static bool times_stamped(struct digest *d, int fd, const struct stat *st) {
  if (!d->fs_known || d->fs_dev != st->st_dev) {
    d->fs_stamps = file_time_fd_stamps_writes(fd);
    d->fs_dev = st->st_dev;
    d->fs_known = true;
  }
  return d->fs_stamps && !coarse_time(st);
}

/* SHA-256 of fd's content into out, at most max bytes (false: more, or a read failed) */
static bool hash_stream(int fd, uint64_t max, uint64_t *read_bytes, uint8_t out[32]) {
  struct sha256_ctx c;
  cleanup_free char *buf = xmalloc0(CONTENT_MAX_FILE);
  uint64_t total = 0;
  ssize_t r;
  sha256_init(&c);
  while ((r = read(fd, buf, CONTENT_MAX_FILE)) != 0) {
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (total += (uint64_t)r) > max)
      return false;
    sha256_update(&c, buf, (size_t)r);
  }
  sha256_final(&c, out);
  *read_bytes = total;
  return true;
}

/* The content of dir/name (followed or not), the regular file st says it is, into out (zeros:
 * not read). Small files in the worktree, and anywhere when the time is coarse (review23 A3):
 * a rewrite within one tick of the file clock keeps ctime, size and inode. Every file whose
 * filesystem may not stamp a write, whole (review24 B0/B1). Not blocking. */
static void content_hash(struct digest *d, int dir, const char *name, bool follow,
                         const struct stat *st, uint8_t out[32]) {
  cleanup_close int fd = -1;
  struct stat now;
  uint64_t len = (uint64_t)st->st_size, got = 0;
  bool small = (d->content || coarse_time(st)) && len <= CONTENT_MAX_FILE &&
               d->bytes + len <= CONTENT_MAX_BYTES;
  memset(out, 0, 32);
  if (!S_ISREG(st->st_mode) ||
      (!small && d->fs_known && d->fs_dev == st->st_dev && d->fs_stamps && !coarse_time(st)))
    return; /* identity and ctime tell */
  fd = open_regular_at(dir, name, follow, &now);
  if (fd < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
    return;
  if (!small && times_stamped(d, fd, st))
    return;
  if (!hash_stream(fd, CONTENT_WHOLE_MAX_BYTES - d->bytes, &got, out)) {
    d->unknown = true;
    memset(out, 0, 32);
    return;
  }
  d->bytes += got;
}

/* name, what st says of it (NULL: it is not there), and its content when read */
static void digest_add(struct digest *d, const char *where, const char *name, const struct stat *st,
                       const uint8_t content[32]) {
  uint64_t f[7] = {0};
  struct sha256_ctx c;
  if (st != NULL) {
    f[0] = (uint64_t)st->st_dev, f[1] = (uint64_t)st->st_ino, f[2] = (uint64_t)st->st_mode;
    f[3] = (uint64_t)st->st_size, f[4] = (uint64_t)st->st_ctim.tv_sec;
    f[5] = (uint64_t)st->st_ctim.tv_nsec, f[6] = 1;
  }
  if (d->entries == d->room) {
    d->room = d->room ? d->room * 2 : 64;
    d->sums = realloc(d->sums, d->room * sizeof(d->sums[0]));
    if (d->sums == NULL)
      abort();
  }
  sha256_init(&c);
  sha256_update(&c, where, strlen(where) + 1);
  sha256_update(&c, name, strlen(name) + 1);
  sha256_update(&c, f, sizeof(f));
  sha256_update(&c, content, 32);
  sha256_final(&c, d->sums[d->entries++]);
}

static int sum_cmp(const void *a, const void *b) {
  return memcmp(a, b, 32);
}

/* an entry of a dir the digest walks (not followed), its content where content_hash reads it */
static void digest_entry(struct digest *d, int dir, const char *where, const char *name,
                         const struct stat *st) {
  uint8_t content[32];
  content_hash(d, dir, name, false, st, content);
  digest_add(d, where, name, st, content);
}

static struct sandbox_git_digest digest_end(struct digest *d) {
  struct sandbox_git_digest out = {.unknown = d->unknown};
  struct sha256_ctx c;
  if (d->entries > 0)
    qsort(d->sums, d->entries, sizeof(d->sums[0]), sum_cmp);
  sha256_init(&c);
  sha256_update(&c, d->sums, d->entries * sizeof(d->sums[0]));
  sha256_final(&c, out.sum);
  return out;
}

bool sandbox_git_digest_same(const struct sandbox_git_digest *a,
                             const struct sandbox_git_digest *b) {
  return !a->unknown && !b->unknown && memcmp(a->sum, b->sum, sizeof(a->sum)) == 0;
}

static void digest_tree(struct digest *d, int dir, const char *where, int depth) {
  cleanup_close int fd = dup(dir);
  cleanup_dir DIR *stream = fd >= 0 ? fdopendir(fd) : NULL;
  struct dirent *e;
  if (stream == NULL)
    return;
  fd = -1; /* the stream owns it */
  while ((e = readdir(stream)) != NULL) {
    struct stat st;
    cleanup_close int sub = -1;
    cleanup_free char *sub_where = NULL;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (d->entries >= WALK_MAX_ENTRIES) {
      /* an entry past the bound is never compared: unknown, never "unchanged" (review25 C6) */
      d->unknown = true;
      return;
    }
    if (fstatat(dirfd(stream), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    digest_entry(d, dirfd(stream), where, e->d_name, &st);
    if (!S_ISDIR(st.st_mode) || depth + 1 >= WALK_MAX_DEPTH)
      continue;
    sub = openat(dirfd(stream), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    sub_where = xasprintf("%s/%s", where, e->d_name);
    if (sub >= 0)
      digest_tree(d, sub, sub_where, depth + 1);
  }
}

static void digest_path(struct digest *d, const struct sandbox_git_pins *pins, const char *tag,
                        const char *path, bool follow) {
  struct stat st;
  const char *rest;
  int at = sandbox_git_pinned_at(pins, path, &rest);
  int r = at != -1 ? fstatat(at, rest, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) : -1;
  uint8_t content[32] = {0};
  /* the path's own file, reached as git reaches it (links followed) */
  if (r == 0 && follow)
    content_hash(d, at, rest, true, &st, content);
  digest_add(d, tag, path, r == 0 ? &st : NULL, content);
}

static void digest_way(struct digest *d, const struct sandbox_git_pins *pins, const char *path) {
  cleanup_free char *p = xstrdup(path);
  char *name = p + strlen(pins->worktree) + 1;
  for (char *s = name; (s = strchr(s, '/')) != NULL; name = ++s) {
    size_t len = (size_t)(s - name);
    /* `.` and `..` lead to the top or above it */
    if ((len == 1 && name[0] == '.') || (len == 2 && strncmp(name, "..", 2) == 0))
      continue;
    *s = '\0';
    digest_path(d, pins, "way", p, false);
    *s = '/';
  }
}

/* --- what Python may import from a dir ------------------------------------------------------ */

/* a module name: Python's identifiers (a byte over 0x7f taken as a letter: PEP 3131's) */
static bool python_name(const char *s, size_t n) {
  if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || (unsigned char)s[i] > 0x7f))
      return false;
  return true;
}

/* `X.py`, `X.pyc` (sourceless), `X.so`, `X.<abi>.so`: a file Python imports as module X */
static bool python_module_file(const char *name) {
  const char *dot = strchr(name, '.');
  size_t len = strlen(name);
  if (dot == NULL || !python_name(name, (size_t)(dot - name)))
    return false;
  return strcmp(dot, ".py") == 0 || strcmp(dot, ".pyc") == 0 ||
         (len >= 3 && strcmp(name + len - 3, ".so") == 0);
}

/* a package's `__init__.*`, everything in `__pycache__`: in full */
static void digest_package(struct digest *d, int parent, const char *name) {
  cleanup_close int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  cleanup_dir DIR *stream = NULL;
  struct dirent *e;
  bool cache = strcmp(name, "__pycache__") == 0;
  if (fd < 0 || (stream = fdopendir(fd)) == NULL)
    return;
  fd = -1; /* the stream owns it */
  while ((e = readdir(stream)) != NULL) {
    struct stat st;
    if ((!cache && strncmp(e->d_name, "__init__.", 9) != 0) || strcmp(e->d_name, ".") == 0 ||
        strcmp(e->d_name, "..") == 0 ||
        fstatat(dirfd(stream), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    digest_entry(d, dirfd(stream), name, e->d_name, &st);
  }
}

/* a directory's identity without its ctime and size, which move with every entry made in it */
static const struct stat *identity(struct stat *st) {
  if (S_ISDIR(st->st_mode))
    *st = (struct stat){.st_dev = st->st_dev, .st_ino = st->st_ino, .st_mode = st->st_mode};
  return st;
}

/* Each entry of dir Python may import (review22 F8): modules' files in full (followed too), each
 * package-named directory's identity and `__init__.*`, `__pycache__`. Not a new `build/`'s content
 * or a directory's ctime: a file written in `src/` is no import of the top. Any change is the
 * driver's: a repo editing its own top-level `setup.py` is a false alarm, cheaper than a miss. */
static void digest_python_dir(struct digest *d, const struct sandbox_git_pins *pins,
                              const char *path) {
  cleanup_close int fd = sandbox_git_pinned_open_dir(pins, path);
  cleanup_dir DIR *stream = NULL;
  struct dirent *e;
  if (fd < 0 || (stream = fdopendir(fd)) == NULL)
    return;
  fd = -1; /* the stream owns it */
  while ((e = readdir(stream)) != NULL) {
    struct stat st, now;
    int dir = dirfd(stream);
    bool module = python_module_file(e->d_name);
    if ((!module && !python_name(e->d_name, strlen(e->d_name))) ||
        fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        (!module && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)))
      continue; /* a file `README` is no module */
    uint8_t content[32];
    content_hash(d, dir, e->d_name, false, &st, content);
    digest_add(d, "py", e->d_name, identity(&st), content);
    if (S_ISLNK(st.st_mode) && fstatat(dir, e->d_name, &now, 0) == 0) {
      content_hash(d, dir, e->d_name, true, &now, content);
      digest_add(d, "py-followed", e->d_name, identity(&now), content);
    }
    if (!module)
      digest_package(d, dir, e->d_name);
  }
}

/* The digest of p's files, reached through pins: below a top not held (its name led elsewhere),
 * unknown, reported; never what another tree has at that name. */
static struct sandbox_git_digest pointer_digest(const struct sandbox_git_pointer *p,
                                                const struct sandbox_git_pins *pins) {
  size_t top = strlen(pins->worktree);
  const char *rest;
  __attribute__((cleanup(digest_free))) struct digest d = {
      .content = p->global || (strncmp(p->path, pins->worktree, top) == 0 &&
                               (p->path[top] == '/' || p->path[top] == '\0'))};
  cleanup_close int dir = -1;
  if (sandbox_git_pinned_at(pins, p->path, &rest) == -1) {
    d.unknown = true;
    return digest_end(&d);
  }
  if (p->python_top) {
    digest_python_dir(&d, pins, p->path);
    return digest_end(&d);
  }
  digest_path(&d, pins, "lstat", p->path, false);
  digest_path(&d, pins, "stat", p->path, true);
  if (p->below_top)
    digest_way(&d, pins, p->path);
  dir = sandbox_git_pinned_open_dir(pins, p->path);
  if (dir >= 0)
    digest_tree(&d, dir, "", 0);
  return digest_end(&d);
}

static bool listed(char **v, const char *s) {
  for (char **p = v; p != NULL && *p != NULL; p++)
    if (strcmp(*p, s) == 0)
      return true;
  return false;
}

void sandbox_git_config_tamper(struct sandbox_git_run *g, const char *worktree, char ***tamper) {
  size_t n = 0, known = g->n_pointers;
  struct sandbox_git_pins pins;
  /* the walk's top (sandbox_git_tamper), else one checked now: kept for hostGitArgs' reread */
  hold_top(g, worktree);
  pins = sandbox_git_pins_of(g, worktree);
  while (*tamper != NULL && (*tamper)[n] != NULL)
    n++;
  /* every digest is taken (a task container keeps them: exec-git-pointers.c), each once */
  for (size_t i = 0; i < known; i++) {
    struct sandbox_git_pointer *p = &g->pointers[i];
    p->after = pointer_digest(p, &pins);
    /* uncapped here (at most POINTERS_MAX): the settle puts them before the nested paths */
    if ((p->standing || p->appeared || !sandbox_git_digest_same(&p->before, &p->after)) &&
        !listed(*tamper, p->entry))
      sandbox_git_strv_push(tamper, &n, p->entry);
  }
  if (g->pointers_dropped)
    sandbox_git_strv_push(tamper, &n, "config:unread: (more paths named than fsrun watches)");
  sandbox_git_hook_managers_tamper(g, &pins, tamper, &n);
  for (size_t i = known; i < g->n_pointers; i++)
    g->pointers[i].after = pointer_digest(&g->pointers[i], &pins);
  sandbox_git_tamper_settle(tamper);
}

void sandbox_git_pointers_free(struct sandbox_git_run *g) {
  for (size_t i = 0; i < g->n_pointers; i++) {
    free(g->pointers[i].entry);
    free(g->pointers[i].path);
  }
  free(g->pointers);
  g->pointers = NULL;
  g->n_pointers = 0;
  free(g->worktree);
  g->worktree = NULL;
  g->pointers_dropped = false;
  sandbox_git_strv_free(g->hook_files_before);
  g->hook_files_before = NULL;
  free(g->hook_config_name);
  g->hook_config_name = NULL;
  g->hook_managers = 0;
  sandbox_git_top_drop(g);
}
