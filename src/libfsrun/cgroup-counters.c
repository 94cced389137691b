/* Two counters `fsrun sandbox` reads from a container's cgroup: the CPU time its processes used
 * (the whole command's CPU budget) and how many of them the OOM killer killed under the memory
 * limit. */
#include "cgroup-internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "utils.h"

/* The v2 directory of the container, or NULL. Caller frees. */
static char *unified_dir(const struct fsrun_cgroup *cg) {
  return cg->unified_dir ? cgroup_join(cg->unified_mount, cg->path) : NULL;
}

/* The directory of controller's v1 hierarchy, or NULL. Caller frees. */
static char *v1_dir(const struct fsrun_cgroup *cg, const char *controller) {
  const char *mount = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, controller);
  return mount ? cgroup_join(mount, cg->path) : NULL;
}

static bool read_keyed(const char *dir, const char *file, const char *key, uint64_t *v) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t err = NULL;
  if (dir == NULL || cgroup_read(dir, file, &text, &err) < 0)
    return false;
  return cgroup_stat_lookup(text, key, v);
}

int cgroup_cpu_usage_open(const struct fsrun_cgroup *cg, bool *v2) {
  cleanup_free char *v1 = v1_dir(cg, "cpuacct");
  cleanup_free char *unified = v1 == NULL ? unified_dir(cg) : NULL;
  cleanup_free char *path = NULL;
  *v2 = v1 == NULL;
  if (v1 == NULL && unified == NULL)
    return -1;
  path = v1 != NULL ? xasprintf("%s/cpuacct.usage", v1) : xasprintf("%s/cpu.stat", unified);
  return open(path, O_RDONLY | O_CLOEXEC);
}

bool cgroup_cpu_usage_read(int fd, bool v2, uint64_t *ns) {
  char text[4096];
  ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  uint64_t usec;
  if (n <= 0)
    return false;
  text[n] = '\0';
  if (!v2) {
    char *end = NULL;
    *ns = strtoull(text, &end, 10);
    return end != text;
  }
  if (!cgroup_stat_lookup(text, "usage_usec", &usec))
    return false;
  *ns = usec * 1000;
  return true;
}

bool cgroup_oom_kills(const struct fsrun_cgroup *cg, uint64_t *count) {
  cleanup_free char *v1 = v1_dir(cg, "memory");
  cleanup_free char *v2 = NULL;
  /* v1: memory.oom_control's oom_kill (Linux 4.13); v2: memory.events, which counts the subtree */
  if (v1 != NULL)
    return read_keyed(v1, "memory.oom_control", "oom_kill", count);
  v2 = unified_dir(cg);
  return read_keyed(v2, "memory.events", "oom_kill", count);
}
