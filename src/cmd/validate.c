/* fsrun validate [--bundle DIR] [--policy FILE]: check a bundle (and/or a Fusion policy) the way
 * create will, without creating anything. Silent and exit 0 when valid. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "validate.h"

static void validate_usage(FILE *out) {
  fprintf(out, "Usage: fsrun validate [--bundle DIR] [--policy FILE]\n\n"
               "Check a bundle's config.json as `fsrun create` would, without creating anything.\n"
               "Prints nothing and exits 0 when it is valid; otherwise prints one line naming the\n"
               "field (\"fsrun: config.json: process.cwd: ...\") and exits 1.\n\n"
               "Options:\n"
               "  -b, --bundle DIR   bundle directory (default: the current directory)\n"
               "  --policy FILE      check a Fusion sandbox policy instead (also the bundle when\n"
               "                     --bundle is given too)\n"
               "  -h, --help         print this help\n");
}

FSRUN_COMMAND(validate) {
  static const struct option options[] = {
      {"bundle", required_argument, NULL, 'b'},
      {"policy", required_argument, NULL, 'p'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct validate_options opts = {.systemd_cgroup = ctx->systemd_cgroup, .ctx = ctx};
  const char *bundle = NULL, *policy = NULL;
  int opt, ret;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:b:h", options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      bundle = optarg;
      break;
    case 'p':
      policy = optarg;
      break;
    case 'h':
      validate_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("validate", opt, argv, err);
    }
  }
  if (fsrun_command_no_operands("validate", argc, argv, err) < 0)
    return -1;

  if (policy != NULL) {
    ret = validate_policy_file(policy, NULL, err);
    if (ret < 0 || bundle == NULL)
      return ret;
  }
  return validate_bundle(bundle ? bundle : ".", &opts, NULL, err);
}
