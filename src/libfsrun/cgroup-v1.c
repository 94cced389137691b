/* cgroup v1 writers: one directory per controller hierarchy, values in the v1 file formats. */
#include "cgroup-internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define FREEZE_TIMEOUT_MS 5000

/* --- memory --------------------------------------------------------------------------------- */

#define FIELD_LIMIT "linux.resources.memory.limit"
#define FIELD_SWAP  "linux.resources.memory.swap"

/* -1 (unlimited) sorts above every limit */
static uint64_t limit_order(int64_t v) {
  return v < 0 ? UINT64_MAX : (uint64_t)v;
}

/* The kernel's "no limit" is the largest page multiple, not a fixed number. */
static bool is_unlimited(uint64_t v) {
  long page = sysconf(_SC_PAGESIZE);
  return v > (uint64_t)INT64_MAX - (uint64_t)(page > 0 ? page : 4096);
}

static int write_limit(const char *dir, int64_t limit, fsrun_error_t *err) {
  return cgroup_write_fieldf(dir, "memory.limit_in_bytes", FIELD_LIMIT, err, "%lld",
                             (long long)(limit < 0 ? -1 : limit));
}

static int write_memsw(const char *dir, int64_t swap, fsrun_error_t *err) {
  return cgroup_write_fieldf(dir, "memory.memsw.limit_in_bytes", FIELD_SWAP, err, "%lld",
                             (long long)(swap < 0 ? -1 : swap));
}

/* memory.memsw.limit_in_bytes (memory+swap) must stay >= memory.limit_in_bytes after each write,
 * or the kernel refuses it with EINVAL: when the limit grows memsw goes first, when it shrinks
 * the limit goes first. */
static int write_limit_and_memsw(const char *dir, int64_t limit, int64_t swap, uint64_t current,
                                 fsrun_error_t *err) {
  int ret;
  if (limit_order(limit) > current) {
    ret = write_memsw(dir, swap, err);
    return ret < 0 ? ret : write_limit(dir, limit, err);
  }
  ret = write_limit(dir, limit, err);
  return ret < 0 ? ret : write_memsw(dir, swap, err);
}

/* An update of the limit alone. A container whose memsw equals its limit has no swap: it keeps
 * none, so memsw moves with the limit. Otherwise memsw stays, and must stay above the limit. */
static int update_limit_only(const char *dir, int64_t limit, fsrun_error_t *err) {
  uint64_t current = 0, memsw = 0;
  int ret;
  if (!cgroup_file_exists(dir, "memory.memsw.limit_in_bytes") ||
      !cgroup_read_u64(dir, "memory.limit_in_bytes", 0, &current) ||
      !cgroup_read_u64(dir, "memory.memsw.limit_in_bytes", 0, &memsw))
    return write_limit(dir, limit, err);
  if (memsw == current && !is_unlimited(current))
    return write_limit_and_memsw(dir, limit, limit, current, err);
  ret = write_limit(dir, limit, err);
  if (ret == -EINVAL && err != NULL && *err != NULL && limit_order(limit) > memsw)
    return fsrun_error_take(err, EINVAL,
                            xasprintf("%s (the memory+swap limit is %llu: raise it too, with "
                                      "linux.resources.memory.swap or --memory-swap)",
                                      (*err)->msg, (unsigned long long)memsw));
  return ret;
}

int cgroup_v1_apply_memory(const char *dir, const oci_memory *m, bool update, fsrun_error_t *err) {
  bool swap = false;
  /* 0 is "not set" for limit and reservation, as for swap: Docker sends 0 for every limit it
   * leaves alone (`docker update --cpus` carries "limit": 0), and writing 0 would try to shrink
   * the cgroup to nothing (EBUSY) or make it the first to be reclaimed */
  bool limit = m->has_limit && m->limit != 0;
  int ret = 0;

  if (m->has_swap && m->swap != 0) {
    if (cgroup_file_exists(dir, "memory.memsw.limit_in_bytes")) {
      swap = true;
      if (limit && m->swap >= 0 && m->limit >= 0 && m->swap < m->limit)
        return fsrun_error_make(err, EINVAL,
                                FIELD_SWAP ": %lld is below the memory limit %lld "
                                           "(swap is memory+swap on cgroup v1)",
                                (long long)m->swap, (long long)m->limit);
    } else {
      log_warning(FIELD_SWAP ": swap accounting is off on this host, ignored");
    }
  }
  if (limit && swap) {
    cleanup_free char *current = NULL;
    ret = cgroup_read(dir, "memory.limit_in_bytes", &current, err);
    if (ret < 0)
      return fsrun_error_wrap(err, FIELD_LIMIT);
    ret = write_limit_and_memsw(dir, m->limit, m->swap, strtoull(current, NULL, 10), err);
  } else if (limit) {
    ret = update ? update_limit_only(dir, m->limit, err) : write_limit(dir, m->limit, err);
  } else if (swap) {
    ret = write_memsw(dir, m->swap, err);
  }
  if (ret < 0)
    return ret;

  if (m->has_reservation && m->reservation != 0) {
    ret =
        cgroup_write_fieldf(dir, "memory.soft_limit_in_bytes", "linux.resources.memory.reservation",
                            err, "%lld", (long long)(m->reservation < 0 ? -1 : m->reservation));
    if (ret < 0)
      return ret;
  }
  if (m->has_kernel)
    log_debug("linux.resources.memory.kernel: kernel memory limits are deprecated by the kernel, "
              "ignored");
  if (m->has_kernel_tcp) {
    if (cgroup_file_exists(dir, "memory.kmem.tcp.limit_in_bytes")) {
      ret = cgroup_write_fieldf(dir, "memory.kmem.tcp.limit_in_bytes",
                                "linux.resources.memory.kernelTCP", err, "%lld",
                                (long long)(m->kernel_tcp < 0 ? -1 : m->kernel_tcp));
      if (ret < 0)
        return ret;
    } else {
      log_debug("linux.resources.memory.kernelTCP: not supported by this kernel, ignored");
    }
  }
  if (m->has_swappiness) {
    if (m->swappiness > 100)
      return fsrun_error_make(err, EINVAL,
                              "linux.resources.memory.swappiness: %llu is not in [0, 100]",
                              (unsigned long long)m->swappiness);
    ret = cgroup_write_fieldf(dir, "memory.swappiness", "linux.resources.memory.swappiness", err,
                              "%llu", (unsigned long long)m->swappiness);
    if (ret < 0)
      return ret;
  }
  if (m->has_disable_oom_killer && (m->disable_oom_killer || update)) {
    ret = cgroup_write_field(dir, "memory.oom_control", m->disable_oom_killer ? "1" : "0",
                             "linux.resources.memory.disableOOMKiller", err);
    if (ret < 0)
      return ret;
  }
  if (m->has_use_hierarchy)
    log_debug("linux.resources.memory.useHierarchy: always on in current kernels, ignored");
  return 0;
}

/* --- cpu, cpuset ------------------------------------------------------------------------------ */

static long long read_rt_runtime(const char *dir) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *text = NULL;
  if (cgroup_read(dir, "cpu.rt_runtime_us", &text, &err) < 0)
    return 0;
  return strtoll(text, NULL, 10);
}

/* The rt_runtime_us of parent's children other than the one named skip. */
static long long siblings_rt_runtime(const char *parent, const char *skip) {
  cleanup_dir DIR *d = opendir(parent);
  struct dirent *de;
  long long sum = 0;
  while (d != NULL && (de = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    long long v;
    if (de->d_type != DT_DIR || de->d_name[0] == '.' || strcmp(de->d_name, skip) == 0)
      continue;
    sub = xasprintf("%s/%s", parent, de->d_name);
    v = read_rt_runtime(sub);
    if (v > 0)
      sum += v;
  }
  return sum;
}

/* A cgroup's realtime runtime must fit in its parent's, which is 0 for a parent made without one
 * (/fsrun here): the ancestors below the hierarchy's root (which has release_agent, and the
 * system's budget) get what their children then need, as the child asks for it. */
static int grow_rt_budget(const char *dir, long long want, fsrun_error_t *err) {
  cleanup_free char *parent = xstrdup(dir);
  char *slash = strrchr(parent, '/');
  long long have, need;
  if (want <= 0 || slash == NULL || slash == parent)
    return 0;
  *slash = '\0';
  if (!cgroup_file_exists(parent, "cpu.rt_runtime_us") ||
      cgroup_file_exists(parent, "release_agent"))
    return 0;
  have = read_rt_runtime(parent);
  need = siblings_rt_runtime(parent, slash + 1) + want;
  if (have < 0 || have >= need)
    return 0;
  if (grow_rt_budget(parent, need, err) < 0)
    return fsrun_error_code(err);
  return cgroup_write_fieldf(parent, "cpu.rt_runtime_us", "linux.resources.cpu.realtimeRuntime",
                             err, "%lld", need);
}

int cgroup_v1_apply_cpu(const char *dir, const oci_cpu *c, fsrun_error_t *err) {
  int ret;
  /* shares, period and quota 0 are "not set" (Docker sends 0 for each one it leaves alone, at
   * create and update): the kernel would turn shares 0 into 2, refuse period 0, and quota 0 is
   * not "no limit" (that is -1) */
  if (c->has_shares && c->shares != 0) {
    ret = cgroup_write_fieldf(dir, "cpu.shares", "linux.resources.cpu.shares", err, "%llu",
                              (unsigned long long)c->shares);
    if (ret < 0)
      return ret;
  }
  /* the period first: a quota is checked against it */
  if (c->has_period && c->period != 0) {
    ret = cgroup_write_fieldf(dir, "cpu.cfs_period_us", "linux.resources.cpu.period", err, "%llu",
                              (unsigned long long)c->period);
    if (ret < 0)
      return ret;
  }
  if (c->has_quota && c->quota != 0) {
    ret = cgroup_write_fieldf(dir, "cpu.cfs_quota_us", "linux.resources.cpu.quota", err, "%lld",
                              (long long)(c->quota < 0 ? -1 : c->quota));
    if (ret < 0)
      return ret;
  }
  if (c->has_burst) {
    if (!cgroup_file_exists(dir, "cpu.cfs_burst_us"))
      return fsrun_error_make(
          err, ENOTSUP, "linux.resources.cpu.burst: `cpu.cfs_burst_us` does not exist in %s", dir);
    ret = cgroup_write_fieldf(dir, "cpu.cfs_burst_us", "linux.resources.cpu.burst", err, "%llu",
                              (unsigned long long)c->burst);
    if (ret < 0)
      return ret;
  }
  if (c->has_realtime_period || c->has_realtime_runtime) {
    cleanup_free char *period =
        c->has_realtime_period ? xasprintf("%llu", (unsigned long long)c->realtime_period) : NULL;
    cleanup_free char *runtime =
        c->has_realtime_runtime ? xasprintf("%lld", (long long)c->realtime_runtime) : NULL;
    if (period) {
      ret = cgroup_write_field(dir, "cpu.rt_period_us", period,
                               "linux.resources.cpu.realtimePeriod", err);
      /* a shorter period can be refused while the old runtime exceeds it: runtime first then */
      if (ret < 0 && runtime) {
        cleanup_error fsrun_error_t other = NULL;
        if (cgroup_write_field(dir, "cpu.rt_runtime_us", runtime,
                               "linux.resources.cpu.realtimeRuntime", &other) == 0 &&
            cgroup_write_field(dir, "cpu.rt_period_us", period,
                               "linux.resources.cpu.realtimePeriod", &other) == 0) {
          fsrun_error_release(err);
          runtime = NULL;
          ret = 0;
        }
      }
      if (ret < 0)
        return ret;
    }
    if (runtime && grow_rt_budget(dir, c->realtime_runtime, err) < 0)
      return fsrun_error_code(err);
    if (runtime) {
      ret = cgroup_write_field(dir, "cpu.rt_runtime_us", runtime,
                               "linux.resources.cpu.realtimeRuntime", err);
      if (ret < 0)
        return ret;
    }
  }
  if (c->has_idle) {
    if (!cgroup_file_exists(dir, "cpu.idle"))
      return fsrun_error_make(err, ENOTSUP,
                              "linux.resources.cpu.idle: `cpu.idle` does not exist in %s", dir);
    ret = cgroup_write_fieldf(dir, "cpu.idle", "linux.resources.cpu.idle", err, "%lld",
                              (long long)c->idle);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int cgroup_v1_cpuset_inherit(const char *dir, fsrun_error_t *err) {
  static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
  cleanup_free char *parent = xstrdup(dir);
  char *slash = strrchr(parent, '/');
  if (slash == NULL || slash == parent)
    return 0;
  *slash = '\0';
  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *own = NULL, *inherited = NULL;
    int ret = cgroup_read(dir, files[i], &own, err);
    if (ret < 0)
      return ret;
    if (own[0] != '\0')
      continue;
    ret = cgroup_read(parent, files[i], &inherited, err);
    if (ret < 0)
      return ret;
    if (inherited[0] == '\0')
      continue;
    ret = cgroup_write(dir, files[i], inherited, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* --- blkio, net ----------------------------------------------------------------------------- */

/* blkio.X, or blkio.bfq.X when only the BFQ files exist (no CFQ in current kernels) */
static const char *blkio_file(const char *dir, const char *plain, const char *bfq) {
  if (cgroup_file_exists(dir, plain))
    return plain;
  if (bfq && cgroup_file_exists(dir, bfq))
    return bfq;
  return NULL;
}

static int write_throttle(const char *dir, const char *file, const oci_throttle_device *t, size_t n,
                          const char *field, fsrun_error_t *err) {
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *f = xasprintf("%s[%zu]", field, i);
    int ret = cgroup_write_fieldf(dir, file, f, err, "%lld:%lld %llu", (long long)t[i].major,
                                  (long long)t[i].minor, (unsigned long long)t[i].rate);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int cgroup_v1_apply_blkio(const char *dir, const oci_block_io *b, fsrun_error_t *err) {
  int ret;
  /* weight 0 means "not set" (Docker always sends blockIO.weight, 0 by default), as in validate.c
   * and cgroup-v2.c; writing it would fail with ERANGE */
  if (b->has_weight && b->weight != 0) {
    const char *file = blkio_file(dir, "blkio.weight", "blkio.bfq.weight");
    if (file == NULL)
      return fsrun_error_make(err, ENOTSUP,
                              "linux.resources.blockIO.weight: neither `blkio.weight` nor "
                              "`blkio.bfq.weight` exists in %s",
                              dir);
    ret = cgroup_write_fieldf(dir, file, "linux.resources.blockIO.weight", err, "%llu",
                              (unsigned long long)b->weight);
    if (ret < 0)
      return ret;
  }
  if (b->has_leaf_weight && b->leaf_weight != 0) {
    if (!cgroup_file_exists(dir, "blkio.leaf_weight"))
      return fsrun_error_make(err, ENOTSUP,
                              "linux.resources.blockIO.leafWeight: `blkio.leaf_weight` does not "
                              "exist in %s",
                              dir);
    ret = cgroup_write_fieldf(dir, "blkio.leaf_weight", "linux.resources.blockIO.leafWeight", err,
                              "%llu", (unsigned long long)b->leaf_weight);
    if (ret < 0)
      return ret;
  }
  for (size_t i = 0; i < b->n_weight_device; i++) {
    const oci_weight_device *w = &b->weight_device[i];
    cleanup_free char *field = xasprintf("linux.resources.blockIO.weightDevice[%zu]", i);
    if (w->has_weight) {
      const char *file = blkio_file(dir, "blkio.weight_device", "blkio.bfq.weight_device");
      if (file == NULL)
        return fsrun_error_make(err, ENOTSUP, "%s: no `blkio.weight_device` in %s", field, dir);
      ret = cgroup_write_fieldf(dir, file, field, err, "%lld:%lld %u", (long long)w->major,
                                (long long)w->minor, w->weight);
      if (ret < 0)
        return ret;
    }
    if (w->has_leaf_weight) {
      ret = cgroup_write_fieldf(dir, "blkio.leaf_weight_device", field, err, "%lld:%lld %u",
                                (long long)w->major, (long long)w->minor, w->leaf_weight);
      if (ret < 0)
        return ret;
    }
  }
  ret =
      write_throttle(dir, "blkio.throttle.read_bps_device", b->throttle_read_bps,
                     b->n_throttle_read_bps, "linux.resources.blockIO.throttleReadBpsDevice", err);
  if (ret == 0)
    ret = write_throttle(dir, "blkio.throttle.write_bps_device", b->throttle_write_bps,
                         b->n_throttle_write_bps, "linux.resources.blockIO.throttleWriteBpsDevice",
                         err);
  if (ret == 0)
    ret = write_throttle(dir, "blkio.throttle.read_iops_device", b->throttle_read_iops,
                         b->n_throttle_read_iops, "linux.resources.blockIO.throttleReadIOPSDevice",
                         err);
  if (ret == 0)
    ret = write_throttle(dir, "blkio.throttle.write_iops_device", b->throttle_write_iops,
                         b->n_throttle_write_iops,
                         "linux.resources.blockIO.throttleWriteIOPSDevice", err);
  return ret;
}

int cgroup_v1_apply_net_cls(const char *dir, const oci_network *net, fsrun_error_t *err) {
  return cgroup_write_fieldf(dir, "net_cls.classid", "linux.resources.network.classID", err, "%llu",
                             (unsigned long long)net->class_id);
}

int cgroup_v1_apply_net_prio(const char *dir, const oci_network *net, fsrun_error_t *err) {
  for (size_t i = 0; i < net->n_priorities; i++) {
    cleanup_free char *field = xasprintf("linux.resources.network.priorities[%zu]", i);
    int ret = cgroup_write_fieldf(dir, "net_prio.ifpriomap", field, err, "%s %u",
                                  net->priorities[i].name ? net->priorities[i].name : "",
                                  net->priorities[i].priority);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* --- devices ---------------------------------------------------------------------------------- */

char *cgroup_v1_device_rule_string(const device_rule *r) {
  char major[24], minor[24], access[4];
  size_t n = 0;
  if (r->major < 0)
    strcpy(major, "*");
  else
    snprintf(major, sizeof(major), "%lld", (long long)r->major);
  if (r->minor < 0)
    strcpy(minor, "*");
  else
    snprintf(minor, sizeof(minor), "%lld", (long long)r->minor);
  if (r->access & DEVICE_ACCESS_READ)
    access[n++] = 'r';
  if (r->access & DEVICE_ACCESS_WRITE)
    access[n++] = 'w';
  if (r->access & DEVICE_ACCESS_MKNOD)
    access[n++] = 'm';
  access[n] = '\0';
  return xasprintf("%c %s:%s %s", r->type, major, minor, access);
}

/* devices.allow and devices.deny, each opened once for the whole list: the kernel takes each
 * write(2) as one rule, and the default list alone is a dozen rules. */
struct device_files {
  const char *dir;
  int allow_fd, deny_fd;
};

static void device_files_close(struct device_files *f) {
  if (f->allow_fd >= 0)
    close(f->allow_fd);
  if (f->deny_fd >= 0)
    close(f->deny_fd);
}

static int write_device_rule(struct device_files *f, const device_rule *r, fsrun_error_t *err) {
  cleanup_free char *line = cgroup_v1_device_rule_string(r);
  const char *file = r->allow ? "devices.allow" : "devices.deny";
  int *fd = r->allow ? &f->allow_fd : &f->deny_fd;
  if (*fd < 0)
    *fd = cgroup_open_file(f->dir, file, err);
  if (*fd < 0 || cgroup_write_fd(*fd, f->dir, file, line, err) < 0)
    return fsrun_error_wrap(err, "linux.resources.devices: `%s`", line);
  return 0;
}

int cgroup_v1_apply_devices(const char *dir, const device_rule *rules, size_t n,
                            fsrun_error_t *err) {
  static const device_rule deny_all = {false, 'a', -1, -1, DEVICE_ACCESS_ALL};
  __attribute__((cleanup(device_files_close))) struct device_files files = {dir, -1, -1};
  int ret = write_device_rule(&files, &deny_all, err);
  if (ret < 0)
    return ret;
  /* Written in the spec's order, each to devices.allow or devices.deny: the kernel applies them
   * one after the other, so the last rule that matches a device wins. */
  for (size_t i = 0; i < n; i++) {
    device_rule r = rules[i];
    /* "a" in v1 resets the whole list whatever else the line says: a narrower "a" rule is written
     * as the same rule for char and block devices */
    if (r.type == 'a' && (r.major >= 0 || r.minor >= 0 || r.access != DEVICE_ACCESS_ALL)) {
      r.type = 'c';
      ret = write_device_rule(&files, &r, err);
      if (ret < 0)
        return ret;
      r.type = 'b';
    }
    ret = write_device_rule(&files, &r, err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

/* --- freezer -----------------------------------------------------------------------------------
 */

int cgroup_v1_freeze(const char *freezer_dir, bool frozen, fsrun_error_t *err) {
  const char *want = frozen ? "FROZEN" : "THAWED";
  long waited = 0, step = 1;
  for (;;) {
    cleanup_free char *state = NULL;
    int ret = cgroup_write(freezer_dir, "freezer.state", want, err);
    if (ret < 0)
      return ret;
    ret = cgroup_read(freezer_dir, "freezer.state", &state, err);
    if (ret < 0)
      return ret;
    if (strcmp(state, want) == 0)
      return 0;
    if (waited >= FREEZE_TIMEOUT_MS) {
      /* do not leave it half frozen */
      if (frozen)
        cgroup_write(freezer_dir, "freezer.state", "THAWED", NULL);
      return fsrun_error_make(err, EBUSY, "`freezer.state` in %s stays %s instead of %s",
                              freezer_dir, state, want);
    }
    cgroup_sleep_ms(step);
    waited += step;
    if (step < 50)
      step *= 2;
  }
}

int cgroup_v1_is_frozen(const char *freezer_dir, bool *frozen, fsrun_error_t *err) {
  cleanup_free char *state = NULL;
  int ret = cgroup_read(freezer_dir, "freezer.state", &state, err);
  if (ret < 0)
    return ret;
  /* FREEZING counts: a pause is under way or a task resists, either way it is not running */
  *frozen = strcmp(state, "THAWED") != 0;
  return 0;
}

/* --- stats ---------------------------------------------------------------------------------- */

static char *controller_dir(const struct fsrun_cgroup *cg, const char *controller) {
  const char *mount = cgroup_v1_mount(cg, controller);
  return mount ? cgroup_join(mount, cg->path) : NULL;
}

int cgroup_v1_stats(const struct fsrun_cgroup *cg, cgroup_stats *s, fsrun_error_t *err) {
  cleanup_free char *cpuacct = controller_dir(cg, "cpuacct");
  cleanup_free char *cpu = controller_dir(cg, "cpu");
  cleanup_free char *memory = controller_dir(cg, "memory");
  cleanup_free char *pids = controller_dir(cg, "pids");
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  uint64_t v;

  cgroup_read_u64(cpuacct, "cpuacct.usage", 0, &s->cpu_usage_total);
  if (!cgroup_read_u64(cpuacct, "cpuacct.usage_user", 0, &s->cpu_usage_user) ||
      !cgroup_read_u64(cpuacct, "cpuacct.usage_sys", 0, &s->cpu_usage_kernel)) {
    long tick = sysconf(_SC_CLK_TCK);
    if (cpuacct && tick > 0 && cgroup_read(cpuacct, "cpuacct.stat", &text, &e) == 0) {
      if (cgroup_stat_lookup(text, "user", &v))
        s->cpu_usage_user = v * (1000000000ull / (uint64_t)tick);
      if (cgroup_stat_lookup(text, "system", &v))
        s->cpu_usage_kernel = v * (1000000000ull / (uint64_t)tick);
    }
    fsrun_error_release(&e);
    free(text);
    text = NULL;
  }
  if (cpu && cgroup_read(cpu, "cpu.stat", &text, &e) == 0) {
    cgroup_stat_lookup(text, "nr_periods", &s->cpu_periods);
    cgroup_stat_lookup(text, "nr_throttled", &s->cpu_throttled_periods);
    cgroup_stat_lookup(text, "throttled_time", &s->cpu_throttled_time);
  }
  fsrun_error_release(&e);
  free(text);
  text = NULL;

  if (memory) {
    uint64_t memsw_usage = 0;
    cgroup_read_u64(memory, "memory.usage_in_bytes", 0, &s->memory_usage);
    cgroup_read_u64(memory, "memory.max_usage_in_bytes", 0, &s->memory_max_usage);
    cgroup_read_u64(memory, "memory.limit_in_bytes", 0, &s->memory_limit);
    cgroup_read_u64(memory, "memory.failcnt", 0, &s->memory_failcnt);
    if (cgroup_read_u64(memory, "memory.memsw.usage_in_bytes", 0, &memsw_usage))
      s->swap_usage = memsw_usage > s->memory_usage ? memsw_usage - s->memory_usage : 0;
    cgroup_read_u64(memory, "memory.memsw.limit_in_bytes", 0, &s->swap_limit);
    if (cgroup_read(memory, "memory.stat", &text, &e) == 0) {
      if (!cgroup_stat_lookup(text, "total_cache", &s->memory_cache))
        cgroup_stat_lookup(text, "cache", &s->memory_cache);
      cgroup_stat_to_map(text, &s->memory_raw);
    }
    fsrun_error_release(&e);
  }
  cgroup_read_u64(pids, "pids.current", 0, &s->pids_current);
  cgroup_read_u64(pids, "pids.max", 0, &s->pids_limit);
  (void)err;
  return 0;
}
