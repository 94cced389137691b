/* fsrun start ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void start_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun start ID\n\n"
          "Start the created container ID: its process is executed and poststart hooks run.\n\n"
          "Options:\n"
          "  -h, --help   print this help\n");
}

FSRUN_COMMAND(start) {
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
      start_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("start", opt, argv, err);
    }
  }
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0,
                            "start: expected exactly one container ID (see fsrun start --help)");
  return container_start(ctx, argv[optind], err);
}
