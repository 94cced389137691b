#include "container.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bind-identity.h"
#include "bind-source.h"
#include "bundle-mark.h"
#include "cgroup.h"
#include "clone.h"
#include "exec-git.h"
#include "file-time.h"
#include "foreground.h"
#include "hooks.h"
#include "idmap.h"
#include "landlock.h"
#include "log.h"
#include "mount-fallback.h"
#include "namespaces.h"
#include "netlink.h"
#include "oci.h"
#include "pidfd-compat.h"
#include "proc-mounter.h"
#include "procfs.h"
#include "reaper.h"
#include "tiny-init.h"
#include "process-attrs.h"
#include "process.h"
#include "sealed-image.h"
#include "seccomp-handover.h"
#include "seccomp.h"
#include "status.h"
#include "status-kept.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"
#include "validate.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static void cleanup_statusp(struct container_status *st) {
  status_clear(st);
}
#define cleanup_status __attribute__((cleanup(cleanup_statusp)))

static int pidfd_open_(pid_t pid) {
  return (int)syscall(SYS_pidfd_open, pid, 0);
}
static int pidfd_signal(int pidfd, int sig) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static bool is_rootless(const struct fsrun_context *ctx) {
  if (ctx->rootless == ROOTLESS_TRUE)
    return true;
  if (ctx->rootless == ROOTLESS_FALSE)
    return false;
  if (geteuid() != 0 || getenv("_CONTAINERS_ROOTLESS_UID") != NULL)
    return true;
  /* root only of a user namespace someone else made (as runc's "auto"): the host's cgroups are
   * not ours to create */
  return !in_initial_user_namespace();
}

/* A pidfd on the container's init, or -1 when that process is gone (ESRCH: a reused pid is
 * refused, the start time is checked after the pidfd pins the process) or when pidfd_open answers
 * ENOSYS (valgrind 3.19) and the init lives: there is no fallback that does not signal a pid that
 * may be reused (invariant 5), so the callers refuse (no_pidfd_error). */
static int open_init_pidfd(const struct container_status *st) {
  int fd;
  if (st->pid <= 0)
    return (errno = ESRCH, -1);
  fd = pidfd_open_(st->pid);
  if (fd < 0 && errno == ENOSYS)
    return status_init_alive(st) ? (errno = ENOSYS, -1) : (errno = ESRCH, -1);
  if (fd < 0)
    return (errno = ESRCH, -1);
  if (!status_init_alive(st)) {
    close(fd);
    return (errno = ESRCH, -1);
  }
  return fd;
}

/* the message names ENOSYS already: taken as it is, not followed by strerror's text of it */
static int no_pidfd_error(const char *what, fsrun_error_t *err) {
  return fsrun_error_take(err, ENOSYS,
                          xasprintf("%s: pidfd_open answers ENOSYS here (valgrind 3.19, a seccomp "
                                    "profile): fsrun signals a container's init only through a "
                                    "pidfd, never by a pid that may be reused by then",
                                    what));
}

/* Waits until the process behind pidfd has exited; reaps it when it is our child. false when it
 * still runs after timeout_ms. */
static bool wait_pidfd(int pidfd, int timeout_ms) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  siginfo_t info;
  int r;
  while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
    ;
  memset(&info, 0, sizeof(info));
  (void)waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG);
  return r != 0;
}

/* --- create ------------------------------------------------------------------------------------
 */

struct created {
  pid_t pid;
  int pidfd;
  int dirfd;
  int pty_master; /* run without a console socket: the pty to relay */
  int status_fd;  /* fsrun's init: our end of the sync socket, where it reports the wait status */
  struct container_status st;
  struct fsrun_cgroup *cg;
  oci_config *config;
};

static void created_clear(struct created *c) {
  if (c->pidfd >= 0)
    close(c->pidfd);
  if (c->dirfd >= 0)
    close(c->dirfd);
  if (c->pty_master >= 0)
    close(c->pty_master);
  if (c->status_fd >= 0)
    close(c->status_fd);
  status_clear(&c->st);
  if (c->cg != NULL)
    cgroup_free(c->cg);
  if (c->config != NULL)
    oci_config_free(c->config);
  memset(c, 0, sizeof(*c));
  c->pidfd = c->dirfd = c->pty_master = c->status_fd = -1;
}

static char *resolve_rootfs(const char *bundle, const char *root_path, fsrun_error_t *err) {
  cleanup_free char *joined = NULL;
  char *resolved;
  if (root_path == NULL || root_path[0] == '\0') {
    fsrun_error_make(err, EINVAL, "config.json: root.path: required");
    return NULL;
  }
  joined = root_path[0] == '/' ? xstrdup(root_path) : xasprintf("%s/%s", bundle, root_path);
  resolved = realpath(joined, NULL);
  if (resolved == NULL)
    fsrun_error_errno(err, "config.json: root.path: `%s`", joined);
  return resolved;
}

static char *hook_state(const struct container_status *st, const char *status, pid_t pid) {
  cleanup_error fsrun_error_t err = NULL;
  char *json = status_state_json(st, status, pid, NULL, false, &err);
  return json ? json : xstrdup("{}");
}

static bool has_hooks(const oci_config *c, bool create_side) {
  const oci_hooks *h = c->hooks;
  if (h == NULL)
    return false;
  if (create_side)
    return hooks_any(&h->prestart) || hooks_any(&h->create_runtime) ||
           hooks_any(&h->create_container) || hooks_any(&h->start_container);
  return false;
}

static int write_pid_file(const char *path, pid_t pid, fsrun_error_t *err) {
  char buf[32];
  int len = snprintf(buf, sizeof(buf), "%d", (int)pid);
  if (status_write_file_atomic(AT_FDCWD, path, buf, (size_t)len, 0644, err) < 0)
    return fsrun_error_wrap(err, "--pid-file");
  return 0;
}

static int listen_fds_from_env(void) {
  const char *v = getenv("LISTEN_FDS");
  long n;
  if (v == NULL || v[0] == '\0')
    return 0;
  n = strtol(v, NULL, 10);
  return n > 0 && n < 65536 ? (int)n : 0;
}

/* The child we cloned has cloned the init (its sibling, our child too), reported its pid and
 * exits: from here on out->pid/pidfd are the init's. */
static int switch_to_init(pid_t init, struct created *out, fsrun_error_t *err) {
  siginfo_t info;
  int pidfd;
  if (init <= 0)
    return fsrun_error_make(err, 0, "the container init's parent exited during setup");
  /* Our own child: its pid cannot be reused before we reap it. A process of the container that
   * took over the init could name any process here, which we would then signal: only our own
   * child (cloned with CLONE_PARENT) other than the child is taken, and before we wait for the
   * child to exit (a pid_join_prepared first init may be waiting for us). Nothing to undo
   * otherwise: the real init dies with us (PR_SET_PDEATHSIG). */
  pidfd = init == out->pid ? (errno = ECHILD, -1) : pidfd_open_own_child(init);
  if (pidfd < 0 && errno == ECHILD)
    return fsrun_error_errno(err, "the container init's pid %d is not the runtime's child",
                             (int)init);
  if (pidfd < 0)
    return fsrun_error_errno(err, "pidfd_open the container init");
  memset(&info, 0, sizeof(info));
  while (waitid((idtype_t)P_PIDFD, (id_t)out->pidfd, &info, WEXITED) < 0 && errno == EINTR)
    ;
  close(out->pidfd);
  out->pidfd = pidfd;
  out->pid = init;
  return 0;
}

/* A message on our end of the sync socket (sync_pass_credentials) from a process other than the
 * one we take for the init (out->pid: the first init until its SYNC_INIT_PID, then the pid it
 * reported): a set-up failure. Whatever else holds the socket -- the late init of a joined pid
 * namespace (ns_plan.pid_join_prepared), which the container can seize before its pid reached us
 * -- must not pass for the first init. */
static int foreign_sender(const struct sync_msg *msg, pid_t init, fsrun_error_t *err) {
  return fsrun_error_make(err, EPROTO,
                          "the container init's setup: message %u from pid %d, not the init "
                          "(pid %d)",
                          (unsigned)msg->type, (int)msg->sender, (int)init);
}

/* ns_plan.double_clone: the first message is the init's pid from the intermediate child */
static int take_init_from_intermediate(int sync_fd, struct created *out, fsrun_error_t *err) {
  struct sync_msg msg;
  pid_t init = 0;
  int r = sync_recv(sync_fd, &msg);

  if (r == 0 && msg.sender != out->pid) {
    r = foreign_sender(&msg, out->pid, err);
    sync_msg_clear(&msg);
    return r;
  }
  if (r == 0 && msg.type == SYNC_ERROR) {
    fsrun_error_take(err, msg.errno_value, steal_ptr(&msg.data));
    sync_msg_clear(&msg);
    return fsrun_error_code(err);
  }
  if (r == 0 && msg.type == SYNC_INIT_PID && msg.data != NULL)
    init = (pid_t)strtol(msg.data, NULL, 10);
  if (r == 0)
    sync_msg_clear(&msg);
  return switch_to_init(init, out, err);
}

/* ns_plan.pid_join_early: the first init reports once it has entered or made its namespaces (the
 * id maps can be written then) */
static int wait_init_namespaces(int sync_fd, pid_t init, fsrun_error_t *err) {
  struct sync_msg msg = {.fd = -1};
  int r = sync_recv(sync_fd, &msg);
  if (r == 0 && msg.sender != init) {
    r = foreign_sender(&msg, init, err);
  } else if (r == 0 && msg.type == SYNC_ERROR) {
    fsrun_error_take(err, msg.errno_value, steal_ptr(&msg.data));
    r = fsrun_error_code(err);
  } else if (r < 0 || msg.type != SYNC_NAMESPACES) {
    r = fsrun_error_make(err, 0, "the container init exited during setup");
  }
  sync_msg_clear(&msg);
  return r;
}

/* The runtime's own setup can fail because the init has just failed and exited (its cgroup move
 * finds no process, GO finds no reader): the init's report, already queued on the sync socket, is
 * the error to give. Reads without blocking; keeps err when there is no report (of the init's). */
static void prefer_init_error(int sync_fd, pid_t init, fsrun_error_t *err) {
  for (;;) {
    struct pollfd p = {.fd = sync_fd, .events = POLLIN};
    struct sync_msg msg = {.fd = -1};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN) || sync_recv(sync_fd, &msg) < 0)
      return;
    if (msg.type == SYNC_ERROR && msg.sender == init) {
      fsrun_error_release(err);
      fsrun_error_take(err, msg.errno_value, steal_ptr(&msg.data));
      sync_msg_clear(&msg);
      return;
    }
    sync_msg_clear(&msg);
  }
}

/* No mount namespace in the config: the container shares the caller's. */
static bool shares_caller_mntns(const oci_config *config) {
  const oci_linux *lx = config->linux_;
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++)
    if (namespace_flag(lx->namespaces[i].type) == CLONE_NEWNS)
      return false;
  return true;
}

/* The runtime never changes the caller's mount namespace: what needs a mount there is refused
 * (runc mounts into it and leaves the mounts behind; it refuses masked and read-only paths too). */
static int check_shared_mntns(const oci_config *config, fsrun_error_t *err) {
  const oci_linux *lx = config->linux_;
  const char *field = NULL;
  if (!shares_caller_mntns(config))
    return 0;
  if (config->n_mounts > 0)
    field = "mounts";
  else if (config->root_readonly)
    field = "root.readonly";
  else if (lx != NULL && (lx->masked_paths.len > 0 || lx->readonly_paths.len > 0))
    field = lx->masked_paths.len > 0 ? "linux.maskedPaths" : "linux.readonlyPaths";
  else if (lx != NULL && lx->rootfs_propagation != NULL)
    field = "linux.rootfsPropagation";
  else if (lx != NULL && lx->n_devices > 0)
    field = "linux.devices";
  if (field == NULL)
    return 0;
  return fsrun_error_make(err, 0,
                          "config.json: %s: needs a mount namespace of the container's own (add "
                          "{\"type\": \"mount\"} to linux.namespaces): without one the "
                          "container shares the caller's, which fsrun does not change",
                          field);
}

/* A mount namespace joined by path holds other processes: the mount(2) fallback's "bind, then
 * remount" would show them each bind with its source's flags for a moment (mount-fallback.h). */
static int check_joined_mntns(const oci_config *config, fsrun_error_t *err) {
  const oci_linux *lx = config->linux_;
  const char *missing;
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++) {
    const oci_namespace *ns = &lx->namespaces[i];
    if (namespace_flag(ns->type) != CLONE_NEWNS || ns->path == NULL)
      continue;
    missing = mount_api_missing();
    if (missing == NULL)
      return 0;
    return fsrun_error_make(err, 0,
                            "linux.namespaces[%zu]: joining the mount namespace `%s` needs %s, "
                            "which answers ENOSYS here (the mount(2) fallback is only made in "
                            "a new mount namespace)",
                            i, ns->path, missing);
  }
  return 0;
}

/* Idmapped mounts talk to the runtime over the sync socket during the mounts (idmap.h). */
static bool has_idmapped_mounts(const oci_config *config) {
  for (size_t i = 0; i < config->n_mounts; i++) {
    const oci_mount *m = &config->mounts[i];
    if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0)
      return true;
    for (size_t k = 0; k < m->options.len; k++)
      if (strcmp(m->options.items[k], "idmap") == 0 || strcmp(m->options.items[k], "ridmap") == 0)
        return true;
  }
  return false;
}

/* One `create` in progress: what its steps share. */
struct create_job {
  const struct fsrun_context *ctx;
  const struct container_create_opts *o;
  bool relay_pty, start_at_once;
  const sigset_t *sigmask;
  struct created *out;
  oci_config *config;
  char *bundle, *rootfs, *config_json;
  size_t config_len;
  struct fsrun_seccomp *seccomp;
  struct fsrun_process_attrs *attrs;
  struct fsrun_landlock_rules *landlock;
  struct mount_cgroup_hierarchy *hierarchies;
  size_t n_hierarchies;
  bool want_reaper, dir_created, new_userns, wait_go, late_init_taken, got_listener;
  char mark[BUNDLE_MARK_NAME_MAX]; /* the bundle's mark, linked into the state dir; "": none */
  unsigned cg_joined; /* what the init does itself to join its cgroup (CGROUP_JOINED_*) */
  struct ns_plan plan;
  int fifo_fd, procfs_fd, console_fd, sync_fds[2];
  int procfs_context; /* SYNC_PROCFS: the proc context handed to the late init, or -1 */
  int held_listener;  /* pid_join_prepared: the seccomp listener, until the late init's pid */
  struct init_config ic;
};

static void create_job_release(struct create_job *j) {
  oci_config_freep(&j->config);
  free(j->bundle);
  free(j->rootfs);
  free(j->config_json);
  seccomp_freep(&j->seccomp);
  process_attrs_freep(&j->attrs);
  landlock_rules_freep(&j->landlock);
  free(j->hierarchies);
  namespaces_plan_clear(&j->plan);
  /* our procfs instance, a mount attached nowhere: dissolved by the kernel's collector, so that
   * `create` (and `run` before its wait) does not wait for its RCU grace period */
  if (j->procfs_fd >= 0)
    sealed_close_mounts_later(j->procfs_fd, -1);
  j->procfs_fd = -1;
  int *fds[] = {&j->fifo_fd,     &j->console_fd,     &j->sync_fds[0],
                &j->sync_fds[1], &j->procfs_context, &j->held_listener};
  for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (*fds[i] >= 0)
      close(*fds[i]);
}

/* run.fsrun.sandbox.worktree counts only on a config.json `fsrun bundle` marked in this state root
 * (bundle-mark.h); a config handed over in memory (a sandbox run's) has no file to mark */
static int check_task_container(struct create_job *j, fsrun_error_t *err) {
  bool marked = false;
  if (oci_map_get(&j->config->annotations, EXEC_GIT_ANNOTATION) != NULL &&
      j->o->config_json == NULL)
    marked = bundle_mark_find(j->ctx, j->bundle, j->config_json, j->config_len, j->mark);
  if (!marked)
    j->mark[0] = '\0';
  return exec_git_accept(j->config, marked, "create", err);
}

/* The state root whose cache of compiled seccomp programs create uses, -1 for none: a root made
 * by this create (not held) has none yet. */
static int seccomp_cache_root(const struct create_job *j) {
  return j->o->seccomp_cache && j->ctx->state_root_held ? j->ctx->state_root_fd : -1;
}

/* Step 1: everything that can be checked is checked before anything is created. */
static int create_check(struct create_job *j, fsrun_error_t *err) {
  const struct container_create_opts *o = j->o;
  struct validate_options vopts = {.systemd_cgroup = j->ctx->systemd_cgroup};
  const oci_process *proc;
  const oci_linux *lx;
  char *parse_err = NULL;

  if (status_validate_id(o->id, err) < 0)
    return fsrun_error_code(err);
  j->bundle = realpath(o->bundle ? o->bundle : ".", NULL);
  if (j->bundle == NULL)
    return fsrun_error_errno(err, "bundle `%s`", o->bundle ? o->bundle : ".");
  /* the bytes are kept: the state dir gets them as they are (exec reads the config from there) */
  if (o->config_json != NULL) {
    j->config_len = o->config_len;
    j->config_json = xmalloc0(j->config_len + 1);
    memcpy(j->config_json, o->config_json, j->config_len);
  } else {
    cleanup_free char *config_path = xasprintf("%s/config.json", j->bundle);
    if (oci_read_file(config_path, &j->config_json, &j->config_len, &parse_err) < 0)
      return fsrun_error_take(err, EINVAL, parse_err);
  }
  if (j->config == NULL &&
      oci_config_parse(j->config_json, j->config_len, "config.json", &j->config, &parse_err) < 0)
    return fsrun_error_take(err, EINVAL, parse_err);
  if (validate_config_with(j->config, j->bundle, &vopts, err) < 0)
    return fsrun_error_code(err);
  /* a task container's binds keep the identity `fsrun bundle` checked (bind-identity.h) */
  if (bind_checks_from_annotations(j->config, err) < 0)
    return fsrun_error_code(err);
  /* the git overlay of each exec only for fsrun bundle's config, which lets the command write the
   * worktree */
  if (check_task_container(j, err) < 0)
    return fsrun_error_code(err);
  proc = j->config->process;
  lx = j->config->linux_;
  if (proc == NULL)
    return fsrun_error_make(err, EINVAL, "config.json: process: required to create a container");
  if (proc->terminal && o->console_socket == NULL && !j->relay_pty)
    return fsrun_error_make(err, EINVAL,
                            "process.terminal is true: --console-socket is required to receive "
                            "the pty");
  if (!proc->terminal && o->console_socket != NULL)
    return fsrun_error_make(err, EINVAL, "--console-socket given but process.terminal is false");
  if (o->preserve_fds < 0)
    return fsrun_error_make(err, EINVAL, "--preserve-fds: must not be negative");
  j->rootfs = resolve_rootfs(j->bundle, j->config->root_path, err);
  if (j->rootfs == NULL)
    return fsrun_error_code(err);
  if (lx != NULL && lx->seccomp != NULL &&
      seccomp_compile_cached(lx->seccomp, seccomp_cache_root(j), &j->seccomp, err) < 0)
    return fsrun_error_code(err);
  if (process_attrs_prepare(proc, lx, &j->attrs, err) < 0)
    return fsrun_error_code(err);
  if (landlock_rules_from_config(j->config, &j->landlock, err) < 0)
    return fsrun_error_code(err);
  if (j->landlock != NULL && j->seccomp != NULL && seccomp_has_notify(j->seccomp))
    return fsrun_error_make(
        err, EINVAL, "linux.seccomp.listenerPath cannot be combined with the `%s` annotation",
        LANDLOCK_ANNOTATION);
  if (lx != NULL && lx->intel_rdt != NULL && intelrdt_validate(lx->intel_rdt, err) < 0)
    return fsrun_error_code(err);
  if (netlink_validate_net_devices(lx, err) < 0)
    return fsrun_error_code(err);
  if (reaper_wanted(j->config, &j->want_reaper, err) < 0)
    return fsrun_error_code(err);
  if (check_joined_mntns(j->config, err) < 0)
    return fsrun_error_code(err);
  return check_shared_mntns(j->config, err);
}

/* state.json with the poststart and poststop hooks (kept there: the bundle may change or vanish) */
static int write_state_with_hooks(int dirfd, struct container_status *st, const oci_config *config,
                                  fsrun_error_t *err) {
  int ret;
  if (config->hooks != NULL) {
    st->poststart = config->hooks->poststart;
    st->poststop = config->hooks->poststop;
  }
  ret = status_write(dirfd, st, err);
  if (config->hooks != NULL) {
    memset(&st->poststart, 0, sizeof(st->poststart));
    memset(&st->poststop, 0, sizeof(st->poststop));
  }
  return ret;
}

/* A one-shot create without a cgroup keeps its config in state.json, one file fewer: delete
 * --force of a state it cannot read looks for a cgroup with it, and there is none */
static bool config_in_state(const struct create_job *j) {
  return j->o->one_shot && j->o->no_cgroup;
}

/* state.json as write_state_with_hooks writes it, with the config where config_in_state */
static int write_state(struct create_job *j, fsrun_error_t *err) {
  struct container_status *st = &j->out->st;
  int ret;
  if (config_in_state(j)) {
    st->config_json = j->config_json;
    st->config_len = j->config_len;
  }
  ret = write_state_with_hooks(j->out->dirfd, st, j->config, err);
  st->config_json = NULL;
  st->config_len = 0;
  return ret;
}

/* A task container's state dir gets its bundle's mark (exec and delete look for it there), and the
 * git state its first exec compares with: the state now, before its process runs. */
static int take_task_mark(struct create_job *j, fsrun_error_t *err) {
  if (bundle_mark_take(j->ctx, j->mark, j->out->dirfd, err) < 0)
    return fsrun_error_code(err);
  exec_git_created(j->config, oci_map_get(&j->config->annotations, EXEC_GIT_ANNOTATION),
                   j->out->dirfd);
  return 0;
}

/* the compiled filter beside the config it came from: each exec loads it instead of compiling
 * the profile again (exec_seccomp) */
static int keep_seccomp_program(int dirfd, const struct fsrun_seccomp *f, fsrun_error_t *err) {
  size_t len = 0;
  cleanup_free char *bytes = seccomp_serialize(f, &len);
  if (status_replace_file(dirfd, STATUS_SECCOMP_FILE, bytes, len, err) < 0)
    return fsrun_error_wrap(err, "keep the compiled seccomp filter in the state directory");
  return 0;
}

/* whether the config gives the container a pid namespace of its own (an entry without a path),
 * as namespaces_plan finds it: known before the first state.json, which a one-shot create keeps */
static bool new_pid_namespace(const oci_linux *lx) {
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++)
    if (lx->namespaces[i].type != NULL && strcmp(lx->namespaces[i].type, "pid") == 0)
      return lx->namespaces[i].path == NULL || lx->namespaces[i].path[0] == '\0';
  return false;
}

/* Step 2: the state dir with the config, the cgroup (deferred), and state.json saying
 * `creating`: written at once, so that `delete --force` can clean up whatever happens next. */
static int create_state(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  struct container_status *st = &out->st;
  const oci_linux *lx = j->config->linux_;

  /* one-shot, no cgroup: a kept state dir where the state root keeps them (status-kept.h) */
  out->dirfd = config_in_state(j) ? status_kept_create(j->ctx, j->o->id, &st->spare, err)
                                  : status_dir_create(j->ctx, j->o->id, err);
  if (out->dirfd < 0)
    return fsrun_error_code(err);
  /* a kept one is named ID once state.json is written (status_kept_reveal) */
  j->dir_created = !st->spare;
  if (!config_in_state(j) &&
      status_write_config(out->dirfd, j->config_json, j->config_len, err) < 0)
    return fsrun_error_code(err);
  if (j->seccomp != NULL && !j->o->one_shot &&
      keep_seccomp_program(out->dirfd, j->seccomp, err) < 0)
    return fsrun_error_code(err);
  /* the config passed every check: a program compiled afresh may serve the next create */
  if (j->seccomp != NULL && seccomp_cache_root(j) >= 0)
    seccomp_keep_compiled(seccomp_cache_root(j), j->seccomp);
  if (j->mark[0] != '\0' && take_task_mark(j, err) < 0)
    return fsrun_error_code(err);
  if (!j->o->no_cgroup) {
    cgroup_create_opts copts = {
        .id = j->o->id,
        .cgroups_path = lx ? lx->cgroups_path : NULL,
        .systemd = j->ctx->systemd_cgroup,
        .rootless = is_rootless(j->ctx),
        .resources = lx ? lx->resources : NULL,
        .devices = lx ? lx->devices : NULL,
        .n_devices = lx ? lx->n_devices : 0,
        .v1_controllers = oci_map_get(&j->config->annotations, CGROUP_V1_ANNOTATION),
        .no_device_rules = j->o->no_device_rules,
    };
    if (cgroup_create_deferred(&copts, &out->cg, err) < 0)
      return fsrun_error_code(err);
  }
  st->id = xstrdup(j->o->id);
  st->status = xstrdup("creating");
  st->creator_pid = getpid();
  st->creator_start_time = procfs_pid_start_time(st->creator_pid, NULL);
  st->bundle = xstrdup(j->bundle);
  st->rootfs = xstrdup(j->rootfs);
  st->created = rfc3339_now();
  if (oci_map_copy(&st->annotations, &j->config->annotations) < 0)
    abort(); /* out of memory, as xmalloc */
  st->cgroup = out->cg ? cgroup_describe(out->cg) : NULL;
  st->cgroup_record = out->cg ? cgroup_hierarchy_record(out->cg) : NULL;
  st->new_pidns = new_pid_namespace(lx);
  if (!st->spare)
    return write_state(j, err);
  if (write_state(j, err) < 0) {
    status_kept_remove_hidden(j->ctx, j->o->id);
    return fsrun_error_code(err);
  }
  if (status_kept_reveal(j->ctx, j->o->id, err) < 0)
    return fsrun_error_code(err);
  j->dir_created = true;
  return 0;
}

/* Step 3: the exec fifo (the init blocks opening it for writing until `start` opens it for
 * reading), the procfs handle, the namespace plan and the sync socket. */
static int create_prepare_clone(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  const oci_linux *lx = j->config->linux_;

  if (!j->start_at_once && (mkfifoat(out->dirfd, STATUS_EXEC_FIFO, 0622) < 0 ||
                            fchmodat(out->dirfd, STATUS_EXEC_FIFO, 0622, 0) < 0))
    return fsrun_error_errno(err, "create the exec fifo");
  if (!j->start_at_once)
    j->fifo_fd = openat(out->dirfd, STATUS_EXEC_FIFO, O_PATH | O_CLOEXEC);
  if (!j->start_at_once && j->fifo_fd < 0)
    return fsrun_error_errno(err, "open the exec fifo");
  j->procfs_fd = procfs_open(err);
  if (j->procfs_fd < 0)
    return fsrun_error_code(err);
  if (namespaces_plan(lx, out->cg != NULL && cgroup_clone_fd(out->cg) < 0, &j->plan, err) < 0)
    return fsrun_error_code(err);
  j->new_userns = (j->plan.all_new & CLONE_NEWUSER) != 0;
  if (sync_socketpair(j->sync_fds, err) < 0)
    return fsrun_error_code(err);
  /* before the clone: every message then names its sender */
  return sync_pass_credentials(j->sync_fds[0], err);
}

/* Whether the init joins its v1 cgroup itself, writing 0 to each hierarchy's `tasks` once GO
 * has come (cgroup_enter_v1): a cgroup.procs write by the runtime takes the kernel's global
 * threadgroup lock, whose first writer after a quiet spell waits for an RCU grace period. As
 * root of the host's user namespace (the files are the host root's), in a mount namespace that
 * is a copy of ours or ours (a joined one may not hold the host's cgroup mounts), and without a
 * process.scheduler (the runtime sets it before GO, in the cgroup already). */
static bool init_joins_cgroup(const struct create_job *j) {
  const struct ns_plan *plan = &j->plan;
  if (j->out->cg == NULL || !cgroup_joinable_through_tasks(j->out->cg) || geteuid() != 0 ||
      j->new_userns || j->config->process->scheduler != NULL)
    return false;
  for (size_t i = 0; i < plan->n_joins; i++)
    if (plan->joins[i].flag == CLONE_NEWUSER || plan->joins[i].flag == CLONE_NEWNS)
      return false;
  return true;
}

/* Step 4: what the init is told (struct init_config), including its rootfs context. */
static void create_init_config(struct create_job *j) {
  const struct container_create_opts *o = j->o;
  const oci_config *config = j->config;
  const oci_linux *lx = config->linux_;
  struct created *out = j->out;
  struct init_config *ic = &j->ic;
  const struct ns_plan *plan = &j->plan;

  /* double clone: the init waits too, so that the intermediate's report comes first */
  j->wait_go = j->new_userns || plan->double_clone ||
               (out->cg != NULL && cgroup_clone_fd(out->cg) < 0) ||
               (config->process->scheduler != NULL) || (lx != NULL && lx->n_net_devices > 0) ||
               o->on_namespaces != NULL;
  memset(ic, 0, sizeof(*ic));
  ic->config = config;
  ic->sync_fd = j->sync_fds[1];
  ic->parent_sync_fd = j->sync_fds[0];
  ic->procfs_fd = j->procfs_fd;
  ic->exec_fifo_fd = j->fifo_fd;
  ic->state_dir_fd = out->dirfd;
  ic->ns = plan;
  ic->wait_go = j->wait_go;
  /* only the cgroup move to wait for: the init mounts meanwhile (see rootfs_ctx.join_cgroup) */
  /* (a joined user namespace's namespaces are unshared before any mount, not at the cgroup's) */
  ic->go_late = j->wait_go && !j->new_userns && !plan->double_clone &&
                (plan->unshare_flags & ~CLONE_NEWCGROUP) == 0 &&
                !(lx != NULL && lx->n_net_devices > 0) && !has_idmapped_mounts(config) &&
                o->on_namespaces == NULL;
  ic->stay_dumpable = j->new_userns && geteuid() != 0;
  ic->in_userns = j->new_userns || (plan->n_joins > 0 && plan->joins[0].flag == CLONE_NEWUSER);
  ic->hooks_after_mounts = has_hooks(config, true) || o->on_mounts_done != NULL;
  ic->network_after_mounts = o->on_mounts_done != NULL;
  ic->reaper = j->want_reaper;
  ic->dies_with_runtime = o->one_shot;
  ic->tiny_init_fd = j->want_reaper ? tiny_init_image_fd() : -1;
  ic->seccomp = j->seccomp;
  ic->attrs = j->attrs;
  ic->landlock = j->landlock;
  if (out->cg != NULL && cgroup_clone_fd(out->cg) < 0 && init_joins_cgroup(j)) {
    ic->join_cgroup = out->cg;
    j->cg_joined |= CGROUP_JOINED_V1;
  }
  /* the init's cgroup mount takes the hierarchies found for the cgroup rather than reading them
   * again (v1 and hybrid hosts) */
  if (out->cg != NULL && (j->n_hierarchies = cgroup_host_hierarchy_count(out->cg)) > 0) {
    j->hierarchies = xmalloc0(sizeof(*j->hierarchies) * j->n_hierarchies);
    for (size_t i = 0; i < j->n_hierarchies; i++)
      cgroup_host_hierarchy(out->cg, i, &j->hierarchies[i].controllers,
                            &j->hierarchies[i].mountpoint);
  }
  ic->rootfs = (struct rootfs_ctx){
      .config = config,
      .bundle = j->bundle,
      .rootfs = j->rootfs,
      .userns = ic->in_userns,
      .new_netns = (plan->all_new & CLONE_NEWNET) != 0,
      .own_netns = plan->own_netns,
      .new_cgroupns = (plan->all_new & CLONE_NEWCGROUP) != 0,
      .console_slave_fd = -1,
      .no_pivot = o->no_pivot,
      .shared_mntns = shares_caller_mntns(config),
      .defer_proc = plan->pid_join_late,
      .proc_mounter_fd = -1,
      .proc_by_runtime = plan->pid_join_early || plan->pid_join_prepared,
      .procfs_fd = j->procfs_fd,
      .sync_fd = j->sync_fds[1],
      .cgroup_hierarchies = j->hierarchies,
      .n_cgroup_hierarchies = j->n_hierarchies,
  };
  ic->preserve_fds = o->preserve_fds;
  ic->listen_fds = listen_fds_from_env();
  ic->no_new_keyring = o->no_new_keyring;
  ic->sigmask = j->sigmask;
  if (o->exec_not_before != NULL)
    ic->exec_not_before = *o->exec_not_before;
}

/* The init is born with every signal blocked: a signal to a pid namespace's init that has no
 * handler is dropped when sent unless it is blocked, and fsrun's init (run.fsrun.init) keeps them
 * held until the tiny init takes them (it forwards them to the process), so none sent after `run
 * -d` or `create` returned is lost. Any other init sets the caller's mask first thing. */
static long clone_init_holding_signals(struct fsrun_clone_args *args) {
  sigset_t all, old;
  long child;
  int saved;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  child = fsrun_clone(args);
  if (child == 0)
    return 0;
  saved = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return child;
}

/* Step 5: clone the init (into its cgroup and new namespaces; a pid namespace joined by path is
 * entered for the clone, see namespaces_parent_prepare); after a double clone, the init is the
 * intermediate child's sibling. */
static int create_clone(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  const struct ns_plan *plan = &j->plan;
  struct fsrun_clone_args args;
  int saved_ns[2] = {-1, -1};
  long child;

  if (namespaces_parent_prepare(plan, j->config->linux_, j->procfs_fd, saved_ns, err) < 0) {
    namespaces_parent_restore(saved_ns, NULL);
    return fsrun_error_code(err);
  }
  memset(&args, 0, sizeof(args));
  args.flags = CLONE_PIDFD | (uint64_t)(unsigned)plan->clone_flags;
  args.pidfd = (uint64_t)(uintptr_t)&out->pidfd;
  args.exit_signal = SIGCHLD;
  if (out->cg != NULL && cgroup_clone_fd(out->cg) >= 0) {
    args.flags |= FSRUN_CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)cgroup_clone_fd(out->cg);
  } else if (out->cg != NULL && cgroup_hybrid_clone_fd(out->cg) >= 0) {
    /* born in the hybrid host's cgroup2 directory; the v1 hierarchies come after the clone */
    args.flags |= FSRUN_CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)cgroup_hybrid_clone_fd(out->cg);
    j->cg_joined |= CGROUP_JOINED_V2;
  }
  child = clone_init_holding_signals(&args);
  if (child == 0)
    init_main(&j->ic); /* never returns */
  if (child < 0) {
    int saved = errno;
    namespaces_parent_restore(saved_ns, NULL);
    return fsrun_error_make(err, saved, "clone the container init (namespaces 0x%x)",
                            plan->clone_flags);
  }
  out->pid = (pid_t)child;
  out->st.pid = out->pid;
  if (namespaces_parent_restore(saved_ns, err) < 0)
    return fsrun_error_code(err);
  close(j->sync_fds[1]);
  j->sync_fds[1] = -1;
  if (plan->double_clone && take_init_from_intermediate(j->sync_fds[0], out, err) < 0)
    return fsrun_error_code(err);
  if (plan->pid_join_early && wait_init_namespaces(j->sync_fds[0], out->pid, err) < 0)
    return fsrun_error_code(err);
  out->st.pid = out->pid;
  if (j->o->on_cloned != NULL &&
      j->o->on_cloned(out->pid, out->pidfd, j->o->on_cloned_data, err) < 0)
    return fsrun_error_code(err);
  return 0;
}

/* The caller's on_namespaces. Without a user namespace of the init's own it comes first, before
 * the cgroup's limits and moves: what it starts (fsrun sandbox's network helper, 3-5 ms to ready)
 * then runs while they are written; with one, after its id maps, which it needs. */
static int call_on_namespaces(const struct create_job *j, bool after_id_maps, fsrun_error_t *err) {
  if (j->o->on_namespaces == NULL || j->new_userns != after_id_maps)
    return 0;
  return j->o->on_namespaces(j->out->pid, j->o->on_namespaces_data, err);
}

/* Step 6: the parent's share of the setup while the init waits for GO: cgroup move, Intel RDT, id
 * maps, oom_score_adj, scheduler, network devices, the caller's callback; then GO. */
static int create_parent_setup(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  const oci_linux *lx = j->config->linux_;
  const oci_process *proc = j->config->process;

  if (call_on_namespaces(j, false, err) < 0)
    return fsrun_error_code(err);
  /* what the init does not do itself (its v1 hierarchies after GO, init_joins_cgroup) */
  if (out->cg != NULL && cgroup_clone_fd(out->cg) < 0 &&
      (cgroup_finish(out->cg, err) < 0 ||
       cgroup_enter_rest(out->cg, out->pid, j->cg_joined, err) < 0))
    return fsrun_error_code(err);
  if (lx != NULL && lx->intel_rdt != NULL) {
    out->st.intel_rdt = true;
    out->st.intel_rdt_clos_id = xstrdup(lx->intel_rdt->clos_id);
    out->st.intel_rdt_monitoring =
        lx->intel_rdt->has_enable_monitoring && lx->intel_rdt->enable_monitoring;
    if (intelrdt_apply(lx->intel_rdt, j->o->id, out->pid, err) < 0)
      return fsrun_error_code(err);
  }
  if (j->new_userns &&
      namespaces_write_id_maps(j->procfs_fd, out->pid, lx, geteuid() != 0, err) < 0)
    return fsrun_error_code(err);
  if (proc->has_oom_score_adj &&
      procfs_set_oom_score_adj(j->procfs_fd, out->pid, proc->oom_score_adj, err) < 0)
    return fsrun_error_code(err);
  /* in its cgroup already (a real-time policy needs the cgroup's rt budget); the init waits */
  if (process_attrs_apply_scheduler(j->attrs, out->pid, err) < 0)
    return fsrun_error_code(err);
  /* linux.netDevices: into the init's network namespace before it (or a hook) looks at it */
  if (lx != NULL && lx->n_net_devices > 0) {
    cleanup_close int netns_fd = netlink_open_netns_of(out->pid, out->pidfd, err);
    if (netns_fd < 0 || netlink_move_net_devices(lx, netns_fd, err) < 0)
      return fsrun_error_code(err);
  }
  if (call_on_namespaces(j, true, err) < 0)
    return fsrun_error_code(err);
  if (j->wait_go && sync_send(j->sync_fds[0], SYNC_GO, 0, NULL, 0, -1) < 0)
    return fsrun_error_make(err, 0, "the container init exited during setup");
  if (j->o->console_socket != NULL) {
    j->console_fd = terminal_connect_console_socket(j->o->console_socket, err);
    if (j->console_fd < 0)
      return fsrun_error_code(err);
  }
  return 0;
}

static int send_go(struct create_job *j, const char *payload, size_t len, int fd,
                   fsrun_error_t *err) {
  if (sync_send(j->sync_fds[0], SYNC_GO, 0, payload, len, fd) < 0)
    return fsrun_error_make(err, 0, "the container init exited during setup");
  return 0;
}

/* SYNC_MOUNTS_DONE: the prestart and createRuntime hooks, then GO with the states for
 * createContainer and startContainer (NUL-separated). */
static int serve_hooks_after_mounts(struct create_job *j, fsrun_error_t *err) {
  const oci_hooks *hooks = j->config->hooks;
  struct container_status *st = &j->out->st;
  cleanup_free char *creating = hook_state(st, "creating", j->out->pid);
  cleanup_free char *payload = NULL;
  size_t len = 0;

  if (hooks_run(&hooks->prestart, "prestart", creating, err) < 0 ||
      hooks_run(&hooks->create_runtime, "createRuntime", creating, err) < 0)
    return fsrun_error_code(err);
  if (hooks_any(&hooks->create_container) || hooks_any(&hooks->start_container)) {
    cleanup_free char *created = hook_state(st, "created", j->out->pid);
    size_t a = strlen(creating), b = strlen(created);
    payload = xmalloc0(a + b + 2);
    memcpy(payload, creating, a);
    memcpy(payload + a + 1, created, b);
    len = a + b + 1;
  }
  return send_go(j, payload, len, -1, err);
}

/* SYNC_MOUNTS_DONE: the caller's on_mounts_done first (it waits for what it started while the init
 * mounted), then the hooks */
static int serve_mounts_done(struct create_job *j, fsrun_error_t *err) {
  if (j->o->on_mounts_done != NULL && j->o->on_mounts_done(j->o->on_namespaces_data, err) < 0)
    return fsrun_error_code(err);
  if (!has_hooks(j->config, true))
    return send_go(j, NULL, 0, -1, err);
  return serve_hooks_after_mounts(j, err);
}

/* SYNC_PTY: the pty master, to the console socket or kept for `run` to relay */
static int serve_pty(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  if (j->console_fd >= 0)
    return terminal_send_fd(j->console_fd, msg->fd, "/dev/ptmx", err);
  j->out->pty_master = steal_fd(&msg->fd);
  return 0;
}

static int serve_bind_source(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  if (bind_source_serve(j->config, j->bundle, msg, j->out->pid, j->procfs_fd, &fd, err) < 0)
    return fsrun_error_code(err);
  return send_go(j, NULL, 0, fd, err);
}

static int serve_idmap(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  if (idmap_serve(j->config, msg, j->out->pid, j->procfs_fd, err) < 0)
    return fsrun_error_code(err);
  return send_go(j, NULL, 0, -1, err);
}

static int forward_listener(struct create_job *j, int fd, fsrun_error_t *err) {
  const oci_seccomp *sc = j->config->linux_->seccomp;
  cleanup_free char *state = hook_state(&j->out->st, "creating", j->out->pid);
  return seccomp_send_listener(sc->listener_path, sc->listener_metadata, fd, j->out->pid, state,
                               err);
}

/* SYNC_SECCOMP_FD: the init's listener fd (sent by its courier, seccomp-handover.h), forwarded
 * to listenerPath; the init does not wait for us. With pid_join_prepared, the first init loaded
 * the filter: held until the late init, whose pid the state names, takes over. */
static int serve_seccomp_fd(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  if (msg->fd < 0)
    return fsrun_error_make(err, 0, "linux.seccomp.listenerPath: the init sent no listener fd");
  if (j->got_listener)
    return fsrun_error_make(err, EPROTO, "linux.seccomp.listenerPath: a second listener fd");
  j->got_listener = true;
  if (!j->plan.pid_join_prepared || j->late_init_taken)
    return forward_listener(j, msg->fd, err);
  j->held_listener = steal_fd(&msg->fd);
  return 0;
}

/* a held listener, now (its filter's process waits for it in a notified system call, or the late
 * init has taken over) */
static int forward_held_listener(struct create_job *j, fsrun_error_t *err) {
  cleanup_close int fd = steal_fd(&j->held_listener);
  return forward_listener(j, fd, err);
}

/* SYNC_INIT_PID (ns_plan.pid_join_late): the init cloned after pivot_root into the joined pid
 * namespace takes over */
static int serve_late_init(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  pid_t init = msg->data != NULL ? (pid_t)strtol(msg->data, NULL, 10) : 0;
  if (!j->plan.pid_join_late || j->late_init_taken)
    return fsrun_error_make(err, EPROTO, "the container init reported a second init");
  j->late_init_taken = true;
  if (switch_to_init(init, j->out, err) < 0)
    return fsrun_error_code(err);
  j->out->st.pid = j->out->pid;
  /* SCHED_FLAG_RESET_ON_FORK would have dropped it */
  if (process_attrs_apply_scheduler(j->attrs, j->out->pid, err) < 0)
    return fsrun_error_code(err);
  return j->held_listener >= 0 ? forward_held_listener(j, err) : 0;
}

/* SYNC_PROCFS (ns_plan.pid_join_early): a procfs of the joined pid namespace for the late init,
 * which its user namespace may not make; (ns_plan.pid_join_prepared) for the first init, which is
 * not in that pid namespace */
static int serve_procfs(struct create_job *j, struct sync_msg *msg, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  if (!j->plan.pid_join_early && !j->plan.pid_join_prepared)
    return fsrun_error_make(err, EPERM, "the container init asked for a procfs it may make");
  if (proc_runtime_serve(j->plan.pid_join_fd, &j->procfs_context, msg->data, &fd, err) < 0)
    return fsrun_error_code(err);
  return send_go(j, NULL, 0, fd, err);
}

static int init_exit_error(struct created *out, fsrun_error_t *err) {
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  (void)waitid((idtype_t)P_PIDFD, (id_t)out->pidfd, &info, WEXITED);
  if (info.si_code == CLD_EXITED)
    return fsrun_error_make(err, 0, "the container init exited during setup with status %d",
                            info.si_status);
  return fsrun_error_make(err, 0, "the container init was killed during setup by signal %d",
                          info.si_status);
}

/* ns_plan.pid_join_prepared: the first init has set everything up before it cloned the late init,
 * which the container can see (and seize): from the late init, only its report. A procfs of the
 * pid namespace without the masked paths, or a bind source, would be more than the container's. */
static bool late_init_may_send(const struct create_job *j, uint32_t type) {
  return !j->plan.pid_join_prepared || !j->late_init_taken || type == SYNC_CREATED ||
         type == SYNC_ERROR;
}

/* The sender of a message in create_serve_init: the init (foreign_sender), or for the one
 * SYNC_SECCOMP_FD of a NOTIFY profile the courier of the process that loaded it
 * (seccomp-handover.h), which sends from a pid of its own. That exception lets nothing of a
 * seized late init's through: a filter is loaded before the late init is cloned
 * (pid_join_prepared) and its courier has sent by then (the load waits for it), so a late init's
 * SYNC_SECCOMP_FD would come second, and a second is refused. */
static int check_sender(const struct create_job *j, const struct sync_msg *msg,
                        fsrun_error_t *err) {
  bool courier = msg->type == SYNC_SECCOMP_FD && !j->got_listener && j->seccomp != NULL &&
                 seccomp_has_notify(j->seccomp);
  if (msg->sender == j->out->pid || courier)
    return 0;
  return foreign_sender(msg, j->out->pid, err);
}

/* SYNC_LIMIT_GAP: a limit the init's set-up could not put in place, for the caller to list and
 * maybe refuse (fsrun sandbox), or said. The init waits for GO: a refusal leaves it waiting until
 * the failed create kills it, so its command never runs. */
static int serve_limit_gap(struct create_job *j, const struct sync_msg *msg, fsrun_error_t *err) {
  const char *limit = msg->data != NULL ? msg->data : "";
  size_t n = strlen(limit);
  const char *why = n < msg->len ? limit + n + 1 : "";
  if (j->o->on_limit_gap == NULL)
    log_warning("limits not enforced: %s (%s)", limit, why);
  else if (j->o->on_limit_gap(limit, why, j->o->on_limit_gap_data, err) < 0)
    return fsrun_error_code(err);
  return send_go(j, NULL, 0, -1, err);
}

/* SYNC_CREATED: the init's pid namespace, as it reported it (it may be gone by now under `run`);
 * after a NUL, the cutoff it lowered (container_create_opts.exec_not_before): one it cannot read
 * lowered to 0, which names everything (a false alarm, never a miss) */
static void take_created_report(struct create_job *j, const struct sync_msg *msg) {
  struct timespec *not_before = j->o->exec_not_before;
  size_t n = msg->data != NULL ? strlen(msg->data) : 0;
  if (msg->data != NULL)
    j->out->st.pid_pidns = strtoull(msg->data, NULL, 10);
  if (not_before == NULL || n >= msg->len)
    return;
  if (!file_time_parse(msg->data + n + 1, not_before))
    *not_before = (struct timespec){0};
  log_debug("the container init went on before the cutoff's time: the clock was set back");
}

/* Step 7: serves the init's requests until it reports SYNC_CREATED (or an error). */
static int create_serve_init(struct create_job *j, fsrun_error_t *err) {
  for (;;) {
    struct sync_msg msg;
    int r = j->held_listener >= 0 ? seccomp_handover_wait(j->sync_fds[0], j->held_listener) : 1;
    if (r == 0 && forward_held_listener(j, err) < 0)
      return fsrun_error_code(err);
    r = sync_recv(j->sync_fds[0], &msg);
    if (r < 0)
      return init_exit_error(j->out, err);
    if (check_sender(j, &msg, err) < 0) {
      sync_msg_clear(&msg);
      return fsrun_error_code(err);
    }
    if (!late_init_may_send(j, msg.type)) {
      sync_msg_clear(&msg);
      return fsrun_error_make(err, EPROTO, "the container init asked for setup after its clone");
    }
    switch (msg.type) {
    case SYNC_ERROR:
      fsrun_error_take(err, msg.errno_value, steal_ptr(&msg.data));
      r = fsrun_error_code(err);
      break;
    case SYNC_MOUNTS_DONE:
      r = serve_mounts_done(j, err);
      break;
    case SYNC_PTY:
      r = serve_pty(j, &msg, err);
      break;
    case SYNC_BIND_SOURCE:
      r = serve_bind_source(j, &msg, err);
      break;
    case SYNC_IDMAP:
      r = serve_idmap(j, &msg, err);
      break;
    case SYNC_SECCOMP_FD:
      r = serve_seccomp_fd(j, &msg, err);
      break;
    case SYNC_INIT_PID:
      r = serve_late_init(j, &msg, err);
      break;
    case SYNC_PROCFS:
      r = serve_procfs(j, &msg, err);
      break;
    case SYNC_LIMIT_GAP:
      r = serve_limit_gap(j, &msg, err);
      break;
    case SYNC_CREATED:
      take_created_report(j, &msg);
      sync_msg_clear(&msg);
      return 0;
    default:
      break;
    }
    sync_msg_clear(&msg);
    if (r < 0)
      return r;
  }
}

/* A one-shot create says `created` by the init's record alone, while state.json holds everything
 * else as `creating` wrote it (Intel RDT, applied since, is only in a second state.json) */
static bool created_once(const struct create_job *j) {
  return j->o->one_shot && !j->out->st.intel_rdt && !j->out->st.spare;
}

/* Step 8: state.json says `created` (or the init's record does); the pid file. */
static int create_mark_created(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  free(out->st.status);
  out->st.status = xstrdup("created");
  out->st.pid_start_time = procfs_pid_start_time(out->pid, NULL);
  if (created_once(j) ? status_write_created(out->dirfd, &out->st, err) < 0
                      : write_state(j, err) < 0)
    return fsrun_error_code(err);
  if (j->o->pid_file != NULL && write_pid_file(j->o->pid_file, out->pid, err) < 0)
    return fsrun_error_code(err);
  /* fsrun's init reports the process's wait status on the sync socket */
  if (j->want_reaper)
    out->status_fd = steal_fd(&j->sync_fds[0]);
  out->config = steal_ptr(&j->config);
  return 0;
}

/* The init of a failed create, our own unreaped child: SIGKILL (kill(2) by its pid where
 * pidfd_send_signal answers ENOSYS), and our end of the sync socket closed, so that an init
 * waiting for GO reads EOF and exits even if no signal could be sent. The wait is bounded: a
 * create never hangs on its undo. */
static void kill_failed_init(struct create_job *j) {
  struct created *out = j->out;
  if (pidfd_signal_child(out->pidfd, SIGKILL) < 0)
    log_debug("SIGKILL to the container init (pid %d): %s", (int)out->pid, strerror(errno));
  cleanup_closep(&j->sync_fds[0]);
  if (!wait_pidfd(out->pidfd, 10000))
    log_warning("the container init (pid %d) still runs 10 s after SIGKILL", (int)out->pid);
}

/* A failed step: the init killed, the cgroup, Intel RDT group and state dir removed. */
static int create_undo(struct create_job *j, fsrun_error_t *err) {
  struct created *out = j->out;
  int code;
  if (out->pidfd >= 0 && j->sync_fds[0] >= 0)
    prefer_init_error(j->sync_fds[0], out->pid, err);
  if (out->pidfd >= 0)
    kill_failed_init(j);
  if (out->cg != NULL) {
    cleanup_error fsrun_error_t cerr = NULL;
    if (cgroup_destroy(out->cg, &cerr) < 0)
      log_warning("%s", cerr->msg);
  }
  if (out->st.intel_rdt) {
    cleanup_error fsrun_error_t rerr = NULL;
    if (intelrdt_remove(j->config->linux_->intel_rdt, j->o->id, &rerr) < 0)
      log_warning("%s", rerr->msg);
  }
  if (j->dir_created) {
    cleanup_error fsrun_error_t derr = NULL;
    if (status_dir_remove(j->ctx, j->o->id, &derr) < 0)
      log_warning("%s", derr->msg);
  }
  code = fsrun_error_code(err);
  created_clear(out);
  return code;
}

/* The order the security invariants depend on (docs/process-model.md). Every check has passed;
 * on failure, create_undo removes what the steps made. */
static int create_steps(struct create_job *j, fsrun_error_t *err) {
  /* state dir, config, cgroup (deferred), state.json `creating` */
  if (create_state(j, err) < 0)
    return fsrun_error_code(err);
  /* exec fifo, procfs handle, namespace plan, sync socket; then what the init is told */
  if (create_prepare_clone(j, err) < 0)
    return fsrun_error_code(err);
  create_init_config(j);
  /* the init, in its cgroup and namespaces (it joins, mounts, pivots on its own) */
  if (create_clone(j, err) < 0)
    return fsrun_error_code(err);
  /* cgroup move, id maps, oom score, scheduler, net devices while the init waits; GO */
  if (create_parent_setup(j, err) < 0)
    return fsrun_error_code(err);
  /* hooks, pty, bind sources, idmaps, seccomp listener, late init: until it reports CREATED */
  if (create_serve_init(j, err) < 0)
    return fsrun_error_code(err);
  /* state.json `created`, pid file */
  return create_mark_created(j, err);
}

/* Creates the container up to the init blocked on its exec fifo. relay_pty: a foreground `run`
 * with a terminal and no console socket keeps the pty master in out->pty_master. start_at_once
 * (`run`): no exec fifo, the init goes on to execve as soon as it has reported success. */
static int create_internal(const struct fsrun_context *ctx, const struct container_create_opts *o,
                           bool relay_pty, bool start_at_once, const sigset_t *sigmask,
                           struct created *out, fsrun_error_t *err) {
  struct create_job j = {.ctx = ctx,
                         .o = o,
                         .relay_pty = relay_pty,
                         .start_at_once = start_at_once,
                         .sigmask = sigmask,
                         .out = out,
                         .config = o->config,
                         .plan = {.pid_join_fd = -1},
                         .fifo_fd = -1,
                         .procfs_fd = -1,
                         .console_fd = -1,
                         .sync_fds = {-1, -1},
                         .procfs_context = -1,
                         .held_listener = -1};
  int ret;

  memset(out, 0, sizeof(*out));
  out->pidfd = out->dirfd = out->pty_master = out->status_fd = -1;
  ret = create_check(&j, err);
  if (ret == 0 && create_steps(&j, err) < 0)
    ret = create_undo(&j, err);
  create_job_release(&j);
  return ret;
}

int container_create(const struct fsrun_context *ctx, const struct container_create_opts *o,
                     fsrun_error_t *err) {
  struct created c;
  sigset_t mask;
  int r;
  sigprocmask(SIG_SETMASK, NULL, &mask);
  r = create_internal(ctx, o, false, false, &mask, &c, err);
  if (r == 0)
    created_clear(&c);
  return r;
}

/* --- start -------------------------------------------------------------------------------------
 */

/* The init (or the process it forked) holds its end open until the process's execve (or its
 * death): returning before that EOF would let a `kill` right after `start` reach a pid-namespace
 * init without a handler, which drops it. An init that forks the process (`forks`) says that it
 * did before its end closes: without that, the process never started (status.h). */
static int wait_process_started(int fifo, bool forks, fsrun_error_t *err) {
  bool forked = false;
  char byte;
  ssize_t n;
  if (fcntl(fifo, F_SETFL, 0) < 0)
    return fsrun_error_errno(err, "wait for the container's process");
  for (;;) {
    n = read(fifo, &byte, 1);
    if (n == 1 && byte == EXEC_FIFO_FORKED)
      forked = true;
    if (n == 0 || (n < 0 && errno != EINTR))
      break;
  }
  if (forks && !forked)
    return fsrun_error_make(err, 0, "the container's process could not be started");
  return 0;
}

/* Lets the init of a created container exec its process. */
static int release_init(int dirfd, const struct container_status *st, int pidfd,
                        fsrun_error_t *err) {
  cleanup_close int fifo = openat(dirfd, STATUS_EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct pollfd p[2];
  char byte;
  ssize_t n;

  if (fifo < 0) {
    if (errno == ENOENT)
      return fsrun_error_make(err, 0, "cannot start a container that is not created: running");
    return fsrun_error_errno(err, "open the exec fifo");
  }
  /* the init may die instead of writing: watch it too, never hang */
  p[0] = (struct pollfd){.fd = fifo, .events = POLLIN};
  p[1] = (struct pollfd){.fd = pidfd, .events = POLLIN};
  for (;;) {
    int r = poll(p, 2, -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fsrun_error_errno(err, "wait for the container init");
    if (p[0].revents & POLLIN)
      break;
    if (p[1].revents & POLLIN)
      return fsrun_error_make(err, 0, "the container init exited before it was started");
    if (p[0].revents & (POLLHUP | POLLERR))
      return fsrun_error_make(err, 0, "the container was started by someone else");
  }
  do
    n = read(fifo, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    return fsrun_error_make(err, 0, "the container was started by someone else");
  unlinkat(dirfd, STATUS_EXEC_FIFO, 0);
  (void)st;
  return wait_process_started(fifo, byte == EXEC_FIFO_FORKS, err);
}

int container_start(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  cleanup_close int dirfd = status_dir_open(ctx, id, err);
  cleanup_status struct container_status st = {0};
  cleanup_close int pidfd = -1;
  const char *status;
  pid_t pid;

  if (dirfd < 0)
    return dirfd;
  if (status_read(dirfd, &st, err) < 0)
    return fsrun_error_code(err);
  status = status_derive(dirfd, &st, &pid);
  if (strcmp(status, "created") != 0)
    return fsrun_error_make(err, 0, "cannot start a container that is not created: %s", status);
  pidfd = open_init_pidfd(&st);
  if (pidfd < 0 && errno == ENOSYS)
    return no_pidfd_error("start", err);
  if (pidfd < 0)
    return fsrun_error_make(err, 0, "cannot start a container that is not created: stopped");
  if (release_init(dirfd, &st, pidfd, err) < 0)
    return fsrun_error_code(err);
  if (hooks_any(&st.poststart)) {
    cleanup_free char *state = hook_state(&st, "running", st.pid);
    hooks_run_warn(&st.poststart, "poststart", state);
  }
  return 0;
}

/* --- delete ------------------------------------------------------------------------------------
 */

/* What the caller of destroy() already holds (run: everything; delete: nothing). */
struct destroy_hints {
  int pidfd;                     /* the init's pidfd, or -1 to open one from the state */
  bool init_reaped;              /* the init is known to be gone */
  struct fsrun_cgroup *cg;       /* the open cgroup, or NULL to open it from the state */
  const oci_hook_list *poststop; /* NULL: the state's */
  int state_dir_fd;              /* delete: the state dir, for a task container's last walk; -1 */
  char ***final_tamper;          /* delete: where that walk's list goes (NULL: no walk) */
  char ***final_host_args;       /* and its hostGitArgs */
  int *dir_fd; /* the caller's fd of the state dir, closed (-1) before its removal */
};

/* The cgroup the state names, when the container's config and id lead to it; a forged one is
 * passed over for the cgroup they do lead to (NULL when there is none to be found). */
static void open_state_cgroup(const struct fsrun_context *ctx, const char *id,
                              const struct container_status *st, struct fsrun_cgroup **out) {
  cleanup_error fsrun_error_t cerr = NULL;
  cleanup_close int dirfd = status_dir_open(ctx, id, &cerr);
  if (dirfd < 0 || status_open_cgroup(dirfd, id, st, out, &cerr) == 0)
    return;
  if (fsrun_error_code(&cerr) == -EPERM) {
    log_warning("delete `%s`: %s: it is left alone", id, cerr->msg);
    fsrun_error_release(&cerr);
    if (status_open_cgroup(dirfd, id, NULL, out, &cerr) == 0)
      return;
  }
  log_debug("delete `%s`: %s", id, cerr->msg);
}

/* A SIGKILL to the init that went unsent: the call that failed and what it answered (call NULL:
 * sent, the init gone, or no init to kill). */
struct unsent_kill {
  const char *call;
  int code;
};

/* SIGKILL through the init's pidfd: sent, or the init is gone (ESRCH); anything else is unsent.
 * Where pidfd_send_signal answers ENOSYS, kill(2) only of our own unreaped child (`run`'s init),
 * whose pid nobody else can hold; a pid of someone else's child may be reused by then (invariant
 * 5). */
static struct unsent_kill send_init_kill(int pidfd) {
  const struct unsent_kill sent = {0}, unsent = {"pidfd_send_signal", ENOSYS};
  if (pidfd_signal(pidfd, SIGKILL) == 0 || errno == ESRCH)
    return sent;
  if (errno != ENOSYS)
    return (struct unsent_kill){"pidfd_send_signal", errno};
  return pidfd_signal_child(pidfd, SIGKILL) == 0 ? sent : unsent;
}

/* SIGKILL to the init (pidfd -1: gone already, or no pidfd), waited for (up to 10 s); cg is
 * thawed first. When the signal could not be sent, the call that failed: the init then dies only
 * as a member of its cgroup (check_init_gone). */
static struct unsent_kill kill_init(int pidfd, const struct fsrun_cgroup *cg) {
  cleanup_error fsrun_error_t ferr = NULL;
  struct unsent_kill unsent = {0};
  if (pidfd < 0)
    return unsent;
  unsent = send_init_kill(pidfd);
  if (unsent.call != NULL)
    return unsent;
  if (cg != NULL)
    (void)cgroup_thaw_all(cg, &ferr); /* frozen processes only die once thawed */
  wait_pidfd(pidfd, 10000);
  return unsent;
}

/* Without a pidfd that signals a live init (unsent: pidfd_open or pidfd_send_signal answers
 * ENOSYS, or the signal failed otherwise, e.g. EPERM) the init dies only as a member of its
 * cgroup, which cgroup_destroy() killed (it is given 10 s to exit, watched by its identity: a pid
 * taken by another process reads as gone): one that had left the cgroup lives on, and nothing is
 * removed. */
static int check_init_gone(struct unsent_kill unsent, const struct container_status *st,
                           const struct fsrun_cgroup *cg, const char *id, fsrun_error_t *err) {
  const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};
  const char *where = cg != NULL ? "its cgroup" : "a cgroup (the container has none)";
  for (int i = 0; unsent.call && i < 1000 && status_init_alive(st); i++)
    nanosleep(&tick, NULL);
  if (unsent.call == NULL || !status_init_alive(st))
    return 0;
  /* the messages name the error mid-sentence: taken as they are, not followed by it again */
  if (unsent.code != ENOSYS)
    return fsrun_error_take(err, unsent.code,
                            xasprintf("delete `%s`: its init (pid %d) is not in %s, and its "
                                      "SIGKILL through %s failed: %s; the state is kept",
                                      id, (int)st->pid, where, unsent.call, strerror(unsent.code)));
  return fsrun_error_take(err, ENOSYS,
                          xasprintf("delete `%s`: its init (pid %d) is not in %s, and %s answers "
                                    "ENOSYS here: fsrun kills an init only through a pidfd; the "
                                    "state is kept",
                                    id, (int)st->pid, where, unsent.call));
}

/* For open_init_pidfd's -1 (errno as it left it): pidfd_open when that call answers ENOSYS */
static struct unsent_kill no_pidfd_open(int pidfd) {
  if (pidfd < 0 && errno == ENOSYS)
    return (struct unsent_kill){"pidfd_open", ENOSYS};
  return (struct unsent_kill){0};
}

/* delete --force without the init's record (and without a readable state file): nobody can tell
 * whether an init lives on, so nothing is signalled. The container's cgroup (from the id and the
 * config kept at create) says the rest: empty, it and the state directory are removed; with a
 * process in it, or none to be found, everything is kept. */
static int destroy_without_init(const struct fsrun_context *ctx, int dirfd, const char *id,
                                fsrun_error_t *why, fsrun_error_t *record_err, fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_error fsrun_error_t cerr = NULL;
  if (status_open_cgroup(dirfd, id, NULL, &cg, &cerr) < 0 || cg == NULL ||
      !cgroup_remove_if_empty(cg))
    return fsrun_error_take(err, EIO,
                            xasprintf("delete `%s`: %s, and %s: its init cannot be told, nothing "
                                      "was stopped: the state directory %s/%s is kept",
                                      id, (*why)->msg, (*record_err)->msg, ctx->state_root, id));
  log_warning("delete `%s`: %s, and %s: nothing was signalled; its empty cgroup and the state "
              "directory are removed",
              id, (*why)->msg, (*record_err)->msg);
  return status_dir_remove(ctx, id, err);
}

/* delete --force of a container without a readable state file; no pid the file holds is used.
 * What of it may still run: its init, named by the record kept beside the state file (a symlink:
 * a crash that empties state.json keeps it; the init may have left its cgroup), and its cgroup,
 * found from the id and the config kept at create. A config that cannot be read (emptied by the
 * same crash) leaves the cgroup alone, said in the warning: its path would be a guess. */
static int destroy_without_state(const struct fsrun_context *ctx, int dirfd, const char *id,
                                 fsrun_error_t *why, fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_error fsrun_error_t cerr = NULL;
  cleanup_close int pidfd = -1;
  struct container_status init = {0};
  bool never_written = fsrun_error_code(why) == -ENOENT;
  struct unsent_kill unsent;

  if (!never_written && status_read_init_record(dirfd, &init, &cerr) < 0)
    return destroy_without_init(ctx, dirfd, id, why, &cerr, err);
  if (status_open_cgroup(dirfd, id, NULL, &cg, &cerr) < 0 && !never_written)
    log_warning("delete `%s`: %s, and %s: its cgroup, if it has one, is left alone", id,
                (*why)->msg, cerr->msg);
  else if (!never_written)
    log_warning("delete `%s`: %s: its init's record and its config were used instead", id,
                (*why)->msg);
  pidfd = open_init_pidfd(&init);
  unsent = pidfd < 0 ? no_pidfd_open(pidfd) : kill_init(pidfd, cg);
  if (cg != NULL && cgroup_destroy(cg, err) < 0)
    return fsrun_error_wrap(err, "delete `%s`", id);
  if (check_init_gone(unsent, &init, cg, id, err) < 0)
    return fsrun_error_code(err);
  return status_dir_remove(ctx, id, err);
}

/* Kills whatever is left of the container, removes its cgroup, runs poststop hooks and removes the
 * state directory. Works on any partial state (have_state false: nothing recorded to kill). */
static int destroy(const struct fsrun_context *ctx, const char *id,
                   const struct container_status *st, bool have_state,
                   const struct destroy_hints *hints, fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *own_cg = NULL;
  struct fsrun_cgroup *cg = hints ? hints->cg : NULL;
  const oci_hook_list *poststop = hints && hints->poststop ? hints->poststop : &st->poststop;
  cleanup_close int pidfd = -1;
  struct unsent_kill unsent;

  if (have_state) {
    if (cg == NULL && st->cgroup != NULL) {
      open_state_cgroup(ctx, id, st, &own_cg);
      cg = own_cg;
    }
    errno = 0; /* ENOSYS below is open_init_pidfd's */
    if (!(hints && hints->init_reaped))
      pidfd = hints && hints->pidfd >= 0 ? dup(hints->pidfd) : open_init_pidfd(st);
    unsent = pidfd < 0 ? no_pidfd_open(pidfd) : kill_init(pidfd, cg);
    if (cg != NULL && cgroup_destroy(cg, err) < 0)
      return fsrun_error_wrap(err, "delete `%s`", id);
    if (check_init_gone(unsent, st, cg, id, err) < 0)
      return fsrun_error_code(err);
    if (st->intel_rdt) {
      cleanup_error fsrun_error_t rerr = NULL;
      oci_intel_rdt rdt = {.clos_id = st->intel_rdt_clos_id,
                           .has_enable_monitoring = true,
                           .enable_monitoring = st->intel_rdt_monitoring};
      if (intelrdt_remove(&rdt, id, &rerr) < 0)
        log_warning("%s", rerr->msg);
    }
    if (hooks_any(poststop)) {
      cleanup_free char *state = hook_state(st, "stopped", 0);
      hooks_run_warn(poststop, "poststop", state);
    }
    /* every process is gone: nothing plants after this walk (exec-git-final.c) */
    if (hints != NULL && hints->final_tamper != NULL)
      *hints->final_tamper = exec_git_final_walk(hints->state_dir_fd, st, hints->final_host_args);
  }
  /* a task container's execs killed before their git sync (a live one removes its own); only a
   * task container has them: the listing of the state root is not every delete's */
  if (!have_state || oci_map_get(&st->annotations, EXEC_GIT_ANNOTATION) != NULL)
    exec_git_remove_leftovers(ctx->state_root, id, false);
  /* the run's own, the init reaped: its state dir (open, locked) may be kept (status-kept.h);
   * only here, so that no dir whose init may live ever reaches a slot */
  if (have_state && st->spare && hints != NULL && hints->init_reaped && hints->dir_fd != NULL &&
      *hints->dir_fd >= 0)
    return status_kept_release(ctx, id, hints->dir_fd, err);
  /* so that the removal's own fd is the directory's last (close_removed_dir_later) */
  if (hints != NULL && hints->dir_fd != NULL && *hints->dir_fd >= 0) {
    close(*hints->dir_fd);
    *hints->dir_fd = -1;
  }
  return status_dir_remove(ctx, id, err);
}

int container_delete(const struct fsrun_context *ctx, const char *id, bool force,
                     fsrun_error_t *err) {
  char **tamper = NULL;
  int r = container_delete_walked(ctx, id, force, &tamper, NULL, err);
  sandbox_git_strv_free(tamper);
  return r;
}

int container_delete_walked(const struct fsrun_context *ctx, const char *id, bool force,
                            char ***tamper, char ***host_args, fsrun_error_t *err) {
  cleanup_close int dirfd = -1;
  struct destroy_hints hints = {.pidfd = -1, .final_tamper = tamper, .final_host_args = host_args};
  cleanup_status struct container_status st = {0};
  const char *status;
  pid_t pid;
  int r;

  dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0) {
    if (force && fsrun_error_code(err) == -ENOENT) {
      fsrun_error_release(err);
      return 0;
    }
    return dirfd;
  }
  r = status_read(dirfd, &st, err);
  if (r == 0 && strcmp(st.id, id) != 0) {
    r = fsrun_error_make(err, EINVAL, "the state file is corrupt: it names container `%s`", st.id);
    status_clear(&st);
  }
  if (r < 0) {
    /* killed before its first state write, or a corrupt file (or a symlink) */
    if (r == -ENOENT || force) {
      cleanup_error fsrun_error_t why = steal_ptr(err);
      return destroy_without_state(ctx, dirfd, id, &why, err);
    }
    return fsrun_error_wrap(err, "delete `%s`", id);
  }
  status = status_derive(dirfd, &st, &pid);
  /* a created container is deleted without --force, as runc does: conmon and the shim rely on it */
  if (!force && strcmp(status, "stopped") != 0 && strcmp(status, "created") != 0)
    return fsrun_error_make(err, 0, "cannot delete container `%s` that is not stopped: %s", id,
                            status);
  hints.state_dir_fd = dirfd;
  hints.dir_fd = &dirfd;
  return destroy(ctx, id, &st, true, &hints, err);
}

/* --- run ---------------------------------------------------------------------------------------
 */

/* At most this many reports are read: the command may add its own after the marker. */
#define MAX_INIT_REPORTS 16

/* One report fsrun's init (or, after the marker, anyone holding the socket) left: 0, or < 0 when
 * none is left. The init is reaped, so all of its own are queued. */
static int next_init_report(int status_fd, struct sync_msg *msg) {
  struct pollfd p = {.fd = status_fd, .events = POLLIN};
  if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
    return -EAGAIN;
  return sync_recv(status_fd, msg);
}

static void take_wait_status(const struct sync_msg *msg, int *exit_status, int *term_signal) {
  int wstatus;
  memcpy(&wstatus, msg->data, sizeof(wstatus));
  *exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  if (term_signal != NULL)
    *term_signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
}

/* What fsrun's init reported on the sync socket, read in order once it is reaped. Before its
 * SYNC_COMMAND_NEXT the command cannot exist, so a SYNC_ERROR there is the init's own: a set-up
 * step after `start` failed (the seccomp filter, Landlock), the process never ran, that is the
 * run's error and *exit_status is -1. After the marker the command may hold the socket too (pid 1
 * is dumpable), so only a wait status is taken (the init's own cannot tell `exit 137` from
 * SIGKILL; the command could only claim a status it could have exited with) and anything else is
 * ignored. No report (the init was killed): unchanged. */
static int take_reported_status(int status_fd, int *exit_status, int *term_signal,
                                fsrun_error_t *err) {
  struct sync_msg msg = {.fd = -1};
  bool command_may_exist = false;
  int r = 0;
  for (int n = 0; r == 0 && n < MAX_INIT_REPORTS && next_init_report(status_fd, &msg) == 0; n++) {
    if (!command_may_exist && msg.type == SYNC_COMMAND_NEXT) {
      command_may_exist = true;
    } else if (!command_may_exist && msg.type == SYNC_ERROR) {
      *exit_status = -1;
      r = fsrun_error_make(err, 0, "the container's init: %s",
                           msg.data ? msg.data : "set-up failed");
      /* its errno (the message names it already): the fallback probe's class (sandbox-probe.h) */
      (*err)->status = msg.errno_value > 0 ? msg.errno_value : 0;
    } else if (command_may_exist && msg.type == SYNC_EXIT_STATUS && msg.len == sizeof(int)) {
      take_wait_status(&msg, exit_status, term_signal);
      r = 1;
    }
    sync_msg_clear(&msg);
  }
  return r < 0 ? r : 0;
}

/* The run failed with why (the process never ran); a clean-up error in err (cleanup_r < 0) is
 * only warned of. */
static int fail_after_cleanup(int cleanup_r, fsrun_error_t *err, fsrun_error_t *why) {
  if (cleanup_r < 0) {
    log_warning("%s", (*err)->msg);
    fsrun_error_release(err);
  }
  *err = steal_ptr(why);
  return fsrun_error_code(err);
}

int container_run(const struct fsrun_context *ctx, const struct container_run_opts *o,
                  int *exit_status, fsrun_error_t *err) {
  struct created c;
  sigset_t blocked, old;
  bool foreground = !o->detach;
  cleanup_error fsrun_error_t init_err = NULL;
  int r, init_failed = 0;

  foreground_signals(&blocked);
  sigprocmask(foreground ? SIG_BLOCK : SIG_SETMASK, foreground ? &blocked : NULL, &old);
  /* detached: created with the exec fifo and started as `start` does, so that `run -d` returns
   * once the process has exec'd (as runc's does): it exists, and a signal sent then reaches it */
  r = create_internal(ctx, &o->create, foreground && o->create.console_socket == NULL, foreground,
                      &old, &c, err);
  if (r < 0)
    goto out;
  {
    const oci_hook_list *poststop = c.config->hooks ? &c.config->hooks->poststop : NULL;
    struct destroy_hints hints = {
        .pidfd = c.pidfd, .cg = c.cg, .poststop = poststop, .dir_fd = &c.dirfd};
    if (!foreground && release_init(c.dirfd, &c.st, c.pidfd, &init_err) < 0) {
      r = fail_after_cleanup(destroy(ctx, o->create.id, &c.st, true, &hints, err), err, &init_err);
      goto cleared;
    }
    if (c.config->hooks != NULL && hooks_any(&c.config->hooks->poststart)) {
      cleanup_free char *state = hook_state(&c.st, "running", c.pid);
      hooks_run_warn(&c.config->hooks->poststart, "poststart", state);
    }
    if (foreground && o->on_started != NULL)
      o->on_started(c.cg, o->on_started_arg);
    if (foreground) {
      siginfo_t info;
      *exit_status = foreground_wait_info(c.pidfd, c.pty_master, &blocked, &info);
      /* killed or exited: signal 0 when it exited */
      if (o->term_signal != NULL)
        *o->term_signal = info.si_code == CLD_EXITED || info.si_code == 0 ? 0 : info.si_status;
      if (c.status_fd >= 0)
        init_failed = take_reported_status(c.status_fd, exit_status, o->term_signal, &init_err);
      /* the init is reaped; what it left in the cgroup goes with the cgroup */
      hints.init_reaped = true;
      if (o->on_exit != NULL)
        o->on_exit(c.cg, o->on_exit_data);
      if (!o->keep)
        r = destroy(ctx, o->create.id, &c.st, true, &hints, err);
      if (init_failed < 0)
        r = fail_after_cleanup(r, err, &init_err);
    }
  }
cleared:
  created_clear(&c);
out:
  sigprocmask(SIG_SETMASK, &old, NULL);
  return r;
}

/* --- state, kill -------------------------------------------------------------------------------
 */

int container_state(const struct fsrun_context *ctx, const char *id, FILE *out,
                    fsrun_error_t *err) {
  cleanup_close int dirfd = status_dir_open(ctx, id, err);
  cleanup_status struct container_status st = {0};
  cleanup_free char *owner = NULL;
  cleanup_free char *json = NULL;
  const char *status;
  pid_t pid;
  int r;

  if (dirfd < 0)
    return dirfd;
  r = status_read(dirfd, &st, err);
  if (r == -ENOENT) {
    /* the directory of a create that died before its first state write */
    fsrun_error_release(err);
    st.id = xstrdup(id);
    st.status = xstrdup("stopped");
  } else if (r < 0) {
    return fsrun_error_wrap(err, "state `%s`", id);
  }
  status = status_derive(dirfd, &st, &pid);
  owner = status_owner(dirfd);
  json = status_state_json(&st, status, pid, owner, true, err);
  if (json == NULL)
    return fsrun_error_code(err);
  fprintf(out, "%s\n", json);
  return 0;
}

static const struct {
  const char *name;
  int number;
} signal_names[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT},   {"IOT", SIGIOT},   {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL},   {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},   {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD},   {"CLD", SIGCHLD},  {"CONT", SIGCONT},
    {"STOP", SIGSTOP},     {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},
    {"URG", SIGURG},       {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM},
    {"PROF", SIGPROF},     {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"POLL", SIGPOLL},
    {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

int signal_parse(const char *name, int *sig, fsrun_error_t *err) {
  const char *s = name;
  char *end;
  long n;

  if (s == NULL || s[0] == '\0') {
    *sig = SIGTERM;
    return 0;
  }
  n = strtol(s, &end, 10);
  if (*end == '\0' && end != s) {
    if (n <= 0 || n > SIGRTMAX)
      return fsrun_error_make(err, EINVAL, "invalid signal `%s`", name);
    *sig = (int)n;
    return 0;
  }
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof(signal_names) / sizeof(signal_names[0]); i++) {
    if (strcasecmp(s, signal_names[i].name) == 0) {
      *sig = signal_names[i].number;
      return 0;
    }
  }
  if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
    bool min = strncasecmp(s, "RTMIN", 5) == 0;
    long off = 0;
    if (s[5] != '\0') {
      off = strtol(s + 5, &end, 10);
      if (*end != '\0' || (min && off < 0) || (!min && off > 0))
        return fsrun_error_make(err, EINVAL, "invalid signal `%s`", name);
    }
    n = (min ? SIGRTMIN : SIGRTMAX) + off;
    if (n < SIGRTMIN || n > SIGRTMAX)
      return fsrun_error_make(err, EINVAL, "invalid signal `%s`", name);
    *sig = (int)n;
    return 0;
  }
  return fsrun_error_make(err, EINVAL, "invalid signal `%s`", name);
}

int container_kill(const struct fsrun_context *ctx, const char *id, const char *signal, bool all,
                   fsrun_error_t *err) {
  cleanup_close int dirfd = -1;
  cleanup_status struct container_status st = {0};
  cleanup_close int pidfd = -1;
  const char *status;
  pid_t pid;
  int sig;

  if (signal_parse(signal, &sig, err) < 0)
    return fsrun_error_code(err);
  dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0)
    return dirfd;
  if (status_read(dirfd, &st, err) < 0) {
    if (fsrun_error_code(err) == -ENOENT && all) {
      fsrun_error_release(err);
      return 0;
    }
    if (fsrun_error_code(err) == -ENOENT)
      return fsrun_error_take(err, ESRCH, xstrdup("container not running"));
    /* no pid of a corrupt file is signalled, not even through --all's cgroup */
    return fsrun_error_wrap(err, "kill `%s`", id);
  }
  status = status_derive(dirfd, &st, &pid);
  if (all) {
    cleanup_cgroup struct fsrun_cgroup *cg = NULL;
    if (status_open_cgroup(dirfd, id, &st, &cg, err) < 0)
      return fsrun_error_wrap(err, "kill --all `%s`", id);
    if (cg != NULL)
      return cgroup_kill_all(cg, sig, err);
  }
  if (strcmp(status, "stopped") == 0 || strcmp(status, "creating") == 0) {
    if (all)
      return 0;
    return fsrun_error_take(err, ESRCH, xstrdup("container not running"));
  }
  /* invariant 5: through a pidfd pinned to the init, never kill(2) on a pid that may be reused */
  pidfd = open_init_pidfd(&st);
  if (pidfd < 0 && errno == ENOSYS)
    return no_pidfd_error("kill the container init", err);
  if (pidfd < 0 || pidfd_signal(pidfd, sig) < 0) {
    if (all)
      return 0;
    if (pidfd < 0 || errno == ESRCH)
      return fsrun_error_take(err, ESRCH, xstrdup("container not running"));
    return fsrun_error_errno(err, "kill the container init");
  }
  return 0;
}

/* --- list, ps ----------------------------------------------------------------------------------
 */

struct list_entry {
  char *id;
  char *json;
  pid_t pid;
  const char *status;
  char *bundle;
  char *created;
  char *owner;
};

static int compare_entries(const void *a, const void *b) {
  return strcmp(((const struct list_entry *)a)->id, ((const struct list_entry *)b)->id);
}

/* A container whose state file cannot be read is listed all the same: a corrupt one (said on
 * stderr) by its init's record, so that a live init shows as the container's; a missing one (a
 * create that died before its first state write) as stopped. */
static void list_unreadable_state(int dirfd, const char *id, struct container_status *st,
                                  fsrun_error_t *e) {
  cleanup_error fsrun_error_t rerr = NULL;
  bool corrupt = fsrun_error_code(e) != -ENOENT;
  if (corrupt)
    log_warning("list: `%s`: %s", id, (*e)->msg);
  fsrun_error_release(e);
  st->id = xstrdup(id);
  /* the JSON listing requires the field: the entry is shown all the same */
  st->bundle = xstrdup("");
  st->status = xstrdup(corrupt ? "created" : "stopped");
  if (corrupt && status_read_init_record(dirfd, st, &rerr) < 0) {
    free(st->status);
    st->status = xstrdup("stopped");
  }
}

int container_list(const struct fsrun_context *ctx, const char *format, bool quiet, FILE *out,
                   fsrun_error_t *err) {
  cleanup_dir DIR *dir = NULL;
  int rootfd;
  struct list_entry *entries = NULL;
  size_t n = 0, cap = 0;
  bool json = format != NULL && strcmp(format, "json") == 0;
  struct dirent *de;

  if (format != NULL && !json && strcmp(format, "table") != 0)
    return fsrun_error_make(err, EINVAL, "--format: expected table or json, got `%s`", format);
  rootfd = status_dir_root_open(ctx, err);
  if (rootfd < 0 && (*err)->status != ENOENT)
    return fsrun_error_code(err);
  if (rootfd < 0)
    fsrun_error_release(err); /* no root: nothing to list */
  if (rootfd >= 0 && (dir = fdopendir(rootfd)) == NULL) {
    close(rootfd);
    return fsrun_error_errno(err, "read the state root `%s`", ctx->state_root);
  }
  while (dir != NULL && (de = readdir(dir)) != NULL) {
    cleanup_error fsrun_error_t e = NULL;
    cleanup_close int dirfd = -1;
    cleanup_status struct container_status st = {0};
    struct list_entry *le;
    if (de->d_name[0] == '.' || status_validate_id(de->d_name, &e) < 0)
      continue;
    dirfd = status_dir_open(ctx, de->d_name, &e);
    if (dirfd < 0)
      continue;
    if (status_read(dirfd, &st, &e) < 0)
      list_unreadable_state(dirfd, de->d_name, &st, &e);
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      entries = realloc(entries, cap * sizeof(*entries));
      if (entries == NULL)
        abort();
    }
    le = &entries[n++];
    memset(le, 0, sizeof(*le));
    le->id = xstrdup(de->d_name);
    le->status = status_derive(dirfd, &st, &le->pid);
    le->owner = status_owner(dirfd);
    le->bundle = xstrdup(st.bundle ? st.bundle : "");
    le->created = xstrdup(st.created ? st.created : "");
    if (json)
      le->json = status_state_json(&st, le->status, le->pid, le->owner, false, &e);
  }
  if (n > 0)
    qsort(entries, n, sizeof(*entries), compare_entries);

  if (quiet) {
    for (size_t i = 0; i < n; i++)
      fprintf(out, "%s\n", entries[i].id);
  } else if (json) {
    fputc('[', out);
    for (size_t i = 0, first = 1; i < n; i++) {
      if (entries[i].json == NULL)
        continue;
      fprintf(out, "%s%s", first ? "" : ",", entries[i].json);
      first = 0;
    }
    fputs("]\n", out);
  } else {
    /* columns as runc prints them: at least 12 wide, 3 spaces of padding */
    static const char *const heads[] = {"ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"};
    size_t w[6];
    char pidbuf[32];
    for (int k = 0; k < 6; k++)
      w[k] = strlen(heads[k]);
    for (size_t i = 0; i < n; i++) {
      size_t lens[6] = {strlen(entries[i].id),
                        (size_t)snprintf(pidbuf, sizeof(pidbuf), "%d", (int)entries[i].pid),
                        strlen(entries[i].status),
                        strlen(entries[i].bundle),
                        strlen(entries[i].created),
                        strlen(entries[i].owner)};
      for (int k = 0; k < 6; k++)
        if (lens[k] > w[k])
          w[k] = lens[k];
    }
    for (int k = 0; k < 6; k++)
      w[k] = (w[k] + 3 < 12 ? 12 : w[k] + 3);
    fprintf(out, "%-*s%-*s%-*s%-*s%-*s%s\n", (int)w[0], heads[0], (int)w[1], heads[1], (int)w[2],
            heads[2], (int)w[3], heads[3], (int)w[4], heads[4], heads[5]);
    for (size_t i = 0; i < n; i++) {
      snprintf(pidbuf, sizeof(pidbuf), "%d", (int)entries[i].pid);
      fprintf(out, "%-*s%-*s%-*s%-*s%-*s%s\n", (int)w[0], entries[i].id, (int)w[1], pidbuf,
              (int)w[2], entries[i].status, (int)w[3], entries[i].bundle, (int)w[4],
              entries[i].created, entries[i].owner);
    }
  }
  for (size_t i = 0; i < n; i++) {
    free(entries[i].id);
    free(entries[i].json);
    free(entries[i].bundle);
    free(entries[i].created);
    free(entries[i].owner);
  }
  free(entries);
  return 0;
}

static bool pid_in(pid_t pid, const pid_t *pids, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* Runs `ps ARGS` and prints its header and the lines whose PID column is one of pids. */
static int ps_table(char **ps_args, int n_ps_args, const pid_t *pids, size_t n, FILE *out,
                    fsrun_error_t *err) {
  static char ps_name[] = "ps", default_args[] = "-ef";
  cleanup_free char **argv = xmalloc0(sizeof(char *) * ((size_t)n_ps_args + 3));
  cleanup_file FILE *in = NULL;
  cleanup_free char *line = NULL;
  posix_spawn_file_actions_t fa;
  extern char **environ;
  size_t cap = 0;
  int fds[2], status = 0, pid_col = -1;
  pid_t child;
  ssize_t len;
  bool header = true;

  argv[0] = ps_name;
  if (n_ps_args == 0)
    argv[1] = default_args;
  for (int i = 0; i < n_ps_args; i++)
    argv[i + 1] = ps_args[i];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return fsrun_error_errno(err, "ps: pipe");
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  status = posix_spawnp(&child, "ps", &fa, NULL, argv, environ);
  if (status != 0) {
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    close(fds[1]);
    return fsrun_error_make(err, status, "exec `ps`");
  }
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  in = fdopen(fds[0], "r");
  while ((len = getline(&line, &cap, in)) > 0) {
    if (header) {
      /* the PID column's index in the header */
      char *copy = xstrdup(line), *save = NULL;
      int col = 0;
      for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        if (strcmp(tok, "PID") == 0) {
          pid_col = col;
          break;
        }
        col++;
      }
      free(copy);
      if (pid_col < 0) {
        waitpid(child, &status, 0);
        return fsrun_error_make(err, EINVAL, "ps: no PID column in the output of `ps`");
      }
      fputs(line, out);
      header = false;
      continue;
    }
    {
      char *copy = xstrdup(line), *save = NULL, *tok;
      int col = 0;
      for (tok = strtok_r(copy, " \t\n", &save); tok && col < pid_col;
           tok = strtok_r(NULL, " \t\n", &save))
        col++;
      if (tok != NULL && pid_in((pid_t)strtol(tok, NULL, 10), pids, n))
        fputs(line, out);
      free(copy);
    }
  }
  while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fsrun_error_make(err, 0, "`ps` failed");
  return 0;
}

int container_ps(const struct fsrun_context *ctx, const char *id, const char *format,
                 char **ps_args, int n_ps_args, FILE *out, fsrun_error_t *err) {
  cleanup_close int dirfd = -1;
  cleanup_status struct container_status st = {0};
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  bool json = format != NULL && strcmp(format, "json") == 0;
  const char *status;
  pid_t pid;

  if (format != NULL && !json && strcmp(format, "table") != 0)
    return fsrun_error_make(err, EINVAL, "--format: expected table or json, got `%s`", format);
  dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0)
    return dirfd;
  if (status_read(dirfd, &st, err) < 0)
    return fsrun_error_code(err);
  status = status_derive(dirfd, &st, &pid);
  if (st.cgroup != NULL) {
    if (status_open_cgroup(dirfd, id, &st, &cg, err) < 0)
      return fsrun_error_wrap(err, "ps `%s`", id);
    if (cg != NULL && cgroup_pids(cg, &pids, &n, err) < 0)
      return fsrun_error_code(err);
  }
  if (cg == NULL && strcmp(status, "stopped") != 0) {
    pids = xmalloc0(sizeof(pid_t));
    pids[0] = pid;
    n = 1;
  }
  if (json) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++)
      fprintf(out, "%s%d", i ? "," : "", (int)pids[i]);
    fputs("]\n", out);
    return 0;
  }
  fflush(out);
  return ps_table(ps_args, n_ps_args, pids, n, out, err);
}
