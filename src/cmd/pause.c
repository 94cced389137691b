/* fsrun pause [--tamper-json FILE] ID */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "caller-output.h"
#include "commands.h"
#include "exec-git.h"
#include "live.h"
#include "sandbox-git.h"
#include "utils.h"

static void pause_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun pause [--tamper-json FILE] ID\n\n"
          "Freeze every process of the running container ID (the v1 freezer, or cgroup.freeze\n"
          "on cgroup v2). `fsrun state` then says \"paused\"; `fsrun resume` continues it.\n\n"
          "Options:\n"
          "  --tamper-json FILE    once frozen, write {\"walked\":BOOL,\"tamper\":[...],\n"
          "                        \"hostGitArgs\":[...]} to FILE: for a task container of\n"
          "                        `fsrun bundle`, what its processes left in its worktree for\n"
          "                        the host's git since the last exec's tamper walk, and the -c\n"
          "                        options under which the host's git runs none of it; it holds\n"
          "                        until the container is resumed\n"
          "  -h, --help            print this help\n");
}

FSRUN_COMMAND(pause) {
  static const struct option options[] = {
      {"tamper-json", required_argument, NULL, 'T'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *tamper_json = NULL, *id;
  cleanup_close int tamper_fd = -1;
  char **tamper = NULL, **host_args = NULL;
  bool created = false;
  int opt, r;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (opt) {
    case 'T':
      tamper_json = optarg;
      break;
    case 'h':
      pause_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("pause", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("pause", argc, argv, &id, err) < 0)
    return -1;
  /* opened first: a bad path freezes nothing; kept as it was until there is something to write */
  if (tamper_json != NULL &&
      (tamper_fd = caller_output_open_kept("--tamper-json", tamper_json, &created, err)) < 0)
    return tamper_fd;
  r = container_pause(ctx, id, tamper_fd >= 0 ? &tamper : NULL, &host_args, err);
  if (r == 0 && tamper_fd >= 0 && ftruncate(tamper_fd, 0) < 0)
    r = fsrun_error_errno(err, "--tamper-json %s: truncate", tamper_json);
  if (r == 0 && tamper_fd >= 0)
    r = exec_git_walk_json_write(tamper_fd, tamper_json, tamper, host_args, err);
  else if (r < 0 && created) /* a failed pause leaves no empty file behind */
    caller_output_remove_created("--tamper-json", tamper_json, tamper_fd);
  sandbox_git_strv_free(tamper);
  sandbox_git_strv_free(host_args);
  return r;
}
