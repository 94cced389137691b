/* fsrun bundle --policy FILE --worktree DIR --out DIR [-- COMMAND...] */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "sandbox.h"

static void bundle_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun bundle --policy FILE --worktree DIR --out DIR [-- COMMAND [ARG...]]\n\n"
          "Write the bundle of the Fusion sandbox (config.json and an empty root) that `fsrun\n"
          "sandbox` would run COMMAND in (default /bin/sh), for create/start/exec/delete of a\n"
          "long-lived task container. The environment is filtered now, from fsrun's own.\n\n"
          "Options:\n"
          "  --policy FILE     the sandbox policy (JSON; `-` reads it from stdin)\n"
          "  --worktree DIR    the git worktree: bound read-write, the process's cwd\n"
          "  --out DIR         the bundle directory to write (must not hold a config.json)\n"
          "  -h, --help        print this help\n");
}

FSRUN_COMMAND(bundle) {
  enum { OPT_POLICY = 1000, OPT_WORKTREE, OPT_OUT };
  static const struct option options[] = {
      {"policy", required_argument, NULL, OPT_POLICY},
      {"worktree", required_argument, NULL, OPT_WORKTREE},
      {"out", required_argument, NULL, OPT_OUT},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct sandbox_bundle_opts o = {0};
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
    switch (opt) {
    case OPT_POLICY:
      o.policy_path = optarg;
      break;
    case OPT_WORKTREE:
      o.worktree = optarg;
      break;
    case OPT_OUT:
      o.out_dir = optarg;
      break;
    case 'h':
      bundle_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("bundle", opt, argv, err);
    }
  }
  if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
    return fsrun_error_make(
        err, 0, "bundle: unexpected argument `%s` (the command goes after `--`)", argv[optind]);
  if (o.policy_path == NULL)
    return fsrun_error_make(err, 0, "bundle: --policy FILE is required (see fsrun bundle --help)");
  o.args = argv + optind;
  o.n_args = (size_t)(argc - optind);
  return sandbox_bundle(ctx, &o, err);
}
