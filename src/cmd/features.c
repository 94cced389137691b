/* fsrun features: print the runtime-spec features document. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "runtime-features.h"

static void features_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun features\n\n"
          "Print, as JSON, the OCI runtime-spec features this build of fsrun implements on this\n"
          "host (runtime-spec \"features\" document).\n\n"
          "Options:\n"
          "  -h, --help  print this help\n");
}

FSRUN_COMMAND(features) {
  static const struct option options[] = {
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  char *json;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
    if (opt != 'h')
      return fsrun_command_option_error("features", opt, argv, err);
    features_usage(stdout);
    return 0;
  }
  if (fsrun_command_no_operands("features", argc, argv, err) < 0)
    return -1;
  json = features_json(ctx->state_root, err);
  if (json == NULL)
    return fsrun_error_code(err);
  fputs(json, stdout);
  if (json[0] == '\0' || json[strlen(json) - 1] != '\n')
    fputc('\n', stdout);
  free(json);
  if (fflush(stdout) != 0)
    return fsrun_error_errno(err, "features: write to stdout");
  return 0;
}
