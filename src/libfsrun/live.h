/* Operations on a live container's cgroup: pause, resume, update (live.c) and events (events.c).
 * The commands in src/cmd/ parse their arguments and call these. */
#ifndef FSRUN_LIVE_H
#define FSRUN_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgroup.h"
#include "context.h"
#include "error.h"
#include "oci.h"
#include "status.h"

/* Freezes every process of a running container ("container `ID` is not running" otherwise). With
 * tamper not NULL, then walks a task container's worktree (`--tamper-json`): *tamper (NULL for a
 * container that is not one) and *host_args, caller frees (sandbox_git_strv_free). */
int container_pause(const struct fsrun_context *ctx, const char *id, char ***tamper,
                    char ***host_args, fsrun_error_t *err);
/* Thaws a paused container ("container `ID` is not paused" otherwise). */
int container_resume(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* Reads a linux.resources JSON object from path, or from stdin when path is "-". */
int live_read_resources(const char *path, oci_resources **out, fsrun_error_t *err);
/* Applies r (only the fields it sets) to a created, running or paused container's cgroup. */
int container_update(const struct fsrun_context *ctx, const char *id, const oci_resources *r,
                     fsrun_error_t *err);

struct container_events_opts {
  bool stats_once;      /* --stats: one stats event, then return */
  uint64_t interval_ns; /* between stats events when streaming; 0 = 5 s */
};
/* runc's event stream on out, one JSON object per line: {"type":"stats","id","data"} and
 * {"type":"oom","id"}; streams until the container stops (then returns 0). */
int container_events(const struct fsrun_context *ctx, const char *id,
                     const struct container_events_opts *o, FILE *out, fsrun_error_t *err);

/* --- shared by live.c and events.c --------------------------------------------------------- */

/* What a live operation needs of a container: its state, the live status and its cgroup (NULL
 * when it has none: rootless without a delegated cgroup). */
struct live_container {
  struct container_status st;
  const char *status; /* status_derive(): "created", "running", "paused", "stopped", ... */
  pid_t pid;          /* 0 when stopped */
  struct fsrun_cgroup *cg;
  /* the state dir's config.json, read to find the cgroup (NULL when the state names none) */
  oci_config *config;
};

/* "container `ID` does not exist" when there is no such container. */
int live_open(const struct fsrun_context *ctx, const char *id, struct live_container *c,
              fsrun_error_t *err);
/* live_open, and in *init_pidfd a pidfd on the init opened before the status's liveness check, so
 * that the check confirmed it (init_ns_open need not check again); -1 when the status is not one
 * of a live init (created, running, paused) or pidfd_open failed. The caller closes it. */
int live_open_pinned(const struct fsrun_context *ctx, const char *id, struct live_container *c,
                     int *init_pidfd, fsrun_error_t *err);
/* "container `ID` has no cgroup ...: cannot ACTION" ("pause it") when c has none; 0 otherwise. */
int live_require_cgroup(const struct live_container *c, const char *action, fsrun_error_t *err);
void live_close(struct live_container *c);
#define cleanup_live __attribute__((cleanup(live_close)))

/* --- parsers for the CLI (pure; unit-tested) ----------------------------------------------- */

/* A byte count as runc's flags take it: "-1" (unlimited), "1048576", "64m", "1.5g", "512KiB",
 * "2 GB" (suffixes k m g t p, optionally followed by i and/or b, binary multiples). */
int live_parse_bytes(const char *text, int64_t *out, fsrun_error_t *err);
/* A Go duration: "5s", "250ms", "1m30s", "1.5h", "100us"; must be > 0. */
int live_parse_duration(const char *text, uint64_t *ns, fsrun_error_t *err);

/* --- the stats event (events.c), separated from the reading so it can be tested ---------- */

typedef struct {
  uint64_t major, minor;
  char op[12]; /* Read Write Sync Async Discard Total */
  uint64_t value;
} live_blkio_entry;

typedef struct {
  live_blkio_entry *items;
  size_t len;
} live_blkio_list;

typedef struct {
  char *page_size; /* "2MB" */
  uint64_t usage, max, failcnt;
} live_hugetlb;

typedef struct {
  uint64_t usage, max, limit, failcnt;
} live_memory_entry;

typedef struct {
  cgroup_stats base; /* cpu totals, throttling, memory usage, pids, memory.stat */
  uint64_t *percpu, *percpu_user, *percpu_kernel;
  size_t n_percpu, n_percpu_user, n_percpu_kernel;
  live_memory_entry swap; /* memory+swap, as runc reports it on v1 and v2 */
  live_memory_entry kernel, kernel_tcp;
  live_blkio_list service_bytes, serviced;
  live_hugetlb *hugetlb;
  size_t n_hugetlb;
} live_stats;

void live_stats_clear(live_stats *s);
/* {"type":"stats","id":ID,"data":{"cpu":…,"memory":…,"pids":…,"blkio":…,"hugetlb":…}} on one
 * line, with runc's field names and its rule that zero counters are left out (omitempty). */
char *live_stats_event_json(const char *id, const live_stats *s, fsrun_error_t *err);

#endif
