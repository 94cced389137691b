/* fsrun resume ID */
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
  const char *id = NULL;
  int ret = fsrun_command_parse_single_id("resume", resume_usage, argc, argv, &id, err);
  (void)exit_status;
  if (ret != 0)
    return ret < 0 ? ret : 0;
  return container_resume(ctx, id, err);
}
