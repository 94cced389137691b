/* The Fusion sandbox: a SandboxPolicy (libocispec's oci_policy) turned into an OCI config over a
 * git worktree (design.md, "Mapping to the OCI spec"), written as a bundle (`fsrun bundle`) or run
 * once
 * (`fsrun sandbox`, see sandbox-run.c). */
#ifndef FSRUN_SANDBOX_H
#define FSRUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"
#include "oci.h"

#define SANDBOX_DEFAULT_PIDS_LIMIT 4096
/* in the bundle: the empty, mode 0 file bound over /etc/shadow and the like */
#define SANDBOX_UNREADABLE_FILE "unreadable"
/* an empty read-only directory in the bundle, laid over git hooks the repository does not have */
#define SANDBOX_EMPTY_DIR "empty"
/* under the state root: the bundle directory the sandbox runs share */
#define SANDBOX_SHARED_BUNDLE ".sandbox-bundle"
#define SANDBOX_DEFAULT_PATH  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* What a `fsrun sandbox` run (one command, then the container is gone) leaves out of its cgroup,
 * which a `fsrun bundle` task container keeps (NULL in sandbox_mapping_opts: a task container). */
struct sandbox_one_shot {
  /* root: no device allow-list (sandbox_device_rules_needed() said no) */
  bool no_device_rules;
};

struct sandbox_mapping_opts {
  const oci_policy *policy;
  const char *worktree; /* absolute, symlinks resolved */
  char *const *args;    /* the command; NULL or empty = /bin/sh */
  size_t n_args;
  char *const *environ; /* the caller's environment, filtered by envAllowlist */
  uid_t uid;            /* the caller's ids, kept inside */
  gid_t gid;
  const char *home;        /* $HOME inside (a tmpfs); NULL = none */
  const char *root_path;   /* root.path of the config ("rootfs") */
  bool userns;             /* not root: a user namespace mapping uid/gid to themselves */
  const char *state_root;  /* masked where a bind shows it (sandbox-runmask.h); NULL: none */
  const char *runtime_dir; /* the caller's $XDG_RUNTIME_DIR, masked likewise; NULL: unset */
  const char *etc_view;    /* root: the bundle that keeps the view of /etc; NULL: a tmpfs */
  const struct sandbox_one_shot *one_shot; /* fsrun sandbox; NULL: fsrun bundle */
};

/* Builds the config. Paths of allowedPaths/writablePaths that do not exist are skipped with a
 * warning. */
/* sandbox_config_from_policy for the calling process: its environment, euid/egid, $HOME and
 * $XDG_RUNTIME_DIR, the root at "rootfs" in the bundle. */
int sandbox_config_for_caller(const oci_policy *policy, const char *worktree,
                              const char *state_root, char *const *args, size_t n_args, bool userns,
                              const char *etc_view, const struct sandbox_one_shot *one_shot,
                              oci_config **out, fsrun_error_t *err);
int sandbox_config_from_policy(const struct sandbox_mapping_opts *o, oci_config **out,
                               fsrun_error_t *err);
/* The covers of a secret file that a mount carries in memory (oci_mount.covers) made entries of
 * their own, at their paths in the container: every mount's with all (a bundle's config.json),
 * else only those of a mount that is no longer a bind (the git common dir made an overlay). */
void sandbox_covers_as_entries(oci_config *c, bool all);

/* The secret file's place `below` a bind (oci_mount.covers: "" the file itself, "shadow" below
 * /etc, "etc/shadow" below /, "backups/shadow.bak" below /var) as the static string a cover
 * points to; NULL: no such place. */
const char *sandbox_secret_cover(const char *below);

/* An ordinary user's `fsrun sandbox` covers only the secret files that user can read
 * (sandbox.c, caller_needs_cover); the config of a run that left some uncovered names them here,
 * comma-separated. */
#define SANDBOX_UNCOVERED_ANNOTATION "run.fsrun.sandbox.uncovered"

/* `fsrun exec` into a container of such a config: refused when this caller can read one of them
 * (its groups need not be the run's: a session since added to group shadow, `sg shadow`). */
int sandbox_uncovered_exec_check(const oci_config *c, fsrun_error_t *err);

/* Creates dir (must not hold a config.json yet) with config.json, the (empty) root directory and
 * what the mounts take from the bundle, and the bundle's mark in ctx's state root
 * (bundle-mark.h). */
int sandbox_write_bundle(const struct fsrun_context *ctx, const char *dir, const oci_config *config,
                         fsrun_error_t *err);
/* The bundle directory every `fsrun sandbox` run shares, made on first use under the state root:
 * an empty root, the empty directory and the unreadable file; no config.json (each run hands its
 * config to create in memory). Caller frees. */
char *sandbox_shared_bundle(const char *state_root, fsrun_error_t *err);

/* Reads and parses a policy file ("-" = stdin; NULL = the empty policy {}). */
int sandbox_policy_load(const char *path, oci_policy **out, fsrun_error_t *err);
/* sha256 hex of the canonical JSON of the bare policy (the settings wrapper left out). */
int sandbox_policy_hash(const oci_policy *p, char out[65], fsrun_error_t *err);

/* Resolves the worktree (default "."), refusing what is not a directory. Caller frees *out. */
int sandbox_resolve_worktree(const char *path, char **out, fsrun_error_t *err);

/* `fsrun bundle` */
struct sandbox_bundle_opts {
  const char *policy_path;
  const char *worktree;
  const char *out_dir;
  char *const *args;
  size_t n_args;
};
int sandbox_bundle(const struct fsrun_context *ctx, const struct sandbox_bundle_opts *o,
                   fsrun_error_t *err);

/* `fsrun sandbox` */
struct sandbox_run_opts {
  const char *policy_path; /* NULL: {} */
  const char *worktree;    /* NULL: "." */
  const char *task_id;
  const char *run_id;
  int64_t timeout_ms;   /* 0: none */
  size_t max_buffer;    /* --json capture limit per stream */
  bool max_buffer_kill; /* going over it kills the sandbox (Node's exec semantics) */
  bool json;
  const char *audit_log;
  const char *failure_mode; /* NULL: the policy's, then fail-hard */
  /* the host probe's (sandbox-probe.h; -1: none): where a failed set-up says whether it was
   * for want of a host capability */
  int probe_report_fd;
  char *const *args;
  size_t n_args;
};
#define SANDBOX_EXIT_TIMEOUT       124
#define SANDBOX_EXIT_SETUP         125
#define SANDBOX_DEFAULT_MAX_BUFFER (10u * 1024 * 1024)

/* Runs the command; *exit_status gets the command's status (124 timeout, 125 set-up failure under
 * fail-hard). Returns < 0 only for bad input (options, policy, worktree), before anything ran. */
int sandbox_run(const struct fsrun_context *ctx, const struct sandbox_run_opts *o, int *exit_status,
                fsrun_error_t *err);

#endif
