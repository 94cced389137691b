/* Two counters `fsrun sandbox` reads from a container's cgroup: the CPU time its processes used
 * (the whole command's CPU budget) and how many of them the OOM killer killed under the memory
 * limit. */
#include "cgroup-internal.h"

#include <string.h>

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

bool cgroup_cpu_usage_ns(const struct fsrun_cgroup *cg, uint64_t *ns) {
  cleanup_free char *v1 = v1_dir(cg, "cpuacct");
  cleanup_free char *v2 = NULL;
  uint64_t usec;
  if (v1 != NULL)
    return cgroup_read_u64(v1, "cpuacct.usage", 0, ns);
  v2 = unified_dir(cg);
  if (!read_keyed(v2, "cpu.stat", "usage_usec", &usec))
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
