/* Semantic validation of config.json and of the Fusion policy.
 *
 * libocispec has already checked the JSON shape (types, required keys, known enum strings where the
 * spec fixes them). Here we check what needs the whole document or the host: relations between
 * fields (a hostname needs a UTS namespace, swap >= memory), value ranges the kernel would reject
 * later with a less helpful EINVAL, and paths that must exist. Each error is a single line naming
 * the field, as create reports it: "config.json: process.cwd: `tmp` is not an absolute path". */
#include "validate.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>

#include "bind-identity.h"
#include "bundle-mark.h"
#include "exec-git.h"
#include "caps.h"
#include "cgroup.h"
#include "log.h"
#include "root-links.h"
#include "sandbox.h"
#include "utils.h"
#include <libseccomp.h>

#define CONFIG_WHAT "config.json"

/* "config.json: FIELD: PROBLEM" */
static int config_error(fsrun_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int config_error(fsrun_error_t *err, const char *fmt, ...) {
  cleanup_free char *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  return fsrun_error_make(err, 0, "%s: %s", CONFIG_WHAT, msg ? msg : "invalid");
}

static bool str_in(const char *s, const char *const *list) {
  for (; *list != NULL; list++)
    if (strcmp(s, *list) == 0)
      return true;
  return false;
}

static bool is_empty(const char *s) {
  return s == NULL || s[0] == '\0';
}

/* A path component equal to ".." (in "/a/../b", "..", "a/.."). */
static bool has_dotdot_component(const char *path) {
  for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2) {
    bool starts = p == path || p[-1] == '/';
    bool ends = p[2] == '\0' || p[2] == '/';
    if (starts && ends)
      return true;
  }
  return false;
}

/* "0-3,7" as the kernel's cpuset/affinity lists accept it; the empty string means "unset". */
static bool is_cpu_list(const char *s) {
  const char *p = s;
  if (*p == '\0')
    return true;
  for (;;) {
    unsigned long first, last;
    char *end;
    if (!isdigit((unsigned char)*p))
      return false;
    first = strtoul(p, &end, 10);
    p = end;
    if (*p == '-') {
      p++;
      if (!isdigit((unsigned char)*p))
        return false;
      last = strtoul(p, &end, 10);
      p = end;
      if (last < first)
        return false;
    }
    if (*p == '\0')
      return true;
    if (*p != ',')
      return false;
    p++;
  }
}

/* --- namespaces ------------------------------------------------------------------------------- */

enum ns_kind { NS_PID, NS_NET, NS_MNT, NS_IPC, NS_UTS, NS_USER, NS_CGROUP, NS_TIME, NS_COUNT };
static const char *const ns_type_names[NS_COUNT + 1] = {"pid",  "network", "mount", "ipc", "uts",
                                                        "user", "cgroup",  "time",  NULL};

struct ns_summary {
  bool present[NS_COUNT]; /* the container gets its own namespace (new or joined by path) */
  bool is_new[NS_COUNT];  /* ... created for it (no path) */
};

static int check_namespaces(const oci_linux *l, struct ns_summary *ns, fsrun_error_t *err) {
  memset(ns, 0, sizeof(*ns));
  if (l == NULL)
    return 0;
  for (size_t i = 0; i < l->n_namespaces; i++) {
    const oci_namespace *n = &l->namespaces[i];
    int kind = -1;
    for (int k = 0; k < NS_COUNT; k++)
      if (n->type != NULL && strcmp(n->type, ns_type_names[k]) == 0)
        kind = k;
    if (kind < 0)
      return config_error(err,
                          "linux.namespaces[%zu].type: unknown namespace type `%s` (expected pid, "
                          "network, mount, ipc, uts, user, cgroup or time)",
                          i, n->type ? n->type : "");
    if (ns->present[kind])
      return config_error(err, "linux.namespaces[%zu].type: duplicate namespace type `%s`", i,
                          n->type);
    ns->present[kind] = true;
    ns->is_new[kind] = is_empty(n->path);
    if (n->path != NULL) {
      struct stat st;
      if (n->path[0] != '/')
        return config_error(err, "linux.namespaces[%zu].path: `%s` is not an absolute path", i,
                            n->path);
      if (stat(n->path, &st) < 0)
        return config_error(err, "linux.namespaces[%zu].path: `%s`: %s", i, n->path,
                            strerror(errno));
    }
  }
  return 0;
}

/* --- user namespace mappings ------------------------------------------------------------------ */

#define MAX_ID_MAP_LINES 340 /* the kernel's limit on uid_map/gid_map lines */

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) {
  return a < b + blen && b < a + alen;
}

static int check_mappings(const oci_id_mapping *m, size_t n, const char *field,
                          fsrun_error_t *err) {
  if (n > MAX_ID_MAP_LINES)
    return config_error(err, "%s: %zu entries, the kernel accepts at most %d", field, n,
                        MAX_ID_MAP_LINES);
  for (size_t i = 0; i < n; i++) {
    if (m[i].size == 0)
      return config_error(err, "%s[%zu].size: must be greater than 0", field, i);
    if ((uint64_t)m[i].container_id + m[i].size > (uint64_t)UINT32_MAX + 1)
      return config_error(err, "%s[%zu]: containerID + size overflows 32 bits", field, i);
    if ((uint64_t)m[i].host_id + m[i].size > (uint64_t)UINT32_MAX + 1)
      return config_error(err, "%s[%zu]: hostID + size overflows 32 bits", field, i);
    for (size_t j = 0; j < i; j++) {
      if (ranges_overlap(m[i].container_id, m[i].size, m[j].container_id, m[j].size))
        return config_error(err, "%s[%zu]: container range overlaps entry %zu", field, i, j);
      if (ranges_overlap(m[i].host_id, m[i].size, m[j].host_id, m[j].size))
        return config_error(err, "%s[%zu]: host range overlaps entry %zu", field, i, j);
    }
  }
  return 0;
}

static bool id_is_mapped(const oci_id_mapping *m, size_t n, uint32_t id) {
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && (uint64_t)id < (uint64_t)m[i].container_id + m[i].size)
      return true;
  return false;
}

static int check_user_namespace(const oci_config *c, const struct ns_summary *ns,
                                fsrun_error_t *err) {
  const oci_linux *l = c->linux_;
  size_t n_uid = l ? l->n_uid_mappings : 0, n_gid = l ? l->n_gid_mappings : 0;
  int ret;

  if (!ns->present[NS_USER]) {
    if (n_uid > 0)
      return config_error(err,
                          "linux.uidMappings: set, but linux.namespaces has no user namespace");
    if (n_gid > 0)
      return config_error(err,
                          "linux.gidMappings: set, but linux.namespaces has no user namespace");
    return 0;
  }
  if (!ns->is_new[NS_USER])
    return 0; /* joined: its maps were written by whoever created it */
  if (n_uid == 0)
    return config_error(err, "linux.uidMappings: a new user namespace needs uid mappings");
  if (n_gid == 0)
    return config_error(err, "linux.gidMappings: a new user namespace needs gid mappings");
  ret = check_mappings(l->uid_mappings, n_uid, "linux.uidMappings", err);
  if (ret < 0)
    return ret;
  ret = check_mappings(l->gid_mappings, n_gid, "linux.gidMappings", err);
  if (ret < 0)
    return ret;

  if (c->process != NULL) {
    const oci_user *u = &c->process->user;
    if (!id_is_mapped(l->uid_mappings, n_uid, u->uid))
      return config_error(err, "process.user.uid: %u is not mapped by linux.uidMappings", u->uid);
    if (!id_is_mapped(l->gid_mappings, n_gid, u->gid))
      return config_error(err, "process.user.gid: %u is not mapped by linux.gidMappings", u->gid);
    for (size_t i = 0; i < u->n_additional_gids; i++)
      if (!id_is_mapped(l->gid_mappings, n_gid, u->additional_gids[i]))
        return config_error(err,
                            "process.user.additionalGids[%zu]: %u is not mapped by "
                            "linux.gidMappings",
                            i, u->additional_gids[i]);
  }
  return 0;
}

/* --- process ---------------------------------------------------------------------------------- */

/* libcap's probe of the running kernel (PR_CAPBSET_READ at start-up): the same number as
 * /proc/sys/kernel/cap_last_cap, without reading it in every create */
static int kernel_last_cap(void) {
  return (int)cap_max_bits() - 1;
}

/* Unknown capabilities are dropped with a warning rather than refused: images and orchestrators
 * routinely list capabilities newer than the host kernel. */
static void warn_unknown_caps(const oci_strv *set, const char *set_name) {
  for (size_t i = 0; i < set->len; i++) {
    const char *name = set->items[i];
    cap_value_t value;
    if (strncasecmp(name, "CAP_", 4) != 0 || cap_from_name(name, &value) < 0 ||
        (int)value > kernel_last_cap())
      log_warning("%s: process.capabilities.%s[%zu]: capability `%s` is unknown to this kernel, "
                  "ignored",
                  CONFIG_WHAT, set_name, i, name);
  }
}

static int check_env(const oci_strv *env, const char *field, fsrun_error_t *err) {
  for (size_t i = 0; i < env->len; i++) {
    const char *eq = strchr(env->items[i], '=');
    if (eq == NULL || eq == env->items[i])
      return config_error(err, "%s[%zu]: `%s` is not of the form KEY=VALUE", field, i,
                          env->items[i]);
  }
  return 0;
}

static int check_scheduler(const oci_scheduler *s, fsrun_error_t *err) {
  static const char *const policies[] = {"SCHED_OTHER",    "SCHED_FIFO", "SCHED_RR",
                                         "SCHED_BATCH",    "SCHED_ISO",  "SCHED_IDLE",
                                         "SCHED_DEADLINE", NULL};
  static const char *const flags[] = {"SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",
                                      "SCHED_FLAG_DL_OVERRUN",     "SCHED_FLAG_KEEP_POLICY",
                                      "SCHED_FLAG_KEEP_PARAMS",    "SCHED_FLAG_UTIL_CLAMP_MIN",
                                      "SCHED_FLAG_UTIL_CLAMP_MAX", NULL};
  bool realtime;
  if (is_empty(s->policy) || !str_in(s->policy, policies))
    return config_error(err, "process.scheduler.policy: unknown policy `%s`",
                        s->policy ? s->policy : "");
  if (s->has_nice && (s->nice < -20 || s->nice > 19))
    return config_error(err, "process.scheduler.nice: %d is outside -20..19", (int)s->nice);
  realtime = strcmp(s->policy, "SCHED_FIFO") == 0 || strcmp(s->policy, "SCHED_RR") == 0;
  if (s->has_priority && realtime && (s->priority < 1 || s->priority > 99))
    return config_error(err, "process.scheduler.priority: %d is outside 1..99 for %s",
                        (int)s->priority, s->policy);
  if (s->has_priority && !realtime && s->priority != 0)
    return config_error(err, "process.scheduler.priority: must be 0 for %s", s->policy);
  for (size_t i = 0; i < s->flags.len; i++)
    if (!str_in(s->flags.items[i], flags))
      return config_error(err, "process.scheduler.flags[%zu]: unknown flag `%s`", i,
                          s->flags.items[i]);
  if (strcmp(s->policy, "SCHED_DEADLINE") == 0) {
    if (s->has_runtime && s->has_deadline && s->runtime > s->deadline)
      return config_error(err, "process.scheduler.runtime: greater than deadline");
    if (s->has_deadline && s->has_period && s->period != 0 && s->deadline > s->period)
      return config_error(err, "process.scheduler.deadline: greater than period");
  }
  return 0;
}

static int check_process(const oci_process *p, fsrun_error_t *err) {
  static const char *const io_classes[] = {"IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE",
                                           "IOPRIO_CLASS_IDLE", NULL};
  int ret;

  if (p->args.len == 0)
    return config_error(err, "process.args: must not be empty");
  if (is_empty(p->args.items[0]))
    return config_error(err, "process.args[0]: must not be empty");
  if (is_empty(p->cwd))
    return config_error(err, "process.cwd: missing");
  if (p->cwd[0] != '/')
    return config_error(err, "process.cwd: `%s` is not an absolute path", p->cwd);
  ret = check_env(&p->env, "process.env", err);
  if (ret < 0)
    return ret;
  if (p->user.has_umask && p->user.umask > 0777)
    return config_error(err, "process.user.umask: %#o has bits outside 0777", p->user.umask);

  for (size_t i = 0; i < p->n_rlimits; i++) {
    const oci_rlimit *r = &p->rlimits[i];
    if (is_empty(r->type) || rlimit_from_name(r->type) < 0)
      return config_error(err, "process.rlimits[%zu].type: unknown resource `%s`", i,
                          r->type ? r->type : "");
    for (size_t j = 0; j < i; j++)
      if (strcmp(p->rlimits[j].type, r->type) == 0)
        return config_error(err, "process.rlimits[%zu].type: duplicate %s (also entry %zu)", i,
                            r->type, j);
    if (r->soft > r->hard)
      return config_error(err, "process.rlimits[%zu].soft: %llu is greater than hard %llu", i,
                          (unsigned long long)r->soft, (unsigned long long)r->hard);
  }

  if (p->capabilities != NULL) {
    warn_unknown_caps(&p->capabilities->bounding, "bounding");
    warn_unknown_caps(&p->capabilities->effective, "effective");
    warn_unknown_caps(&p->capabilities->inheritable, "inheritable");
    warn_unknown_caps(&p->capabilities->permitted, "permitted");
    warn_unknown_caps(&p->capabilities->ambient, "ambient");
  }

  if (p->has_oom_score_adj && (p->oom_score_adj < -1000 || p->oom_score_adj > 1000))
    return config_error(err, "process.oomScoreAdj: %d is outside -1000..1000",
                        (int)p->oom_score_adj);
  if (p->scheduler != NULL && (ret = check_scheduler(p->scheduler, err)) < 0)
    return ret;
  if (p->io_priority != NULL) {
    if (is_empty(p->io_priority->class_) || !str_in(p->io_priority->class_, io_classes))
      return config_error(err, "process.ioPriority.class: unknown class `%s`",
                          p->io_priority->class_ ? p->io_priority->class_ : "");
    if (p->io_priority->priority < 0 || p->io_priority->priority > 7)
      return config_error(err, "process.ioPriority.priority: %d is outside 0..7",
                          (int)p->io_priority->priority);
  }
  if (p->exec_cpu_affinity != NULL) {
    if (p->exec_cpu_affinity->initial && !is_cpu_list(p->exec_cpu_affinity->initial))
      return config_error(err, "process.execCPUAffinity.initial: `%s` is not a CPU list like 0-3,7",
                          p->exec_cpu_affinity->initial);
    if (p->exec_cpu_affinity->final && !is_cpu_list(p->exec_cpu_affinity->final))
      return config_error(err, "process.execCPUAffinity.final: `%s` is not a CPU list like 0-3,7",
                          p->exec_cpu_affinity->final);
  }
  return 0;
}

/* --- root, mounts, hooks ---------------------------------------------------------------------- */

static int check_root(const oci_config *c, const char *bundle_dir, fsrun_error_t *err) {
  cleanup_free char *path = NULL;
  struct stat st;
  if (!c->has_root || is_empty(c->root_path))
    return config_error(err, "root.path: missing");
  if (c->root_path[0] == '/' || bundle_dir == NULL)
    path = xstrdup(c->root_path);
  else
    path = xasprintf("%s/%s", bundle_dir, c->root_path);
  if (stat(path, &st) < 0) {
    if (errno == ENOENT)
      return config_error(err, "root.path: `%s` does not exist", path);
    return config_error(err, "root.path: `%s`: %s", path, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return config_error(err, "root.path: `%s` is not a directory", path);
  return 0;
}

static bool mount_is_bind(const oci_mount *m) {
  if (m->type != NULL && (strcmp(m->type, "bind") == 0 || strcmp(m->type, "rbind") == 0))
    return true;
  for (size_t i = 0; i < m->options.len; i++)
    if (strcmp(m->options.items[i], "bind") == 0 || strcmp(m->options.items[i], "rbind") == 0)
      return true;
  return false;
}

/* The "idmap" / "ridmap" option of m, or NULL. */
static const char *mount_idmap_option(const oci_mount *m) {
  for (size_t i = 0; i < m->options.len; i++)
    if (strcmp(m->options.items[i], "idmap") == 0 || strcmp(m->options.items[i], "ridmap") == 0)
      return m->options.items[i];
  return NULL;
}

static int check_mounts(const oci_config *c, fsrun_error_t *err) {
  for (size_t i = 0; i < c->n_mounts; i++) {
    const oci_mount *m = &c->mounts[i];
    int ret;
    /* relative destinations are allowed since runtime-spec 1.2 (resolved against /) */
    if (is_empty(m->destination))
      return config_error(err, "mounts[%zu].destination: must not be empty", i);
    /* any filesystem type is acceptable, but "" is a mistake, not "unset" */
    if (m->type != NULL && m->type[0] == '\0')
      return config_error(err, "mounts[%zu].type: must not be empty", i);
    if (mount_is_bind(m) && is_empty(m->source))
      return config_error(err, "mounts[%zu].source: a bind mount needs a source", i);
    for (size_t j = 0; j < m->options.len; j++)
      if (m->options.items[j][0] == '\0')
        return config_error(err, "mounts[%zu].options[%zu]: must not be empty", i, j);
    if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0) {
      cleanup_free char *uid_field = xasprintf("mounts[%zu].uidMappings", i);
      cleanup_free char *gid_field = xasprintf("mounts[%zu].gidMappings", i);
      if (m->n_uid_mappings == 0 || m->n_gid_mappings == 0)
        return config_error(err,
                            "mounts[%zu]: an idmapped mount needs both uidMappings and "
                            "gidMappings",
                            i);
      if ((ret = check_mappings(m->uid_mappings, m->n_uid_mappings, uid_field, err)) < 0)
        return ret;
      if ((ret = check_mappings(m->gid_mappings, m->n_gid_mappings, gid_field, err)) < 0)
        return ret;
      /* the kernel idmaps mounts, not filesystems: only a bind has a source mount to idmap */
      if (!mount_is_bind(m))
        return config_error(
            err, "mounts[%zu].uidMappings: only a bind mount can be idmapped (type `%s`)", i,
            m->type ? m->type : "");
    }
    if (mount_idmap_option(m) != NULL && !mount_is_bind(m))
      return config_error(err,
                          "mounts[%zu].options: `%s` is only valid on a bind mount (type `%s`)", i,
                          mount_idmap_option(m), m->type ? m->type : "");
  }
  return 0;
}

/* "idmap" without mappings idmaps with the container's own user namespace: there must be one. */
static int check_idmap_userns(const oci_config *c, const struct ns_summary *ns,
                              fsrun_error_t *err) {
  for (size_t i = 0; i < c->n_mounts; i++) {
    const oci_mount *m = &c->mounts[i];
    const char *opt = mount_idmap_option(m);
    if (opt != NULL && m->n_uid_mappings == 0 && !ns->present[NS_USER])
      return config_error(err,
                          "mounts[%zu].options: `%s` without uidMappings/gidMappings uses the "
                          "container's user namespace, and linux.namespaces has none",
                          i, opt);
  }
  return 0;
}

static int check_hook_list(const oci_hook_list *list, const char *name, fsrun_error_t *err) {
  for (size_t i = 0; i < list->len; i++) {
    const oci_hook *h = &list->items[i];
    int ret;
    if (is_empty(h->path))
      return config_error(err, "hooks.%s[%zu].path: missing", name, i);
    if (h->path[0] != '/')
      return config_error(err, "hooks.%s[%zu].path: `%s` is not an absolute path", name, i,
                          h->path);
    if (h->has_timeout && h->timeout <= 0)
      return config_error(err, "hooks.%s[%zu].timeout: must be greater than 0", name, i);
    {
      cleanup_free char *field = xasprintf("hooks.%s[%zu].env", name, i);
      if ((ret = check_env(&h->env, field, err)) < 0)
        return ret;
    }
  }
  return 0;
}

static int check_hooks(const oci_hooks *h, fsrun_error_t *err) {
  int ret;
  if (h == NULL)
    return 0;
  if ((ret = check_hook_list(&h->prestart, "prestart", err)) < 0 ||
      (ret = check_hook_list(&h->create_runtime, "createRuntime", err)) < 0 ||
      (ret = check_hook_list(&h->create_container, "createContainer", err)) < 0 ||
      (ret = check_hook_list(&h->start_container, "startContainer", err)) < 0 ||
      (ret = check_hook_list(&h->poststart, "poststart", err)) < 0 ||
      (ret = check_hook_list(&h->poststop, "poststop", err)) < 0)
    return ret;
  return 0;
}

/* --- hostname, sysctl ------------------------------------------------------------------------- */

#define HOST_NAME_LIMIT 64 /* the kernel's __NEW_UTS_LEN */

static int check_uts(const oci_config *c, const struct ns_summary *ns, fsrun_error_t *err) {
  /* "" is what some clients write for "keep the host's" */
  if (!is_empty(c->hostname)) {
    if (!ns->present[NS_UTS])
      return config_error(err,
                          "hostname: setting it needs a UTS namespace (add {\"type\": \"uts\"} "
                          "to linux.namespaces)");
    if (strlen(c->hostname) > HOST_NAME_LIMIT)
      return config_error(err, "hostname: longer than %d bytes", HOST_NAME_LIMIT);
  }
  if (!is_empty(c->domainname)) {
    if (!ns->present[NS_UTS])
      return config_error(err, "domainname: setting it needs a UTS namespace (add {\"type\": "
                               "\"uts\"} to linux.namespaces)");
    if (strlen(c->domainname) > HOST_NAME_LIMIT)
      return config_error(err, "domainname: longer than %d bytes", HOST_NAME_LIMIT);
  }
  return 0;
}

static bool sysctl_name_is_valid(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || name[0] == '.' || name[0] == '/' || name[len - 1] == '.' ||
      name[len - 1] == '/' || has_dotdot_component(name))
    return false;
  for (const char *p = name; *p; p++) {
    if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p) || *p == '=')
      return false;
    if (*p == '/' && p[1] == '/')
      return false;
  }
  return true;
}

/* The sysctls a container may set are the namespaced ones, and only when it has the namespace:
 * otherwise the write would change the host. */
static int check_sysctl(const oci_linux *l, const struct ns_summary *ns, fsrun_error_t *err) {
  static const char *const ipc_sysctls[] = {
      "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",          "kernel.sem", "kernel.shmall",
      "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", NULL};
  static const char *const uts_sysctls[] = {"kernel.hostname", "kernel.domainname", NULL};
  if (l == NULL)
    return 0;
  for (size_t i = 0; i < l->sysctl.len; i++) {
    const char *key = l->sysctl.keys[i];
    cleanup_free char *dotted = NULL;
    if (!sysctl_name_is_valid(key))
      return config_error(err, "linux.sysctl: `%s` is not a valid sysctl name", key);
    /* "net/ipv4/ip_forward" is "net.ipv4.ip_forward"; only the prefix matters below */
    dotted = xstrdup(key);
    for (char *p = dotted; *p; p++)
      if (*p == '/')
        *p = '.';
    if (strncmp(dotted, "net.", 4) == 0) {
      if (!ns->present[NS_NET])
        return config_error(err, "linux.sysctl: `%s` needs a network namespace", key);
    } else if (str_in(dotted, ipc_sysctls) || strncmp(dotted, "fs.mqueue.", 10) == 0) {
      if (!ns->present[NS_IPC])
        return config_error(err, "linux.sysctl: `%s` needs an IPC namespace", key);
    } else if (str_in(dotted, uts_sysctls)) {
      if (!ns->present[NS_UTS])
        return config_error(err, "linux.sysctl: `%s` needs a UTS namespace", key);
    } else {
      return config_error(err,
                          "linux.sysctl: `%s` is not namespaced: setting it would change the "
                          "host",
                          key);
    }
  }
  return 0;
}

/* kernel.hostname / kernel.domainname that say otherwise than hostname / domainname: which one
 * wins would depend on the order of the writes (runc refuses them too) */
static int check_sysctl_uts(const oci_config *c, fsrun_error_t *err) {
  static const struct {
    const char *sysctl, *slashed, *field;
  } pairs[] = {{"kernel.hostname", "kernel/hostname", "hostname"},
               {"kernel.domainname", "kernel/domainname", "domainname"}};
  if (c->linux_ == NULL)
    return 0;
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
    const char *field = i == 0 ? c->hostname : c->domainname;
    const char *value = oci_map_get(&c->linux_->sysctl, pairs[i].sysctl);
    if (value == NULL)
      value = oci_map_get(&c->linux_->sysctl, pairs[i].slashed);
    if (value != NULL && !is_empty(field) && strcmp(value, field) != 0)
      return config_error(err, "linux.sysctl: `%s` (`%s`) conflicts with %s (`%s`)",
                          pairs[i].sysctl, value, pairs[i].field, field);
  }
  return 0;
}

/* --- devices ---------------------------------------------------------------------------------- */

static int check_devices(const oci_linux *l, fsrun_error_t *err) {
  for (size_t i = 0; i < l->n_devices; i++) {
    const oci_device *d = &l->devices[i];
    /* The spec lets devices live anywhere in the container, not only under /dev. */
    if (is_empty(d->path))
      return config_error(err, "linux.devices[%zu].path: missing", i);
    if (d->path[0] != '/')
      return config_error(err, "linux.devices[%zu].path: `%s` is not an absolute path", i, d->path);
    if (has_dotdot_component(d->path) || strcmp(d->path, "/") == 0 ||
        strcmp(d->path, "/dev") == 0 || strcmp(d->path, "/dev/") == 0)
      return config_error(err, "linux.devices[%zu].path: `%s` cannot be a device", i, d->path);
    if (is_empty(d->type) || strlen(d->type) != 1 || strchr("cbup", d->type[0]) == NULL)
      return config_error(err,
                          "linux.devices[%zu].type: unknown device type `%s` (expected c, b, "
                          "u or p)",
                          i, d->type ? d->type : "");
    if (d->type[0] != 'p' && (!d->has_major || !d->has_minor))
      return config_error(err, "linux.devices[%zu]: major and minor are required for type `%s`", i,
                          d->type);
    if ((d->has_major && d->major < 0) || (d->has_minor && d->minor < 0))
      return config_error(err, "linux.devices[%zu]: major and minor must not be negative", i);
    /* clients copy st_mode, file type bits included (020666 for a char device) */
    if (d->has_file_mode && (d->file_mode & ~(uint32_t)(S_IFMT | 07777)) != 0)
      return config_error(err, "linux.devices[%zu].fileMode: %#o is not a file mode", i,
                          d->file_mode);
    for (size_t j = 0; j < i; j++)
      if (strcmp(l->devices[j].path, d->path) == 0)
        return config_error(err, "linux.devices[%zu].path: `%s` is also linux.devices[%zu]", i,
                            d->path, j);
  }
  return 0;
}

/* --- cgroups ---------------------------------------------------------------------------------- */

static int check_cgroups_path(const char *path, bool systemd, fsrun_error_t *err) {
  if (path == NULL || path[0] == '\0')
    return 0;
  if (systemd) {
    /* slice:prefix:name, e.g. "system.slice:cri-containerd:ID" or ":fsrun:ID" */
    const char *c1 = strchr(path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    size_t slice_len;
    if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL)
      return config_error(err,
                          "linux.cgroupsPath: `%s` is not of the form slice:prefix:name "
                          "(required by --systemd-cgroup)",
                          path);
    slice_len = (size_t)(c1 - path);
    if (slice_len > 0 && (slice_len < 6 || strncmp(c1 - 6, ".slice", 6) != 0))
      return config_error(err, "linux.cgroupsPath: slice `%.*s` does not end in .slice",
                          (int)slice_len, path);
    if (c2[1] == '\0')
      return config_error(err, "linux.cgroupsPath: `%s` has an empty name", path);
    if (strchr(path, '/') != NULL)
      return config_error(err, "linux.cgroupsPath: `%s`: systemd unit names cannot contain `/`",
                          path);
    return 0;
  }
  if (has_dotdot_component(path))
    return config_error(err, "linux.cgroupsPath: `%s` must not contain `..`", path);
  return 0;
}

static bool is_page_size(const char *s) {
  const char *p = s;
  if (!isdigit((unsigned char)*p))
    return false;
  while (isdigit((unsigned char)*p))
    p++;
  return strlen(p) == 2 && strchr("KMGTP", p[0]) != NULL && p[1] == 'B';
}

static int check_memory(const oci_memory *m, fsrun_error_t *err) {
  static const struct {
    const char *name;
    size_t has_off, value_off;
  } limits[] = {
      {"limit", offsetof(oci_memory, has_limit), offsetof(oci_memory, limit)},
      {"reservation", offsetof(oci_memory, has_reservation), offsetof(oci_memory, reservation)},
      {"swap", offsetof(oci_memory, has_swap), offsetof(oci_memory, swap)},
      {"kernel", offsetof(oci_memory, has_kernel), offsetof(oci_memory, kernel)},
      {"kernelTCP", offsetof(oci_memory, has_kernel_tcp), offsetof(oci_memory, kernel_tcp)},
  };
  for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
    bool has = *(const bool *)((const char *)m + limits[i].has_off);
    int64_t value = *(const int64_t *)((const char *)m + limits[i].value_off);
    if (has && value < -1)
      return config_error(err, "linux.resources.memory.%s: %lld is negative (-1 means unlimited)",
                          limits[i].name, (long long)value);
  }
  /* swap is memory+swap: it cannot be below the memory limit */
  if (m->has_limit && m->has_swap && m->limit > 0 && m->swap > 0 && m->swap < m->limit)
    return config_error(err,
                        "linux.resources.memory.swap: %lld is less than memory.limit %lld "
                        "(swap counts memory+swap)",
                        (long long)m->swap, (long long)m->limit);
  if (m->has_swap && m->swap > 0 && (!m->has_limit || m->limit <= 0))
    return config_error(err, "linux.resources.memory.swap: set without a memory.limit");
  if (m->has_swappiness && m->swappiness > 100)
    return config_error(err, "linux.resources.memory.swappiness: %llu is outside 0..100",
                        (unsigned long long)m->swappiness);
  return 0;
}

#define CPU_PERIOD_MIN 1000ULL    /* 1 ms, the kernel's lower bound for cfs_period_us/quota */
#define CPU_PERIOD_MAX 1000000ULL /* 1 s */
#define CPU_SHARES_MAX 262144ULL

static int check_cpu(const oci_cpu *c, fsrun_error_t *err) {
  if (c->has_shares && c->shares != 0 && (c->shares < 2 || c->shares > CPU_SHARES_MAX))
    return config_error(err, "linux.resources.cpu.shares: %llu is outside 2..%llu",
                        (unsigned long long)c->shares, CPU_SHARES_MAX);
  if (c->has_period && c->period != 0 && (c->period < CPU_PERIOD_MIN || c->period > CPU_PERIOD_MAX))
    return config_error(err, "linux.resources.cpu.period: %llu is outside %llu..%llu microseconds",
                        (unsigned long long)c->period, CPU_PERIOD_MIN, CPU_PERIOD_MAX);
  if (c->has_quota && c->quota < -1)
    return config_error(err, "linux.resources.cpu.quota: %lld is negative (-1 means unlimited)",
                        (long long)c->quota);
  if (c->has_quota && c->quota > 0 && (uint64_t)c->quota < CPU_PERIOD_MIN)
    return config_error(err,
                        "linux.resources.cpu.quota: %lld is below the kernel's minimum of "
                        "%llu microseconds",
                        (long long)c->quota, CPU_PERIOD_MIN);
  if (c->has_burst && c->burst > 0) {
    if (!c->has_quota || c->quota <= 0)
      return config_error(err, "linux.resources.cpu.burst: set without a positive quota");
    if (c->burst > (uint64_t)c->quota)
      return config_error(err, "linux.resources.cpu.burst: %llu is greater than quota %lld",
                          (unsigned long long)c->burst, (long long)c->quota);
  }
  if (c->has_idle && c->idle != 0 && c->idle != 1)
    return config_error(err, "linux.resources.cpu.idle: %lld is not 0 or 1", (long long)c->idle);
  if (c->has_realtime_runtime && c->has_realtime_period && c->realtime_runtime > 0 &&
      (uint64_t)c->realtime_runtime > c->realtime_period)
    return config_error(err, "linux.resources.cpu.realtimeRuntime: greater than realtimePeriod");
  if (c->cpus != NULL && !is_cpu_list(c->cpus))
    return config_error(err, "linux.resources.cpu.cpus: `%s` is not a CPU list like 0-3,7",
                        c->cpus);
  if (c->mems != NULL && !is_cpu_list(c->mems))
    return config_error(err, "linux.resources.cpu.mems: `%s` is not a node list like 0-1,3",
                        c->mems);
  return 0;
}

#define BLKIO_WEIGHT_MIN 10
#define BLKIO_WEIGHT_MAX 1000

static int check_block_io(const oci_block_io *b, fsrun_error_t *err) {
  /* 0 means "not set" to the clients that always send the field */
  if (b->has_weight && b->weight != 0 &&
      (b->weight < BLKIO_WEIGHT_MIN || b->weight > BLKIO_WEIGHT_MAX))
    return config_error(err, "linux.resources.blockIO.weight: %u is outside %d..%d",
                        (unsigned)b->weight, BLKIO_WEIGHT_MIN, BLKIO_WEIGHT_MAX);
  if (b->has_leaf_weight && b->leaf_weight != 0 &&
      (b->leaf_weight < BLKIO_WEIGHT_MIN || b->leaf_weight > BLKIO_WEIGHT_MAX))
    return config_error(err, "linux.resources.blockIO.leafWeight: %u is outside %d..%d",
                        (unsigned)b->leaf_weight, BLKIO_WEIGHT_MIN, BLKIO_WEIGHT_MAX);
  for (size_t i = 0; i < b->n_weight_device; i++) {
    const oci_weight_device *w = &b->weight_device[i];
    if (!w->has_weight && !w->has_leaf_weight)
      return config_error(err,
                          "linux.resources.blockIO.weightDevice[%zu]: needs weight or "
                          "leafWeight",
                          i);
    if (w->has_weight && (w->weight < BLKIO_WEIGHT_MIN || w->weight > BLKIO_WEIGHT_MAX))
      return config_error(err,
                          "linux.resources.blockIO.weightDevice[%zu].weight: %u is outside "
                          "%d..%d",
                          i, (unsigned)w->weight, BLKIO_WEIGHT_MIN, BLKIO_WEIGHT_MAX);
    if (w->has_leaf_weight &&
        (w->leaf_weight < BLKIO_WEIGHT_MIN || w->leaf_weight > BLKIO_WEIGHT_MAX))
      return config_error(err,
                          "linux.resources.blockIO.weightDevice[%zu].leafWeight: %u is "
                          "outside %d..%d",
                          i, (unsigned)w->leaf_weight, BLKIO_WEIGHT_MIN, BLKIO_WEIGHT_MAX);
  }
  return 0;
}

static int check_resources(const oci_resources *r, fsrun_error_t *err) {
  int ret;
  for (size_t i = 0; i < r->n_devices; i++) {
    const oci_device_cgroup *d = &r->devices[i];
    if (d->type != NULL && (strlen(d->type) != 1 || strchr("abc", d->type[0]) == NULL))
      return config_error(err,
                          "linux.resources.devices[%zu].type: unknown type `%s` (expected a, "
                          "b or c)",
                          i, d->type);
    if (d->access != NULL) {
      if (d->access[0] == '\0')
        return config_error(err, "linux.resources.devices[%zu].access: must not be empty", i);
      if (strspn(d->access, "rwm") != strlen(d->access))
        return config_error(err,
                            "linux.resources.devices[%zu].access: `%s` is not a combination "
                            "of r, w and m",
                            i, d->access);
    }
    if ((d->has_major && d->major < -1) || (d->has_minor && d->minor < -1))
      return config_error(err, "linux.resources.devices[%zu]: negative major or minor", i);
  }
  if (r->memory != NULL && (ret = check_memory(r->memory, err)) < 0)
    return ret;
  if (r->cpu != NULL && (ret = check_cpu(r->cpu, err)) < 0)
    return ret;
  if (r->pids != NULL && r->pids->has_limit && r->pids->limit < -1)
    return config_error(err, "linux.resources.pids.limit: %lld is negative (-1 means unlimited)",
                        (long long)r->pids->limit);
  if (r->block_io != NULL && (ret = check_block_io(r->block_io, err)) < 0)
    return ret;
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    if (is_empty(r->hugepage_limits[i].page_size) || !is_page_size(r->hugepage_limits[i].page_size))
      return config_error(err,
                          "linux.resources.hugepageLimits[%zu].pageSize: `%s` is not a size "
                          "like 2MB or 1GB",
                          i,
                          r->hugepage_limits[i].page_size ? r->hugepage_limits[i].page_size : "");
  for (size_t i = 0; i < r->n_rdma; i++)
    if (!r->rdma[i].has_hca_handles && !r->rdma[i].has_hca_objects)
      return config_error(err, "linux.resources.rdma.%s: needs hcaHandles or hcaObjects",
                          r->rdma[i].device ? r->rdma[i].device : "");
  for (size_t i = 0; i < r->unified.len; i++) {
    /* a file of the container's own cgroup: "memory.max", never a path elsewhere or cgroup.procs */
    const char *why = cgroup_unified_key_refusal(r->unified.keys[i]);
    if (why != NULL)
      return config_error(err, "linux.resources.unified: `%s` %s", r->unified.keys[i], why);
  }
  return 0;
}

/* --- the rest of linux ------------------------------------------------------------------------ */

static int check_seccomp(const oci_seccomp *s, fsrun_error_t *err) {
  static const char *const actions[] = {"SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
                                        "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
                                        "SCMP_ACT_ERRNO",       "SCMP_ACT_TRACE",
                                        "SCMP_ACT_ALLOW",       "SCMP_ACT_LOG",
                                        "SCMP_ACT_NOTIFY",      NULL};
  static const char *const operators[] = {"SCMP_CMP_NE",        "SCMP_CMP_LT", "SCMP_CMP_LE",
                                          "SCMP_CMP_EQ",        "SCMP_CMP_GE", "SCMP_CMP_GT",
                                          "SCMP_CMP_MASKED_EQ", NULL};
  static const char *const flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                                      "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                                      "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL};
  bool uses_notify;

  if (is_empty(s->default_action) || !str_in(s->default_action, actions))
    return config_error(err, "linux.seccomp.defaultAction: unknown action `%s`",
                        s->default_action ? s->default_action : "");
  if (s->has_default_errno_ret && strcmp(s->default_action, "SCMP_ACT_ERRNO") != 0 &&
      strcmp(s->default_action, "SCMP_ACT_TRACE") != 0)
    return config_error(err, "linux.seccomp.defaultErrnoRet: %s takes no errno", s->default_action);
  uses_notify = strcmp(s->default_action, "SCMP_ACT_NOTIFY") == 0;
  for (size_t i = 0; i < s->architectures.len; i++) {
    const char *arch = s->architectures.items[i];
    cleanup_free char *lower = NULL;
    if (strncmp(arch, "SCMP_ARCH_", 10) != 0)
      return config_error(err, "linux.seccomp.architectures[%zu]: unknown architecture `%s`", i,
                          arch);
    lower = xstrdup(arch + 10);
    for (char *p = lower; *p; p++)
      *p = (char)tolower((unsigned char)*p);
    if (seccomp_arch_resolve_name(lower) == 0)
      return config_error(err, "linux.seccomp.architectures[%zu]: unknown architecture `%s`", i,
                          arch);
  }
  for (size_t i = 0; i < s->flags.len; i++)
    if (!str_in(s->flags.items[i], flags))
      return config_error(err, "linux.seccomp.flags[%zu]: unknown flag `%s`", i, s->flags.items[i]);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const oci_seccomp_syscall *sc = &s->syscalls[i];
    if (sc->names.len == 0)
      return config_error(err, "linux.seccomp.syscalls[%zu].names: must not be empty", i);
    for (size_t j = 0; j < sc->names.len; j++)
      if (sc->names.items[j][0] == '\0')
        return config_error(err, "linux.seccomp.syscalls[%zu].names[%zu]: must not be empty", i, j);
    if (is_empty(sc->action) || !str_in(sc->action, actions))
      return config_error(err, "linux.seccomp.syscalls[%zu].action: unknown action `%s`", i,
                          sc->action ? sc->action : "");
    if (sc->has_errno_ret && strcmp(sc->action, "SCMP_ACT_ERRNO") != 0 &&
        strcmp(sc->action, "SCMP_ACT_TRACE") != 0)
      return config_error(err, "linux.seccomp.syscalls[%zu].errnoRet: %s takes no errno", i,
                          sc->action);
    if (strcmp(sc->action, "SCMP_ACT_NOTIFY") == 0)
      uses_notify = true;
    for (size_t j = 0; j < sc->n_args; j++) {
      if (sc->args[j].index > 5)
        return config_error(err, "linux.seccomp.syscalls[%zu].args[%zu].index: %u is outside 0..5",
                            i, j, sc->args[j].index);
      if (is_empty(sc->args[j].op) || !str_in(sc->args[j].op, operators))
        return config_error(err, "linux.seccomp.syscalls[%zu].args[%zu].op: unknown operator `%s`",
                            i, j, sc->args[j].op ? sc->args[j].op : "");
    }
  }
  if (uses_notify && is_empty(s->listener_path))
    return config_error(err, "linux.seccomp.listenerPath: SCMP_ACT_NOTIFY needs a listener path");
  if (s->listener_metadata != NULL && is_empty(s->listener_path))
    return config_error(err, "linux.seccomp.listenerMetadata: set without listenerPath");
  return 0;
}

static int check_memory_policy(const oci_memory_policy *m, fsrun_error_t *err) {
  static const char *const modes[] = {
      "MPOL_DEFAULT",   "MPOL_BIND",           "MPOL_INTERLEAVE", "MPOL_WEIGHTED_INTERLEAVE",
      "MPOL_PREFERRED", "MPOL_PREFERRED_MANY", "MPOL_LOCAL",      NULL};
  static const char *const flags[] = {"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                      "MPOL_F_STATIC_NODES", NULL};
  bool nodeless;
  if (is_empty(m->mode) || !str_in(m->mode, modes))
    return config_error(err, "linux.memoryPolicy.mode: unknown mode `%s`", m->mode ? m->mode : "");
  nodeless = strcmp(m->mode, "MPOL_DEFAULT") == 0 || strcmp(m->mode, "MPOL_LOCAL") == 0;
  if (nodeless && !is_empty(m->nodes))
    return config_error(err, "linux.memoryPolicy.nodes: must be empty for %s", m->mode);
  if (!nodeless && is_empty(m->nodes))
    return config_error(err, "linux.memoryPolicy.nodes: required for %s", m->mode);
  if (m->nodes != NULL && !is_cpu_list(m->nodes))
    return config_error(err, "linux.memoryPolicy.nodes: `%s` is not a node list like 0-3,7",
                        m->nodes);
  for (size_t i = 0; i < m->flags.len; i++)
    if (!str_in(m->flags.items[i], flags))
      return config_error(err, "linux.memoryPolicy.flags[%zu]: unknown flag `%s`", i,
                          m->flags.items[i]);
  return 0;
}

static int check_path_list(const oci_strv *v, const char *field, fsrun_error_t *err) {
  for (size_t i = 0; i < v->len; i++)
    if (v->items[i][0] != '/')
      return config_error(err, "%s[%zu]: `%s` is not an absolute path", field, i, v->items[i]);
  return 0;
}

static bool is_interface_name(const char *s) {
  size_t len = strlen(s);
  if (len == 0 || len > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
    return false;
  for (const char *p = s; *p; p++)
    if (*p == '/' || *p == ':' || isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
      return false;
  return true;
}

static int check_linux(const oci_config *c, const struct ns_summary *ns,
                       const struct validate_options *opts, fsrun_error_t *err) {
  static const char *const propagations[] = {"shared",     "slave",       "private",
                                             "unbindable", "rshared",     "rslave",
                                             "rprivate",   "runbindable", NULL};
  const oci_linux *l = c->linux_;
  int ret;

  if ((ret = check_sysctl(l, ns, err)) < 0 || (ret = check_sysctl_uts(c, err)) < 0)
    return ret;
  if (l == NULL)
    return 0;
  if (l->time_offsets != NULL && !ns->is_new[NS_TIME])
    return config_error(err, "linux.timeOffsets: needs a new time namespace (add {\"type\": "
                             "\"time\"} to linux.namespaces)");
  if ((ret = check_devices(l, err)) < 0)
    return ret;
  if ((ret = check_cgroups_path(l->cgroups_path, opts->systemd_cgroup, err)) < 0)
    return ret;
  if (l->resources != NULL && (ret = check_resources(l->resources, err)) < 0)
    return ret;
  if (l->seccomp != NULL && (ret = check_seccomp(l->seccomp, err)) < 0)
    return ret;
  if (l->rootfs_propagation != NULL && !str_in(l->rootfs_propagation, propagations))
    return config_error(err, "linux.rootfsPropagation: unknown propagation `%s`",
                        l->rootfs_propagation);
  if ((ret = check_path_list(&l->masked_paths, "linux.maskedPaths", err)) < 0 ||
      (ret = check_path_list(&l->readonly_paths, "linux.readonlyPaths", err)) < 0)
    return ret;
  if (l->personality != NULL) {
    if (is_empty(l->personality->domain) || (strcmp(l->personality->domain, "LINUX") != 0 &&
                                             strcmp(l->personality->domain, "LINUX32") != 0))
      return config_error(err,
                          "linux.personality.domain: unknown domain `%s` (expected LINUX or "
                          "LINUX32)",
                          l->personality->domain ? l->personality->domain : "");
    if (l->personality->flags.len > 0)
      return config_error(err, "linux.personality.flags: no flags are supported");
  }
  if (l->memory_policy != NULL && (ret = check_memory_policy(l->memory_policy, err)) < 0)
    return ret;
  if (l->intel_rdt != NULL) {
    const char *clos = l->intel_rdt->clos_id;
    /* closID names a directory under /sys/fs/resctrl */
    if (clos != NULL && (clos[0] == '\0' || strchr(clos, '/') != NULL || strcmp(clos, ".") == 0 ||
                         strcmp(clos, "..") == 0))
      return config_error(err, "linux.intelRdt.closID: `%s` is not a valid name", clos);
    if (l->intel_rdt->mem_bw_schema != NULL &&
        (strncmp(l->intel_rdt->mem_bw_schema, "MB:", 3) != 0 ||
         strchr(l->intel_rdt->mem_bw_schema, '\n') != NULL))
      return config_error(err, "linux.intelRdt.memBwSchema: must start with `MB:` and be one line");
  }
  if (l->n_net_devices > 0 && !ns->present[NS_NET])
    return config_error(err, "linux.netDevices: moving devices needs a network namespace");
  for (size_t i = 0; i < l->n_net_devices; i++) {
    const oci_net_device *d = &l->net_devices[i];
    if (d->host_name == NULL || !is_interface_name(d->host_name))
      return config_error(err, "linux.netDevices: `%s` is not a network interface name",
                          d->host_name ? d->host_name : "");
    if (d->name != NULL && !is_interface_name(d->name))
      return config_error(err, "linux.netDevices.%s.name: `%s` is not a network interface name",
                          d->host_name, d->name);
  }
  return 0;
}

/* --- entry points ----------------------------------------------------------------------------- */

static int check_root_links(const oci_config *c, fsrun_error_t *err) {
  struct root_links links;
  return root_links_from_config(c, &links, err);
}

int validate_config_with(const oci_config *c, const char *bundle_dir,
                         const struct validate_options *opts, fsrun_error_t *err) {
  static const struct validate_options defaults = {0};
  struct ns_summary ns;
  int ret;

  if (opts == NULL)
    opts = &defaults;
  if (is_empty(c->oci_version))
    return config_error(err, "ociVersion: missing");
  /* every 1.x is compatible by semver; 0.x predates the stable format */
  if (strncmp(c->oci_version, "1.", 2) != 0)
    return config_error(err, "ociVersion: unsupported version `%s` (fsrun supports 1.x)",
                        c->oci_version);
  if ((ret = check_root(c, bundle_dir, err)) < 0)
    return ret;
  if (c->process == NULL)
    return config_error(err, "process: missing (a container needs a process to run)");
  if ((ret = check_process(c->process, err)) < 0)
    return ret;
  if ((ret = check_mounts(c, err)) < 0)
    return ret;
  if ((ret = check_root_links(c, err)) < 0)
    return ret;
  if ((ret = check_hooks(c->hooks, err)) < 0)
    return ret;
  if ((ret = check_namespaces(c->linux_, &ns, err)) < 0)
    return ret;
  if ((ret = check_user_namespace(c, &ns, err)) < 0)
    return ret;
  if ((ret = check_idmap_userns(c, &ns, err)) < 0)
    return ret;
  if ((ret = check_uts(c, &ns, err)) < 0)
    return ret;
  return check_linux(c, &ns, opts, err);
}

int validate_config(const oci_config *c, const char *bundle_dir, fsrun_error_t *err) {
  return validate_config_with(c, bundle_dir, NULL, err);
}

/* whether create would find the bundle's mark (bundle-mark.h) in opts' state root */
static bool bundle_marked(const char *bundle_dir, const struct validate_options *opts,
                          const oci_config *c, const char *json, size_t len) {
  cleanup_free char *abs_dir = NULL;
  char name[BUNDLE_MARK_NAME_MAX];
  if (opts->ctx == NULL || oci_map_get(&c->annotations, EXEC_GIT_ANNOTATION) == NULL)
    return false;
  abs_dir = realpath(bundle_dir ? bundle_dir : ".", NULL);
  return abs_dir != NULL && bundle_mark_find(opts->ctx, abs_dir, json, len, name);
}

int validate_bundle(const char *bundle_dir, const struct validate_options *opts, oci_config **out,
                    fsrun_error_t *err) {
  cleanup_free char *path = xasprintf("%s/config.json", bundle_dir ? bundle_dir : ".");
  cleanup_free char *json = NULL;
  char *parse_err = NULL;
  oci_config *c = NULL;
  size_t len = 0;
  int ret;

  if (oci_read_file(path, &json, &len, &parse_err) < 0 ||
      oci_config_parse(json, len, CONFIG_WHAT, &c, &parse_err) < 0)
    return fsrun_error_take(err, 0, parse_err);
  ret = validate_config_with(c, bundle_dir, opts, err);
  if (ret == 0)
    ret = bind_checks_from_annotations(c, err);
  if (ret == 0)
    ret = exec_git_accept(c, bundle_marked(bundle_dir, opts, c, json, len), "validate", err);
  if (ret < 0 || out == NULL)
    oci_config_free(c);
  else
    *out = c;
  return ret;
}

/* --- the Fusion policy ------------------------------------------------------------------------ */

/* may_be_missing: writablePaths, which the sandbox creates (owned by the caller) */
static int check_policy_paths(const oci_strv *v, const char *what, const char *field,
                              bool may_be_missing, fsrun_error_t *err) {
  for (size_t i = 0; i < v->len; i++) {
    const char *p = v->items[i];
    struct stat st;
    if (p[0] != '/')
      return fsrun_error_make(err, 0, "%s: %s[%zu]: `%s` is not an absolute path", what, field, i,
                              p);
    if (has_dotdot_component(p))
      return fsrun_error_make(err, 0, "%s: %s[%zu]: `%s` must not contain `..`", what, field, i, p);
    if (stat(p, &st) < 0 && !(errno == ENOENT && may_be_missing))
      return fsrun_error_make(err, 0, "%s: %s[%zu]: `%s`: %s", what, field, i, p,
                              errno == ENOENT ? "does not exist" : strerror(errno));
  }
  return 0;
}

int validate_policy(const oci_policy *p, const char *what, fsrun_error_t *err) {
  int ret;
  if ((ret = check_policy_paths(&p->allowed_paths, what, "allowedPaths", false, err)) < 0 ||
      (ret = check_policy_paths(&p->writable_paths, what, "writablePaths", true, err)) < 0)
    return ret;
  if (p->has_cpu_max_cores && !(p->cpu_max_cores > 0))
    return fsrun_error_make(err, 0, "%s: cpuLimit.maxCores: must be greater than 0", what);
  if (p->has_cpu_max_ms && p->cpu_max_ms == 0)
    return fsrun_error_make(err, 0, "%s: cpuLimit.maxMs: must be greater than 0", what);
  if (p->has_memory_limit_mb && p->memory_limit_mb == 0)
    return fsrun_error_make(err, 0, "%s: memoryLimitMb: must be greater than 0", what);
  if (p->has_pids_limit && p->pids_limit == 0)
    return fsrun_error_make(err, 0, "%s: pidsLimit: must be greater than 0", what);
  for (size_t i = 0; i < p->n_allowed_tcp_ports; i++)
    if (p->allowed_tcp_ports[i] == 0)
      return fsrun_error_make(err, 0, "%s: allowedTcpPorts[%zu]: 0 is not a port", what, i);
  if (p->seccomp != NULL && strcmp(p->seccomp, "default") != 0 && strcmp(p->seccomp, "none") != 0) {
    struct stat st;
    if (p->seccomp[0] != '/')
      return fsrun_error_make(err, 0,
                              "%s: seccomp: `%s` is neither \"default\", \"none\" nor an "
                              "absolute path",
                              what, p->seccomp);
    if (stat(p->seccomp, &st) < 0 || !S_ISREG(st.st_mode))
      return fsrun_error_make(err, 0, "%s: seccomp: `%s` is not a readable file", what, p->seccomp);
  }
  if (p->failure_mode != NULL && strcmp(p->failure_mode, "fail-hard") != 0 &&
      strcmp(p->failure_mode, "fallback-native") != 0)
    return fsrun_error_make(err, 0,
                            "%s: failureMode: unknown mode `%s` (expected fail-hard or "
                            "fallback-native)",
                            what, p->failure_mode);
  if (p->limits_mode != NULL && strcmp(p->limits_mode, "best-effort") != 0 &&
      strcmp(p->limits_mode, "require") != 0)
    return fsrun_error_make(err, 0,
                            "%s: limitsMode: unknown mode `%s` (expected best-effort or require)",
                            what, p->limits_mode);
  return 0;
}

int validate_policy_file(const char *path, oci_policy **out, fsrun_error_t *err) {
  oci_policy *p = NULL;
  int ret;
  /* read as `sandbox` and `bundle` read it: "-" is stdin, a seccomp profile file is parsed */
  if (sandbox_policy_load(path, &p, err) < 0)
    return fsrun_error_code(err);
  ret = validate_policy(p, strcmp(path, "-") == 0 ? "policy (stdin)" : path, err);
  if (ret < 0 || out == NULL)
    oci_policy_free(p);
  else
    *out = p;
  return ret;
}
