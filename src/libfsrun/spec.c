/* The default config.json of `fsrun spec`. It describes the same container as `runc spec` so that
 * tutorials written for runc work unchanged: a shell in ./rootfs, a read-only root, the three
 * capabilities every shell-level tool expects, and the usual /proc, /dev and /sys mounts. */
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "utils.h"

/* NULL-terminated list -> owned oci_strv */
static oci_strv strv_of(const char *const *items) {
  oci_strv v = {0};
  while (items[v.len] != NULL)
    v.len++;
  v.items = xmalloc0(sizeof(char *) * (v.len + 1));
  for (size_t i = 0; i < v.len; i++)
    v.items[i] = xstrdup(items[i]);
  return v;
}

static const char *const default_caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
                                           NULL};

static oci_process *default_process(void) {
  static const char *const args[] = {"sh", NULL};
  static const char *const env[] = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL};
  oci_process *p = xmalloc0(sizeof(*p));
  p->terminal = true;
  p->user.uid = 0;
  p->user.gid = 0;
  p->args = strv_of(args);
  p->env = strv_of(env);
  p->cwd = xstrdup("/");
  p->capabilities = xmalloc0(sizeof(*p->capabilities));
  /* no inheritable or ambient: a shell needs none, and they survive execve */
  p->capabilities->bounding = strv_of(default_caps);
  p->capabilities->effective = strv_of(default_caps);
  p->capabilities->permitted = strv_of(default_caps);
  p->capabilities->has_bounding = true;
  p->capabilities->has_effective = true;
  p->capabilities->has_permitted = true;
  p->rlimits = xmalloc0(sizeof(*p->rlimits));
  p->n_rlimits = 1;
  p->rlimits[0].type = xstrdup("RLIMIT_NOFILE");
  p->rlimits[0].soft = 1024;
  p->rlimits[0].hard = 1024;
  p->no_new_privileges = true;
  return p;
}

struct mount_template {
  const char *destination, *type, *source;
  const char *options[8];
};

static void mount_from_template(oci_mount *m, const struct mount_template *t) {
  m->destination = xstrdup(t->destination);
  m->type = xstrdup(t->type);
  m->source = xstrdup(t->source);
  if (t->options[0] != NULL)
    m->options = strv_of(t->options);
}

static void default_mounts(oci_config *c, bool rootless) {
  static const struct mount_template common[] = {
      {"/proc", "proc", "proc", {NULL}},
      {"/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k", NULL}},
      {"/dev/pts",
       "devpts",
       "devpts",
       {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL}},
      {"/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL}},
      {"/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev", NULL}},
      {"/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro", NULL}},
      {"/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro", NULL}},
  };
  /* Without privileges over the network namespace sysfs cannot be mounted: bind the host's. */
  static const struct mount_template rootless_sys = {
      "/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro", NULL}};
  size_t n = sizeof(common) / sizeof(common[0]);

  c->mounts = xmalloc0(sizeof(oci_mount) * n);
  c->n_mounts = n;
  for (size_t i = 0; i < n; i++) {
    const struct mount_template *t = &common[i];
    if (rootless && strcmp(t->destination, "/sys") == 0)
      t = &rootless_sys;
    mount_from_template(&c->mounts[i], t);
    /* gid=5 (tty) is usually not mapped in a rootless user namespace */
    if (rootless && strcmp(t->destination, "/dev/pts") == 0) {
      oci_strv *o = &c->mounts[i].options;
      free(o->items[o->len - 1]);
      o->items[--o->len] = NULL;
    }
  }
}

static void add_namespace(oci_linux *l, const char *type) {
  l->namespaces[l->n_namespaces++].type = xstrdup(type);
}

static oci_id_mapping *single_mapping(uint32_t host_id) {
  oci_id_mapping *m = xmalloc0(sizeof(*m));
  m->container_id = 0;
  m->host_id = host_id;
  m->size = 1;
  return m;
}

const char *const spec_masked_paths[] = {"/proc/acpi",
                                         "/proc/asound",
                                         "/proc/kcore",
                                         "/proc/keys",
                                         "/proc/latency_stats",
                                         "/proc/timer_list",
                                         "/proc/timer_stats",
                                         "/proc/sched_debug",
                                         "/sys/firmware",
                                         "/proc/scsi",
                                         "/sys/devices/virtual/powercap",
                                         NULL};
const char *const spec_readonly_paths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL};

static oci_linux *default_linux(bool rootless, uint32_t host_uid, uint32_t host_gid) {
  oci_linux *l = xmalloc0(sizeof(*l));

  l->namespaces = xmalloc0(sizeof(oci_namespace) * 8);
  add_namespace(l, "pid");
  if (!rootless)
    add_namespace(l, "network");
  add_namespace(l, "ipc");
  add_namespace(l, "uts");
  add_namespace(l, "mount");
  add_namespace(l, "cgroup");
  if (rootless) {
    add_namespace(l, "user");
    l->uid_mappings = single_mapping(host_uid);
    l->n_uid_mappings = 1;
    l->gid_mappings = single_mapping(host_gid);
    l->n_gid_mappings = 1;
  } else {
    /* deny every device; the runtime adds the default ones (null, zero, tty, ...) */
    l->resources = xmalloc0(sizeof(*l->resources));
    l->resources->devices = xmalloc0(sizeof(oci_device_cgroup));
    l->resources->n_devices = 1;
    l->resources->devices[0].allow = false;
    l->resources->devices[0].access = xstrdup("rwm");
  }
  l->masked_paths = strv_of(spec_masked_paths);
  l->readonly_paths = strv_of(spec_readonly_paths);
  return l;
}

oci_config *spec_default_config(bool rootless, uint32_t host_uid, uint32_t host_gid) {
  oci_config *c = xmalloc0(sizeof(*c));
  c->oci_version = xstrdup(OCI_VERSION);
  c->process = default_process();
  c->has_root = true;
  c->root_path = xstrdup("rootfs");
  c->root_readonly = true;
  c->hostname = xstrdup("fsrun");
  default_mounts(c, rootless);
  c->linux_ = default_linux(rootless, host_uid, host_gid);
  return c;
}

int spec_write_default(const char *bundle_dir, bool rootless, fsrun_error_t *err) {
  oci_config *config = spec_default_config(rootless, (uint32_t)geteuid(), (uint32_t)getegid());
  cleanup_free char *json_err = NULL;
  cleanup_free char *json = oci_config_serialize(config, true, &json_err);
  cleanup_close int dirfd = -1;
  cleanup_close int fd = -1;
  size_t len;

  oci_config_free(config);
  if (json == NULL)
    return fsrun_error_take(err, 0, steal_ptr(&json_err));
  len = strlen(json);

  dirfd = open(bundle_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return fsrun_error_errno(err, "open bundle directory `%s`", bundle_dir);
  /* O_EXCL: an existing config.json (or a symlink planted there) is never overwritten */
  fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0 && errno == EEXIST)
    return fsrun_error_make(err, 0, "config.json already exists in %s", bundle_dir);
  if (fd < 0)
    return fsrun_error_errno(err, "create `%s/config.json`", bundle_dir);
  if (safe_write_all(fd, json, len) < 0 ||
      (len > 0 && json[len - 1] != '\n' && safe_write_all(fd, "\n", 1) < 0)) {
    int saved = errno;
    unlinkat(dirfd, "config.json", 0);
    return fsrun_error_make(err, saved, "write `%s/config.json`", bundle_dir);
  }
  return 0;
}
