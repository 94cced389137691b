/* cgroup v2 writers: one directory, the unified file formats, devices through ebpf.c. */
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define FREEZE_TIMEOUT_MS  5000
#define CPU_DEFAULT_PERIOD 100000

/* --- conversions and formatting (pure) ------------------------------------------------------ */

/* cpu.shares spans [2, 2^18] with a default of 1024, cpu.weight [1, 10^4] with a default of 100.
 * runc (since 1.3.2, opencontainers/cgroups) and crun (since 1.23) map one onto the other with a
 * curve through the three points (2, 1), (1024, 100) and (262144, 10000), quadratic in log2:
 *   weight = ceil(10 ^ ((L^2 + 125 L) / 612 - 7/34)),  L = log2(shares)
 * so a default v1 container gets the default v2 weight. The older linear formula
 * 1 + (shares - 2) * 9999 / 262142 gave 1024 -> 39; we follow the current runtimes. */
uint64_t cgroup_v2_cpu_weight(uint64_t shares) {
  double l, exponent;
  if (shares == 0)
    return 0;
  if (shares <= 2)
    return 1;
  if (shares >= 262144)
    return 10000;
  l = log2((double)shares);
  exponent = (l * l + 125.0 * l) / 612.0 - 7.0 / 34.0;
  return (uint64_t)ceil(pow(10.0, exponent));
}

/* blkio weight [10, 1000] onto io.weight [1, 10000], linearly, as runc does */
uint64_t cgroup_v2_io_weight(uint64_t blkio_weight) {
  if (blkio_weight == 0)
    return 0;
  if (blkio_weight < 10)
    blkio_weight = 10;
  if (blkio_weight > 1000)
    blkio_weight = 1000;
  return 1 + (blkio_weight - 10) * 9999 / 990;
}

int cgroup_v2_swap_max(const oci_memory *m, char **out, fsrun_error_t *err) {
  *out = NULL;
  /* 0 is "not set" in runtime configs (docker sends it for "no swap setting") */
  if (!m->has_swap || m->swap == 0)
    return 0;
  if (m->swap < 0) {
    *out = xstrdup("max");
    return 0;
  }
  /* the spec's swap is memory+swap; cgroup v2 limits swap on its own */
  if (!m->has_limit || m->limit < 0)
    return fsrun_error_make(err, EINVAL,
                            "linux.resources.memory.swap: a swap limit needs a memory limit on "
                            "cgroup v2 (swap is memory+swap)");
  if (m->swap < m->limit)
    return fsrun_error_make(err, EINVAL,
                            "linux.resources.memory.swap: %lld is below the memory limit %lld "
                            "(swap is memory+swap)",
                            (long long)m->swap, (long long)m->limit);
  *out = xasprintf("%lld", (long long)(m->swap - m->limit));
  return 0;
}

char *cgroup_v2_cpu_max(const oci_cpu *c, const char *current) {
  char cur_quota[32] = "max";
  unsigned long long period = CPU_DEFAULT_PERIOD, cur_period = 0;
  /* quota 0 is "not set", not "no limit" (-1): Docker's `update --memory` sends quota and period
   * 0 for the CPU limit it leaves alone */
  bool has_quota = c->has_quota && c->quota != 0;
  if (!has_quota && !c->has_period)
    return NULL;
  if (current != NULL && sscanf(current, "%31s %llu", cur_quota, &cur_period) == 2 && cur_period)
    period = cur_period;
  if (c->has_period && c->period > 0)
    period = c->period;
  else if (!has_quota)
    return NULL;
  if (has_quota)
    return c->quota > 0 ? xasprintf("%lld %llu", (long long)c->quota, period)
                        : xasprintf("max %llu", period);
  return xasprintf("%s %llu", cur_quota, period);
}

typedef struct {
  int64_t major, minor;
  char *keys[4]; /* rbps wbps riops wiops */
} io_max_entry;

int cgroup_v2_io_max_lines(const oci_block_io *b, char ***lines, size_t *n) {
  static const char *const names[4] = {"rbps", "wbps", "riops", "wiops"};
  const oci_throttle_device *lists[4] = {b->throttle_read_bps, b->throttle_write_bps,
                                         b->throttle_read_iops, b->throttle_write_iops};
  size_t lens[4] = {b->n_throttle_read_bps, b->n_throttle_write_bps, b->n_throttle_read_iops,
                    b->n_throttle_write_iops};
  size_t total = lens[0] + lens[1] + lens[2] + lens[3], count = 0;
  io_max_entry *e = xmalloc0((total ? total : 1) * sizeof(*e));
  char **out;

  /* one line per device, in the order devices first appear */
  for (size_t k = 0; k < 4; k++) {
    for (size_t i = 0; i < lens[k]; i++) {
      const oci_throttle_device *t = &lists[k][i];
      size_t j;
      for (j = 0; j < count; j++)
        if (e[j].major == t->major && e[j].minor == t->minor)
          break;
      if (j == count) {
        e[count].major = t->major;
        e[count].minor = t->minor;
        count++;
      }
      free(e[j].keys[k]);
      e[j].keys[k] = t->rate == 0 ? xasprintf("%s=max", names[k])
                                  : xasprintf("%s=%llu", names[k], (unsigned long long)t->rate);
    }
  }
  out = xmalloc0((count + 1) * sizeof(char *));
  for (size_t j = 0; j < count; j++) {
    char *line = xasprintf("%lld:%lld", (long long)e[j].major, (long long)e[j].minor);
    for (size_t k = 0; k < 4; k++) {
      if (e[j].keys[k]) {
        char *l2 = xasprintf("%s %s", line, e[j].keys[k]);
        free(line);
        line = l2;
        free(e[j].keys[k]);
      }
    }
    out[j] = line;
  }
  free(e);
  *lines = out;
  *n = count;
  return 0;
}

char *cgroup_hugetlb_file(const char *page_size, bool v2) {
  if (page_size == NULL || page_size[0] == '\0')
    return NULL;
  for (const char *p = page_size; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
      return NULL;
  return xasprintf(v2 ? "hugetlb.%s.max" : "hugetlb.%s.limit_in_bytes", page_size);
}

/* the cgroup's own files a container may set: limits on its subtree. The others move processes
 * in (procs, threads), kill them, freeze them behind fsrun's state, or reshape the tree. */
static const char *const SETTABLE_CORE_FILES[] = {"cgroup.max.depth", "cgroup.max.descendants"};

const char *cgroup_unified_key_refusal(const char *key) {
  if (key == NULL || key[0] == '.' || strchr(key, '/') != NULL || strchr(key, '.') == NULL)
    return "is not a cgroup file name like memory.max";
  if (strncmp(key, "cgroup.", strlen("cgroup.")) != 0)
    return NULL;
  for (size_t i = 0; i < sizeof(SETTABLE_CORE_FILES) / sizeof(SETTABLE_CORE_FILES[0]); i++)
    if (strcmp(key, SETTABLE_CORE_FILES[i]) == 0)
      return NULL;
  return "is a core file of the cgroup (its processes, kill, freeze, controllers, type): of "
         "cgroup.*, only cgroup.max.depth and cgroup.max.descendants may be set";
}

int cgroup_unified_keys_check(const oci_map *unified, fsrun_error_t *err) {
  for (size_t i = 0; i < unified->len; i++) {
    const char *why = cgroup_unified_key_refusal(unified->keys[i]);
    if (why != NULL)
      return fsrun_error_make(err, EINVAL, "linux.resources.unified: `%s` %s",
                              unified->keys[i] ? unified->keys[i] : "", why);
  }
  return 0;
}

/* --- controllers in the tree ------------------------------------------------------------------ */

static int enable_in(const char *dir, const char *const *want, fsrun_error_t *err) {
  cleanup_free char *available = NULL, *enabled = NULL, *request = xstrdup("");
  char *save = NULL;
  int ret = cgroup_read(dir, "cgroup.controllers", &available, err);
  if (ret < 0)
    return ret;
  ret = cgroup_read(dir, "cgroup.subtree_control", &enabled, err);
  if (ret < 0)
    return ret;
  for (char *c = strtok_r(available, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
    bool wanted = want == NULL;
    for (size_t i = 0; want && want[i]; i++)
      if (strcmp(want[i], c) == 0)
        wanted = true;
    if (wanted && !cgroup_word_in_list(enabled, c, " ")) {
      char *n = xasprintf("%s%s+%s", request, request[0] ? " " : "", c);
      free(request);
      request = n;
    }
  }
  if (request[0] == '\0')
    return 0;
  if (cgroup_write(dir, "cgroup.subtree_control", request, err) == 0)
    return 0;
  fsrun_error_release(err);
  /* one refused controller (e.g. a threaded subtree, cpuset without cpus) must not keep the others
   * off: one at a time, and the writers say later what is missing */
  save = NULL;
  for (char *c = strtok_r(request, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
    cleanup_error fsrun_error_t one = NULL;
    if (cgroup_write(dir, "cgroup.subtree_control", c, &one) < 0)
      log_debug("cgroup: cannot enable %s in %s: %s", c + 1, dir, one->msg);
  }
  return 0;
}

int cgroup_v2_enable_controllers(const char *mount, const char *path, const char *const *want,
                                 fsrun_error_t *err) {
  cleanup_free char *copy = xstrdup(path);
  /* every ancestor of path: "" (the root), "/a", "/a/b", ... but not path itself */
  for (char *s = copy;; s++) {
    if (*s == '/' || *s == '\0') {
      char saved = *s;
      cleanup_free char *dir = NULL;
      if (saved == '\0')
        break;
      *s = '\0';
      dir = cgroup_join(mount, copy);
      *s = saved;
      {
        int ret = enable_in(dir, want, err);
        if (ret < 0)
          return ret;
      }
    }
  }
  return 0;
}

/* --- writers ---------------------------------------------------------------------------------- */

int cgroup_v2_apply_memory(const char *dir, const oci_memory *m, fsrun_error_t *err) {
  cleanup_free char *swap = NULL;
  int ret = cgroup_v2_swap_max(m, &swap, err);
  if (ret < 0)
    return ret;
  /* limit and reservation 0 are "not set" (Docker sends 0 for each limit it leaves alone; a
   * memory.max of 0 would OOM-kill the container) */
  if (m->has_limit && m->limit != 0) {
    cleanup_free char *v = cgroup_limit_string(m->limit);
    ret = cgroup_write_field(dir, "memory.max", v, "linux.resources.memory.limit", err);
    if (ret < 0)
      return ret;
  }
  if (swap) {
    if (cgroup_file_exists(dir, "memory.swap.max")) {
      ret = cgroup_write_field(dir, "memory.swap.max", swap, "linux.resources.memory.swap", err);
      if (ret < 0)
        return ret;
    } else {
      log_warning("linux.resources.memory.swap: swap accounting is off on this host, ignored");
    }
  }
  if (m->has_reservation && m->reservation != 0) {
    cleanup_free char *v = cgroup_limit_string(m->reservation);
    ret = cgroup_write_field(dir, "memory.low", v, "linux.resources.memory.reservation", err);
    if (ret < 0)
      return ret;
  }
  if (m->has_swappiness)
    log_debug("linux.resources.memory.swappiness: no per-cgroup swappiness on cgroup v2, ignored");
  if (m->has_disable_oom_killer && m->disable_oom_killer)
    log_warning("linux.resources.memory.disableOOMKiller: cgroup v2 cannot disable the OOM "
                "killer, ignored");
  if (m->has_kernel || m->has_kernel_tcp)
    log_debug("linux.resources.memory.kernel/kernelTCP: no separate kernel limit on cgroup v2, "
              "ignored");
  return 0;
}

int cgroup_v2_apply_cpu(const char *dir, const oci_cpu *c, bool update, fsrun_error_t *err) {
  int ret;
  if (c->has_shares && c->shares != 0) {
    ret = cgroup_write_fieldf(dir, "cpu.weight", "linux.resources.cpu.shares", err, "%llu",
                              (unsigned long long)cgroup_v2_cpu_weight(c->shares));
    if (ret < 0)
      return ret;
  }
  if (c->has_quota || c->has_period) {
    cleanup_free char *current = NULL, *v = NULL;
    cleanup_error fsrun_error_t rerr = NULL;
    if (update && cgroup_read(dir, "cpu.max", &current, &rerr) < 0)
      current = NULL;
    v = cgroup_v2_cpu_max(c, current);
    ret = v == NULL ? 0 : cgroup_write_field(dir, "cpu.max", v, "linux.resources.cpu.quota", err);
    if (ret < 0)
      return ret;
  }
  if (c->has_burst) {
    ret = cgroup_write_fieldf(dir, "cpu.max.burst", "linux.resources.cpu.burst", err, "%llu",
                              (unsigned long long)c->burst);
    if (ret < 0)
      return ret;
  }
  if (c->has_idle) {
    ret = cgroup_write_fieldf(dir, "cpu.idle", "linux.resources.cpu.idle", err, "%lld",
                              (long long)c->idle);
    if (ret < 0)
      return ret;
  }
  if ((c->has_realtime_runtime && c->realtime_runtime != 0) ||
      (c->has_realtime_period && c->realtime_period != 0))
    return fsrun_error_make(err, ENOTSUP,
                            "linux.resources.cpu.realtimeRuntime/realtimePeriod: cgroup v2 has no "
                            "real-time CPU budget");
  return 0;
}

int cgroup_v2_apply_io(const char *dir, const oci_block_io *b, fsrun_error_t *err) {
  /* BFQ keeps the v1 scale [1, 1000] in io.bfq.weight; io.weight is [1, 10000] */
  bool io_weight = cgroup_file_exists(dir, "io.weight");
  bool bfq = !io_weight && cgroup_file_exists(dir, "io.bfq.weight");
  char **lines = NULL;
  size_t n = 0;
  int ret = 0;

  if (b->has_weight && b->weight != 0) {
    ret = cgroup_write_fieldf(
        dir, bfq ? "io.bfq.weight" : "io.weight", "linux.resources.blockIO.weight", err, "%llu",
        (unsigned long long)(bfq ? b->weight : cgroup_v2_io_weight(b->weight)));
    if (ret < 0)
      return ret;
  }
  if (b->has_leaf_weight)
    log_debug("linux.resources.blockIO.leafWeight: no leaf weight on cgroup v2, ignored");
  for (size_t i = 0; i < b->n_weight_device; i++) {
    const oci_weight_device *w = &b->weight_device[i];
    cleanup_free char *field = NULL;
    if (!w->has_weight)
      continue;
    field = xasprintf("linux.resources.blockIO.weightDevice[%zu]", i);
    ret =
        cgroup_write_fieldf(dir, bfq ? "io.bfq.weight" : "io.weight", field, err, "%lld:%lld %llu",
                            (long long)w->major, (long long)w->minor,
                            (unsigned long long)(bfq ? w->weight : cgroup_v2_io_weight(w->weight)));
    if (ret < 0)
      return ret;
  }
  cgroup_v2_io_max_lines(b, &lines, &n);
  for (size_t i = 0; i < n; i++) {
    if (ret == 0)
      ret = cgroup_write_field(dir, "io.max", lines[i], "linux.resources.blockIO.throttle", err);
    free(lines[i]);
  }
  free(lines);
  return ret;
}

int cgroup_v2_apply_unified(const char *dir, const oci_map *unified, fsrun_error_t *err) {
  int ret = cgroup_unified_keys_check(unified, err);
  if (ret < 0)
    return ret;
  for (size_t i = 0; i < unified->len; i++) {
    cleanup_free char *field = NULL;
    field = xasprintf("linux.resources.unified.%s", unified->keys[i]);
    ret = cgroup_write_field(dir, unified->keys[i], unified->values[i] ? unified->values[i] : "",
                             field, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int cgroup_v2_apply_devices(const char *dir, const device_rule *rules, size_t n,
                            fsrun_error_t *err) {
  cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s`", dir);
  return ebpf_device_filter_apply(fd, rules, n, err);
}

/* --- freezer --------------------------------------------------------------------------------- */

int cgroup_v2_freeze(const char *dir, bool frozen, fsrun_error_t *err) {
  uint64_t state = 0;
  long waited = 0, step = 1;
  int ret = cgroup_write(dir, "cgroup.freeze", frozen ? "1" : "0", err);
  if (ret < 0)
    return ret;
  /* the write only asks; cgroup.events says when every task has stopped */
  for (;;) {
    cleanup_free char *events = NULL;
    ret = cgroup_read(dir, "cgroup.events", &events, err);
    if (ret < 0)
      return ret;
    if (cgroup_stat_lookup(events, "frozen", &state) && (state == 1) == frozen)
      return 0;
    if (waited >= FREEZE_TIMEOUT_MS) {
      if (frozen)
        cgroup_write(dir, "cgroup.freeze", "0", NULL);
      return fsrun_error_make(err, EBUSY, "%s did not become %s within %d ms", dir,
                              frozen ? "frozen" : "thawed", FREEZE_TIMEOUT_MS);
    }
    cgroup_sleep_ms(step);
    waited += step;
    if (step < 50)
      step *= 2;
  }
}

int cgroup_v2_is_frozen(const char *dir, bool *frozen, fsrun_error_t *err) {
  cleanup_free char *v = NULL;
  int ret;
  *frozen = false;
  if (!cgroup_file_exists(dir, "cgroup.freeze"))
    return 0;
  ret = cgroup_read(dir, "cgroup.freeze", &v, err);
  if (ret < 0)
    return ret;
  *frozen = strcmp(v, "1") == 0;
  return 0;
}

/* --- stats ---------------------------------------------------------------------------------- */

int cgroup_v2_stats(const char *dir, cgroup_stats *s, fsrun_error_t *err) {
  cleanup_free char *cpu = NULL, *memstat = NULL, *events = NULL;
  cleanup_error fsrun_error_t e = NULL;
  uint64_t v;

  if (access(dir, F_OK) < 0)
    return fsrun_error_errno(err, "cgroup `%s`", dir);
  if (cgroup_read(dir, "cpu.stat", &cpu, &e) == 0) {
    if (cgroup_stat_lookup(cpu, "usage_usec", &v))
      s->cpu_usage_total = v * 1000;
    if (cgroup_stat_lookup(cpu, "user_usec", &v))
      s->cpu_usage_user = v * 1000;
    if (cgroup_stat_lookup(cpu, "system_usec", &v))
      s->cpu_usage_kernel = v * 1000;
    cgroup_stat_lookup(cpu, "nr_periods", &s->cpu_periods);
    cgroup_stat_lookup(cpu, "nr_throttled", &s->cpu_throttled_periods);
    if (cgroup_stat_lookup(cpu, "throttled_usec", &v))
      s->cpu_throttled_time = v * 1000;
  }
  fsrun_error_release(&e);
  /* "max" is UINT64_MAX for byte limits and 0 for pids (cgroup_stats says so) */
  cgroup_read_u64(dir, "memory.current", UINT64_MAX, &s->memory_usage);
  cgroup_read_u64(dir, "memory.peak", UINT64_MAX, &s->memory_max_usage);
  cgroup_read_u64(dir, "memory.max", UINT64_MAX, &s->memory_limit);
  cgroup_read_u64(dir, "memory.swap.current", UINT64_MAX, &s->swap_usage);
  cgroup_read_u64(dir, "memory.swap.max", UINT64_MAX, &s->swap_limit);
  if (cgroup_read(dir, "memory.events", &events, &e) == 0)
    cgroup_stat_lookup(events, "max", &s->memory_failcnt);
  fsrun_error_release(&e);
  if (cgroup_read(dir, "memory.stat", &memstat, &e) == 0) {
    cgroup_stat_lookup(memstat, "file", &s->memory_cache);
    cgroup_stat_to_map(memstat, &s->memory_raw);
  }
  fsrun_error_release(&e);
  cgroup_read_u64(dir, "pids.current", 0, &s->pids_current);
  cgroup_read_u64(dir, "pids.max", 0, &s->pids_limit);
  return 0;
}
