/* fsrun exec [OPTIONS] ID [COMMAND [ARG...]] */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "caller-output.h"
#include "commands.h"
#include "exec.h"
#include "utils.h"

static void exec_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun exec [OPTIONS] ID [COMMAND [ARG...]]\n\n"
          "Run a new process in the created or running container ID, in all of its namespaces and\n"
          "its cgroup, under its seccomp profile. Without --process the process is config.json's\n"
          "with COMMAND as its arguments and the options below applied. In the foreground fsrun\n"
          "waits for the process (forwarding signals to it) and exits with its status (128+N when\n"
          "killed by signal N); setup errors exit with 1.\n\n"
          "Options:\n"
          "  -p, --process FILE       the process (OCI process JSON) instead of COMMAND\n"
          "  -t, --tty                allocate a pty (process.terminal)\n"
          "  --console-socket PATH    unix socket that receives the pty master; without it a\n"
          "                           foreground exec relays the pty itself\n"
          "  -d, --detach             return once the process has started\n"
          "  --pid-file FILE          write the process's pid to FILE (atomically; in the\n"
          "                           foreground before the command runs)\n"
          "  --cwd DIR                working directory inside the container\n"
          "  -e, --env KEY=VALUE      set an environment variable (repeatable)\n"
          "  -u, --user UID[:GID]     run as UID (and GID), decimal numbers\n"
          "  -g, --additional-gids GID  add a supplementary group (repeatable)\n"
          "  -c, --cap CAP            add a capability (CAP_...; repeatable)\n"
          "  --no-new-privs           set no_new_privs for the process\n"
          "  --preserve-fds N         pass N more file descriptors (from fd 3) to the process\n"
          "  --process-label LABEL    SELinux label of the process\n"
          "  --apparmor PROFILE       AppArmor profile of the process\n"
          "  --ignore-paused          exec even if the container is paused (the process waits for\n"
          "                           resume)\n"
          "  --status-json FILE       write how the process ended to FILE as JSON: exitCode and\n"
          "                           signal (its name, exitCode null), oomKilled when known\n"
          "  --kill-group             when the process ends, SIGKILL what is left in its\n"
          "                           process group (before it is reaped)\n"
          "  -h, --help               print this help\n");
}

FSRUN_COMMAND(exec) {
  enum {
    OPT_CONSOLE_SOCKET = 1000,
    OPT_PID_FILE,
    OPT_CWD,
    OPT_NO_NEW_PRIVS,
    OPT_PRESERVE_FDS,
    OPT_PROCESS_LABEL,
    OPT_APPARMOR,
    OPT_IGNORE_PAUSED,
    OPT_STATUS_JSON,
    OPT_KILL_GROUP,
  };
  static const struct option options[] = {
      {"process", required_argument, NULL, 'p'},
      {"tty", no_argument, NULL, 't'},
      {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
      {"detach", no_argument, NULL, 'd'},
      {"pid-file", required_argument, NULL, OPT_PID_FILE},
      {"cwd", required_argument, NULL, OPT_CWD},
      {"env", required_argument, NULL, 'e'},
      {"user", required_argument, NULL, 'u'},
      {"additional-gids", required_argument, NULL, 'g'},
      {"cap", required_argument, NULL, 'c'},
      {"no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS},
      {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
      {"process-label", required_argument, NULL, OPT_PROCESS_LABEL},
      {"apparmor", required_argument, NULL, OPT_APPARMOR},
      {"ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED},
      {"status-json", required_argument, NULL, OPT_STATUS_JSON},
      {"kill-group", no_argument, NULL, OPT_KILL_GROUP},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct exec_options o = {0};
  /* repeatable options: at most one per argument */
  cleanup_free char **env = xmalloc0(sizeof(char *) * (size_t)argc);
  cleanup_free char **gids = xmalloc0(sizeof(char *) * (size_t)argc);
  cleanup_free char **caps = xmalloc0(sizeof(char *) * (size_t)argc);
  int opt;

  o.env = env;
  o.additional_gids = gids;
  o.caps = caps;
  optind = 0;
  opterr = 0;
  /* '+': options end at ID, everything after it is the command's */
  while ((opt = getopt_long(argc, argv, "+:p:tde:u:g:c:h", options, NULL)) != -1) {
    switch (opt) {
    case 'p':
      o.process_path = optarg;
      break;
    case 't':
      o.tty = true;
      break;
    case OPT_CONSOLE_SOCKET:
      o.console_socket = optarg;
      break;
    case 'd':
      o.detach = true;
      break;
    case OPT_PID_FILE:
      o.pid_file = optarg;
      break;
    case OPT_CWD:
      o.cwd = optarg;
      break;
    case 'e':
      env[o.n_env++] = optarg;
      break;
    case 'u':
      o.user = optarg;
      break;
    case 'g':
      gids[o.n_additional_gids++] = optarg;
      break;
    case 'c':
      caps[o.n_caps++] = optarg;
      break;
    case OPT_NO_NEW_PRIVS:
      o.no_new_privs = true;
      break;
    case OPT_PRESERVE_FDS:
      if (fsrun_parse_preserve_fds(optarg, &o.preserve_fds, err) < 0)
        return -1;
      break;
    case OPT_PROCESS_LABEL:
      o.process_label = optarg;
      break;
    case OPT_APPARMOR:
      o.apparmor = optarg;
      break;
    case OPT_IGNORE_PAUSED:
      o.ignore_paused = true;
      break;
    case OPT_STATUS_JSON:
      o.status_json = optarg;
      break;
    case OPT_KILL_GROUP:
      o.kill_group = true;
      break;
    case 'h':
      exec_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("exec", opt, argv, err);
    }
  }
  if (optind >= argc)
    return fsrun_error_make(err, 0, "exec: expected a container ID (see fsrun exec --help)");
  o.id = argv[optind++];
  if (optind < argc && strcmp(argv[optind], "--") == 0)
    optind++;
  o.args = argv + optind;
  o.n_args = (size_t)(argc - optind);
  if (o.process_path == NULL && o.n_args == 0)
    return fsrun_error_make(err, 0,
                            "exec: expected a COMMAND after the container ID, or --process FILE "
                            "(see fsrun exec --help)");
  if (o.pid_file != NULL && caller_output_check_parents("--pid-file", o.pid_file, err) < 0)
    return -1;
  return container_exec(ctx, &o, exit_status, err);
}
