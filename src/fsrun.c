/* fsrun CLI entry: global options and the subcommand table. Each command parses its own arguments
 * (src/cmd/NAME.c) and calls into libfsrun; this file only turns their result into an exit status
 * and the one-line error that clients (conmon, the containerd shim) read. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "context.h"
#include "error.h"
#include "file-time.h"
#include "fsrun-commit.h"
#include "log.h"
#include "prefault.h"
#include "reaper.h"
#include "sandbox-watchdog.h"
#include "sealed-exe.h"
#include "sealed-image.h"
#include "state-root.h"
#include "tiny-init.h"
#include "oci.h"
#include "runtime-features.h"
#include "utils.h"

/* One line per command, in lifecycle order; `fsrun --help` lists them in this order. */
static const struct fsrun_command commands[] = {
    {"spec", fsrun_cmd_spec, "write a default config.json into a bundle", NULL, true},
    {"validate", fsrun_cmd_validate, "check a bundle's config.json (or a sandbox policy)", NULL,
     true},
    {"features", fsrun_cmd_features, "print the OCI features this runtime supports (JSON)", NULL,
     true},
    {"create", fsrun_cmd_create, "create a container from a bundle (its init waits for start)"},
    {"start", fsrun_cmd_start, "start a created container's process"},
    {"run", fsrun_cmd_run, "create and start a container, wait for it and delete it"},
    {"state", fsrun_cmd_state, "print a container's OCI state (JSON)"},
    {"exec", fsrun_cmd_exec, "run a new process in a created or running container"},
    {"kill", fsrun_cmd_kill, "send a signal to a container's init (or all its processes)"},
    {"delete", fsrun_cmd_delete, "delete a container (--force kills it first)"},
    {"list", fsrun_cmd_list, "list containers"},
    {"ps", fsrun_cmd_ps, "list a container's processes"},
    {"pause", fsrun_cmd_pause, "freeze every process of a running container"},
    {"resume", fsrun_cmd_resume, "thaw a paused container"},
    {"update", fsrun_cmd_update, "change a container's resource limits (cgroup) live"},
    {"events", fsrun_cmd_events, "print a container's stats and OOM events (JSON)"},
    {"checkpoint", fsrun_cmd_checkpoint, "save a running container's processes with CRIU"},
    {"restore", fsrun_cmd_restore, "restore a checkpoint as a new container with CRIU"},
    {.name = "sandbox",
     .fn = fsrun_cmd_sandbox,
     .summary = "run a command once in the Fusion sandbox over a worktree",
     .before_heap = sandbox_watchdog_fork,
     .prefault = true},
    {"bundle", fsrun_cmd_bundle, "write the Fusion sandbox's bundle for a policy and a worktree"},
};

static void print_usage(FILE *out) {
  fprintf(out, "Usage: fsrun [GLOBAL OPTIONS] COMMAND [ARGS...]\n\n"
               "An OCI container runtime.\n\nCommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nGlobal options:\n"
               "  --root DIR                 state directory (default /run/fsrun as root,\n"
               "                             $XDG_RUNTIME_DIR/fsrun otherwise)\n"
               "  --log FILE                 append log records to FILE\n"
               "  --log-format text|json     format of the log records (default text)\n"
               "  --log-level LEVEL          error, warning, info or debug (default warning)\n"
               "  --debug                    same as --log-level debug\n"
               "  --systemd-cgroup           linux.cgroupsPath is slice:prefix:name\n"
               "  --rootless true|false|auto run without privileges (default auto)\n"
               "  -v, --version              print the version\n"
               "  -h, --help                 print this help\n\n"
               "Run `fsrun COMMAND --help` for a command's options.\n");
}

static void print_version(void) {
  const char *libseccomp = features_libseccomp_version();
  printf("fsrun version %s\ncommit: %s\nspec: %s\n", PACKAGE_VERSION, FSRUN_COMMIT, OCI_VERSION);
  if (libseccomp != NULL)
    printf("libseccomp: %s\n", libseccomp);
}

static const struct fsrun_command *find_command(const char *name) {
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

static char *default_state_root(void) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (geteuid() == 0 && !(xdg && xdg[0] && in_child_user_namespace()))
    return xstrdup("/run/fsrun");
  if (xdg != NULL && xdg[0] != '\0')
    return xasprintf("%s/fsrun", xdg);
  return xasprintf("/tmp/fsrun-%u", (unsigned)geteuid());
}

enum {
  OPT_ROOT = 1000,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_LOG_LEVEL,
  OPT_DEBUG,
  OPT_SYSTEMD_CGROUP,
  OPT_ROOTLESS,
};

static const struct option global_options[] = {
    {"root", required_argument, NULL, OPT_ROOT},
    {"log", required_argument, NULL, OPT_LOG},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {"systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP},
    {"rootless", required_argument, NULL, OPT_ROOTLESS},
    {"version", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The option that getopt just rejected, as the user typed it. */
static char *rejected_option(char **argv) {
  const char *last = optind > 0 ? argv[optind - 1] : NULL;
  if (last != NULL && strncmp(last, "--", 2) == 0)
    return strndup(last, strcspn(last, "="));
  if (optopt > 0 && optopt < 256)
    return xasprintf("-%c", optopt);
  return xstrdup(last ? last : "?");
}

int fsrun_command_option_error(const char *name, int opt, char **argv, fsrun_error_t *err) {
  cleanup_free char *option = rejected_option(argv);
  if (opt == ':')
    return fsrun_error_make(err, 0, "%s: option `%s` needs an argument (see fsrun %s --help)", name,
                            option, name);
  return fsrun_error_make(err, 0, "%s: unknown option `%s` (see fsrun %s --help)", name, option,
                          name);
}

/* Reports a fatal error as the one line clients read, and returns the exit status. */
static int fail(const char *msg) {
  fsrun_log_error(msg);
  return 1;
}

/* Whether the command may be one whose clones a container can see while they run the runtime's
 * code: create's waiting init, exec's child, run's (sealed_exe_wanted). `fsrun sandbox` needs none
 * when its init can become the tiny init (tiny-init.h): the sandbox's init is a clone only while
 * the container has no other process, and nothing else of the run enters the container's pid
 * namespace. */
static bool needs_protected_image(int argc, char **argv) {
  return sealed_exe_wanted(argc, argv, false) ||
         (sealed_exe_wanted(argc, argv, true) && tiny_init_image_fd() < 0);
}

/* `fsrun-sandbox-cleanup [GLOBAL OPTIONS] ID`: what the sandbox's watchdog runs once the sandbox's
 * fsrun is gone (sandbox-watchdog.h). Not a command: argv[0] names it. */
static int sandbox_cleanup_main(struct fsrun_context *ctx, int argc, char **argv) {
  if (argc != 1)
    return fail(SANDBOX_WATCHDOG_CLEANUP ": expected one container id");
  if (ctx->state_root == NULL)
    return fail(SANDBOX_WATCHDOG_CLEANUP ": --root is required");
  return sandbox_watchdog_cleanup(ctx, argv[0]) < 0 ? 1 : 0;
}

/* `fsrun COMMAND --help` (or -h): the command prints its usage and touches no state, so a refused
 * state root does not stop it. Only as the command's first word: a later one may be the value of
 * another option (`exec --cwd -h`), and that command would run unchecked. */
static bool asks_help(int argc, char **argv) {
  return argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
}

/* Set by fsrun_entry (src/prefault-entry-x86_64.S) before the C library starts; zero in a build
 * without that entry. */
struct timespec fsrun_entry_realtime __attribute__((visibility("hidden")));

/* Just after every file time set before this process began: fsrun_entry's time, or now */
static void process_started(struct timespec *t) {
  if (fsrun_entry_realtime.tv_sec == 0) {
    file_time_after_now(t);
    return;
  }
  *t = fsrun_entry_realtime;
  file_time_just_after(t);
}

int main(int argc, char **argv) {
  struct fsrun_context ctx = {.log_format = "text", .rootless = ROOTLESS_AUTO, .state_root_fd = -1};
  cleanup_free char *usage_error = NULL;
  cleanup_free char *root = NULL;
  cleanup_error fsrun_error_t err = NULL;
  const char *log_level = NULL;
  const struct fsrun_command *cmd;
  bool want_help = false, want_version = false;
  int exit_status = 0, opt;

  /* first: the earlier the sandbox's tamper cutoff, the sooner the coarse clock has reached it */
  process_started(&ctx.started);
  /* A SIGCHLD our caller left ignored would have the kernel reap our children behind our back:
   * their pids free for reuse while we still signal them as our own (slirp4netns, a hook, the
   * native command's group), and no SIGCHLD for the inits that wait for one. Its default, as
   * runc's Go runtime leaves it for the container's process too. */
  signal(SIGCHLD, SIG_DFL);
  reaper_note_env_block(environ);
  /* every process these commands clone into a container runs from a protected image of us: made
   * before anything else (fsrun_entry made it before libc started where it could; this checks,
   * and makes it where it could not) */
  if (needs_protected_image(argc, argv) && sealed_exe_ensure(argv, &err) < 0)
    return fail(err->msg);
  /* Keep going past a bad option so that --log/--log-format given anywhere still apply to the
   * error we report about it. */
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:hv", global_options, NULL)) != -1) {
    switch (opt) {
    case OPT_ROOT:
      ctx.state_root = optarg;
      break;
    case OPT_LOG:
      ctx.log_path = optarg;
      break;
    case OPT_LOG_FORMAT:
      ctx.log_format = optarg;
      break;
    case OPT_LOG_LEVEL:
      log_level = optarg;
      break;
    case OPT_DEBUG:
      ctx.debug = true;
      break;
    case OPT_SYSTEMD_CGROUP:
      ctx.systemd_cgroup = true;
      break;
    case OPT_ROOTLESS:
      if (strcmp(optarg, "true") == 0)
        ctx.rootless = ROOTLESS_TRUE;
      else if (strcmp(optarg, "false") == 0)
        ctx.rootless = ROOTLESS_FALSE;
      else if (strcmp(optarg, "auto") == 0)
        ctx.rootless = ROOTLESS_AUTO;
      else if (usage_error == NULL)
        usage_error = xasprintf("--rootless: expected true, false or auto, got `%s`", optarg);
      break;
    case 'h':
      want_help = true;
      break;
    case 'v':
      want_version = true;
      break;
    default:
      if (usage_error == NULL) {
        cleanup_free char *option = rejected_option(argv);
        usage_error = opt == ':'
                          ? xasprintf("option `%s` needs an argument (see fsrun --help)", option)
                          : xasprintf("unknown option `%s` (see fsrun --help)", option);
      }
      break;
    }
  }

  if (fsrun_log_init(ctx.log_path, ctx.log_format, log_level, ctx.debug, &err) < 0) {
    /* the log may be unusable: make sure the error reaches stderr in text form */
    (void)fsrun_log_init(NULL, "text", NULL, false, NULL);
    return fail(err->msg);
  }
  if (usage_error != NULL)
    return fail(usage_error);

  if (want_version) {
    print_version();
    return 0;
  }
  if (want_help || (optind < argc && strcmp(argv[optind], "help") == 0 && optind + 1 == argc)) {
    print_usage(stdout);
    return 0;
  }
  if (optind >= argc) {
    print_usage(stderr);
    return 1;
  }
  if (strcmp(program_invocation_short_name, SANDBOX_WATCHDOG_CLEANUP) == 0)
    return sandbox_cleanup_main(&ctx, argc - optind, argv + optind);

  /* `fsrun help COMMAND` is `fsrun COMMAND --help` */
  if (strcmp(argv[optind], "help") == 0) {
    static char help_flag[] = "--help";
    argv[optind] = argv[optind + 1];
    argv[optind + 1] = help_flag;
    argc = optind + 2;
  }

  cmd = find_command(argv[optind]);
  if (cmd == NULL) {
    cleanup_free char *msg = xasprintf("unknown command `%s` (see fsrun --help)", argv[optind]);
    return fail(msg);
  }

  if (ctx.state_root == NULL)
    ctx.state_root = root = default_state_root();
  if (!cmd->stateless && !asks_help(argc - optind, argv + optind) &&
      state_root_open(ctx.state_root, &ctx.state_root_fd, &err) < 0) {
    fsrun_log_error(err->msg);
    /* `fsrun sandbox` says 125 for a run it could not set up (fsrun-sandbox.8) */
    return cmd->fn == fsrun_cmd_sandbox ? 125 : 1;
  }
  ctx.state_root_held = ctx.state_root_fd >= 0;

  if (cmd->prefault)
    prefault_image();
  if (cmd->before_heap != NULL)
    cmd->before_heap(&ctx);
  if (cmd->prefault)
    prefault_heap(256 * 1024);
  log_debug("running `%s` with state root `%s`", cmd->name, ctx.state_root);
  if (cmd->fn(&ctx, argc - optind, argv + optind, &exit_status, &err) < 0)
    return fail(err != NULL ? err->msg : "command failed without an error message");
  return exit_status;
}

int fsrun_command_parse_single_id(const char *name, void (*usage)(FILE *), int argc, char **argv,
                                  const char **id, fsrun_error_t *err) {
  static const struct option options[] = {
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int opt;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    if (opt != 'h')
      return fsrun_command_option_error(name, opt, argv, err);
    usage(stdout);
    return 1;
  }
  return fsrun_command_take_id(name, argc, argv, id, err);
}

int fsrun_command_take_id(const char *name, int argc, char **argv, const char **id,
                          fsrun_error_t *err) {
  if (optind + 1 != argc)
    return fsrun_error_make(err, 0, "%s: expected exactly one container ID (see fsrun %s --help)",
                            name, name);
  *id = argv[optind];
  return 0;
}

int fsrun_command_no_operands(const char *name, int argc, char **argv, fsrun_error_t *err) {
  if (optind < argc)
    return fsrun_error_make(err, 0, "%s: unexpected argument `%s` (see fsrun %s --help)", name,
                            argv[optind], name);
  return 0;
}
