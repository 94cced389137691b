/* fsrun start ID */
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
  const char *id = NULL;
  int ret = fsrun_command_parse_single_id("start", start_usage, argc, argv, &id, err);
  (void)exit_status;
  if (ret != 0)
    return ret < 0 ? ret : 0;
  return container_start(ctx, id, err);
}
