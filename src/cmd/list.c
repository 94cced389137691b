/* fsrun list [--format table|json] [--quiet] */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void list_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun list [--format table|json] [--quiet]\n\n"
          "List the containers under the state root.\n\n"
          "Options:\n"
          "  -f, --format FORMAT  table (ID PID STATUS BUNDLE CREATED OWNER) or json (an array\n"
          "                       of state objects); default table\n"
          "  -q, --quiet          print the ids only\n"
          "  -h, --help           print this help\n");
}

FSRUN_COMMAND(list) {
  static const struct option options[] = {
      {"format", required_argument, NULL, 'f'},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *format = NULL;
  bool quiet = false;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":f:qh", options, NULL)) != -1) {
    switch (opt) {
    case 'f':
      format = optarg;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      list_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("list", opt, argv, err);
    }
  }
  if (fsrun_command_no_operands("list", argc, argv, err) < 0)
    return -1;
  return container_list(ctx, format, quiet, stdout, err);
}
