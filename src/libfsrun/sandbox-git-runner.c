/* The runners a driver's command may start with, read as each reads its arguments (getopt's
 * rules: short letters bundled, a value attached or in the next word; `--long=value` or
 * `--long value`; `--` ends the options), so that the word of the command they run is found and
 * watched on PATH as the driver's own command is (review27 E6, session 29: stdbuf, ionice, chrt,
 * taskset, flock, time, sudo). Each word is read once: a runner's runner (`nice -n 5 chrt -b 0
 * myfilt`) costs no more than the words it has. */
#include <stddef.h>
#include <string.h>

#include "sandbox-git-runner.h"

/* the word a runner takes between its options and its command */
enum operand {
  OPERAND_NONE,
  OPERAND_ANY,    /* timeout's duration, taskset's mask or list, flock's file */
  OPERAND_DIGITS, /* chrt's priority (left out by newer chrt for a policy without one) */
};

struct git_runner {
  const char *const *names;
  const char *short_values;       /* option letters whose value is attached or the next word */
  const char *const *long_values; /* `--long` options whose value is the next word (no `=`) */
  const char *no_command;         /* option letters after which the runner runs no command */
  const char *const *long_no_command;
  enum operand operand;
  /* after the operand, `-c CMD`/`--command CMD` is a shell's command string (flock) */
  bool command_option;
};

static const char *const none[] = {NULL};

/* a NULL-ended list of words, for the table */
#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct git_runner runners[] = {
    /* bash's `exec -a NAME`, env's `-u NAME`, `-C DIR` */
    {WORDS("env", "exec", "command", "nohup", "setsid"), "uCa", WORDS("--unset", "--chdir"), "",
     none, OPERAND_NONE, false},
    {WORDS("xargs"), "adEILnPs",
     WORDS("--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars",
           "--process-slot-var"),
     "", none, OPERAND_NONE, false},
    {WORDS("timeout"), "ks", WORDS("--kill-after", "--signal"), "", none, OPERAND_ANY, false},
    {WORDS("nice"), "n", WORDS("--adjustment"), "", none, OPERAND_NONE, false},
    {WORDS("stdbuf"), "ioe", WORDS("--input", "--output", "--error"), "", none, OPERAND_NONE,
     false},
    {WORDS("ionice"), "cn", WORDS("--class", "--classdata"), "pPu",
     WORDS("--pid", "--pgid", "--uid"), OPERAND_NONE, false},
    {WORDS("chrt"), "TPD", WORDS("--sched-runtime", "--sched-period", "--sched-deadline"), "pm",
     WORDS("--pid", "--max"), OPERAND_DIGITS, false},
    {WORDS("taskset"), "", none, "p", WORDS("--pid"), OPERAND_ANY, false},
    {WORDS("flock"), "wE", WORDS("--wait", "--timeout", "--conflict-exit-code"), "", none,
     OPERAND_ANY, true},
    {WORDS("time"), "of", WORDS("--output", "--format"), "", none, OPERAND_NONE, false},
    /* `sudo -i`/`-s` without a command run a shell: no word to follow, nothing to watch */
    {WORDS("sudo"), "aCcDgpRrTtUu",
     WORDS("--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type",
           "--command-timeout", "--other-user", "--chroot", "--login-class", "--auth-type"),
     "elvKV", WORDS("--edit", "--list", "--validate", "--remove-timestamp", "--version"),
     OPERAND_NONE, false},
};

static bool listed(const char *const *list, const char *w, size_t n) {
  for (; *list != NULL; list++)
    if (strlen(*list) == n && strncmp(*list, w, n) == 0)
      return true;
  return false;
}

const struct git_runner *git_runner_of(const char *w) {
  const char *base = strrchr(w, '/');
  base = base != NULL ? base + 1 : w;
  for (size_t i = 0; i < sizeof(runners) / sizeof(runners[0]); i++)
    if (listed(runners[i].names, base, strlen(base)))
      return &runners[i];
  return NULL;
}

/* `--long`, `--long=value`: whether the value is the next word, or no command follows */
static enum git_runner_word long_option(struct git_runner_state *s, const char *w) {
  const struct git_runner *r = s->runner;
  size_t n = strcspn(w, "=");
  if (listed(r->long_no_command, w, n))
    return GIT_RUNNER_NO_COMMAND;
  s->skip_next = w[n] == '\0' && listed(r->long_values, w, n);
  return GIT_RUNNER_BEFORE;
}

/* `-abc`: letters until one that takes a value (the rest of the word, or the next word) */
static enum git_runner_word short_options(struct git_runner_state *s, const char *w) {
  const struct git_runner *r = s->runner;
  for (const char *p = w + 1; *p != '\0'; p++) {
    if (strchr(r->no_command, *p) != NULL)
      return GIT_RUNNER_NO_COMMAND;
    if (strchr(r->short_values, *p) != NULL) {
      s->skip_next = p[1] == '\0';
      break;
    }
  }
  return GIT_RUNNER_BEFORE;
}

static bool digits(const char *w) {
  return w[0] != '\0' && w[strspn(w, "0123456789")] == '\0';
}

enum git_runner_word git_runner_word(struct git_runner_state *s, const char *w) {
  const struct git_runner *r = s->runner;
  if (s->skip_next) {
    s->skip_next = false;
    return GIT_RUNNER_BEFORE;
  }
  if (r->command_option && s->operand_seen &&
      (strcmp(w, "-c") == 0 || strcmp(w, "--command") == 0)) {
    *s = (struct git_runner_state){0}; /* flock FILE -c 'CMD ...': CMD is the command */
    return GIT_RUNNER_BEFORE;
  }
  if (strcmp(w, "--") == 0 && !s->options_done) {
    s->options_done = true; /* `--` ends the options (getopt takes it after the operand too) */
    return GIT_RUNNER_BEFORE;
  }
  if (w[0] == '-' && w[1] != '\0' && !s->options_done && !s->operand_seen)
    return w[1] == '-' ? long_option(s, w) : short_options(s, w);
  if (r->operand != OPERAND_NONE && !s->operand_seen && (r->operand == OPERAND_ANY || digits(w))) {
    s->operand_seen = true;
    return GIT_RUNNER_BEFORE;
  }
  return GIT_RUNNER_COMMAND;
}
