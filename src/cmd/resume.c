/* fsrun resume ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "live.h"

static void resume_usage(FILE *out) {
  fprintf(
      out,
      "Usage: fsrun resume ID\n\n"
      "Thaw the paused container ID: its processes continue where `fsrun pause` stopped them.\n\n"
      "Options:\n"
      "  -h, --help   print this help\n");
}

FSRUN_COMMAND(resume) {
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
      resume_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("resume", opt, argv, err);
    }
  }
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0,
                            "resume: expected exactly one container ID (see fsrun resume --help)");
  return container_resume(ctx, argv[optind], err);
}
