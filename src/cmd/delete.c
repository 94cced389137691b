/* fsrun delete [--force] [--tamper-json FILE] ID */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "caller-output.h"
#include "container.h"
#include "exec-git.h"
#include "json-out.h"
#include "sandbox-watchdog.h"
#include "utils.h"

static void delete_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun delete [--force] [--tamper-json FILE] ID\n\n"
          "Delete the container ID: remove its cgroup and state and run its poststop hooks.\n"
          "A created or stopped container is deleted as it is; a running one needs --force.\n\n"
          "Options:\n"
          "  -f, --force           kill the container's processes first (SIGKILL); a missing\n"
          "                        container is not an error\n"
          "  --tamper-json FILE    write {\"walked\":BOOL,\"tamper\":[...],\"hostGitArgs\":[...]}\n"
          "                        to FILE: for a task container of `fsrun bundle`, what its\n"
          "                        processes left in its worktree for the host's git since the\n"
          "                        last exec's tamper walk, looked for once they are dead, and\n"
          "                        the -c options under which the host's git runs none of it\n"
          "  -h, --help            print this help\n");
}

FSRUN_COMMAND(delete) {
  static const struct option options[] = {
      {"force", no_argument, NULL, 'f'},
      {"tamper-json", required_argument, NULL, 'T'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  bool force = false;
  const char *tamper_json = NULL, *id;
  cleanup_close int tamper_fd = -1;
  char **tamper = NULL, **host_args = NULL;
  int opt, r;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":fh", options, NULL)) != -1) {
    switch (opt) {
    case 'f':
      force = true;
      break;
    case 'T':
      tamper_json = optarg;
      break;
    case 'h':
      delete_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("delete", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("delete", argc, argv, &id, err) < 0)
    return -1;
  /* opened first: a bad path deletes nothing */
  if (tamper_json != NULL &&
      (tamper_fd = caller_output_open("--tamper-json", tamper_json, err)) < 0)
    return tamper_fd;
  r = container_delete_walked(ctx, id, force, &tamper, &host_args, err);
  /* a one-shot sandbox run whose fsrun and watchdog were both killed (review28 F1) */
  if (r == 0 && strncmp(id, "sandbox-", strlen("sandbox-")) == 0)
    sandbox_run_leftovers_remove(ctx, id);
  if (r == 0 && tamper_fd >= 0)
    r = exec_git_walk_json_write(tamper_fd, tamper_json, tamper, host_args, err);
  sandbox_git_strv_free(tamper);
  sandbox_git_strv_free(host_args);
  return r;
}
