/* fsrun pause ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "live.h"

static void pause_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun pause ID\n\n"
          "Freeze every process of the running container ID (the v1 freezer, or cgroup.freeze\n"
          "on cgroup v2). `fsrun state` then says \"paused\"; `fsrun resume` continues it.\n\n"
          "Options:\n"
          "  -h, --help   print this help\n");
}

FSRUN_COMMAND(pause) {
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
      pause_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("pause", opt, argv, err);
    }
  }
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0,
                            "pause: expected exactly one container ID (see fsrun pause --help)");
  return container_pause(ctx, argv[optind], err);
}
