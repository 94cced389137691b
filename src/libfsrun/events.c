/* events: runc's event stream for a container. Stats come from cgroup_get_stats() plus the few
 * files it does not read (per-cpu usage, swap/kernel memory entries, block I/O, hugetlb); OOM
 * kills are counted from memory.oom_control (v1) or memory.events (v2), with an eventfd (v1) or
 * inotify (v2) to wake up when they change. */
#include "live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cgroup-internal.h"
#include "log.h"
#include "utils.h"

#define DEFAULT_INTERVAL_NS (5ULL * 1000000000ULL)
/* OOM notifications can be missed (no eventfd, a cgroup2 without memory.events): look anyway */
#define OOM_RECHECK_MS 1000

/* --- where the files are ------------------------------------------------------------------- */

/* The v1 directory of controller, or NULL (unified host, or no such hierarchy). */
static char *v1_dir(const struct fsrun_cgroup *cg, const char *controller) {
  const char *mount = cg->mode == CGROUP_MODE_UNIFIED ? NULL : cgroup_v1_mount(cg, controller);
  return mount ? cgroup_join(mount, cg->path) : NULL;
}

/* The container's cgroup2 directory (unified host, or hybrid when it has one), or NULL. */
static char *v2_dir(const struct fsrun_cgroup *cg) {
  return cg->unified_dir ? cgroup_join(cg->unified_mount, cg->path) : NULL;
}

/* --- reading ------------------------------------------------------------------------------- */

/* A number file; "max" reads as UINT64_MAX. false when absent. */
static bool read_u64(const char *dir, const char *file, uint64_t *v) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  if (dir == NULL || cgroup_read(dir, file, &text, &e) < 0)
    return false;
  *v = strcmp(text, "max") == 0 ? UINT64_MAX : strtoull(text, NULL, 10);
  return true;
}

/* "N N N ..." (cpuacct.usage_percpu) */
static void read_u64_list(const char *dir, const char *file, uint64_t **out, size_t *n) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  if (dir == NULL || cgroup_read(dir, file, &text, &e) < 0)
    return;
  for (char *p = text, *end;; p = end) {
    uint64_t v = strtoull(p, &end, 10);
    if (end == p)
      break;
    if (*n == cap) {
      cap = cap ? cap * 2 : 8;
      *out = realloc(*out, cap * sizeof(uint64_t));
      if (*out == NULL)
        abort();
    }
    (*out)[(*n)++] = v;
  }
}

/* v1 memory entries: PREFIX.usage_in_bytes, .max_usage_in_bytes, .limit_in_bytes, .failcnt */
static void read_v1_memory_entry(const char *dir, const char *prefix, live_memory_entry *m) {
  char file[64];
  snprintf(file, sizeof(file), "%s.usage_in_bytes", prefix);
  read_u64(dir, file, &m->usage);
  snprintf(file, sizeof(file), "%s.max_usage_in_bytes", prefix);
  read_u64(dir, file, &m->max);
  snprintf(file, sizeof(file), "%s.limit_in_bytes", prefix);
  read_u64(dir, file, &m->limit);
  snprintf(file, sizeof(file), "%s.failcnt", prefix);
  read_u64(dir, file, &m->failcnt);
}

static void blkio_push(live_blkio_list *l, uint64_t major, uint64_t minor, const char *op,
                       uint64_t value) {
  live_blkio_entry *e;
  l->items = realloc(l->items, (l->len + 1) * sizeof(*l->items));
  if (l->items == NULL)
    abort();
  e = &l->items[l->len++];
  e->major = major;
  e->minor = minor;
  snprintf(e->op, sizeof(e->op), "%s", op);
  e->value = value;
}

/* v1 "MAJ:MIN Op Value" lines ("Total N" is the sum runc leaves out). false when the file is
 * absent or has no device line. */
static bool read_v1_blkio(const char *dir, const char *file, live_blkio_list *l) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  if (dir == NULL || cgroup_read(dir, file, &text, &e) < 0)
    return false;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned long long major, minor, value;
    char op[12];
    if (sscanf(line, "%llu:%llu %11s %llu", &major, &minor, op, &value) == 4)
      blkio_push(l, major, minor, op, value);
  }
  return l->len > 0;
}

/* v1: the CFQ files, else BFQ's, else the throttle ones (what the kernel keeps depends on the
 * I/O scheduler) */
static void read_v1_blkio_any(const char *dir, const char *what, live_blkio_list *l) {
  static const char *const prefixes[] = {"blkio.", "blkio.bfq.", "blkio.throttle."};
  for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
    char file[96];
    snprintf(file, sizeof(file), "%s%s_recursive", prefixes[i], what);
    if (read_v1_blkio(dir, file, l))
      return;
  }
}

/* v2 io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N" */
static void read_v2_io_stat(const char *dir, live_stats *s) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  if (dir == NULL || cgroup_read(dir, "io.stat", &text, &e) < 0)
    return;
  for (char *line = text, *next; line && *line; line = next) {
    unsigned long long major, minor;
    int used = 0;
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    if (sscanf(line, "%llu:%llu%n", &major, &minor, &used) != 2)
      continue;
    for (char *kv = strtok(line + used, " "); kv; kv = strtok(NULL, " ")) {
      char *eq = strchr(kv, '=');
      uint64_t v;
      if (eq == NULL)
        continue;
      *eq = '\0';
      v = strtoull(eq + 1, NULL, 10);
      if (strcmp(kv, "rbytes") == 0)
        blkio_push(&s->service_bytes, major, minor, "Read", v);
      else if (strcmp(kv, "wbytes") == 0)
        blkio_push(&s->service_bytes, major, minor, "Write", v);
      else if (strcmp(kv, "rios") == 0)
        blkio_push(&s->serviced, major, minor, "Read", v);
      else if (strcmp(kv, "wios") == 0)
        blkio_push(&s->serviced, major, minor, "Write", v);
    }
  }
}

static int compare_hugetlb(const void *a, const void *b) {
  return strcmp(((const live_hugetlb *)a)->page_size, ((const live_hugetlb *)b)->page_size);
}

/* One entry per page size the cgroup has files for: hugetlb.SIZE.usage_in_bytes (v1) or
 * hugetlb.SIZE.current (v2). */
static void read_hugetlb(const char *dir, bool v2, live_stats *s) {
  const char *suffix = v2 ? ".current" : ".usage_in_bytes";
  cleanup_dir DIR *d = dir ? opendir(dir) : NULL;
  struct dirent *de;
  if (d == NULL)
    return;
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name), slen = strlen(suffix);
    char file[NAME_MAX + 32];
    live_hugetlb *h;
    if (strncmp(de->d_name, "hugetlb.", 8) != 0 || len <= 8 + slen ||
        strcmp(de->d_name + len - slen, suffix) != 0 ||
        strncmp(de->d_name + len - slen - 5, ".rsvd", 5) == 0)
      continue;
    s->hugetlb = realloc(s->hugetlb, (s->n_hugetlb + 1) * sizeof(*s->hugetlb));
    if (s->hugetlb == NULL)
      abort();
    h = &s->hugetlb[s->n_hugetlb++];
    memset(h, 0, sizeof(*h));
    h->page_size = strndup(de->d_name + 8, len - 8 - slen);
    if (h->page_size == NULL)
      abort();
    read_u64(dir, de->d_name, &h->usage);
    if (v2) {
      cleanup_free char *events = NULL;
      cleanup_error fsrun_error_t e = NULL;
      snprintf(file, sizeof(file), "hugetlb.%s.events", h->page_size);
      if (cgroup_read(dir, file, &events, &e) == 0)
        cgroup_stat_lookup(events, "max", &h->failcnt);
    } else {
      snprintf(file, sizeof(file), "hugetlb.%s.max_usage_in_bytes", h->page_size);
      read_u64(dir, file, &h->max);
      snprintf(file, sizeof(file), "hugetlb.%s.failcnt", h->page_size);
      read_u64(dir, file, &h->failcnt);
    }
  }
  if (s->n_hugetlb > 1)
    qsort(s->hugetlb, s->n_hugetlb, sizeof(*s->hugetlb), compare_hugetlb);
}

static int read_stats(const struct fsrun_cgroup *cg, live_stats *s, fsrun_error_t *err) {
  cleanup_free char *cpuacct = v1_dir(cg, "cpuacct");
  cleanup_free char *memory = v1_dir(cg, "memory");
  cleanup_free char *blkio = v1_dir(cg, "blkio");
  cleanup_free char *hugetlb = v1_dir(cg, "hugetlb");
  cleanup_free char *unified = v2_dir(cg);
  int ret;

  memset(s, 0, sizeof(*s));
  ret = cgroup_get_stats(cg, &s->base, err);
  if (ret < 0)
    return ret;

  read_u64_list(cpuacct, "cpuacct.usage_percpu", &s->percpu, &s->n_percpu);
  read_u64_list(cpuacct, "cpuacct.usage_percpu_user", &s->percpu_user, &s->n_percpu_user);
  read_u64_list(cpuacct, "cpuacct.usage_percpu_sys", &s->percpu_kernel, &s->n_percpu_kernel);

  if (memory != NULL) {
    read_v1_memory_entry(memory, "memory.memsw", &s->swap);
    read_v1_memory_entry(memory, "memory.kmem", &s->kernel);
    read_v1_memory_entry(memory, "memory.kmem.tcp", &s->kernel_tcp);
  } else if (unified != NULL) {
    /* v2 counts swap alone; runc reports memory+swap, as v1 does */
    uint64_t swap_max = 0;
    if (read_u64(unified, "memory.swap.current", &s->swap.usage)) {
      s->swap.usage += s->base.memory_usage;
      if (read_u64(unified, "memory.swap.max", &swap_max))
        s->swap.limit = swap_max == UINT64_MAX || s->base.memory_limit == UINT64_MAX
                            ? UINT64_MAX
                            : swap_max + s->base.memory_limit;
    }
  }

  if (blkio != NULL) {
    read_v1_blkio_any(blkio, "io_service_bytes", &s->service_bytes);
    read_v1_blkio_any(blkio, "io_serviced", &s->serviced);
  } else {
    read_v2_io_stat(unified, s);
  }

  if (hugetlb != NULL)
    read_hugetlb(hugetlb, false, s);
  else
    read_hugetlb(unified, true, s);
  return 0;
}

void live_stats_clear(live_stats *s) {
  cgroup_stats_clear(&s->base);
  free(s->percpu);
  free(s->percpu_user);
  free(s->percpu_kernel);
  free(s->service_bytes.items);
  free(s->serviced.items);
  for (size_t i = 0; i < s->n_hugetlb; i++)
    free(s->hugetlb[i].page_size);
  free(s->hugetlb);
  memset(s, 0, sizeof(*s));
}

/* --- the JSON ------------------------------------------------------------------------------ */

static void gen_key(yajl_gen g, const char *key) {
  yajl_gen_string(g, (const unsigned char *)key, strlen(key));
}

/* yajl_gen_integer is signed: counters up to UINT64_MAX go out as number text */
static void gen_u64(yajl_gen g, const char *key, uint64_t v) {
  char buf[24];
  int len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
  gen_key(g, key);
  yajl_gen_number(g, buf, (size_t)len);
}

/* Go's omitempty: a zero value is left out */
static void gen_u64_omitempty(yajl_gen g, const char *key, uint64_t v) {
  if (v != 0)
    gen_u64(g, key, v);
}

static void gen_u64_array_omitempty(yajl_gen g, const char *key, const uint64_t *v, size_t n) {
  char buf[24];
  if (n == 0)
    return;
  gen_key(g, key);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++) {
    int len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v[i]);
    yajl_gen_number(g, buf, (size_t)len);
  }
  yajl_gen_array_close(g);
}

static void gen_memory_entry(yajl_gen g, const char *key, const live_memory_entry *m) {
  gen_key(g, key);
  yajl_gen_map_open(g);
  gen_u64(g, "limit", m->limit);
  gen_u64_omitempty(g, "usage", m->usage);
  gen_u64_omitempty(g, "max", m->max);
  gen_u64(g, "failcnt", m->failcnt);
  yajl_gen_map_close(g);
}

static void gen_blkio_list(yajl_gen g, const char *key, const live_blkio_list *l) {
  if (l->len == 0)
    return;
  gen_key(g, key);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < l->len; i++) {
    yajl_gen_map_open(g);
    gen_u64_omitempty(g, "major", l->items[i].major);
    gen_u64_omitempty(g, "minor", l->items[i].minor);
    if (l->items[i].op[0] != '\0') {
      gen_key(g, "op");
      gen_key(g, l->items[i].op);
    }
    gen_u64_omitempty(g, "value", l->items[i].value);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

static bool all_digits(const char *s) {
  if (s == NULL || *s == '\0')
    return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

static void gen_cpu(yajl_gen g, const live_stats *s) {
  gen_key(g, "cpu");
  yajl_gen_map_open(g);
  gen_key(g, "usage");
  yajl_gen_map_open(g);
  gen_u64_omitempty(g, "total", s->base.cpu_usage_total);
  gen_u64_array_omitempty(g, "percpu", s->percpu, s->n_percpu);
  gen_u64_array_omitempty(g, "percpu_kernel", s->percpu_kernel, s->n_percpu_kernel);
  gen_u64_array_omitempty(g, "percpu_user", s->percpu_user, s->n_percpu_user);
  gen_u64(g, "kernel", s->base.cpu_usage_kernel);
  gen_u64(g, "user", s->base.cpu_usage_user);
  yajl_gen_map_close(g);
  gen_key(g, "throttling");
  yajl_gen_map_open(g);
  gen_u64_omitempty(g, "periods", s->base.cpu_periods);
  gen_u64_omitempty(g, "throttledPeriods", s->base.cpu_throttled_periods);
  gen_u64_omitempty(g, "throttledTime", s->base.cpu_throttled_time);
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

static void gen_memory(yajl_gen g, const live_stats *s) {
  live_memory_entry usage = {
      .usage = s->base.memory_usage,
      .max = s->base.memory_max_usage,
      .limit = s->base.memory_limit,
      .failcnt = s->base.memory_failcnt,
  };
  bool raw = false;
  gen_key(g, "memory");
  yajl_gen_map_open(g);
  gen_u64_omitempty(g, "cache", s->base.memory_cache);
  gen_memory_entry(g, "usage", &usage);
  gen_memory_entry(g, "swap", &s->swap);
  gen_memory_entry(g, "kernel", &s->kernel);
  gen_memory_entry(g, "kernelTCP", &s->kernel_tcp);
  for (size_t i = 0; i < s->base.memory_raw.len; i++) {
    const char *v = s->base.memory_raw.values[i];
    if (!all_digits(v))
      continue;
    if (!raw) {
      gen_key(g, "raw");
      yajl_gen_map_open(g);
      raw = true;
    }
    gen_key(g, s->base.memory_raw.keys[i]);
    yajl_gen_number(g, v, strlen(v));
  }
  if (raw)
    yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

/* a generator with an event's object open: {"type": TYPE, "id": ID, ... */
static yajl_gen event_open(const char *type, const char *id) {
  yajl_gen g = yajl_gen_alloc(NULL);
  if (g == NULL)
    abort();
  yajl_gen_map_open(g);
  gen_key(g, "type");
  gen_key(g, type);
  gen_key(g, "id");
  gen_key(g, id);
  return g;
}

/* the event's object closed and its text (the caller frees it), g freed; NULL when yajl refused
 * what was generated */
static char *event_close(yajl_gen g) {
  const unsigned char *buf;
  size_t len;
  char *json = NULL;
  yajl_gen_map_close(g);
  if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok) {
    json = strndup((const char *)buf, len);
    if (json == NULL)
      abort();
  }
  yajl_gen_free(g);
  return json;
}

char *live_stats_event_json(const char *id, const live_stats *s, fsrun_error_t *err) {
  yajl_gen g = event_open("stats", id);
  char *json;

  gen_key(g, "data");
  yajl_gen_map_open(g);
  gen_cpu(g, s);
  gen_memory(g, s);
  gen_key(g, "pids");
  yajl_gen_map_open(g);
  gen_u64_omitempty(g, "current", s->base.pids_current);
  gen_u64_omitempty(g, "limit", s->base.pids_limit);
  yajl_gen_map_close(g);
  gen_key(g, "blkio");
  yajl_gen_map_open(g);
  gen_blkio_list(g, "ioServiceBytesRecursive", &s->service_bytes);
  gen_blkio_list(g, "ioServicedRecursive", &s->serviced);
  yajl_gen_map_close(g);
  gen_key(g, "hugetlb");
  yajl_gen_map_open(g);
  for (size_t i = 0; i < s->n_hugetlb; i++) {
    gen_key(g, s->hugetlb[i].page_size);
    yajl_gen_map_open(g);
    gen_u64_omitempty(g, "usage", s->hugetlb[i].usage);
    gen_u64_omitempty(g, "max", s->hugetlb[i].max);
    gen_u64(g, "failcnt", s->hugetlb[i].failcnt);
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
  json = event_close(g);
  if (json == NULL)
    fsrun_error_make(err, EINVAL, "serialise the stats of `%s`", id);
  return json;
}

static char *oom_event_json(const char *id) {
  char *json = event_close(event_open("oom", id));
  if (json == NULL)
    abort(); /* two string members: nothing yajl refuses */
  return json;
}

/* --- OOM watching -------------------------------------------------------------------------- */

struct oom_watch {
  char *dir;        /* the memory directory */
  const char *file; /* memory.oom_control (v1) or memory.events (v2) */
  int notify_fd;    /* eventfd (v1) / inotify (v2), -1 when none could be set up */
  bool v2;
  uint64_t count;
};

/* The OOM kills so far ("oom_kill"; kernels without it only say "under_oom"/"oom"). */
static bool oom_count(const struct oom_watch *w, uint64_t *count) {
  cleanup_free char *text = NULL;
  cleanup_error fsrun_error_t e = NULL;
  if (w->dir == NULL || cgroup_read(w->dir, w->file, &text, &e) < 0)
    return false;
  if (cgroup_stat_lookup(text, "oom_kill", count))
    return true;
  return cgroup_stat_lookup(text, w->v2 ? "oom" : "under_oom", count);
}

static void oom_watch_start(const struct fsrun_cgroup *cg, struct oom_watch *w) {
  memset(w, 0, sizeof(*w));
  w->notify_fd = -1;
  w->dir = v1_dir(cg, "memory");
  if (w->dir != NULL) {
    cleanup_close int control = -1;
    cleanup_free char *path = NULL, *line = NULL;
    cleanup_error fsrun_error_t e = NULL;
    w->file = "memory.oom_control";
    path = cgroup_join(w->dir, "/memory.oom_control");
    control = open(path, O_RDONLY | O_CLOEXEC);
    w->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (control >= 0 && w->notify_fd >= 0) {
      line = xasprintf("%d %d", w->notify_fd, control);
      /* the kernel keeps its own reference to the control file once registered */
      if (cgroup_write(w->dir, "cgroup.event_control", line, &e) < 0) {
        log_debug("events: no OOM notification (%s), polling memory.oom_control", e->msg);
        close(w->notify_fd);
        w->notify_fd = -1;
      }
    }
  } else if ((w->dir = v2_dir(cg)) != NULL) {
    cleanup_free char *path = cgroup_join(w->dir, "/memory.events");
    w->file = "memory.events";
    w->v2 = true;
    w->notify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (w->notify_fd >= 0 && inotify_add_watch(w->notify_fd, path, IN_MODIFY) < 0) {
      close(w->notify_fd);
      w->notify_fd = -1;
    }
  }
  if (!oom_count(w, &w->count))
    w->count = 0;
}

static void oom_watch_drain(const struct oom_watch *w) {
  char buf[4096];
  while (w->notify_fd >= 0 && read(w->notify_fd, buf, sizeof(buf)) > 0)
    ;
}

/* Whether OOM kills happened since the last call. */
static bool oom_watch_fired(struct oom_watch *w) {
  uint64_t now;
  if (!oom_count(w, &now))
    return false;
  if (now > w->count) {
    w->count = now;
    return true;
  }
  w->count = now;
  return false;
}

static void oom_watch_stop(struct oom_watch *w) {
  if (w->notify_fd >= 0)
    close(w->notify_fd);
  free(w->dir);
  memset(w, 0, sizeof(*w));
  w->notify_fd = -1;
}

/* --- the command --------------------------------------------------------------------------- */

static int emit(FILE *out, const char *json, fsrun_error_t *err) {
  if (fprintf(out, "%s\n", json) < 0 || fflush(out) != 0)
    return fsrun_error_errno(err, "write the event");
  return 0;
}

static int emit_stats(FILE *out, const char *id, const struct fsrun_cgroup *cg,
                      fsrun_error_t *err) {
  live_stats s;
  cleanup_free char *json = NULL;
  int ret = read_stats(cg, &s, err);
  if (ret < 0) {
    live_stats_clear(&s);
    return fsrun_error_wrap(err, "read the stats of `%s`", id);
  }
  json = live_stats_event_json(id, &s, err);
  live_stats_clear(&s);
  if (json == NULL)
    return fsrun_error_code(err);
  return emit(out, json, err);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A pidfd pinned to the container's init (its start time checked after the pin), or -1. */
static int open_init_pidfd(const struct container_status *st) {
  int fd;
  if (st->pid <= 0)
    return -1;
  fd = (int)syscall(SYS_pidfd_open, st->pid, 0);
  if (fd >= 0 && !status_init_alive(st)) {
    close(fd);
    return -1;
  }
  return fd;
}

int container_events(const struct fsrun_context *ctx, const char *id,
                     const struct container_events_opts *o, FILE *out, fsrun_error_t *err) {
  cleanup_live struct live_container c = {0};
  cleanup_close int pidfd = -1;
  cleanup_free char *oom_json = NULL;
  struct oom_watch oom;
  uint64_t interval = o->interval_ns ? o->interval_ns : DEFAULT_INTERVAL_NS, next_stats;
  int ret = live_open(ctx, id, &c, err);

  if (ret < 0)
    return ret;
  if (strcmp(c.status, "created") != 0 && strcmp(c.status, "running") != 0 &&
      strcmp(c.status, "paused") != 0)
    return fsrun_error_take(err, EINVAL, xasprintf("container `%s` is not running", id));
  ret = live_require_cgroup(&c, "read its events", err);
  if (ret < 0)
    return ret;
  if (o->stats_once)
    return emit_stats(out, id, c.cg, err);

  pidfd = open_init_pidfd(&c.st);
  if (pidfd < 0 && !status_init_alive(&c.st))
    return 0; /* it stopped since we looked */
  oom_json = oom_event_json(id);
  oom_watch_start(c.cg, &oom);
  next_stats = now_ns();
  for (;;) {
    struct pollfd fds[2] = {{.fd = pidfd, .events = POLLIN},
                            {.fd = oom.notify_fd, .events = POLLIN}};
    uint64_t now = now_ns(), wait_ms;
    int timeout_ms;
    bool stopped;

    if (now >= next_stats) {
      ret = emit_stats(out, id, c.cg, err);
      if (ret < 0) {
        /* the cgroup goes away with the container: that is the end of the stream, not an error */
        if (!status_init_alive(&c.st)) {
          fsrun_error_release(err);
          ret = 0;
        }
        break;
      }
      next_stats = interval > UINT64_MAX - now ? UINT64_MAX : now + interval;
    }
    wait_ms = (next_stats - now) / 1000000 + 1;
    timeout_ms = wait_ms > OOM_RECHECK_MS ? OOM_RECHECK_MS : (int)wait_ms;
    if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      ret = fsrun_error_errno(err, "wait for events of `%s`", id);
      break;
    }
    oom_watch_drain(&oom);
    /* the init's end may come from the OOM kill itself: report that kill first */
    stopped = pidfd >= 0 ? (fds[0].revents & POLLIN) != 0 : !status_init_alive(&c.st);
    if (oom_watch_fired(&oom)) {
      ret = emit(out, oom_json, err);
      if (ret < 0)
        break;
    }
    if (stopped) {
      ret = 0;
      break;
    }
  }
  oom_watch_stop(&oom);
  return ret;
}
