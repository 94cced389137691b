/* fsrun sandbox [--policy FILE|-] [--worktree DIR] [--task-id ID] [--run-id ID] [--timeout-ms N]
 * [--max-buffer BYTES] [--max-buffer-kill] [--json] [--audit-log FILE] [--failure-mode MODE] --
 * COMMAND [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sandbox.h"

static void sandbox_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun sandbox [OPTIONS] -- COMMAND [ARG...]\n\n"
          "Run COMMAND once in the Fusion sandbox over a git worktree: a fresh root with the\n"
          "system directories read-only, the worktree (and its git common dir) read-write, the\n"
          "policy's paths, network, environment and limits. fsrun exits with the command's\n"
          "status (128+N for signal N), 124 on timeout, 125 when the sandbox could not be set up\n"
          "(fail-hard), 1 for bad options or a bad policy.\n\n"
          "Options:\n"
          "  --policy FILE|-          the sandbox policy (JSON; default {}: no network, nothing\n"
          "                           but the worktree)\n"
          "  --worktree DIR           the worktree (default: the current directory)\n"
          "  --task-id ID, --run-id ID  recorded in the audit log and the container id\n"
          "  --timeout-ms N           kill the whole sandbox after N ms (exit 124)\n"
          "  --json                   capture stdout/stderr, print one JSON object with them\n"
          "  --max-buffer BYTES       with --json: keep at most BYTES of each stream (default "
          "10 MiB)\n"
          "  --max-buffer-kill        with --json: a stream going over --max-buffer kills the\n"
          "                           whole sandbox, as Node's exec does (signal SIGKILL)\n"
          "  --audit-log FILE         append JSON lines (prepare, run/failure, fallback) to FILE\n"
          "  --failure-mode MODE      fail-hard (default) or fallback-native: run the command\n"
          "                           without a sandbox when the sandbox cannot be set up\n"
          "  -h, --help               print this help\n");
}

static int parse_u64(const char *option, const char *arg, uint64_t max, uint64_t *out,
                     fsrun_error_t *err) {
  char *end = NULL;
  unsigned long long v;
  errno = 0;
  if (arg[0] < '0' || arg[0] > '9')
    return fsrun_error_make(err, 0, "sandbox: %s: expected a number, got `%s`", option, arg);
  v = strtoull(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || v > max)
    return fsrun_error_make(err, 0, "sandbox: %s: expected a number up to %" PRIu64 ", got `%s`",
                            option, max, arg);
  *out = v;
  return 0;
}

FSRUN_COMMAND(sandbox) {
  enum {
    OPT_POLICY = 1000,
    OPT_WORKTREE,
    OPT_TASK_ID,
    OPT_RUN_ID,
    OPT_TIMEOUT,
    OPT_MAX_BUFFER,
    OPT_JSON,
    OPT_AUDIT_LOG,
    OPT_FAILURE_MODE,
    OPT_MAX_BUFFER_KILL,
    OPT_PROBE_REPORT_FD,
  };
  static const struct option options[] = {
      {"policy", required_argument, NULL, OPT_POLICY},
      {"worktree", required_argument, NULL, OPT_WORKTREE},
      {"task-id", required_argument, NULL, OPT_TASK_ID},
      {"run-id", required_argument, NULL, OPT_RUN_ID},
      {"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
      {"max-buffer", required_argument, NULL, OPT_MAX_BUFFER},
      {"max-buffer-kill", no_argument, NULL, OPT_MAX_BUFFER_KILL},
      {"json", no_argument, NULL, OPT_JSON},
      {"audit-log", required_argument, NULL, OPT_AUDIT_LOG},
      {"failure-mode", required_argument, NULL, OPT_FAILURE_MODE},
      /* not in --help: only the fallback probe's parent passes it (sandbox-probe.c) */
      {"probe-report-fd", required_argument, NULL, OPT_PROBE_REPORT_FD},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct sandbox_run_opts o = {.max_buffer = SANDBOX_DEFAULT_MAX_BUFFER, .probe_report_fd = -1};
  uint64_t value;
  int opt;

  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
    switch (opt) {
    case OPT_POLICY:
      o.policy_path = optarg;
      break;
    case OPT_WORKTREE:
      o.worktree = optarg;
      break;
    case OPT_TASK_ID:
      o.task_id = optarg;
      break;
    case OPT_RUN_ID:
      o.run_id = optarg;
      break;
    case OPT_TIMEOUT:
      if (parse_u64("--timeout-ms", optarg, INT64_MAX / 2, &value, err) < 0)
        return -1;
      o.timeout_ms = (int64_t)value;
      break;
    case OPT_MAX_BUFFER:
      if (parse_u64("--max-buffer", optarg, SIZE_MAX / 2, &value, err) < 0)
        return -1;
      o.max_buffer = (size_t)value;
      break;
    case OPT_MAX_BUFFER_KILL:
      o.max_buffer_kill = true;
      break;
    case OPT_JSON:
      o.json = true;
      break;
    case OPT_AUDIT_LOG:
      o.audit_log = optarg;
      break;
    case OPT_FAILURE_MODE:
      o.failure_mode = optarg;
      break;
    case OPT_PROBE_REPORT_FD:
      if (parse_u64("--probe-report-fd", optarg, INT32_MAX, &value, err) < 0)
        return -1;
      if (value <= STDERR_FILENO)
        return fsrun_error_make(
            err, 0, "sandbox: --probe-report-fd: expected a descriptor above 2, got `%s`", optarg);
      /* never the sandbox's: closed when its init execs the command */
      if (fcntl((int)value, F_SETFD, FD_CLOEXEC) < 0)
        return fsrun_error_errno(err, "sandbox: --probe-report-fd `%s`", optarg);
      o.probe_report_fd = (int)value;
      break;
    case 'h':
      sandbox_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("sandbox", opt, argv, err);
    }
  }
  if (optind >= argc)
    return fsrun_error_make(err, 0,
                            "sandbox: a COMMAND is required after `--` (see fsrun sandbox --help)");
  o.args = argv + optind;
  o.n_args = (size_t)(argc - optind);
  return sandbox_run(ctx, &o, exit_status, err);
}
