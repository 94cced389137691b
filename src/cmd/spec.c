/* fsrun spec [--bundle DIR] [--rootless]: write a default config.json. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "spec.h"

static void spec_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun spec [--bundle DIR] [--rootless]\n\n"
          "Write a default config.json (a shell in DIR/rootfs) into the bundle directory.\n\n"
          "Options:\n"
          "  -b, --bundle DIR  bundle directory (default: the current directory)\n"
          "  --rootless        a config for an unprivileged user: a user namespace that maps\n"
          "                    root in the container to the calling user, no network namespace\n"
          "  -h, --help        print this help\n");
}

FSRUN_COMMAND(spec) {
  static const struct option options[] = {
      {"bundle", required_argument, NULL, 'b'},
      {"rootless", no_argument, NULL, 'r'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *bundle = ".";
  bool rootless = false;
  int opt;

  (void)ctx;
  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:b:h", options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      bundle = optarg;
      break;
    case 'r':
      rootless = true;
      break;
    case 'h':
      spec_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("spec", opt, argv, err);
    }
  }
  if (fsrun_command_no_operands("spec", argc, argv, err) < 0)
    return -1;
  return spec_write_default(bundle, rootless, err);
}
