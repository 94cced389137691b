/* fsrun kill [--all] ID [SIGNAL] */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container.h"

static void kill_usage(FILE *out) {
  fprintf(out, "Usage: fsrun kill [--all] ID [SIGNAL]\n\n"
               "Send SIGNAL (a name such as KILL or SIGKILL, or a number; default SIGTERM) to the\n"
               "container's init process.\n\n"
               "Options:\n"
               "  -a, --all    signal every process in the container's cgroup\n"
               "  -h, --help   print this help\n");
}

FSRUN_COMMAND(kill) {
  static const struct option options[] = {
      {"all", no_argument, NULL, 'a'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  bool all = false;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":ah", options, NULL)) != -1) {
    switch (opt) {
    case 'a':
      all = true;
      break;
    case 'h':
      kill_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("kill", opt, argv, err);
    }
  }
  if (optind >= argc || argc - optind > 2)
    return fsrun_error_make(err, 0, "kill: expected ID [SIGNAL] (see fsrun kill --help)");
  return container_kill(ctx, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL, all, err);
}
