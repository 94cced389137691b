/* fsrun pause ID */
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
  const char *id = NULL;
  int ret = fsrun_command_parse_single_id("pause", pause_usage, argc, argv, &id, err);
  (void)exit_status;
  if (ret != 0)
    return ret < 0 ? ret : 0;
  return container_pause(ctx, id, err);
}
