/* Cgroup drivers: host detection, path resolution, directory life cycle and dispatch to the v1
 * (cgroup-v1.c) and v2 (cgroup-v2.c) writers.
 *
 * Hosts:
 *  - unified: cgroup2 at /sys/fs/cgroup; one directory per container.
 *  - legacy: v1 hierarchies under /sys/fs/cgroup/<ctrl>; the container gets a directory in every
 *    mounted hierarchy (including name=systemd), so each of its processes is accounted everywhere.
 *  - hybrid: legacy plus a cgroup2 mount at /sys/fs/cgroup/unified that holds few or no
 *    controllers. We also make the directory there, so that the 0:: line of /proc/PID/cgroup names
 *    the container, cgroup.kill works, and controllers that exist only in cgroup2 on the host (e.g.
 *    hugetlb here) can still be limited. Controllers bound to a v1 hierarchy are written in v1. */
#include "cgroup-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>

#include "clone.h"
#include "log.h"
#include "utils.h"

#define DESTROY_TIMEOUT_MS 10000

/* --- small file helpers ---------------------------------------------------------------------- */

char *cgroup_join(const char *mountpoint, const char *path) {
  if (path == NULL || strcmp(path, "/") == 0 || path[0] == '\0')
    return xstrdup(mountpoint);
  return xasprintf("%s%s%s", mountpoint, path[0] == '/' ? "" : "/", path);
}

int cgroup_write_fd(int fd, const char *dir, const char *file, const char *value,
                    fsrun_error_t *err) {
  size_t len = strlen(value);
  ssize_t w;
  /* the kernel parses each write(2) on its own: never split a value */
  do
    w = write(fd, value, len);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return fsrun_error_errno(err, "write `%s` in %s", file, dir);
  if ((size_t)w != len)
    return fsrun_error_make(err, EIO, "write `%s` in %s: short write", file, dir);
  return 0;
}

int cgroup_open_file(const char *dir, const char *file, fsrun_error_t *err) {
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s` in %s", file, dir);
  return fd;
}

int cgroup_write(const char *dir, const char *file, const char *value, fsrun_error_t *err) {
  cleanup_close int fd = cgroup_open_file(dir, file, err);
  if (fd < 0)
    return fd;
  return cgroup_write_fd(fd, dir, file, value, err);
}

int cgroup_write_field(const char *dir, const char *file, const char *value, const char *field,
                       fsrun_error_t *err) {
  int ret = cgroup_write(dir, file, value, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "%s", field);
  return 0;
}

int cgroup_write_fieldf(const char *dir, const char *file, const char *field, fsrun_error_t *err,
                        const char *fmt, ...) {
  cleanup_free char *value = NULL;
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vasprintf(&value, fmt, ap);
  va_end(ap);
  if (n < 0)
    abort();
  return cgroup_write_field(dir, file, value, field, err);
}

int cgroup_read(const char *dir, const char *file, char **out, fsrun_error_t *err) {
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  size_t len = 0;
  int ret = read_file_at(AT_FDCWD, p, out, &len, err);
  if (ret < 0)
    return ret;
  while (len > 0 && ((*out)[len - 1] == '\n' || (*out)[len - 1] == ' '))
    (*out)[--len] = '\0';
  return 0;
}

bool cgroup_read_u64(const char *dir, const char *file, uint64_t max_value, uint64_t *v) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  if (dir == NULL || cgroup_read(dir, file, &text, &e) < 0)
    return false;
  *v = strcmp(text, "max") == 0 ? max_value : strtoull(text, NULL, 10);
  return true;
}

bool cgroup_file_exists(const char *dir, const char *file) {
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  return access(p, F_OK) == 0;
}

bool cgroup_word_in_list(const char *list, const char *word, const char *separators) {
  size_t wl = strlen(word);
  const char *p = list;
  if (list == NULL)
    return false;
  while (*p) {
    size_t len;
    p += strspn(p, separators);
    len = strcspn(p, separators);
    if (len == wl && strncmp(p, word, wl) == 0)
      return true;
    p += len;
  }
  return false;
}

char *cgroup_limit_string(int64_t v) {
  if (v < 0)
    return xstrdup("max");
  return xasprintf("%lld", (long long)v);
}

void cgroup_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* --- host detection ----------------------------------------------------------------------------
 */

static bool mode_cached;
static cgroup_mode_t cached_mode;

int cgroup_detect_mode(cgroup_mode_t *mode, fsrun_error_t *err) {
  struct statfs sfs;
  if (mode_cached) {
    *mode = cached_mode;
    return 0;
  }
  if (statfs(CGROUP_ROOT, &sfs) < 0)
    return fsrun_error_errno(err, "statfs `%s`", CGROUP_ROOT);
  if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
    cached_mode = CGROUP_MODE_UNIFIED;
  } else if (sfs.f_type == TMPFS_MAGIC) {
    if (statfs(CGROUP_HYBRID_UNIFIED, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
      cached_mode = CGROUP_MODE_HYBRID;
    else
      cached_mode = CGROUP_MODE_LEGACY;
  } else {
    return fsrun_error_make(err, ENOTSUP, "`%s` is neither cgroup2 nor a tmpfs of v1 hierarchies",
                            CGROUP_ROOT);
  }
  mode_cached = true;
  *mode = cached_mode;
  return 0;
}

static const char *mode_name(cgroup_mode_t m) {
  switch (m) {
  case CGROUP_MODE_UNIFIED:
    return "unified";
  case CGROUP_MODE_HYBRID:
    return "hybrid";
  case CGROUP_MODE_LEGACY:
    return "legacy";
  }
  return "unknown";
}

/* mountinfo escapes blanks and backslashes as \ooo */
static void unescape_octal(char *s) {
  char *w = s;
  for (char *r = s; *r;) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* mountinfo's "MAJOR:MINOR" */
static unsigned long long dev_of(const char *field) {
  unsigned int major = 0, minor = 0;
  if (sscanf(field, "%u:%u", &major, &minor) != 2)
    return 0;
  return makedev(major, minor);
}

/* Every mounted v1 hierarchy, once each (a hierarchy mounted twice has one superblock). */
static int discover_v1_hierarchies(struct fsrun_cgroup *cg, fsrun_error_t *err) {
  cleanup_free char *mountinfo = NULL, *subsystems = NULL, *seen = xstrdup(" ");
  char *saveptr = NULL;
  int ret;

  ret = read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mountinfo, NULL, err);
  if (ret < 0)
    return ret;
  ret = read_file_at(AT_FDCWD, "/proc/cgroups", &subsystems, NULL, err);
  if (ret < 0)
    return ret;

  for (char *line = strtok_r(mountinfo, "\n", &saveptr); line;
       line = strtok_r(NULL, "\n", &saveptr)) {
    char *fields[6] = {0}, *sep, *fstype, *superopts, *p = line, *opt_save = NULL;
    cleanup_free char *controllers = NULL, *dev_key = NULL;
    size_t i;

    sep = strstr(line, " - ");
    if (sep == NULL)
      continue;
    *sep = '\0';
    fstype = strtok_r(sep + 3, " ", &opt_save);
    (void)strtok_r(NULL, " ", &opt_save); /* source */
    superopts = strtok_r(NULL, " ", &opt_save);
    if (fstype == NULL || superopts == NULL || strcmp(fstype, "cgroup") != 0)
      continue;
    for (i = 0; i < 6 && p; i++) {
      fields[i] = p;
      p = strchr(p, ' ');
      if (p)
        *p++ = '\0';
    }
    if (i < 5 || fields[2] == NULL || fields[4] == NULL)
      continue;
    dev_key = xasprintf(" %s ", fields[2]);
    if (strstr(seen, dev_key))
      continue;

    /* the controllers are the super options that name a subsystem, plus name=... */
    for (char *o = strtok_r(superopts, ",", &opt_save); o; o = strtok_r(NULL, ",", &opt_save)) {
      bool is_ctrl = strncmp(o, "name=", 5) == 0;
      if (!is_ctrl) {
        for (const char *l = subsystems; l && *l;
             l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
          size_t n = strcspn(l, "\t\n");
          if (l[0] != '#' && n == strlen(o) && strncmp(l, o, n) == 0) {
            is_ctrl = true;
            break;
          }
        }
      }
      if (!is_ctrl)
        continue;
      if (controllers == NULL) {
        controllers = xstrdup(o);
      } else {
        char *n = xasprintf("%s,%s", controllers, o);
        free(controllers);
        controllers = n;
      }
    }
    if (controllers == NULL)
      continue;

    {
      char *n = xasprintf("%s%s ", seen, fields[2]);
      free(seen);
      seen = n;
    }
    unescape_octal(fields[4]);
    cg->v1 = realloc(cg->v1, (cg->n_v1 + 1) * sizeof(*cg->v1));
    if (cg->v1 == NULL)
      abort();
    cg->v1[cg->n_v1].mountpoint = xstrdup(fields[4]);
    cg->v1[cg->n_v1].controllers = steal_ptr(&controllers);
    cg->v1[cg->n_v1].dev = dev_of(fields[2]);
    cg->n_v1++;
  }
  return 0;
}

const char *cgroup_v1_mount(const struct fsrun_cgroup *cg, const char *controller) {
  for (size_t i = 0; i < cg->n_v1; i++)
    if (cgroup_word_in_list(cg->v1[i].controllers, controller, ","))
      return cg->v1[i].mountpoint;
  return NULL;
}

size_t cgroup_host_hierarchy_count(const struct fsrun_cgroup *cg) {
  if (cg->mode == CGROUP_MODE_UNIFIED)
    return 0;
  return cg->n_v1 + (cg->mode == CGROUP_MODE_HYBRID ? 1 : 0);
}

void cgroup_host_hierarchy(const struct fsrun_cgroup *cg, size_t i, const char **controllers,
                           const char **mountpoint) {
  if (i < cg->n_v1) {
    *controllers = cg->v1[i].controllers;
    *mountpoint = cg->v1[i].mountpoint;
  } else {
    *controllers = "";
    *mountpoint = cg->unified_mount;
  }
}

static bool carries_any(const char *controllers, const char *list) {
  cleanup_free char *copy = xstrdup(list);
  char *save = NULL;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
    if (cgroup_word_in_list(controllers, w, ","))
      return true;
  return false;
}

/* Only the v1 hierarchies that carry a controller of list: a container that limits nothing else
 * makes and removes no directory in the others. A list that matches none keeps them all. */
static void keep_v1_hierarchies(struct fsrun_cgroup *cg, const char *list) {
  size_t kept = 0;
  for (size_t i = 0; i < cg->n_v1; i++)
    kept += carries_any(cg->v1[i].controllers, list);
  if (kept == 0)
    return;
  kept = 0;
  for (size_t i = 0; i < cg->n_v1; i++) {
    if (carries_any(cg->v1[i].controllers, list)) {
      cg->v1[kept++] = cg->v1[i];
    } else {
      free(cg->v1[i].mountpoint);
      free(cg->v1[i].controllers);
    }
  }
  cg->n_v1 = kept;
  cg->v1_only = xstrdup(list);
}

static int cgroup_new(cgroup_mode_t mode, const char *record, struct fsrun_cgroup **out,
                      fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = xmalloc0(sizeof(*cg));
  int ret;
  cg->mode = mode;
  cg->unified_fd = -1;
  if (mode == CGROUP_MODE_UNIFIED)
    cg->unified_mount = xstrdup(CGROUP_ROOT);
  else if (mode == CGROUP_MODE_HYBRID)
    cg->unified_mount = xstrdup(CGROUP_HYBRID_UNIFIED);
  if (mode != CGROUP_MODE_UNIFIED &&
      (record == NULL || cgroup_hierarchies_from_record(cg, record) < 0)) {
    ret = discover_v1_hierarchies(cg, err);
    if (ret < 0)
      return ret;
    if (cg->n_v1 == 0)
      return fsrun_error_make(err, ENOENT, "no cgroup v1 hierarchy is mounted under %s",
                              CGROUP_ROOT);
  }
  *out = steal_ptr(&cg);
  return 0;
}

void cgroup_free(struct fsrun_cgroup *cg) {
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n_v1; i++) {
    free(cg->v1[i].mountpoint);
    free(cg->v1[i].controllers);
  }
  free(cg->v1);
  free(cg->v1_only);
  free(cg->path);
  free(cg->unified_mount);
  if (cg->unified_fd >= 0)
    close(cg->unified_fd);
  free(cg->pending_rules);
  cgroup_systemd_free(cg);
  free(cg);
}

void cleanup_cgroupp(struct fsrun_cgroup **cg) {
  cgroup_free(*cg);
  *cg = NULL;
}

char *cgroup_v1_path_in(const char *proc_cgroup, const char *controller) {
  for (const char *line = proc_cgroup; line != NULL && *line != '\0';) {
    const char *end = line + strcspn(line, "\n");
    const char *c1 = memchr(line, ':', (size_t)(end - line));
    const char *c2 = c1 != NULL ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
    if (c2 != NULL) {
      cleanup_free char *list = xasprintf("%.*s", (int)(c2 - c1 - 1), c1 + 1);
      if (cgroup_word_in_list(list, controller, ","))
        return xasprintf("%.*s", (int)(end - c2 - 1), c2 + 1);
    }
    line = *end != '\0' ? end + 1 : NULL;
  }
  return NULL;
}

char *cgroup_v1_own_dir(const char *controller) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_free char *own = NULL, *path = NULL;
  cgroup_mode_t mode;
  const char *mount;
  if (cgroup_detect_mode(&mode, &err) < 0 || mode == CGROUP_MODE_UNIFIED ||
      cgroup_new(mode, NULL, &cg, &err) < 0 || (mount = cgroup_v1_mount(cg, controller)) == NULL ||
      read_file_at(AT_FDCWD, "/proc/self/cgroup", &own, NULL, &err) < 0 ||
      (path = cgroup_v1_path_in(own, controller)) == NULL)
    return NULL;
  return cgroup_join(mount, path);
}

/* --- paths ------------------------------------------------------------------------------------ */

/* Collapses "//" and a trailing "/", refuses "." and ".." components. */
static int normalize_path(const char *in, char **out, fsrun_error_t *err) {
  cleanup_free char *copy = xstrdup(in);
  cleanup_free char *res = xmalloc0(strlen(in) + 2);
  char *save = NULL;
  size_t len = 0;
  for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0)
      return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` must not contain `%s`", in, c);
    res[len++] = '/';
    strcpy(res + len, c);
    len += strlen(c);
  }
  *out = steal_ptr(&res);
  return 0;
}

static bool id_is_safe(const char *id) {
  return id != NULL && id[0] != '\0' && strchr(id, '/') == NULL && strcmp(id, ".") != 0 &&
         strcmp(id, "..") != 0;
}

int cgroup_resolve_path(const char *id, const char *cgroups_path, bool systemd, char **out,
                        fsrun_error_t *err) {
  cleanup_free char *norm = NULL;
  int ret;
  *out = NULL;
  if (systemd)
    return cgroup_systemd_path(cgroups_path, id, out, err);
  if (cgroups_path == NULL || cgroups_path[0] == '\0') {
    if (!id_is_safe(id))
      return fsrun_error_make(err, EINVAL, "container id `%s` cannot name a cgroup", id ? id : "");
    *out = xasprintf(CGROUP_DEFAULT_PARENT "/%s", id);
    return 0;
  }
  ret = normalize_path(cgroups_path, &norm, err);
  if (ret < 0)
    return ret;
  if (norm[0] == '\0')
    return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` is the root cgroup",
                            cgroups_path);
  if (cgroups_path[0] == '/')
    *out = steal_ptr(&norm);
  else
    *out = xasprintf(CGROUP_DEFAULT_PARENT "%s", norm);
  return 0;
}

const char *cgroup_path(const struct fsrun_cgroup *cg) {
  return cg->path;
}

/* --- device rules --------------------------------------------------------------------------- */

static const device_rule default_device_rules[] = {
    {true, 'c', -1, -1, DEVICE_ACCESS_MKNOD}, /* mknod of any node; opening is what is guarded */
    {true, 'b', -1, -1, DEVICE_ACCESS_MKNOD}, {true, 'c', 1, 3, DEVICE_ACCESS_ALL}, /* /dev/null */
    {true, 'c', 1, 5, DEVICE_ACCESS_ALL},                                           /* /dev/zero */
    {true, 'c', 1, 7, DEVICE_ACCESS_ALL},                                           /* /dev/full */
    {true, 'c', 1, 8, DEVICE_ACCESS_ALL},    /* /dev/random */
    {true, 'c', 1, 9, DEVICE_ACCESS_ALL},    /* /dev/urandom */
    {true, 'c', 5, 0, DEVICE_ACCESS_ALL},    /* /dev/tty */
    {true, 'c', 5, 1, DEVICE_ACCESS_ALL},    /* /dev/console */
    {true, 'c', 5, 2, DEVICE_ACCESS_ALL},    /* /dev/ptmx */
    {true, 'c', 136, -1, DEVICE_ACCESS_ALL}, /* /dev/pts/N */
};

bool cgroup_device_allowed_by_default(char type, unsigned int major, unsigned int minor) {
  for (size_t i = 0; i < sizeof(default_device_rules) / sizeof(default_device_rules[0]); i++) {
    const device_rule *r = &default_device_rules[i];
    if ((r->access & DEVICE_ACCESS_READ) && r->type == type && r->major == (int64_t)major &&
        (r->minor < 0 || r->minor == (int64_t)minor))
      return true;
  }
  return false;
}

static void push_rule(device_rule **v, size_t *n, device_rule r) {
  *v = realloc(*v, (*n + 1) * sizeof(**v));
  if (*v == NULL)
    abort();
  (*v)[(*n)++] = r;
}

/* linux.resources.devices, validated, appended to *rules */
static int push_spec_rules(const oci_resources *r, device_rule **rules, size_t *count,
                           fsrun_error_t *err) {
  for (size_t i = 0; r && i < r->n_devices; i++) {
    const oci_device_cgroup *d = &r->devices[i];
    device_rule rule = {d->allow, 'a', -1, -1, 0};
    if (d->type != NULL && d->type[0] != '\0') {
      if (strlen(d->type) != 1 || strchr("acb", d->type[0]) == NULL)
        return fsrun_error_make(err, EINVAL,
                                "linux.resources.devices[%zu].type: expected `a`, `b` or `c`, "
                                "got `%s`",
                                i, d->type);
      rule.type = d->type[0];
    }
    if (d->has_major && d->major >= 0)
      rule.major = d->major;
    if (d->has_minor && d->minor >= 0)
      rule.minor = d->minor;
    if ((rule.major > INT32_MAX) || (rule.minor > INT32_MAX))
      return fsrun_error_make(err, EINVAL, "linux.resources.devices[%zu]: major/minor too large",
                              i);
    if (d->access == NULL || d->access[0] == '\0') {
      rule.access = DEVICE_ACCESS_ALL;
    } else {
      for (const char *a = d->access; *a; a++) {
        if (*a == 'r')
          rule.access |= DEVICE_ACCESS_READ;
        else if (*a == 'w')
          rule.access |= DEVICE_ACCESS_WRITE;
        else if (*a == 'm')
          rule.access |= DEVICE_ACCESS_MKNOD;
        else
          return fsrun_error_make(err, EINVAL,
                                  "linux.resources.devices[%zu].access: `%s` is not made of r, w "
                                  "and m",
                                  i, d->access);
      }
    }
    push_rule(rules, count, rule);
  }
  return 0;
}

/* nodes the spec asks fsrun to create must be usable, as with runc */
static void push_node_rules(const oci_device *devices, size_t n_devices, device_rule **rules,
                            size_t *count) {
  for (size_t i = 0; devices && i < n_devices; i++) {
    const oci_device *d = &devices[i];
    char type;
    if (d->type == NULL || !d->has_major || !d->has_minor)
      continue;
    if (strcmp(d->type, "c") == 0 || strcmp(d->type, "u") == 0)
      type = 'c';
    else if (strcmp(d->type, "b") == 0)
      type = 'b';
    else
      continue; /* fifos are not devices */
    push_rule(rules, count, (device_rule){true, type, d->major, d->minor, DEVICE_ACCESS_ALL});
  }
}

static void push_default_rules(device_rule **rules, size_t *count) {
  for (size_t i = 0; i < sizeof(default_device_rules) / sizeof(default_device_rules[0]); i++)
    push_rule(rules, count, default_device_rules[i]);
}

int cgroup_device_rules(const oci_resources *r, const oci_device *devices, size_t n_devices,
                        device_rule **out, size_t *n, fsrun_error_t *err) {
  cleanup_free device_rule *rules = NULL;
  size_t count = 0;
  int ret = push_spec_rules(r, &rules, &count, err);
  if (ret < 0)
    return ret;
  push_node_rules(devices, n_devices, &rules, &count);
  push_default_rules(&rules, &count);
  *out = steal_ptr(&rules);
  *n = count;
  return 0;
}

int cgroup_device_rules_for_update(const oci_resources *r, const oci_device *devices,
                                   size_t n_devices, device_rule **out, size_t *n,
                                   fsrun_error_t *err) {
  cleanup_free device_rule *rules = NULL;
  size_t count = 0;
  int ret;
  push_default_rules(&rules, &count);
  push_node_rules(devices, n_devices, &rules, &count);
  ret = push_spec_rules(r, &rules, &count, err);
  if (ret < 0)
    return ret;
  *out = steal_ptr(&rules);
  *n = count;
  return 0;
}

/* --- directories ------------------------------------------------------------------------------ */

typedef struct {
  char **dirs; /* in creation order */
  size_t n;
} created_dirs;

static void created_rollback(created_dirs *c) {
  for (size_t i = c->n; i-- > 0;) {
    if (rmdir(c->dirs[i]) < 0 && errno != ENOENT)
      log_debug("rollback: rmdir `%s`: %s", c->dirs[i], strerror(errno));
    free(c->dirs[i]);
  }
  free(c->dirs);
  c->dirs = NULL;
  c->n = 0;
}

static void created_forget(created_dirs *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->dirs[i]);
  free(c->dirs);
  c->dirs = NULL;
  c->n = 0;
}

/* remembers a directory we made, for the rollback */
static void created_add(created_dirs *created, const char *dir) {
  created->dirs = realloc(created->dirs, (created->n + 1) * sizeof(char *));
  if (created->dirs == NULL)
    abort();
  created->dirs[created->n++] = xstrdup(dir);
}

/* mkdir of mount/path and of the levels above it that are missing. The leaf is tried first: its
 * parents (the shared `fsrun` level) are almost always there already. A v1 cpuset directory
 * starts without CPUs or memory nodes: each new one gets its parent's, and a level we create
 * gets cgroup.clone_children, so that the kernel gives them to the containers' directories under
 * it from then on. */
static int make_levels(const char *mount, const char *path, bool cpuset, created_dirs *created,
                       fsrun_error_t *err) {
  cleanup_free char *leaf = cgroup_join(mount, path);
  cleanup_free char *copy = NULL;
  if (mkdir(leaf, 0755) == 0) {
    created_add(created, leaf);
    return cpuset ? cgroup_v1_cpuset_inherit(leaf, err) : 0;
  }
  if (errno == EEXIST)
    return cpuset ? cgroup_v1_cpuset_inherit(leaf, err) : 0;
  if (errno != ENOENT)
    return fsrun_error_errno(err, "mkdir `%s`", leaf);
  copy = xstrdup(path);
  for (char *s = copy + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char saved = *s;
      cleanup_free char *dir = NULL;
      bool made = false;
      *s = '\0';
      dir = cgroup_join(mount, copy);
      if (mkdir(dir, 0755) == 0) {
        created_add(created, dir);
        made = true;
      } else if (errno != EEXIST) {
        return fsrun_error_errno(err, "mkdir `%s`", dir);
      }
      if (cpuset) {
        int ret = cgroup_v1_cpuset_inherit(dir, err);
        if (ret < 0)
          return ret;
        /* best effort: without it, the next container copies the values itself */
        if (made && saved != '\0')
          (void)cgroup_write(dir, "cgroup.clone_children", "1", NULL);
      }
      *s = saved;
      if (saved == '\0')
        break;
    }
  }
  return 0;
}

static bool is_permission_error(int e) {
  return e == EACCES || e == EPERM || e == EROFS;
}

static int make_directories(struct fsrun_cgroup *cg, created_dirs *created, fsrun_error_t *err) {
  int ret;
  if (cg->mode == CGROUP_MODE_UNIFIED) {
    ret = make_levels(cg->unified_mount, cg->path, false, created, err);
    if (ret < 0)
      return ret;
    cg->unified_dir = true;
    /* every controller the host offers, so limits and stats can be read and set later */
    return cgroup_v2_enable_controllers(cg->unified_mount, cg->path, NULL, err);
  }
  for (size_t i = 0; i < cg->n_v1; i++) {
    bool cpuset = cgroup_word_in_list(cg->v1[i].controllers, "cpuset", ",");
    ret = make_levels(cg->v1[i].mountpoint, cg->path, cpuset, created, err);
    if (ret < 0)
      return ret;
  }
  if (cg->mode == CGROUP_MODE_HYBRID && !cg->unified_dir) {
    cleanup_error fsrun_error_t uerr = NULL;
    if (make_levels(cg->unified_mount, cg->path, false, created, &uerr) == 0)
      cg->unified_dir = true;
    else
      log_debug("hybrid host: no directory in the cgroup2 mount: %s", uerr->msg);
  }
  return 0;
}

/* cgroup_create_deferred on a hybrid host: the cgroup2 directory (no controllers, nothing to
 * write) is made at once, so that the init is born in it (cgroup_hybrid_clone_fd) instead of
 * being moved there; make_directories makes the rest later. Without it the container goes on
 * with its v1 hierarchies, as make_directories would. */
static void make_hybrid_v2_dir(struct fsrun_cgroup *cg) {
  cleanup_error fsrun_error_t uerr = NULL;
  cleanup_free char *dir = NULL;
  created_dirs created = {0};
  if (make_levels(cg->unified_mount, cg->path, false, &created, &uerr) < 0) {
    created_rollback(&created);
    log_debug("hybrid host: no directory in the cgroup2 mount: %s", uerr->msg);
    return;
  }
  created_forget(&created);
  cg->unified_dir = true;
  dir = cgroup_join(cg->unified_mount, cg->path);
  cg->unified_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* --- resources -------------------------------------------------------------------------------- */

typedef enum {
  CTRL_MEMORY,
  CTRL_CPU,
  CTRL_CPUSET,
  CTRL_PIDS,
  CTRL_IO,
  CTRL_HUGETLB,
  CTRL_NET_CLS,
  CTRL_NET_PRIO,
  CTRL_RDMA,
} controller_kind;

static const struct {
  const char *v1, *v2, *field;
} controllers[] = {
    [CTRL_MEMORY] = {"memory", "memory", "linux.resources.memory"},
    [CTRL_CPU] = {"cpu", "cpu", "linux.resources.cpu"},
    [CTRL_CPUSET] = {"cpuset", "cpuset", "linux.resources.cpu"},
    [CTRL_PIDS] = {"pids", "pids", "linux.resources.pids"},
    [CTRL_IO] = {"blkio", "io", "linux.resources.blockIO"},
    [CTRL_HUGETLB] = {"hugetlb", "hugetlb", "linux.resources.hugepageLimits"},
    [CTRL_NET_CLS] = {"net_cls", NULL, "linux.resources.network.classID"},
    [CTRL_NET_PRIO] = {"net_prio", NULL, "linux.resources.network.priorities"},
    [CTRL_RDMA] = {"rdma", "rdma", "linux.resources.rdma"},
};

/* Where controller k is written for this container: *dir and whether it is a v2 directory. */
static int locate_controller(const struct fsrun_cgroup *cg, controller_kind k, char **dir, bool *v2,
                             fsrun_error_t *err) {
  const char *field = controllers[k].field;
  const char *name = controllers[k].v2 ? controllers[k].v2 : controllers[k].v1;
  *dir = NULL;
  if (cg->mode != CGROUP_MODE_UNIFIED) {
    const char *mount = cgroup_v1_mount(cg, controllers[k].v1);
    if (mount != NULL) {
      *dir = cgroup_join(mount, cg->path);
      *v2 = false;
      return 0;
    }
    name = controllers[k].v1;
  }
  if (cg->unified_dir && controllers[k].v2 != NULL) {
    cleanup_free char *udir = cgroup_join(cg->unified_mount, cg->path);
    cleanup_free char *available = NULL;
    cleanup_error fsrun_error_t rerr = NULL;
    if (cg->mode == CGROUP_MODE_HYBRID) {
      /* only what the resources need is enabled in the host's cgroup2 tree */
      const char *want[] = {controllers[k].v2, NULL};
      int ret = cgroup_v2_enable_controllers(cg->unified_mount, cg->path, want, err);
      if (ret < 0)
        return fsrun_error_wrap(err, "%s", field);
    }
    if (cgroup_read(udir, "cgroup.controllers", &available, &rerr) == 0 &&
        cgroup_word_in_list(available, controllers[k].v2, " ")) {
      *dir = steal_ptr(&udir);
      *v2 = true;
      return 0;
    }
    name = controllers[k].v2;
  }
  return fsrun_error_take(
      err, ENOTSUP, xasprintf("%s: the %s controller is not available on this host", field, name));
}

static bool memory_wanted(const oci_memory *m) {
  return m &&
         (m->has_limit || m->has_reservation || m->has_swap || m->has_kernel || m->has_kernel_tcp ||
          m->has_swappiness || m->has_disable_oom_killer || m->has_use_hierarchy);
}

static bool cpu_wanted(const oci_cpu *c) {
  return c && (c->has_shares || c->has_quota || c->has_burst || c->has_period ||
               c->has_realtime_runtime || c->has_realtime_period || c->has_idle);
}

static bool cpuset_wanted(const oci_cpu *c) {
  return c && ((c->cpus && c->cpus[0]) || (c->mems && c->mems[0]));
}

static bool io_wanted(const oci_block_io *b) {
  return b &&
         (b->has_weight || b->has_leaf_weight || b->n_weight_device || b->n_throttle_read_bps ||
          b->n_throttle_write_bps || b->n_throttle_read_iops || b->n_throttle_write_iops);
}

/* --- writers whose files are the same on v1 and v2 ---------------------------------------------
 */

int cgroup_apply_cpuset(const char *dir, const oci_cpu *c, fsrun_error_t *err) {
  int ret;
  if (c->cpus && c->cpus[0]) {
    ret = cgroup_write_field(dir, "cpuset.cpus", c->cpus, "linux.resources.cpu.cpus", err);
    if (ret < 0)
      return ret;
  }
  if (c->mems && c->mems[0]) {
    ret = cgroup_write_field(dir, "cpuset.mems", c->mems, "linux.resources.cpu.mems", err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int cgroup_apply_pids(const char *dir, const oci_pids *p, fsrun_error_t *err) {
  /* as runc: a limit <= 0 means no limit */
  if (p->limit <= 0)
    return cgroup_write_field(dir, "pids.max", "max", "linux.resources.pids.limit", err);
  return cgroup_write_fieldf(dir, "pids.max", "linux.resources.pids.limit", err, "%lld",
                             (long long)p->limit);
}

int cgroup_apply_hugetlb(const char *dir, const oci_hugepage_limit *h, size_t n, bool v2,
                         fsrun_error_t *err) {
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *file = cgroup_hugetlb_file(h[i].page_size, v2);
    cleanup_free char *field = xasprintf("linux.resources.hugepageLimits[%zu]", i);
    int ret;
    if (file == NULL)
      return fsrun_error_make(err, EINVAL, "%s.pageSize: invalid `%s`", field,
                              h[i].page_size ? h[i].page_size : "");
    ret = cgroup_write_fieldf(dir, file, field, err, "%llu", (unsigned long long)h[i].limit);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* the rdma controller has the same rdma.max on v1 and v2 */
int cgroup_apply_rdma(const char *dir, const oci_rdma *r, size_t n, fsrun_error_t *err) {
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *handles = r[i].has_hca_handles
                                     ? xasprintf("%llu", (unsigned long long)r[i].hca_handles)
                                     : xstrdup("max");
    cleanup_free char *objects = r[i].has_hca_objects
                                     ? xasprintf("%llu", (unsigned long long)r[i].hca_objects)
                                     : xstrdup("max");
    cleanup_free char *field = NULL;
    int ret;
    if (r[i].device == NULL || r[i].device[0] == '\0' || strpbrk(r[i].device, " \n"))
      return fsrun_error_make(err, EINVAL, "linux.resources.rdma: invalid device name");
    field = xasprintf("linux.resources.rdma.%s", r[i].device);
    ret = cgroup_write_fieldf(dir, "rdma.max", field, err, "%s hca_handle=%s hca_object=%s",
                              r[i].device, handles, objects);
    if (ret < 0)
      return ret;
  }
  return 0;
}

static int apply_controller(const struct fsrun_cgroup *cg, controller_kind k,
                            const oci_resources *r, bool update, fsrun_error_t *err) {
  cleanup_free char *dir = NULL;
  bool v2 = false;
  int ret = locate_controller(cg, k, &dir, &v2, err);
  if (ret < 0)
    return ret;
  switch (k) {
  case CTRL_MEMORY:
    return v2 ? cgroup_v2_apply_memory(dir, r->memory, err)
              : cgroup_v1_apply_memory(dir, r->memory, update, err);
  case CTRL_CPU:
    return v2 ? cgroup_v2_apply_cpu(dir, r->cpu, update, err)
              : cgroup_v1_apply_cpu(dir, r->cpu, err);
  case CTRL_CPUSET:
    return cgroup_apply_cpuset(dir, r->cpu, err);
  case CTRL_PIDS:
    return cgroup_apply_pids(dir, r->pids, err);
  case CTRL_IO:
    return v2 ? cgroup_v2_apply_io(dir, r->block_io, err)
              : cgroup_v1_apply_blkio(dir, r->block_io, err);
  case CTRL_HUGETLB:
    return cgroup_apply_hugetlb(dir, r->hugepage_limits, r->n_hugepage_limits, v2, err);
  case CTRL_NET_CLS:
    return cgroup_v1_apply_net_cls(dir, r->network, err);
  case CTRL_NET_PRIO:
    return cgroup_v1_apply_net_prio(dir, r->network, err);
  case CTRL_RDMA:
    return cgroup_apply_rdma(dir, r->rdma, r->n_rdma, err);
  }
  return 0;
}

static int apply_devices(const struct fsrun_cgroup *cg, const device_rule *rules, size_t n,
                         fsrun_error_t *err) {
  const char *mount = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, "devices");
  int ret;
  if (mount != NULL) {
    cleanup_free char *dir = cgroup_join(mount, cg->path);
    return cgroup_v1_apply_devices(dir, rules, n, err);
  }
  if (cg->unified_dir) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    ret = cgroup_v2_apply_devices(dir, rules, n, err);
    if (ret < 0)
      return fsrun_error_wrap(err, "linux.resources.devices");
    return 0;
  }
  return fsrun_error_make(err, ENOTSUP,
                          "linux.resources.devices: no devices controller and no cgroup2 "
                          "directory to filter devices in");
}

static int apply_resources(const struct fsrun_cgroup *cg, const oci_resources *r,
                           const device_rule *rules, size_t n_rules, bool update,
                           fsrun_error_t *err) {
  int ret;
  /* before any controller: a refused key changes nothing */
  if (r != NULL && (ret = cgroup_unified_keys_check(&r->unified, err)) < 0)
    return ret;
  if (r != NULL) {
    struct {
      controller_kind k;
      bool wanted;
    } todo[] = {
        {CTRL_CPUSET, cpuset_wanted(r->cpu)}, /* before memory: mems may bound allocations */
        {CTRL_MEMORY, memory_wanted(r->memory)},
        {CTRL_CPU, cpu_wanted(r->cpu)},
        {CTRL_PIDS, r->pids && r->pids->has_limit},
        {CTRL_IO, io_wanted(r->block_io)},
        {CTRL_HUGETLB, r->n_hugepage_limits > 0},
        {CTRL_NET_CLS, r->network && r->network->has_class_id},
        {CTRL_NET_PRIO, r->network && r->network->n_priorities > 0},
        {CTRL_RDMA, r->n_rdma > 0},
    };
    for (size_t i = 0; i < sizeof(todo) / sizeof(todo[0]); i++) {
      if (!todo[i].wanted)
        continue;
      ret = apply_controller(cg, todo[i].k, r, update, err);
      if (ret < 0)
        return ret;
    }
    if (r->unified.len > 0) {
      cleanup_free char *dir = NULL;
      if (!cg->unified_dir)
        return fsrun_error_make(err, ENOTSUP,
                                "linux.resources.unified: needs a cgroup v2 hierarchy, this host "
                                "has only v1");
      dir = cgroup_join(cg->unified_mount, cg->path);
      ret = cgroup_v2_apply_unified(dir, &r->unified, err);
      if (ret < 0)
        return ret;
    }
  }
  if (rules != NULL) {
    if (geteuid() != 0) {
      /* an unprivileged user can neither load a BPF filter nor write devices.deny; the user
       * namespace already keeps device nodes out of reach */
      log_debug("cgroup: not root, the device allow-list is left to the user namespace");
      return 0;
    }
    ret = apply_devices(cg, rules, n_rules, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* --- public API ------------------------------------------------------------------------------- */

static int refuse_unfit_cgroup(const struct fsrun_cgroup *cg, fsrun_error_t *err);

static int create_cgroup(const cgroup_create_opts *o, bool deferred, struct fsrun_cgroup **out,
                         fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_free device_rule *rules = NULL;
  created_dirs created = {0};
  bool unprivileged = geteuid() != 0;
  size_t n_rules = 0;
  cgroup_mode_t mode;
  int ret;

  *out = NULL;
  /* validate before anything exists */
  if (!o->no_device_rules && (ret = cgroup_device_rules(o->resources, o->devices, o->n_devices,
                                                        &rules, &n_rules, err)) < 0)
    return ret;
  ret = cgroup_detect_mode(&mode, err);
  if (ret < 0)
    return ret;
  ret = cgroup_new(mode, NULL, &cg, err);
  if (ret < 0)
    return ret;
  if (o->v1_controllers != NULL && mode != CGROUP_MODE_UNIFIED && !o->systemd)
    keep_v1_hierarchies(cg, o->v1_controllers);
  ret = cgroup_resolve_path(o->id, o->cgroups_path, o->systemd, &cg->path, err);
  if (ret == 0)
    ret = cgroup_systemd_prepare(cg, o, err);
  if (ret < 0)
    return ret;

  if (unprivileged && mode == CGROUP_MODE_UNIFIED && !o->systemd &&
      (o->cgroups_path == NULL || o->cgroups_path[0] != '/')) {
    cleanup_free char *base = cgroup_rootless_delegated_base();
    if (base != NULL) {
      char *p = xasprintf("%s%s", base, cg->path);
      free(cg->path);
      cg->path = p;
    }
  }

  /* a scope is systemd's to refuse (it exists already) */
  if (cg->systemd == NULL && (ret = refuse_unfit_cgroup(cg, err)) < 0)
    return ret;

  /* Only where the init cannot be cloned into its cgroup, and only as root (a rootless create
   * decides whether it has a cgroup at all by trying): the rest is cgroup_finish()'s. */
  if (deferred && mode != CGROUP_MODE_UNIFIED && !unprivileged && !o->rootless && !o->systemd) {
    if (mode == CGROUP_MODE_HYBRID)
      make_hybrid_v2_dir(cg);
    cg->pending = true;
    cg->pending_resources = o->resources;
    cg->pending_rules = steal_ptr(&rules);
    cg->n_pending_rules = n_rules;
    *out = steal_ptr(&cg);
    return 0;
  }

  ret = make_directories(cg, &created, err);
  if (ret < 0) {
    int e = -ret;
    created_rollback(&created);
    if ((unprivileged || o->rootless) && is_permission_error(e)) {
      log_debug("cgroup: no delegated cgroup for this user, running without one (%s)", (*err)->msg);
      fsrun_error_release(err);
      return 0;
    }
    return ret;
  }

  ret = apply_resources(cg, o->resources, rules, n_rules, false, err);
  if (ret < 0) {
    created_rollback(&created);
    return ret;
  }

  if (mode == CGROUP_MODE_UNIFIED) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    cg->unified_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cg->unified_fd < 0) {
      ret = fsrun_error_errno(err, "open `%s`", dir);
      created_rollback(&created);
      return ret;
    }
  }
  created_forget(&created);
  log_debug("cgroup: created %s (%s host)", cg->path, mode_name(mode));
  *out = steal_ptr(&cg);
  return 0;
}

int cgroup_create(const cgroup_create_opts *o, struct fsrun_cgroup **out, fsrun_error_t *err) {
  return create_cgroup(o, false, out, err);
}

int cgroup_create_deferred(const cgroup_create_opts *o, struct fsrun_cgroup **out,
                           fsrun_error_t *err) {
  return create_cgroup(o, true, out, err);
}

int cgroup_finish(struct fsrun_cgroup *cg, fsrun_error_t *err) {
  created_dirs created = {0};
  int ret;
  if (cg == NULL || !cg->pending)
    return 0;
  cg->pending = false;
  ret = make_directories(cg, &created, err);
  if (ret == 0)
    ret = apply_resources(cg, cg->pending_resources, cg->pending_rules, cg->n_pending_rules, false,
                          err);
  if (ret < 0) {
    created_rollback(&created);
    return ret;
  }
  created_forget(&created);
  log_debug("cgroup: created %s (%s host)", cg->path, mode_name(cg->mode));
  return 0;
}

/* "MODE:PATH", or "MODE[LIST]:PATH" for a cgroup in the hierarchies of LIST only */
char *cgroup_describe(const struct fsrun_cgroup *cg) {
  if (cg->v1_only != NULL)
    return xasprintf("%s[%s]:%s", mode_name(cg->mode), cg->v1_only, cg->path);
  return xasprintf("%s:%s", mode_name(cg->mode), cg->path);
}

int cgroup_open(const char *description, const char *record, struct fsrun_cgroup **out,
                fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  const char *colon = description ? strchr(description, ':') : NULL;
  const char *bracket = NULL;
  cleanup_free char *v1_only = NULL;
  cgroup_mode_t mode, host;
  size_t len;
  int ret;

  *out = NULL;
  if (colon == NULL || colon[1] != '/')
    return fsrun_error_make(err, EINVAL, "invalid cgroup description `%s`",
                            description ? description : "");
  len = (size_t)(colon - description);
  bracket = memchr(description, '[', len);
  if (bracket != NULL) {
    if (colon[-1] != ']' || colon - bracket < 3)
      return fsrun_error_make(err, EINVAL, "invalid cgroup description `%s`", description);
    v1_only = xasprintf("%.*s", (int)(colon - bracket - 2), bracket + 1);
    len = (size_t)(bracket - description);
  }
  if (len == 7 && strncmp(description, "unified", len) == 0)
    mode = CGROUP_MODE_UNIFIED;
  else if (len == 6 && strncmp(description, "hybrid", len) == 0)
    mode = CGROUP_MODE_HYBRID;
  else if (len == 6 && strncmp(description, "legacy", len) == 0)
    mode = CGROUP_MODE_LEGACY;
  else
    return fsrun_error_make(err, EINVAL, "invalid cgroup description `%s`", description);
  ret = cgroup_detect_mode(&host, err);
  if (ret < 0)
    return ret;
  if (host != mode)
    return fsrun_error_make(err, EINVAL, "the cgroup `%s` was made on a %s host, this one is %s",
                            description, mode_name(mode), mode_name(host));
  ret = cgroup_new(mode, record, &cg, err);
  if (ret < 0)
    return ret;
  if (v1_only != NULL && mode != CGROUP_MODE_UNIFIED)
    keep_v1_hierarchies(cg, v1_only);
  cg->path = xstrdup(colon + 1);
  if (cg->unified_mount != NULL) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    cg->unified_dir = access(dir, F_OK) == 0;
    /* a hybrid host's too: exec clones into it (cgroup_hybrid_clone_fd) */
    if (cg->unified_dir)
      cg->unified_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  *out = steal_ptr(&cg);
  return 0;
}

/* The paths a container's cgroup can have for its id and linux.cgroupsPath as cgroupfs or, with
 * systemd, as a systemd scope (--systemd-cgroup is a flag of each command, so either), each also
 * below this user's delegated subtree (the user manager's usual cgroup; for cgroupfs only for a
 * path under fsrun's default parent). Appended at paths[*n]: two at most. */
static void add_candidates(char **paths, size_t *n, const char *id, const char *cgroups_path,
                           bool systemd) {
  cleanup_error fsrun_error_t ignored = NULL;
  char *p = NULL;
  if (cgroup_resolve_path(id, cgroups_path, systemd, &p, &ignored) < 0)
    return;
  paths[(*n)++] = p;
  if (systemd || cgroups_path == NULL || cgroups_path[0] != '/')
    paths[(*n)++] = xasprintf("/user.slice/user-%u.slice/user@%u.service%s", (unsigned)getuid(),
                              (unsigned)getuid(), p);
}

/* Where an ordinary caller's create on a unified host puts the cgroup: below the caller's own
 * delegated subtree (cgroup_rootless_delegated_base, looked at now), or NULL. */
static char *own_delegated_candidate(const char *id, const char *cgroups_path) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *own = NULL, *base = NULL;
  cgroup_mode_t mode;
  if (geteuid() == 0 || (cgroups_path != NULL && cgroups_path[0] == '/') ||
      cgroup_detect_mode(&mode, &ignored) < 0 || mode != CGROUP_MODE_UNIFIED ||
      cgroup_resolve_path(id, cgroups_path, false, &own, &ignored) < 0 ||
      (base = cgroup_rootless_delegated_base()) == NULL)
    return NULL;
  return xasprintf("%s%s", base, own);
}

/* Every candidate, cgroupfs first, then the caller's delegated subtree's. NULL-terminated; caller
 * frees. */
static char **candidate_paths(const char *id, const char *cgroups_path) {
  char **paths = xmalloc0(6 * sizeof(char *));
  size_t n = 0;
  add_candidates(paths, &n, id, cgroups_path, false);
  if ((paths[n] = own_delegated_candidate(id, cgroups_path)) != NULL)
    n++;
  add_candidates(paths, &n, id, cgroups_path, true);
  return paths;
}

static void free_paths(char **paths) {
  for (size_t i = 0; paths[i] != NULL; i++)
    free(paths[i]);
  free(paths);
}

/* Whether path is one of the cgroupfs (systemd false) or the systemd candidates. */
static bool among_candidates(const char *id, const char *cgroups_path, bool systemd,
                             const char *path) {
  char *paths[3] = {NULL};
  size_t n = 0;
  bool found = false;
  add_candidates(paths, &n, id, cgroups_path, systemd);
  for (size_t i = 0; i < n; i++) {
    found = found || strcmp(paths[i], path) == 0;
    free(paths[i]);
  }
  return found;
}

/* The cgroupfs candidates first: a systemd path asks the kernel which user namespace we are in
 * (a stat of /proc/self/ns/user, ~25 us), which a container made without --systemd-cgroup, the
 * usual one, never needs (issue 15) */
bool cgroup_path_is_containers(const char *id, const char *cgroups_path, const char *path) {
  return among_candidates(id, cgroups_path, false, path) ||
         among_candidates(id, cgroups_path, true, path) ||
         cgroup_systemd_user_scope_matches(id, cgroups_path, path);
}

int cgroup_open_checked(const char *description, const char *record, const char *id,
                        const char *cgroups_path, struct fsrun_cgroup **out, fsrun_error_t *err) {
  const char *colon = description ? strchr(description, ':') : NULL;
  *out = NULL;
  if (colon == NULL || !cgroup_path_is_containers(id, cgroups_path, colon + 1))
    return fsrun_error_take(
        err, EPERM,
        xasprintf("the cgroup `%s` of the state file is not one that the container's id and "
                  "linux.cgroupsPath lead to",
                  description ? description : ""));
  return cgroup_open(description, record, out, err);
}

static bool exists_in_some_hierarchy(const struct fsrun_cgroup *cg) {
  bool found = false;
  for (size_t i = 0; i < cg->n_v1 && !found; i++) {
    cleanup_free char *dir = cgroup_join(cg->v1[i].mountpoint, cg->path);
    found = access(dir, F_OK) == 0;
  }
  return found || cg->unified_dir;
}

int cgroup_find(const char *id, const char *cgroups_path, struct fsrun_cgroup **out,
                fsrun_error_t *err) {
  char **paths = candidate_paths(id, cgroups_path);
  cgroup_mode_t mode;
  int ret = cgroup_detect_mode(&mode, err);
  *out = NULL;
  for (size_t i = 0; ret == 0 && paths[i] != NULL && *out == NULL; i++) {
    cleanup_free char *description = xasprintf("%s:%s", mode_name(mode), paths[i]);
    struct fsrun_cgroup *cg = NULL;
    ret = cgroup_open(description, NULL, &cg, err);
    if (ret == 0 && exists_in_some_hierarchy(cg))
      *out = cg;
    else
      cgroup_free(cg);
  }
  free_paths(paths);
  return ret;
}

int cgroup_clone_fd(const struct fsrun_cgroup *cg) {
  /* a systemd scope is made with the init's pid in it: the init is moved, not cloned, into it;
   * without clone3 there is no CLONE_INTO_CGROUP, and the process is moved as on v1 */
  if (cg == NULL || cg->mode != CGROUP_MODE_UNIFIED || cg->systemd != NULL || clone3_refused())
    return -1;
  return cg->unified_fd;
}

int cgroup_unified_fd(const struct fsrun_cgroup *cg) {
  return cg == NULL || cg->mode != CGROUP_MODE_UNIFIED ? -1 : cg->unified_fd;
}

int cgroup_hybrid_clone_fd(const struct fsrun_cgroup *cg) {
  if (cg == NULL || cg->mode != CGROUP_MODE_HYBRID || cg->systemd != NULL || clone3_refused())
    return -1;
  return cg->unified_fd;
}

int cgroup_enter_v1(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err) {
  char value[32];
  int ret;
  snprintf(value, sizeof(value), "%d", (int)pid);
  for (size_t i = 0; cg->mode != CGROUP_MODE_UNIFIED && i < cg->n_v1; i++) {
    cleanup_free char *dir = cgroup_join(cg->v1[i].mountpoint, cg->path);
    /* the caller itself: `tasks` moves the calling thread alone, which spares the kernel's
     * global threadgroup lock, whose first writer after a quiet spell waits for an RCU grace
     * period (10-16 ms); cgroup.procs would take it */
    ret = cgroup_write(dir, pid == 0 ? "tasks" : "cgroup.procs", value, err);
    if (ret < 0)
      return fsrun_error_wrap(err, "join the cgroup (%s)", cg->v1[i].controllers);
  }
  return 0;
}

bool cgroup_joinable_through_tasks(const struct fsrun_cgroup *cg) {
  return cg->mode != CGROUP_MODE_UNIFIED && cg->systemd == NULL && cg->n_v1 > 0;
}

int cgroup_enter(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err) {
  return cgroup_enter_rest(cg, pid, 0, err);
}

int cgroup_enter_rest(const struct fsrun_cgroup *cg, pid_t pid, unsigned joined,
                      fsrun_error_t *err) {
  char value[32];
  int ret;
  snprintf(value, sizeof(value), "%d", (int)pid);
  /* --systemd-cgroup with systemd running: systemd moves pid into the new scope and writes its
   * own values into the scope's files; ours go on top */
  if (cg->systemd != NULL && pid > 0) {
    ret = cgroup_systemd_start(cg, pid, err);
    if (ret == 0)
      ret = apply_resources(cg, cgroup_systemd_resources(cg), NULL, 0, false, err);
    if (ret < 0)
      return ret;
  }
  ret = joined & CGROUP_JOINED_V1 ? 0 : cgroup_enter_v1(cg, pid, err);
  if (ret < 0)
    return ret;
  if (cg->unified_dir && !(joined & CGROUP_JOINED_V2)) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    ret = cgroup_write(dir, "cgroup.procs", value, err);
    if (ret < 0)
      return fsrun_error_wrap(err, "join the cgroup");
  }
  return 0;
}

int cgroup_update_with_nodes(const struct fsrun_cgroup *cg, const oci_resources *r,
                             const oci_device *devices, size_t n_devices, fsrun_error_t *err) {
  cleanup_free device_rule *rules = NULL;
  size_t n_rules = 0;
  int ret;
  if (r == NULL)
    return 0;
  /* devices are only touched when the update names some; they then replace the whole list (v1:
   * `deny a` and the rules again; v2: a new program attached before the old one goes) */
  if (r->n_devices > 0) {
    ret = cgroup_device_rules_for_update(r, devices, n_devices, &rules, &n_rules, err);
    if (ret < 0)
      return ret;
  }
  ret = apply_resources(cg, r, rules, n_rules, true, err);
  /* after the files: the new limits hold even when systemd cannot be told */
  if (ret == 0)
    ret = cgroup_systemd_update(cg, r, err);
  return ret;
}

int cgroup_update(const struct fsrun_cgroup *cg, const oci_resources *r, fsrun_error_t *err) {
  return cgroup_update_with_nodes(cg, r, NULL, 0, err);
}

/* the freezer: v1 freezer hierarchy when there is one, else cgroup.freeze */
static char *freezer_dir(const struct fsrun_cgroup *cg, bool *v2) {
  const char *mount = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, "freezer");
  if (mount != NULL) {
    *v2 = false;
    return cgroup_join(mount, cg->path);
  }
  if (cg->unified_dir) {
    *v2 = true;
    return cgroup_join(cg->unified_mount, cg->path);
  }
  return NULL;
}

int cgroup_freeze(const struct fsrun_cgroup *cg, bool frozen, fsrun_error_t *err) {
  bool v2 = false;
  cleanup_free char *dir = freezer_dir(cg, &v2);
  if (dir == NULL)
    return fsrun_error_make(err, ENOTSUP, "the freezer is not available on this host");
  return v2 ? cgroup_v2_freeze(dir, frozen, err) : cgroup_v1_freeze(dir, frozen, err);
}

int cgroup_is_frozen(const struct fsrun_cgroup *cg, bool *frozen, fsrun_error_t *err) {
  bool v2 = false;
  cleanup_free char *dir = freezer_dir(cg, &v2);
  *frozen = false;
  if (dir == NULL)
    return 0;
  return v2 ? cgroup_v2_is_frozen(dir, frozen, err) : cgroup_v1_is_frozen(dir, frozen, err);
}

/* the directory whose cgroup.procs lists the container's processes */
static char *procs_dir(const struct fsrun_cgroup *cg) {
  bool v2;
  char *dir = freezer_dir(cg, &v2);
  if (dir != NULL)
    return dir;
  for (size_t i = 0; i < cg->n_v1; i++) {
    dir = cgroup_join(cg->v1[i].mountpoint, cg->path);
    if (access(dir, F_OK) == 0)
      return dir;
    free(dir);
  }
  return NULL;
}

static int collect_procs(const char *dir, pid_t **pids, size_t *n, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  cleanup_dir DIR *d = NULL;
  struct dirent *de;
  int ret = cgroup_read(dir, "cgroup.procs", &text, err);
  if (ret < 0) {
    /* gone: nothing in it (a directory being removed, as systemd does with an empty scope,
     * answers ENODEV) */
    if (ret == -ENOENT || ret == -ENODEV) {
      fsrun_error_release(err);
      return 0;
    }
    return ret;
  }
  for (char *p = text; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p)
      break;
    if (v > 0) {
      *pids = realloc(*pids, (*n + 1) * sizeof(pid_t));
      if (*pids == NULL)
        abort();
      (*pids)[(*n)++] = (pid_t)v;
    }
    p = end;
    while (*p == '\n')
      p++;
  }
  /* sub-cgroups the container made (cgroup namespaces, systemd inside) */
  d = opendir(dir);
  if (d == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    sub = xasprintf("%s/%s", dir, de->d_name);
    ret = collect_procs(sub, pids, n, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* A cgroup that exists already must hold no process and not be frozen, as runc 1.2 refuses it:
 * a container sharing another's cgroup is killed by the other's delete --force, frozen by its
 * pause, and gets whichever limits were written last; in a frozen one create waits forever. Every
 * hierarchy is looked at (a v1 cgroup of another's may exist in a few only). */
static int refuse_unfit_cgroup(const struct fsrun_cgroup *cg, fsrun_error_t *err) {
  for (size_t i = 0; i <= cg->n_v1; i++) {
    bool v2 = i == cg->n_v1, frozen = false;
    const char *mount = v2 ? cg->unified_mount : cg->v1[i].mountpoint;
    cleanup_free char *dir = NULL;
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    if (mount == NULL)
      continue;
    dir = cgroup_join(mount, cg->path);
    if (access(dir, F_OK) != 0)
      continue;
    if (collect_procs(dir, &pids, &n, err) < 0)
      return fsrun_error_wrap(err, "linux.cgroupsPath: the container's cgroup %s", dir);
    if (n > 0)
      return fsrun_error_take(err, EBUSY,
                              xasprintf("linux.cgroupsPath: container's cgroup is not empty: %zu "
                                        "process(es) found in %s",
                                        n, dir));
    if (!v2 && !cgroup_word_in_list(cg->v1[i].controllers, "freezer", ","))
      continue;
    if ((v2 ? cgroup_v2_is_frozen(dir, &frozen, err) : cgroup_v1_is_frozen(dir, &frozen, err)) < 0)
      return fsrun_error_wrap(err, "linux.cgroupsPath: the container's cgroup %s", dir);
    if (frozen)
      return fsrun_error_take(
          err, EBUSY,
          xasprintf("linux.cgroupsPath: container's cgroup unexpectedly frozen: %s", dir));
  }
  return 0;
}

int cgroup_pids(const struct fsrun_cgroup *cg, pid_t **pids, size_t *n, fsrun_error_t *err) {
  cleanup_free char *dir = procs_dir(cg);
  cleanup_free pid_t *v = NULL;
  size_t count = 0;
  int ret;
  *pids = NULL;
  *n = 0;
  if (dir == NULL)
    return 0;
  ret = collect_procs(dir, &v, &count, err);
  if (ret < 0)
    return ret;
  *pids = steal_ptr(&v);
  *n = count;
  return 0;
}

static bool pid_listed(pid_t pid, const pid_t *pids, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (pids[i] == pid)
      return true;
  return false;
}

/* v1: a process of the container that was moved out of its freezer cgroup (into another one,
 * perhaps frozen) is still listed in its other hierarchies. It is moved back: a frozen task dies
 * only once thawed, and joining the container's thawed freezer cgroup thaws it, without a write
 * to the cgroup it was moved to, which is not the container's. */
static void reclaim_strays(const struct fsrun_cgroup *cg) {
  const char *mount = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, "freezer");
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *freezer = NULL;
  cleanup_free pid_t *in_freezer = NULL;
  size_t n_in = 0;
  if (mount == NULL)
    return;
  freezer = cgroup_join(mount, cg->path);
  if (access(freezer, F_OK) != 0 || collect_procs(freezer, &in_freezer, &n_in, &err) < 0)
    return;
  for (size_t i = 0; i <= cg->n_v1; i++) {
    const char *m =
        i < cg->n_v1 ? cg->v1[i].mountpoint : (cg->unified_dir ? cg->unified_mount : NULL);
    cleanup_free char *dir = NULL;
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    if (m == NULL || strcmp(m, mount) == 0)
      continue;
    dir = cgroup_join(m, cg->path);
    if (collect_procs(dir, &pids, &n, &err) < 0) {
      fsrun_error_release(&err);
      continue;
    }
    for (size_t j = 0; j < n; j++) {
      char pid[32];
      if (pid_listed(pids[j], in_freezer, n_in))
        continue;
      snprintf(pid, sizeof(pid), "%d", (int)pids[j]);
      if (cgroup_write(freezer, "cgroup.procs", pid, &err) < 0) {
        log_debug("destroy: bring process %s back into the container's freezer cgroup: %s", pid,
                  err->msg);
        fsrun_error_release(&err);
        continue;
      }
      log_debug("destroy: process %s had left the container's freezer cgroup: moved back", pid);
      in_freezer = realloc(in_freezer, (n_in + 1) * sizeof(pid_t));
      if (in_freezer == NULL)
        abort();
      in_freezer[n_in++] = pids[j];
    }
  }
}

int cgroup_thaw_all(const struct fsrun_cgroup *cg, fsrun_error_t *err) {
  bool frozen = false;
  int ret = cgroup_is_frozen(cg, &frozen, err);
  if (ret == 0 && frozen)
    ret = cgroup_freeze(cg, false, err);
  reclaim_strays(cg);
  return ret;
}

/* SIGKILL through the cgroup2 directory's cgroup.kill: true when that killed every process. A
 * file that cannot be written (not the caller's: systemd's Delegate=yes hands over cgroup.procs,
 * not cgroup.kill) is no reason to give up: the caller then signals each process. */
static bool killed_through_file(const struct fsrun_cgroup *cg) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *dir = NULL;
  if (!cg->unified_dir)
    return false;
  dir = cgroup_join(cg->unified_mount, cg->path);
  if (!cgroup_file_exists(dir, "cgroup.kill"))
    return false;
  if (cgroup_write(dir, "cgroup.kill", "1", &err) < 0) {
    log_debug("kill: %s: signalling each process instead", err->msg);
    return false;
  }
  /* hybrid: a process that joined only the v1 hierarchies, and tasks frozen by the v1 freezer
   * (they die only once thawed), are left to the signal to each */
  return cg->mode == CGROUP_MODE_UNIFIED;
}

int cgroup_kill_all(const struct fsrun_cgroup *cg, int signal, fsrun_error_t *err) {
  cleanup_free pid_t *pids = NULL;
  cleanup_error fsrun_error_t ferr = NULL;
  bool was_frozen = false, froze = false;
  size_t n = 0;
  int ret;

  if (signal == SIGKILL && killed_through_file(cg))
    return 0;

  /* freeze so that nothing forks past the signal, then signal every process */
  if (cgroup_is_frozen(cg, &was_frozen, &ferr) < 0)
    fsrun_error_release(&ferr);
  if (!was_frozen) {
    froze = cgroup_freeze(cg, true, &ferr) == 0;
    if (!froze) {
      log_debug("kill: could not freeze the cgroup first: %s", ferr ? ferr->msg : "");
      fsrun_error_release(&ferr);
    }
  }
  ret = cgroup_pids(cg, &pids, &n, err);
  if (ret < 0)
    return ret;
  for (size_t i = 0; i < n; i++) {
    if (kill(pids[i], signal) < 0 && errno != ESRCH) {
      ret = fsrun_error_errno(err, "kill %d with signal %d", (int)pids[i], signal);
      break;
    }
  }
  if (froze || (was_frozen && signal == SIGKILL)) {
    if (cgroup_freeze(cg, false, &ferr) < 0)
      log_debug("kill: thaw: %s", ferr->msg);
  }
  return ret < 0 ? ret : 0;
}

/* rmdir dir after its sub-cgroups (depth first); a missing one is fine */
static int remove_cgroup_tree(const char *dir, fsrun_error_t *err) {
  cleanup_dir DIR *d = NULL;
  struct dirent *de;
  /* the usual case, a leaf: one rmdir and no directory listing */
  if (rmdir(dir) == 0 || errno == ENOENT)
    return 0;
  d = opendir(dir);
  if (d == NULL) {
    if (errno == ENOENT)
      return 0;
    return fsrun_error_errno(err, "open `%s`", dir);
  }
  while ((de = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    int ret;
    if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    sub = xasprintf("%s/%s", dir, de->d_name);
    ret = remove_cgroup_tree(sub, err);
    if (ret < 0)
      return ret;
  }
  /* a process that has just been reaped may keep the cgroup busy for a moment */
  for (int attempt = 0;; attempt++) {
    if (rmdir(dir) == 0 || errno == ENOENT)
      return 0;
    if (errno != EBUSY || attempt >= 50)
      return fsrun_error_errno(err, "rmdir `%s`", dir);
    cgroup_sleep_ms(20);
  }
}

/* rmdir of mount+path: true when it is gone (or was) */
static bool rmdir_gone(const char *mount, const char *path) {
  cleanup_free char *dir = cgroup_join(mount, path);
  return rmdir(dir) == 0 || errno == ENOENT;
}

/* The usual case once the container's processes have exited: every directory is an empty leaf,
 * and one rmdir each removes it, without reading a cgroup.procs or listing a directory. Stops at
 * the first that is busy (a process in it, a sub-cgroup) and says so. The freezer's goes last: as
 * long as anything is left, reclaim_strays needs it. */
static bool remove_empty_leaves(const struct fsrun_cgroup *cg) {
  const char *freezer = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, "freezer");
  for (size_t i = 0; cg->mode != CGROUP_MODE_UNIFIED && i < cg->n_v1; i++)
    if (cg->v1[i].mountpoint != freezer && !rmdir_gone(cg->v1[i].mountpoint, cg->path))
      return false;
  if (cg->unified_mount != NULL && !rmdir_gone(cg->unified_mount, cg->path))
    return false;
  return freezer == NULL || rmdir_gone(freezer, cg->path);
}

bool cgroup_remove_if_empty(const struct fsrun_cgroup *cg) {
  return !cgroup_systemd_may_be_scope(cg) && remove_empty_leaves(cg);
}

int cgroup_destroy(const struct fsrun_cgroup *cg, fsrun_error_t *err) {
  cleanup_error fsrun_error_t kerr = NULL;
  long waited = 0, step = 1;
  bool killed = false;
  int ret;

  /* a systemd scope is stopped rather than removed (one opened from the state too: an rmdir of
   * its directory left the unit active, systemd.bats in the VM) */
  if (cgroup_remove_if_empty(cg))
    return 0;
  /* cgroup_pids lists the freezer cgroup's processes: one moved out of it must be there too */
  reclaim_strays(cg);

  for (;;) {
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    ret = cgroup_pids(cg, &pids, &n, err);
    if (ret < 0)
      return ret;
    if (n == 0)
      break;
    /* Only kill when something is left: on v1 the freeze/thaw around the kill flips a kernel
     * static key and costs milliseconds, which the common case (the init has exited) never needs.
     */
    if (!killed) {
      killed = true;
      if (cgroup_kill_all(cg, SIGKILL, &kerr) < 0) {
        log_debug("destroy: kill: %s", kerr->msg);
        fsrun_error_release(&kerr);
      }
      continue;
    }
    if (waited >= DESTROY_TIMEOUT_MS)
      return fsrun_error_make(err, EBUSY, "%zu process(es) still in the cgroup %s after SIGKILL", n,
                              cg->path);
    /* new forks may have escaped a signal sent without freezing: repeat it now and then */
    if (waited / 500 != (waited + step) / 500 && cgroup_kill_all(cg, SIGKILL, &kerr) < 0)
      fsrun_error_release(&kerr);
    cgroup_sleep_ms(step);
    waited += step;
    if (step < 50)
      step *= 2;
  }

  /* empty now: a systemd scope is stopped (systemd removes its directory) */
  cgroup_systemd_stop(cg);
  for (size_t i = 0; cg->mode != CGROUP_MODE_UNIFIED && i < cg->n_v1; i++) {
    cleanup_free char *dir = cgroup_join(cg->v1[i].mountpoint, cg->path);
    ret = remove_cgroup_tree(dir, err);
    if (ret < 0)
      return ret;
  }
  if (cg->unified_mount != NULL) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    ret = remove_cgroup_tree(dir, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int cgroup_get_stats(const struct fsrun_cgroup *cg, cgroup_stats *s, fsrun_error_t *err) {
  memset(s, 0, sizeof(*s));
  if (cg->mode == CGROUP_MODE_UNIFIED) {
    cleanup_free char *dir = cgroup_join(cg->unified_mount, cg->path);
    return cgroup_v2_stats(dir, s, err);
  }
  return cgroup_v1_stats(cg, s, err);
}

void cgroup_stats_clear(cgroup_stats *s) {
  oci_map_free(&s->memory_raw);
  memset(s, 0, sizeof(*s));
}

/* --- "key value" stat files ---------------------------------------------------------------- */

bool cgroup_stat_lookup(const char *text, const char *key, uint64_t *value) {
  size_t kl = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, kl) == 0 && l[kl] == ' ') {
      *value = strtoull(l + kl + 1, NULL, 10);
      return true;
    }
  }
  return false;
}

void cgroup_stat_to_map(const char *text, oci_map *m) {
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    size_t kl = strcspn(l, " \n"), vl;
    cleanup_free char *k = NULL, *v = NULL;
    if (l[kl] != ' ')
      continue;
    vl = strcspn(l + kl + 1, "\n");
    k = strndup(l, kl);
    v = strndup(l + kl + 1, vl);
    if (k == NULL || v == NULL)
      abort();
    oci_map_set(m, k, v);
  }
}
