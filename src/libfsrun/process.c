#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "clone.h"
#include "close-fds.h"
#include "file-time.h"
#include "hook-runner.h"
#include "hooks.h"
#include "netlink.h"
#include "passwd.h"
#include "proc-mounter.h"
#include "procfs.h"
#include "reaper.h"
#include "seccomp-handover.h"
#include "status.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#define KEYCTL_JOIN_SESSION_KEYRING 1

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* --- executable lookup ------------------------------------------------------------------------ */

static const char *env_get(const oci_strv *env, const char *name) {
  size_t n = strlen(name);
  const char *found = NULL;
  for (size_t i = 0; env != NULL && i < env->len; i++)
    if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=')
      found = env->items[i] + n + 1; /* the last one wins, as in execve's environment */
  return found;
}

/* 0 when path is an executable regular file, else -ENOENT or -EACCES. */
static int check_executable(const char *path) {
  struct stat st;
  if (stat(path, &st) < 0)
    return errno == EACCES ? -EACCES : -ENOENT;
  if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
    return -EACCES;
  return 0;
}

int process_resolve_executable(const char *args0, const oci_strv *env, char **out,
                               fsrun_error_t *err) {
  const char *path_var;
  bool saw_eacces = false;

  if (args0 == NULL || args0[0] == '\0')
    return fsrun_error_make(err, ENOENT, "process.args: empty");
  if (strchr(args0, '/') != NULL) {
    int r = check_executable(args0);
    if (r < 0)
      return fsrun_error_make(err, 0, "exec: \"%s\": %s", args0,
                              r == -EACCES ? "permission denied" : "no such file or directory");
    *out = xstrdup(args0);
    return 0;
  }
  path_var = env_get(env, "PATH");
  if (path_var == NULL)
    path_var = DEFAULT_PATH;
  for (const char *p = path_var;; p++) {
    const char *end = strchrnul(p, ':');
    cleanup_free char *candidate =
        end == p ? xasprintf("./%s", args0) : xasprintf("%.*s/%s", (int)(end - p), p, args0);
    int r = check_executable(candidate);
    if (r == 0) {
      *out = steal_ptr(&candidate);
      return 0;
    }
    if (r == -EACCES)
      saw_eacces = true;
    if (*end == '\0')
      break;
    p = end;
  }
  return fsrun_error_make(err, 0, "exec: \"%s\": %s", args0,
                          saw_eacces ? "permission denied" : "no such file or directory");
}

/* --- the init --------------------------------------------------------------------------------- */

__attribute__((noreturn)) static void fail(struct init_config *c, fsrun_error_t *err) {
  const char *msg = (err && *err && (*err)->msg) ? (*err)->msg : "container init failed";
  (void)sync_send(c->sync_fd, SYNC_ERROR, (err && *err) ? (*err)->status : 0, msg, strlen(msg), -1);
  _exit(1);
}

/* A set-up step after `start` (Landlock) failed, so the process never ran.
 * fsrun's init still holds the sync socket: `run` (the sandbox) reads it there and reports a
 * set-up failure, not an exit status of the process's (trusted as sent before the marker of
 * announce_command). With nobody reading (create/start, or no fsrun init), the container's stderr
 * is the only place left to say it. */
static void report_late_failure(struct init_config *c, fsrun_error_t err) {
  if (c->reaper &&
      sync_send(c->sync_fd, SYNC_ERROR, err->status, err->msg, strlen(err->msg), -1) == 0)
    return;
  dprintf(STDERR_FILENO, "fsrun: %s\n", err->msg);
}

/* Every filter is loaded and only the command's exec follows. From here the command may hold the
 * sync socket too (pid 1 is dumpable, so pidfd_getfd reaches it), and the runtime trusts a
 * SYNC_ERROR only from before this marker. A peer gone (EPIPE: create/start) reads nothing; any
 * other failure would leave the runtime without the marker, so the command does not run. */
static void announce_command(struct init_config *c) {
  int r = sync_send(c->sync_fd, SYNC_COMMAND_NEXT, 0, NULL, 0, -1);
  if (r < 0 && r != -EPIPE) {
    dprintf(STDERR_FILENO, "fsrun: tell the runtime the command follows: %s\n", strerror(-r));
    _exit(1);
  }
}

/* Any failure to talk to the parent means it is gone: nothing left to report to. */
static void wait_go(struct init_config *c, struct sync_msg *msg) {
  if (sync_recv(c->sync_fd, msg) < 0 || msg->type != SYNC_GO)
    _exit(1);
}

/* The first GO: the runtime has made our cgroup and moved us into it, or we join its v1
 * hierarchies ourselves now (init_config.join_cgroup). */
static void wait_go_in_cgroup(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  struct sync_msg msg = {.fd = -1};
  wait_go(c, &msg);
  sync_msg_clear(&msg);
  if (c->join_cgroup != NULL && cgroup_enter_v1(c->join_cgroup, 0, &err) < 0)
    fail(c, &err);
}

/* rootfs_ctx.join_cgroup: we are in our cgroup once GO has come; a cgroup namespace of our own is
 * created only then, so that its root is that cgroup. */
static void join_cgroup_late(void *arg) {
  struct init_config *c = arg;
  cleanup_error fsrun_error_t err = NULL;
  wait_go_in_cgroup(c);
  if (namespaces_unshare_late(c->ns, &err) < 0)
    fail(c, &err);
}

static char **strv_dup_null(const oci_strv *v, size_t extra) {
  char **r = xmalloc0(sizeof(char *) * (v->len + extra + 1));
  if (v->len)
    memcpy(r, v->items, sizeof(char *) * v->len);
  return r;
}

static int set_names(struct init_config *c, fsrun_error_t *err) {
  const oci_config *cfg = c->config;
  if (cfg->hostname != NULL && sethostname(cfg->hostname, strlen(cfg->hostname)) < 0)
    return fsrun_error_errno(err, "hostname: sethostname `%s`", cfg->hostname);
  if (cfg->domainname != NULL && setdomainname(cfg->domainname, strlen(cfg->domainname)) < 0)
    return fsrun_error_errno(err, "domainname: setdomainname `%s`", cfg->domainname);
  return 0;
}

static int enter_cwd(const char *cwd, fsrun_error_t *err) {
  char buf[PATH_MAX];
  if (cwd == NULL || cwd[0] == '\0')
    cwd = "/";
  if (chdir(cwd) < 0) {
    /* a missing working directory is created, as runc does */
    if (errno != ENOENT || mkdir_p_at(AT_FDCWD, cwd, 0755, err) < 0 || chdir(cwd) < 0) {
      if (err && *err)
        return fsrun_error_wrap(err, "process.cwd `%s`", cwd);
      return fsrun_error_errno(err, "process.cwd: chdir to `%s`", cwd);
    }
  }
  /* the cwd must lie inside the new root: getcwd() fails with "(unreachable)" otherwise */
  if (getcwd(buf, sizeof(buf)) == NULL || buf[0] != '/')
    return fsrun_error_make(err, EPERM, "process.cwd `%s`: resolves outside the container's root",
                            cwd);
  return 0;
}

/* Closes every fd from `first` on but the (up to) three kept ones (-1: none). */
static void close_fds_from(int first, int keep_a, int keep_b, int keep_c) {
  const int keep[3] = {keep_a, keep_b, keep_c};
  close_fds_except(first, keep, 3);
}

static int open_exec_fifo(struct init_config *c, pid_t self) {
  const char one = c->reaper ? EXEC_FIFO_FORKS : EXEC_FIFO_IN_PLACE;
  char path[64];
  int fd;
  snprintf(path, sizeof(path), "%d/fd/%d", (int)self, c->exec_fifo_fd);
  /* blocks until `start` opens the fifo for reading */
  do
    fd = openat(c->procfs_fd, path, O_WRONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0 || write(fd, &one, 1) != 1) {
    dprintf(STDERR_FILENO, "fsrun: %s the exec fifo: %s\n", fd < 0 ? "open" : "write",
            strerror(errno));
    _exit(1);
  }
  return fd;
}

/* Once in the container's root, the host's procfs handle goes: while we wait for `start`, a process
 * exec'd into the container with CAP_SYS_PTRACE can open /proc/1/fd/N, and the host's procfs
 * leads to every host process's root. What we still need procfs for (our own fds, LSM attributes,
 * sysctls) works through an instance of our own pid namespace: own_instance (made before
 * pivot_root), else a detached one made now, else the container's /proc. */
static void drop_host_procfs(struct init_config *c, int own_instance) {
  cleanup_error fsrun_error_t err = NULL;
  int own = own_instance >= 0 ? own_instance : procfs_open(&err);
  if (own < 0 && c->procfs_fd < 0)
    fail(c, &err);
  if (own < 0)
    return;
  if (c->procfs_fd >= 0)
    close(c->procfs_fd);
  c->procfs_fd = c->rootfs.procfs_fd = own;
}

/* The sockets on which we tell the init we clone that its pid reached the runtime
 * (clone_successor): made before a seccomp filter that may refuse socketpair */
static void open_told(struct init_config *c, int told[2]) {
  cleanup_error fsrun_error_t err = NULL;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, told) < 0) {
    fsrun_error_errno(&err, "create the socket pair to the container init's clone");
    fail(c, &err);
  }
}

/* Clones the init as our sibling (CLONE_PARENT: a child of the runtime) and reports its pid; it
 * goes on only after that report (told: open_told's, or NULL to make it here). Returns its
 * pid in the caller, 0 in the init. */
static long clone_sibling(struct init_config *c, int told_given[2], const char *where) {
  cleanup_error fsrun_error_t err = NULL;
  int own[2];
  int *told = told_given;
  long pid;
  if (told == NULL) {
    open_told(c, own);
    told = own;
  }
  pid = clone_successor(c->sync_fd, false, told);
  if (pid < 0 && errno == EPIPE)
    _exit(1);
  if (pid < 0) {
    fsrun_error_errno(&err, "clone the container init into %s", where);
    fail(c, &err);
  }
  return pid;
}

/* ns_plan.double_clone: join, create the namespaces, then clone the real init into them. */
static void clone_init_into_namespaces(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;

  if (namespaces_join(c->ns, &err) < 0)
    fail(c, &err);
  if (c->ns->intermediate_flags != 0 && unshare(c->ns->intermediate_flags) < 0) {
    fsrun_error_errno(&err, "create namespaces (unshare 0x%x)", c->ns->intermediate_flags);
    fail(c, &err);
  }
  if (clone_sibling(c, NULL, "its namespaces") > 0)
    _exit(0);
}

/* ns_plan.pid_join_early: we enter the pid namespace first, with the host's privilege (it sets
 * only our children's), then join and create the rest; the runtime then writes our id maps. The
 * createContainer hooks' runner is forked before: anything forked after is born in there. */
static void enter_pidns_early(struct init_config *c, struct hook_runner *runner) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_hooks *hooks = c->config->hooks;
  if (hooks != NULL && hooks_any(&hooks->create_container) &&
      hook_runner_start(runner, &hooks->create_container, c->in_userns, &err) < 0)
    fail(c, &err);
  if (setns(c->ns->pid_join_fd, CLONE_NEWPID) < 0) {
    fsrun_error_errno(&err, "join the pid namespace");
    fail(c, &err);
  }
  if (namespaces_join(c->ns, &err) < 0)
    fail(c, &err);
  if (c->ns->intermediate_flags != 0 && unshare(c->ns->intermediate_flags) < 0) {
    fsrun_error_errno(&err, "create namespaces (unshare 0x%x)", c->ns->intermediate_flags);
    fail(c, &err);
  }
  if (sync_send(c->sync_fd, SYNC_NAMESPACES, 0, NULL, 0, -1) < 0)
    _exit(1);
}

static int run_create_container_hooks(struct init_config *c, struct hook_runner *runner,
                                      const char *state, fsrun_error_t *err) {
  if (runner->sock >= 0)
    return hook_runner_run(runner, state, err);
  if (c->config->hooks == NULL)
    return 0;
  return hooks_run(&c->config->hooks->create_container, "createContainer", state, err);
}

/* ns_plan.pid_join_mounter, joined to the user namespace: the namespaces are unshared with a mount
 * namespace in between, which still shows the host's /proc (the procfs mounter's, see
 * proc-mounter.h). Returns its fd. */
static int unshare_keeping_mounter_mntns(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  char path[48];
  int fd;
  snprintf(path, sizeof(path), "%d/ns/mnt", (int)procfs_self_pid(c->procfs_fd));
  if (unshare(CLONE_NEWNS) < 0 || (fd = openat(c->procfs_fd, path, O_RDONLY | O_CLOEXEC)) < 0) {
    fsrun_error_errno(&err, "create the procfs mounter's mount namespace");
    fail(c, &err);
  }
  if (namespaces_unshare_late(c->ns, &err) < 0)
    fail(c, &err);
  return fd;
}

/* With a mounter mount namespace: the procfs mounter (proc-mounter.h) forked off while we are
 * still in the runtime's pid namespace, so that neither its mount namespace nor the mounter is
 * ever in the joined one. Returns our end of its socket, the mount namespace's fd closed. */
static int fork_proc_mounter(struct init_config *c, int mounter_mntns) {
  cleanup_error fsrun_error_t err = NULL;
  struct fsrun_clone_args args = {.exit_signal = SIGCHLD};
  int sock[2];
  long pid;
  if (sync_socketpair(sock, &err) < 0)
    fail(c, &err);
  pid = fsrun_clone(&args);
  if (pid < 0) {
    fsrun_error_errno(&err, "start the procfs mounter");
    fail(c, &err);
  }
  if (pid == 0) {
    /* outlives us: it ends when the late init closes its end (or dies with the runtime) */
    close(sock[1]);
    close(c->sync_fd);
    proc_mounter_serve(mounter_mntns, sock[0]);
  }
  close(mounter_mntns);
  close(sock[0]);
  return sock[1];
}

/* ns_plan.pid_join_early or pid_join_prepared, after pivot_root: the proc entries, and the late
 * init's procfs instance, from the runtime (procfs of the joined pid namespace through pidns=).
 * Returns the instance. */
static int mount_proc_by_runtime(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  int own;
  if (rootfs_mount_deferred(&c->rootfs, &err) < 0)
    fail(c, &err);
  own = proc_runtime_mount(c->sync_fd, NULL,
                           MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &err);
  if (own < 0)
    fail(c, &err);
  return own;
}

/* ns_plan.pid_join_late, in the container's root already: holding nothing of the host's (no
 * procfs, no namespace fds), enter the joined pid namespace and clone the init there. The new init
 * is the first process that namespace sees: it mounts the proc entries, from inside (through the
 * procfs mounter with mounter_mntns >= 0). Returns in the init, with its own procfs instance or
 * -1. */
static int clone_init_into_joined_pidns(struct init_config *c, int mounter_mntns) {
  cleanup_error fsrun_error_t err = NULL;
  int mounter = -1, own_procfs = -1;

  close(c->procfs_fd);
  c->procfs_fd = c->rootfs.procfs_fd = -1;
  namespaces_close_join_fds(c->ns);
  if (mounter_mntns >= 0)
    mounter = c->rootfs.proc_mounter_fd = fork_proc_mounter(c, mounter_mntns);
  /* (pid_join_early: entered first thing) */
  if (!c->ns->pid_join_early && setns(c->ns->pid_join_fd, CLONE_NEWPID) < 0) {
    fsrun_error_errno(&err, "join the pid namespace");
    fail(c, &err);
  }
  close(c->ns->pid_join_fd);
  if (clone_sibling(c, NULL, "the pid namespace") > 0)
    _exit(0);
  if (c->ns->pid_join_early)
    return mount_proc_by_runtime(c);
  if (rootfs_mount_deferred(&c->rootfs, &err) < 0)
    fail(c, &err);
  if (mounter >= 0) {
    own_procfs = proc_mounter_mount(mounter, NULL,
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &err);
    close(mounter);
    c->rootfs.proc_mounter_fd = -1;
    if (own_procfs < 0)
      fail(c, &err);
  }
  return own_procfs;
}

/* the listener fd of a NOTIFY profile goes to the runtime on the way (seccomp-handover.h) */
static int load_filter(struct init_config *c, fsrun_error_t *err) {
  return seccomp_load_handing_over(c->seccomp, c->sync_fd, err);
}

/* process.terminal (terminal_give_process): returns the slave (for /dev/console), or -1. */
static int open_terminal(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  int slave = -1;
  if (c->config->process->terminal &&
      (slave = terminal_give_process(c->config->process, c->sync_fd, &err)) < 0)
    fail(c, &err);
  return slave;
}

/* A session of the process's own, the pty (on stdin) its controlling terminal. Made by the init
 * that execs: with pid_join_prepared, the late init, which is then its leader. */
static void make_session(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  if (c->config->process->terminal && terminal_take_controlling(STDIN_FILENO, &err) < 0)
    fail(c, &err);
  if (!c->config->process->terminal && setsid() < 0) {
    fsrun_error_errno(&err, "setsid");
    fail(c, &err);
  }
}

/* A filter with no_new_privs that is loaded with the credentials, not when created
 * (load_filter_when_created): a NOTIFY one (its listener must reach the runtime before `create`
 * returns), and any one with pid_join_prepared, whose late init is cloned into a pid namespace the
 * container already sees: with CAP_SYS_PTRACE there (and no user namespace) it could seize the late
 * init before the filter, until `start`, and run in it what the profile denies. The profile must
 * then allow what the init does before execve (docs/process-model.md), as without no_new_privs. */
static bool filter_with_credentials(const struct init_config *c) {
  return c->seccomp != NULL && c->config->process->no_new_privileges &&
         (seccomp_has_notify(c->seccomp) || c->ns->pid_join_prepared);
}

/* The process's credentials. A filter that needs CAP_SYS_ADMIN (no no_new_privs) is loaded before
 * the caps go; with pid_join_prepared the joined pid namespace is entered just before that load
 * (setns needs the caps, the filter may refuse setns, and a NOTIFY profile's courier, cloned
 * before it, would be born visible there with our privilege). A filter with no_new_privs comes
 * after them when filter_with_credentials, else when created (load_filter_when_created). */
static void take_credentials(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->config->process;
  struct seccomp_handover handover = {0};
  bool filter_first = c->seccomp != NULL && !p->no_new_privileges;
  if (filter_first && seccomp_handover_start(c->seccomp, c->sync_fd, &handover, &err) < 0)
    fail(c, &err);
  if (c->ns->pid_join_prepared && setns(c->ns->pid_join_fd, CLONE_NEWPID) < 0) {
    fsrun_error_errno(&err, "join the pid namespace");
    fail(c, &err);
  }
  if (filter_first && seccomp_handover_load(c->seccomp, &handover, &err) < 0)
    fail(c, &err);
  if (c->ns->pid_join_prepared) {
    close(c->ns->pid_join_fd);
    namespaces_close_join_fds(c->ns);
  }
  if (process_take_credentials(p, &err) < 0)
    fail(c, &err);
  if (filter_with_credentials(c) && load_filter(c, &err) < 0)
    fail(c, &err);
}

/* The set-up is done and the command is next: once file times have reached the caller's cutoff
 * (fsrun sandbox's tamper walk: what the command changes is not before it), the wait overlapping
 * the set-up. A clock set back meanwhile: the cutoff the init went on at, for SYNC_CREATED. */
static void wait_exec_not_before(struct init_config *c) {
  if (c->exec_not_before.tv_sec != 0 &&
      file_time_wait_floor(&c->exec_not_before, FILE_TIME_WAIT_MAX_MS) < 0)
    c->exec_not_before_lowered = true;
}

/* After pivot_root: the proc entries of a joined pid namespace, the pty, /dev/console, sysctls,
 * masked and read-only paths, the cwd, the executable, rlimits and attributes, then the
 * credentials. With ns_plan.pid_join_prepared all of it before the late init is cloned, which then
 * only makes its session; the others clone it (pid_join_late) before all of it. */
static void init_after_pivot(struct init_config *c, int own_procfs, int mounter_mntns, char **exe,
                             char **home_env) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->config->process;
  int slave, told[2] = {-1, -1};

  if (c->ns->pid_join_prepared)
    own_procfs = mount_proc_by_runtime(c);
  else if (c->ns->pid_join_late)
    own_procfs = clone_init_into_joined_pidns(c, mounter_mntns);
  /* (pid_join_prepared: the host's procfs for the LSM labels, whose thread-self must be ours) */
  if (!c->ns->pid_join_prepared)
    drop_host_procfs(c, own_procfs);

  slave = open_terminal(c);
  if (!c->ns->pid_join_prepared)
    make_session(c);
  c->rootfs.console_slave_fd = slave;
  if (rootfs_finalize(&c->rootfs, &err) < 0)
    fail(c, &err);
  if (slave > STDERR_FILENO)
    close(slave);

  if (enter_cwd(p->cwd, &err) < 0)
    fail(c, &err);
  /* in the container's root, before the rlimits, the filter and the user can get in the way */
  *home_env = passwd_home_env(&p->env, p->user.uid);
  if (process_resolve_executable(p->args.len ? p->args.items[0] : NULL, &p->env, exe, &err) < 0)
    fail(c, &err);
  if (process_apply_rlimits(p, &err) < 0)
    fail(c, &err);
  /* I/O priority, personality, LSM labels: they need our privileges (the scheduler is the
   * runtime's to set, before GO, with its privilege) */
  if (c->attrs != NULL) {
    struct fsrun_process_attrs rest = *c->attrs;
    rest.has_scheduler = false;
    if (process_attrs_apply(&rest, c->procfs_fd, &err) < 0)
      fail(c, &err);
  }
  if (c->ns->pid_join_prepared)
    drop_host_procfs(c, own_procfs);
  /* With no_new_privs the filter comes once the set-up is done (load_filter_when_created), so
   * that it never has to allow the set-up; take_credentials loads the others. */
  if (c->ns->pid_join_prepared)
    open_told(c, told);
  /* before any filter (take_credentials loads the first): a profile need not allow the sleep */
  wait_exec_not_before(c);
  take_credentials(c);
  if (c->ns->pid_join_prepared) {
    if (clone_sibling(c, told, "the pid namespace") > 0)
      _exit(0);
    make_session(c);
  }
}

/* Our pid namespace's inode, to tell us from a process that takes our pid later (SYNC_CREATED);
 * "" when procfs cannot say. */
static void read_own_pidns(const struct init_config *c, pid_t self, char *out, size_t size) {
  char path[48];
  struct stat sb;
  out[0] = '\0';
  snprintf(path, sizeof(path), "%d/ns/pid", (int)self);
  if (self > 0 && fstatat(c->procfs_fd, path, &sb, 0) == 0)
    snprintf(out, size, "%llu", (unsigned long long)sb.st_ino);
}

/* With no_new_privs (and not loaded with the credentials), the filter comes here: once the set-up
 * is done and before SYNC_CREATED. From `created` on a process exec'd into the container sees us
 * (pid 1 of our pid namespace, waiting for `start`) and, with CAP_SYS_PTRACE and no user
 * namespace, can seize us and run in us what the profile denies: we carry the filter before the
 * runtime can write that state (review19 #5). Before SYNC_CREATED, not after it: a failure is
 * create's. The profile must allow what follows: writev, close, openat and write of the exec fifo,
 * close_range (or close), the startContainer hooks, Landlock's calls, execve. */
static void load_filter_when_created(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  if (c->seccomp == NULL || !c->config->process->no_new_privileges || filter_with_credentials(c))
    return;
  if (seccomp_load_filter(c->seccomp, NULL, &err) < 0)
    fail(c, &err);
}

/* Tells the runtime that the container is created, under the filter: by writev, which any
 * profile allows that lets its program write. A peer gone (EPIPE: the runtime died) reads
 * nothing; anything else is the profile's refusal, said where it can be. */
static void report_created(struct init_config *c, const char *pidns) {
  char payload[32 + FILE_TIME_TEXT_MAX];
  size_t len = strlen(pidns);
  int r;
  memcpy(payload, pidns, len + 1);
  /* and after a NUL, a lowered cutoff (container_create_opts.exec_not_before) */
  if (c->exec_not_before_lowered) {
    file_time_format(payload + len + 1, FILE_TIME_TEXT_MAX, &c->exec_not_before);
    len += 1 + strlen(payload + len + 1);
  }
  r = sync_send_by_write(c->sync_fd, SYNC_CREATED, payload, len);
  if (r == 0)
    return;
  if (r != -EPIPE)
    dprintf(STDERR_FILENO, "fsrun: tell the runtime the container is created: %s\n", strerror(-r));
  _exit(1);
}

/* A network namespace of our own starts with `lo` down; we still hold CAP_NET_ADMIN there. The
 * sandbox's egress profile makes link-local (cloud metadata) unreachable before any process of the
 * container runs, which holds no CAP_NET_ADMIN to take the routes away. */
static int network_up(const struct init_config *c, fsrun_error_t *err) {
  const char *unreachable =
      oci_map_get(&c->rootfs.config->annotations, NETLINK_UNREACHABLE_ANNOTATION);
  const char *tcp_only = oci_map_get(&c->rootfs.config->annotations, NETLINK_TCP_ONLY_ANNOTATION);
  if (netlink_loopback_up(err) < 0)
    return fsrun_error_code(err);
  if (unreachable != NULL && netlink_add_unreachable_routes(unreachable, err) < 0)
    return fsrun_error_code(err);
  return tcp_only != NULL ? netlink_tcp_only(tcp_only, err) : 0;
}

void init_main(struct init_config *c) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->config->process;
  struct sync_msg msg = {.fd = -1};
  char *hook_state_creating = NULL, *hook_state_created = NULL;
  cleanup_free char *exe = NULL;
  char **argv, **envp, *home_env = NULL, pidns[32];
  int own_procfs, mounter_mntns = -1;
  struct hook_runner runner = {.sock = -1};
  pid_t self;
  int fifo;

  /* no prefault_image() here: the init touches a few dozen windows of the image before its
   * execve, and their faults (with the kernel's fault-around) cost less than mapping all of it
   * (tests/bench/README.md, session 17) */
  close(c->parent_sync_fd);
  if (c->state_dir_fd >= 0)
    close(c->state_dir_fd);
  /* `run` blocks the signals it forwards; the container's process starts with the caller's mask.
   * fsrun's init keeps the one it was born with (every signal: create_clone) for good */
  if (c->reaper)
    hooks_spawn_with_mask(c->sigmask);
  else
    sigprocmask(SIG_SETMASK, c->sigmask, NULL);
  /* while create runs, the init dies with it */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || sync_peer_gone(c->sync_fd))
    _exit(1);
  /* invariant 1: nothing in the container may ptrace us or reopen our /proc/self/exe */
  if (!c->stay_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    _exit(1);
  if (c->ns->double_clone)
    clone_init_into_namespaces(c);
  else if (c->ns->pid_join_early)
    enter_pidns_early(c, &runner);
  if (c->wait_go && !c->go_late)
    wait_go_in_cgroup(c);
  if (c->stay_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    _exit(1);

  if (!c->ns->double_clone && !c->ns->pid_join_early && namespaces_join(c->ns, &err) < 0)
    fail(c, &err);
  if (c->ns->pid_join_mounter) {
    mounter_mntns = unshare_keeping_mounter_mntns(c);
  } else if (c->go_late) {
    c->rootfs.join_cgroup = join_cgroup_late;
    c->rootfs.join_cgroup_arg = c;
  } else if (namespaces_unshare_late(c->ns, &err) < 0) {
    fail(c, &err);
  }
  if (c->in_userns) {
    /* become root of the user namespace when it has one (files we create are then owned by it) */
    if (process_become_userns_root(&err) < 0)
      fail(c, &err);
  }
  if (set_names(c, &err) < 0)
    fail(c, &err);
  if (c->rootfs.new_netns && !c->network_after_mounts && network_up(c, &err) < 0)
    fail(c, &err);
  if (!c->no_new_keyring)
    (void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0, 0, 0);

  if (rootfs_mount_all(&c->rootfs, &err) < 0)
    fail(c, &err);

  if (c->hooks_after_mounts) {
    if (sync_send(c->sync_fd, SYNC_MOUNTS_DONE, 0, NULL, 0, -1) < 0)
      _exit(1);
    wait_go(c, &msg);
    /* payload: the state for createContainer, NUL, the state for startContainer */
    if (msg.data != NULL) {
      hook_state_creating = steal_ptr(&msg.data);
      if (strlen(hook_state_creating) < msg.len)
        hook_state_created = hook_state_creating + strlen(hook_state_creating) + 1;
    }
    sync_msg_clear(&msg);
  }
  if (c->rootfs.new_netns && c->network_after_mounts && network_up(c, &err) < 0)
    fail(c, &err);
  if (run_create_container_hooks(c, &runner, hook_state_creating, &err) < 0)
    fail(c, &err);

  /* in a user namespace the kernel mounts a procfs only where one is fully visible: made now, while
   * the host's /proc still is, so that a config without /proc does not keep the host's handle.
   * A pid namespace joined late is entered only after pivot_root: its instance is made there. */
  own_procfs = c->ns->pid_join_late ? -1 : procfs_open_instance();
  if (rootfs_pivot(&c->rootfs, own_procfs, &err) < 0)
    fail(c, &err);
  init_after_pivot(c, own_procfs, mounter_mntns, &exe, &home_env);

  /* invariant 2: nothing of ours above the preserved fds survives execve */
  if (syscall(SYS_close_range, 3 + c->preserve_fds + c->listen_fds, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
    for (int fd = 3 + c->preserve_fds + c->listen_fds; fd < 65536; fd++) {
      int flags = fcntl(fd, F_GETFD);
      if (flags >= 0 && !(flags & FD_CLOEXEC))
        fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }

  argv = strv_dup_null(&p->args, 0);
  envp = strv_dup_null(&p->env, 3);
  {
    size_t n = p->env.len;
    if (c->listen_fds > 0) {
      envp[n++] = xasprintf("LISTEN_FDS=%d", c->listen_fds);
      envp[n++] = xasprintf("LISTEN_PID=%d", (int)getpid());
    }
    envp[n] = home_env;
  }

  /* create is about to succeed: from here the init outlives it, but a one-shot run's init dies
   * with the runtime (armed again: a change of credentials since the first prctl cleared it; the
   * peer check closes the window in which the runtime died before it was armed) */
  if (prctl(PR_SET_PDEATHSIG, c->dies_with_runtime ? SIGKILL : 0, 0, 0, 0) < 0 ||
      (c->dies_with_runtime && sync_peer_gone(c->sync_fd)))
    _exit(1);
  /* our pid namespace (we never leave it): reported from here, since under `run` we may have
   * exited (and lost our namespaces) before the parent looks */
  self = procfs_self_pid(c->procfs_fd);
  read_own_pidns(c, self, pidns, sizeof(pidns));
  load_filter_when_created(c);
  report_created(c, pidns);
  /* fsrun's init keeps it, to report the process's wait status as it exits */
  if (!c->reaper)
    close(c->sync_fd);

  /* `run` has no fifo: nothing to wait for. The write end stays open (CLOEXEC) until execve:
   * `start` reads until EOF, so that it returns only once the process can take a signal (a
   * signal to a pid namespace's init that has no handler yet is dropped, not queued). */
  fifo = c->exec_fifo_fd >= 0 ? open_exec_fifo(c, self) : -1;
  /* CLOEXEC is not enough: execve resolves its path before it closes CLOEXEC fds, so an image
   * symlink through /proc/self/fd/N could reach a directory we still hold. Really close them
   * (all but the fifo, which leads nowhere: a path cannot go on through a fifo, and fsrun's
   * init's sync socket and the tiny init's sealed memfd, which lead nowhere either; the memfd
   * is CLOEXEC, gone with the tiny init's own execve). */
  close_fds_from(3 + c->preserve_fds + c->listen_fds, fifo, c->reaper ? c->sync_fd : -1,
                 c->reaper ? c->tiny_init_fd : -1);

  if (c->config->hooks != NULL && hooks_any(&c->config->hooks->start_container) &&
      hooks_run(&c->config->hooks->start_container, "startContainer", hook_state_created, &err) <
          0) {
    dprintf(STDERR_FILENO, "fsrun: %s\n", err->msg);
    _exit(1);
  }
  /* the last opens are done: restrict paths right before execve */
  if (c->landlock != NULL && landlock_apply(c->landlock, &err) < 0) {
    report_late_failure(c, err);
    /* nothing allocated here is left behind. envp's own strings follow the config's. */
    for (size_t i = p->env.len; envp[i] != NULL; i++)
      free(envp[i]);
    free(envp);
    free(argv);
    _exit(1);
  }

  if (c->reaper) {
    /* the reaper stays: its signals are held (blocked) from its clone on */
    announce_command(c);
    reaper_exec(exe, argv, envp, c->sigmask, p->terminal, c->sync_fd, c->tiny_init_fd, fifo);
  }
  process_exec(exe, argv, envp);
}

void process_exec(const char *exe, char *const argv[], char *const envp[]) {
  int saved;
  execve(exe, argv, envp);
  saved = errno;
  dprintf(STDERR_FILENO, "fsrun: exec: \"%s\": %s\n", exe, strerror(saved));
  _exit(saved == ENOENT ? 127 : 126);
}
