/* fsrun create ID [--bundle DIR] [--pid-file F] [--console-socket S] [--preserve-fds N]
 * [--no-pivot] [--no-new-keyring] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "caller-output.h"
#include "commands.h"
#include "container.h"

static void create_usage(FILE *out) {
  fprintf(
      out,
      "Usage: fsrun create [OPTIONS] ID\n\n"
      "Create the container ID from a bundle: its init waits, blocked, until `fsrun start ID`.\n\n"
      "Options:\n"
      "  -b, --bundle DIR         bundle directory (default: the current directory)\n"
      "  --pid-file FILE          write the init's pid to FILE\n"
      "  --console-socket PATH    unix socket that receives the pty master (process.terminal)\n"
      "  --preserve-fds N         pass N more file descriptors (from fd 3) to the process\n"
      "  --no-pivot               MS_MOVE + chroot instead of pivot_root (ramfs roots)\n"
      "  --no-new-keyring         keep the caller's session keyring\n"
      "  -h, --help               print this help\n");
}

int fsrun_parse_preserve_fds(const char *arg, int *out, fsrun_error_t *err) {
  char *end;
  long n = strtol(arg, &end, 10);
  if (*arg == '\0' || *end != '\0' || n < 0 || n > 65536)
    return fsrun_error_make(err, 0, "--preserve-fds: expected a non-negative number, got `%s`",
                            arg);
  *out = (int)n;
  return 0;
}

FSRUN_COMMAND(create) {
  enum { OPT_PID_FILE = 1000, OPT_CONSOLE_SOCKET, OPT_PRESERVE_FDS, OPT_NO_PIVOT, OPT_NO_KEYRING };
  static const struct option options[] = {
      {"bundle", required_argument, NULL, 'b'},
      {"pid-file", required_argument, NULL, OPT_PID_FILE},
      {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
      {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
      {"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
      {"no-new-keyring", no_argument, NULL, OPT_NO_KEYRING},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct container_create_opts o = {0};
  int opt;

  (void)exit_status;
  o.seccomp_cache = true;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":b:h", options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      o.bundle = optarg;
      break;
    case OPT_PID_FILE:
      o.pid_file = optarg;
      break;
    case OPT_CONSOLE_SOCKET:
      o.console_socket = optarg;
      break;
    case OPT_PRESERVE_FDS:
      if (fsrun_parse_preserve_fds(optarg, &o.preserve_fds, err) < 0)
        return -1;
      break;
    case OPT_NO_PIVOT:
      o.no_pivot = true;
      break;
    case OPT_NO_KEYRING:
      o.no_new_keyring = true;
      break;
    case 'h':
      create_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("create", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("create", argc, argv, &o.id, err) < 0)
    return -1;
  if (o.pid_file != NULL && caller_output_check_parents("--pid-file", o.pid_file, err) < 0)
    return -1;
  return container_create(ctx, &o, err);
}
