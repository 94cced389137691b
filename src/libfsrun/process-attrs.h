/* Per-process attributes of the container process that are neither credentials (caps.h) nor
 * filesystem (rootfs.h): process.ioPriority, process.scheduler, process.execCPUAffinity,
 * linux.personality, linux.memoryPolicy, the LSM labels process.apparmorProfile,
 * process.selinuxLabel and linux.mountLabel, and linux.intelRdt (resctrl).
 *
 * Everything is parsed and validated in the runtime before clone (process_attrs_prepare), so the
 * child only makes system calls and bad input is refused before anything exists, with the field in
 * the message. Where each call goes, in the init order (userns sync, setns joins, hostname, rootfs
 * mounts, createContainer hooks, pivot, terminal, finalize, chdir cwd, rlimits, oom_score_adj,
 * user+caps, no_new_privs, landlock, seccomp, close fds, wait, execve):
 *
 * 1. Runtime, before clone:
 *      process_attrs_prepare(config->process, config->linux_, &attrs);
 *      intelrdt_validate(config->linux_->intel_rdt);              (when set)
 * 2. Runtime, after clone, next to the cgroup setup, before the init runs anything of the user's:
 *      intelrdt_apply(rdt, container_id, init_pid);               intelrdt_remove() on delete
 * 3. Rootfs: lsm_mount_label_option(config->linux_->mount_label) gives the `context="..."` option
 *    to add to the data of the mounts fsrun makes (tmpfs, devpts, mqueue, ...).
 * 4. Init, after oom_score_adj and BEFORE user+caps:
 *      process_attrs_apply(attrs, procfs_fd);
 *    = memory policy, scheduler, I/O priority, personality, then the LSM exec labels. Before
 *    user+caps because RT policies and negative nice need CAP_SYS_NICE and IOPRIO_CLASS_RT
 *    CAP_SYS_ADMIN; before no_new_privs because it restricts AppArmor exec transitions; before
 *    landlock and seccomp, which may forbid these calls or the procfs writes.
 * 5. Exec only (the spec says execCPUAffinity does not apply to the init):
 *      process_attrs_apply_cpu_affinity(attrs, CPU_AFFINITY_INITIAL);
 *    in the exec child right after fork, before it joins the container's cgroup, and
 *      process_attrs_apply_cpu_affinity(attrs, CPU_AFFINITY_FINAL);
 *    after the cgroup join (a cpuset cgroup resets affinity on attach), right before seccomp and
 *    execve. Without `final` the affinity the kernel gives is kept.
 *
 * Probes for `fsrun features`: lsm_apparmor_enabled(), lsm_selinux_enabled(), intelrdt_available().
 */
#ifndef FSRUN_PROCESS_ATTRS_H
#define FSRUN_PROCESS_ATTRS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

/* sched_setattr(2)'s argument, SCHED_ATTR_SIZE_VER1 (glibc 2.36 does not declare it). */
struct fsrun_sched_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

/* A CPU or memory-node list parsed from "0-3,7". */
struct fsrun_bitmask {
  unsigned long *bits;
  size_t n_bits; /* highest set bit + 1 */
};

struct fsrun_process_attrs {
  bool has_io_priority;
  int io_priority; /* IOPRIO_PRIO_VALUE(class, level) */

  bool has_scheduler;
  struct fsrun_sched_attr scheduler;

  bool has_personality;
  unsigned long personality;

  bool has_memory_policy;
  int memory_policy_mode; /* MPOL_* | MPOL_F_* */
  struct fsrun_bitmask memory_nodes;

  struct fsrun_bitmask cpu_affinity_initial, cpu_affinity_final; /* n_bits 0: not set */

  char *apparmor_profile; /* NULL: not asked for */
  char *selinux_label;
};

/* Parses and validates the attributes of p (may be NULL) and l (may be NULL; pass NULL for `exec`
 * if linux.* attributes should not be re-applied). Refuses an LSM label the host cannot apply:
 * "process.apparmorProfile: AppArmor is not enabled on this host". */
int process_attrs_prepare(const oci_process *p, const oci_linux *l,
                          struct fsrun_process_attrs **out, fsrun_error_t *err);
void process_attrs_free(struct fsrun_process_attrs *a);
/* process_attrs_free(*a), *a then NULL */
void process_attrs_freep(struct fsrun_process_attrs **a);
#define cleanup_process_attrs __attribute__((cleanup(process_attrs_freep)))

/* In the init (or exec child): memory policy, scheduler, I/O priority, personality, then the LSM
 * exec labels (written to /proc/thread-self/attr/... through procfs_fd, a handle on a procfs root
 * the runtime opened and verified; -1 = open and verify /proc now). Allocates nothing on success.
 */
int process_attrs_apply(const struct fsrun_process_attrs *a, int procfs_fd, fsrun_error_t *err);

/* process.scheduler for pid, from the runtime: it still has the privilege (CAP_SYS_NICE in the
 * initial user namespace) that an init in a user namespace lacks; children inherit the policy.
 * Nothing when the config has no scheduler. */
int process_attrs_apply_scheduler(const struct fsrun_process_attrs *a, pid_t pid,
                                  fsrun_error_t *err);
/* The same for the calling process, which clones once more before execve (exec into a pid
 * namespace): a reset-on-fork policy is set without the flag, so that the clone keeps it; the clone
 * then calls process_attrs_apply_scheduler_after_clone, which adds the flag to the policy it
 * inherited (that needs no privilege: the clone has only the container's). */
int process_attrs_apply_scheduler_before_clone(const struct fsrun_process_attrs *a,
                                               fsrun_error_t *err);
int process_attrs_apply_scheduler_after_clone(const struct fsrun_process_attrs *a,
                                              fsrun_error_t *err);

typedef enum { CPU_AFFINITY_INITIAL, CPU_AFFINITY_FINAL } fsrun_cpu_affinity_stage;
/* sched_setaffinity for execCPUAffinity.initial/final; nothing when that one is not set. */
int process_attrs_apply_cpu_affinity(const struct fsrun_process_attrs *a,
                                     fsrun_cpu_affinity_stage stage, fsrun_error_t *err);

/* --- parsers, exposed for tests and for other modules (cpuset strings)
 * ----------------------------- */

/* "0-3,7" -> bitmask; what names the field in errors ("process.execCPUAffinity.initial"). An empty
 * string is an error unless allow_empty. Highest accepted id: 65535. */
int fsrun_id_list_parse(const char *s, bool allow_empty, const char *what,
                        struct fsrun_bitmask *out, fsrun_error_t *err);
void fsrun_bitmask_release(struct fsrun_bitmask *m);
bool fsrun_bitmask_test(const struct fsrun_bitmask *m, size_t bit);
/* IOPRIO_CLASS_RT=1, _BE=2, _IDLE=3; -1 when unknown. */
int ioprio_class_from_name(const char *name);
/* SCHED_OTHER=0 ... SCHED_DEADLINE=6 (SCHED_ISO=4 is known but refused: Linux never had it); -1. */
int sched_policy_from_name(const char *name);
/* MPOL_DEFAULT ... MPOL_WEIGHTED_INTERLEAVE; -1 when unknown. */
int mempolicy_mode_from_name(const char *name);

/* --- LSMs
 * ----------------------------------------------------------------------------------------- */

bool lsm_apparmor_enabled(void);
bool lsm_selinux_enabled(void);
/* *out = `context="LABEL"` for a mount's data (NULL when label is NULL). An error when SELinux is
 * not enabled ("linux.mountLabel: SELinux is not enabled on this host") or the label cannot be
 * quoted. */
int lsm_mount_label_option(const char *label, char **out, fsrun_error_t *err);
/* The same without the host check (the formatting rule, for tests and for callers that checked). */
int lsm_format_mount_label(const char *label, char **out, fsrun_error_t *err);

/* --- Intel RDT (resctrl)
 * --------------------------------------------------------------------------- */

/* resctrl is mounted at /sys/fs/resctrl (checked by filesystem magic). */
bool intelrdt_available(void);
/* Before clone: schemata shapes (no newlines, memBwSchema starts with "MB:"), a usable closID, and
 * "linux.intelRdt: resctrl is not mounted/available on this host" when it is not. */
int intelrdt_validate(const oci_intel_rdt *rdt, fsrun_error_t *err);
/* Runtime, after clone: creates or joins the CLOS group (closID, else the container id), writes the
 * schemata as the spec orders them, creates mon_groups/<id> for enableMonitoring, and writes pid to
 * the group's tasks (and the MON group's). */
int intelrdt_apply(const oci_intel_rdt *rdt, const char *container_id, pid_t pid,
                   fsrun_error_t *err);
/* On delete: removes the MON group and the group fsrun created (never a closID group). */
int intelrdt_remove(const oci_intel_rdt *rdt, const char *container_id, fsrun_error_t *err);
/* Tests only: use DIR (any directory) instead of /sys/fs/resctrl and skip the filesystem check. */
void intelrdt_set_root_for_testing(const char *dir);

#endif
