/* fsrun delete [--force] ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void delete_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun delete [--force] ID\n\n"
          "Delete the container ID: remove its cgroup and state and run its poststop hooks.\n"
          "A created or stopped container is deleted as it is; a running one needs --force.\n\n"
          "Options:\n"
          "  -f, --force  kill the container's processes first (SIGKILL); a missing container\n"
          "               is not an error\n"
          "  -h, --help   print this help\n");
}

FSRUN_COMMAND(delete) {
  static const struct option options[] = {
      {"force", no_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  bool force = false;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":fh", options, NULL)) != -1) {
    switch (opt) {
    case 'f':
      force = true;
      break;
    case 'h':
      delete_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("delete", opt, argv, err);
    }
  }
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0,
                            "delete: expected exactly one container ID (see fsrun delete --help)");
  return container_delete(ctx, argv[optind], force, err);
}
