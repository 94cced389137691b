/* fsrun state ID */
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
  const char *id = NULL;
  int ret = fsrun_command_parse_single_id("state", state_usage, argc, argv, &id, err);
  (void)exit_status;
  if (ret != 0)
    return ret < 0 ? ret : 0;
  return container_state(ctx, id, stdout, err);
}
