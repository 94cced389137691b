/* git-config.c and sandbox-git-config-paths.c: the config syntax read as git reads it (quoted and
 * legacy subsections, escapes, comments, continuations, bare keys), and the entries a run's
 * changes to config-named files produce: husky v9's `.husky/_` (its stubs run `.husky/<hook>`), a
 * filter's script among its command's words, an included config. Content only: no timing (the
 * check compares what the files are, not a clock). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git-config.h"
#include "sandbox-git.h"
#include "tap.h"
#include "utils.h"

struct seen {
  char text[2048];
};

static void record(void *arg, const char *key, const char *value) {
  struct seen *s = arg;
  size_t n = strlen(s->text);
  snprintf(s->text + n, sizeof(s->text) - n, "%s=%s|", key, value ? value : "(bare)");
}

/* the length of d.k's value */
static void measure_value(void *arg, const char *key, const char *value) {
  if (strcmp(key, "d.k") == 0 && value != NULL)
    *(size_t *)arg = strlen(value);
}

/* text[0, len) read: the keys and values seen are want, then `(unread)` when the reader said it
 * stopped before the end (a line git refuses) */
static void expect_parse(const char *text, size_t len, const char *want, const char *what) {
  struct seen s = {""};
  if (!git_config_each(text, len, record, &s))
    strcat(s.text, "(unread)");
  tap_ok(strcmp(s.text, want) == 0, "%s: %s", what, s.text);
}

/* a literal's bytes, NULs inside it too */
#define EXPECT_PARSE(lit, want, what) expect_parse((lit), sizeof(lit) - 1, (want), (what))

static void test_syntax(void) {
  EXPECT_PARSE("# comment\n"
               "[Core]\n"
               "\tHooksPath = .husky ; cut\n"
               "[filter \"My.Lfs\"] clean = \"./a b\" %f\n"
               "[diff.X]\n"
               "  textconv = one \\\n two\n"
               "  binary\n"
               "[merge \"m\"]\n driver = \"q\\\"x\\\\\"  \n",
               "core.hookspath=.husky|filter.My.Lfs.clean=./a b %f|diff.x.textconv=one "
               " two|diff.x.binary=(bare)|merge.m.driver=q\"x\\|",
               "sections, subsections, escapes, comments, continuations");
  EXPECT_PARSE("[core]\nhooksPath = .a\n[broken\nhooksPath = .b\n", "core.hookspath=.a|(unread)",
               "stops at a line git refuses, and says so");
  /* a backslash as the text's last byte: in a buffer of its exact size, as read_text gives it
   * (ASan: nothing read past it; review20 J) */
  char *tail = strdup("[core]\n\thooksPath = x\\");
  expect_parse(tail, strlen(tail), "core.hookspath=x|",
               "a backslash at the very end ends the value");
  free(tail);
  EXPECT_PARSE("\xef\xbb\xbf[core]\r\n\thooksPath = .githooks\r\n", "core.hookspath=.githooks|",
               "a leading UTF-8 BOM is skipped");
  EXPECT_PARSE("[core]\n\xef\xbb\xbf[x]\nhooksPath = .b\n", "(unread)",
               "a BOM past the start is a line git refuses");
  /* a NUL byte, as git 2.39 reads it (review20 C): nothing in a comment, the end of a value as
   * git's callbacks see it (the line's rest still parsed), a refused line at a line's start */
  EXPECT_PARSE("[core]\n# a\0b\n\thooksPath = .githooks\n", "core.hookspath=.githooks|",
               "a NUL in a comment: read on");
  EXPECT_PARSE("[core]\n\thooksPath = .gith\0o\"o;\"ks ; c\n\tfsmonitor = ./m\n",
               "core.hookspath=.gith|core.fsmonitor=./m|",
               "a NUL in a value ends it, the file read on");
  EXPECT_PARSE("[core]\n\0hooksPath = .b\n", "(unread)",
               "a NUL at a line's start is a line git refuses");
  EXPECT_PARSE("[core]\n\thooksPath = a\\\0b\n", "(unread)",
               "a backslash before a NUL is no escape git knows");
}

/* a section or subsection of n times ch, then `]` and a variable (caller frees) */
static char *long_section(const char *head, size_t n, char ch, const char *tail) {
  char *s = xmalloc0(strlen(head) + n + strlen(tail) + 1);
  strcpy(s, head);
  memset(s + strlen(head), ch, n);
  strcat(s, tail);
  return s;
}

/* review22 F4: where the reader stopped or cut and git 2.39 read on (`git config -f F --list`
 * gives these keys and values): the keys after them are seen */
static void test_git_reads_on(void) {
  EXPECT_PARSE("orphan = 1\n[diff \"x\"]\n\ttextconv = t\n", "orphan=1|diff.x.textconv=t|",
               "a key before any section: its bare name, the rest read");
  EXPECT_PARSE("[user]\r\n\tx = a\\\r\nb\r\n[diff \"x\"]\r\n\ttextconv = t\r\n",
               "user.x=ab|diff.x.textconv=t|", "a backslash before CR LF continues the value");
  EXPECT_PARSE("[d]\n\tk = a\rb \r\n\tq = \"a\r\"\n", "d.k=a b|d.q=a\r|",
               "a CR alone: a blank outside quotes, kept inside");
  EXPECT_PARSE("[ \"x\"]\n\tk = 1\n", ".x.k=1|",
               "`[ \"x\"]`: git's section \"\" with a subsection");
  EXPECT_PARSE("[d]\n\tk = \"\" x\n\tl = a \t b  \n\tm = \" a \"  b  ;c\n",
               "d.k=x|d.l=a   b|d.m= a   b|", "blanks in a value, as git keeps them");
  EXPECT_PARSE("[d \"a\0b\"]\n\tk = 1\n[e]\n\tl = 2\n", "d.a=1|e.l=2|",
               "a NUL in a subsection ends the key there, as git's callbacks see it");
  EXPECT_PARSE("[d]\n\tk # c\n", "(unread)", "a comment after a bare name: a line git refuses");
  EXPECT_PARSE("[d\"x\"]\n\tk = 1\n", "(unread)", "no blank before a subsection: refused");
  /* nothing cut: a subsection past the old 1 KiB, a name past 64, a value past 4 KiB */
  char *s = long_section("[diff \"", 1100, 'd', "\"]\n\ttextconv = t\n");
  struct seen seen = {""};
  char *key = long_section("diff.", 1100, 'd', ".textconv=t|");
  tap_ok(git_config_each(s, strlen(s), record, &seen) && strcmp(seen.text, key) == 0,
         "a subsection of 1100 bytes: the whole name (%zu bytes seen)", strlen(seen.text));
  free(s);
  free(key);
  s = long_section("[d]\n\t", 100, 'k', " = 1\n[e]\nl = 2\n");
  key = long_section("d.", 100, 'k', "=1|e.l=2|");
  seen.text[0] = '\0';
  tap_ok(git_config_each(s, strlen(s), record, &seen) && strcmp(seen.text, key) == 0,
         "a name of 100 bytes: whole");
  free(s);
  free(key);
  s = long_section("[d]\n\tk = ", 5000, 'v', "\n[e]\nl = 2\n");
  size_t value_len = 0;
  bool whole = git_config_each(s, strlen(s), measure_value, &value_len);
  tap_ok(whole && value_len == 5000, "a value of 5000 bytes: whole (%zu)", value_len);
  free(s);
}

static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  FILE *f;
  if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
    abort();
  f = fopen(path, "w");
  if (f == NULL)
    abort();
  fputs(text, f);
  fclose(f);
}

static void make_dir(const char *top, const char *name) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", top, name);
  mkdir(path, 0700);
}

static size_t count(char **v) {
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

/* the task worktree's admin dir run_with gives (relative to .git; "": a main checkout) */
static const char *run_admin = "";

static void expect_entry(char **t, const char *entry, const char *what);

/* one run: the config given, then change applied to the worktree; what tamper lists */
static char **run_with(const char *top, const char *config, const char *change_name,
                       const char *change_text) {
  char common[512];
  struct sandbox_git_run g = {0};
  char **tamper = NULL;
  snprintf(common, sizeof(common), "%s/.git", top);
  write_file(common, "config", config);
  g.common_dir = common;
  g.common_fd = -1; /* no fd held: the common dir read by name */
  g.admin = (char *)run_admin;
  sandbox_git_config_paths(&g, top);
  if (change_name != NULL)
    write_file(top, change_name, change_text);
  sandbox_git_config_tamper(&g, top, &tamper);
  sandbox_git_pointers_free(&g);
  return tamper;
}

static void test_entries(const char *top) {
  char **t;
  make_dir(top, ".git");
  make_dir(top, ".husky");
  make_dir(top, ".husky/_");
  make_dir(top, "scripts");
  write_file(top, ".husky/pre-commit", "#!/bin/sh\ntrue\n");
  write_file(top, "scripts/clean.sh", "#!/bin/sh\ncat\n");

  const char *husky = "[core]\n\thooksPath = .husky/_\n";
  t = run_with(top, husky, "README", "x\n");
  tap_ok(count(t) == 0, "husky v9, the run leaves .husky alone: nothing reported");
  sandbox_git_strv_free(t);
  t = run_with(top, husky, ".husky/pre-commit", "#!/bin/sh\nevil\n");
  tap_ok(count(t) == 1 && strcmp(t[0], "config:core.hooksPath=.husky/_") == 0,
         "husky v9, the run rewrites .husky/pre-commit: %s", t ? t[0] : "(none)");
  sandbox_git_strv_free(t);

  const char *filter = "[filter \"x\"]\n\tclean = sh ./scripts/clean.sh %f\n";
  t = run_with(top, filter, "scripts/clean.sh", "#!/bin/sh\nevil\n");
  tap_ok(count(t) == 1 && strcmp(t[0], "config:filter.x.clean=sh ./scripts/clean.sh %f") == 0,
         "a filter's script among its words: %s", t ? t[0] : "(none)");
  sandbox_git_strv_free(t);

  const char *include = "[include]\n\tpath = ../.gitconfig\n";
  t = run_with(top, include, ".gitconfig", "[core]\n\tfsmonitor = ./evil\n");
  tap_ok(count(t) == 1 && strcmp(t[0], "config:include.path=../.gitconfig") == 0,
         "the run writes the included config: %s", t ? t[0] : "(none)");
  sandbox_git_strv_free(t);
  /* the included file (now there) names .husky: followed, its entry reported when .husky changes */
  write_file(top, ".gitconfig", "[core]\n\thooksPath = .husky\n");
  t = run_with(top, include, ".husky/pre-commit", "#!/bin/sh\nevil again\n");
  tap_ok(count(t) == 1 && strcmp(t[0], "config:core.hooksPath=.husky") == 0,
         "a hooksPath of the included config is followed: %s", t ? t[0] : "(none)");
  sandbox_git_strv_free(t);
  /* as a Windows editor saves it: git reads past the BOM, so must the check (review20 C) */
  write_file(top, ".gitconfig", "\xef\xbb\xbf[core]\r\n\thooksPath = .husky\r\n");
  t = run_with(top, include, ".husky/pre-commit", "#!/bin/sh\nevil, BOM\n");
  tap_ok(count(t) == 1 && strcmp(t[0], "config:core.hooksPath=.husky") == 0,
         "an included config starting with a BOM is followed: %s", t ? t[0] : "(none)");
  sandbox_git_strv_free(t);
}

/* a hook of the repository's hooks/, as a manager installs it (only its marker matters) */
static void install_hook(const char *top, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/.git/hooks", top);
  mkdir(path, 0700);
  snprintf(path, sizeof(path), ".git/hooks/%s", name);
  write_file(top, path, text);
}

static void rmdir_at(const char *top, const char *name) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", top, name);
  rmdir(path);
}

static void remove_at(const char *top, const char *name) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", top, name);
  unlink(path);
}

/* one run of a repository with no config-named path in which the command writes name: tamper is
 * exactly entry (NULL: nothing) */
static void expect_run(const char *top, const char *name, const char *text, const char *entry,
                       const char *what) {
  char **t = run_with(top, "[core]\n\tbare = false\n", name, text);
  bool ok = entry == NULL ? count(t) == 0 : count(t) == 1 && strcmp(t[0], entry) == 0;
  tap_ok(ok, "%s: %s", what, count(t) > 0 ? t[0] : "(nothing)");
  sandbox_git_strv_free(t);
}

static void test_hook_managers(const char *top) {
  write_file(top, "lefthook.yml", "pre-commit:\n  commands: {}\n");
  write_file(top, ".pre-commit-config.yaml", "repos: []\n");
  /* no manager's hook installed (a sample is not one): editing files of those names is nothing */
  install_hook(top, "pre-commit.sample", "#!/bin/sh\n# lefthook pre-commit.com\n");
  expect_run(top, "lefthook.yml", "pre-commit: {run: evil}\n", NULL,
             "no manager installed, lefthook.yml edited");

  install_hook(top, "pre-commit", "#!/bin/sh\ncall_lefthook()\n{\n  lefthook run \"$@\"\n}\n");
  expect_run(top, "README", "y\n", NULL, "lefthook installed, the run leaves its files alone");
  expect_run(top, "lefthook.yml", "pre-commit: {run: evil2}\n", "hooks:lefthook.yml",
             "lefthook installed, lefthook.yml edited");
  expect_run(top, "lefthook-local.yml", "pre-commit: {run: evil}\n", "hooks:lefthook-local.yml",
             "lefthook installed, lefthook-local.yml made");
  remove_at(top, "lefthook-local.yml");
  expect_run(top, ".pre-commit-config.yaml", "repos: [evil]\n", NULL,
             "lefthook alone installed, .pre-commit-config.yaml edited");

  install_hook(top, "commit-msg",
               "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
               "ARGS=(hook-impl --config=other-pc.yaml --hook-type=commit-msg)\n");
  expect_run(top, ".pre-commit-config.yaml", "repos: [evil2]\n", "hooks:.pre-commit-config.yaml",
             "pre-commit installed, its config edited");
  expect_run(top, "other-pc.yaml", "repos: [evil]\n", "hooks:other-pc.yaml",
             "pre-commit installed, the config its hook names (--config=) made");
  install_hook(top, "commit-msg", "#!/bin/sh\nexec \"$INSTALL_PYTHON\" -mpre_commit hook-impl\n");
  expect_run(top, "pre_commit.py", "import os\n", "hooks:pre_commit.py",
             "pre-commit installed, a pre_commit module planted at the top");
  remove_at(top, "pre_commit.py");
  remove_at(top, ".git/hooks/commit-msg");
  remove_at(top, ".git/hooks/pre-commit");
  remove_at(top, "other-pc.yaml");
}

/* this process's read system calls so far (/proc/self/io) */
static unsigned long long read_calls(void) {
  unsigned long long n = 0;
  char line[128];
  FILE *f = fopen("/proc/self/io", "r");
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "syscr: %llu", &n) == 1)
      break;
  if (f != NULL)
    fclose(f);
  return n;
}

/* A .gitconfig that includes itself many times (a run may write one): git stops at its depth
 * limit; the set-up reads a bounded number of files, not N^depth (review20 I) */
static void test_include_budget(const char *top) {
  char text[4096] = "[include]\n";
  for (int i = 0; i < 12; i++)
    strcat(text, "\tpath = .gitconfig\n");
  write_file(top, ".gitconfig", text);
  unsigned long long before = read_calls();
  char **t = run_with(top, "[include]\n\tpath = ../.gitconfig\n", "README", "w\n");
  unsigned long long reads = read_calls() - before;
  sandbox_git_strv_free(t);
  tap_ok(reads < 5000, "a config including itself 12 times: %llu reads (23135 without the budget)",
         reads);
  /* past the budget, the rest is not read: said, on every run */
  t = run_with(top, "[include]\n\tpath = ../.gitconfig\n", NULL, NULL);
  bool said = false;
  for (size_t i = 0; i < count(t); i++)
    said = said || (strncmp(t[i], "config:unread:", 14) == 0 &&
                    strstr(t[i], "(more included files than fsrun reads)") != NULL);
  tap_ok(said, "past the budget, a standing entry (of %zu): %s", count(t),
         count(t) ? t[0] : "(none)");
  sandbox_git_strv_free(t);
  remove_at(top, ".gitconfig");
}

/* review20 C's rest: where fsrun read less than git 2.39 does, it reads as git does or says so */
static void test_unread(const char *top) {
  char entry[1024], name[32];
  /* git follows 10 levels of includes (fsrun followed 5): .husky named at the 10th */
  for (int i = 1; i <= 10; i++) {
    char text[64];
    snprintf(name, sizeof(name), "inc%d", i);
    snprintf(text, sizeof(text), i < 10 ? "[include]\n\tpath = inc%d\n" : "[core]\n\tx = y\n",
             i + 1);
    write_file(top, name, text);
  }
  write_file(top, "inc10", "[core]\n\thooksPath = .husky\n");
  expect_entry(run_with(top, "[include]\n\tpath = ../inc1\n", ".husky/pre-commit", "evil 10\n"),
               "config:core.hooksPath=.husky", "a hooksPath 10 includes deep");
  for (int i = 1; i <= 10; i++) {
    snprintf(name, sizeof(name), "inc%d", i);
    remove_at(top, name);
  }
  /* a config over 1 MiB (git reads it whole): not read, said on every run */
  char *big = malloc(1100 * 1024);
  memset(big, '#', 1100 * 1024 - 1);
  big[0] = '[', big[1] = 'x', big[2] = ']', big[3] = '\n', big[1100 * 1024 - 1] = '\0';
  write_file(top, "big.gitconfig", big);
  free(big);
  snprintf(entry, sizeof(entry), "config:unread:%s/.git/../big.gitconfig (larger than fsrun reads)",
           top);
  expect_entry(run_with(top, "[include]\n\tpath = ../big.gitconfig\n", "README", "b\n"), entry,
               "an included config over 1 MiB, nothing changed");
  remove_at(top, "big.gitconfig");
  /* ~user/: a user /etc/passwd does not name (git asks NSS, fsrun cannot) */
  expect_entry(run_with(top, "[include]\n\tpath = ~fsrun-no-such-user/x\n", "README", "u\n"),
               "config:unread:~fsrun-no-such-user/x (a user /etc/passwd does not name)",
               "~user/ of an unknown user");
  expect_entry(run_with(top, "[include]\n\tpath = %(prefix)/etc/x\n", "README", "u\n"),
               "config:unread:%(prefix)/etc/x (git's install prefix)", "%(prefix)/");
  /* review22 F4: a config git refuses a line of, an include through a magic link */
  snprintf(entry, sizeof(entry),
           "config:unread:%s/.git/config (a line git refuses: what follows it not read)", top);
  expect_entry(run_with(top, "[core]\n\tbare = false\n[broken\n[core]\n\tfsmonitor = ./f\n",
                        "README", "r\n"),
               entry, "a line git refuses");
  expect_entry(run_with(top, "[include]\n\tpath = /proc/self/cwd/x.cfg\n", "README", "l\n"),
               "config:unread:/proc/self/cwd/x.cfg (a link fsrun does not follow: git's own cwd or "
               "fds)",
               "an include through /proc/self/cwd");
  /* more paths than fsrun keeps */
  char *many = malloc(64 * 1024);
  strcpy(many, "[filter \"x\"]\n");
  for (int i = 0; i < 300; i++)
    sprintf(many + strlen(many), "\tclean = sh ./s%d.sh\n", i);
  expect_entry(run_with(top, many, "README", "m\n"),
               "config:unread: (more paths named than fsrun watches)", "300 paths named");
  free(many);
}

/* ~user/ as git expands it: from that user's home (/etc/passwd), not relative to the config */
static void test_tilde_user(const char *top) {
  char common[512], want[600], home[512] = "", user[128] = "", line[1024];
  struct sandbox_git_run g = {0};
  bool found = false;
  FILE *f = fopen("/etc/passwd", "r");
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "%127[^:]:%*[^:]:0:%*[^:]:%*[^:]:%511[^:]", user, home) == 2 ||
        sscanf(line, "%127[^:]:%*[^:]:0:%*[^:]::%511[^:]", user, home) == 2)
      break;
  if (f != NULL)
    fclose(f);
  snprintf(common, sizeof(common), "%s/.git", top);
  snprintf(line, sizeof(line), "[include]\n\tpath = ~%s/fsrun-inc\n", user);
  write_file(common, "config", line);
  g.common_dir = common;
  g.common_fd = -1; /* no fd held: the common dir read by name */
  g.admin = (char *)"";
  sandbox_git_config_paths(&g, top);
  snprintf(want, sizeof(want), "%s/fsrun-inc", home);
  for (size_t i = 0; i < g.n_pointers; i++)
    found = found || strcmp(g.pointers[i].path, want) == 0;
  tap_ok(user[0] != '\0' && found, "~%s/fsrun-inc is watched at %s", user, want);
  sandbox_git_pointers_free(&g);
}

/* A linked worktree's config.worktree: its relative include.path from its own dir
 * (.git/worktrees/<name>/), as git takes it, not from the common dir */
static void test_linked_worktree(const char *top) {
  make_dir(top, ".git/worktrees");
  make_dir(top, ".git/worktrees/t");
  write_file(top, ".git/worktrees/t/config.worktree", "[include]\n\tpath = ../wtinc\n");
  write_file(top, ".git/worktrees/wtinc", "[core]\n\thooksPath = .husky\n");
  run_admin = "worktrees/t";
  expect_entry(
      run_with(top, "[extensions]\n\tworktreeConfig = true\n", ".husky/pre-commit", "evil wt\n"),
      "config:core.hooksPath=.husky", "a linked worktree's config.worktree include");
  run_admin = "";
}

/* Is pid blocked opening a fifo (its wchan)? Waits up to 30 s for it to get there. */
static bool blocked_in_fifo_open(pid_t pid) {
  char path[64], wchan[64] = "";
  snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
  for (int i = 0; i < 30000; i++) {
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(wchan, 1, sizeof(wchan) - 1, f) : 0;
    if (f)
      fclose(f);
    wchan[n] = '\0';
    if (strstr(wchan, "fifo") != NULL || strstr(wchan, "wait_for_partner") != NULL)
      return true;
    usleep(1000);
  }
  return false;
}

/* A link a run left in hooks/ or at an included config, to a fifo (or a device) of the host: the
 * next set-up reads hooks and includes, and must never open it (review20 H: an open has effects
 * before any fstat). The witness: a writer blocked in the fifo's open, released by any reader. */
static void test_no_open_of_a_fifo(const char *top) {
  char fifo[512], link[512];
  int status;
  snprintf(fifo, sizeof(fifo), "%s/witness.fifo", top);
  mkfifo(fifo, 0600);
  snprintf(link, sizeof(link), "%s/.git/hooks/post-merge", top);
  symlink(fifo, link);
  snprintf(link, sizeof(link), "%s/.gitconfig", top);
  unlink(link);
  symlink(fifo, link);
  pid_t writer = fork();
  if (writer == 0) {
    int fd = open(fifo, O_WRONLY);
    _exit(fd < 0 ? 1 : 0);
  }
  bool blocked = blocked_in_fifo_open(writer);
  char **t = run_with(top, "[include]\n\tpath = ../.gitconfig\n", "README", "z\n");
  sandbox_git_strv_free(t);
  tap_ok(blocked && waitpid(writer, &status, WNOHANG) == 0,
         "a hook and an include linked to a fifo are never opened (the writer is still blocked)");
  close(open(fifo, O_RDONLY | O_NONBLOCK)); /* releases the writer */
  waitpid(writer, &status, 0);
  remove_at(top, ".git/hooks/post-merge");
  remove_at(top, ".gitconfig");
}

/* run_with's tamper is exactly entry (NULL: nothing) */
static void expect_entry(char **t, const char *entry, const char *what) {
  bool ok = entry == NULL ? count(t) == 0 : count(t) == 1 && strcmp(t[0], entry) == 0;
  tap_ok(ok, "%s: %s", what, count(t) > 0 ? t[0] : "(nothing)");
  sandbox_git_strv_free(t);
}

/* review22 F8: what Python imports from the top besides X.py is the driver's too; a file in a
 * directory there that is no package, a README, a `build/` dir's content are not */
static void test_python_imports(const char *top, const char *nb, const char *nb_entry) {
  static const char *const planted[] = {
      "nbstripout.pyc",  "nbstripout.cpython-311-x86_64-linux-gnu.so",
      "argparse.py",     "json/__init__.py",
      "src/__init__.py", "__pycache__/argparse.cpython-311.pyc"};
  make_dir(top, "src");
  make_dir(top, "json");
  make_dir(top, "__pycache__");
  expect_entry(run_with(top, nb, "src/tool.py", "import os\n"), NULL,
               "nbstripout, a module written in a directory that is no package");
  expect_entry(run_with(top, nb, "Makefile", "all:\n"), NULL, "nbstripout, a Makefile written");
  for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
    expect_entry(run_with(top, nb, planted[i], "evil\n"), nb_entry, planted[i]);
    remove_at(top, planted[i]);
  }
  expect_entry(run_with(top, "[diff \"j\"]\n\ttextconv = python3 tool.py\n", "argparse.py", "x\n"),
               "config:diff.j.textconv=python3 tool.py", "python3 tool.py, argparse.py planted");
  remove_at(top, "argparse.py");
  expect_entry(
      run_with(top, "[diff \"j\"]\n\ttextconv = python3 src/t.py\n", "src/argparse.py", "x\n"),
      "config:diff.j.textconv=python3 src/t.py", "python3 src/t.py, src/argparse.py planted");
  remove_at(top, "src/argparse.py");
  remove_at(top, "src/tool.py");
  remove_at(top, "Makefile");
  rmdir_at(top, "src");
  rmdir_at(top, "json");
  rmdir_at(top, "__pycache__");
}

/* review20 B: drivers that run an interpreter on a file of the top, and keys git runs that were
 * not watched */
static void test_interpreters(const char *top) {
  const char *nb =
      "[filter \"nbstripout\"]\n\tclean = \"\\\"/usr/bin/python3\\\" -m nbstripout\"\n";
  const char *nb_entry = "config:filter.nbstripout.clean=\"/usr/bin/python3\" -m nbstripout";
  expect_entry(run_with(top, nb, "README", "z\n"), NULL, "nbstripout, an unrelated file written");
  expect_entry(run_with(top, nb, "nbstripout.py", "import os\n"), nb_entry,
               "nbstripout, nbstripout.py planted at the top");
  remove_at(top, "nbstripout.py");
  test_python_imports(top, nb, nb_entry);
  expect_entry(run_with(top, "[diff \"ipynb\"]\n\ttextconv = python3 -mnbstripout -t\n",
                        "nbstripout.py", "import os\n"),
               "config:diff.ipynb.textconv=python3 -mnbstripout -t", "-mX, X.py planted");
  remove_at(top, "nbstripout.py");
  /* each config, a run that writes file: the config's one entry */
  static const struct {
    const char *config, *file, *entry;
  } keys[] = {
      {"[filter \"x\"]\n\tclean = sh clean.sh\n", "clean.sh", "config:filter.x.clean=sh clean.sh"},
      {"[diff]\n\texternal = ./d.sh\n", "d.sh", "config:diff.external=./d.sh"},
      {"[gpg]\n\tprogram = ./sign.sh\n", "sign.sh", "config:gpg.program=./sign.sh"},
      {"[gpg \"ssh\"]\n\tprogram = node s.js\n", "s.js", "config:gpg.ssh.program=node s.js"},
      {"[credential]\n\thelper = !sh cred.sh get\n", "cred.sh",
       "config:credential.helper=!sh cred.sh get"},
      {"[pager]\n\tlog = ./p.sh\n", "p.sh", "config:pager.log=./p.sh"},
      {"[mergetool \"m\"]\n\tcmd = sh m.sh $BASE\n", "m.sh",
       "config:mergetool.m.cmd=sh m.sh $BASE"},
  };
  write_file(top, "clean.sh", "cat\n"); /* there before the run: rewritten */
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    expect_entry(run_with(top, keys[i].config, keys[i].file, "evil\n"), keys[i].entry,
                 keys[i].entry);
  /* the command itself without a `/` is found on PATH; a word that is the top is not watched */
  expect_entry(run_with(top, "[core]\n\tpager = less -R .\n", "less", "evil\n"), NULL,
               "the command word without a / and `.`");
  remove_at(top, "less");
}

#define TEST_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

/* review26 D3 b: a command word without a `/` is looked up on PATH; an empty, `.` or relative entry
 * is taken from git's cwd, the top, and the word is watched there (and only there) */
static void test_path_lookup(const char *top) {
  const char *filt = "[filter \"x\"]\n\tclean = myfilt --in %f\n";
  const char *entry = "config:filter.x.clean=myfilt --in %f";
  const char *env = "[filter \"x\"]\n\tclean = env -i -u HOME LANG=C myfilt\n";
  make_dir(top, "node_modules");
  make_dir(top, "node_modules/.bin");
  write_file(top, "myfilt", "cat\n");
  write_file(top, "node_modules/.bin/myfilt", "cat\n");
  write_file(top, "node_modules/.bin/HOME", "cat\n"); /* rewritten: no new name on the way */
  setenv("PATH", "/usr/bin:/bin", 1);
  expect_entry(run_with(top, filt, "myfilt", "evil\n"), NULL, "an absolute PATH: the top's myfilt");
  setenv("PATH", ":/usr/bin:/bin", 1);
  expect_entry(run_with(top, filt, "README", "y\n"), NULL, "PATH=:..., an unrelated file written");
  expect_entry(run_with(top, filt, "myfilt", "evil 2\n"), entry, "PATH=:..., the top's myfilt");
  setenv("PATH", "/usr/bin:.", 1);
  expect_entry(run_with(top, filt, "myfilt", "evil 3\n"), entry, "PATH=...:., the top's myfilt");
  setenv("PATH", "", 1);
  expect_entry(run_with(top, filt, "myfilt", "evil 4\n"), entry, "PATH empty, the top's myfilt");
  setenv("PATH", "./node_modules/.bin:/usr/bin", 1);
  expect_entry(run_with(top, filt, "myfilt", "evil 5\n"), NULL,
               "PATH=./node_modules/.bin:..., the top's myfilt");
  expect_entry(run_with(top, filt, "node_modules/.bin/myfilt", "evil 6\n"), entry,
               "PATH=./node_modules/.bin:..., node_modules/.bin/myfilt");
  setenv("PATH", "node_modules/.bin:/usr/bin", 1);
  expect_entry(run_with(top, env, "node_modules/.bin/myfilt", "evil 7\n"),
               "config:filter.x.clean=env -i -u HOME LANG=C myfilt",
               "env's command after its options and a VAR=value");
  expect_entry(run_with(top, env, "node_modules/.bin/HOME", "evil 8\n"), NULL,
               "env -u's NAME is no command");
  remove_at(top, "myfilt");
  remove_at(top, "node_modules/.bin/myfilt");
  remove_at(top, "node_modules/.bin/HOME");
  rmdir_at(top, "node_modules/.bin");
  rmdir_at(top, "node_modules");
  setenv("PATH", TEST_PATH, 1);
}

/* review29 G3: git's own dispatch: `git WORD` runs git-WORD, a bare credential.helper NAME runs
 * git-credential-NAME, each found on PATH (node_modules/.bin first here) */
static void test_git_dispatch(const char *top) {
  static const struct {
    const char *config, *entry, *file;
  } cases[] = {
      {"[filter \"x\"]\n\tclean = git myhelper\n", "config:filter.x.clean=git myhelper",
       "node_modules/.bin/git-myhelper"},
      {"[filter \"x\"]\n\tclean = git -c a.b=c -C . myhelper --x\n",
       "config:filter.x.clean=git -c a.b=c -C . myhelper --x", "node_modules/.bin/git-myhelper"},
      {"[credential]\n\thelper = myhelp --y\n", "config:credential.helper=myhelp --y",
       "node_modules/.bin/git-credential-myhelp"},
      {"[credential \"https://x.invalid\"]\n\thelper = myhelp\n",
       "config:credential.https://x.invalid.helper=myhelp",
       "node_modules/.bin/git-credential-myhelp"},
  };
  write_file(top, "node_modules/.bin/git-myhelper", "cat\n");
  write_file(top, "node_modules/.bin/git-credential-myhelp", "cat\n");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    expect_entry(run_with(top, cases[i].config, "README", "r\n"), NULL, cases[i].entry);
    expect_entry(run_with(top, cases[i].config, cases[i].file, cases[i].entry), cases[i].entry,
                 cases[i].file);
  }
  /* `!cmd` is a shell snippet, an absolute path runs as it is: no git-credential- name */
  expect_entry(run_with(top, "[credential]\n\thelper = /usr/bin/myhelp\n",
                        "node_modules/.bin/git-credential-myhelp", "z\n"),
               NULL, "credential.helper = /usr/bin/myhelp");
  remove_at(top, "node_modules/.bin/git-myhelper");
  remove_at(top, "node_modules/.bin/git-credential-myhelp");
}

/* session 29: the runners read on to the command they run, as each reads its arguments: a run
 * rewriting node_modules/.bin/myfilt (PATH's first entry) names the driver; where the runner's
 * option says it runs no command (`taskset -p`, `sudo -l`), `myfilt` is an argument, and nothing */
static void test_runners(const char *top) {
  static const struct {
    const char *clean;
    bool runs;
  } cases[] = {
      {"stdbuf -o L -e0 myfilt", true},
      {"stdbuf -oL --error 0 --input=0 myfilt", true},
      {"ionice -c 3 -n 7 -t myfilt", true},
      {"ionice -c2 -n7 myfilt", true},
      {"chrt -f 10 myfilt", true},
      {"chrt -R --idle 0 myfilt", true},
      {"chrt -T 100 -P 200 -D 200 -d 0 myfilt", true},
      {"chrt --batch myfilt", true}, /* newer chrt: no priority for a policy without one */
      {"taskset 0x3 myfilt", true},
      {"taskset -c 0-3,5 myfilt", true},
      {"flock -w 5 -E 3 /tmp/x.lock myfilt", true},
      {"flock -n x.lock -c 'myfilt --x'", true},
      {"flock x.lock --command myfilt", true},
      {"time -p myfilt", true},
      {"time -f x -o t.log myfilt", true},
      {"sudo -u nobody -g nogroup -E -- myfilt", true},
      {"sudo -nEu nobody --chdir /fsrun-none --preserve-env=A,B myfilt", true},
      {"sudo -s myfilt", true},
      {"nice -n 5 chrt -b 0 stdbuf -oL taskset 1 myfilt", true},
      {"chrt -p 10 myfilt", false},
      {"chrt --pid 10 myfilt", false},
      {"taskset -p 3 myfilt", false},
      {"taskset -apc 0 myfilt", false},
      {"ionice -p myfilt", false},
      {"sudo -l myfilt", false},
      {"sudo -i", false},
      /* review29 G3: a shell's option with a value before -c, options after it */
      {"sh -o errexit -c myfilt", true},
      {"bash +o posix -O extglob -c -e 'myfilt --x'", true},
      {"sh -eo pipefail tools/x.sh myfilt", false},
      /* session 30: busybox's applet, doas, su/runuser (-c anywhere, -u), env -S */
      {"busybox nice -n 5 myfilt", true},
      {"busybox sh -c 'myfilt --x'", true},
      {"busybox --list myfilt", false},
      {"doas -n -u nobody myfilt", true},
      {"doas -C /etc/doas.conf myfilt", false},
      {"su - nobody -s /bin/sh -c myfilt", true},
      {"su -c 'myfilt --x' nobody", true},
      {"su -lcmyfilt nobody", true},
      {"su --command=myfilt nobody", true},
      {"su --session-command myfilt", true},
      {"su nobody myfilt", false}, /* the shell's script file (a file word at the top) */
      {"runuser -u nobody -- myfilt", true},
      {"runuser -u nobody -g nogroup myfilt", true},
      {"runuser --user=nobody myfilt", true},
      {"runuser nobody -c myfilt", true},
      {"runuser -l nobody myfilt", false},
      {"env -S 'myfilt --x'", true},
      {"env -Smyfilt", true},
      {"env --split-string=myfilt", true},
      {"env -iS myfilt", true},
      /* review30 H2: env -S's words are env's own arguments again; su's -s SHELL is a program */
      {"env -S'-u X myfilt'", true},
      {"env -S'-- myfilt'", true},
      {"env -S'-i PATH=node_modules/.bin myfilt'", true},
      {"env -S-uX myfilt", true},
      {"env -S-S-u X myfilt", true},
      {"su root -s node_modules/.bin/myfilt", true},
      {"su root -s myfilt -c true", true},
      {"su -snode_modules/.bin/myfilt root", true},
      {"runuser -u root --shell=node_modules/.bin/myfilt -- true", true},
      /* review29 G8: PATH= names where the command is looked up, not a file */
      {"env -i PATH=/usr/bin:node_modules/.bin myfilt", true},
      {"PATH=/usr/bin:./node_modules/.bin myfilt", true},
      {"env -i PATH=/usr/bin myfilt", false},
      {"PATH=/usr/bin sh -c myfilt", false},
  };
  char config[256], entry[256];
  make_dir(top, "node_modules");
  make_dir(top, "node_modules/.bin");
  /* no new name on the way from the top in the loop: each run rewrites what is there */
  write_file(top, "README", "r\n");
  write_file(top, "node_modules/.bin/myfilt", "cat\n");
  setenv("PATH", "node_modules/.bin:/usr/bin", 1);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    snprintf(config, sizeof(config), "[filter \"x\"]\n\tclean = %s\n", cases[i].clean);
    snprintf(entry, sizeof(entry), "config:filter.x.clean=%s", cases[i].clean);
    expect_entry(run_with(top, config, "README", "r\n"), NULL, cases[i].clean);
    expect_entry(run_with(top, config, "node_modules/.bin/myfilt", cases[i].clean),
                 cases[i].runs ? entry : NULL, cases[i].clean);
  }
  /* review30 H5: env -S's own syntax (`\_`, `#`) is not split here: a standing entry, reported
   * even on an unrelated write (git's config escapes a backslash; `#` needs quotes there) */
  static const char *const env_syntax[][2] = {
      {"env -S'-u\\\\_X\\\\_myfilt'", "env -S'-u\\_X\\_myfilt'"},
      {"env -S'myfilt\\\\_arg'", "env -S'myfilt\\_arg'"},
      {"\"env -S'#c' myfilt\"", "env -S'#c' myfilt"},
  };
  for (size_t i = 0; i < sizeof(env_syntax) / sizeof(env_syntax[0]); i++) {
    snprintf(config, sizeof(config), "[filter \"x\"]\n\tclean = %s\n", env_syntax[i][0]);
    snprintf(entry, sizeof(entry), "config:filter.x.clean=%s", env_syntax[i][1]);
    expect_entry(run_with(top, config, "README", "r\n"), entry, env_syntax[i][1]);
  }
  test_git_dispatch(top);
  remove_at(top, "node_modules/.bin/myfilt");
  rmdir_at(top, "node_modules/.bin");
  rmdir_at(top, "node_modules");
  setenv("PATH", TEST_PATH, 1);
}

/* review26 D3 d: a `VAR=value` before the command names where it loads code from; and the
 * interpreters that add a suffix to a name (`ruby -rx`: x.rb, `lua -l x`: x.lua, `-MFilt`) */
static void test_assignments(const char *top) {
  static const struct {
    const char *clean, *file;
  } cases[] = {
      {"PYTHONPATH=tools python3 -m filt", "tools/filt.py"},
      {"NODE_OPTIONS=--require=./x.js node f.js", "x.js"},
      {"NODE_PATH=/nowhere:lib node f.js", "lib/m.js"},
      {"env NODE_PATH=lib node f.js", "lib/m.js"},
      {"ruby -I. -rx -pe 1", "x.rb"},
      {"lua -l x f.lua", "x.lua"},
      {"lua5.4 -lx f.lua", "x.lua"},
      {"perl -I. -MFilt -pe 1", "Filt.pm"},
  };
  char config[256], entry[256];
  make_dir(top, "tools");
  make_dir(top, "lib");
  write_file(top, "tools/filt.py", "import sys\n");
  write_file(top, "lib/m.js", "//\n");
  write_file(top, "x.js", "//\n");
  write_file(top, "x.rb", "#\n");
  write_file(top, "x.lua", "--\n");
  write_file(top, "Filt.pm", "1;\n");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    snprintf(config, sizeof(config), "[filter \"x\"]\n\tclean = %s\n", cases[i].clean);
    snprintf(entry, sizeof(entry), "config:filter.x.clean=%s", cases[i].clean);
    expect_entry(run_with(top, config, "README", "a\n"), NULL, cases[i].clean);
    expect_entry(run_with(top, config, cases[i].file, "evil\n"), entry, cases[i].file);
  }
  /* the value's expansion: what it names is not known, on every run */
  expect_entry(
      run_with(top, "[filter \"x\"]\n\tclean = PATH=./bin:$PATH myfilt\n", "README", "b\n"),
      "config:filter.x.clean=PATH=./bin:$PATH myfilt", "PATH=./bin:$PATH, standing");
  /* a value that names no worktree file: nothing */
  expect_entry(run_with(top, "[filter \"x\"]\n\tclean = LC_ALL=C.UTF-8 sort\n", "README", "c\n"),
               NULL, "LC_ALL=C.UTF-8");
  static const char *const files[] = {"tools/filt.py", "lib/m.js", "x.js",
                                      "x.rb",          "x.lua",    "Filt.pm"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    remove_at(top, files[i]);
  rmdir_at(top, "tools");
  rmdir_at(top, "lib");
}

/* review20 E: the user's global config (main points HOME at home), written by a run with a
 * writable $HOME or ~/.config */
static void test_global(const char *top, const char *home) {
  char entry[600];
  /* review22 F6: what the global config names is watched as the repository's */
  write_file(home, ".gitconfig", "[filter \"nb\"]\n\tclean = python3 -m nbstripout\n");
  expect_entry(run_with(top, "[core]\n\tbare = false\n", "nbstripout.py", "evil\n"),
               "config:filter.nb.clean=python3 -m nbstripout", "nbstripout --global, X.py planted");
  remove_at(top, "nbstripout.py");
  remove_at(home, ".gitconfig");
  expect_entry(run_with(top, "[core]\n\tbare = false\n", "README", "g\n"), NULL,
               "global config left alone");
  snprintf(entry, sizeof(entry), "config:global:%s/.gitconfig", home);
  expect_entry(run_with(top, "[core]\n\tbare = false\n", "h/.gitconfig", "[core]\n\tx = y\n"),
               entry, "~/.gitconfig written");
}

/* the argv words joined by `|`, for one comparison */
static char *joined(char **v) {
  static char text[2048];
  text[0] = '\0';
  for (char **p = v; p != NULL && *p != NULL; p++)
    snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s", p == v ? "" : "|", *p);
  return text;
}

#define CANNOT_FIRST "-c|core.abbrev=fsrun-cannot-disarm|"

/* the included config inc.gitconfig of g rewritten as text (len bytes), read again by hostGitArgs:
 * the list starts with the option that makes git fail (cannot), or does not */
static void expect_reread(struct sandbox_git_run *g, const char *top, const char *text, size_t len,
                          bool cannot, const char *what) {
  char path[512];
  char **t = NULL, **a;
  snprintf(path, sizeof(path), "%s/inc.gitconfig", top);
  FILE *f = fopen(path, "w");
  bool written = f != NULL && fwrite(text, 1, len, f) == len;
  if (f != NULL)
    fclose(f);
  sandbox_git_config_tamper(g, top, &t);
  a = sandbox_git_host_args(g, t);
  tap_ok(written && (strncmp(joined(a), CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0) == cannot,
         "%s: %s", what, joined(a));
  sandbox_git_strv_free(a);
  sandbox_git_strv_free(t);
}

/* what the run made of an included config that fsrun cannot read whole (over 1 MiB, past 64
 * files, an unknown ~user/, a directory) cannot be disarmed; a missing include is nothing */
static void test_host_args_unread(struct sandbox_git_run *g, const char *top) {
  char name[32], text[512];
  size_t big = 1100 * 1024;
  char *s = malloc(big + 64);
  memset(s, '#', big);
  strcpy(s + big, "\n[filter \"x\"]\n\tclean = touch RAN\n");
  expect_reread(g, top, s, strlen(s), true, "rewritten over 1 MiB with a filter at its end");
  free(s);
  /* 65 includes (nested, git dies at the 11th level: it runs nothing): the 64-file budget */
  s = xasprintf("[include]\n");
  for (int i = 1; i <= 65; i++) {
    char *more = xasprintf("%s\tpath = i%d\n", s, i);
    free(s);
    s = more;
    snprintf(name, sizeof(name), "i%d", i);
    write_file(top, name, i < 65 ? "[core]\n\tbare = false\n" : "[diff]\n\texternal = ./RAN\n");
  }
  expect_reread(g, top, s, strlen(s), true, "65 includes, diff.external in the last");
  free(s);
  s = xasprintf("[include]\n\tpath = i1\n");
  for (int i = 1; i <= 11; i++) {
    snprintf(name, sizeof(name), "i%d", i);
    snprintf(text, sizeof(text), "[include]\n\tpath = i%d\n", i + 1);
    write_file(top, name, text);
  }
  expect_reread(g, top, s, strlen(s), true, "includes past git's depth");
  free(s);
  for (int i = 1; i <= 65; i++) {
    snprintf(name, sizeof(name), "i%d", i);
    remove_at(top, name);
  }
  static const char user[] = "[include]\n\tpath = ~fsrun-no-such-user/x\n[core]\n\tfsmonitor = f\n";
  expect_reread(g, top, user, strlen(user), true, "an include of ~<a user not in /etc/passwd>/");
  static const char dir[] = "[include]\n\tpath = incdir\n";
  snprintf(text, sizeof(text), "%s/incdir", top);
  mkdir(text, 0755);
  expect_reread(g, top, dir, strlen(dir), true, "an include that is a directory");
  rmdir(text);
  static const char none[] = "[include]\n\tpath = no-such-file\n[core]\n\tfsmonitor = ./f\n";
  expect_reread(g, top, none, strlen(none), false, "a missing include (git skips it): disarmed");
}

/* hostGitArgs of g with inc.gitconfig as the run left it (written by the caller) */
static char *host_args_now(struct sandbox_git_run *g, const char *top) {
  char **t = NULL, **a;
  char *text;
  sandbox_git_config_tamper(g, top, &t);
  a = sandbox_git_host_args(g, t);
  text = xstrdup(joined(a));
  sandbox_git_strv_free(a);
  sandbox_git_strv_free(t);
  return text;
}

/* inc.gitconfig made a link to target */
static void link_inc(const char *top, const char *target) {
  char path[512];
  snprintf(path, sizeof(path), "%s/inc.gitconfig", top);
  unlink(path);
  if (symlink(target, path) < 0)
    tap_diag("symlink %s: %m", path);
}

/* review22 F4: the reread reads what git reads, or says it cannot */
static void test_host_args_reread(struct sandbox_git_run *g, const char *top) {
  static const char orphan[] = "orphan = 1\n[diff \"x\"]\n\ttextconv = ./t\n";
  static const char crlf[] = "[user]\r\n\tname = a\\\r\nb\r\n[diff \"x\"]\r\n\ttextconv = ./t\r\n";
  static const char refused[] = "[core]\n\tbare = false\n[broken\n[diff \"x\"]\n\ttextconv = ./t\n";
  char path[512], outside[] = "/tmp/fsrun-test-git-out.XXXXXX", cwd[512];
  char *a;
  write_file(top, "inc.gitconfig", orphan);
  a = host_args_now(g, top);
  /* a key on no inert list (review22 F1): cannot disarm, and the textconv after it seen */
  tap_ok(strncmp(a, CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0 &&
             strstr(a, "|-c|diff.x.textconv=/usr/bin/cat") != NULL,
         "a key before any section: read on: %s", a);
  free(a);
  write_file(top, "inc.gitconfig", crlf);
  a = host_args_now(g, top);
  tap_ok(strcmp(a, "-c|diff.x.textconv=/usr/bin/cat") == 0, "a backslash before CR LF: read on: %s",
         a);
  free(a);
  expect_reread(g, top, refused, strlen(refused), true, "a line git refuses: cannot be disarmed");
  /* magic links: git's own cwd and fds, not fsrun's (cwd here: the worktree, as git's) */
  write_file(top, "evil.cfg", "[core]\n\tfsmonitor = ./f\n");
  if (getcwd(cwd, sizeof(cwd)) == NULL || chdir(top) < 0)
    tap_diag("chdir %s: %m", top);
  link_inc(top, "/proc/self/cwd/evil.cfg");
  a = host_args_now(g, top);
  tap_ok(strncmp(a, CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0,
         "a link through /proc/self/cwd: cannot be disarmed: %s", a);
  free(a);
  /* stdin a regular file with what git would read: fsrun's own, not git's */
  int saved = dup(0), in = open("evil.cfg", O_RDONLY | O_CLOEXEC);
  if (saved < 0 || in < 0 || dup2(in, 0) < 0)
    tap_diag("stdin: %m");
  link_inc(top, "/dev/stdin");
  a = host_args_now(g, top);
  tap_ok(strncmp(a, CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0,
         "a link to /dev/stdin: cannot be disarmed: %s", a);
  free(a);
  if (saved >= 0 && dup2(saved, 0) < 0)
    tap_diag("stdin back: %m");
  close(saved);
  close(in);
  if (chdir(cwd) < 0)
    tap_diag("chdir %s: %m", cwd);
  /* a link the run made that leads out of the worktree; one to a file in it reads that file */
  link_inc(top, "evil.cfg");
  a = host_args_now(g, top);
  tap_ok(strcmp(a, "-c|core.fsmonitor=false") == 0, "a link within the worktree: read: %s", a);
  free(a);
  if (mkdtemp(outside) == NULL)
    tap_diag("mkdtemp: %m");
  write_file(outside, "out.cfg", "[core]\n\tfsmonitor = ./f\n");
  snprintf(path, sizeof(path), "%s/out.cfg", outside);
  link_inc(top, path);
  a = host_args_now(g, top);
  tap_ok(strncmp(a, CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0,
         "a link out of the worktree: cannot be disarmed: %s", a);
  free(a);
  unlink(path);
  rmdir(outside);
  snprintf(path, sizeof(path), "%s/inc.gitconfig", top);
  unlink(path);
  remove_at(top, "evil.cfg");
}

/* hostGitArgs: each kind of entry gives the options that keep the host's git from running it */
static void test_host_args(const char *top) {
  char *none[] = {NULL};
  char *entries[] = {"config:filter.nbstripout.clean=\"/usr/bin/python3\" -m nbstripout",
                     "config:diff.ipynb.textconv=python3 -mnbstripout -t",
                     "config:core.hooksPath=.husky",
                     "hooks:lefthook.yml",
                     "config:merge.M.driver=./m.sh %O",
                     "config:credential.https://x.invalid.helper=!sh c.sh",
                     "config:pager.log=./p.sh",
                     "config:gpg.ssh.program=node s.js",
                     "config:core.fsmonitor=./f",
                     "sub/.git",
                     NULL};
  char **a = sandbox_git_host_args(NULL, none);
  tap_ok(a != NULL && a[0] == NULL, "nothing reported: an empty list");
  sandbox_git_strv_free(a);
  char *unread[] = {"config:unread:/x/big.gitconfig (larger than fsrun reads)", NULL};
  a = sandbox_git_host_args(NULL, unread);
  tap_ok(strncmp(joined(a), CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0 &&
             strstr(joined(a), "|-c|core.hooksPath=/dev/null|") != NULL,
         "a config not read (standing, changed or not): cannot be disarmed: %s", joined(a));
  sandbox_git_strv_free(a);
  a = sandbox_git_host_args(NULL, entries);
  /* programs by their paths on TEST_PATH (review29 G3); no ssh-keygen: `false` */
  cleanup_free char *expected = xasprintf(
      "-c|filter.nbstripout.clean=|-c|filter.nbstripout.smudge=|-c|filter.nbstripout.process=|-c|"
      "filter.nbstripout.required=false|-c|diff.ipynb.textconv=/usr/bin/cat|-c|core.hooksPath=/"
      "dev/null|-c|merge.M.driver=/usr/bin/false|-c|credential.https://x.invalid.helper=|-c|"
      "pager.log=false|-c|gpg.ssh.program=%s|-c|core.fsmonitor=false|-c|submodule.recurse=false|"
      "-c|diff.ignoreSubmodules=all|-c|status.submoduleSummary=false",
      access("/usr/bin/ssh-keygen", X_OK) == 0 ? "/usr/bin/ssh-keygen" : "/usr/bin/false");
  tap_ok(strcmp(joined(a), expected) == 0, "each entry's options, once each: %s", joined(a));
  sandbox_git_strv_free(a);

  /* an included config the run wrote: what it sets now, its own include followed */
  struct sandbox_git_run g = {0};
  char common[512];
  char **t = NULL;
  snprintf(common, sizeof(common), "%s/.git", top);
  write_file(common, "config", "[include]\n\tpath = ../inc.gitconfig\n");
  g.common_dir = common;
  g.common_fd = -1; /* no fd held: the common dir read by name */
  g.admin = (char *)"";
  sandbox_git_config_paths(&g, top);
  write_file(top, "inc.gitconfig", "[filter \"y\"]\n\tsmudge = ./y\n[include]\n\tpath = inc2\n");
  write_file(top, "inc2", "[core]\n\tfsmonitor = ./f\n[user]\n\tname = an inert key\n");
  sandbox_git_config_tamper(&g, top, &t);
  a = sandbox_git_host_args(&g, t);
  tap_ok(strcmp(joined(a), "-c|filter.y.clean=|-c|filter.y.smudge=|-c|filter.y.process=|-c|"
                           "filter.y.required=false|-c|core.fsmonitor=false") == 0,
         "an included config written by the run is read as it is now: %s", joined(a));
  sandbox_git_strv_free(a);
  sandbox_git_strv_free(t);

  /* review21 P1: a subsection holding `=` is no -c key (git cuts at the first `=`): no option
   * but the ones fsrun names itself, and the one that makes git fail */
  write_file(top, "inc.gitconfig",
             "[diff \"external=touch X;\"]\n\ttextconv = x\n[credential \"helper=!touch Y #\"]\n"
             "\thelper = y\n[submodule \"s\"]\n\tupdate = !touch Z\n");
  t = NULL;
  sandbox_git_config_tamper(&g, top, &t);
  a = sandbox_git_host_args(&g, t);
  bool whole = true;
  for (size_t i = 1; a[0] != NULL && a[i - 1] != NULL; i += 2)
    whole = whole && strstr(a[i], "touch") == NULL;
  tap_ok(whole && strncmp(joined(a), "-c|core.abbrev=fsrun-cannot-disarm|", 35) == 0 &&
             strstr(joined(a), "|-c|submodule.s.update=checkout") != NULL,
         "a key holding `=` cannot be disarmed: git is made to fail: %s", joined(a));
  sandbox_git_strv_free(a);
  sandbox_git_strv_free(t);
  test_host_args_unread(&g, top);
  test_host_args_reread(&g, top);
  sandbox_git_pointers_free(&g);

  char *eq[] = {"config:filter.a=b.clean=touch RAN", NULL};
  a = sandbox_git_host_args(NULL, eq);
  tap_ok(strncmp(joined(a), "-c|core.abbrev=fsrun-cannot-disarm|", 35) == 0 &&
             strstr(joined(a), "filter.a") == NULL,
         "an entry whose key holds `=`: cannot be disarmed: %s", joined(a));
  sandbox_git_strv_free(a);
  /* a nested repository listed before it: the failing option still comes first */
  char *nested_first[] = {"sub/.git", "config:filter.a=b.clean=touch RAN", NULL};
  a = sandbox_git_host_args(NULL, nested_first);
  const char *first = "-c|core.abbrev=fsrun-cannot-disarm|-c|core.fsmonitor=false|";
  tap_ok(strncmp(joined(a), first, strlen(first)) == 0,
         "after a nested repository's options: cannot-disarm first: %s", joined(a));
  sandbox_git_strv_free(a);
  char *proxy[] = {"config:core.gitproxy=./p", NULL};
  a = sandbox_git_host_args(NULL, proxy);
  tap_ok(strncmp(joined(a), "-c|core.abbrev=fsrun-cannot-disarm|", 35) == 0,
         "core.gitProxy (the first match wins): cannot be disarmed: %s", joined(a));
  sandbox_git_strv_free(a);
  /* review21 P3: an include whose file is not known: not an empty list */
  char *inc[] = {"config:include.path=../.gitconfig", "config:global:/h/.config/git/config", NULL};
  a = sandbox_git_host_args(NULL, inc);
  tap_ok(strstr(joined(a), "-c|core.abbrev=fsrun-cannot-disarm|") != NULL &&
             strstr(joined(a), "|-c|core.fsmonitor=false|") != NULL &&
             strstr(joined(a), "|-c|core.hooksPath=/dev/null|") != NULL,
         "an include or global config not known: the fixed list: %s", joined(a));
  sandbox_git_strv_free(a);
}

int main(void) {
  char top[] = "/tmp/fsrun-test-git-config.XXXXXX";
  char home[64];
  char cmd[256];
  test_syntax();
  test_git_reads_on();
  if (mkdtemp(top) == NULL) {
    tap_ok(false, "mkdtemp: %m");
    return tap_done();
  }
  /* the caller's own global config is no test's: another process may write it meanwhile */
  snprintf(home, sizeof(home), "%s/h", top);
  mkdir(home, 0700);
  setenv("HOME", home, 1);
  unsetenv("XDG_CONFIG_HOME");
  unsetenv("GIT_CONFIG_GLOBAL");
  /* a caller's relative PATH entry would have the tests' command words watched (review26 D3 b) */
  setenv("PATH", TEST_PATH, 1);
  test_entries(top);
  test_hook_managers(top);
  test_no_open_of_a_fifo(top);
  test_include_budget(top);
  test_unread(top);
  test_tilde_user(top);
  test_linked_worktree(top);
  test_interpreters(top);
  test_path_lookup(top);
  test_runners(top);
  test_assignments(top);
  test_global(top, home);
  test_host_args(top);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
  if (system(cmd) != 0)
    tap_diag("could not remove %s", top);
  return tap_done();
}
