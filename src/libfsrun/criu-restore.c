/* fsrun restore: a new container (state dir, cgroup) whose process tree criu restores from a
 * checkpoint, then managed like any other (state, kill, exec, delete). */
#include "criu-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bind-identity.h"
#include "exec-git.h"
#include "cgroup.h"
#include "container.h"
#include "foreground.h"
#include "log.h"
#include "mounts.h"
#include "procfs.h"
#include "status.h"
#include "utils.h"
#include "validate.h"

#define CRIU_PID_FILE "criu.pid"

struct restore_child {
  const struct fsrun_cgroup *cg;
  const char *rootfs;
  const struct criu_terminal *tty;
  const struct criu_restore_binds *binds;
};

/* In the child that execs criu: into the container's cgroup (criu's children are born there), and
 * into a mount namespace of its own where the rootfs is a mount point (criu's --root) and the
 * checked bind sources are bound onto their stages, so that nothing is left mounted on the host. */
static int prepare_criu_child(void *data) {
  const struct restore_child *c = data;
  cleanup_error fsrun_error_t err = NULL;
  sigset_t none;
  /* a foreground restore blocks the signals it forwards; criu must not start with them blocked */
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (criu_terminal_for_criu(c->tty) < 0) {
    fprintf(stderr, "fsrun: restore: pass the pty to criu: %s\n", strerror(errno));
    return -1;
  }
  if (c->cg != NULL && cgroup_enter(c->cg, getpid(), &err) < 0) {
    fprintf(stderr, "fsrun: restore: %s\n", err->msg);
    return -1;
  }
  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount(c->rootfs, c->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) {
    fprintf(stderr, "fsrun: restore: bind the rootfs `%s` for criu: %s\n", c->rootfs,
            strerror(errno));
    return -1;
  }
  return criu_restore_binds_mount(c->binds);
}

/* The checkpoint's fds 0-2 that were pipes (or sockets) get restore's own fds 0-2 in their place,
 * as runc does: the old pipes' other ends died with the checkpointed container. So do files that
 * were outside the container's mounts ("file[MNT:INO]", e.g. conmon's /dev/null of the host).
 * Those that were the container's pty get the new pty's slave. */
static void add_inherited_stdio(struct criu_argv *a, const char *image_dir,
                                const struct criu_terminal *tty) {
  cleanup_free char *path = xasprintf("%s/%s", image_dir, CRIU_STDIO_FILE);
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t ignored = NULL;
  char *line;
  size_t len = 0;
  int fd = 0;
  if (read_file_at(AT_FDCWD, path, &text, &len, &ignored) < 0)
    return; /* a checkpoint made by another tool: criu restores the fds it saved */
  for (char *p = text; fd < 3 && (line = strsep(&p, "\n")) != NULL; fd++) {
    if (strncmp(line, "pipe:", 5) == 0 || strncmp(line, "socket:", 7) == 0 ||
        strncmp(line, "file[", 5) == 0) {
      criu_argv_add(a, "--inherit-fd");
      criu_argv_addf(a, "fd[%d]:%s", fd, line);
    } else if (strncmp(line, CRIU_STDIO_TTY_PREFIX, strlen(CRIU_STDIO_TTY_PREFIX)) == 0 &&
               tty->slave >= 0) {
      criu_terminal_inherit(a, tty, line);
    }
  }
}

/* a bind that carries checks from the stage its checked source is bound on in criu's namespace */
static void add_bind_mounts(struct criu_argv *a, const oci_config *config, const char *bundle,
                            const struct criu_restore_binds *binds) {
  for (size_t i = 0; i < config->n_mounts; i++) {
    const oci_mount *m = &config->mounts[i];
    const char *stage = criu_restore_binds_source(binds, i);
    cleanup_free char *source = NULL;
    if (!mount_entry_is_bind(m) || m->source == NULL)
      continue;
    source = stage != NULL         ? xstrdup(stage)
             : m->source[0] == '/' ? xstrdup(m->source)
                                   : xasprintf("%s/%s", bundle, m->source);
    criu_argv_add(a, "--ext-mount-map");
    criu_argv_addf(a, "%s:%s", m->destination, source);
  }
}

static int check_restore_opts(const struct criu_restore_opts *o, const oci_config *config,
                              fsrun_error_t *err) {
  if (o->no_pivot)
    return fsrun_error_make(err, 0,
                            "restore: --no-pivot: criu restores the mount namespace "
                            "with pivot_root and has no other way");
  if (!o->detach && o->no_subreaper)
    return fsrun_error_make(err, 0,
                            "restore: --no-subreaper: a foreground restore waits for "
                            "the process as its subreaper; use it with --detach");
  if (config->process == NULL)
    return fsrun_error_make(err, 0, "config.json: process: required to restore a container");
  if (o->console_socket != NULL && !config->process->terminal)
    return fsrun_error_make(err, 0, "--console-socket given but process.terminal is false");
  /* as runc: a detached restore has nobody to hand the pty's master to but the socket */
  if (config->process->terminal && o->detach && o->console_socket == NULL)
    return fsrun_error_make(err, 0,
                            "restore: process.terminal is true: --console-socket is required "
                            "to receive the pty with --detach");
  if (geteuid() != 0)
    return fsrun_error_make(err, 0,
                            "restore: criu needs root: an ordinary user cannot "
                            "restore a container");
  return criu_check_config(config, "restore", err);
}

struct restore_ctx {
  const struct fsrun_context *ctx;
  const struct criu_restore_opts *o;
  oci_config *config;
  char *bundle, *rootfs, *image_dir, *work_dir, *criu;
  struct fsrun_cgroup *cg;
  int dirfd;
  struct container_status st;
  struct criu_terminal tty;
  struct criu_restore_binds binds;
};

static int run_criu_restore(struct restore_ctx *r, fsrun_error_t *err) {
  __attribute__((cleanup(criu_argv_free))) struct criu_argv a = {0};
  struct restore_child child = {
      .cg = r->cg, .rootfs = r->rootfs, .tty = &r->tty, .binds = &r->binds};
  const struct criu_child run = {.before_exec = prepare_criu_child, .data = &child, .pass_fd = -1};
  criu_argv_common(&a, r->criu, "restore", r->image_dir, r->work_dir, &r->o->c);
  criu_argv_add(&a, "--root");
  criu_argv_add(&a, r->rootfs);
  criu_argv_add(&a, "--restore-detached");
  cleanup_free char *state_root = realpath(r->ctx->state_root, NULL);
  cleanup_free char *state_dir = NULL;
  int ret;
  if (state_root == NULL)
    return fsrun_error_errno(err, "restore: the state root `%s`", r->ctx->state_root);
  /* absolute: criu resolves a relative path from its work dir, not from ours */
  criu_argv_add(&a, "--pidfile");
  criu_argv_addf(&a, "%s/%s/%s", state_root, r->o->id, CRIU_PID_FILE);
  if (r->cg != NULL) {
    criu_argv_add(&a, "--cgroup-root");
    criu_argv_add(&a, cgroup_path(r->cg));
  }
  state_dir = xasprintf("%s/%s", state_root, r->o->id);
  if (criu_restore_binds_stage(&r->binds, state_dir, err) < 0)
    return fsrun_error_code(err);
  add_bind_mounts(&a, r->config, r->bundle, &r->binds);
  add_inherited_stdio(&a, r->image_dir, &r->tty);
  criu_terminal_console(&a, &r->tty);
  ret = criu_run(&a, "restore", r->work_dir, "restore", &run, err);
  /* criu's binds hold the sources now; the state dir keeps only files (status_dir_remove) */
  criu_restore_binds_clear(&r->binds);
  return ret;
}

static int record_restored(struct restore_ctx *r, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  size_t len = 0;
  long pid;
  if (read_file_at(r->dirfd, CRIU_PID_FILE, &text, &len, err) < 0)
    return fsrun_error_wrap(err, "restore: criu's pid file");
  pid = strtol(text, NULL, 10);
  if (pid <= 0)
    return fsrun_error_make(err, 0, "restore: criu's pid file holds no pid: `%s`", text);
  unlinkat(r->dirfd, CRIU_PID_FILE, 0);
  r->st.pid = (pid_t)pid;
  r->st.pid_start_time = procfs_pid_start_time(r->st.pid, NULL);
  r->st.pid_pidns = procfs_pid_pidns(r->st.pid);
  free(r->st.status);
  r->st.status = xstrdup("created"); /* no exec fifo: derived as running */
  if (status_write(r->dirfd, &r->st, err) < 0)
    return fsrun_error_code(err);
  if (r->o->pid_file != NULL) {
    cleanup_free char *s = xasprintf("%d", r->st.pid);
    if (write_file_atomic_at(AT_FDCWD, r->o->pid_file, s, strlen(s), 0644, err) < 0)
      return fsrun_error_wrap(err, "--pid-file");
  }
  return 0;
}

/* The state written before criu runs, so that `delete --force` cleans up whatever happens next. */
static int make_container(struct restore_ctx *r, fsrun_error_t *err) {
  const oci_linux *lx = r->config->linux_;
  cgroup_create_opts copts = {
      .id = r->o->id,
      .cgroups_path = lx ? lx->cgroups_path : NULL,
      .systemd = r->ctx->systemd_cgroup,
      .resources = lx ? lx->resources : NULL,
      .devices = lx ? lx->devices : NULL,
      .n_devices = lx ? lx->n_devices : 0,
  };
  if (cgroup_create(&copts, &r->cg, err) < 0)
    return fsrun_error_code(err);
  r->st.id = xstrdup(r->o->id);
  r->st.status = xstrdup("creating");
  r->st.creator_pid = getpid();
  r->st.creator_start_time = procfs_pid_start_time(r->st.creator_pid, NULL);
  r->st.bundle = xstrdup(r->bundle);
  r->st.rootfs = xstrdup(r->rootfs);
  r->st.created = rfc3339_now();
  if (oci_map_copy(&r->st.annotations, &r->config->annotations) < 0)
    abort();
  r->st.cgroup = r->cg ? cgroup_describe(r->cg) : NULL;
  r->st.cgroup_record = r->cg ? cgroup_hierarchy_record(r->cg) : NULL;
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++)
    if (strcmp(lx->namespaces[i].type, "pid") == 0)
      r->st.new_pidns = true;
  return status_write(r->dirfd, &r->st, err);
}

static int load_bundle(struct restore_ctx *r, char **json, size_t *len, fsrun_error_t *err) {
  cleanup_free char *config_path = NULL;
  char *parse_err = NULL;
  struct validate_options vopts = {.systemd_cgroup = r->ctx->systemd_cgroup};
  r->bundle = realpath(r->o->bundle ? r->o->bundle : ".", NULL);
  if (r->bundle == NULL)
    return fsrun_error_errno(err, "bundle `%s`", r->o->bundle ? r->o->bundle : ".");
  config_path = xasprintf("%s/config.json", r->bundle);
  if (oci_read_file(config_path, json, len, &parse_err) < 0)
    return fsrun_error_take(err, EINVAL, parse_err);
  if (oci_config_parse(*json, *len, "config.json", &r->config, &parse_err) < 0)
    return fsrun_error_take(err, EINVAL, parse_err);
  if (validate_config_with(r->config, r->bundle, &vopts, err) < 0)
    return fsrun_error_code(err);
  /* a task container's binds keep the identity `fsrun bundle` checked, as at create */
  /* a restored container is no task container: the mark went with the create's state dir */
  if (bind_checks_from_annotations(r->config, err) < 0 ||
      exec_git_accept(r->config, false, "restore", err) < 0)
    return fsrun_error_code(err);
  if (r->config->root_path == NULL)
    return fsrun_error_make(err, 0, "config.json: root.path: required to restore");
  r->rootfs = r->config->root_path[0] == '/' ? realpath(r->config->root_path, NULL) : NULL;
  if (r->rootfs == NULL && r->config->root_path[0] != '/') {
    cleanup_free char *p = xasprintf("%s/%s", r->bundle, r->config->root_path);
    r->rootfs = realpath(p, NULL);
  }
  if (r->rootfs == NULL)
    return fsrun_error_errno(err, "config.json: root.path `%s`", r->config->root_path);
  return criu_restore_binds_check(r->config, r->bundle, r->rootfs, &r->binds, err);
}

static int find_images(struct restore_ctx *r, fsrun_error_t *err) {
  const char *image = r->o->c.image_path ? r->o->c.image_path : "checkpoint";
  cleanup_free char *inventory = NULL;
  r->image_dir = realpath(image, NULL);
  if (r->image_dir == NULL)
    return fsrun_error_errno(err, "restore: --image-path `%s`", image);
  inventory = xasprintf("%s/inventory.img", r->image_dir);
  if (access(inventory, R_OK) < 0)
    return fsrun_error_make(err, 0,
                            "restore: --image-path `%s`: no checkpoint there "
                            "(inventory.img missing)",
                            image);
  /* criu restore hands the process's userfaultfd to the daemon through its socket in the work
   * dir: checked before that dir is made (a new one has no daemon) */
  if (r->o->c.lazy_pages &&
      criu_check_lazy_pages_daemon(r->o->c.work_path ? r->o->c.work_path : r->image_dir, err) < 0)
    return fsrun_error_code(err);
  r->work_dir = r->o->c.work_path
                    ? criu_prepare_dir("restore", "--work-path", r->o->c.work_path, err)
                    : xstrdup(r->image_dir);
  return r->work_dir == NULL ? fsrun_error_code(err) : 0;
}

static void undo(struct restore_ctx *r) {
  cleanup_error fsrun_error_t e = NULL;
  if (r->st.pid > 0)
    kill(r->st.pid, SIGKILL);
  if (r->cg != NULL && cgroup_destroy(r->cg, &e) < 0) {
    log_warning("%s", e->msg);
    fsrun_error_release(&e);
  }
  criu_restore_binds_clear(&r->binds);
  if (r->dirfd >= 0 && status_dir_remove(r->ctx, r->o->id, &e) < 0)
    log_warning("%s", e->msg);
}

static void restore_ctx_clear(struct restore_ctx *r) {
  if (r->config != NULL)
    oci_config_free(r->config);
  free(r->bundle);
  free(r->rootfs);
  free(r->image_dir);
  free(r->work_dir);
  free(r->criu);
  if (r->cg != NULL)
    cgroup_free(r->cg);
  if (r->dirfd >= 0)
    close(r->dirfd);
  criu_terminal_clear(&r->tty);
  criu_restore_binds_clear(&r->binds);
  status_clear(&r->st);
}

/* Foreground: the restored process was re-parented to us (the subreaper) when criu exited; the
 * signals blocked since before criu ran (forwarded) go to it, as `run` does. */
static int wait_restored(struct restore_ctx *r, const sigset_t *forwarded, int *exit_status,
                         fsrun_error_t *err) {
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, r->st.pid, 0);
  if (pidfd < 0)
    return fsrun_error_errno(err, "restore: pidfd of the restored process %d", r->st.pid);
  /* without a console socket, the pty is relayed to our stdio as `run` does */
  *exit_status = foreground_wait(pidfd, r->tty.master, forwarded);
  return container_delete(r->ctx, r->o->id, true, err);
}

int criu_restore(const struct fsrun_context *ctx, const struct criu_restore_opts *o,
                 int *exit_status, fsrun_error_t *err) {
  __attribute__((cleanup(restore_ctx_clear))) struct restore_ctx r = {
      .ctx = ctx, .o = o, .dirfd = -1, .tty = {-1, -1, -1}};
  cleanup_free char *json = NULL;
  sigset_t forwarded;
  size_t len = 0;

  if (status_validate_id(o->id, err) < 0 || load_bundle(&r, &json, &len, err) < 0 ||
      check_restore_opts(o, r.config, err) < 0 || find_images(&r, err) < 0)
    return fsrun_error_code(err);
  r.criu = criu_find_usable(ctx->state_root, "restore", err);
  if (r.criu == NULL ||
      (o->c.lazy_pages && criu_check_lazy_pages(ctx->state_root, r.criu, "restore", err) < 0) ||
      criu_check_network_lock(r.config, "restore", err) < 0 ||
      criu_terminal_open(r.config, o->console_socket, &r.tty, err) < 0)
    return fsrun_error_code(err);
  r.dirfd = status_dir_create(ctx, o->id, err);
  if (r.dirfd < 0)
    return r.dirfd;
  if (status_write_config(r.dirfd, json, len, err) < 0 || make_container(&r, err) < 0)
    goto fail;
  if (!o->detach && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
    fsrun_error_errno(err, "restore: become the subreaper");
    goto fail;
  }
  /* blocked from before criu runs: a signal that comes during the restore waits for the process */
  foreground_signals(&forwarded);
  if (!o->detach)
    sigprocmask(SIG_BLOCK, &forwarded, NULL);
  if (run_criu_restore(&r, err) < 0 || record_restored(&r, err) < 0 ||
      criu_terminal_hand_over(&r.tty, err) < 0)
    goto fail;
  if (o->detach)
    return 0;
  return wait_restored(&r, &forwarded, exit_status, err);

fail:
  undo(&r);
  return fsrun_error_code(err);
}
