/* fsrun events [--stats] [--interval DURATION] ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "live.h"

static void events_usage(FILE *out) {
  fprintf(
      out,
      "Usage: fsrun events [--stats] [--interval DURATION] ID\n\n"
      "Print the events of the container ID as JSON, one object per line, as runc does:\n"
      "{\"type\":\"stats\",\"id\":ID,\"data\":{\"cpu\",\"memory\",\"pids\",\"blkio\",\"hugetlb\"}} "
      "at once and\n"
      "then every interval, and {\"type\":\"oom\",\"id\":ID} when the kernel OOM-kills a process "
      "of the\n"
      "container. The stream ends (exit status 0) when the container stops.\n\n"
      "Options:\n"
      "  --stats                print one stats event and exit\n"
      "  --interval DURATION    time between stats events (default 5s; 500ms, 1m, ...)\n"
      "  -h, --help             print this help\n");
}

enum { OPT_STATS = 1000, OPT_INTERVAL };

FSRUN_COMMAND(events) {
  static const struct option options[] = {
      {"stats", no_argument, NULL, OPT_STATS},
      {"interval", required_argument, NULL, OPT_INTERVAL},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct container_events_opts o = {0};
  const char *id;
  int opt;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (opt) {
    case OPT_STATS:
      o.stats_once = true;
      break;
    case OPT_INTERVAL:
      if (live_parse_duration(optarg, &o.interval_ns, err) < 0)
        return fsrun_error_wrap(err, "events: --interval");
      break;
    case 'h':
      events_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("events", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("events", argc, argv, &id, err) < 0)
    return -1;
  return container_events(ctx, id, &o, stdout, err);
}
