/* sandbox-git-disarm.c, an included config the run rewrote (review22 F1, F7): each key there is
 * disarmed (git runs what it names), inert (a short list: nothing to do) or "cannot disarm" (any
 * other key: the list then starts with the option that makes git fail); the list is bounded and
 * keeps each option once, in order. Content only: no timing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sandbox-git.h"
#include "tap.h"
#include "utils.h"

#define CANNOT_FIRST "-c|core.abbrev=fsrun-cannot-disarm|"

static char top[] = "/tmp/fsrun-test-git-disarm.XXXXXX";

static void write_at(const char *name, const char *text) {
  cleanup_free char *path = xasprintf("%s/%s", top, name);
  FILE *f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
    abort();
}

/* the argv words joined by `|` (caller frees) */
static char *joined(char **v) {
  size_t len = 1;
  for (char **p = v; p != NULL && *p != NULL; p++)
    len += strlen(*p) + 1;
  char *text = xmalloc0(len);
  for (char **p = v; p != NULL && *p != NULL; p++)
    snprintf(text + strlen(text), len - strlen(text), "%s%s", p == v ? "" : "|", *p);
  return text;
}

static size_t words(char **v) {
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

/* the words of a list joined by `|` (a list of filters and textconvs: no `|` inside a word) */
static size_t words_of(const char *list) {
  size_t n = list[0] != '\0';
  for (const char *c = list; *c != '\0'; c++)
    n += *c == '|';
  return n;
}

static bool cannot_first(const char *list) {
  return strncmp(list, CANNOT_FIRST, strlen(CANNOT_FIRST)) == 0;
}

/* a repository whose config includes ../inc.gitconfig, as it was before a run */
static void repository(struct sandbox_git_run *g) {
  cleanup_free char *common = xasprintf("%s/.git", top);
  mkdir(common, 0755);
  write_at(".git/config", "[include]\n\tpath = ../inc.gitconfig\n");
  write_at("inc.gitconfig", "[user]\n\tname = before\n");
  *g =
      (struct sandbox_git_run){.common_dir = xstrdup(common), .common_fd = -1, .admin = (char *)""};
  sandbox_git_config_paths(g, top);
}

/* the run's inc.gitconfig is text: hostGitArgs as the words joined (caller frees) */
static char *host_args_after(struct sandbox_git_run *g, const char *text, size_t *n_words) {
  char **t = NULL, **a;
  write_at("inc.gitconfig", text);
  sandbox_git_config_tamper(g, top, &t);
  a = sandbox_git_host_args(g, t);
  char *list = joined(a);
  if (n_words != NULL)
    *n_words = words(a);
  sandbox_git_strv_free(a);
  sandbox_git_strv_free(t);
  return list;
}

/* the run's inc.gitconfig is text: the list starts with the cannot-disarm option, or not */
static void expect_cannot(struct sandbox_git_run *g, const char *text, bool cannot,
                          const char *what) {
  cleanup_free char *list = host_args_after(g, text, NULL);
  tap_ok(cannot_first(list) == cannot, "%s: %.60s", what, list);
}

/* F1: keys that run nothing known as a driver, but run a program or send data (git 2.39) */
static void test_other_keys(struct sandbox_git_run *g) {
  static const char *const payloads[][2] = {
      {"[trailer \"ev\"]\n\tcommand = touch RAN\n", "trailer.<t>.command (commit --trailer)"},
      {"[trailer \"ev\"]\n\tcmd = touch RAN\n", "trailer.<t>.cmd"},
      {"[protocol \"ext\"]\n\tallow = always\n", "protocol.ext.allow"},
      {"[url \"ext::sh -c touch% RAN;% :\"]\n\tinsteadOf = https://github.com/\n",
       "url.<ext::cmd>.insteadOf (fetch, push)"},
      {"[url \"https://x.invalid/\"]\n\tpushInsteadOf = https://github.com/\n",
       "url.<u>.pushInsteadOf"},
      {"[remote \"origin\"]\n\tpushurl = https://x.invalid/r.git\n",
       "remote.<r>.pushurl (the push goes where the run chose)"},
      {"[remote \"origin\"]\n\turl = https://x.invalid/r.git\n", "remote.<r>.url"},
      {"[remote]\n\tpushDefault = evil\n", "remote.pushDefault"},
      {"[remote \"origin\"]\n\tvcs = evil\n", "remote.<r>.vcs (git-remote-evil)"},
      {"[remote \"origin\"]\n\tproxy = http://x.invalid:1\n", "remote.<r>.proxy"},
      {"[http]\n\tproxy = http://x.invalid:1\n", "http.proxy"},
      {"[http]\n\tsslVerify = false\n", "http.sslVerify"},
      {"[http \"https://github.com/\"]\n\tsslCAInfo = ca.pem\n", "http.<url>.sslCAInfo"},
      {"[sendemail]\n\tsmtpServer = ./s.sh\n", "sendemail.smtpServer"},
      {"[imap]\n\ttunnel = ./t.sh\n", "imap.tunnel"},
      {"[alias]\n\tst = !touch RAN\n", "alias.<a> (`!cmd`)"},
      {"[core]\n\texcludesFile = hide\n", "core.excludesFile (hides a planted file)"},
      {"[status]\n\tshowUntrackedFiles = no\n", "status.showUntrackedFiles"},
      {"[color \"diff\"]\n\tnew = black black\n", "color.<slot>.<x> (black on black)"},
      {"[core]\n\tbare = true\n", "core.bare, a key on no list"},
      {"[protocol \"ext\"]\n\tallow\n", "a bare key on no list"},
      {"[url \"ext::sh\"]\n\tinsteadOf =\n",
       "an empty value on no list (insteadOf \"\" is every URL)"},
      {"[include]\n\tpath = inc2\n", "a key on no list in an included file"},
  };
  write_at("inc2", "[trailer \"t\"]\n\tcommand = touch RAN\n");
  for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++)
    expect_cannot(g, payloads[i][0], true, payloads[i][1]);
  /* review22 F1's payload as one file */
  expect_cannot(g,
                "[trailer \"ev\"]\n\tcommand = \"touch PWN-trailer\"\n[protocol \"ext\"]\n\tallow "
                "= always\n[url \"ext::sh -c touch% PWN-ext;% :\"]\n\tinsteadOf = "
                "https://github.com/\n",
                true, "review22 F1's payload");
}

/* inert keys: nothing to disarm, so no option at all */
static void test_inert_keys(struct sandbox_git_run *g) {
  cleanup_free char *list = host_args_after(
      g,
      "[user]\n\tname = n\n\temail = e@x.invalid\n[author]\n\tname = a\n\temail = a@x.invalid\n"
      "[committer]\n\tname = c\n\temail = c@x.invalid\n[core]\n\tautocrlf = input\n\teol = lf\n"
      "\tsafecrlf = warn\n\twhitespace = trailing-space\n[init]\n\tdefaultBranch = main\n"
      "[color]\n\tui = auto\n\tdiff = never\n\tstatus\n[diff \"lisp\"]\n\txfuncname = ^\\\\(def\n"
      "\tfuncname = x\n\twordRegex = [a-z]+\n\tbinary\n[merge \"m\"]\n\tname = a merge driver\n",
      NULL);
  tap_ok(strcmp(list, "") == 0, "only inert keys: no option, not cannot-disarm: `%s`", list);
}

/* drivers and inert keys together: each driver's options, no cannot-disarm */
static void test_drivers(struct sandbox_git_run *g) {
  cleanup_free char *list = host_args_after(
      g,
      "[user]\n\tname = n\n[filter \"lfs\"]\n\tclean = ./c\n\trequired = true\n[diff \"x\"]\n"
      "\ttextconv = ./t\n\txfuncname = ^f\n[core]\n\tfsmonitor = ./f\n\tpager = ./p\n"
      "[merge \"m\"]\n\tname = m\n\tdriver = ./m\n",
      NULL);
  tap_ok(strcmp(list,
                "-c|filter.lfs.clean=|-c|filter.lfs.smudge=|-c|filter.lfs.process=|-c|"
                "filter.lfs.required=false|-c|diff.x.textconv=/usr/bin/cat|-c|core.fsmonitor=false|"
                "-c|core.pager=cat|-c|merge.m.driver=/usr/bin/false") == 0,
         "known drivers among inert keys: each driver's options, in order: %s", list);
  cleanup_free char *required = host_args_after(g, "[filter \"r\"]\n\trequired = true\n", NULL);
  tap_ok(strcmp(required, "-c|filter.r.clean=|-c|filter.r.smudge=|-c|filter.r.process=|-c|"
                          "filter.r.required=false") == 0,
         "filter.<x>.required alone: the filter's options (not required): %s", required);
  cleanup_free char *bare = host_args_after(g, "[core]\n\tfsmonitor\n", NULL);
  tap_ok(strcmp(bare, "-c|core.fsmonitor=false") == 0,
         "a driver's key set bare (true: git's own fsmonitor daemon): disarmed: %s", bare);
}

/* a walk that could not look at the worktree (its name led elsewhere): what the run changed there
 * is not known, so no list of options can be: cannot disarm, as for a config it could not read */
static void test_unwalked(struct sandbox_git_run *g) {
  char *tamper[] = {(char *)SANDBOX_GIT_TAMPER_UNWALKED, NULL};
  char **a = sandbox_git_host_args(g, tamper);
  cleanup_free char *list = joined(a);
  tap_ok(cannot_first(list), "tamper \".\" (nothing walked): cannot disarm first: %.60s", list);
  sandbox_git_strv_free(a);
}

/* each option once, in the order first asked for (a hash set, not a scan of the list) */
static void test_dedupe_order(struct sandbox_git_run *g) {
  cleanup_free char *list = host_args_after(
      g,
      "[diff \"b\"]\n\ttextconv = ./t\n[core]\n\tfsmonitor = ./f\n[diff \"a\"]\n\ttextconv = ./t\n"
      "[diff \"b\"]\n\ttextconv = ./u\n[core]\n\tfsmonitor = ./g\n[diff \"c\"]\n\ttextconv = ./t\n",
      NULL);
  tap_ok(strcmp(list, "-c|diff.b.textconv=/usr/bin/cat|-c|core.fsmonitor=false|-c|diff.a.textconv=/"
                      "usr/bin/cat|-c|"
                      "diff.c.textconv=/usr/bin/cat") == 0,
         "each option once, first-asked order: %s", list);
}

/* n filter sections `[filter "fI"] clean = x` and, last, a textconv (caller frees) */
static char *filters(size_t n) {
  size_t cap = n * 40 + 64, len = 0;
  char *text = xmalloc0(cap);
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, cap - len, "[filter \"f%zu\"]\n\tclean = x\n", i);
  snprintf(text + len, cap - len, "[diff \"last\"]\n\ttextconv = ./t\n");
  return text;
}

/* the cannot-disarm list alone, as the words joined (caller frees) */
static char *cannot_alone(struct sandbox_git_run *g) {
  return host_args_after(g, "[core]\n\tgitProxy = ./p\n", NULL);
}

/* what sandbox_git_warn_host_args says of list (words joined by `|`) on stderr (caller frees) */
static char *warning_of(const char *list) {
  cleanup_free char *copy = xstrdup(list), *path = xasprintf("%s/warning", top);
  char **v = NULL, *save = NULL, *text = xmalloc0(8192);
  size_t n = 0;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  for (char *w = strtok_r(copy, "|", &save); w != NULL; w = strtok_r(NULL, "|", &save))
    sandbox_git_strv_push(&v, &n, w);
  fsrun_log_to_stderr_fd(fd);
  sandbox_git_warn_host_args("sandbox", v);
  fsrun_log_to_stderr_fd(STDERR_FILENO);
  if (fd < 0 || pread(fd, text, 8191, 0) < 0)
    text[0] = '\0';
  if (fd >= 0)
    close(fd);
  sandbox_git_strv_free(v);
  return text;
}

/* F7: past what one warning line holds, cannot disarm alone (nothing more added); below it, every
 * driver's option, and that line whole */
static void test_bounded(struct sandbox_git_run *g) {
  size_t n, fit = 0;
  cleanup_free char *alone = cannot_alone(g), *longest = NULL, *next = NULL;
  for (size_t f = 1; f <= 40 && next == NULL; f++) {
    cleanup_free char *text = filters(f);
    char *list = host_args_after(g, text, &n);
    if (cannot_first(list)) {
      next = list;
      continue;
    }
    fit = f;
    free(longest);
    longest = list;
  }
  tap_ok(fit >= 8 && fit < 40 && longest != NULL && words_of(longest) == 2 * (4 * fit + 1) &&
             next != NULL && strcmp(next, alone) == 0,
         "up to %zu filters and a textconv: each driver's option; one more: cannot-disarm alone",
         fit);
  cleanup_free char *line = warning_of(longest != NULL ? longest : "");
  size_t len = strlen(line);
  tap_ok(len > 1024 && len < 2048 && strcmp(line + len - 3, "\"]\n") == 0 &&
             strstr(line, "\"diff.last.textconv=/usr/bin/cat\"]") != NULL,
         "the longest list that fits: its warning line is whole (%zu bytes)", len);
  cleanup_free char *many_text = filters(20000); /* review22 F7: 160,000 options before */
  cleanup_free char *many = host_args_after(g, many_text, &n);
  tap_ok(strcmp(many, alone) == 0,
         "20,000 filter sections: the cannot-disarm list alone (%zu words)", n);
  cleanup_free char *name = xmalloc0(801);
  memset(name, 'd', 800);
  cleanup_free char *long_text =
      xasprintf("[diff \"a%s\"]\n\ttextconv = ./t\n[diff \"b%s\"]\n\ttextconv = ./t\n", name, name);
  cleanup_free char *long_list = host_args_after(g, long_text, NULL);
  tap_ok(
      strcmp(long_list, alone) == 0,
      "two textconvs of 800-character driver names, more than a line holds: cannot-disarm alone");
  cleanup_free char *equals =
      host_args_after(g, "[diff \"a\"]\n\ttextconv = ./t\n[trailer \"t\"]\n\tcommand = x\n", NULL);
  tap_ok(cannot_first(equals) && strstr(equals, "|-c|diff.a.textconv=/usr/bin/cat") != NULL,
         "cannot-disarm and a driver, short: both kept: %.60s", equals);
}

/* an executable file at dir/name saying what it is (a planted one, a host's own) */
static void program_at(const char *dir, const char *name) {
  cleanup_free char *path = xasprintf("%s/%s", dir, name);
  FILE *f;
  mkdir(dir, 0755);
  f = fopen(path, "w");
  if (f == NULL || fputs("#!/bin/sh\necho planted\n", f) < 0 || fclose(f) != 0 ||
      chmod(path, 0755) < 0)
    abort();
}

/* review29 G3: a program hostGitArgs name is never a bare word the host's git looks up on PATH,
 * where an entry the run writes (the worktree, a writablePaths entry) holds a planted one: it is
 * the path of the first in an entry the run does not write, and not a host link into the
 * worktree; none there: `false`'s; neither: cannot disarm */
static void test_programs(struct sandbox_git_run *g) {
  char other[] = "/tmp/fsrun-test-git-disarm-other.XXXXXX";
  const char *conf = "[diff \"x\"]\n\ttextconv = ./t\n[merge \"m\"]\n\tdriver = ./m\n[diff]\n"
                     "\texternal = ./d\n";
  if (mkdtemp(other) == NULL)
    abort();
  cleanup_free char *w = xasprintf("%s/w", other), *wbin = xasprintf("%s/w/bin", other);
  cleanup_free char *host = xasprintf("%s/host", other), *tbin = xasprintf("%s/bin", top);
  cleanup_free char *link = xasprintf("%s/host/cat", other), *into = xasprintf("%s/bin/cat", top);
  cleanup_free char *path = NULL, *list = NULL, *first = NULL, *none = NULL, *cmd = NULL;
  char *items[] = {w, NULL};
  oci_strv writable = {.items = items, .len = 1};
  mkdir(w, 0755);
  program_at(tbin, "cat");
  program_at(tbin, "false");
  program_at(wbin, "cat");
  program_at(wbin, "git");
  mkdir(host, 0755);
  if (symlink(into, link) < 0)
    abort();
  g->writable = &writable;
  path = xasprintf("%s:%s:%s:/usr/bin:/bin", tbin, wbin, host);
  setenv("PATH", path, 1);
  list = host_args_after(g, conf, NULL);
  tap_ok(strstr(list, "|diff.x.textconv=/usr/bin/cat|") != NULL &&
             strstr(list, "|merge.m.driver=/usr/bin/false|") != NULL &&
             strstr(list, "|| /usr/bin/git --no-pager diff") != NULL && !cannot_first(list),
         "cat, false and git planted in the worktree's and a writablePaths entry's bin first on "
         "PATH, a host link into the worktree next: the paths in /usr/bin: %s",
         list);
  unlink(link); /* the host's own cat there now */
  program_at(host, "cat");
  first = host_args_after(g, conf, NULL);
  tap_ok(strstr(first, "|diff.x.textconv=") != NULL && strstr(first, link) != NULL,
         "a host's own cat in the first entry the run does not write: its path: %.120s", first);
  free(path);
  path = xasprintf("%s:%s", tbin, wbin);
  setenv("PATH", path, 1);
  none = host_args_after(g, conf, NULL);
  tap_ok(cannot_first(none) && strstr(none, "textconv") == NULL && strstr(none, "driver") == NULL &&
             strstr(none, "diffFilter") == NULL,
         "no entry but the run's: no program named, cannot disarm: %.80s", none);
  setenv("PATH", "/usr/bin:/bin", 1);
  g->writable = NULL;
  cmd = xasprintf("rm -rf '%s' '%s'", other, tbin);
  if (system(cmd) != 0)
    tap_diag("could not remove %s", other);
}

int main(void) {
  struct sandbox_git_run g;
  cleanup_free char *home = NULL, *cmd = NULL;
  if (mkdtemp(top) == NULL) {
    tap_ok(false, "mkdtemp: %m");
    return tap_done();
  }
  /* the caller's own global config is no test's */
  home = xasprintf("%s/h", top);
  mkdir(home, 0700);
  setenv("HOME", home, 1);
  unsetenv("XDG_CONFIG_HOME");
  unsetenv("GIT_CONFIG_GLOBAL");
  setenv("PATH", "/usr/bin:/bin", 1); /* where the host's programs are found (test_programs) */
  repository(&g);
  test_other_keys(&g);
  test_inert_keys(&g);
  test_drivers(&g);
  test_unwalked(&g);
  test_dedupe_order(&g);
  test_bounded(&g);
  test_programs(&g);
  sandbox_git_pointers_free(&g);
  free(g.common_dir);
  cmd = xasprintf("rm -rf '%s'", top);
  if (system(cmd) != 0)
    tap_diag("could not remove %s", top);
  return tap_done();
}
