/* --systemd-cgroup: linux.cgroupsPath is "slice:prefix:name", as podman and containerd write it
 * for runc's systemd driver. The container's cgroup is the transient scope "prefix-name.scope" in
 * that slice, at the path systemd gives it (/machine.slice/machine-x.slice/libpod-ID.scope).
 *
 * When systemd runs (/run/systemd/system exists and its D-Bus API answers), fsrun asks it for
 * the scope with StartTransientUnit (dbus.c, our own small client: no libsystemd or libdbus to
 * load on every run), so that systemd knows the container, accounts it and never "cleans up" a
 * cgroup it did not make. systemd writes its own values for the controllers it delegates, so
 * fsrun writes linux.resources again afterwards. On delete, StopUnit. Otherwise (no systemd, the
 * socket does not answer, or a name that is itself a slice), fsrun falls back to creating that
 * same path directly, like the cgroupfs driver, with a debug log.
 *
 * Not root of the host (an ordinary user, or root of rootless podman's user namespace), the
 * user's own manager is asked instead (runc's systemdUser): its private socket
 * $XDG_RUNTIME_DIR/systemd/private, or the session bus; EXTERNAL authentication names our uid
 * outside the user namespace. Its units live below its own cgroup (the Manager's ControlGroup
 * property, /user.slice/user-UID.slice/user@UID.service on a usual host), which systemd delegated
 * to the user, so the scope's path is that cgroup, the slice (user.slice by default) and the
 * scope. It marks its cgroups with user.* xattrs, not trusted.*.
 *
 * Order: systemd refuses a scope without a process in it, and the init must be in its cgroup
 * before any code of the container runs. So the scope is started with the init's pid, and the init
 * is not cloned into the cgroup (CLONE_INTO_CGROUP): cgroup_clone_fd() says -1 for such a
 * cgroup, which makes create clone the init in fsrun's own cgroup, hold it on the sync socket
 * (wait_go) and call cgroup_enter() with its pid. cgroup_enter() calls cgroup_systemd_start():
 * StartTransientUnit(PIDs=[init]), wait for the job, then the resources are written again and the
 * pid is written to cgroup.procs in every hierarchy (a no-op where systemd moved it already).
 * Only then is the init told to go on. A new cgroup namespace is unshared late, after the move
 * (namespaces_plan's cgroup_moved_late), so its root is the scope. fsrun does not move itself into
 * the scope (which would count the runtime in the container's pids and memory). */
#include "cgroup-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "dbus.h"
#include "log.h"
#include "utils.h"

#define SYSTEMD_RUNNING_DIR  "/run/systemd/system"
#define SYSTEMD_PRIVATE_BUS  "unix:path=/run/systemd/private"
#define SYSTEM_BUS_DEFAULT   "unix:path=/run/dbus/system_bus_socket"
#define SYSTEMD_DEST         "org.freedesktop.systemd1"
#define SYSTEMD_PATH         "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER      "org.freedesktop.systemd1.Manager"
#define DBUS_CONNECT_TIMEOUT 5000
/* A manager answers a method call from its event loop without waiting for anything (a job's end
 * is waited for apart, up to SYSTEMD_JOB_TIMEOUT): in the cgroup v2 VM, emulated in software, the
 * slowest of 40 answers of a user manager took 181 ms. The timeout only bounds a manager that is
 * wedged, and a user's create then fails: 5 s rather than D-Bus's usual 25 s. (The 25 s waits
 * seen before were not a slow manager: see authenticate() in dbus.c.) */
#define DBUS_CALL_TIMEOUT    5000
#define SYSTEMD_JOB_TIMEOUT  30000
#define SYSTEMD_STOP_TIMEOUT 5000

struct cgroup_systemd_scope {
  dbus_conn *bus;
  bool on_bus; /* through dbus-daemon (signals need a match rule), not the private socket */
  bool user;   /* the user's manager, not the system's */
  char *unit, *slice, *description;
  const oci_resources *resources; /* borrowed from cgroup_create_opts, used by cgroup_enter */
};

static bool ends_with(const char *s, const char *suffix) {
  size_t l = strlen(s), sl = strlen(suffix);
  return l >= sl && strcmp(s + l - sl, suffix) == 0;
}

/* Not root of the host (an ordinary user, or root of a user namespace someone else made, as
 * rootless podman's): the scope is the user's own systemd manager's (runc's systemdUser), in the
 * cgroup subtree systemd delegated to that user. */
static bool use_user_manager(void) {
  return geteuid() != 0 || !in_initial_user_namespace();
}

int cgroup_systemd_expand_slice(const char *slice, char **out, fsrun_error_t *err) {
  cleanup_free char *name = NULL, *path = NULL;
  size_t len;
  *out = NULL;
  /* the root slice */
  if (slice == NULL || slice[0] == '\0' || strcmp(slice, "-.slice") == 0) {
    *out = xstrdup("");
    return 0;
  }
  if (!ends_with(slice, ".slice") || strchr(slice, '/') != NULL)
    return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` is not a systemd slice name",
                            slice);
  len = strlen(slice) - strlen(".slice");
  name = strndup(slice, len);
  if (name == NULL)
    abort();
  if (len == 0 || name[0] == '-' || name[len - 1] == '-' || strstr(name, "--") != NULL)
    return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` is not a systemd slice name",
                            slice);
  /* "a-b-c.slice" lives in "a.slice/a-b.slice/a-b-c.slice": every dash opens a parent */
  path = xstrdup("");
  for (size_t i = 0; i <= len; i++) {
    if (name[i] == '-' || name[i] == '\0') {
      char *n = xasprintf("%s/%.*s.slice", path, (int)i, name);
      free(path);
      path = n;
    }
  }
  *out = steal_ptr(&path);
  return 0;
}

/* "slice:prefix:name" split in place (NULL or "" spec: "system.slice:fsrun:ID"; an empty slice is
 * system.slice, or user.slice for a user manager, as runc's systemdUser). */
typedef struct {
  char *buf;
  const char *slice, *prefix, *name;
} systemd_spec;

static void systemd_spec_clear(systemd_spec *s) {
  free(s->buf);
  s->buf = NULL;
}

static int parse_spec(const char *spec, const char *id, bool user, systemd_spec *out,
                      fsrun_error_t *err) {
  char *c1, *c2;
  memset(out, 0, sizeof(*out));
  if (spec == NULL || spec[0] == '\0') {
    if (id == NULL || id[0] == '\0' || strchr(id, '/') || strchr(id, ':'))
      return fsrun_error_make(err, EINVAL, "container id `%s` cannot name a systemd scope",
                              id ? id : "");
    out->buf = xasprintf(":fsrun:%s", id);
  } else {
    out->buf = xstrdup(spec);
  }
  c1 = strchr(out->buf, ':');
  c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL) {
    systemd_spec_clear(out);
    return fsrun_error_make(err, EINVAL,
                            "linux.cgroupsPath: `%s`: expected `slice:prefix:name` with "
                            "--systemd-cgroup",
                            spec);
  }
  *c1 = *c2 = '\0';
  out->slice = out->buf[0] != '\0' ? out->buf : user ? "user.slice" : "system.slice";
  out->prefix = c1 + 1;
  out->name = c2 + 1;
  if (out->name[0] == '\0' || strchr(out->name, '/') || strcmp(out->name, ".") == 0 ||
      strcmp(out->name, "..") == 0 || strchr(out->prefix, '/')) {
    systemd_spec_clear(out);
    return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s`: invalid name or prefix", spec);
  }
  return 0;
}

static char *scope_unit_name(const systemd_spec *s) {
  return s->prefix[0] ? xasprintf("%s-%s.scope", s->prefix, s->name)
                      : xasprintf("%s.scope", s->name);
}

int cgroup_systemd_path(const char *spec, const char *id, char **out, fsrun_error_t *err) {
  cleanup_free char *slice_path = NULL, *unit = NULL;
  systemd_spec parsed;
  int ret;

  *out = NULL;
  ret = parse_spec(spec, id, use_user_manager(), &parsed, err);
  if (ret < 0)
    return ret;
  /* a name that is a slice is a cgroup of its own, at the place its name gives it */
  if (ends_with(parsed.name, ".slice")) {
    ret = cgroup_systemd_expand_slice(parsed.name, &slice_path, err);
    if (ret == 0 && slice_path[0] == '\0')
      ret = fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` is the root slice", spec);
    if (ret == 0)
      *out = steal_ptr(&slice_path);
    systemd_spec_clear(&parsed);
    return ret;
  }
  ret = cgroup_systemd_expand_slice(parsed.slice, &slice_path, err);
  if (ret == 0) {
    unit = scope_unit_name(&parsed);
    *out = xasprintf("%s/%s", slice_path, unit);
  }
  systemd_spec_clear(&parsed);
  return ret;
}

bool cgroup_systemd_user_scope_matches(const char *id, const char *cgroups_path, const char *path) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *scope = NULL, *root = NULL;
  size_t len = strlen(path), scope_len;
  struct stat st;
  if (!use_user_manager() || cgroup_systemd_path(cgroups_path, id, &scope, &ignored) < 0)
    return false;
  scope_len = strlen(scope);
  if (len <= scope_len || strcmp(path + len - scope_len, scope) != 0 || path[0] != '/' ||
      strstr(path, "/..") != NULL)
    return false;
  /* the manager's cgroup, which systemd delegates to the user it runs for */
  root = xasprintf(CGROUP_ROOT "%.*s", (int)(len - scope_len), path);
  return stat(root, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

/* --- systemd over D-Bus ------------------------------------------------------------------------
 */

/* The directory of the container in the hierarchy systemd tracks units in (the cgroup2 mount;
 * name=systemd on a legacy host). */
static char *systemd_tree_dir(const struct fsrun_cgroup *cg) {
  const char *mount = cg->unified_mount ? cg->unified_mount : cgroup_v1_mount(cg, "name=systemd");
  return mount ? cgroup_join(mount, cg->path) : NULL;
}

/* The user manager's private socket, $XDG_RUNTIME_DIR/systemd/private; NULL without
 * XDG_RUNTIME_DIR. */
static char *user_private_socket(void) {
  const char *runtime_dir = getenv("XDG_RUNTIME_DIR");
  return runtime_dir && runtime_dir[0] == '/' ? xasprintf("%s/systemd/private", runtime_dir) : NULL;
}

/* Whether the manager fsrun would ask runs: the system's (/run/systemd/system), or the user's
 * (its private socket is there). */
static bool manager_running(bool user) {
  cleanup_free char *socket = user ? user_private_socket() : NULL;
  return user ? socket != NULL && access(socket, F_OK) == 0
              : access(SYSTEMD_RUNNING_DIR, F_OK) == 0;
}

/* The manager's private socket when it is there (peer to peer, no bus daemon, no Hello); else the
 * system bus, or for the user manager the session bus. */
static int systemd_connect(bool user, dbus_conn **out, bool *on_bus, fsrun_error_t *err) {
  cleanup_free char *private_address = NULL, *session_default = NULL;
  const char *address;
  if (user) {
    cleanup_free char *socket = user_private_socket();
    const char *runtime_dir = getenv("XDG_RUNTIME_DIR");
    if (socket == NULL)
      return fsrun_error_make(err, ENOENT, "XDG_RUNTIME_DIR is not set: no user manager to ask");
    private_address = access(socket, F_OK) == 0 ? xasprintf("unix:path=%s", socket) : NULL;
    session_default = xasprintf("unix:path=%s/bus", runtime_dir);
    address = getenv("DBUS_SESSION_BUS_ADDRESS");
    if (address == NULL || address[0] == '\0')
      address = session_default;
  } else {
    private_address =
        access("/run/systemd/private", F_OK) == 0 ? xstrdup(SYSTEMD_PRIVATE_BUS) : NULL;
    address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (address == NULL || address[0] == '\0')
      address = SYSTEM_BUS_DEFAULT;
  }
  if (private_address != NULL) {
    cleanup_error fsrun_error_t perr = NULL;
    if (dbus_connect(private_address, false, DBUS_CONNECT_TIMEOUT, out, &perr) == 0) {
      *on_bus = false;
      return 0;
    }
    log_debug("systemd: private socket: %s; trying the bus", perr->msg);
  }
  *on_bus = true;
  return dbus_connect(address, true, DBUS_CONNECT_TIMEOUT, out, err);
}

/* The user manager's own cgroup (its Manager property ControlGroup): its scopes and slices are
 * below it. */
static int manager_cgroup(dbus_conn *bus, char **out, fsrun_error_t *err) {
  dbus_writer body = {0};
  dbus_message reply;
  dbus_reader r;
  const char *value;
  int ret;
  dbus_put_string(&body, SYSTEMD_MANAGER);
  dbus_put_string(&body, "ControlGroup");
  ret = dbus_call(bus, SYSTEMD_DEST, SYSTEMD_PATH, "org.freedesktop.DBus.Properties", "Get", "ss",
                  &body, NULL, NULL, DBUS_CALL_TIMEOUT, &reply, NULL, err);
  dbus_writer_free(&body);
  if (ret < 0)
    return ret;
  dbus_reader_init(&r, &reply);
  ret = dbus_read_variant_string(&r, &value, err);
  if (ret < 0)
    return ret;
  if (value[0] != '/' || strstr(value, "/..") != NULL)
    return fsrun_error_make(err, EINVAL, "systemd: the user manager's cgroup `%s` is not a path",
                            value);
  *out = xstrdup(strcmp(value, "/") == 0 ? "" : value);
  return 0;
}

static void cgroup_systemd_scope_free(struct cgroup_systemd_scope *s) {
  if (s == NULL)
    return;
  dbus_conn_free(s->bus);
  free(s->unit);
  free(s->slice);
  free(s->description);
  free(s);
}

void cgroup_systemd_free(struct fsrun_cgroup *cg) {
  cgroup_systemd_scope_free(cg->systemd);
  cg->systemd = NULL;
}

/* Whether linux.resources asks for anything but the device list (which, for a user, the user
 * namespace enforces without a cgroup). */
static bool asks_for_limits(const oci_resources *r) {
  return r != NULL && (r->memory || r->cpu || r->pids || r->block_io || r->n_hugepage_limits > 0 ||
                       r->network || r->n_rdma > 0 || r->unified.len > 0);
}

/* No user manager to ask: without limits, the cgroupfs fallback (for a user mostly no cgroup at
 * all, as before); with limits, an error, never a container silently without them. */
static int no_user_manager(const cgroup_create_opts *o, fsrun_error_t *err) {
  cleanup_free char *socket = user_private_socket();
  cleanup_free char *why =
      socket ? xasprintf("no `%s`", socket) : xstrdup("XDG_RUNTIME_DIR is not set");
  if (asks_for_limits(o->resources))
    return fsrun_error_make(err, 0,
                            "--systemd-cgroup: linux.resources sets limits, but no systemd user "
                            "manager runs to make the scope (%s)",
                            why);
  log_debug("--systemd-cgroup: no systemd user manager (%s), the scope is made directly "
            "(cgroupfs)",
            why);
  return 0;
}

/* The user manager's units live below its own cgroup: the container's path is that cgroup, the
 * slice and the scope. */
static int ask_user_manager(struct fsrun_cgroup *cg, const struct cgroup_systemd_scope *scope,
                            fsrun_error_t *err) {
  cleanup_free char *root = NULL, *slice_path = NULL;
  int ret = manager_cgroup(scope->bus, &root, err);
  if (ret < 0)
    return ret;
  ret = cgroup_systemd_expand_slice(scope->slice, &slice_path, err);
  if (ret < 0)
    return ret;
  free(cg->path);
  cg->path = xasprintf("%s%s/%s", root, slice_path, scope->unit);
  return 0;
}

static struct cgroup_systemd_scope *scope_new(const systemd_spec *parsed,
                                              const cgroup_create_opts *o, bool user) {
  struct cgroup_systemd_scope *scope = xmalloc0(sizeof(*scope));
  scope->user = user;
  scope->unit = scope_unit_name(parsed);
  scope->slice = xstrdup(parsed->slice);
  scope->description = xasprintf("fsrun container %s", o->id ? o->id : parsed->name);
  scope->resources = o->resources;
  return scope;
}

int cgroup_systemd_prepare(struct fsrun_cgroup *cg, const cgroup_create_opts *o,
                           fsrun_error_t *err) {
  cleanup_error fsrun_error_t cerr = NULL;
  cleanup_free char *dir = NULL;
  struct cgroup_systemd_scope *scope;
  systemd_spec parsed;
  bool user;
  int ret;

  if (!o->systemd || cg->systemd != NULL)
    return 0;
  user = o->rootless || use_user_manager();
  if (!manager_running(user)) {
    if (user)
      return no_user_manager(o, err);
    log_debug("--systemd-cgroup: systemd is not running, the scope is made directly (cgroupfs)");
    return 0;
  }
  ret = parse_spec(o->cgroups_path, o->id, user, &parsed, err);
  if (ret < 0)
    return ret;
  if (ends_with(parsed.name, ".slice")) {
    log_debug("--systemd-cgroup: `%s` is a slice, made directly (cgroupfs)", parsed.name);
    systemd_spec_clear(&parsed);
    return 0;
  }
  scope = scope_new(&parsed, o, user);
  systemd_spec_clear(&parsed);

  ret = systemd_connect(user, &scope->bus, &scope->on_bus, user ? err : &cerr);
  if (ret == 0 && user)
    ret = ask_user_manager(cg, scope, err);
  if (ret < 0 && user) {
    /* it runs (its socket is there) but does not answer: a user has no cgroupfs to fall back to */
    cgroup_systemd_scope_free(scope);
    return fsrun_error_wrap(err, "--systemd-cgroup: the systemd user manager");
  }
  if (ret < 0) {
    log_debug("--systemd-cgroup: systemd's D-Bus API does not answer (%s); the scope is made "
              "directly (cgroupfs)",
              cerr->msg);
    cgroup_systemd_scope_free(scope);
    return 0;
  }
  /* the scope's directory exists: another container (or unit) has it, and fsrun must not write
   * its limits into it or kill its processes on the way out */
  dir = systemd_tree_dir(cg);
  if (dir != NULL && access(dir, F_OK) == 0) {
    ret = fsrun_error_make(err, EEXIST, "--systemd-cgroup: the cgroup of `%s` exists already (%s)",
                           scope->unit, dir);
    cgroup_systemd_scope_free(scope);
    return ret;
  }
  cg->systemd = scope;
  log_debug("--systemd-cgroup: %s will be asked for `%s` in `%s` (%s)",
            user ? "the user's systemd manager" : "systemd", scope->unit, scope->slice,
            scope->on_bus ? "bus" : "private socket");
  return 0;
}

const oci_resources *cgroup_systemd_resources(const struct fsrun_cgroup *cg) {
  return cg->systemd ? cg->systemd->resources : NULL;
}

/* --- StartTransientUnit ------------------------------------------------------------------------
 */

static void prop_open(dbus_writer *w, const char *name, const char *signature) {
  dbus_struct_open(w);
  dbus_put_string(w, name);
  dbus_put_variant_signature(w, signature);
}

static void prop_string(dbus_writer *w, const char *name, const char *value) {
  prop_open(w, name, "s");
  dbus_put_string(w, value);
}

static void prop_bool(dbus_writer *w, const char *name, bool value) {
  prop_open(w, name, "b");
  dbus_put_bool(w, value);
}

static void prop_u64(dbus_writer *w, const char *name, uint64_t value) {
  prop_open(w, name, "t");
  dbus_put_u64(w, value);
}

/* The limits systemd can take cheaply, so that what it writes into the scope agrees with the
 * spec (fsrun writes every resource itself afterwards anyway). */
static void put_resource_properties(dbus_writer *w, const oci_resources *r) {
  if (r == NULL)
    return;
  if (r->memory && r->memory->has_limit && r->memory->limit != 0)
    prop_u64(w, "MemoryMax", r->memory->limit > 0 ? (uint64_t)r->memory->limit : UINT64_MAX);
  if (r->pids && r->pids->has_limit)
    prop_u64(w, "TasksMax", r->pids->limit > 0 ? (uint64_t)r->pids->limit : UINT64_MAX);
  if (r->cpu && r->cpu->has_shares && r->cpu->shares > 0)
    prop_u64(w, "CPUWeight", cgroup_v2_cpu_weight(r->cpu->shares));
  if (r->cpu && r->cpu->has_quota && r->cpu->quota > 0) {
    uint64_t period = r->cpu->has_period && r->cpu->period > 0 ? r->cpu->period : 100000;
    uint64_t per_sec = (uint64_t)r->cpu->quota * 1000000 / period;
    prop_u64(w, "CPUQuotaPerSecUSec", per_sec > 0 ? per_sec : 1);
  }
}

/* body of StartTransientUnit: (s name, s mode, a(sv) properties, a(sa(sv)) aux) */
static void build_start_body(const struct cgroup_systemd_scope *s, pid_t pid, dbus_writer *w) {
  dbus_array props, pids, aux;
  dbus_put_string(w, s->unit);
  dbus_put_string(w, "replace");
  dbus_array_open(w, 8, &props);
  prop_string(w, "Description", s->description);
  prop_string(w, "Slice", s->slice);
  /* the container manages the cgroup's insides (sub-cgroups, controllers) */
  prop_bool(w, "Delegate", true);
  /* no ordering against shutdown.target: the runtime decides when the scope ends */
  prop_bool(w, "DefaultDependencies", false);
  prop_open(w, "PIDs", "au");
  dbus_array_open(w, 4, &pids);
  dbus_put_u32(w, (uint32_t)pid);
  dbus_array_close(w, &pids);
  put_resource_properties(w, s->resources);
  dbus_array_close(w, &props);
  dbus_array_open(w, 8, &aux);
  dbus_array_close(w, &aux);
}

/* JobRemoved (u id, o job, s unit, s result) signals of one unit, until ours is seen */
typedef struct {
  const char *unit;
  char *job;         /* the job we wait for, once known */
  char *seen_job[8]; /* JobRemoved seen before the job's path was known */
  char *seen_result[8];
  size_t n_seen;
  char *result; /* of our job, once removed */
} job_watch;

static void job_watch_clear(job_watch *w) {
  for (size_t i = 0; i < w->n_seen; i++) {
    free(w->seen_job[i]);
    free(w->seen_result[i]);
  }
  free(w->job);
  free(w->result);
  memset(w, 0, sizeof(*w));
}

static bool on_job_removed(const dbus_message *m, void *userdata) {
  cleanup_error fsrun_error_t perr = NULL;
  job_watch *w = userdata;
  const char *job, *unit, *result;
  uint32_t id;
  dbus_reader r;
  if (m->interface == NULL || strcmp(m->interface, SYSTEMD_MANAGER) != 0 ||
      strcmp(m->member, "JobRemoved") != 0)
    return false;
  dbus_reader_init(&r, m);
  if (dbus_read_u32(&r, &id, &perr) < 0 || dbus_read_string(&r, &job, &perr) < 0 ||
      dbus_read_string(&r, &unit, &perr) < 0 || dbus_read_string(&r, &result, &perr) < 0) {
    log_debug("systemd: a JobRemoved signal that does not parse: %s", perr->msg);
    return false;
  }
  if (strcmp(unit, w->unit) != 0)
    return false;
  if (w->job != NULL) {
    if (strcmp(job, w->job) != 0)
      return false;
    w->result = xstrdup(result);
    return true;
  }
  if (w->n_seen < sizeof(w->seen_job) / sizeof(w->seen_job[0])) {
    w->seen_job[w->n_seen] = xstrdup(job);
    w->seen_result[w->n_seen++] = xstrdup(result);
  }
  return false;
}

/* On the system bus, signals reach us only through a match rule. */
static int add_job_match(const struct cgroup_systemd_scope *s, fsrun_error_t *err) {
  dbus_writer body = {0};
  dbus_message reply;
  int ret;
  if (!s->on_bus)
    return 0; /* the private socket sends every signal to every peer */
  dbus_put_string(&body, "type='signal',sender='" SYSTEMD_DEST "',path='" SYSTEMD_PATH
                         "',interface='" SYSTEMD_MANAGER "',member='JobRemoved'");
  ret = dbus_call(s->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                  "AddMatch", "s", &body, NULL, NULL, DBUS_CALL_TIMEOUT, &reply, NULL, err);
  dbus_writer_free(&body);
  return ret;
}

/* Calls MEMBER (body `ss`: unit, mode, plus whatever build added) and waits for its job. */
static int run_job(const struct cgroup_systemd_scope *s, const char *member, const char *signature,
                   const dbus_writer *body, int call_timeout_ms, int job_timeout_ms,
                   char **error_name, char **result, fsrun_error_t *err) {
  job_watch watch = {.unit = s->unit};
  dbus_message reply;
  const char *job;
  dbus_reader r;
  int ret;

  *result = NULL;
  ret = dbus_call(s->bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, member, signature, body,
                  on_job_removed, &watch, call_timeout_ms, &reply, error_name, err);
  if (ret == 0) {
    dbus_reader_init(&r, &reply);
    ret = dbus_read_string(&r, &job, err);
  }
  if (ret < 0) {
    job_watch_clear(&watch);
    return ret;
  }
  watch.job = xstrdup(job);
  for (size_t i = 0; i < watch.n_seen && watch.result == NULL; i++)
    if (strcmp(watch.seen_job[i], watch.job) == 0)
      watch.result = xstrdup(watch.seen_result[i]);
  if (watch.result == NULL) {
    ret = dbus_wait_signals(s->bus, on_job_removed, &watch, job_timeout_ms, err);
    if (ret == 0)
      ret = fsrun_error_make(err, ETIMEDOUT, "%s `%s`: the job %s did not finish within %d s",
                             member, s->unit, watch.job, job_timeout_ms / 1000);
    if (ret < 0) {
      job_watch_clear(&watch);
      return ret;
    }
  }
  *result = steal_ptr(&watch.result);
  job_watch_clear(&watch);
  return 0;
}

static int start_scope(const struct cgroup_systemd_scope *s, pid_t pid, fsrun_error_t *err) {
  int ret = add_job_match(s, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "systemd");
  for (int attempt = 0;; attempt++) {
    cleanup_free char *error_name = NULL, *result = NULL;
    dbus_writer body = {0};
    build_start_body(s, pid, &body);
    ret = run_job(s, "StartTransientUnit", "ssa(sv)a(sa(sv))", &body, DBUS_CALL_TIMEOUT,
                  SYSTEMD_JOB_TIMEOUT, &error_name, &result, err);
    dbus_writer_free(&body);
    /* a scope of that name that was just stopped may linger until systemd's garbage collection
     * runs (fsrun checked that its cgroup is gone) */
    if (ret < 0 && error_name != NULL &&
        strcmp(error_name, "org.freedesktop.systemd1.UnitExists") == 0 && attempt < 5) {
      cleanup_error fsrun_error_t rerr = NULL;
      dbus_writer reset = {0};
      dbus_message reply;
      struct timespec pause = {.tv_nsec = 100 * 1000 * 1000};
      dbus_put_string(&reset, s->unit);
      (void)dbus_call(s->bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "ResetFailedUnit", "s",
                      &reset, NULL, NULL, DBUS_CALL_TIMEOUT, &reply, NULL, &rerr);
      dbus_writer_free(&reset);
      nanosleep(&pause, NULL);
      fsrun_error_release(err);
      continue;
    }
    if (ret < 0)
      return fsrun_error_wrap(err, "systemd: start the scope `%s`", s->unit);
    if (strcmp(result, "done") != 0) {
      cleanup_error fsrun_error_t rerr = NULL;
      dbus_writer reset = {0};
      dbus_message reply;
      ret = fsrun_error_make(err, 0,
                             "systemd: start the scope `%s`: the job ended with `%s` (see "
                             "`systemctl%s status %s`)",
                             s->unit, result, s->user ? " --user" : "", s->unit);
      /* no failed unit left behind to block the next container of that name */
      dbus_put_string(&reset, s->unit);
      (void)dbus_call(s->bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "ResetFailedUnit", "s",
                      &reset, NULL, NULL, DBUS_CALL_TIMEOUT, &reply, NULL, &rerr);
      dbus_writer_free(&reset);
      return ret;
    }
    log_debug("systemd: started `%s` with pid %d", s->unit, (int)pid);
    return 0;
  }
}

int cgroup_systemd_start(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err) {
  struct cgroup_systemd_scope *s = cg->systemd;
  int ret;
  if (s == NULL)
    return 0;
  if (s->bus == NULL)
    return fsrun_error_make(err, EALREADY, "systemd: the scope `%s` was started already", s->unit);
  ret = start_scope(s, pid, err);
  /* not kept for the container's life: systemd would queue every signal for us */
  dbus_conn_free(s->bus);
  s->bus = NULL;
  return ret;
}

/* --- StopUnit ----------------------------------------------------------------------------------
 */

/* systemd marks the cgroups it delegates (trusted.delegate, since 251; fsrun's scopes always
 * have Delegate=yes) and, for units with an invocation, their invocation id. */
static bool has_xattr(const char *dir, const char *name) {
  char value[64];
  return getxattr(dir, name, value, sizeof(value)) >= 0 || errno == ERANGE;
}

static bool is_systemd_unit_cgroup(const char *dir) {
  /* a user manager cannot write trusted.*: it marks them user.* */
  return has_xattr(dir, "trusted.delegate") || has_xattr(dir, "trusted.invocation_id") ||
         has_xattr(dir, "user.delegate") || has_xattr(dir, "user.invocation_id");
}

/* The unit name of a container cgroup that is a scope systemd made (the container was created
 * with --systemd-cgroup while systemd ran; a directory fsrun made itself carries none of systemd's
 * marks), or NULL. *gone: such a scope whose directory systemd removed already. */
static const char *systemd_scope_of(const struct fsrun_cgroup *cg, bool *gone) {
  cleanup_free char *dir = NULL;
  const char *base = strrchr(cg->path, '/');
  bool user = use_user_manager();
  *gone = false;
  if (base == NULL || !ends_with(base, ".scope") || !manager_running(user))
    return NULL;
  dir = systemd_tree_dir(cg);
  if (dir != NULL && access(dir, F_OK) < 0 && errno == ENOENT) {
    *gone = true;
    return NULL;
  }
  /* a user manager before systemd 253 marks nothing (it cannot write trusted.*): a scope in its
   * tree is asked about, and a NoSuchUnit answer means it is not systemd's */
  return dir != NULL && (user || is_systemd_unit_cgroup(dir)) ? base + 1 : NULL;
}

int cgroup_systemd_update(const struct fsrun_cgroup *cg, const oci_resources *r,
                          fsrun_error_t *err) {
  bool gone;
  const char *unit = systemd_scope_of(cg, &gone);
  dbus_conn *bus = NULL;
  cleanup_free char *error_name = NULL;
  dbus_writer body = {0};
  dbus_array props;
  dbus_message reply;
  bool on_bus;
  int ret;

  if (unit == NULL || r == NULL)
    return 0;
  dbus_put_string(&body, unit);
  dbus_put_bool(&body, true); /* runtime: until the scope ends, nothing written to /etc */
  dbus_array_open(&body, 8, &props);
  put_resource_properties(&body, r);
  dbus_array_close(&body, &props);
  ret = systemd_connect(use_user_manager(), &bus, &on_bus, err);
  if (ret == 0)
    ret = dbus_call(bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "SetUnitProperties",
                    "sba(sv)", &body, NULL, NULL, DBUS_CALL_TIMEOUT, &reply, &error_name, err);
  dbus_writer_free(&body);
  dbus_conn_free(bus);
  if (ret < 0 && error_name != NULL &&
      strcmp(error_name, "org.freedesktop.systemd1.NoSuchUnit") == 0) {
    log_debug("systemd: `%s` is not a unit of systemd's: its files are all there is", unit);
    fsrun_error_release(err);
    return 0;
  }
  if (ret < 0)
    return fsrun_error_wrap(err,
                            "systemd: SetUnitProperties `%s` (the cgroup has the new limits, but "
                            "systemd would restore the old ones on its next reload)",
                            unit);
  log_debug("systemd: set the properties of `%s`", unit);
  return 0;
}

bool cgroup_systemd_may_be_scope(const struct fsrun_cgroup *cg) {
  const char *base = strrchr(cg->path, '/');
  return cg->systemd != NULL || (base != NULL && ends_with(base, ".scope"));
}

void cgroup_systemd_stop(const struct fsrun_cgroup *cg) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *error_name = NULL, *result = NULL;
  struct cgroup_systemd_scope *own = NULL;
  const struct cgroup_systemd_scope *s;
  dbus_writer body = {0};
  bool gone;
  const char *unit = systemd_scope_of(cg, &gone);
  int ret;

  if (gone) {
    /* the scope emptied when its processes were killed, and systemd ended it and removed it */
    log_debug("systemd: `%s` is gone already", strrchr(cg->path, '/') + 1);
    return;
  }
  if (unit == NULL)
    return;
  own = xmalloc0(sizeof(*own));
  own->unit = xstrdup(unit);
  if (systemd_connect(use_user_manager(), &own->bus, &own->on_bus, &err) < 0) {
    log_warning("systemd: cannot stop `%s`: %s", own->unit, err->msg);
    cgroup_systemd_scope_free(own);
    return;
  }
  s = own;
  ret = add_job_match(s, &err);
  if (ret == 0) {
    dbus_put_string(&body, s->unit);
    dbus_put_string(&body, "replace");
    ret = run_job(s, "StopUnit", "ss", &body, SYSTEMD_STOP_TIMEOUT, SYSTEMD_STOP_TIMEOUT,
                  &error_name, &result, &err);
    dbus_writer_free(&body);
  }
  if (ret < 0 && error_name != NULL &&
      strcmp(error_name, "org.freedesktop.systemd1.NoSuchUnit") == 0)
    log_debug("systemd: `%s` is gone already", s->unit);
  else if (ret < 0)
    /* The cgroup is empty by now (destroy's kill loop): systemd stops an empty scope by itself,
     * so a StopUnit that goes unanswered (seen once in the VM, under a busy systemd) costs
     * nothing but a late garbage collection. Not worth a warning on every delete. */
    log_debug("systemd: stop `%s`: %s", s->unit, err->msg);
  else
    log_debug("systemd: stopped `%s` (%s)", s->unit, result);
  cgroup_systemd_scope_free(own);
}
