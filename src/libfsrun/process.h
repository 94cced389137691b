/* The container init: the child that `create` clones. It runs fsrun's own code (no re-exec of the
 * runtime) to set up namespaces, the rootfs, the terminal and the credentials, reports to the
 * parent over the sync socket, blocks on the exec fifo until `start`, then execve()s the user's
 * process. */
#ifndef FSRUN_PROCESS_H
#define FSRUN_PROCESS_H

#include <signal.h>
#include <stdbool.h>

#include "error.h"
#include "namespaces.h"
#include "oci.h"
#include "landlock.h"
#include "process-attrs.h"
#include "rootfs.h"
#include "seccomp.h"

struct fsrun_cgroup;

struct init_config {
  const oci_config *config;
  int sync_fd;        /* our end of the sync socketpair */
  int parent_sync_fd; /* the parent's end: closed first, so the parent's death reads as EOF */
  int procfs_fd;      /* verified procfs handle (opened by the parent) */
  int exec_fifo_fd;   /* O_PATH fd on ROOT/ID/exec.fifo */
  int state_dir_fd;   /* the parent's fd on ROOT/ID: closed first, the init has no use for it */
  const struct ns_plan *ns;
  bool wait_go;            /* the parent has work to do (cgroup move, id maps) before we start */
  bool go_late;            /* GO only stands for the cgroup move: wait for it at the first cgroup
                              mount (rootfs_ctx.join_cgroup), mounting in parallel until then */
  bool stay_dumpable;      /* an unprivileged parent writes our id maps: non-dumpable after GO */
  bool in_userns;          /* a new or joined user namespace */
  bool hooks_after_mounts; /* report SYNC_MOUNTS_DONE, wait for GO (hooks, on_mounts_done) */
  bool reaper;             /* run.fsrun.init: stay as pid 1 and run the process as our child */
  int tiny_init_fd;        /* with reaper: the tiny init's sealed image (tiny-init.h), or -1 */
  /* container_create_opts.one_shot: the init keeps dying with the runtime after create (its pid
   * namespace, and so the whole tree, ends with it even when the watchdog dies too) */
  bool dies_with_runtime;
  const struct fsrun_seccomp *seccomp;
  const struct fsrun_process_attrs *attrs;     /* may be NULL */
  const struct fsrun_landlock_rules *landlock; /* may be NULL */
  /* joined through `tasks` by the init itself right after the first GO (cgroup_enter_v1), or NULL
   * (the runtime moves it before GO) */
  const struct fsrun_cgroup *join_cgroup;
  struct rootfs_ctx rootfs;
  int preserve_fds;
  int listen_fds; /* LISTEN_FDS passed through from our environment, 0 when none */
  bool no_new_keyring;
  const sigset_t *sigmask; /* the caller's signal mask, restored before exec */
  /* container_create_opts.exec_not_before (tv_sec 0: none); lowered to the coarse time the init
   * went on at when the clock was set back (exec_not_before_lowered), which SYNC_CREATED reports */
  struct timespec exec_not_before;
  bool exec_not_before_lowered;
  /* with hooks_after_mounts: the caller configures our network namespace while we mount (fsrun
   * sandbox's helper: tap0's address and default route); lo, the routes and the policy rules
   * come after that GO (a catch-all unreachable rule before the helper's route made it fail) */
  bool network_after_mounts;
};

/* Runs in the cloned child. Never returns: execs the process or _exit()s after reporting the error
 * to the parent. */
__attribute__((noreturn)) void init_main(struct init_config *c);

/* execve, and when it fails "fsrun: exec: "EXE": REASON" on stderr and _exit 127 (no such file)
 * or 126 (anything else), as a shell does. Safe in a vfork child: no allocation, no return. */
__attribute__((noreturn)) void process_exec(const char *exe, char *const argv[],
                                            char *const envp[]);

/* Finds args0 like execvp would, in the PATH of env (a default PATH when env has none), relative to
 * the current directory. Errors: `exec: "X": no such file or directory` and `exec: "X": permission
 * denied` (podman maps those words to 127 and 126). */
int process_resolve_executable(const char *args0, const oci_strv *env, char **out,
                               fsrun_error_t *err);

#endif
