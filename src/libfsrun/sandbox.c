/* Fusion SandboxPolicy -> OCI config (design.md, "Mapping to the OCI spec"), and `fsrun bundle`.
 * Only the config is built here; the runtime does the rest (it creates the mount points in the
 * empty root, as it does for any bundle). */
#include "sandbox.h"
#include "bind-identity.h"
#include "bundle-mark.h"
#include "sandbox-etc.h"
#include "exec-git.h"
#include "sandbox-git.h"
#include "sandbox-limits.h"
#include "sandbox-path-owners.h"
#include "sandbox-paths.h"
#include "sandbox-runmask.h"
#include "sandbox-spelling.h"
#include "sandbox-checkouts.h"
#include "sandbox-kernel-paths.h"
#include "sandbox-state-root.h"
#include "sandbox-system-dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "json-out.h"
#include "landlock.h"
#include "reaper.h"
#include "netlink.h"
#include "sandbox-net.h"
#include "log.h"
#include "spec.h"
#include "mounts.h"
#include "sha256.h"
#include "state-root.h"
#include "utils.h"

/* --- small builders --------------------------------------------------------------------------- */

static void strv_init_empty(oci_strv *v) {
  v->items = xmalloc0(sizeof(char *));
  v->len = 0;
}

static void strv_push_list(oci_strv *v, const char *const *items) {
  for (; *items != NULL; items++)
    oci_strv_push(v, *items);
}

void add_mount(struct mount_list *l, const char *dest, const char *type, const char *source,
               const char *const *options) {
  oci_mount *items = realloc(l->items, sizeof(oci_mount) * (l->len + 1));
  if (items == NULL)
    abort();
  l->items = items;
  oci_mount *m = &l->items[l->len++];
  memset(m, 0, sizeof(*m));
  m->destination = xstrdup(dest);
  m->type = xstrdup(type);
  m->source = xstrdup(source);
  strv_init_empty(&m->options);
  strv_push_list(&m->options, options);
}

static size_t path_depth(const char *path) {
  size_t n = 0;
  for (const char *p = path; *p; p++)
    if (*p == '/' && p[1] != '\0' && p[1] != '/')
      n++;
  return n;
}

/* Parents before children (a bind under $HOME must come after the tmpfs on $HOME); stable, so
 * that a later entry for the same path still wins. */
static void sort_mounts_by_depth(struct mount_list *l) {
  for (size_t i = 1; i < l->len; i++) {
    oci_mount m = l->items[i];
    size_t depth = path_depth(m.destination), j = i;
    while (j > 0 && path_depth(l->items[j - 1].destination) > depth) {
      l->items[j] = l->items[j - 1];
      j--;
    }
    l->items[j] = m;
  }
}

bool path_within(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (strcmp(dir, "/") == 0)
    return true;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* --- the config ------------------------------------------------------------------------------ */

/* What holds password hashes: the shadow files, the backups shadow(8) tools leave beside them
 * (`-`), Debian's daily backups (/var/backups, cron's passwd job) and pam_pwhistory's old hashes.
 * Each is root's and mode 0600 or 0640 (group shadow), so uid 0 inside owns them (and an ordinary
 * caller in group shadow may read them): not masked with /dev/null (that reads as empty, so `cat`
 * succeeds) but covered by an empty file of mode 0, which nobody without CAP_DAC_OVERRIDE can
 * open. Only where a bind brings the host's file in (cover_secret_files): root's /etc is
 * sandbox_etc_mounts' allowlist, which has none of them. (/etc/.pwd.lock, 0600 too, is an empty
 * lock file: nothing to hide.) */
static const char *const secret_files[] = {"/etc/shadow",
                                           "/etc/gshadow",
                                           "/etc/shadow-",
                                           "/etc/gshadow-",
                                           "/etc/security/opasswd",
                                           "/var/backups/shadow.bak",
                                           "/var/backups/gshadow.bak",
                                           NULL};
/* The directories a bind of which shows a secret file (each above one, "/" included). */
static const char *const secret_dirs[] = {"/", "/etc", "/etc/security", "/var", "/var/backups"};
#define N_SECRET_DIRS (sizeof(secret_dirs) / sizeof(secret_dirs[0]))

/* A secret file's place below a bind of dir (relative: "etc/shadow" below /, "shadow" below /etc),
 * a static string; NULL where the file is not below dir. */
static const char *secret_place_below(const char *file, const char *dir) {
  if (strcmp(dir, "/") == 0)
    return file + 1;
  if (!path_within(file, dir) || file[strlen(dir)] != '/')
    return NULL;
  return file + strlen(dir) + 1;
}

const char *sandbox_secret_cover(const char *below) {
  if (below[0] == '\0')
    return "";
  for (const char *const *f = secret_files; *f; f++)
    for (size_t i = 0; i < N_SECRET_DIRS; i++) {
      const char *place = secret_place_below(*f, secret_dirs[i]);
      if (place != NULL && strcmp(below, place) == 0)
        return place;
    }
  return NULL;
}

/* The host's system directories, bound read-only. On a merged-/usr host some are symlinks (/bin ->
 * usr/bin): the directory they lead to is bound there as well. */
static const char *const system_dirs[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
                                          "/lib64", "/libx32", "/etc",  NULL};

/* Denied with EPERM: the kernel surface an agent's build or test never needs (design.md, "always").
 * unshare and setns are denied whole: without capabilities the only namespace unshare can still
 * create is a user namespace, which hands the process every capability over fresh namespaces --
 * the usual first step of a kernel exploit -- and its other flags (CLONE_FILES, CLONE_FS) are
 * unused by build tools. clone(CLONE_NEWUSER) is refused below; clone3 gets ENOSYS so that libc
 * falls back to clone, whose flags seccomp can see. pidfd_getfd: pid 1 is dumpable (`fsrun exec`
 * joins through it) and its fds are the runtime's (the sync socket), not the command's. */
static const char *const denied_syscalls[] = {"mount",
                                              "umount",
                                              "umount2",
                                              "pivot_root",
                                              "chroot",
                                              "fsopen",
                                              "fsconfig",
                                              "fsmount",
                                              "fspick",
                                              "move_mount",
                                              "open_tree",
                                              "mount_setattr",
                                              "ptrace",
                                              "process_vm_writev",
                                              "pidfd_getfd",
                                              "bpf",
                                              "keyctl",
                                              "add_key",
                                              "request_key",
                                              "kexec_load",
                                              "kexec_file_load",
                                              "init_module",
                                              "finit_module",
                                              "delete_module",
                                              "clock_settime",
                                              "clock_settime64",
                                              "clock_adjtime",
                                              "clock_adjtime64",
                                              "settimeofday",
                                              "stime",
                                              "adjtimex",
                                              "swapon",
                                              "swapoff",
                                              "reboot",
                                              "unshare",
                                              "setns",
                                              "open_by_handle_at",
                                              "perf_event_open",
                                              "userfaultfd",
                                              "io_uring_setup",
                                              "io_uring_enter",
                                              "io_uring_register",
                                              "acct",
                                              "quotactl",
                                              "quotactl_fd",
                                              "lookup_dcookie",
                                              "iopl",
                                              "ioperm",
                                              "syslog",
                                              "vhangup",
                                              "nfsservctl",
                                              "uselib",
                                              NULL};

#define SANDBOX_CLONE_NEWUSER 0x10000000ULL

static oci_seccomp *default_seccomp(void) {
  oci_seccomp *s = xmalloc0(sizeof(*s));
  oci_seccomp_syscall *sc;
  s->default_action = xstrdup("SCMP_ACT_ALLOW");
  s->syscalls = xmalloc0(sizeof(oci_seccomp_syscall) * 3);
  s->n_syscalls = 3;

  sc = &s->syscalls[0];
  strv_init_empty(&sc->names);
  strv_push_list(&sc->names, denied_syscalls);
  sc->action = xstrdup("SCMP_ACT_ERRNO");
  sc->has_errno_ret = true;
  sc->errno_ret = EPERM;

  sc = &s->syscalls[1];
  strv_init_empty(&sc->names);
  oci_strv_push(&sc->names, "clone");
  sc->action = xstrdup("SCMP_ACT_ERRNO");
  sc->has_errno_ret = true;
  sc->errno_ret = EPERM;
  sc->args = xmalloc0(sizeof(oci_seccomp_arg));
  sc->n_args = 1;
  sc->args[0].index = 0; /* the flags on every architecture but s390 */
  sc->args[0].value = SANDBOX_CLONE_NEWUSER;
  sc->args[0].value_two = SANDBOX_CLONE_NEWUSER;
  sc->args[0].op = xstrdup("SCMP_CMP_MASKED_EQ");

  sc = &s->syscalls[2];
  strv_init_empty(&sc->names);
  oci_strv_push(&sc->names, "clone3");
  sc->action = xstrdup("SCMP_ACT_ERRNO");
  sc->has_errno_ret = true;
  sc->errno_ret = ENOSYS;
  return s;
}

static bool env_name_allowed(const oci_policy *p, const char *entry) {
  static const char *const always[] = {"PATH", "TERM", NULL};
  size_t n = strcspn(entry, "=");
  for (const char *const *a = always; *a; a++)
    if (strlen(*a) == n && strncmp(entry, *a, n) == 0)
      return true;
  for (size_t i = 0; i < p->env_allowlist.len; i++) {
    const char *name = p->env_allowlist.items[i];
    if (strlen(name) == n && strncmp(entry, name, n) == 0)
      return true;
  }
  return false;
}

static void build_env(const struct sandbox_mapping_opts *o, oci_strv *env) {
  bool have_path = false;
  strv_init_empty(env);
  for (char *const *e = o->environ; e != NULL && *e != NULL; e++) {
    if (strchr(*e, '=') == NULL || strncmp(*e, "HOME=", 5) == 0)
      continue;
    if (!env_name_allowed(o->policy, *e))
      continue;
    if (strncmp(*e, "PATH=", 5) == 0)
      have_path = true;
    oci_strv_push(env, *e);
  }
  if (!have_path)
    oci_strv_push(env, "PATH=" SANDBOX_DEFAULT_PATH);
  if (o->home != NULL) {
    cleanup_free char *home = xasprintf("HOME=%s", o->home);
    oci_strv_push(env, home);
  }
  sandbox_git_env(env);
}

static oci_process *build_process(const struct sandbox_mapping_opts *o) {
  const oci_policy *p = o->policy;
  oci_process *proc = xmalloc0(sizeof(*proc));

  strv_init_empty(&proc->args);
  if (o->args == NULL || o->n_args == 0)
    oci_strv_push(&proc->args, "/bin/sh");
  for (size_t i = 0; o->args != NULL && i < o->n_args; i++)
    oci_strv_push(&proc->args, o->args[i]);
  build_env(o, &proc->env);
  proc->cwd = xstrdup(o->worktree);
  proc->user.uid = (uint32_t)o->uid;
  proc->user.gid = (uint32_t)o->gid;
  /* every set present and empty: no capabilities at all */
  proc->capabilities = xmalloc0(sizeof(*proc->capabilities));
  strv_init_empty(&proc->capabilities->bounding);
  strv_init_empty(&proc->capabilities->effective);
  strv_init_empty(&proc->capabilities->inheritable);
  strv_init_empty(&proc->capabilities->permitted);
  strv_init_empty(&proc->capabilities->ambient);
  proc->capabilities->has_bounding = proc->capabilities->has_effective = true;
  proc->capabilities->has_inheritable = proc->capabilities->has_permitted = true;
  proc->capabilities->has_ambient = true;
  proc->no_new_privileges = true;
  if (p->has_cpu_max_ms) {
    uint64_t seconds = p->cpu_max_ms / 1000 + (p->cpu_max_ms % 1000 != 0);
    proc->rlimits = xmalloc0(sizeof(oci_rlimit));
    proc->n_rlimits = 1;
    proc->rlimits[0].type = xstrdup("RLIMIT_CPU");
    proc->rlimits[0].soft = proc->rlimits[0].hard = seconds;
  }
  return proc;
}

/* On a v1 or hybrid host, the hierarchies the command's cgroup is made in: what the limits write
 * (memory, pids, cpu), what the runtime reads (cpuacct: only the watchdog, for cpuLimit.maxMs;
 * memory: oomKilled) and, for a task container, needs (freezer: `fsrun pause` and exec-git's
 * disarm freeze it; devices: the device allow-list). Not cpuset, blkio, net_cls, perf_event,
 * hugetlb, name=systemd ...: nothing is limited there, and each directory is a mkdir, a join and
 * an rmdir more per run. A one-shot run has no freezer: its pid namespace ends every process of
 * it when its init dies (docs/sandbox.md, "A killed `fsrun sandbox`"), and nothing pauses it;
 * nor devices where it has no allow-list (sandbox-devices.h). Caller frees. */
static char *sandbox_v1_controllers(const oci_policy *p, const struct sandbox_one_shot *one_shot) {
  return xasprintf("memory,pids%s%s%s%s", one_shot == NULL ? ",freezer" : "",
                   one_shot == NULL || !one_shot->no_device_rules ? ",devices" : "",
                   p->has_cpu_max_cores ? ",cpu" : "", p->has_cpu_max_ms ? ",cpuacct" : "");
}

static oci_resources *build_resources(const oci_policy *p, bool userns, bool no_device_rules) {
  oci_resources *r = xmalloc0(sizeof(*r));
  if (!userns && !no_device_rules) {
    /* deny every device; the runtime adds the default ones (null, zero, tty, ...) */
    r->devices = xmalloc0(sizeof(oci_device_cgroup));
    r->n_devices = 1;
    r->devices[0].allow = false;
    r->devices[0].access = xstrdup("rwm");
  }
  if (p->has_memory_limit_mb) {
    r->memory = xmalloc0(sizeof(*r->memory));
    r->memory->has_limit = true;
    r->memory->limit = (int64_t)(p->memory_limit_mb * 1024 * 1024);
  }
  if (p->has_cpu_max_cores) {
    r->cpu = xmalloc0(sizeof(*r->cpu));
    r->cpu->has_period = r->cpu->has_quota = true;
    r->cpu->period = 100000;
    r->cpu->quota = (int64_t)(p->cpu_max_cores * 100000.0 + 0.5);
    if (r->cpu->quota < 1000)
      r->cpu->quota = 1000; /* the kernel's minimum is 1 ms */
  }
  r->pids = xmalloc0(sizeof(*r->pids));
  r->pids->has_limit = true;
  r->pids->limit = p->has_pids_limit ? (int64_t)p->pids_limit : SANDBOX_DEFAULT_PIDS_LIMIT;
  return r;
}

static void add_namespace(oci_linux *l, const char *type) {
  l->namespaces[l->n_namespaces++].type = xstrdup(type);
}

static oci_id_mapping *identity_mapping(uint32_t id) {
  oci_id_mapping *m = xmalloc0(sizeof(*m));
  m->container_id = m->host_id = id;
  m->size = 1;
  return m;
}

static oci_linux *build_linux(const struct sandbox_mapping_opts *o) {
  oci_linux *l = xmalloc0(sizeof(*l));
  l->namespaces = xmalloc0(sizeof(oci_namespace) * 8);
  add_namespace(l, "pid");
  add_namespace(l, "mount");
  add_namespace(l, "ipc");
  add_namespace(l, "uts");
  if (sandbox_network_profile(o->policy) != SANDBOX_NET_HOST)
    add_namespace(l, "network"); /* the runtime brings its lo up; egress: slirp4netns adds tap0 */
  if (o->userns) {
    add_namespace(l, "user");
    l->uid_mappings = identity_mapping((uint32_t)o->uid);
    l->n_uid_mappings = 1;
    l->gid_mappings = identity_mapping((uint32_t)o->gid);
    l->n_gid_mappings = 1;
  }
  l->resources =
      build_resources(o->policy, o->userns, o->one_shot != NULL && o->one_shot->no_device_rules);
  if (o->policy->seccomp == NULL || strcmp(o->policy->seccomp, "none") != 0)
    l->seccomp = default_seccomp();
  strv_init_empty(&l->masked_paths);
  strv_push_list(&l->masked_paths, spec_masked_paths);
  strv_init_empty(&l->readonly_paths);
  /* An ordinary caller's command is neither the owner of these files (the host's root, whom its
   * user namespace does not map) nor capable anywhere, so their modes already refuse it every
   * write (sandbox.bats tries them): no read-only bind of each is needed. Root's command is
   * their owner, and owner permissions need no capability. */
  if (!o->userns) {
    strv_push_list(&l->readonly_paths, spec_readonly_paths);
    oci_strv_push(&l->readonly_paths, "/etc"); /* the tmpfs of sandbox_etc_mounts */
  }
  return l;
}

static bool below_etc(const char *path) {
  return path != NULL && strncmp(path, "/etc/", 5) == 0;
}

/* whether a mount the request adds after /etc's (a policy path, the worktree, its git dirs,
 * $HOME, and what is masked or bound below them) lands below /etc */
static bool caller_binds_below_etc(const struct sandbox_mapping_opts *o,
                                   const struct agent_trees *t) {
  const oci_policy *p = o->policy;
  if (below_etc(o->worktree) || below_etc(t->common_dir) || below_etc(t->wt_git_dir) ||
      below_etc(o->home))
    return true;
  for (size_t i = 0; i < p->allowed_paths.len; i++)
    if (below_etc(p->allowed_paths.items[i]))
      return true;
  for (size_t i = 0; i < p->writable_paths.len; i++)
    if (below_etc(p->writable_paths.items[i]))
      return true;
  return false;
}

/* A writablePaths entry that does not exist (pnpm's store on a fresh machine) is created, with its
 * missing parents, owned by the caller: skipped, what the command wrote there would be lost with
 * the tmpfs $HOME. Never through a link the command planted in a tree it writes: the directories
 * would be made wherever that leads. */
static int create_writable_paths(const oci_policy *p, const struct agent_trees *t,
                                 fsrun_error_t *err) {
  for (size_t i = 0; i < p->writable_paths.len; i++) {
    const char *path = p->writable_paths.items[i];
    struct stat st;
    int r;
    if (path[0] != '/')
      return fsrun_error_make(err, 0, "policy: writablePaths[%zu]: `%s` is not an absolute path", i,
                              path);
    r = check_caller_path(t, "writablePaths", i, path, true, &st, err);
    if (r < 0)
      return r;
    /* made by the walk's own directory fds: a name swapped to a link meanwhile is refused */
    if (r == 1 && make_policy_path("writablePaths", i, path, err) < 0)
      return fsrun_error_code(err);
  }
  return 0;
}

static bool has_destination(const struct mount_list *l, const char *dest) {
  for (size_t i = 0; i < l->len; i++)
    if (strcmp(l->items[i].destination, dest) == 0)
      return true;
  return false;
}

/* The objects through which a bind can show a secret file: secret_dirs (where they exist) and the
 * files. */
struct secret_places {
  struct stat dirs[N_SECRET_DIRS];
  bool exists[N_SECRET_DIRS];
  bool ok;
  /* an ordinary caller's run: only the files it can read get a cover (caller_needs_cover) */
  bool readable_only;
  unsigned uncovered; /* the secret_files (bit by index) a bind showed without a cover */
};

static bool same_object(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static void secret_places_take(struct secret_places *s) {
  for (size_t i = 0; i < N_SECRET_DIRS; i++)
    s->exists[i] = stat(secret_dirs[i], &s->dirs[i]) == 0 && S_ISDIR(s->dirs[i].st_mode);
  s->ok = s->exists[0];
}

/* Where in a bind of the object st a secret file shows: "" (the file itself), its place below the
 * directory st is (secret_place_below); NULL where it does not. */
static const char *secret_file_place(const struct secret_places *s, const struct stat *st,
                                     const char *file) {
  struct stat f;
  for (size_t i = 0; i < N_SECRET_DIRS; i++) {
    const char *place = secret_place_below(file, secret_dirs[i]);
    if (s->exists[i] && same_object(st, &s->dirs[i]) && place != NULL)
      return place;
  }
  if (S_ISREG(st->st_mode) && lstat(file, &f) == 0 && same_object(st, &f))
    return "";
  return NULL;
}

/* Whether an ordinary caller's run needs a cover over the secret file (st, its lstat): the run's
 * ids are the caller's uid and gid alone (identity maps of one id each), so the command opens the
 * host's root-owned file with the caller's uid, gid and supplementary groups, no capability
 * counting on an object of an unmapped owner: it reads the file exactly where the caller can (group
 * shadow; a mode or ACL that lets the user read). A file the caller owns (its mode is the caller's
 * to change), or can read, or one the check cannot judge, is covered. A file the kernel refuses to
 * the caller needs none: the cover would be a second lock on the same door (issue 15: the cover's
 * tmpfs and overlay are ~4 % of the run). The host's root changing the file's mode during the run
 * shows the command what it shows the user then. Never for `fsrun bundle` (another process, with
 * other groups, creates its config) nor for root (uid 0 inside owns the files). */
static bool caller_needs_cover(const struct secret_places *s, const char *file,
                               const struct stat *st) {
  if (!s->readable_only || st->st_uid == geteuid())
    return true;
  return faccessat(AT_FDCWD, file, R_OK, AT_EACCESS) == 0 || errno != EACCES;
}

/* Where a bind shows the host's directory holding a secret file, under whatever name it is given
 * (an ordinary user's /etc, allowedPaths ["/etc"], a worktree above it), the file's place in that
 * view is covered, on every such bind (one at the same destination later may land elsewhere: the
 * destination resolves in the container). The decision is taken from st, the object the source
 * showed when its identity was taken (device and inode: no spelling or other bind of /etc hides
 * it), which is recorded in the entry: the runtime refuses a bind that shows another object then
 * (a link swapped in meanwhile). The covers go on the bind itself (oci_mount.covers), by paths
 * below it, never by a path in the container: a link swapped in there could lead them elsewhere. */
static void cover_secret_files(oci_mount *m, const struct stat *st, struct secret_places *s) {
  size_t n = 0;
  if (!s->ok)
    secret_places_take(s);
  m->has_source_id = true;
  m->source_dev = (uint64_t)st->st_dev;
  m->source_ino = (uint64_t)st->st_ino;
  for (const char *const *f = secret_files; s->ok && *f; f++) {
    struct stat fst;
    const char *rest = secret_file_place(s, st, *f);
    if (rest == NULL || lstat(*f, &fst) < 0 || !S_ISREG(fst.st_mode))
      continue;
    if (!caller_needs_cover(s, *f, &fst)) {
      s->uncovered |= 1u << (f - secret_files);
      continue;
    }
    m->covers[n++] = rest;
    m->cover_source = SANDBOX_UNREADABLE_FILE;
  }
}

/* An ordinary user's /etc entries: fixed names in root-owned directories. One that does not stat
 * now gets an identity no object has (device 0, inode 0): the runtime refuses it. */
static void cover_etc_binds(struct mount_list *l, size_t first, size_t end,
                            struct secret_places *s) {
  for (size_t i = first; i < end; i++) {
    struct stat st = {0};
    oci_mount *m = &l->items[i];
    if (m->source == NULL || m->source[0] != '/')
      continue;
    if (stat(m->source, &st) < 0)
      st = (struct stat){0};
    cover_secret_files(m, &st, s);
  }
}

/* A bind of a path the caller named, with st the identity taken of it (stat_caller_path): the
 * runtime binds only that object, with its covers, and resolves the destination through no
 * symbolic link where the path is in a tree the command writes. */
static void add_caller_bind(struct mount_list *l, const struct agent_trees *t, const char *path,
                            const char *const *options, const struct stat *st,
                            struct secret_places *s) {
  cleanup_free char *tree = agent_tree_above(t, path);
  add_mount(l, path, "bind", path, options);
  oci_mount *m = &l->items[l->len - 1];
  m->needs_source_id = true;
  m->dest_no_symlinks = tree != NULL;
  cover_secret_files(m, st, s);
}

/* The caller's binds: allowedPaths (a missing one skipped), writablePaths, the worktree and its
 * git dirs, each stat'ed once (the identity) through no link the command planted. *policy_end:
 * where the policy's binds end (the trees' begin). */
static int add_caller_binds(const struct sandbox_mapping_opts *o, const struct agent_trees *t,
                            const char *const *ro_bind, const char *const *rw_bind,
                            struct mount_list *l, struct secret_places *s, size_t *policy_end,
                            fsrun_error_t *err) {
  const oci_policy *p = o->policy;
  const char *const trees[] = {o->worktree, t->common_dir, t->wt_git_dir};
  const char *const tree_fields[] = {"worktree", "git common dir", "git dir"};
  struct stat st;
  for (size_t i = 0; i < p->allowed_paths.len; i++) {
    const char *path = p->allowed_paths.items[i];
    int r = check_caller_path(t, "allowedPaths", i, path, true, &st, err);
    if (r < 0)
      return r;
    if (r == 1) {
      log_warning("sandbox: allowedPaths[%zu]: `%s` does not exist, skipped", i, path);
      continue;
    }
    if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))
      return fsrun_error_make(err, 0,
                              "policy: allowedPaths[%zu]: `%s` is a %s, which a read-only bind "
                              "leaves open to the command: name no such file",
                              i, path,
                              S_ISSOCK(st.st_mode) ? "unix socket (connect())"
                                                   : "FIFO (open() to read or write)");
    add_caller_bind(l, t, path, ro_bind, &st, s);
    /* its sockets and FIFOs the overlay's own, not the host's (cover-overlay.h) */
    l->items[l->len - 1].overlay_view = S_ISDIR(st.st_mode);
  }
  for (size_t i = 0; i < p->writable_paths.len; i++) {
    const char *path = p->writable_paths.items[i];
    if (check_caller_path(t, "writablePaths", i, path, false, &st, err) < 0)
      return fsrun_error_code(err);
    add_caller_bind(l, t, path, rw_bind, &st, s);
  }
  *policy_end = l->len;
  for (size_t i = 0; i < 3; i++) {
    if (trees[i] == NULL)
      continue;
    if (check_caller_path(t, tree_fields[i], 0, trees[i], false, &st, err) < 0)
      return fsrun_error_code(err);
    add_caller_bind(l, t, trees[i], rw_bind, &st, s);
  }
  return 0;
}

/* What the command writes to the sandbox's own tmpfs (/tmp, $HOME, /dev/shm) is memory that
 * RLIMIT_DATA does not count and that, without a memory cgroup (an ordinary user on a host that
 * delegates none), nothing else bounds: /tmp and $HOME each get half of memoryLimitMb (both full
 * are the limit, so that under a memory cgroup a full tmpfs says ENOSPC before the OOM killer
 * comes), SANDBOX_TMPFS_DEFAULT_MB each without one; /dev/shm 64 MiB, or that half if less. */
#define SANDBOX_TMPFS_DEFAULT_MB 1024
#define SANDBOX_SHM_MAX_MB       64

static uint64_t tmpfs_size_mb(const oci_policy *p) {
  if (!p->has_memory_limit_mb)
    return SANDBOX_TMPFS_DEFAULT_MB;
  return p->memory_limit_mb / 2 > 0 ? p->memory_limit_mb / 2 : 1;
}

/* "size=NNNm" (caller frees) */
static char *tmpfs_size_option(uint64_t mb) {
  return xasprintf("size=%llum", (unsigned long long)mb);
}

/* A bind m (mounts[i]) under a tree the command writes that carries no check yet (the git binds:
 * the worktree's and each submodule's .git file, the common dir's config and hooks, ...) gets those
 * of a caller bind: the command can leave a link there before the bind is made (a bundle's next
 * create), and the name can be swapped while it is looked up. A bundle-relative source (the empty
 * hooks dir) gets the destination rule only. */
static int pin_bind_in_agent_tree(oci_mount *m, size_t i, const struct agent_trees *t,
                                  fsrun_error_t *err) {
  cleanup_free char *dest_tree = NULL;
  cleanup_free char *source_tree = NULL;
  struct stat st, walked_st;
  bool inside;
  int walked;
  if (!mount_entry_is_bind(m) || m->needs_source_id || m->source == NULL)
    return 0;
  dest_tree = agent_tree_above(t, m->destination);
  m->dest_no_symlinks = m->dest_no_symlinks || dest_tree != NULL;
  if (m->source[0] != '/' || (source_tree = agent_tree_above(t, m->source)) == NULL)
    return 0;
  if (stat_caller_path(t, m->source, &st, &inside) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: `%s` in `%s`", i, m->source, source_tree);
  /* the tree's own name was looked up again: the owner walk must reach the same object */
  walked = check_policy_path_owners("mounts", i, m->source, &walked_st, err);
  if (walked < 0 ||
      caller_path_agree("mounts", i, m->source, false, &st, walked, &walked_st, err) < 0)
    return fsrun_error_code(err);
  m->needs_source_id = m->has_source_id = true;
  m->source_dev = (uint64_t)st.st_dev;
  m->source_ino = (uint64_t)st.st_ino;
  return 0;
}

static int build_mounts(const struct sandbox_mapping_opts *o, const struct agent_trees *t,
                        struct mount_list *l, struct root_links *links, unsigned *uncovered,
                        fsrun_error_t *err) {
  /* In a user namespace the mounts copied from the caller's namespace are locked together, and a
   * bind of a directory that has a mount below it (/usr/local, /usr/lib/modules, a worktree with a
   * mount in it) fails with EINVAL: it would uncover what that mount hides. So an ordinary caller's
   * binds are recursive, read-only and nosuid/nodev all the way down. */
  static const char *const ro_rbind[] = {"rbind", "rro", "rnosuid", "rnodev", NULL};
  static const char *const rw_rbind[] = {"rbind", "rw", "rnosuid", "rnodev", NULL};
  static const char *const ro_plain[] = {"bind", "ro", "nosuid", "nodev", NULL};
  static const char *const rw_plain[] = {"bind", "rw", "nosuid", "nodev", NULL};
  const char *const *ro_bind = o->userns ? ro_rbind : ro_plain;
  const char *const *rw_bind = o->userns ? rw_rbind : rw_plain;
  const oci_policy *p = o->policy;
  uint64_t tmpfs_mb = tmpfs_size_mb(p);
  cleanup_free char *tmpfs_size = tmpfs_size_option(tmpfs_mb);
  cleanup_free char *shm_size =
      tmpfs_size_option(tmpfs_mb < SANDBOX_SHM_MAX_MB ? tmpfs_mb : SANDBOX_SHM_MAX_MB);

  /* the root: a fresh tmpfs in the container's own mount namespace, so the mount points made for
   * the entries below are made there and vanish with it (the bundle's root stays empty, and
   * sandboxes can share one); read-only once everything is mounted (root.readonly) */
  add_mount(l, "/", "tmpfs", "tmpfs",
            (const char *const[]){"nosuid", "nodev", "mode=755", "size=1m", NULL});
  add_mount(l, "/proc", "proc", "proc", (const char *const[]){"nosuid", "noexec", "nodev", NULL});
  add_mount(l, "/dev", "tmpfs", "tmpfs",
            (const char *const[]){"nosuid", "strictatime", "mode=755", "size=65536k", NULL});
  if (o->userns)
    add_mount(l, "/dev/pts", "devpts", "devpts",
              (const char *const[]){"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                    NULL});
  else
    add_mount(l, "/dev/pts", "devpts", "devpts",
              (const char *const[]){"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                    "gid=5", NULL});
  add_mount(l, "/dev/shm", "tmpfs", "shm",
            (const char *const[]){"nosuid", "noexec", "nodev", "mode=1777", shm_size, NULL});
  /* sysfs shows the network namespace's devices; in the host's, an unprivileged caller binds it */
  if (o->userns && sandbox_network_profile(p) == SANDBOX_NET_HOST)
    add_mount(l, "/sys", "none", "/sys",
              (const char *const[]){"rbind", "nosuid", "noexec", "nodev", "ro", NULL});
  else
    add_mount(l, "/sys", "sysfs", "sysfs",
              (const char *const[]){"nosuid", "noexec", "nodev", "ro", NULL});
  add_mount(l, "/tmp", "tmpfs", "tmpfs",
            (const char *const[]){"nosuid", "nodev", "mode=1777", tmpfs_size, NULL});
  sandbox_system_dirs(l, ro_bind, links);
  size_t etc_first = l->len;
  bool egress = sandbox_network_profile(p) == SANDBOX_NET_EGRESS;
  /* root's view of /etc is read-only: a caller's bind below /etc needs the tmpfs, where the
   * runtime makes its mount point */
  const char *etc_view = caller_binds_below_etc(o, t) ? NULL : o->etc_view;
  bool has_resolv_conf = sandbox_etc_mounts(o->userns, egress, etc_view, l);
  size_t etc_end = l->len;
  /* egress: the resolver is slirp4netns's forwarder (the host's may be on its own loopback) */
  if (egress && has_resolv_conf)
    add_mount(l, "/etc/resolv.conf", "bind", SANDBOX_RESOLV_CONF,
              (const char *const[]){"bind", "ro", "nosuid", "nodev", "noexec", NULL});
  if (o->home != NULL) {
    cleanup_free char *uid = xasprintf("uid=%u", (unsigned)o->uid);
    cleanup_free char *gid = xasprintf("gid=%u", (unsigned)o->gid);
    add_mount(l, o->home, "tmpfs", "tmpfs",
              (const char *const[]){"nosuid", "nodev", "mode=700", uid, gid, tmpfs_size, NULL});
  }
  /* A secret file shows only through a bind whose real source is /etc, /, or the file itself.
   * The caller's paths (policy, worktree, git dirs: any spelling) and an ordinary user's /etc can
   * be that. The others cannot: the system dirs and root's /etc entries are fixed names in
   * root-owned directories (only the host's root could make one lead to /etc); the git protection
   * binds are files named config or directories named hooks, neither a symlink; the rest are
   * tmpfs, proc, sysfs or the runtime's own files. So only those pay for a stat. */
  struct secret_places secrets = {.readable_only = o->userns && o->one_shot != NULL && o->uid != 0};
  if (o->userns)
    cover_etc_binds(l, etc_first, etc_end, &secrets);
  size_t policy_first = l->len, policy_end = l->len;
  if (add_caller_binds(o, t, ro_bind, rw_bind, l, &secrets, &policy_end, err) < 0)
    return fsrun_error_code(err);
  *uncovered = secrets.uncovered;
  /* the worktree and git dirs cannot hold the state root (sandbox_check_state_root) */
  const struct runmask_places places = {o->state_root, o->runtime_dir, o->uid};
  sandbox_mask_private_places(l, policy_first, policy_end, &places, o->userns);
  size_t git_first = l->len;
  sandbox_git_protect(o->worktree, t->common_dir, t->wt_git_dir, l);
  /* .git/config, hooks, ...: bound as the objects the owner walk reached, not by name */
  for (size_t i = git_first; i < l->len; i++)
    if (pin_bind_in_agent_tree(&l->items[i], i, t, err) < 0)
      return fsrun_error_code(err);
  sandbox_system_links_settle(l, ro_bind, links);
  sort_mounts_by_depth(l);
  return 0;
}

/* $HOME gets a tmpfs only where that hides nothing the sandbox is given */
static const char *usable_home(const struct sandbox_mapping_opts *o) {
  const char *home = o->home;
  if (home == NULL || home[0] != '/' || strcmp(home, "/") == 0)
    return NULL;
  for (const char *const *d = system_dirs; *d; d++)
    if (path_within(home, *d))
      return NULL;
  if (path_within(home, o->worktree) || strcmp(home, "/tmp") == 0 || path_within(home, "/proc") ||
      path_within(home, "/dev") || path_within(home, "/sys"))
    return NULL;
  for (size_t i = 0; i < o->policy->allowed_paths.len; i++)
    if (path_within(home, o->policy->allowed_paths.items[i]))
      return NULL;
  for (size_t i = 0; i < o->policy->writable_paths.len; i++)
    if (path_within(home, o->policy->writable_paths.items[i]))
      return NULL;
  return home;
}

static int landlock_ports_annotation(const oci_policy *p, oci_map *annotations) {
  size_t cap = 32 + p->n_allowed_tcp_ports * 8, len = 0;
  cleanup_free char *json = xmalloc0(cap);
  len += (size_t)snprintf(json + len, cap - len, "{\"tcpConnect\":[");
  for (size_t i = 0; i < p->n_allowed_tcp_ports; i++)
    len += (size_t)snprintf(json + len, cap - len, "%s%u", i ? "," : "",
                            (unsigned)p->allowed_tcp_ports[i]);
  snprintf(json + len, cap - len, "]}");
  return oci_map_set(annotations, LANDLOCK_ANNOTATION, json);
}

int sandbox_config_for_caller(const oci_policy *policy, const char *worktree,
                              const char *state_root, char *const *args, size_t n_args, bool userns,
                              const char *etc_view, const struct sandbox_one_shot *one_shot,
                              oci_config **out, fsrun_error_t *err) {
  extern char **environ;
  struct sandbox_mapping_opts m = {
      .policy = policy,
      .worktree = worktree,
      .args = args,
      .n_args = n_args,
      .environ = environ,
      .uid = geteuid(),
      .gid = getegid(),
      .home = getenv("HOME"),
      .root_path = "rootfs",
      .userns = userns,
      .state_root = state_root,
      .runtime_dir = getenv("XDG_RUNTIME_DIR"),
      .etc_view = etc_view,
      .one_shot = one_shot,
  };
  return sandbox_config_from_policy(&m, out, err);
}

static void seccomp_profile_freep(oci_seccomp **s) {
  if (*s != NULL)
    oci_seccomp_free(*s);
}

static bool seccomp_names_file(const oci_policy *p) {
  return p->seccomp != NULL && strcmp(p->seccomp, "default") != 0 &&
         strcmp(p->seccomp, "none") != 0;
}

/* policy.seccomp naming a file: an OCI `linux.seccomp` object, used as it is. */
static int parse_seccomp_profile(const oci_policy *p, oci_seccomp **out, fsrun_error_t *err) {
  cleanup_free char *what = xasprintf("policy: seccomp `%s`", p->seccomp);
  char *msg = NULL;
  if (p->seccomp_profile_text == NULL)
    return fsrun_error_make(err, EINVAL, "%s: the profile was not loaded with the policy", what);
  if (oci_seccomp_parse(p->seccomp_profile_text, p->seccomp_profile_len, what, out, &msg) < 0)
    return fsrun_error_take(err, EINVAL, msg);
  return 0;
}

/* Reads the profile file once, into the policy, and checks it. */
static int load_seccomp_profile(oci_policy *p, fsrun_error_t *err) {
  __attribute__((cleanup(seccomp_profile_freep))) oci_seccomp *profile = NULL;
  char *msg = NULL;
  if (p->seccomp[0] != '/')
    return fsrun_error_make(err, 0,
                            "policy: seccomp: `%s` is not \"default\", \"none\" or an absolute "
                            "path to an OCI seccomp profile",
                            p->seccomp);
  if (oci_read_file(p->seccomp, &p->seccomp_profile_text, &p->seccomp_profile_len, &msg) < 0) {
    fsrun_error_take(err, EINVAL, msg);
    return fsrun_error_wrap(err, "policy: seccomp");
  }
  return parse_seccomp_profile(p, &profile, err);
}

/* SANDBOX_UNCOVERED_ANNOTATION: the secret files left uncovered (bits of secret_files), by path */
static int uncovered_annotate(unsigned uncovered, oci_map *annotations) {
  struct strbuf b = {0};
  int r;
  if (uncovered == 0)
    return 0;
  for (const char *const *f = secret_files; *f; f++)
    if (uncovered & (1u << (f - secret_files)))
      sb_printf(&b, "%s%s", b.len > 0 ? "," : "", *f);
  r = oci_map_set(annotations, SANDBOX_UNCOVERED_ANNOTATION, b.data);
  free(b.data);
  return r;
}

/* Whether the comma-separated list names path */
static bool list_names(const char *list, const char *path) {
  size_t n = strlen(path);
  for (const char *p = list; p != NULL; p = strchr(p, ','), p = p != NULL ? p + 1 : NULL)
    if (strncmp(p, path, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

int sandbox_uncovered_exec_check(const oci_config *c, fsrun_error_t *err) {
  const char *list = oci_map_get(&c->annotations, SANDBOX_UNCOVERED_ANNOTATION);
  if (list == NULL)
    return 0;
  for (const char *const *f = secret_files; *f; f++)
    if (list_names(list, *f) && faccessat(AT_FDCWD, *f, R_OK, AT_EACCESS) == 0)
      return fsrun_error_make(err, 0,
                              "exec: `%s` is not covered in this sandbox (its user could not "
                              "read it when the sandbox started) and this caller can read it: "
                              "start a new sandbox",
                              *f);
  return 0;
}

int sandbox_config_from_policy(const struct sandbox_mapping_opts *o, oci_config **out,
                               fsrun_error_t *err) {
  cleanup_free char *common_dir = NULL;
  cleanup_free char *wt_git_dir = NULL;
  struct sandbox_mapping_opts opts = *o;
  struct mount_list mounts = {0};
  struct root_links links = {0};
  struct agent_trees trees;
  const oci_policy *p = o->policy;
  unsigned uncovered = 0;
  int r;
  __attribute__((cleanup(seccomp_profile_freep))) oci_seccomp *profile = NULL;
  oci_config *c;

  *out = NULL;
  if (seccomp_names_file(p) && parse_seccomp_profile(p, &profile, err) < 0)
    return fsrun_error_code(err);
  if (sandbox_git_dirs(o->worktree, &common_dir, &wt_git_dir, err) < 0)
    return fsrun_error_code(err);
  trees = (struct agent_trees){.worktree = o->worktree,
                               .common_dir = common_dir,
                               .wt_git_dir = wt_git_dir,
                               .writable = &p->writable_paths};
  if (create_writable_paths(p, &trees, err) < 0)
    return fsrun_error_code(err);
  opts.home = usable_home(o);

  c = xmalloc0(sizeof(*c));
  c->oci_version = xstrdup(OCI_VERSION);
  c->has_root = true;
  c->root_path = xstrdup(o->root_path ? o->root_path : "rootfs");
  c->root_readonly = true;
  c->hostname = xstrdup("sandbox");
  c->process = build_process(&opts);
  c->linux_ = build_linux(&opts);
  if (profile != NULL) {
    /* the policy's own profile, in place of the default one */
    oci_seccomp_free(c->linux_->seccomp);
    c->linux_->seccomp = steal_ptr(&profile);
  }
  r = build_mounts(&opts, &trees, &mounts, &links, &uncovered, err);
  c->mounts = mounts.items;
  c->n_mounts = mounts.len;
  if (r < 0) {
    oci_config_free(c);
    return r;
  }
  /* pid 1 of its own: signals reach the command, orphans are reaped */
  cleanup_free char *v1_controllers = sandbox_v1_controllers(p, o->one_shot);
  if (oci_map_set(&c->annotations, REAPER_ANNOTATION, "true") < 0 ||
      oci_map_set(&c->annotations, CGROUP_V1_ANNOTATION, v1_controllers) < 0 ||
      sandbox_system_links_annotate(&links, &c->annotations) < 0 ||
      (p->allow_network && p->n_allowed_tcp_ports > 0 &&
       landlock_ports_annotation(p, &c->annotations) < 0) ||
      (sandbox_net_unreachable(p) != NULL &&
       oci_map_set(&c->annotations, NETLINK_UNREACHABLE_ANNOTATION, sandbox_net_unreachable(p)) <
           0) ||
      (sandbox_net_tcp_only(p) != NULL &&
       oci_map_set(&c->annotations, NETLINK_TCP_ONLY_ANNOTATION, sandbox_net_tcp_only(p)) < 0) ||
      uncovered_annotate(uncovered, &c->annotations) < 0) {
    oci_config_free(c);
    return fsrun_error_make(err, ENOMEM, "policy: annotations");
  }
  *out = c;
  return 0;
}

/* --- policy ---------------------------------------------------------------------------------- */

static int read_all_fd(int fd, char **out, size_t *len, fsrun_error_t *err) {
  size_t cap = 4096, n = 0;
  char *buf = xmalloc0(cap + 1);
  for (;;) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      free(buf);
      return fsrun_error_errno(err, "read the policy from stdin");
    }
    if (r == 0)
      break;
    n += (size_t)r;
    if (n == cap) {
      if (cap >= 64u * 1024 * 1024) {
        free(buf);
        return fsrun_error_make(err, 0, "policy on stdin: larger than 64 MiB");
      }
      cap *= 2;
      char *bigger = realloc(buf, cap + 1);
      if (bigger == NULL)
        abort();
      buf = bigger;
    }
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* "/etc/", "//etc" and "/etc/." name /etc: each absolute policy path is written in its one
 * plain spelling, so that every comparison with a path the runtime knows ($HOME, the system
 * directories, the worktree) sees what the bind will show. A relative path is left for the
 * checks to refuse. */
static void normalize_abs_path(char *path) {
  char *out = path;
  const char *in = path;
  if (path[0] != '/')
    return;
  while (*in != '\0') {
    while (*in == '/')
      in++;
    const char *end = strchrnul(in, '/');
    size_t n = (size_t)(end - in);
    if (n > 0 && !(n == 1 && in[0] == '.')) {
      *out++ = '/';
      memmove(out, in, n);
      out += n;
    }
    in = end;
  }
  if (out == path)
    *out++ = '/';
  *out = '\0';
}

static void normalize_policy_paths(oci_policy *p) {
  for (size_t i = 0; i < p->allowed_paths.len; i++)
    normalize_abs_path(p->allowed_paths.items[i]);
  for (size_t i = 0; i < p->writable_paths.len; i++)
    normalize_abs_path(p->writable_paths.items[i]);
}

int sandbox_policy_load(const char *path, oci_policy **out, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  char *parse_err = NULL;
  size_t len = 0;
  const char *what;

  if (path == NULL) {
    text = xstrdup("{}");
    len = 2;
    what = "policy";
  } else if (strcmp(path, "-") == 0) {
    if (read_all_fd(STDIN_FILENO, &text, &len, err) < 0)
      return fsrun_error_code(err);
    what = "policy (stdin)";
  } else {
    if (oci_read_file(path, &text, &len, &parse_err) < 0)
      return fsrun_error_take(err, EINVAL, parse_err);
    what = path;
  }
  if (oci_policy_parse(text, len, what, out, &parse_err) < 0)
    return fsrun_error_take(err, EINVAL, parse_err);
  /* a settings object meant for another backend is not ours to run */
  if ((*out)->backend != NULL && strcmp((*out)->backend, "fsrun") != 0) {
    fsrun_error_make(err, 0, "%s: sandbox.backend: `%s` is not fsrun", what, (*out)->backend);
    oci_policy_free(*out);
    *out = NULL;
    return fsrun_error_code(err);
  }
  normalize_policy_paths(*out);
  /* a profile file is part of the input: a bad one is refused here, before anything runs */
  if (seccomp_names_file(*out) && load_seccomp_profile(*out, err) < 0) {
    oci_policy_free(*out);
    *out = NULL;
    return fsrun_error_code(err);
  }
  return 0;
}

int sandbox_policy_hash(const oci_policy *p, char out[65], fsrun_error_t *err) {
  oci_policy bare = *p;
  char *json_err = NULL;
  cleanup_free char *json = NULL;
  bare.backend = NULL;
  bare.failure_mode = NULL;
  json = oci_policy_serialize(&bare, &json_err);
  if (json == NULL)
    return fsrun_error_take(err, 0, json_err);
  if (p->seccomp_profile_text != NULL) {
    /* the profile is part of what ran: the same path with another profile is another policy */
    cleanup_free char *both = xasprintf("%s\n%s", json, p->seccomp_profile_text);
    sha256_hex(both, strlen(both), out);
    return 0;
  }
  sha256_hex(json, strlen(json), out);
  return 0;
}

int sandbox_resolve_worktree(const char *path, char **out, fsrun_error_t *err) {
  struct stat st;
  char *resolved = NULL;
  *out = NULL;
  /* one lookup decides the object: every later use of the path is checked to still be it */
  if (sandbox_worktree_pin(path ? path : ".", &resolved, err) < 0)
    return fsrun_error_code(err);
  if (stat(resolved, &st) < 0 || !S_ISDIR(st.st_mode)) {
    free(resolved);
    return fsrun_error_make(err, 0, "--worktree `%s`: not a directory", path ? path : ".");
  }
  if (strcmp(resolved, "/") == 0) {
    free(resolved);
    return fsrun_error_make(err, 0, "--worktree: `/` cannot be a worktree");
  }
  /* the sandbox would get the caller's whole home (its keys, its shell's startup files) read-write
   */
  {
    const char *home_env = getenv("HOME");
    cleanup_free char *home = home_env && home_env[0] == '/' ? realpath(home_env, NULL) : NULL;
    if (home != NULL && path_within(home, resolved)) {
      int r = fsrun_error_make(err, 0,
                               "--worktree `%s`: %s cannot be a worktree (the caller's $HOME `%s` "
                               "would be in it)",
                               path ? path : ".", resolved, home);
      free(resolved);
      return r;
    }
  }
  *out = resolved;
  return 0;
}

/* --- the bundle ------------------------------------------------------------------------------ */

/* the egress profile's resolv.conf (always the same text): made again when it differs (an older
 * fsrun's), under a temporary name and renamed into place, so a sandbox never sees half of it */
static int write_resolv_conf(int dirfd, const char *dir, fsrun_error_t *err) {
  const char *text = SANDBOX_RESOLV_CONF_TEXT;
  cleanup_free char *tmp = NULL;
  cleanup_free char *have = NULL;
  cleanup_close int fd = -1;
  cleanup_error fsrun_error_t rerr = NULL;
  if (read_file_at(dirfd, SANDBOX_RESOLV_CONF, &have, NULL, &rerr) == 0 && strcmp(have, text) == 0)
    return 0;
  tmp = xasprintf("%s.%d", SANDBOX_RESOLV_CONF, (int)getpid());
  unlinkat(dirfd, tmp, 0);
  fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 || fchmod(fd, 0644) < 0 || safe_write_all(fd, text, strlen(text)) < 0 ||
      renameat(dirfd, tmp, dirfd, SANDBOX_RESOLV_CONF) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return fsrun_error_make(err, saved, "create `%s/%s`", dir, SANDBOX_RESOLV_CONF);
  }
  return 0;
}

/* The empty mode-0 file that masks secrets. An existing one is kept when it is still empty and
 * mode 0: opening it for writing again would fail for an ordinary user (mode 0 lets only root
 * write), which made every run fail on a state root an older fsrun had made. Anything else there is
 * replaced. */
static int write_unreadable_file(int dirfd) {
  cleanup_close int fd = -1;
  struct stat st;
  if (fstatat(dirfd, SANDBOX_UNREADABLE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 07777) == 0)
      return 0;
    if (unlinkat(dirfd, SANDBOX_UNREADABLE_FILE, 0) < 0 && errno != ENOENT)
      return -1;
  }
  fd = openat(dirfd, SANDBOX_UNREADABLE_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
              0);
  if (fd < 0 && errno == EEXIST) /* another run made it meanwhile */
    return 0;
  if (fd < 0 || fchmod(fd, 0) < 0)
    return -1;
  return 0;
}

/* In dir (an open directory): the empty root, the empty directory and the unreadable file that
 * the config's mounts use. */
static int write_skeleton(int dirfd, const char *dir, const char *root_path, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  if (mkdirat(dirfd, root_path, 0755) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "create `%s/%s`", dir, root_path);
  if (mkdirat(dirfd, SANDBOX_EMPTY_DIR, 0555) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "create `%s/%s`", dir, SANDBOX_EMPTY_DIR);
  if (write_unreadable_file(dirfd) < 0)
    return fsrun_error_errno(err, "create `%s/%s`", dir, SANDBOX_UNREADABLE_FILE);
  return write_resolv_conf(dirfd, dir, err);
}

int sandbox_write_bundle(const struct fsrun_context *ctx, const char *dir, const oci_config *config,
                         fsrun_error_t *err) {
  cleanup_free char *json_err = NULL;
  cleanup_free char *serialized = oci_config_serialize(config, true, &json_err);
  cleanup_free char *json = NULL;
  cleanup_free char *abs_dir = NULL;
  cleanup_close int dirfd = -1;
  cleanup_close int fd = -1;
  size_t len;

  if (serialized == NULL)
    return fsrun_error_take(err, 0, steal_ptr(&json_err));
  if (mkdir(dir, 0700) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "create the bundle directory `%s`", dir);
  dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return fsrun_error_errno(err, "open the bundle directory `%s`", dir);
  if (write_skeleton(dirfd, dir, config->root_path, err) < 0)
    return fsrun_error_code(err);
  /* O_EXCL: an existing config.json (or a symlink planted there) is never overwritten */
  fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST)
    return fsrun_error_make(err, 0, "config.json already exists in `%s`", dir);
  if (fd < 0)
    return fsrun_error_errno(err, "create `%s/config.json`", dir);
  /* the bytes as the file holds them: the mark's digest is of these */
  json = xasprintf("%s\n", serialized);
  len = strlen(json);
  if (safe_write_all(fd, json, len) < 0) {
    int saved = errno;
    unlinkat(dirfd, "config.json", 0);
    return fsrun_error_make(err, saved, "write `%s/config.json`", dir);
  }
  /* create honours the annotation of this file only (bundle-mark.h) */
  abs_dir = realpath(dir, NULL);
  if (abs_dir == NULL || bundle_mark_write(ctx, abs_dir, dirfd, fd, json, len, err) < 0) {
    if (abs_dir == NULL)
      fsrun_error_errno(err, "bundle: resolve `%s`", dir);
    unlinkat(dirfd, "config.json", 0);
    return fsrun_error_code(err);
  }
  return 0;
}

/* Removes what write_skeleton made in dir, and dir. */
static void remove_skeleton(const char *dir) {
  int dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return;
  unlinkat(dirfd, "rootfs", AT_REMOVEDIR);
  unlinkat(dirfd, SANDBOX_EMPTY_DIR, AT_REMOVEDIR);
  unlinkat(dirfd, SANDBOX_UNREADABLE_FILE, 0);
  unlinkat(dirfd, SANDBOX_RESOLV_CONF, 0);
  close(dirfd);
  rmdir(dir);
}

char *sandbox_shared_bundle(const char *state_root, fsrun_error_t *err) {
  cleanup_free char *dir = xasprintf("%s/%s", state_root, SANDBOX_SHARED_BUNDLE);
  cleanup_free char *tmp = NULL;
  cleanup_close int dirfd = -1;
  bool lost_race = false;
  struct stat st;
  int r = 0;

  if (lstat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
      fsrun_error_make(err, 0, "sandbox: `%s` is not a directory of ours", dir);
      return NULL;
    }
    /* what someone removed from it is made again (each step leaves what exists alone) */
    dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0) {
      fsrun_error_errno(err, "sandbox: open `%s`", dir);
      return NULL;
    }
    if ((fstatat(dirfd, "rootfs", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
         fstatat(dirfd, SANDBOX_EMPTY_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
         fstatat(dirfd, SANDBOX_UNREADABLE_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
         fstatat(dirfd, SANDBOX_RESOLV_CONF, &st, AT_SYMLINK_NOFOLLOW) < 0) &&
        write_skeleton(dirfd, dir, "rootfs", err) < 0)
      return NULL;
    if (write_resolv_conf(dirfd, dir, err) < 0)
      return NULL;
    return steal_ptr(&dir);
  }
  /* made once, under a temporary name and renamed into place: a sandbox never sees half of it */
  if (state_root_make(state_root, err) < 0)
    return NULL;
  tmp = xasprintf("%s.%d", dir, (int)getpid());
  remove_skeleton(tmp); /* left by a killed run that had our pid */
  if (mkdir(tmp, 0700) < 0) {
    fsrun_error_errno(err, "sandbox: create `%s`", tmp);
    return NULL;
  }
  dirfd = open(tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    r = fsrun_error_errno(err, "sandbox: open `%s`", tmp);
  if (r == 0)
    r = write_skeleton(dirfd, tmp, "rootfs", err);
  if (r == 0 && rename(tmp, dir) < 0) {
    if (errno == EEXIST || errno == ENOTEMPTY)
      lost_race = true; /* another sandbox made it first */
    else
      r = fsrun_error_errno(err, "sandbox: rename `%s` to `%s`", tmp, dir);
  }
  if (r < 0 || lost_race)
    remove_skeleton(tmp);
  if (r < 0)
    return NULL;
  return steal_ptr(&dir);
}

/* The limits as `fsrun sandbox` gives this caller (RLIMIT_DATA and RLIMIT_NPROC where no cgroup
 * holds memoryLimitMb and pidsLimit): config.json's process is the base of every `fsrun exec`, so
 * each command of a task container gets them. No watchdog keeps a CPU budget here: maxMs stays
 * the per-process RLIMIT_CPU. */
static void bundle_limits_apply(const oci_policy *policy, oci_config *config) {
  struct sandbox_limits limits;
  sandbox_limits_plan(policy, geteuid() != 0, false, &limits);
  limits.cpu_budget = false;
  sandbox_limits_apply(&limits, config);
  sandbox_limits_clear(&limits);
}

/* Such entries come after their mount (deeper, or added later at the same path: the depth sort
 * is stable). A bundle's task container is created later, by another process, and the runtime
 * attaches an overlay's covers nowhere: their paths decide there. */
void sandbox_covers_as_entries(oci_config *c, bool all) {
  struct mount_list l = {.items = c->mounts, .len = c->n_mounts};
  const size_t n = c->n_mounts;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < OCI_MOUNT_MAX_COVERS && l.items[i].covers[k] &&
                       (all || strcmp(l.items[i].type, "bind") != 0);
         k++) {
      const char *bind_dest = l.items[i].destination, *below = l.items[i].covers[k];
      cleanup_free char *dest =
          below[0] == '\0'
              ? xstrdup(bind_dest)
              : xasprintf("%s/%s", strcmp(bind_dest, "/") == 0 ? "" : bind_dest, below);
      if (!has_destination(&l, dest) || strcmp(dest, bind_dest) == 0)
        add_mount(&l, dest, "bind", l.items[i].cover_source,
                  (const char *const[]){"bind", "ro", "nosuid", "nodev", "noexec", NULL});
    }
  if (l.len == n)
    return;
  sort_mounts_by_depth(&l);
  c->mounts = l.items;
  c->n_mounts = l.len;
}

/* The binds of c under a tree the command writes (pin_bind_in_agent_tree): a bundle's task
 * container is created later, after its command may have left links there. */
static int pin_binds_in_agent_trees(oci_config *c, const struct agent_trees *t,
                                    fsrun_error_t *err) {
  for (size_t i = 0; i < c->n_mounts; i++)
    if (pin_bind_in_agent_tree(&c->mounts[i], i, t, err) < 0)
      return fsrun_error_code(err);
  return 0;
}

/* config.json decides everything the runtime does for the task container: the container's
 * command must not be able to rewrite it, so the bundle is never in a tree the command writes. */
static int check_out_dir(const char *out, const struct agent_trees *t, fsrun_error_t *err) {
  cleanup_free char *tree = agent_tree_holding_any(t, out);
  if (tree != NULL)
    return fsrun_error_make(
        err, 0, "bundle: --out `%s` is in `%s`, which the sandboxed command can write", out, tree);
  return 0;
}

/* The checks of every bind under a tree the command writes, as annotations for the create of
 * the task container, which reads the JSON (bind-identity.h); the bundle itself outside them. */
static int bundle_bind_checks(oci_config *c, const oci_policy *p, const char *worktree,
                              const char *out, fsrun_error_t *err) {
  cleanup_free char *common_dir = NULL;
  cleanup_free char *wt_git_dir = NULL;
  struct agent_trees t;
  if (sandbox_git_dirs(worktree, &common_dir, &wt_git_dir, err) < 0)
    return fsrun_error_code(err);
  t = (struct agent_trees){.worktree = worktree,
                           .common_dir = common_dir,
                           .wt_git_dir = wt_git_dir,
                           .writable = &p->writable_paths};
  if (check_out_dir(out, &t, err) < 0 || pin_binds_in_agent_trees(c, &t, err) < 0)
    return fsrun_error_code(err);
  return bind_checks_to_annotations(c, err);
}

int sandbox_bundle(const struct fsrun_context *ctx, const struct sandbox_bundle_opts *o,
                   fsrun_error_t *err) {
  oci_policy *policy = NULL;
  oci_config *config = NULL;
  cleanup_free char *worktree = NULL;
  int r;

  if (o->out_dir == NULL)
    return fsrun_error_make(err, 0, "bundle: --out DIR is required");
  if (o->worktree == NULL)
    return fsrun_error_make(err, 0, "bundle: --worktree DIR is required");
  if (sandbox_policy_load(o->policy_path, &policy, err) < 0)
    return fsrun_error_code(err);
  if (sandbox_network_profile(policy) == SANDBOX_NET_EGRESS)
    log_warning(
        "bundle: network egress needs `fsrun sandbox` to run its helper (slirp4netns): this "
        "bundle's network namespace has only lo");
  r = sandbox_resolve_worktree(o->worktree, &worktree, err);
  if (r == 0)
    r = sandbox_policy_respell(policy, worktree, err);
  /* the task container's create, start and exec use this state root too (the same --root) */
  if (r == 0)
    r = sandbox_check_state_root(policy, worktree, ctx->state_root, err);
  if (r == 0)
    r = sandbox_check_runtime_dir(policy, err);
  if (r == 0)
    r = sandbox_check_other_checkouts(policy, worktree, err);
  if (r == 0)
    r = sandbox_check_kernel_paths(policy, err);
  if (r == 0)
    r = sandbox_config_for_caller(policy, worktree, ctx->state_root, o->args, o->n_args,
                                  geteuid() != 0, NULL, NULL, &config, err);
  if (r == 0) {
    bundle_limits_apply(policy, config);
    sandbox_covers_as_entries(config, false);
  }
  /* each `fsrun exec` into the container gets the git overlay of a sandbox run (exec-git.c) */
  if (r == 0 && oci_map_set(&config->annotations, EXEC_GIT_ANNOTATION, worktree) < 0)
    r = fsrun_error_make(err, 0, "bundle: annotations: out of memory");
  if (r == 0)
    sandbox_git_read_only_config(worktree, config, geteuid() != 0);
  /* the create of the task container, from the JSON, checks the binds as a run does */
  if (r == 0)
    r = bundle_bind_checks(config, policy, worktree, o->out_dir, err);
  if (r == 0)
    r = sandbox_write_bundle(ctx, o->out_dir, config, err);
  if (config != NULL)
    oci_config_free(config);
  oci_policy_free(policy);
  return r;
}
