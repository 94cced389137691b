/* fsrun run ID [--bundle DIR] [--detach] [--keep] [--pid-file F] [--console-socket S]
 * [--preserve-fds N] [--no-pivot] [--no-new-keyring] */
#include <getopt.h>
#include <stdio.h>

#include "caller-output.h"
#include "commands.h"
#include "container.h"

static void run_usage(FILE *out) {
  fprintf(
      out,
      "Usage: fsrun run [OPTIONS] ID\n\n"
      "Create and start the container ID, wait for its process (forwarding signals to it) and\n"
      "exit with its status (128+N when killed by signal N), then delete the container.\n\n"
      "Options:\n"
      "  -b, --bundle DIR         bundle directory (default: the current directory)\n"
      "  -d, --detach             return once the process has started\n"
      "  --keep                   do not delete the container when its process exits\n"
      "  --pid-file FILE          write the init's pid to FILE\n"
      "  --console-socket PATH    unix socket that receives the pty master (process.terminal);\n"
      "                           without it a foreground run relays the pty itself\n"
      "  --preserve-fds N         pass N more file descriptors (from fd 3) to the process\n"
      "  --no-pivot               MS_MOVE + chroot instead of pivot_root (ramfs roots)\n"
      "  --no-new-keyring         keep the caller's session keyring\n"
      "  -h, --help               print this help\n");
}

FSRUN_COMMAND(run) {
  enum {
    OPT_PID_FILE = 1000,
    OPT_CONSOLE_SOCKET,
    OPT_PRESERVE_FDS,
    OPT_NO_PIVOT,
    OPT_NO_KEYRING,
    OPT_KEEP
  };
  static const struct option options[] = {
      {"bundle", required_argument, NULL, 'b'},
      {"detach", no_argument, NULL, 'd'},
      {"keep", no_argument, NULL, OPT_KEEP},
      {"pid-file", required_argument, NULL, OPT_PID_FILE},
      {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
      {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
      {"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
      {"no-new-keyring", no_argument, NULL, OPT_NO_KEYRING},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct container_run_opts o = {0};
  int opt;

  o.create.seccomp_cache = true;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":b:dh", options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      o.create.bundle = optarg;
      break;
    case 'd':
      o.detach = true;
      break;
    case OPT_KEEP:
      o.keep = true;
      break;
    case OPT_PID_FILE:
      o.create.pid_file = optarg;
      break;
    case OPT_CONSOLE_SOCKET:
      o.create.console_socket = optarg;
      break;
    case OPT_PRESERVE_FDS:
      if (fsrun_parse_preserve_fds(optarg, &o.create.preserve_fds, err) < 0)
        return -1;
      break;
    case OPT_NO_PIVOT:
      o.create.no_pivot = true;
      break;
    case OPT_NO_KEYRING:
      o.create.no_new_keyring = true;
      break;
    case 'h':
      run_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("run", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("run", argc, argv, &o.create.id, err) < 0)
    return -1;
  if (o.create.pid_file != NULL &&
      caller_output_check_parents("--pid-file", o.create.pid_file, err) < 0)
    return -1;
  return container_run(ctx, &o, exit_status, err);
}
