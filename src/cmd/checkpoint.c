/* fsrun checkpoint [--image-path DIR] [--work-path DIR] [--leave-running] [--pre-dump]
 * [--parent-path DIR] [--page-server ADDRESS:PORT] [--status-fd FD] [CRIU OPTIONS] ID */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "criu.h"

static void checkpoint_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun checkpoint [OPTIONS] ID\n\n"
          "Checkpoint the running container ID with CRIU: its processes are saved to images and\n"
          "stopped (the container is deleted) unless --leave-running or --pre-dump.\n\n"
          "Options:\n"
          "  --image-path DIR         where criu writes the images (default: ./checkpoint)\n"
          "  --work-path DIR          criu's work directory and log (default: the image path)\n"
          "  --leave-running          leave the processes running after the checkpoint\n"
          "  --pre-dump               save the memory only, leave the container running\n"
          "  --parent-path DIR        a pre-dump's images, relative to the image path\n"
          "  --tcp-established        allow open established TCP connections\n"
          "  --ext-unix-sk            allow external unix sockets\n"
          "  --shell-job              allow a process whose session is outside the container\n"
          "  --file-locks             save file locks\n"
          "  --manage-cgroups-mode M  criu's cgroup mode: soft, full, strict or ignore\n"
          "  --empty-ns NS            do not save the namespace NS (network only)\n"
          "  --auto-dedup             free the parent images' pages that this dump replaces\n"
          "  --page-server ADDR:PORT  send the pages to criu's page server there; with\n"
          "                           --lazy-pages, be that page server\n"
          "  --lazy-pages             leave the memory out of the images and serve it to the\n"
          "                           restore side's `criu lazy-pages` (needs --page-server);\n"
          "                           returns once every page was pulled\n"
          "  --status-fd FD           with --lazy-pages: criu writes \\0 to FD when it serves\n"
          "  -h, --help               print this help\n");
}

enum {
  CRIU_OPT_IMAGE_PATH = 2000,
  CRIU_OPT_WORK_PATH,
  CRIU_OPT_TCP,
  CRIU_OPT_EXT_UNIX,
  CRIU_OPT_SHELL_JOB,
  CRIU_OPT_FILE_LOCKS,
  CRIU_OPT_CGROUPS_MODE,
  CRIU_OPT_EMPTY_NS,
  CRIU_OPT_AUTO_DEDUP,
  CRIU_OPT_LAZY_PAGES,
};

int fsrun_parse_criu_option(int opt, const char *arg, struct criu_opts *o, fsrun_error_t *err) {
  switch (opt) {
  case CRIU_OPT_IMAGE_PATH:
    o->image_path = arg;
    return 1;
  case CRIU_OPT_WORK_PATH:
    o->work_path = arg;
    return 1;
  case CRIU_OPT_TCP:
    o->tcp_established = true;
    return 1;
  case CRIU_OPT_EXT_UNIX:
    o->ext_unix_sk = true;
    return 1;
  case CRIU_OPT_SHELL_JOB:
    o->shell_job = true;
    return 1;
  case CRIU_OPT_FILE_LOCKS:
    o->file_locks = true;
    return 1;
  case CRIU_OPT_CGROUPS_MODE:
    return criu_parse_cgroups_mode(arg, o, err) < 0 ? -1 : 1;
  case CRIU_OPT_EMPTY_NS:
    return criu_parse_empty_ns(arg, o, err) < 0 ? -1 : 1;
  case CRIU_OPT_AUTO_DEDUP:
    o->auto_dedup = true;
    return 1;
  case CRIU_OPT_LAZY_PAGES:
    o->lazy_pages = true;
    return 1;
  default:
    return 0;
  }
}

static const struct option criu_options[] = {
    {"image-path", required_argument, NULL, CRIU_OPT_IMAGE_PATH},
    {"work-path", required_argument, NULL, CRIU_OPT_WORK_PATH},
    {"tcp-established", no_argument, NULL, CRIU_OPT_TCP},
    {"ext-unix-sk", no_argument, NULL, CRIU_OPT_EXT_UNIX},
    {"shell-job", no_argument, NULL, CRIU_OPT_SHELL_JOB},
    {"file-locks", no_argument, NULL, CRIU_OPT_FILE_LOCKS},
    {"manage-cgroups-mode", required_argument, NULL, CRIU_OPT_CGROUPS_MODE},
    {"empty-ns", required_argument, NULL, CRIU_OPT_EMPTY_NS},
    {"auto-dedup", no_argument, NULL, CRIU_OPT_AUTO_DEDUP},
    {"lazy-pages", no_argument, NULL, CRIU_OPT_LAZY_PAGES},
};
#define N_CRIU_OPTIONS (sizeof(criu_options) / sizeof(criu_options[0]))

void fsrun_criu_options_merge(struct option *out, const struct option *own, size_t n) {
  _Static_assert(N_CRIU_OPTIONS <= FSRUN_CRIU_OPTIONS_MAX, "room for the shared options");
  memcpy(out, own, n * sizeof(*own));
  memcpy(out + n, criu_options, sizeof(criu_options));
  memset(out + n + N_CRIU_OPTIONS, 0, sizeof(*out));
}

FSRUN_COMMAND(checkpoint) {
  enum {
    OPT_LEAVE_RUNNING = 1000,
    OPT_PRE_DUMP,
    OPT_PARENT_PATH,
    OPT_PAGE_SERVER,
    OPT_STATUS_FD,
  };
  static const struct option own[] = {
      {"leave-running", no_argument, NULL, OPT_LEAVE_RUNNING},
      {"pre-dump", no_argument, NULL, OPT_PRE_DUMP},
      {"parent-path", required_argument, NULL, OPT_PARENT_PATH},
      {"page-server", required_argument, NULL, OPT_PAGE_SERVER},
      {"status-fd", required_argument, NULL, OPT_STATUS_FD},
      {"help", no_argument, NULL, 'h'},
  };
  struct option options[sizeof(own) / sizeof(own[0]) + FSRUN_CRIU_OPTIONS_MAX + 1];
  struct criu_checkpoint_opts o = {.status_fd = -1};
  const char *id;
  int opt, r;

  fsrun_criu_options_merge(options, own, sizeof(own) / sizeof(own[0]));
  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    if ((r = fsrun_parse_criu_option(opt, optarg, &o.c, err)) != 0) {
      if (r < 0)
        return -1;
      continue;
    }
    switch (opt) {
    case OPT_LEAVE_RUNNING:
      o.leave_running = true;
      break;
    case OPT_PRE_DUMP:
      o.pre_dump = true;
      break;
    case OPT_PARENT_PATH:
      o.parent_path = optarg;
      break;
    case OPT_PAGE_SERVER:
      if (criu_parse_page_server(optarg, &o.page_server, err) < 0)
        return -1;
      break;
    case OPT_STATUS_FD:
      if (criu_parse_status_fd(optarg, &o.status_fd, err) < 0)
        return -1;
      break;
    case 'h':
      checkpoint_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("checkpoint", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("checkpoint", argc, argv, &id, err) < 0)
    return -1;
  return criu_checkpoint(ctx, id, &o, err);
}
