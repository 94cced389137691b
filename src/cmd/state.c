/* fsrun state ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void state_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun state ID\n\n"
          "Print the OCI state of the container ID as JSON (status: creating, created, running,\n"
          "paused or stopped).\n\n"
          "Options:\n"
          "  -h, --help   print this help\n");
}

FSRUN_COMMAND(state) {
  static const struct option options[] = {
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (opt) {
    case 'h':
      state_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("state", opt, argv, err);
    }
  }
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0,
                            "state: expected exactly one container ID (see fsrun state --help)");
  return container_state(ctx, argv[optind], stdout, err);
}
