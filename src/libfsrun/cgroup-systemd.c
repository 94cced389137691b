/* --systemd-cgroup: linux.cgroupsPath is "slice:prefix:name", as podman and containerd write it
 * for runc's systemd driver.
 *
 * fsrun maps that form onto the cgroupfs path systemd itself would use
 * (/system.slice/libpod-ID.scope, /machine.slice/machine-x.slice/...) and creates the directories
 * directly, exactly like the cgroupfs driver. D-Bus is not used: this is the right thing when
 * systemd is not running (this machine, the test VM, most containers), where there is no one to
 * ask. When systemd does run, fsrun still does not ask it for a transient scope (no
 * StartTransientUnit call yet); it logs that systemd does not know about the cgroup. */
#include "cgroup-internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t l = strlen(s), sl = strlen(suffix);
  return l >= sl && strcmp(s + l - sl, suffix) == 0;
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

int cgroup_systemd_path(const char *spec, const char *id, char **out, fsrun_error_t *err) {
  cleanup_free char *copy = NULL, *slice_path = NULL, *unit = NULL;
  char *slice, *prefix, *name, *c1, *c2;
  int ret;

  *out = NULL;
  if (access("/run/systemd/system", F_OK) == 0)
    log_warning("systemd is running, but fsrun creates the cgroup itself: systemd is not told "
                "about the scope (no D-Bus StartTransientUnit)");
  if (spec == NULL || spec[0] == '\0') {
    if (id == NULL || id[0] == '\0' || strchr(id, '/') || strchr(id, ':'))
      return fsrun_error_make(err, EINVAL, "container id `%s` cannot name a systemd scope",
                              id ? id : "");
    copy = xasprintf("system.slice:fsrun:%s", id);
  } else {
    copy = xstrdup(spec);
  }
  c1 = strchr(copy, ':');
  c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL)
    return fsrun_error_make(err, EINVAL,
                            "linux.cgroupsPath: `%s`: expected `slice:prefix:name` with "
                            "--systemd-cgroup",
                            spec);
  *c1 = *c2 = '\0';
  slice = copy;
  prefix = c1 + 1;
  name = c2 + 1;
  if (name[0] == '\0' || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
      strchr(prefix, '/'))
    return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s`: invalid name or prefix", spec);

  /* a name that is a slice is a cgroup of its own, at the place its name gives it */
  if (ends_with(name, ".slice")) {
    ret = cgroup_systemd_expand_slice(name, &slice_path, err);
    if (ret < 0)
      return ret;
    if (slice_path[0] == '\0')
      return fsrun_error_make(err, EINVAL, "linux.cgroupsPath: `%s` is the root slice", spec);
    *out = steal_ptr(&slice_path);
    return 0;
  }
  ret = cgroup_systemd_expand_slice(slice[0] ? slice : "system.slice", &slice_path, err);
  if (ret < 0)
    return ret;
  unit = prefix[0] ? xasprintf("%s-%s.scope", prefix, name) : xasprintf("%s.scope", name);
  *out = xasprintf("%s/%s", slice_path, unit);
  return 0;
}
