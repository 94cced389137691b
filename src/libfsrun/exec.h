/* `exec`: a new process in a created or running container. It joins every namespace of the
 * container's init in one setns() on the init's pidfd (the pid namespace through the parent, so the
 * child is born in it), the container's cgroup (CLONE_INTO_CGROUP on cgroup v2), and applies the
 * process spec (cwd, terminal, rlimits, LSM labels, user, capabilities, no_new_privs, Landlock,
 * the container's seccomp profile) before execve. The runtime is never re-executed: this is the
 * hot path of the Fusion sandbox, one clone3 and one execve per command. */
#ifndef FSRUN_EXEC_H
#define FSRUN_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "error.h"
#include "oci.h"

struct exec_options {
  const char *id;
  const char *process_path; /* -p: process.json; NULL = config.json's process + args */
  char **args;              /* COMMAND [ARG...] (may be empty with -p) */
  size_t n_args;
  bool tty; /* --tty given (process.terminal = true) */
  const char *console_socket;
  bool detach;
  const char *pid_file;
  const char *cwd;
  char **env; /* K=V: replaces K or is appended */
  size_t n_env;
  const char *user; /* "UID" or "UID:GID", parsed with exec_parse_user */
  char **additional_gids;
  size_t n_additional_gids;
  char **caps; /* added to bounding, effective, permitted (and ambient with inheritable) */
  size_t n_caps;
  bool no_new_privs;
  int preserve_fds;
  const char *process_label; /* process.selinuxLabel */
  const char *apparmor;      /* process.apparmorProfile */
  bool ignore_paused;
  const char *status_json; /* --status-json: how the process ended, as JSON (exec-status.h) */
  bool kill_group; /* --kill-group: SIGKILL the process's group when it ends, before reaping it */
};

/* Runs the process. Foreground: waits for it (forwarding signals, relaying the pty when it has one
 * and there is no console socket) and stores its status in *exit_status (128+N for signal N).
 * --detach: returns once the process has been exec'd (the pid file is written by then). Setup
 * errors (including `exec: "X": no such file or directory`) are returned as errors. */
int container_exec(const struct fsrun_context *ctx, const struct exec_options *o, int *exit_status,
                   fsrun_error_t *err);

/* Turns *process into the process container_exec runs. *process is the base (config.json's
 * process, owned, may be NULL); with o->process_path it is replaced by that file's process. Then
 * o's overrides apply (args, cwd, env, user, groups, caps, terminal, no_new_privs, labels) and the
 * result is validated (a command, an absolute cwd, known capability names, exact ids, K=V env).
 * On failure *process is left valid (freeable). No system calls besides reading the process file.
 */
int exec_build_process(oci_process **process, const struct exec_options *o, fsrun_error_t *err);

/* An id for --user / --additional-gids: decimal digits only (no sign, space, base prefix or
 * suffix), 0 to 4294967294 ((uid_t)-1 means "unchanged" to the kernel and is refused).
 * Returns 0, or -EINVAL (not a number) / -ERANGE (too large) without touching *out. */
int exec_parse_id(const char *text, uint32_t *out);

/* --user: "UID" or "UID:GID", each as exec_parse_id. has_gid tells whether a GID was given.
 * Errors: "--user: expected UID or UID:GID (decimal, 0 to 4294967294), got `TEXT`". */
int exec_parse_user(const char *text, uint32_t *uid, uint32_t *gid, bool *has_gid,
                    fsrun_error_t *err);

#endif
