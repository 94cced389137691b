/* The container lifecycle: create, start, run, state, kill, delete, list, ps. The commands in
 * src/cmd/ parse their arguments and call these. */
#ifndef FSRUN_CONTAINER_H
#define FSRUN_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "context.h"
#include "error.h"
#include "oci.h"

struct fsrun_cgroup;

struct container_create_opts {
  const char *id;
  const char *bundle;         /* NULL = the current directory */
  const char *pid_file;       /* may be NULL */
  const char *console_socket; /* may be NULL */
  int preserve_fds;
  bool no_pivot;
  bool no_new_keyring;
  /* linux.seccomp's compiled program is looked up in, and kept in, the state root's cache
   * (seccomp-cache.h): `fsrun create` and `run`; not the sandbox, whose filter is short */
  bool seccomp_cache;
  /* the config as JSON text, in place of the bundle's config.json (fsrun sandbox builds it in
   * memory: no file is written and read back on every run) */
  const char *config_json;
  size_t config_len;
  /* config_json already parsed (fsrun sandbox has the struct it serialized): taken over by create,
   * which frees it whatever happens, and config_json is not parsed again */
  oci_config *config;
  /* called with the init's pid once its namespaces exist and its id maps are written, while it
   * waits for GO (fsrun sandbox starts its network helper there); without a user namespace of
   * its own, before its cgroup's limits are written; a failure fails the create */
  int (*on_namespaces)(pid_t init_pid, void *data, fsrun_error_t *err);
  /* when not NULL: called (with on_namespaces_data) once the init has made its mounts, before its
   * pivot_root and the process, the init stopped there; what on_namespaces started runs while the
   * init mounts, and is waited for here (fsrun sandbox: its network helper's ready byte) */
  int (*on_mounts_done)(void *data, fsrun_error_t *err);
  void *on_namespaces_data;
  /* called with the init's pid and create's pidfd on it (borrowed: dup it to keep it) as soon as
   * it is cloned (fsrun sandbox's watchdog pins it, so that its deadline can end a set-up the
   * init is stuck in; --max-buffer-kill keeps the pidfd); a failure fails the create */
  int (*on_cloned)(pid_t init_pid, int init_pidfd, void *data, fsrun_error_t *err);
  void *on_cloned_data;
  /* called for each limit the init's set-up could not put in place (limit: the policy's key, as
   * "allowedPaths"; why: one line), before the container's process exists; a failure fails the
   * create (fsrun sandbox's limitsMode "require"). NULL: said as a warning. */
  int (*on_limit_gap)(const char *limit, const char *why, void *data, fsrun_error_t *err);
  void *on_limit_gap_data;
  /* when not NULL: the process is exec'd only once file times have reached it (file-time.h; fsrun
   * sandbox's tamper cutoff): its init waits for the coarse clock at the end of its set-up, so
   * that the wait overlaps the set-up, after the prestart, createRuntime and createContainer
   * hooks (the sandbox has none) and before any seccomp filter. Lowered to the coarse time the
   * init went on at when the clock was set back (file_time_wait_floor). */
  struct timespec *exec_not_before;
  /* fsrun sandbox's one-shot run: its process starts at once, and nothing but this fsrun runs the
   * container. Create writes less to the state dir, each file a new inode (ext4 without a journal
   * scans the recently deleted ones for each): no compiled seccomp filter (an exec into it compiles
   * the profile, exec_seccomp), and state.json once, at `creating`; the init's record alone then
   * says `created` (status_write_created). */
  bool one_shot;
  /* the caller decided that the container has no cgroup (fsrun sandbox as an ordinary user without
   * a delegated cgroup v2 subtree: its limits are rlimits, docs/sandbox.md "Limits"); create does
   * not look for the hierarchies nor try to make directories it may not make */
  bool no_cgroup;
  /* the container's cgroup gets no device allow-list (cgroup_create_opts.no_device_rules): fsrun
   * sandbox's one-shot run as root, whose command cannot reach a device node outside the default
   * ones by other means (sandbox-devices.h) */
  bool no_device_rules;
};

struct container_run_opts {
  struct container_create_opts create;
  bool detach;
  bool keep; /* do not delete the container after it exits (foreground run) */
  /* foreground: called once the process runs, before the wait, with the container's cgroup (NULL:
   * it has none). A thread the caller needs is started here, not before: the init is cloned with a
   * bare clone3, and a thread that exists at that moment leaves the child libc's locks and thread
   * list as they were (a setxid call then waits for it forever). */
  void (*on_started)(const struct fsrun_cgroup *cg, void *arg);
  void *on_started_arg;
  /* foreground, when not NULL: the signal that ended the process, 0 when it exited. Under fsrun's
   * init (run.fsrun.init) both come from the wait status the init reports, so a process that
   * exits 137 is not taken for one SIGKILL ended. */
  int *term_signal;
  /* foreground: called once the command has ended, before its cgroup (NULL: it has none) is
   * removed, so that what the cgroup counted (OOM kills, CPU time) can still be read */
  void (*on_exit)(const struct fsrun_cgroup *cg, void *data);
  void *on_exit_data;
};

int container_create(const struct fsrun_context *ctx, const struct container_create_opts *o,
                     fsrun_error_t *err);
int container_start(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* Foreground: *exit_status is the process's status (128+N for signal N). */
int container_run(const struct fsrun_context *ctx, const struct container_run_opts *o,
                  int *exit_status, fsrun_error_t *err);
int container_state(const struct fsrun_context *ctx, const char *id, FILE *out, fsrun_error_t *err);
/* signal: a name ("KILL", "SIGKILL") or a number; NULL = SIGTERM. */
int container_kill(const struct fsrun_context *ctx, const char *id, const char *signal, bool all,
                   fsrun_error_t *err);
int container_delete(const struct fsrun_context *ctx, const char *id, bool force,
                     fsrun_error_t *err);
/* The same; for a task container of `fsrun bundle` (exec-git.h's annotation) *tamper is then the
 * last tamper walk's list (exec_git_final_walk) and *host_args (when not NULL) its hostGitArgs,
 * else they stay NULL. */
int container_delete_walked(const struct fsrun_context *ctx, const char *id, bool force,
                            char ***tamper, char ***host_args, fsrun_error_t *err);
/* format: "table" (NULL) or "json". */
int container_list(const struct fsrun_context *ctx, const char *format, bool quiet, FILE *out,
                   fsrun_error_t *err);
/* format "json": the host pids as a JSON array; "table": `ps ps_args` (default -ef) filtered to the
 * container's processes. */
int container_ps(const struct fsrun_context *ctx, const char *id, const char *format,
                 char **ps_args, int n_ps_args, FILE *out, fsrun_error_t *err);

/* "KILL", "SIGKILL", "kill", "9", "RTMIN+3" -> the number. */
int signal_parse(const char *name, int *sig, fsrun_error_t *err);

#endif
