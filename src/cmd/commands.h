/* One file per subcommand in src/cmd/: argument parsing only, then a call into libfsrun.
 * Each returns 0 or a negative code with *err set; the CLI prints the error and exits 1. A command
 * that must exit with another status (run, exec, sandbox: the process's status) stores it in
 * *exit_status (preset to 0 by the caller). */
#ifndef FSRUN_COMMANDS_H
#define FSRUN_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "context.h"
#include "error.h"

typedef int (*fsrun_command_fn)(struct fsrun_context *ctx, int argc, char **argv, int *exit_status,
                                fsrun_error_t *err);

struct fsrun_command {
  const char *name;
  fsrun_command_fn fn;
  const char *summary; /* one line for `fsrun --help` */
  /* may be NULL: run before the heap is prefaulted, for a fork that should copy little */
  void (*before_heap)(const struct fsrun_context *ctx);
  bool stateless; /* never reads nor writes the state root: not made, not checked */
  /* runs most of the image and grows the heap: both are mapped at once (prefault.h) */
  bool prefault;
};

/* Every command's argv starts at the command name (argv[0] == "create"), so getopt_long works with
 * optind = 0 reset by the command. Each command handles its own --help. */
#define FSRUN_COMMAND(name)                                                                        \
  int fsrun_cmd_##name(struct fsrun_context *ctx, int argc, char **argv, int *exit_status,         \
                       fsrun_error_t *err)

FSRUN_COMMAND(spec);
FSRUN_COMMAND(features);
FSRUN_COMMAND(validate);
FSRUN_COMMAND(create);
FSRUN_COMMAND(start);
FSRUN_COMMAND(run);
FSRUN_COMMAND(state);
FSRUN_COMMAND(kill);
FSRUN_COMMAND(delete);
FSRUN_COMMAND(list);
FSRUN_COMMAND(ps);
FSRUN_COMMAND(exec);
FSRUN_COMMAND(pause);
FSRUN_COMMAND(resume);
FSRUN_COMMAND(update);
FSRUN_COMMAND(events);
FSRUN_COMMAND(sandbox);
FSRUN_COMMAND(bundle);
FSRUN_COMMAND(checkpoint);
FSRUN_COMMAND(restore);

/* For a command's getopt_long loop (optstring starting with "+:", opterr = 0): turns the ':' or
 * '?' result into "NAME: unknown option `-x` (see fsrun NAME --help)". Returns -1 with *err set. */
int fsrun_command_option_error(const char *name, int opt, char **argv, fsrun_error_t *err);
/* After a command's getopt loop: argv[optind] must be the one container ID and the last argument
 * ("NAME: expected exactly one container ID (see fsrun NAME --help)"). Returns 0 with *id set, or
 * -1 with *err set. */
int fsrun_command_take_id(const char *name, int argc, char **argv, const char **id,
                          fsrun_error_t *err);
/* After a command's getopt loop: no argument may follow the options ("NAME: unexpected argument
 * `X` (see fsrun NAME --help)"). Returns 0, or -1 with *err set. */
int fsrun_command_no_operands(const char *name, int argc, char **argv, fsrun_error_t *err);
/* Parses `NAME [-h|--help] ID` for commands that take only a container id. Returns 1 after printing
 * the usage (for --help), 0 with *id set, or a negative code with *err set. */
int fsrun_command_parse_single_id(const char *name, void (*usage)(FILE *), int argc, char **argv,
                                  const char **id, fsrun_error_t *err);

/* create.c, for run.c and exec.c: "--preserve-fds" takes a non-negative number. */
int fsrun_parse_preserve_fds(const char *arg, int *out, fsrun_error_t *err);

/* checkpoint.c, for restore.c: the CRIU options both commands take (struct criu_opts). */
struct criu_opts;
struct option;
/* 1 when opt was one of them (stored in o), 0 when not, -1 with *err set. */
int fsrun_parse_criu_option(int opt, const char *arg, struct criu_opts *o, fsrun_error_t *err);
/* out = own[0..n) + the shared options + the terminating zero entry; out has room for
 * n + FSRUN_CRIU_OPTIONS_MAX + 1. */
#define FSRUN_CRIU_OPTIONS_MAX 16
void fsrun_criu_options_merge(struct option *out, const struct option *own, size_t n);

#endif
