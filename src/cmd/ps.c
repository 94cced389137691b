/* fsrun ps [--format table|json] ID [-- PS-ARGS...] */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void ps_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun ps [--format table|json] ID [-- PS-ARGS...]\n\n"
          "List the processes of the container ID.\n\n"
          "Options:\n"
          "  -f, --format FORMAT  table (the lines of `ps PS-ARGS`, default `ps -ef`, for the\n"
          "                       container's processes) or json (an array of host pids)\n"
          "  -h, --help           print this help\n");
}

FSRUN_COMMAND(ps) {
  static const struct option options[] = {
      {"format", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *format = NULL;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":f:h", options, NULL)) != -1) {
    switch (opt) {
    case 'f':
      format = optarg;
      break;
    case 'h':
      ps_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("ps", opt, argv, err);
    }
  }
  if (optind >= argc)
    return fsrun_error_make(err, 0, "ps: expected a container ID (see fsrun ps --help)");
  return container_ps(ctx, argv[optind], format, argv + optind + 1, argc - optind - 1, stdout, err);
}
