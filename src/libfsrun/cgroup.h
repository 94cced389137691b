/* Cgroup drivers: unified (v2), hybrid (v1 controllers + a cgroup2 mount with few or none) and
 * legacy (v1). The lifecycle code only talks to this interface. */
#ifndef FSRUN_CGROUP_H
#define FSRUN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

typedef enum {
  CGROUP_MODE_UNIFIED = 2, /* cgroup2 at /sys/fs/cgroup */
  CGROUP_MODE_HYBRID = 3,  /* v1 controllers; cgroup2 at /sys/fs/cgroup/unified */
  CGROUP_MODE_LEGACY = 1,  /* v1 only */
} cgroup_mode_t;

struct fsrun_cgroup; /* opaque */

typedef struct {
  const char *id;                 /* container id */
  const char *cgroups_path;       /* linux.cgroupsPath, may be NULL */
  bool systemd;                   /* --systemd-cgroup: cgroups_path is slice:prefix:name */
  bool rootless;                  /* failures to create are not fatal when no cgroup is delegated */
  const oci_resources *resources; /* may be NULL */
  const oci_device *devices;      /* linux.devices (each is allowed rwm), may be NULL */
  size_t n_devices;
  /* v1 and hybrid hosts: only the hierarchies carrying one of these controllers (a comma list,
   * e.g. "memory,pids,freezer"); NULL: every mounted hierarchy. Kept in cgroup_describe(). */
  const char *v1_controllers;
  /* no device allow-list at all (no v1 devices rules, no v2 program): the caller keeps device
   * nodes out of its process's reach by other means (fsrun sandbox's one-shot run as root:
   * sandbox-devices.h) */
  bool no_device_rules;
} cgroup_create_opts;

/* Whether the default device allow-list (what every container may open: null, zero, full, random,
 * urandom, tty, console, ptmx, pts) lets a node of this type ('c' or 'b') and number be opened. */
bool cgroup_device_allowed_by_default(char type, unsigned int major, unsigned int minor);

/* The annotation a config names its v1 controllers with (cgroup_create_opts.v1_controllers). */
#define CGROUP_V1_ANNOTATION "run.fsrun.cgroup.v1Controllers"

/* Detects the host's mode once per process (cached). */
int cgroup_detect_mode(cgroup_mode_t *mode, fsrun_error_t *err);

/* Creates the container's cgroup (every hierarchy on v1) and applies resources, including the
 * device allow-list (deny by default). Moves no process. On failure nothing is left behind.
 * *out is NULL (and 0 returned) when rootless and no cgroup could be created. */
int cgroup_create(const cgroup_create_opts *o, struct fsrun_cgroup **out, fsrun_error_t *err);
/* cgroup_create, except that on hosts where the init cannot be cloned into its cgroup (legacy,
 * hybrid), as root, nothing is made yet: cgroup_finish() makes the directories and writes the
 * resources. `create` calls it after clone, so that the work overlaps with the init's mounts (the
 * init waits for the cgroup before anything of the user's runs). A no-op for any other cgroup. */
int cgroup_create_deferred(const cgroup_create_opts *o, struct fsrun_cgroup **out,
                           fsrun_error_t *err);
int cgroup_finish(struct fsrun_cgroup *cg, fsrun_error_t *err);
/* Re-opens a cgroup from the string cgroup_describe() returned (stored in the state dir), with the
 * v1 hierarchies of record (cgroup_hierarchy_record(), may be NULL) where that still holds and
 * from the mount table otherwise. */
int cgroup_open(const char *description, const char *record, struct fsrun_cgroup **out,
                fsrun_error_t *err);
/* Whether path ("/fsrun/ID") is one that a container's id and linux.cgroupsPath lead to (with or
 * without --systemd-cgroup, or below the caller's delegated subtree). */
bool cgroup_path_is_containers(const char *id, const char *cgroups_path, const char *path);
/* cgroup_open, only for a description whose path cgroup_path_is_containers (EPERM otherwise): a
 * forged state file must not make fsrun kill in or remove a cgroup of the host's. */
int cgroup_open_checked(const char *description, const char *record, const char *id,
                        const char *cgroups_path, struct fsrun_cgroup **out, fsrun_error_t *err);
/* The container's cgroup found from its id and linux.cgroupsPath alone (the first of the paths
 * they lead to that exists on this host, the one below the caller's own delegated subtree among
 * them), for a container whose state file is lost; *out NULL when there is none. */
int cgroup_find(const char *id, const char *cgroups_path, struct fsrun_cgroup **out,
                fsrun_error_t *err);
/* A self-contained string that cgroup_open() accepts (e.g. JSON or "mode:path"). Caller frees. */
char *cgroup_describe(const struct fsrun_cgroup *cg);
/* The mounts of cg's v1 hierarchies, for cgroup_open() to check instead of reading the whole
 * mount table again (cgroup-record.c); NULL on a unified host or where the kernel cannot identify
 * a mount for good (before Linux 6.8). Caller frees. */
char *cgroup_hierarchy_record(const struct fsrun_cgroup *cg);
/* O_PATH|O_DIRECTORY fd of the v2 cgroup for clone3's CLONE_INTO_CGROUP, or -1 (v1/hybrid, a
 * systemd scope, no clone3: the process is then moved by cgroup_enter()).
 * Owned by cg (closed by cgroup_free): do not close it. */
int cgroup_clone_fd(const struct fsrun_cgroup *cg);
/* O_PATH|O_DIRECTORY fd of the cgroup's directory on a cgroup v2 host (whatever its manager), or
 * -1. Owned by cg. */
int cgroup_unified_fd(const struct fsrun_cgroup *cg);
/* On a hybrid host, the O_PATH fd of the cgroup's directory in the cgroup2 mount, for
 * CLONE_INTO_CGROUP: a process born there joins the v1 hierarchies alone (cgroup_enter_v1). -1
 * elsewhere, for a systemd scope, and without clone3. Owned by cg. */
int cgroup_hybrid_clone_fd(const struct fsrun_cgroup *cg);
/* cgroup_enter in the v1 hierarchies only. */
int cgroup_enter_v1(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err);
/* Whether a single-threaded process can join the cgroup itself with cgroup_enter_v1(cg, 0):
 * cgroupfs hierarchies (v1, a hybrid host's), no systemd scope. */
bool cgroup_joinable_through_tasks(const struct fsrun_cgroup *cg);
/* Puts pid into the cgroup in every hierarchy. pid 0 is the caller, which must be
 * single-threaded: on v1 only the calling thread is moved. */
int cgroup_enter(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err);
/* What a process did itself to join its cgroup, for cgroup_enter_rest */
enum {
  CGROUP_JOINED_V1 = 1, /* every v1 hierarchy, through `tasks` (cgroup_enter_v1 with pid 0) */
  CGROUP_JOINED_V2 = 2, /* cloned into the hybrid host's cgroup2 directory */
};
/* cgroup_enter for pid, except what joined (CGROUP_JOINED_*) says pid did itself. */
int cgroup_enter_rest(const struct fsrun_cgroup *cg, pid_t pid, unsigned joined,
                      fsrun_error_t *err);
int cgroup_update(const struct fsrun_cgroup *cg, const oci_resources *r, fsrun_error_t *err);
/* Why key may not be set through linux.resources.unified, or NULL: it may. A key is a file name
 * of the container's cgroup with a dot ("memory.max"); of the cgroup's core files only the subtree
 * limits: a pid written to cgroup.procs would make a host process the container's (its kill, its
 * delete). validate (create) and update ask this before anything changes. */
const char *cgroup_unified_key_refusal(const char *key);
/* The first refused key of unified as "linux.resources.unified: `KEY` <why>" (EINVAL). */
int cgroup_unified_keys_check(const oci_map *unified, fsrun_error_t *err);
/* cgroup_update for a container created with the nodes devices (linux.devices). When r has device
 * rules they replace the container's: the defaults and those nodes stay allowed unless r's rules,
 * applied after them with the last match winning, say otherwise. */
int cgroup_update_with_nodes(const struct fsrun_cgroup *cg, const oci_resources *r,
                             const oci_device *devices, size_t n_devices, fsrun_error_t *err);
int cgroup_freeze(const struct fsrun_cgroup *cg, bool frozen, fsrun_error_t *err);
/* Thaws the container's cgroup, and brings back into its v1 freezer cgroup any of its processes
 * (still in its other hierarchies) that were moved to another, perhaps frozen, one: a frozen
 * process dies only once thawed. */
int cgroup_thaw_all(const struct fsrun_cgroup *cg, fsrun_error_t *err);
int cgroup_is_frozen(const struct fsrun_cgroup *cg, bool *frozen, fsrun_error_t *err);
int cgroup_pids(const struct fsrun_cgroup *cg, pid_t **pids, size_t *n, fsrun_error_t *err);
int cgroup_kill_all(const struct fsrun_cgroup *cg, int signal, fsrun_error_t *err);
/* Kills stragglers (cgroup.kill where present), waits for them, removes every directory. */
int cgroup_destroy(const struct fsrun_cgroup *cg, fsrun_error_t *err);
/* Removes every directory of cg when each is an empty leaf, signalling nothing; false (and the
 * directories from the first busy one on kept) when a process or a sub-cgroup is there, or cg may
 * be a systemd scope. */
bool cgroup_remove_if_empty(const struct fsrun_cgroup *cg);
/* The path of the container's cgroup relative to the hierarchy root ("/fsrun/ID"). */
const char *cgroup_path(const struct fsrun_cgroup *cg);
/* The host's hierarchies the cgroup spans, as found when it was made: the v1 ones, then on a
 * hybrid host the cgroup2 mount (controllers ""). None on a unified host. */
size_t cgroup_host_hierarchy_count(const struct fsrun_cgroup *cg);
void cgroup_host_hierarchy(const struct fsrun_cgroup *cg, size_t i, const char **controllers,
                           const char **mountpoint);

typedef struct {
  uint64_t cpu_usage_total, cpu_usage_user, cpu_usage_kernel; /* ns */
  uint64_t cpu_throttled_periods, cpu_throttled_time, cpu_periods;
  uint64_t memory_usage, memory_max_usage, memory_limit, memory_failcnt, memory_cache;
  uint64_t swap_usage, swap_limit;
  uint64_t pids_current, pids_limit; /* pids_limit 0 = max */
  oci_map memory_raw;                /* memory.stat key -> value */
} cgroup_stats;
int cgroup_get_stats(const struct fsrun_cgroup *cg, cgroup_stats *s, fsrun_error_t *err);
void cgroup_stats_clear(cgroup_stats *s);

/* cgroup-counters.c: the CPU time the cgroup's processes used: the file that counts it, open
 * (cpuacct.usage on v1, in ns; cpu.stat's usage_usec on v2, *v2 set), or -1; and its value now from
 * that fd (false when it cannot be read). The OOM killer's kills in the cgroup
 * (memory.oom_control's oom_kill on v1, memory.events' on v2); false when the file cannot be read.
 */
int cgroup_cpu_usage_open(const struct fsrun_cgroup *cg, bool *v2);
bool cgroup_cpu_usage_read(int fd, bool v2, uint64_t *ns);
bool cgroup_oom_kills(const struct fsrun_cgroup *cg, uint64_t *count);

/* cgroup-delegate.c, for an unprivileged caller on a unified host: the cgroup v2 path under which
 * it may make cgroups (the parent of its own cgroup when delegated to it, else systemd's
 * user@UID.service when that is), or NULL. Caller frees. */
char *cgroup_rootless_delegated_base(void);
/* path (relative to /sys/fs/cgroup) is owned by the caller as systemd delegates it, and writable
 * by it: the directory, cgroup.procs, cgroup.subtree_control and cgroup.threads. */
bool cgroup_is_delegated(const char *path);
/* Where an ordinary user's create put the container's cgroup below its delegated subtree, path is
 * BASE followed by what id and linux.cgroupsPath (none or relative) lead to: that BASE when path
 * has that shape and BASE is plain (absolute, no `.`, `..` or empty component), else NULL. Strings
 * only. Caller frees. */
char *cgroup_delegated_base_of(const char *id, const char *cgroups_path, const char *path);
/* base is delegated to owner, an ordinary user (never root), as cgroup_is_delegated checks the
 * ownership, whoever asks: any caller, root too, finds a user's container's cgroup again. */
bool cgroup_is_delegated_to(const char *base, uid_t owner);
/* Whether pid's cgroup v2 (the 0:: line of /proc/PID/cgroup) is path or below it. */
bool cgroup_pid_is_in(pid_t pid, const char *path);

/* The calling process's own cgroup directory in the v1 hierarchy of controller, wherever the host
 * mounts it ("/sys/fs/cgroup/pids/user.slice"), or NULL: a unified host, no such hierarchy.
 * Caller frees. */
char *cgroup_v1_own_dir(const char *controller);

void cgroup_free(struct fsrun_cgroup *cg);
void cleanup_cgroupp(struct fsrun_cgroup **cg);
#define cleanup_cgroup __attribute__((cleanup(cleanup_cgroupp)))

#endif
