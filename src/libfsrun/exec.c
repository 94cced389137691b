/* `exec`: runs a new process inside an existing container.
 *
 * The parent (this fsrun process) reads the state and the config.json that `create` stored in the
 * state directory (the bundle may have changed since), compiles the seccomp profile, then
 * clones a child (clone.h) into the container's cgroup (CLONE_INTO_CGROUP on v2; on v1 the child
 * writes itself into each hierarchy). The child joins every namespace with one setns() on the
 * init's pidfd (where pidfd_open answers ENOSYS, one per namespace: pidfd-compat.h; the mount
 * namespace gives it the container's root) and, when the container has a
 * pid namespace, clones the process that is visible in it only then (docs/process-model.md); that
 * process sets itself up and execve()s the command; the parent learns the outcome from a
 * CLOEXEC sync socket: an error message, or SYNC_EXEC_READY and then EOF when execve succeeded
 * (in the foreground with --pid-file, the process execs only at the parent's SYNC_GO, sent once the
 * pid file names it: exec-follow.h). An EOF before that is a child that died during setup: a failed
 * exec. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "clone.h"
#include "close-fds.h"
#include "foreground.h"
#include "landlock.h"
#include "live.h"
#include "log.h"
#include "namespaces.h"
#include "passwd.h"
#include "pidfd-compat.h"
#include "process-attrs.h"
#include "process.h"
#include "procfs.h"
#include "seccomp-handover.h"
#include "seccomp.h"
#include "exec-follow.h"
#include "exec-git.h"
#include "exec-leftovers.h"
#include "exec-status.h"
#include "sandbox.h"
#include "openat2-compat.h"
#include "status.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define KEYCTL_JOIN_SESSION_KEYRING 1

/* --- ids ------------------------------------------------------------------------------------- */

/* text for a one-line message: control and non-ASCII bytes as \xNN, cut to fit buf */
static const char *printable(const char *text, char *buf, size_t size) {
  size_t n = 0;
  for (const unsigned char *s = (const unsigned char *)(text ? text : ""); *s && n + 5 < size;
       s++) {
    if (*s >= 0x20 && *s < 0x7f)
      buf[n++] = (char)*s;
    else
      n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *s);
  }
  buf[n] = '\0';
  return buf;
}

#define EXEC_ID_MAX 4294967294ULL /* (uid_t)-1 means "leave unchanged" to setresuid */

int exec_parse_id(const char *text, uint32_t *out) {
  uint64_t value = 0;
  bool too_big = false;
  if (text == NULL || *text == '\0')
    return -EINVAL;
  for (const char *s = text; *s != '\0'; s++) {
    if (*s < '0' || *s > '9')
      return -EINVAL;
    if (!too_big) {
      value = value * 10 + (uint64_t)(*s - '0');
      too_big = value > EXEC_ID_MAX;
    }
  }
  if (too_big)
    return -ERANGE;
  *out = (uint32_t)value;
  return 0;
}

int exec_parse_user(const char *text, uint32_t *uid, uint32_t *gid, bool *has_gid,
                    fsrun_error_t *err) {
  const char *colon = text ? strchr(text, ':') : NULL;
  uint32_t u = 0, g = 0;
  int r;
  if (colon != NULL) {
    cleanup_free char *uid_text = strndup(text, (size_t)(colon - text));
    r = exec_parse_id(uid_text, &u);
    if (r == 0)
      r = exec_parse_id(colon + 1, &g);
  } else {
    r = exec_parse_id(text, &u);
  }
  if (r < 0) {
    char shown[64];
    return fsrun_error_make(err, 0,
                            "--user: expected UID or UID:GID (decimal, 0 to 4294967294), got `%s`",
                            printable(text, shown, sizeof(shown)));
  }
  *uid = u;
  *has_gid = colon != NULL;
  if (colon != NULL)
    *gid = g;
  return 0;
}

/* --- the process spec ------------------------------------------------------------------------ */

static void strv_replace(oci_strv *v, char **src, size_t n) {
  oci_strv_free(v);
  v->items = xmalloc0(sizeof(char *));
  for (size_t i = 0; i < n; i++)
    oci_strv_push(v, src[i]);
}

/* K=V replaces an existing K (so that getenv, which returns the first match, sees it) or is
 * appended. */
static void env_set(oci_strv *env, const char *entry) {
  size_t key_len = strcspn(entry, "=");
  for (size_t i = 0; i < env->len; i++) {
    if (strncmp(env->items[i], entry, key_len) == 0 && env->items[i][key_len] == '=') {
      free(env->items[i]);
      env->items[i] = xstrdup(entry);
      return;
    }
  }
  oci_strv_push(env, entry);
}

/* env's entries, then extra (when not NULL), NULL-terminated, for execve */
static char **env_with(const oci_strv *env, char *extra) {
  char **v = xmalloc0((env->len + 2) * sizeof(char *));
  for (size_t i = 0; i < env->len; i++)
    v[i] = env->items[i];
  v[env->len] = extra;
  return v;
}

static int read_process_file(const char *path, oci_process **out, fsrun_error_t *err) {
  cleanup_free char *json = NULL;
  char *msg = NULL;
  size_t len = 0;
  if (oci_read_file(path, &json, &len, &msg) < 0)
    return fsrun_error_take(err, ENOENT, msg);
  if (oci_process_parse(json, len, path, out, &msg) < 0)
    return fsrun_error_take(err, EINVAL, msg);
  return 0;
}

int exec_build_process(oci_process **process, const struct exec_options *o, fsrun_error_t *err) {
  oci_process *p;
  int r;

  if (o->process_path != NULL) {
    oci_process *from_file = NULL;
    if (o->n_args > 0)
      return fsrun_error_make(err, 0,
                              "exec: give the command either in --process or as arguments, not "
                              "both");
    r = read_process_file(o->process_path, &from_file, err);
    if (r < 0)
      return r;
    if (*process != NULL)
      oci_process_free(*process);
    *process = from_file;
  } else if (*process == NULL) {
    *process = xmalloc0(sizeof(oci_process));
  }
  p = *process;

  if (o->process_path == NULL) {
    /* as runc: config.json's process is the base; its terminal belongs to the init */
    strv_replace(&p->args, o->args, o->n_args);
    p->terminal = false;
  }
  if (o->tty)
    p->terminal = true;
  if (o->cwd != NULL) {
    free(p->cwd);
    p->cwd = xstrdup(o->cwd);
  }
  for (size_t i = 0; i < o->n_env; i++) {
    const char *eq = strchr(o->env[i], '=');
    char shown[64];
    if (eq == NULL || eq == o->env[i])
      return fsrun_error_make(err, 0, "--env: expected KEY=VALUE, got `%s`",
                              printable(o->env[i], shown, sizeof(shown)));
    if (p->env.items == NULL)
      p->env.items = xmalloc0(sizeof(char *));
    env_set(&p->env, o->env[i]);
  }
  if (o->user != NULL) {
    uint32_t uid = 0, gid = 0;
    bool has_gid = false;
    r = exec_parse_user(o->user, &uid, &gid, &has_gid, err);
    if (r < 0)
      return r;
    p->user.uid = uid;
    if (has_gid)
      p->user.gid = gid;
  }
  for (size_t i = 0; i < o->n_additional_gids; i++) {
    uint32_t gid = 0;
    uint32_t *gids;
    char shown[64];
    if (exec_parse_id(o->additional_gids[i], &gid) < 0)
      return fsrun_error_make(err, 0,
                              "--additional-gids: expected a GID (decimal, 0 to 4294967294), got "
                              "`%s`",
                              printable(o->additional_gids[i], shown, sizeof(shown)));
    gids = realloc(p->user.additional_gids, sizeof(uint32_t) * (p->user.n_additional_gids + 1));
    if (gids == NULL)
      abort();
    gids[p->user.n_additional_gids++] = gid;
    p->user.additional_gids = gids;
  }
  if (o->n_caps > 0 && p->capabilities == NULL)
    p->capabilities = xmalloc0(sizeof(oci_capabilities));
  for (size_t i = 0; i < o->n_caps; i++) {
    oci_capabilities *c = p->capabilities;
    char shown[64];
    if (caps_from_name(o->caps[i]) < 0)
      return fsrun_error_make(err, 0, "--cap: unknown capability `%s`",
                              printable(o->caps[i], shown, sizeof(shown)));
    oci_strv_push(&c->bounding, o->caps[i]);
    oci_strv_push(&c->effective, o->caps[i]);
    oci_strv_push(&c->permitted, o->caps[i]);
    c->has_bounding = c->has_effective = c->has_permitted = true;
    /* the kernel keeps an ambient capability only if it is inheritable too: as runc, only then */
    if (c->has_inheritable) {
      oci_strv_push(&c->ambient, o->caps[i]);
      c->has_ambient = true;
    }
  }
  if (o->no_new_privs)
    p->no_new_privileges = true;
  if (o->process_label != NULL) {
    free(p->selinux_label);
    p->selinux_label = xstrdup(o->process_label);
  }
  if (o->apparmor != NULL) {
    free(p->apparmor_profile);
    p->apparmor_profile = xstrdup(o->apparmor);
  }

  if (p->args.len == 0 || p->args.items[0] == NULL || p->args.items[0][0] == '\0')
    return fsrun_error_make(err, 0,
                            "exec: no command: give COMMAND [ARG...] or --process FILE with "
                            "process.args");
  if (p->cwd == NULL || p->cwd[0] == '\0') {
    free(p->cwd);
    p->cwd = xstrdup("/");
  }
  if (p->cwd[0] != '/')
    return fsrun_error_make(err, 0, "process.cwd `%s`: must be an absolute path", p->cwd);
  return 0;
}

/* --- the child ------------------------------------------------------------------------------- */

struct exec_child {
  const oci_process *p;
  int sync_fd;        /* our end of the sync socket */
  int parent_sync_fd; /* the parent's end, closed first so that the parent's death reads as EOF */
  struct init_ns *init_ns; /* the init's pidfd, or its namespaces' fds (pidfd-compat.h) */
  int ns_flags;            /* joined with setns() on init_ns */
  bool join_user;          /* ns_flags has CLONE_NEWUSER */
  /* pidfd_open answers ENOSYS: the pidfd of the process cloned into the pid namespace goes to the
   * parent with its pid (pidfd_own_child_or) */
  bool send_successor_pidfd;
  /* the container has a pid namespace: we set the process up to its credentials (and a filter
   * that needs CAP_SYS_ADMIN), and only then clone the process that execs into it, as the
   * parent's child (CLONE_PARENT): what the container can see holds no more than the container's
   * processes (docs/process-model.md). The pid namespace (entered for our children only) is in
   * ns_flags, unless pid_after_courier. */
  bool pid_late;
  /* a NOTIFY profile: its courier is cloned before we enter the pid namespace
   * (child_take_credentials*), where it would be born visible with our privilege or unfiltered */
  bool pid_after_courier;
  struct fsrun_cgroup *cg_join; /* v1/hybrid, no clone3: the child writes itself into it, or NULL */
  bool cg_join_v1_only;         /* hybrid: cloned into the cgroup2 directory already */
  pid_t init_pid;               /* cg_join on v2: the init's cgroup is joined when it is no leaf */
  const struct fsrun_seccomp *seccomp;
  const struct fsrun_process_attrs *attrs;
  const struct fsrun_process_attrs *scheduler; /* attrs with the scheduler (set first), or NULL */
  const struct fsrun_landlock_rules *landlock;
  int procfs_fd;      /* verified procfs for the LSM label writes, or -1 */
  int cgroup_fd;      /* the parent's CLONE_INTO_CGROUP fd (a host directory), or -1 */
  int init_cgroup_fd; /* the same for the init's cgroup (the container's is no leaf), or -1 */
  int preserve_fds;
  const sigset_t *sigmask; /* the caller's mask, restored before exec */
  /* the init's root, when the container shares the caller's mount namespace (no setns(mnt) to
   * give us its root): entered with chroot, or -1 */
  int init_root_fd;
  /* a task container of `fsrun bundle`: the git overlay of this exec (exec-git.c), or NULL */
  const struct exec_git *git;
  int git_tree_fd;  /* its detached per-run dir (exec_git_child_grab), or -1 */
  int git_proc_fds; /* and our /proc/self/fd of the host's procfs, or -1 */
  /* a foreground exec with --pid-file: after SYNC_EXEC_READY, execve only at the parent's SYNC_GO,
   * sent once the pid file names us (exec-follow.h) */
  bool wait_go;
  /* the command's path and $HOME, also held here: the child _exits once it has cloned the exec
   * process (pid_late), whose heap they are, and a pointer left only in a register is a leak to
   * memcheck's scan at that _exit */
  char *exe, *home_env;
};

__attribute__((noreturn)) static void child_fail(struct exec_child *c, fsrun_error_t *err) {
  const char *msg = (*err != NULL && (*err)->msg != NULL) ? (*err)->msg : "exec setup failed";
  (void)sync_send(c->sync_fd, SYNC_ERROR, *err != NULL ? (*err)->status : 0, msg, strlen(msg), -1);
  _exit(1);
}

/* as the init's: a NOTIFY listener fd goes to the parent on the way (seccomp-handover.h) */
static int child_load_filter(struct exec_child *c, fsrun_error_t *err) {
  return seccomp_load_handing_over(c->seccomp, c->sync_fd, err);
}

/* chdir to cwd, resolved in the container's root (setns into its mount namespace made that our
 * root), which getcwd() must confirm: an fd path like /proc/self/fd/N reaching a host directory
 * makes it fail or report "(unreachable)" (invariant 7, CVE-2024-21626). */
static int child_enter_cwd(const char *cwd, fsrun_error_t *err) {
  char buf[PATH_MAX];
  if (chdir(cwd) < 0)
    return fsrun_error_errno(err, "process.cwd: chdir to `%s`", cwd);
  if (getcwd(buf, sizeof(buf)) == NULL || buf[0] != '/')
    return fsrun_error_make(err, 0, "process.cwd `%s`: resolves outside the container's root", cwd);
  return 0;
}

/* The most an exec waits for an init that `start` released to reach its execve (ms). */
#define JOIN_WAIT_FOR_EXECVE_MS 5000

/* setns on the init's pidfd asks for ptrace access to the init. Until its execve the init is
 * non-dumpable with the runtime's memory, owned by the host's user namespace: a rootless caller
 * gets EPERM there for an exec made while `start` (or `run -d`) runs, which returns only once the
 * init has exec'd. The init is dumpable from its execve on: wait for it,
 * boundedly (a pidfd join is all or nothing, so a retry starts from where we were). */
static int join_waiting_for_execve(struct exec_child *c, int flags) {
  long waited_us = 0, pause_us = 500;
  while (init_ns_join(c->init_ns, flags) < 0) {
    if (errno != EPERM || c->init_ns->pidfd < 0 || waited_us >= JOIN_WAIT_FOR_EXECVE_MS * 1000L)
      return -1;
    usleep((useconds_t)pause_us);
    waited_us += pause_us;
    pause_us = pause_us < 64000 ? pause_us * 2 : pause_us;
  }
  return 0;
}

static int child_join_namespaces(struct exec_child *c, fsrun_error_t *err) {
  int flags = c->ns_flags;
  if (flags == 0)
    return 0;
  if (join_waiting_for_execve(c, flags) == 0)
    return 0;
  /* a container that shares the caller's user namespace (joined by path): EINVAL for it alone */
  if (errno == EINVAL && c->join_user && init_ns_join(c->init_ns, flags & ~CLONE_NEWUSER) == 0)
    return 0;
  if (errno == EINVAL)
    return fsrun_error_errno(err,
                             "join the container's namespaces (setns 0x%x on the init's pidfd, "
                             "which needs Linux 5.8)",
                             flags);
  return fsrun_error_errno(err, "join the container's namespaces (setns 0x%x)", flags);
}

/* Closes every fd >= first except keep. No allocation, nothing that needs /proc. */
static void close_fds_from(int first, int keep) {
  close_fds_except(first, &keep, 1);
}

static int child_join_cgroup(const struct exec_child *c, fsrun_error_t *err);

/* In the runtime's pid namespace: the cgroup, the scheduler (in the container's cgroup, for its
 * real-time budget, before setns(user) takes CAP_SYS_NICE), then every namespace of the container
 * but the pid namespace; its root becomes ours. */
static void child_enter_container(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  if (c->attrs != NULL &&
      process_attrs_apply_cpu_affinity(c->attrs, CPU_AFFINITY_INITIAL, &err) < 0)
    child_fail(c, &err);
  /* before setns(mnt), while /sys/fs/cgroup is still the host's */
  if (c->cg_join != NULL && child_join_cgroup(c, &err) < 0)
    child_fail(c, &err);
  if (c->scheduler != NULL &&
      (c->pid_late ? process_attrs_apply_scheduler_before_clone(c->scheduler, &err)
                   : process_attrs_apply_scheduler(c->scheduler, 0, &err)) < 0)
    child_fail(c, &err);
  if (c->git != NULL && (c->git_tree_fd = exec_git_child_grab(c->git, c->init_ns, c->join_user,
                                                              &c->git_proc_fds, &err)) < 0)
    child_fail(c, &err);
  if (child_join_namespaces(c, &err) < 0)
    child_fail(c, &err);
  if (!c->pid_after_courier)
    init_ns_close(c->init_ns);
  if (c->init_root_fd >= 0 && (fchdir(c->init_root_fd) < 0 || chroot(".") < 0)) {
    fsrun_error_errno(&err, "enter the container's root (chroot)");
    child_fail(c, &err);
  }
  if (c->init_root_fd >= 0)
    close(c->init_root_fd);
}

/* process.terminal (terminal_give_process): the slave becomes the controlling terminal of the
 * process that execs (child_exec) */
static void child_open_terminal(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  int slave = terminal_give_process(c->p, c->sync_fd, &err);
  if (slave < 0)
    child_fail(c, &err);
  if (slave > STDERR_FILENO)
    close(slave);
}

/* pid_after_courier: the container's pid namespace, for our children (setns wants
 * CAP_SYS_ADMIN) */
static void child_enter_pidns(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  if (c->pid_after_courier && init_ns_join(c->init_ns, CLONE_NEWPID) < 0) {
    fsrun_error_errno(&err, "join the container's pid namespace (setns)");
    child_fail(c, &err);
  }
}

/* A NOTIFY profile with noNewPrivileges and a pid namespace: loaded before the clone into it, as
 * any other profile is (filter_before_clone). Its courier must be cloned before setns(pid) (it
 * would be born visible there, unfiltered) and the load comes after the credentials, whose
 * syscalls the profile need not allow; the listener's fd number is predicted at the courier's
 * clone (seccomp-handover.h). So the fds are closed first, but for the init's namespace fds that
 * the setns needs; those are closed under the filter, and Landlock (which opens fds) is applied
 * there too: the profile must allow it, as for the init (docs/process-model.md). */
static void child_take_credentials_notify(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  struct seccomp_handover handover = {0};
  int keep[2 + INIT_NS_MAX] = {c->sync_fd, c->init_ns->pidfd};
  size_t n = 2;
  for (int i = 0; i < c->init_ns->n; i++)
    keep[n++] = c->init_ns->fds[i];
  close_fds_except(3 + c->preserve_fds, keep, n);
  if (seccomp_handover_start(c->seccomp, c->sync_fd, &handover, &err) < 0)
    child_fail(c, &err);
  child_enter_pidns(c);
  if (process_take_credentials(c->p, &err) < 0 ||
      (c->attrs != NULL &&
       process_attrs_apply_cpu_affinity(c->attrs, CPU_AFFINITY_FINAL, &err) < 0) ||
      seccomp_handover_load(c->seccomp, &handover, &err) < 0)
    child_fail(c, &err);
  init_ns_close(c->init_ns);
  if (c->landlock != NULL && landlock_apply(c->landlock, &err) < 0)
    child_fail(c, &err);
}

/* The process's credentials and confinement, each step while we still have what it needs. */
static void child_take_credentials(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->p;
  struct seccomp_handover handover = {0};
  bool filter_first = c->seccomp != NULL && !p->no_new_privileges;
  /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN: before the caps are dropped, and
   * with the pid namespace entered before it (the filter may refuse setns). A NOTIFY profile's
   * courier is cloned before that: in the pid namespace it would be born visible to the container
   * with our privilege (pid_after_courier). */
  if (filter_first && seccomp_handover_start(c->seccomp, c->sync_fd, &handover, &err) < 0)
    child_fail(c, &err);
  child_enter_pidns(c);
  if (filter_first && seccomp_handover_load(c->seccomp, &handover, &err) < 0)
    child_fail(c, &err);
  if (c->pid_after_courier)
    init_ns_close(c->init_ns);
  if (process_take_credentials(p, &err) < 0)
    child_fail(c, &err);
  if (c->attrs != NULL && process_attrs_apply_cpu_affinity(c->attrs, CPU_AFFINITY_FINAL, &err) < 0)
    child_fail(c, &err);
  /* the exec'd process is not the init's child: it gets the container's Landlock domain here */
  if (c->landlock != NULL && landlock_apply(c->landlock, &err) < 0)
    child_fail(c, &err);
  /* invariant 2: nothing above the preserved fds reaches execve, and they are closed now, not
   * only marked CLOEXEC: execve resolves its path (which a symlink in the image may send through
   * /proc/self/fd/N) before it closes CLOEXEC fds, and a host directory fd would lead out of the
   * container there. The sync socket stays open (CLOEXEC): its closing tells the parent that
   * execve succeeded. */
  close_fds_from(3 + c->preserve_fds, c->sync_fd);
}

/* Everything that needs the runtime's privilege, while the container cannot see us: the git
 * overlay, the pty, the cwd, rlimits, the process attributes (LSM labels for the next execve,
 * I/O priority, personality: inherited by the clone), and last the credentials. */
static void child_setup(struct exec_child *c, char **exe, char **home_env) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->p;
  /* root of the container's user namespace while setting up (the pty is then its own) */
  if (c->join_user && process_become_userns_root(&err) < 0)
    child_fail(c, &err);
  if (c->git != NULL && exec_git_child_mount(c->git, c->git_tree_fd, c->git_proc_fds, &err) < 0)
    child_fail(c, &err);
  /* a session keyring of our own: the caller's keys are none of the container's business */
  (void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0, 0, 0);
  if (p->terminal)
    child_open_terminal(c);
  if (child_enter_cwd(p->cwd, &err) < 0)
    child_fail(c, &err);
  /* in the container's root, before the rlimits, the filter and the user can get in the way */
  *home_env = passwd_home_env(&p->env, p->user.uid);
  if (process_resolve_executable(p->args.items[0], &p->env, exe, &err) < 0)
    child_fail(c, &err);
  if (process_apply_rlimits(p, &err) < 0)
    child_fail(c, &err);
  if (c->attrs != NULL && process_attrs_apply(c->attrs, c->procfs_fd, &err) < 0)
    child_fail(c, &err);
  if (c->procfs_fd >= 0)
    close(c->procfs_fd); /* the host's procfs */
  c->procfs_fd = -1;
  if (c->pid_after_courier && c->p->no_new_privileges)
    child_take_credentials_notify(c);
  else
    child_take_credentials(c);
}

/* With noNewPrivileges, a filter loaded before the clone into the pid namespace (pid_late), as
 * one without it is (child_take_credentials): else the process would be in the container's pid
 * namespace unfiltered, and with CAP_SYS_PTRACE (non-dumpable asks for it in the host's user
 * namespace, which a container without a user namespace has) the container could seize it and
 * run in it any system call its profile denies. The profile must then allow what is left before
 * execve (docs/process-model.md). A NOTIFY one is loaded with the credentials
 * (child_take_credentials_notify), the others here. */
static bool filter_before_clone(const struct exec_child *c) {
  return c->pid_late && c->seccomp != NULL && c->p->no_new_privileges;
}

static void child_load_filter_before_clone(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  if (!filter_before_clone(c) || seccomp_has_notify(c->seccomp))
    return;
  if (child_load_filter(c, &err) < 0)
    child_fail(c, &err);
}

/* pid_late: the process born in the pid namespace we joined becomes the parent's child
 * (CLONE_PARENT: its exit is the parent's to wait for); we report its pid and exit. Returns in it.
 * It inherits our credentials, filter, Landlock domain, attributes, cwd and fds. */
static void clone_into_pid_namespace(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  /* no told: exec_follow_setup takes our pid and the sibling's messages in either order */
  long pid = clone_successor(c->sync_fd, c->send_successor_pidfd, NULL);
  if (pid < 0 && errno == EPIPE)
    _exit(1);
  if (pid < 0) {
    fsrun_error_errno(&err, "clone the exec process into the container's pid namespace%s",
                      c->seccomp != NULL ? " (under the container's seccomp filter)" : "");
    child_fail(c, &err);
  }
  if (pid > 0)
    _exit(0);
  if (process_attrs_apply_scheduler_after_clone(c->scheduler, &err) < 0)
    child_fail(c, &err);
}

/* The parent's SYNC_GO: our pid is in the pid file. At an EOF the parent died before it wrote it,
 * and the command must never run. read(2), not recvmsg: a filter loaded already (without
 * noNewPrivileges) need not allow more than it did before the pid file moved here. */
static void child_wait_go(struct exec_child *c) {
  cleanup_error fsrun_error_t err = NULL;
  uint32_t type = 0;
  int r = sync_recv_type(c->sync_fd, &type);
  if (r == -EPIPE)
    _exit(1);
  if (r < 0 || type != SYNC_GO) {
    if (r < 0)
      fsrun_error_make(&err, -r, "exec: wait for the runtime's go");
    else
      fsrun_error_make(&err, 0, "exec: wait for the runtime's go: unexpected message");
    child_fail(c, &err);
  }
}

/* What is left: a session of our own (the caller's terminal signals reach us only through the
 * parent's forwarding) with the pty as its controlling terminal, a filter that needs no privilege
 * (no_new_privs), and execve. */
__attribute__((noreturn)) static void child_exec(struct exec_child *c, const char *exe,
                                                 char *home_env) {
  cleanup_error fsrun_error_t err = NULL;
  const oci_process *p = c->p;
  bool filter_last = c->seccomp != NULL && p->no_new_privileges && !filter_before_clone(c);
  int notify_fd = -1;
  if (p->terminal && terminal_take_controlling(STDIN_FILENO, &err) < 0)
    child_fail(c, &err);
  if (!p->terminal && setsid() < 0) {
    fsrun_error_errno(&err, "setsid");
    child_fail(c, &err);
  }
  /* a NOTIFY filter is loaded here, not last: its fd must reach the parent (then the listener) */
  if (filter_last && seccomp_has_notify(c->seccomp) && child_load_filter(c, &err) < 0)
    child_fail(c, &err);
  /* from here the process outlives the runtime (--detach) */
  if (prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) < 0) {
    fsrun_error_errno(&err, "prctl(PR_SET_PDEATHSIG)");
    child_fail(c, &err);
  }
  /* Tells the parent that an EOF from now on means execve: before this, it means that we died
   * (whatever killed us), a failed exec. A filter loaded already (without noNewPrivileges) must
   * allow sendmsg, as it must for the init's last message to `create`. */
  if (sync_send(c->sync_fd, SYNC_EXEC_READY, 0, NULL, 0, -1) < 0)
    _exit(1);
  if (c->wait_go)
    child_wait_go(c);
  /* with no_new_privs the filter is the last step, as for the init: it never has to allow what
   * the runtime still does before execve */
  if (filter_last && !seccomp_has_notify(c->seccomp) &&
      seccomp_load_filter(c->seccomp, &notify_fd, &err) < 0)
    child_fail(c, &err);
  execve(exe, p->args.items, env_with(&p->env, home_env));
  {
    int saved = errno;
    fsrun_error_make(&err, 0, "exec: \"%s\": %s", p->args.items[0],
                     saved == ENOENT   ? "no such file or directory"
                     : saved == EACCES ? "permission denied"
                                       : strerror(saved));
    child_fail(c, &err);
  }
}

__attribute__((noreturn)) static void exec_child_main(struct exec_child *c) {
  cleanup_free char *exe = NULL, *home_env = NULL;

  close(c->parent_sync_fd);
  /* the parent's, not ours to keep (the cgroup stays open in the parent) */
  if (c->cgroup_fd >= 0)
    close(c->cgroup_fd);
  if (c->init_cgroup_fd >= 0)
    close(c->init_cgroup_fd);
  /* until execve, the child dies with the runtime: no half-set-up process is left behind */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || sync_peer_gone(c->sync_fd))
    _exit(1);
  /* invariant 1: nothing in the container may ptrace us or open our /proc/PID/exe (the runtime's
   * binary) while we are still the runtime */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    _exit(1);
  sigprocmask(SIG_SETMASK, c->sigmask, NULL);

  child_enter_container(c);
  child_setup(c, &exe, &home_env);
  c->exe = exe;
  c->home_env = home_env;
  if (c->pid_late) {
    child_load_filter_before_clone(c);
    clone_into_pid_namespace(c);
  }
  child_exec(c, exe, home_env);
}

/* --- the parent ------------------------------------------------------------------------------ */

/* The init's root (a container without a mount namespace of its own has only that, its chroot):
 * the start time is checked after the open. */
static int open_init_root(const struct container_status *st, fsrun_error_t *err) {
  cleanup_free char *path = xasprintf("/proc/%d/root", (int)st->pid);
  int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open the container init's root `%s`", path);
  if (!status_init_alive(st)) {
    close(fd);
    return fsrun_error_make(err, ESRCH, "cannot exec in a stopped container: `%s`", st->id);
  }
  return fd;
}

/* The filter create compiled and kept beside the config exec reads; compiled from the config
 * where there is none (a state of an earlier fsrun) or it is not one this fsrun wrote. */
static int exec_seccomp(const struct fsrun_context *ctx, const char *id, const oci_seccomp *s,
                        struct fsrun_seccomp **out, fsrun_error_t *err) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *bytes = NULL;
  cleanup_close int dirfd = status_dir_open(ctx, id, &ignored);
  size_t len = 0;
  *out = NULL;
  if (dirfd >= 0 && read_file_at_nofollow(dirfd, STATUS_SECCOMP_FILE, &bytes, &len, &ignored) == 0)
    *out = seccomp_deserialize(bytes, len);
  if (*out != NULL)
    return 0;
  return seccomp_compile(s, out, err);
}

/* CLONE_NEW* of every namespace config.json gives the container: those the init has that the
 * host does not. The others are shared with the host, so there is nothing to join. */
static int container_namespace_flags(const oci_config *config) {
  int flags = 0;
  for (size_t i = 0; config->linux_ != NULL && i < config->linux_->n_namespaces; i++)
    flags |= namespace_flag(config->linux_->namespaces[i].type);
  return flags;
}

/* Where exec goes when the container's v2 cgroup is no longer a leaf. Someone in the container
 * (systemd, a nested runtime) created sub-cgroups and enabled controllers in its
 * cgroup.subtree_control; the kernel then refuses new processes there (EBUSY, the "no internal
 * processes" rule) and the init has had to move below. As runc does, the exec'd process joins the
 * cgroup the init is in now; fsrun accepts it only strictly below the container's own cgroup
 * (opened beneath it, no symlinks), so the container cannot send the process elsewhere. Returns
 * an O_PATH fd of it, or a negative code. */
static int open_init_cgroup(const struct fsrun_cgroup *cg, pid_t init, char **shown,
                            fsrun_error_t *err) {
  cleanup_free char *proc_path = xasprintf("/proc/%d/cgroup", (int)init);
  cleanup_free char *text = NULL;
  const char *base = cgroup_path(cg), *line, *rel;
  size_t base_len;
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};
  long fd;

  if (read_file_at(AT_FDCWD, proc_path, &text, NULL, err) < 0)
    return fsrun_error_wrap(err, "find the container init's cgroup");
  /* the v2 line: "0::/path" */
  for (line = text; line != NULL && strncmp(line, "0::", 3) != 0;
       line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    ;
  if (line == NULL)
    return fsrun_error_make(err, ENOENT, "the container init is in no cgroup v2");
  line += 3;
  *shown = strndup(line, strcspn(line, "\n"));
  if (*shown == NULL)
    abort();
  base_len = strlen(base);
  while (base_len > 0 && base[base_len - 1] == '/')
    base_len--;
  if (strncmp(*shown, base, base_len) != 0 || (*shown)[base_len] != '/' ||
      (*shown)[base_len + 1] == '\0')
    return fsrun_error_make(err, 0, "the container init's cgroup `%s` is not below the container's",
                            *shown);
  rel = *shown + base_len + 1;
  fd = openat2_compat(cgroup_unified_fd(cg), rel, &how);
  if (fd < 0)
    return fsrun_error_errno(err, "open the container init's cgroup `%s`", *shown);
  return (int)fd;
}

/* The child's cgroup.procs (v1, or no clone3): "0" is the writer itself, whatever pid namespace it
 * is in. On v2, when the container's cgroup is no leaf (EBUSY), the init's cgroup below it instead,
 * as clone_into_init_cgroup() does with clone3. */
static int child_join_cgroup(const struct exec_child *c, fsrun_error_t *err) {
  cleanup_error fsrun_error_t why = NULL;
  cleanup_free char *init_cgroup = NULL;
  cleanup_close int dir = -1;
  int ret =
      c->cg_join_v1_only ? cgroup_enter_v1(c->cg_join, 0, err) : cgroup_enter(c->cg_join, 0, err);
  if (ret != -EBUSY || cgroup_unified_fd(c->cg_join) < 0)
    return ret;
  dir = open_init_cgroup(c->cg_join, c->init_pid, &init_cgroup, &why);
  if (dir < 0)
    return fsrun_error_make(err, 0,
                            "join the container's cgroup `%s`: Device or resource busy (it is not "
                            "a leaf), and joining the init's cgroup instead failed: %s",
                            cgroup_path(c->cg_join), why->msg);
  fsrun_error_release(err);
  if (write_file_at(dir, "cgroup.procs", "0", 1, err) < 0)
    return fsrun_error_wrap(err, "join the container init's cgroup `%s`", init_cgroup);
  return 0;
}

/* After clone3 into the container's cgroup failed with EBUSY: clone3 into the init's instead.
 * Returns as clone3 does (0 in the child), or -1 with err set. */
static long clone_into_init_cgroup(const struct live_container *c, struct fsrun_clone_args *args,
                                   struct exec_child *child_cfg, int *fd, fsrun_error_t *err) {
  cleanup_error fsrun_error_t why = NULL;
  cleanup_free char *init_cgroup = NULL;
  long child;
  *fd = open_init_cgroup(c->cg, c->st.pid, &init_cgroup, &why);
  if (*fd < 0)
    return fsrun_error_make(err, 0,
                            "clone3 the exec process into the container's cgroup `%s`: Device or "
                            "resource busy (it is not a leaf: controllers are enabled for its "
                            "sub-cgroups), and joining the init's cgroup instead failed: %s",
                            cgroup_path(c->cg), why->msg);
  log_debug("exec: the container's cgroup `%s` is not a leaf: joining the init's, `%s`",
            cgroup_path(c->cg), init_cgroup);
  args->cgroup = (uint64_t)*fd;
  child_cfg->init_cgroup_fd = *fd;
  child = fsrun_clone(args);
  if (child < 0)
    fsrun_error_errno(err, "clone3 the exec process into the container init's cgroup `%s`",
                      init_cgroup);
  return child;
}

/* process.oomScoreAdj for the exec'd process, set on ourselves before the clone so that the child
 * inherits it: the child cannot write its own /proc entry safely (it is non-dumpable inside the
 * container's pid namespace) and a write by us after the clone would race its execve. */
static int set_own_oom_score_adj(int value, fsrun_error_t *err) {
  cleanup_close int procfs_fd = procfs_open(err);
  pid_t self;
  if (procfs_fd < 0)
    return procfs_fd;
  self = procfs_self_pid(procfs_fd);
  if (self <= 0)
    return fsrun_error_errno(err, "process.oomScoreAdj: read `/proc/self`");
  return procfs_set_oom_score_adj(procfs_fd, self, value, err);
}

static bool has_lsm_label(const struct fsrun_process_attrs *a) {
  return a != NULL && (a->apparmor_profile != NULL || a->selinux_label != NULL);
}

/* The child's cgroup at its birth (CLONE_INTO_CGROUP): the container's on cgroup v2; on a hybrid
 * host its cgroup2 directory, so that only the v1 hierarchies are left for the child to join
 * through `tasks`, none through cgroup.procs and the kernel's global threadgroup lock (whose
 * first writer after a quiet spell waits for an RCU grace period). */
static void clone_into_cgroup_at_birth(const struct fsrun_cgroup *cg, struct fsrun_clone_args *args,
                                       struct exec_child *child_cfg) {
  int fd = cgroup_clone_fd(cg);
  child_cfg->cg_join_v1_only = fd < 0 && cgroup_hybrid_clone_fd(cg) >= 0;
  if (child_cfg->cg_join_v1_only)
    fd = cgroup_hybrid_clone_fd(cg);
  child_cfg->cgroup_fd = fd;
  if (fd >= 0) {
    args->flags |= FSRUN_CLONE_INTO_CGROUP;
    args->cgroup = (uint64_t)fd;
  }
}

/* clone3 into a hybrid host's cgroup2 directory refused (EBUSY: the container made it no leaf):
 * the child joins every hierarchy itself, as without it (and meets the same refusal there). */
static long clone_without_hybrid_cgroup(struct fsrun_clone_args *args,
                                        struct exec_child *child_cfg) {
  args->flags &= ~(uint64_t)FSRUN_CLONE_INTO_CGROUP;
  args->cgroup = 0;
  child_cfg->cg_join_v1_only = false;
  child_cfg->cgroup_fd = -1;
  return fsrun_clone(args);
}

/* The scheduler is set first (child_enter_container), the rest of the attributes later: rest is
 * them without it. */
static void child_cfg_set_attrs(struct exec_child *child_cfg, const struct fsrun_process_attrs *a,
                                struct fsrun_process_attrs *rest) {
  child_cfg->attrs = a;
  child_cfg->scheduler = NULL;
  if (a == NULL || !a->has_scheduler)
    return;
  child_cfg->scheduler = a;
  *rest = *a;
  rest->has_scheduler = false;
  child_cfg->attrs = rest;
}

/* A task container's exec runs in a Landlock domain of its own (landlock.h, isolate), so that none
 * of its processes can write the memory of the container's init or of config.json's process and
 * run there after the exec's walk (exec-leftovers.h). Whether it does: only then can an exec's
 * walk be final. */
static bool exec_isolate(const oci_config *config, struct fsrun_landlock_rules **landlock) {
  if (oci_map_get(&config->annotations, EXEC_GIT_ANNOTATION) == NULL ||
      !config->process->no_new_privileges || landlock_abi_version() <= 0)
    return false;
  if (*landlock == NULL)
    *landlock = landlock_rules_new("exec: task container");
  (*landlock)->isolate = true;
  return true;
}

int container_exec(const struct fsrun_context *ctx, const struct exec_options *o, int *exit_status,
                   fsrun_error_t *err) {
  cleanup_live struct live_container c = {0};
  cleanup_oci_config oci_config *config = NULL;
  cleanup_seccomp struct fsrun_seccomp *seccomp = NULL;
  cleanup_process_attrs struct fsrun_process_attrs *attrs = NULL;
  cleanup_landlock_rules struct fsrun_landlock_rules *landlock = NULL;
  cleanup_close int state_dir_fd = -1;
  cleanup_close int console_fd = -1;
  __attribute__((cleanup(init_ns_close))) struct init_ns init_ns = {.pidfd = -1};
  cleanup_close int procfs_fd = -1;
  cleanup_close int child_pidfd = -1;
  cleanup_close int init_pidfd = -1;
  cleanup_close int relay_master = -1;
  cleanup_close int init_cgroup_fd = -1;
  cleanup_close int init_root_fd = -1;
  cleanup_exec_status struct exec_status status = {.fd = -1};
  cleanup_exec_git struct exec_git git = {.run_dir_fd = -1, .state_dir_fd = -1};
  const oci_linux *lx;
  oci_process *p;
  struct exec_child child_cfg;
  struct exec_follow follow;
  struct fsrun_process_attrs attrs_rest;
  struct fsrun_clone_args args;
  sigset_t blocked, old_mask;
  int sync_fds[2] = {-1, -1};
  int ns_flags, ret;
  long child;
  bool has_container_oom, isolated;
  int container_oom;

  if (o->preserve_fds < 0)
    return fsrun_error_make(err, 0, "--preserve-fds: must not be negative");
  if (o->status_json != NULL && o->detach)
    return fsrun_error_make(err, 0, "--status-json: cannot be used with --detach (nothing waits)");
  if (o->kill_group && o->detach)
    return fsrun_error_make(err, 0, "--kill-group: cannot be used with --detach (nothing waits)");

  /* --- the container ---------------------------------------------------------------------- */
  ret = live_open_pinned(ctx, o->id, &c, &init_pidfd, err);
  if (ret < 0)
    return ret;
  if (strcmp(c.status, "stopped") == 0)
    return fsrun_error_make(err, 0, "cannot exec in a stopped container: `%s`", o->id);
  if (strcmp(c.status, "creating") == 0)
    return fsrun_error_make(err, 0, "cannot exec in container `%s`: it is still being created",
                            o->id);
  if (strcmp(c.status, "paused") == 0 && !o->ignore_paused)
    return fsrun_error_make(err, 0,
                            "container `%s` is paused: cannot exec in a paused container (use "
                            "--ignore-paused to override)",
                            o->id);

  /* --- the process: everything is checked before anything is started ------------------------ */
  /* the config as `create` saw it: the bundle may have been changed or removed since (live_open
   * read it already to find the cgroup, unless the container has none) */
  config = c.config;
  c.config = NULL;
  if (config == NULL) {
    state_dir_fd = status_dir_open(ctx, o->id, err);
    if (state_dir_fd < 0)
      return state_dir_fd;
    ret = status_read_config(state_dir_fd, c.st.bundle, &config, err);
    if (ret < 0)
      return ret;
    close(steal_fd(&state_dir_fd));
  }
  /* a sandbox that left a secret file uncovered, which this caller could read */
  ret = sandbox_uncovered_exec_check(config, err);
  if (ret < 0)
    return ret;
  /* --process replaces the container's process; the container's oomScoreAdj stays the default
   * for a process.json without one (runc gives every exec'd process the container's score) */
  has_container_oom = config->process != NULL && config->process->has_oom_score_adj;
  container_oom = has_container_oom ? config->process->oom_score_adj : 0;
  ret = exec_build_process(&config->process, o, err);
  if (ret < 0)
    return ret;
  p = config->process;
  lx = config->linux_;
  /* --env replaces the bundle's GIT_CONFIG_COUNT: fsrun's entries are merged in again */
  if (oci_map_get(&config->annotations, EXEC_GIT_ANNOTATION) != NULL)
    sandbox_git_env(&p->env);
  if (p->terminal && o->detach && o->console_socket == NULL)
    return fsrun_error_make(err, 0,
                            "exec: a terminal with --detach needs --console-socket to receive the "
                            "pty");
  if (!p->terminal && o->console_socket != NULL)
    return fsrun_error_make(err, 0,
                            "exec: --console-socket given but the process has no terminal (add "
                            "--tty)");
  if (lx != NULL && lx->seccomp != NULL && exec_seccomp(ctx, o->id, lx->seccomp, &seccomp, err) < 0)
    return fsrun_error_code(err);
  if (process_attrs_prepare(p, NULL, &attrs, err) < 0)
    return fsrun_error_code(err);
  if (landlock_rules_from_config(config, &landlock, err) < 0)
    return fsrun_error_code(err);
  isolated = exec_isolate(config, &landlock);
  ns_flags = container_namespace_flags(config);

  if (o->console_socket != NULL) {
    console_fd = terminal_connect_console_socket(o->console_socket, err);
    if (console_fd < 0)
      return console_fd;
  }
  ret = init_ns_open(&init_ns, &c.st, ns_flags, steal_fd(&init_pidfd), err);
  if (ret < 0)
    return ret;
  if (!(ns_flags & CLONE_NEWNS)) {
    init_root_fd = open_init_root(&c.st, err);
    if (init_root_fd < 0)
      return init_root_fd;
  }
  if (has_lsm_label(attrs)) {
    /* the container's /proc is the container's to fake: label writes go through our own */
    procfs_fd = procfs_open(err);
    if (procfs_fd < 0)
      return procfs_fd;
  }
  /* without it, the process would keep our caller's score (a containerd shim's, one above
   * containerd's own): a Kubernetes exec probe in a BestEffort pod would be shielded from the
   * OOM killer like the node's daemons */
  if ((p->has_oom_score_adj || has_container_oom) &&
      set_own_oom_score_adj(p->has_oom_score_adj ? p->oom_score_adj : container_oom, err) < 0)
    return fsrun_error_code(err);
  if (o->status_json != NULL && exec_status_open(&status, o->status_json, c.cg, err) < 0)
    return fsrun_error_code(err);
  /* --detach: nothing is left to apply the overlay's changes, the bundle's binds stay */
  if (!o->detach && exec_git_prepare(&git, ctx, o->id, config, err) < 0)
    return fsrun_error_code(err);
  if (sync_socketpair(sync_fds, err) < 0)
    return fsrun_error_code(err);

  memset(&child_cfg, 0, sizeof(child_cfg));
  child_cfg.p = p;
  child_cfg.sync_fd = sync_fds[1];
  child_cfg.parent_sync_fd = sync_fds[0];
  child_cfg.init_ns = &init_ns;
  child_cfg.send_successor_pidfd = init_ns.pidfd < 0;
  child_cfg.ns_flags = ns_flags & ~CLONE_NEWPID;
  child_cfg.join_user = (ns_flags & CLONE_NEWUSER) != 0;
  child_cfg.cg_join = c.cg != NULL && cgroup_clone_fd(c.cg) < 0 ? c.cg : NULL;
  child_cfg.init_pid = c.st.pid;
  child_cfg.seccomp = seccomp;
  child_cfg_set_attrs(&child_cfg, attrs, &attrs_rest);
  child_cfg.landlock = landlock;
  child_cfg.procfs_fd = procfs_fd;
  child_cfg.cgroup_fd = -1;
  child_cfg.init_cgroup_fd = -1;
  child_cfg.preserve_fds = o->preserve_fds;
  child_cfg.sigmask = &old_mask;
  child_cfg.init_root_fd = init_root_fd;
  child_cfg.git = git.run_dir_fd >= 0 ? &git : NULL;
  child_cfg.git_tree_fd = -1;
  child_cfg.git_proc_fds = -1;
  child_cfg.wait_go = !o->detach && o->pid_file != NULL;

  memset(&args, 0, sizeof(args));
  args.flags = CLONE_PIDFD;
  args.pidfd = (uint64_t)(uintptr_t)&child_pidfd;
  args.exit_signal = SIGCHLD;
  if (c.cg != NULL)
    clone_into_cgroup_at_birth(c.cg, &args, &child_cfg);

  /* the foreground forwards signals: blocked from before the clone, the child restores the mask */
  foreground_signals(&blocked);
  sigprocmask(SIG_BLOCK, o->detach ? NULL : &blocked, &old_mask);

  /* The process the container can see is born inside, with the container's credentials: the
   * child joins every namespace (the mount namespace makes the container's root its own; the pid
   * namespace applies to its children only), sets the process up to its credentials and filter,
   * and clones the process that execs into the pid namespace from there. Joined here, the child
   * would be visible in the container while still in the host's mount namespace. */
  child_cfg.pid_late = (ns_flags & CLONE_NEWPID) != 0;
  child_cfg.pid_after_courier = child_cfg.pid_late && seccomp_has_notify(seccomp);
  if (child_cfg.pid_late && !child_cfg.pid_after_courier)
    child_cfg.ns_flags |= CLONE_NEWPID;
  child = fsrun_clone(&args);
  if (child < 0 && errno == EBUSY && child_cfg.cg_join_v1_only)
    child = clone_without_hybrid_cgroup(&args, &child_cfg);
  if (child < 0 && errno == EBUSY && (args.flags & FSRUN_CLONE_INTO_CGROUP))
    child = clone_into_init_cgroup(&c, &args, &child_cfg, &init_cgroup_fd, err);
  else if (child < 0)
    fsrun_error_errno(err, "clone the exec process%s",
                      (args.flags & FSRUN_CLONE_INTO_CGROUP) ? " into the container's cgroup" : "");
  if (child == 0)
    exec_child_main(&child_cfg); /* never returns */
  if (child < 0)
    ret = fsrun_error_code(err);
  if (child < 0)
    goto out;
  close(sync_fds[1]);
  sync_fds[1] = -1;

  follow = (struct exec_follow){.sync_fd = sync_fds[0],
                                .console_fd = console_fd,
                                .config = config,
                                .c = &c,
                                .pid_late = child_cfg.pid_late,
                                .child = (pid_t)child,
                                .pidfd = steal_fd(&child_pidfd),
                                .pid_file = o->pid_file,
                                .go_after_pid_file = child_cfg.wait_go};
  ret = exec_follow_setup(&follow, err);
  child_pidfd = follow.pidfd;
  relay_master = follow.master;
  if (ret < 0) {
    /* a failed setup, or a pid file not written: the caller cannot manage a process whose pid it
     * never learnt */
    siginfo_t info;
    (void)pidfd_signal_child(child_pidfd, SIGKILL);
    foreground_reap(child_pidfd, &info);
    goto out;
  }
  ret = 0;
  if (!o->detach) {
    siginfo_t info;
    /* --kill-group: killed here while the pid still names the command's group; a caller killing
     * it later by the pid file's number could hit a group that took the number since (review23
     * A4) */
    pid_t group = o->kill_group ? follow.child : 0;
    *exit_status = foreground_wait_group(child_pidfd, group, relay_master, &blocked, &info);
    /* before the walk: when nothing of an exec is left, nothing plants after it (a count over a
     * procfs of the container's pid namespace, said only in --status-json) */
    if (exec_git_active(&git))
      git.left_running =
          o->status_json == NULL || !isolated || exec_left_running(&init_ns, c.st.pid, ns_flags);
    status.extra_json = exec_git_finish(&git);
    ret = exec_status_write(&status, &info, c.cg, err);
  }

out:
  for (int i = 0; i < 2; i++)
    if (sync_fds[i] >= 0)
      close(sync_fds[i]);
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  return ret;
}
