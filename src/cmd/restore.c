/* fsrun restore [--image-path DIR] [--work-path DIR] [--bundle DIR] [--detach] [--pid-file F]
 * [--console-socket S] [--no-subreaper] [--no-pivot] [CRIU OPTIONS] ID */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "caller-output.h"
#include "commands.h"
#include "criu.h"

static void restore_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun restore [OPTIONS] ID\n\n"
          "Restore a checkpoint (fsrun checkpoint) as the new container ID from a bundle.\n"
          "Without --detach, wait for its process, delete it, and exit with its status.\n\n"
          "Options:\n"
          "  --image-path DIR         the checkpoint's images (default: ./checkpoint)\n"
          "  --work-path DIR          criu's work directory and log (default: the image path)\n"
          "  -b, --bundle DIR         bundle directory (default: the current directory)\n"
          "  -d, --detach             return once the container runs\n"
          "  --pid-file FILE          write the restored process's pid to FILE\n"
          "  --console-socket PATH    send the new pty's master here (process.terminal)\n"
          "  --no-subreaper           with --detach: do not become the process's subreaper\n"
          "  --no-pivot               refused: criu restores the root with pivot_root\n"
          "  --tcp-established        restore established TCP connections\n"
          "  --ext-unix-sk            allow external unix sockets\n"
          "  --shell-job              allow a process whose session is outside the container\n"
          "  --file-locks             restore file locks\n"
          "  --manage-cgroups-mode M  criu's cgroup mode: soft, full, strict or ignore\n"
          "  --empty-ns NS            make the namespace NS empty (network only)\n"
          "  --auto-dedup             free the images' pages as they are restored\n"
          "  --lazy-pages             fault the memory in from the `criu lazy-pages` daemon\n"
          "                           that runs in the work directory\n"
          "  -h, --help               print this help\n");
}

FSRUN_COMMAND(restore) {
  enum {
    OPT_PID_FILE = 1000,
    OPT_CONSOLE_SOCKET,
    OPT_NO_SUBREAPER,
    OPT_NO_PIVOT,
  };
  static const struct option own[] = {
      {"bundle", required_argument, NULL, 'b'},
      {"detach", no_argument, NULL, 'd'},
      {"pid-file", required_argument, NULL, OPT_PID_FILE},
      {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
      {"no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER},
      {"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
      {"help", no_argument, NULL, 'h'},
  };
  struct option options[sizeof(own) / sizeof(own[0]) + FSRUN_CRIU_OPTIONS_MAX + 1];
  struct criu_restore_opts o = {0};
  int opt, r;

  fsrun_criu_options_merge(options, own, sizeof(own) / sizeof(own[0]));
  optind = 0;
  opterr = 0;
  /* long options with one dash too, as runc's flag parser takes them: containerd's shim (go-runc)
   * passes `-no-subreaper` */
  while ((opt = getopt_long_only(argc, argv, ":b:dh", options, NULL)) != -1) {
    if ((r = fsrun_parse_criu_option(opt, optarg, &o.c, err)) != 0) {
      if (r < 0)
        return -1;
      continue;
    }
    switch (opt) {
    case 'b':
      o.bundle = optarg;
      break;
    case 'd':
      o.detach = true;
      break;
    case OPT_PID_FILE:
      o.pid_file = optarg;
      break;
    case OPT_CONSOLE_SOCKET:
      o.console_socket = optarg;
      break;
    case OPT_NO_SUBREAPER:
      o.no_subreaper = true;
      break;
    case OPT_NO_PIVOT:
      o.no_pivot = true;
      break;
    case 'h':
      restore_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("restore", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("restore", argc, argv, &o.id, err) < 0)
    return -1;
  if (o.pid_file != NULL && caller_output_check_parents("--pid-file", o.pid_file, err) < 0)
    return -1;
  return criu_restore(ctx, &o, exit_status, err);
}
