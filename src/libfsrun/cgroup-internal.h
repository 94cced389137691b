/* Shared by cgroup.c, cgroup-v1.c, cgroup-v2.c and cgroup-systemd.c. The pure helpers (paths,
 * value conversions and formatting) are declared here so the unit tests can reach them. */
#ifndef FSRUN_CGROUP_INTERNAL_H
#define FSRUN_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "ebpf.h"

#define CGROUP_ROOT           "/sys/fs/cgroup"
#define CGROUP_HYBRID_UNIFIED "/sys/fs/cgroup/unified"
#define CGROUP_DEFAULT_PARENT "/fsrun"

typedef struct {
  char *mountpoint;       /* "/sys/fs/cgroup/memory" */
  char *controllers;      /* "memory", "cpu,cpuacct", "name=systemd" */
  unsigned long long dev; /* the superblock's, from the mount table; 0 when taken from a record */
} cgroup_hierarchy;

struct fsrun_cgroup {
  cgroup_mode_t mode;
  char *path;           /* "/fsrun/ID", the same under every hierarchy's mount point */
  cgroup_hierarchy *v1; /* legacy and hybrid: every mounted v1 hierarchy, or those of v1_only */
  size_t n_v1;
  char *v1_only;       /* cgroup_create_opts.v1_controllers, or NULL */
  char *unified_mount; /* the cgroup2 mount (unified or hybrid), NULL on legacy */
  bool unified_dir;    /* the container has a directory in the cgroup2 mount */
  int unified_fd;      /* O_PATH fd of that directory (unified and hybrid mode), or -1 */
  /* --systemd-cgroup: the scope systemd is asked for (cgroup-systemd.c), or NULL */
  struct cgroup_systemd_scope *systemd;
  /* cgroup_create_deferred: the directories and resources cgroup_finish still has to make */
  bool pending;
  const oci_resources *pending_resources; /* borrowed from the config */
  device_rule *pending_rules;
  size_t n_pending_rules;
};

/* --- cgroup-record.c ----------------------------------------------------------------------- */

/* cg->v1 from a cgroup_hierarchy_record() whose every mount still holds: 0, or -1 with cg
 * untouched (the caller then reads the mount table) */
int cgroup_hierarchies_from_record(struct fsrun_cgroup *cg, const char *record);

/* --- cgroup.c: shared plumbing ----------------------------------------------------------- */

/* "mount+path" (path "/" is the mount itself). Caller frees. */
char *cgroup_join(const char *mountpoint, const char *path);
/* The v1 hierarchy mount point that carries controller (exact name in the comma list), or NULL. */
const char *cgroup_v1_mount(const struct fsrun_cgroup *cg, const char *controller);
/* The path on controller's v1 line of /proc/PID/cgroup's text ("4:cpu,cpuacct:/user.slice" gives
 * "/user.slice" for cpu and for cpuacct), or NULL. Caller frees. */
char *cgroup_v1_path_in(const char *proc_cgroup, const char *controller);
/* Writes value (one write(2), as cgroup files want) to dir/file. The error reads
 * "write `FILE` in DIR: strerror". */
int cgroup_write(const char *dir, const char *file, const char *value, fsrun_error_t *err);
/* The pieces of cgroup_write, for many values to one file (each write(2) is one value):
 * cgroup_open_file opens dir/file for writing (an fd, or a negative errno with err set). */
int cgroup_open_file(const char *dir, const char *file, fsrun_error_t *err);
int cgroup_write_fd(int fd, const char *dir, const char *file, const char *value,
                    fsrun_error_t *err);
/* Reads dir/file, trailing newline removed. */
int cgroup_read(const char *dir, const char *file, char **out, fsrun_error_t *err);
/* cgroup_write, with the error prefixed by the spec field it comes from:
 * "linux.resources.memory.limit: write `memory.limit_in_bytes` in DIR: Device or resource busy" */
int cgroup_write_field(const char *dir, const char *file, const char *value, const char *field,
                       fsrun_error_t *err);
/* cgroup_write_field with the value formatted from fmt: the one way both drivers write a
 * resource, so every refused value reads "FIELD: write `FILE` in DIR: reason". */
int cgroup_write_fieldf(const char *dir, const char *file, const char *field, fsrun_error_t *err,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A number file: "max" reads as max_value; false when dir is NULL or the file cannot be read. */
bool cgroup_read_u64(const char *dir, const char *file, uint64_t max_value, uint64_t *v);
void cgroup_sleep_ms(long ms);
bool cgroup_file_exists(const char *dir, const char *file);
/* "a b c" contains word */
bool cgroup_word_in_list(const char *list, const char *word, const char *separators);

/* The effective device rules: the spec's, then an allow rwm for each linux.devices node, then the
 * defaults every container gets (null, zero, full, random, urandom, tty, console, ptmx, pts,
 * mknod of any c/b node). Validates the spec's rules ("linux.resources.devices[N]..."). */
int cgroup_device_rules(const oci_resources *r, const oci_device *devices, size_t n_devices,
                        device_rule **out, size_t *n, fsrun_error_t *err);

/* The rules an update puts in force when it names devices: the defaults, an allow rwm for each
 * linux.devices node, then the update's rules. The last matching rule wins, so an update can
 * also revoke a default ("deny c 1:9") or start over with "deny a". */
int cgroup_device_rules_for_update(const oci_resources *r, const oci_device *devices,
                                   size_t n_devices, device_rule **out, size_t *n,
                                   fsrun_error_t *err);

/* The cgroup path (relative to the hierarchy root) for the container. */
int cgroup_resolve_path(const char *id, const char *cgroups_path, bool systemd, char **out,
                        fsrun_error_t *err);
/* "-1" -> "max", else the number */
char *cgroup_limit_string(int64_t v);

/* Writers whose files and formats are the same on v1 and v2. */
int cgroup_apply_cpuset(const char *dir, const oci_cpu *c, fsrun_error_t *err);
int cgroup_apply_pids(const char *dir, const oci_pids *p, fsrun_error_t *err);
int cgroup_apply_hugetlb(const char *dir, const oci_hugepage_limit *h, size_t n, bool v2,
                         fsrun_error_t *err);
int cgroup_apply_rdma(const char *dir, const oci_rdma *r, size_t n, fsrun_error_t *err);

/* --- cgroup-systemd.c ------------------------------------------------------------------ */

/* "a-b.slice" -> "/a.slice/a-b.slice", "-.slice" or "" -> "" (the root). */
int cgroup_systemd_expand_slice(const char *slice, char **out, fsrun_error_t *err);
/* "slice:prefix:name" -> "/<expanded slice>/<prefix>-<name>.scope" (a name ending in ".slice" is
 * a slice of its own, at the path its own name gives). NULL or "" means "system.slice:fsrun:ID". */
int cgroup_systemd_path(const char *spec, const char *id, char **out, fsrun_error_t *err);
/* Whether PATH is the scope a user manager would make for the container (runc's systemdUser):
 * the --systemd-cgroup path below a cgroup that belongs to this user (the manager's, delegated to
 * it). The manager's cgroup is not in the container's config, so it is not asked for. */
bool cgroup_systemd_user_scope_matches(const char *id, const char *cgroups_path, const char *path);
/* cgroup_create, before any directory is made: with --systemd-cgroup, as root, when systemd runs
 * and answers on D-Bus, sets cg->systemd (the scope is started by cgroup_systemd_start); else
 * leaves it NULL (the cgroupfs mapping). Fails when the scope's cgroup exists already. */
int cgroup_systemd_prepare(struct fsrun_cgroup *cg, const cgroup_create_opts *o,
                           fsrun_error_t *err);
/* cgroup_enter: StartTransientUnit with PIDs=[pid] and wait for its job. No-op without
 * cg->systemd. cgroup_clone_fd() is -1 for such a cgroup, so that the init waits for this. */
int cgroup_systemd_start(const struct fsrun_cgroup *cg, pid_t pid, fsrun_error_t *err);
/* The resources to write again once systemd has made the scope (borrowed from the create opts). */
const oci_resources *cgroup_systemd_resources(const struct fsrun_cgroup *cg);
/* cgroup_destroy, once the cgroup is empty: StopUnit when the cgroup is a systemd scope (best
 * effort, logged). */
void cgroup_systemd_stop(const struct fsrun_cgroup *cg);
/* Whether cg may be a scope of systemd's: made here with --systemd-cgroup, or, opened from the
 * state (cg->systemd NULL then), a path that ends in `.scope`. Asks no one. */
bool cgroup_systemd_may_be_scope(const struct fsrun_cgroup *cg);
/* cgroup_update: when the cgroup is a systemd scope, SetUnitProperties with the limits systemd
 * knows (MemoryMax, TasksMax, CPUWeight, CPUQuotaPerSecUSec), so that a reload of systemd keeps
 * them. No-op otherwise. */
int cgroup_systemd_update(const struct fsrun_cgroup *cg, const oci_resources *r,
                          fsrun_error_t *err);
void cgroup_systemd_free(struct fsrun_cgroup *cg);

/* --- cgroup-v1.c ------------------------------------------------------------------------ */

/* "c 1:3 rwm", "a *:* rwm" */
char *cgroup_v1_device_rule_string(const device_rule *r);
int cgroup_v1_apply_memory(const char *dir, const oci_memory *m, bool update, fsrun_error_t *err);
int cgroup_v1_apply_cpu(const char *dir, const oci_cpu *c, fsrun_error_t *err);
int cgroup_v1_apply_blkio(const char *dir, const oci_block_io *b, fsrun_error_t *err);
int cgroup_v1_apply_net_cls(const char *dir, const oci_network *net, fsrun_error_t *err);
int cgroup_v1_apply_net_prio(const char *dir, const oci_network *net, fsrun_error_t *err);
int cgroup_v1_apply_devices(const char *dir, const device_rule *rules, size_t n,
                            fsrun_error_t *err);
/* Copies cpuset.cpus/mems from the parent when empty (a new v1 cpuset has none). */
int cgroup_v1_cpuset_inherit(const char *dir, fsrun_error_t *err);
int cgroup_v1_freeze(const char *freezer_dir, bool frozen, fsrun_error_t *err);
int cgroup_v1_is_frozen(const char *freezer_dir, bool *frozen, fsrun_error_t *err);
int cgroup_v1_stats(const struct fsrun_cgroup *cg, cgroup_stats *s, fsrun_error_t *err);

/* --- cgroup-v2.c ------------------------------------------------------------------------ */

/* cpu.shares [2, 262144] -> cpu.weight [1, 10000]; 0 stays 0 (unset). */
uint64_t cgroup_v2_cpu_weight(uint64_t shares);
/* blkio weight [10, 1000] -> io.weight [1, 10000]; 0 stays 0 (unset). */
uint64_t cgroup_v2_io_weight(uint64_t blkio_weight);
/* memory.swap.max from the spec: *out NULL when nothing is to be written. */
int cgroup_v2_swap_max(const oci_memory *m, char **out, fsrun_error_t *err);
/* cpu.max "QUOTA PERIOD" / "max PERIOD"; NULL when neither is set. current is the cpu.max in
 * force (an update that sets only one of the two keeps the other), or NULL (defaults: max 100000).
 */
char *cgroup_v2_cpu_max(const oci_cpu *c, const char *current);
/* io.max lines "MAJ:MIN rbps=N wbps=N riops=N wiops=N" (only the keys given; 0 -> max). */
int cgroup_v2_io_max_lines(const oci_block_io *b, char ***lines, size_t *n);
/* "hugetlb.2MB.max" (v2) / "hugetlb.2MB.limit_in_bytes" (v1); NULL for a bad page size. */
char *cgroup_hugetlb_file(const char *page_size, bool v2);

/* Enables the controllers (NULL = every available one) in cgroup.subtree_control of every
 * ancestor of path, from the root down. Unavailable ones are skipped. */
int cgroup_v2_enable_controllers(const char *mount, const char *path, const char *const *want,
                                 fsrun_error_t *err);
int cgroup_v2_apply_memory(const char *dir, const oci_memory *m, fsrun_error_t *err);
int cgroup_v2_apply_cpu(const char *dir, const oci_cpu *c, bool update, fsrun_error_t *err);
int cgroup_v2_apply_io(const char *dir, const oci_block_io *b, fsrun_error_t *err);
int cgroup_v2_apply_unified(const char *dir, const oci_map *unified, fsrun_error_t *err);
int cgroup_v2_apply_devices(const char *dir, const device_rule *rules, size_t n,
                            fsrun_error_t *err);
int cgroup_v2_freeze(const char *dir, bool frozen, fsrun_error_t *err);
int cgroup_v2_is_frozen(const char *dir, bool *frozen, fsrun_error_t *err);
int cgroup_v2_stats(const char *dir, cgroup_stats *s, fsrun_error_t *err);

/* shared stat helpers: "key value" lines */
bool cgroup_stat_lookup(const char *text, const char *key, uint64_t *value);
void cgroup_stat_to_map(const char *text, oci_map *m);

#endif
