/* Commands that run another command given as a word (`nice -n 5 myfilt`, `flock x.lock myfilt`):
 * a driver's words are read on past them to the command they run (docs/sandbox.md, "Git on the
 * host"). */
#ifndef SANDBOX_GIT_RUNNER_H
#define SANDBOX_GIT_RUNNER_H

#include <stdbool.h>

struct git_runner;

/* where a runner's words are, from its name to its command */
struct git_runner_state {
  const struct git_runner *runner; /* NULL: no runner (the next command word is the command) */
  bool skip_next;                  /* the next word is an option's value (`-n 5`) */
  bool operand_seen;               /* the word before the command came (`timeout`'s duration) */
  bool options_done;               /* `--` came: a word with `-` is no option */
  bool operand_given;              /* an option's value stood for the operand (`runuser -u U`) */
  bool program_next;               /* the next word is a program of its own (`su -s SHELL`) */
  bool split;                      /* env -S came: its own syntax (`\_`, `#`) may follow */
  size_t attached; /* GIT_RUNNER_ATTACHED*, _PROGRAM: where in the word what it names starts */
};

enum git_runner_word {
  GIT_RUNNER_COMMAND,    /* w is the command the runner runs (or no runner) */
  GIT_RUNNER_BEFORE,     /* w is an option, its value or an operand: the command comes after */
  GIT_RUNNER_NO_COMMAND, /* w says the runner runs no command (`taskset -p`, `sudo -l`) */
  GIT_RUNNER_ARGUMENTS,  /* w and what follows are arguments, not a command (`su USER x.sh`) */
  GIT_RUNNER_ATTACHED,   /* w's value from s->attached on is the command (`su -cmyfilt`) */
  /* w's value from s->attached on is the runner's next word (`env -S-i`, `env -Smyfilt`) */
  GIT_RUNNER_ATTACHED_ARGUMENT,
  /* w (from s->attached on) is a program the runner runs, watched as a command; the runner's
   * words go on after it (`su -s SHELL -c CMD`) */
  GIT_RUNNER_PROGRAM,
};

/* the runner a command word names, by its base name (`/usr/bin/nice`); NULL: none */
const struct git_runner *git_runner_of(const char *w);

/* what the word w after a runner's name is; s moves on (a value to skip, the operand seen). After
 * flock's `-c` and su's `-c`, s->runner is NULL: the next word is the command. */
enum git_runner_word git_runner_word(struct git_runner_state *s, const char *w);

#endif
