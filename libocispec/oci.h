/* Typed model of the OCI runtime-spec 1.3 documents fsrun reads and writes.
 *
 * Conventions (the whole model follows them, so callers never guess):
 *  - strings are owned `char *`, NULL when the property is absent;
 *  - arrays are `T *items` + `size_t n_items`;
 *  - optional scalars carry a `bool has_<name>` next to the value;
 *  - string maps (annotations, sysctl, unified, ...) are `oci_map`;
 *  - sub-objects that may be absent are pointers, NULL when absent.
 * libocispec never touches the system: it only parses, validates shape and serialises. */
#ifndef FSRUN_OCI_H
#define FSRUN_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OCI_VERSION          "1.3.0"
#define OCI_MOUNT_MAX_COVERS 8

typedef struct {
  char **keys;
  char **values;
  size_t len;
} oci_map;

/* Parsed strvs are NULL-terminated (items[len] == NULL, so process.args.items can go to execve
 * as is). items == NULL means the array was absent; serialisers write an array when items != NULL,
 * even an empty one. */
typedef struct {
  char **items;
  size_t len;
} oci_strv;

/* --- process ------------------------------------------------------------------------------ */

typedef struct {
  char *type; /* "RLIMIT_NOFILE", ... */
  uint64_t hard;
  uint64_t soft;
} oci_rlimit;

typedef struct {
  oci_strv bounding, effective, inheritable, permitted, ambient;
  bool has_bounding, has_effective, has_inheritable, has_permitted, has_ambient;
} oci_capabilities;

typedef struct {
  uint32_t uid;
  uint32_t gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* Windows only; kept for round-trips */
} oci_user;

typedef struct {
  char *policy; /* SCHED_OTHER, ... */
  bool has_nice, has_priority, has_runtime, has_deadline, has_period;
  int32_t nice;
  int32_t priority;
  oci_strv flags;
  uint64_t runtime, deadline, period;
} oci_scheduler;

typedef struct {
  char *class_; /* IOPRIO_CLASS_RT | IOPRIO_CLASS_BE | IOPRIO_CLASS_IDLE */
  int32_t priority;
} oci_io_priority;

typedef struct {
  char *initial;
  char *final;
} oci_exec_cpu_affinity;

typedef struct {
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  oci_user user;
  oci_strv args;
  char *command_line; /* Windows only */
  oci_strv env;
  char *cwd;
  oci_capabilities *capabilities;
  oci_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  bool has_oom_score_adj;
  int32_t oom_score_adj;
  char *selinux_label;
  oci_scheduler *scheduler;
  oci_io_priority *io_priority;
  oci_exec_cpu_affinity *exec_cpu_affinity;
} oci_process;

/* --- mounts, hooks -------------------------------------------------------------------------- */

typedef struct {
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
} oci_id_mapping;

typedef struct {
  char *destination;
  char *source;
  char *type;
  oci_strv options;
  oci_id_mapping *uid_mappings;
  size_t n_uid_mappings;
  oci_id_mapping *gid_mappings;
  size_t n_gid_mappings;
  /* In memory only, never parsed nor serialised: the identity of the object the config's builder
   * saw at source when it decided something from it (`fsrun sandbox`'s secret-file covers). The
   * bind must show that very object, or the mount fails (mounts.c). */
  bool has_source_id;
  /* In memory only: a bind of a path the sandbox's caller named. The runtime refuses it without a
   * recorded identity (needs_source_id), and resolves its destination through no symbolic link
   * (dest_no_symlinks: the path is in a tree the sandboxed command writes, and may link). */
  bool needs_source_id;
  bool dest_no_symlinks;
  uint64_t source_dev;
  uint64_t source_ino;
  /* In memory only too: paths below the bind's root (not owned), each covered by a read-only bind
   * of cover_source (relative to the bundle) on the bind itself as soon as it is attached, so
   * that no path in the container, which a link swapped in could redirect, decides where. */
  const char *covers[OCI_MOUNT_MAX_COVERS];
  const char *cover_source;
  /* In memory only too: a read-only bind of a directory shown through a read-only overlay over
   * its root (its covers in the overlay's layer), so that a unix socket below it refuses
   * connect() and a FIFO below it is a pipe of the overlay's own (cover-overlay.h). */
  bool overlay_view;
} oci_mount;

typedef struct {
  char *path;
  oci_strv args;
  oci_strv env;
  bool has_timeout;
  int64_t timeout; /* seconds, > 0 */
} oci_hook;

typedef struct {
  oci_hook *items;
  size_t len;
} oci_hook_list;

typedef struct {
  oci_hook_list prestart, create_runtime, create_container, start_container, poststart, poststop;
} oci_hooks;

/* --- linux ------------------------------------------------------------------------------------ */

typedef struct {
  char *type; /* pid network mount ipc uts user cgroup time */
  char *path;
} oci_namespace;

typedef struct {
  char *type; /* c b u p */
  char *path;
  bool has_major, has_minor, has_file_mode, has_uid, has_gid;
  int64_t major, minor;
  uint32_t file_mode;
  uint32_t uid, gid;
} oci_device;

typedef struct {
  bool allow;
  char *type; /* a c b, NULL = all */
  bool has_major, has_minor;
  int64_t major, minor;
  char *access; /* rwm */
} oci_device_cgroup;

typedef struct {
  bool has_limit, has_reservation, has_swap, has_kernel, has_kernel_tcp, has_swappiness,
      has_disable_oom_killer, has_use_hierarchy, has_check_before_update;
  int64_t limit, reservation, swap, kernel, kernel_tcp;
  uint64_t swappiness;
  bool disable_oom_killer, use_hierarchy, check_before_update;
} oci_memory;

typedef struct {
  bool has_shares, has_quota, has_burst, has_period, has_realtime_runtime, has_realtime_period,
      has_idle;
  uint64_t shares;
  int64_t quota;
  uint64_t burst;
  uint64_t period;
  int64_t realtime_runtime;
  uint64_t realtime_period;
  char *cpus;
  char *mems;
  int64_t idle;
} oci_cpu;

typedef struct {
  bool has_limit;
  int64_t limit;
} oci_pids;

typedef struct {
  int64_t major, minor;
  bool has_weight, has_leaf_weight;
  uint16_t weight, leaf_weight;
} oci_weight_device;

typedef struct {
  int64_t major, minor;
  uint64_t rate;
} oci_throttle_device;

typedef struct {
  bool has_weight, has_leaf_weight;
  uint16_t weight, leaf_weight;
  oci_weight_device *weight_device;
  size_t n_weight_device;
  oci_throttle_device *throttle_read_bps, *throttle_write_bps, *throttle_read_iops,
      *throttle_write_iops;
  size_t n_throttle_read_bps, n_throttle_write_bps, n_throttle_read_iops, n_throttle_write_iops;
} oci_block_io;

typedef struct {
  char *page_size; /* "2MB", "1GB" */
  uint64_t limit;
} oci_hugepage_limit;

typedef struct {
  char *name;
  uint32_t priority;
} oci_net_priority;

typedef struct {
  bool has_class_id;
  uint32_t class_id;
  oci_net_priority *priorities;
  size_t n_priorities;
} oci_network;

typedef struct {
  char *device; /* map key */
  bool has_hca_handles, has_hca_objects;
  uint32_t hca_handles, hca_objects;
} oci_rdma;

typedef struct {
  oci_device_cgroup *devices;
  size_t n_devices;
  oci_memory *memory;
  oci_cpu *cpu;
  oci_pids *pids;
  oci_block_io *block_io;
  oci_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;
  oci_network *network;
  oci_rdma *rdma;
  size_t n_rdma;
  oci_map unified;
} oci_resources;

typedef struct {
  char *clos_id;
  char *l3_cache_schema;
  char *mem_bw_schema;
  oci_strv schemata;
  bool has_enable_monitoring;
  bool enable_monitoring;
} oci_intel_rdt;

typedef struct {
  char *mode;  /* MPOL_* */
  char *nodes; /* "0-3,7" */
  oci_strv flags;
} oci_memory_policy;

typedef struct {
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  char *op; /* SCMP_CMP_* */
} oci_seccomp_arg;

typedef struct {
  oci_strv names;
  char *action;
  bool has_errno_ret;
  uint32_t errno_ret;
  oci_seccomp_arg *args;
  size_t n_args;
} oci_seccomp_syscall;

typedef struct {
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  oci_strv architectures;
  oci_strv flags;
  char *listener_path;
  char *listener_metadata;
  oci_seccomp_syscall *syscalls;
  size_t n_syscalls;
} oci_seccomp;

typedef struct {
  char *domain; /* LINUX | LINUX32 */
  oci_strv flags;
} oci_personality;

typedef struct {
  bool has_monotonic, has_boottime;
  int64_t monotonic_secs, boottime_secs;
  uint32_t monotonic_nanosecs, boottime_nanosecs;
} oci_time_offsets;

typedef struct {
  char *host_name; /* map key */
  char *name;      /* name inside the container, NULL = same */
} oci_net_device;

typedef struct {
  oci_namespace *namespaces;
  size_t n_namespaces;
  oci_id_mapping *uid_mappings;
  size_t n_uid_mappings;
  oci_id_mapping *gid_mappings;
  size_t n_gid_mappings;
  oci_time_offsets *time_offsets;
  oci_device *devices;
  size_t n_devices;
  oci_net_device *net_devices;
  size_t n_net_devices;
  char *cgroups_path;
  oci_resources *resources;
  oci_intel_rdt *intel_rdt;
  oci_memory_policy *memory_policy;
  oci_map sysctl;
  oci_seccomp *seccomp;
  char *rootfs_propagation;
  oci_strv masked_paths;
  oci_strv readonly_paths;
  char *mount_label;
  oci_personality *personality;
} oci_linux;

/* --- config.json --------------------------------------------------------------------------------
 */

typedef struct {
  char *oci_version;
  char *root_path;
  bool root_readonly;
  bool has_root;
  oci_mount *mounts;
  size_t n_mounts;
  oci_process *process;
  char *hostname;
  char *domainname;
  oci_hooks *hooks;
  oci_map annotations;
  oci_linux *linux_;
} oci_config;

/* --- state.json (OCI state + runc's extra fields) -----------------------------------------------
 */

typedef struct {
  char *oci_version;
  char *id;
  char *status; /* creating created running stopped paused */
  int pid;
  char *bundle;
  oci_map annotations;
  char *rootfs;  /* runc extra */
  char *created; /* RFC 3339, runc extra */
  char *owner;   /* runc extra */
} oci_state;

/* --- features.json -----------------------------------------------------------------------------
 */

typedef struct {
  char *oci_version_min;
  char *oci_version_max;
  oci_strv hooks;
  oci_strv mount_options;
  oci_strv namespaces;
  oci_strv capabilities;
  bool cgroup_v1, cgroup_v2, cgroup_systemd, cgroup_systemd_user, cgroup_rdma;
  bool seccomp_enabled;
  oci_strv seccomp_actions, seccomp_operators, seccomp_archs, seccomp_known_flags,
      seccomp_supported_flags;
  bool apparmor_enabled, selinux_enabled, intel_rdt_enabled, idmap_enabled;
  oci_map annotations;
  oci_strv potentially_unsafe_config_annotations;
  /* runtime-spec 1.3 additions: linux.intelRdt.{schemata,monitoring}, linux.netDevices.enabled,
   * linux.memoryPolicy.{modes,flags} */
  bool intel_rdt_schemata, intel_rdt_monitoring, net_devices_enabled;
  oci_strv memory_policy_modes, memory_policy_flags;
} oci_features;

/* --- Fusion sandbox policy ----------------------------------------------------------------------
 */

typedef struct {
  bool allow_network;
  /* with allowNetwork: "egress" (NULL: the default, a network namespace of the sandbox's own with
   * user-mode networking to the outside) or "host" (the host's network namespace) */
  char *network;
  /* egress: link-local (169.254.0.0/16, cloud metadata) stays reachable; RFC 1918 is made
   * unreachable too (both default false) */
  bool allow_link_local, block_private_networks;
  oci_strv allowed_paths;
  oci_strv writable_paths;
  oci_strv env_allowlist;
  bool has_env_allowlist;
  bool has_cpu_max_cores, has_cpu_max_ms, has_memory_limit_mb, has_pids_limit;
  double cpu_max_cores;
  uint64_t cpu_max_ms;
  uint64_t memory_limit_mb;
  uint64_t pids_limit;
  uint16_t *allowed_tcp_ports;
  size_t n_allowed_tcp_ports;
  char *seccomp; /* "default" | "none" | path; NULL = default */
  /* "best-effort" (NULL) | "require": a requested limit that cannot be enforced is an error */
  char *limits_mode;
  /* the text of the profile file `seccomp` names, as read once by the loader (not in the JSON): the
   * config is built from this copy, so the file cannot change between the check and the use */
  char *seccomp_profile_text;
  size_t seccomp_profile_len;
  /* from a Fusion settings wrapper {"sandbox": {...}} when that form was given */
  char *backend;
  char *failure_mode; /* "fail-hard" | "fallback-native" */
} oci_policy;

/* --- parse / serialise
 * ---------------------------------------------------------------------------- Every parser returns
 * 0 on success or -1 with *err set to a malloc'd one-line message that starts with `what` (e.g.
 * "config.json") and names the JSON path: "config.json: process.rlimits[1].soft: expected an
 * unsigned integer". Serialisers return a malloc'd NUL-terminated JSON text or NULL with *err set.
 * Parse -> serialise -> parse is the identity on the model. */

int oci_config_parse(const char *json, size_t len, const char *what, oci_config **out, char **err);
int oci_config_parse_file(const char *path, const char *what, oci_config **out, char **err);
char *oci_config_serialize(const oci_config *c, bool pretty, char **err);
void oci_config_free(oci_config *c);
/* oci_config_free(*c) unless it is NULL, *c then NULL */
void oci_config_freep(oci_config **c);
#define cleanup_oci_config __attribute__((cleanup(oci_config_freep)))

/* exec's process.json: the `process` object on its own */
int oci_process_parse(const char *json, size_t len, const char *what, oci_process **out,
                      char **err);
char *oci_process_serialize(const oci_process *p, bool pretty, char **err);
void oci_process_free(oci_process *p);

/* a `linux.seccomp` object on its own (the sandbox policy's profile file); unknown keys at its
 * top level and duplicate keys are errors */
int oci_seccomp_parse(const char *json, size_t len, const char *what, oci_seccomp **out,
                      char **err);
void oci_seccomp_free(oci_seccomp *s);

/* update's resources JSON: the `linux.resources` object on its own */
int oci_resources_parse(const char *json, size_t len, const char *what, oci_resources **out,
                        char **err);
char *oci_resources_serialize(const oci_resources *r, bool pretty, char **err);
void oci_resources_free(oci_resources *r);

int oci_state_parse(const char *json, size_t len, const char *what, oci_state **out, char **err);
char *oci_state_serialize(const oci_state *s, bool pretty, char **err);
void oci_state_free(oci_state *s);

int oci_features_parse(const char *json, size_t len, const char *what, oci_features **out,
                       char **err);
char *oci_features_serialize(const oci_features *f, bool pretty, char **err);
void oci_features_free(oci_features *f);

/* Accepts a bare SandboxPolicy or a Fusion settings object {"sandbox": {"backend", "policy",
 * "failureMode"}}. Unknown keys are errors. */
int oci_policy_parse(const char *json, size_t len, const char *what, oci_policy **out, char **err);
/* canonical form: keys sorted, no whitespace; its sha256 is the audit log's policyHash. When
 * backend or failure_mode is set the output is the settings form {"sandbox":{"backend",
 * "failureMode","policy"}}; clear both on a copy to hash the bare policy. */
char *oci_policy_serialize(const oci_policy *p, char **err);
void oci_policy_free(oci_policy *p);

/* Reads a whole file (up to 64 MiB) into a NUL-terminated buffer. */
int oci_read_file(const char *path, char **out, size_t *len, char **err);

/* helpers shared by the model and its users */
void oci_strv_free(oci_strv *v);
/* Appends a copy of s, keeping items NULL-terminated. Aborts when out of memory. */
void oci_strv_push(oci_strv *v, const char *s);
const char *oci_map_get(const oci_map *m, const char *key);
int oci_map_set(oci_map *m, const char *key, const char *value);
/* dst (empty) becomes a copy of src, in linear time: src's keys are unique, as a parsed map's are
 * (oci_map_set scans for the key, so filling a map with it is quadratic). */
int oci_map_copy(oci_map *dst, const oci_map *src);
void oci_map_free(oci_map *m);

/* Field-for-field comparison of two models (NULL equals only NULL). */
bool oci_config_equal(const oci_config *a, const oci_config *b);
bool oci_process_equal(const oci_process *a, const oci_process *b);
bool oci_resources_equal(const oci_resources *a, const oci_resources *b);
bool oci_state_equal(const oci_state *a, const oci_state *b);
bool oci_features_equal(const oci_features *a, const oci_features *b);
bool oci_policy_equal(const oci_policy *a, const oci_policy *b);

#endif
