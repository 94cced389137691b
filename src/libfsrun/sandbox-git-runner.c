/* The runners a driver's command may start with, read as each reads its arguments (getopt's
 * rules: short letters bundled, a value attached or in the next word; `--long=value` or
 * `--long value`; `--` ends the options), so that the word of the command they run is found and
 * watched on PATH as the driver's own command is (review27 E6, session 29: stdbuf, ionice, chrt,
 * taskset, flock, time, sudo; session 30: busybox, doas, su, runuser, env -S). Each word is read
 * once: a runner's runner (`nice -n 5 chrt -b 0 myfilt`) costs no more than the words it has. */
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
  /* options whose value is a command string, anywhere (su's `-c CMD`) */
  const char *short_command;
  const char *const *long_command;
  /* options whose value is the runner's own arguments again (env's `-S '-i PATH=x CMD'`) */
  const char *short_split;
  const char *const *long_split;
  /* options whose value is a program the runner runs besides its command (su's `-s SHELL`) */
  const char *short_program;
  const char *const *long_program;
  /* options whose value stands for the operand (runuser's `-u USER`: the command follows) */
  const char *short_operand;
  const char *const *long_operand;
  /* su's getopt: options after the operand too (GNU's permutation), `-` is the login option; the
   * words after the operand are the shell's arguments (a script file), not a command */
  bool su;
};

static const char *const none[] = {NULL};

/* a NULL-ended list of words, for the table */
#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct git_runner runners[] = {
    /* bash's `exec -a NAME`, env's `-u NAME`, `-C DIR`, `-S 'ARGS'` (env's own arguments again) */
    {WORDS("env", "exec", "command", "nohup", "setsid"), "uCa", WORDS("--unset", "--chdir"), "",
     none, OPERAND_NONE, false, .short_split = "S", .long_split = WORDS("--split-string")},
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
    /* OpenBSD's doas: `-C CONFIG` checks a config, `-L` clears, `-s` runs a shell: no command */
    {WORDS("doas"), "u", none, "CLs", none, OPERAND_NONE, false},
    /* `busybox APPLET ...`: the applet's name is the next command word (busybox env, sh, nice...)
     */
    {WORDS("busybox"), "", none, "", WORDS("--list", "--list-full", "--install", "--help"),
     OPERAND_NONE, false},
    /* util-linux su and runuser: `su [-] [USER] -c CMD`, `runuser -u USER [--] CMD`; `-s SHELL`:
     * the program that runs the command string, a command word of its own */
    {WORDS("su"), "gGw", WORDS("--group", "--supp-group", "--whitelist-environment"), "hV",
     WORDS("--help", "--version"), OPERAND_ANY, false, .short_command = "c",
     .long_command = WORDS("--command", "--session-command"), .short_program = "s",
     .long_program = WORDS("--shell"), .su = true},
    {WORDS("runuser"), "gGw", WORDS("--group", "--supp-group", "--whitelist-environment"), "hV",
     WORDS("--help", "--version"), OPERAND_ANY, false, .short_command = "c",
     .long_command = WORDS("--command", "--session-command"), .short_program = "s",
     .long_program = WORDS("--shell"), .short_operand = "u", .long_operand = WORDS("--user"),
     .su = true},
};

static bool listed(const char *const *list, const char *w, size_t n) {
  for (; list != NULL && *list != NULL; list++)
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

static bool letter_in(const char *letters, char c) {
  return letters != NULL && strchr(letters, c) != NULL;
}

/* an option whose value is the command string: the next word (the state ends: that word is the
 * command), or attached at w + at */
static enum git_runner_word command_value(struct git_runner_state *s, const char *w, size_t at) {
  if (w[at] == '\0') {
    *s = (struct git_runner_state){0};
    return GIT_RUNNER_BEFORE;
  }
  s->attached = at;
  return GIT_RUNNER_ATTACHED;
}

/* env -S's value: the runner's own words again (quotes break words here, so the next word is the
 * first of them), or attached at w + at: read as the runner's next word (review30 H2) */
static enum git_runner_word split_value(struct git_runner_state *s, const char *w, size_t at) {
  s->split = true;
  if (w[at] == '\0')
    return GIT_RUNNER_BEFORE;
  s->attached = at;
  return GIT_RUNNER_ATTACHED_ARGUMENT;
}

/* su's `-s SHELL`: the value (the next word, or attached at w + at) is a program of its own
 * (review30 H2) */
static enum git_runner_word program_value(struct git_runner_state *s, const char *w, size_t at) {
  if (w[at] == '\0') {
    s->program_next = true;
    return GIT_RUNNER_BEFORE;
  }
  s->attached = at;
  return GIT_RUNNER_PROGRAM;
}

/* `--long`, `--long=value`: whether the value is the next word, or no command follows */
static enum git_runner_word long_option(struct git_runner_state *s, const char *w) {
  const struct git_runner *r = s->runner;
  size_t n = strcspn(w, "=");
  if (listed(r->long_no_command, w, n))
    return GIT_RUNNER_NO_COMMAND;
  if (listed(r->long_command, w, n))
    return command_value(s, w, w[n] == '=' ? n + 1 : n);
  if (listed(r->long_split, w, n))
    return split_value(s, w, w[n] == '=' ? n + 1 : n);
  if (listed(r->long_program, w, n))
    return program_value(s, w, w[n] == '=' ? n + 1 : n);
  s->operand_given |= listed(r->long_operand, w, n);
  s->skip_next = w[n] == '\0' && (listed(r->long_values, w, n) || listed(r->long_operand, w, n));
  return GIT_RUNNER_BEFORE;
}

/* `-abc`: letters until one that takes a value (the rest of the word, or the next word) */
static enum git_runner_word short_options(struct git_runner_state *s, const char *w) {
  const struct git_runner *r = s->runner;
  for (const char *p = w + 1; *p != '\0'; p++) {
    if (letter_in(r->no_command, *p))
      return GIT_RUNNER_NO_COMMAND;
    if (letter_in(r->short_command, *p))
      return command_value(s, w, (size_t)(p + 1 - w));
    if (letter_in(r->short_split, *p))
      return split_value(s, w, (size_t)(p + 1 - w));
    if (letter_in(r->short_program, *p))
      return program_value(s, w, (size_t)(p + 1 - w));
    s->operand_given |= letter_in(r->short_operand, *p);
    if (letter_in(r->short_values, *p) || letter_in(r->short_operand, *p)) {
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
  if (s->program_next) {
    s->program_next = false;
    s->attached = 0;
    return GIT_RUNNER_PROGRAM;
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
  if (r->su && strcmp(w, "-") == 0 && !s->options_done)
    return GIT_RUNNER_BEFORE; /* su's `-`: a login shell */
  if (w[0] == '-' && w[1] != '\0' && !s->options_done && (!s->operand_seen || r->su))
    return w[1] == '-' ? long_option(s, w) : short_options(s, w);
  if (s->operand_given)
    return GIT_RUNNER_COMMAND;
  if (r->operand != OPERAND_NONE && !s->operand_seen && (r->operand == OPERAND_ANY || digits(w))) {
    s->operand_seen = true;
    return GIT_RUNNER_BEFORE;
  }
  return r->su ? GIT_RUNNER_ARGUMENTS : GIT_RUNNER_COMMAND;
}
