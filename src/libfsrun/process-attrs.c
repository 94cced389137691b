/* process.ioPriority, process.scheduler, process.execCPUAffinity, linux.personality,
 * linux.memoryPolicy, LSM labels and linux.intelRdt.
 *
 * Names and lists are parsed once, in the runtime, into plain numbers and bitmasks; the child side
 * is a handful of system calls. glibc 2.36 lacks wrappers for sched_setattr, ioprio_set and
 * set_mempolicy, and the build host's uapi headers may predate the running kernel, so the few
 * constants are declared here. */
#include "process-attrs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "openat2-compat.h"
#include "utils.h"

#define PROC_SUPER_MAGIC_VALUE     0x9fa0
#define RDTGROUP_SUPER_MAGIC_VALUE 0x7655821
#define PROC_ROOT_INODE            1

#define IOPRIO_CLASS_SHIFT  13
#define IOPRIO_WHO_PROCESS_ 1
/* linux/sched/types.h: a child forked by the process starts with the default policy */
#define SCHED_FLAG_RESET_ON_FORK_ 0x01

#define MPOL_F_STATIC_NODES_   (1 << 15)
#define MPOL_F_RELATIVE_NODES_ (1 << 14)
#define MPOL_F_NUMA_BALANCING_ (1 << 13)

#define SCHED_ISO_      4
#define SCHED_DEADLINE_ 6
#define SCHED_ATTR_SIZE 56 /* SCHED_ATTR_SIZE_VER1: with the utilization clamps */

#define ID_LIST_MAX 65535

#define BITS_PER_WORD (sizeof(unsigned long) * CHAR_BIT)

/* --- name tables
 * ---------------------------------------------------------------------------------- */

struct name_value {
  const char *name;
  long value;
};

static long lookup(const struct name_value *table, size_t n, const char *name) {
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0)
      return table[i].value;
  return -1;
}
#define LOOKUP(table, name) lookup(table, sizeof(table) / sizeof(table[0]), name)

static const struct name_value ioprio_classes[] = {
    {"IOPRIO_CLASS_RT", 1},
    {"IOPRIO_CLASS_BE", 2},
    {"IOPRIO_CLASS_IDLE", 3},
};

static const struct name_value sched_policies[] = {
    {"SCHED_OTHER", 0}, {"SCHED_FIFO", 1}, {"SCHED_RR", 2},       {"SCHED_BATCH", 3},
    {"SCHED_ISO", 4},   {"SCHED_IDLE", 5}, {"SCHED_DEADLINE", 6},
};

static const struct name_value sched_flags[] = {
    {"SCHED_FLAG_RESET_ON_FORK", SCHED_FLAG_RESET_ON_FORK_},
    {"SCHED_FLAG_RECLAIM", 0x02},
    {"SCHED_FLAG_DL_OVERRUN", 0x04},
    {"SCHED_FLAG_KEEP_POLICY", 0x08},
    {"SCHED_FLAG_KEEP_PARAMS", 0x10},
    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
    {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
};

static const struct name_value mempolicy_modes[] = {
    {"MPOL_DEFAULT", 0},
    {"MPOL_PREFERRED", 1},
    {"MPOL_BIND", 2},
    {"MPOL_INTERLEAVE", 3},
    {"MPOL_LOCAL", 4},
    {"MPOL_PREFERRED_MANY", 5},
    {"MPOL_WEIGHTED_INTERLEAVE", 6},
};

static const struct name_value mempolicy_flags[] = {
    {"MPOL_F_NUMA_BALANCING", MPOL_F_NUMA_BALANCING_},
    {"MPOL_F_RELATIVE_NODES", MPOL_F_RELATIVE_NODES_},
    {"MPOL_F_STATIC_NODES", MPOL_F_STATIC_NODES_},
};

static const struct name_value personality_domains[] = {
    {"LINUX", PER_LINUX},
    {"LINUX32", PER_LINUX32},
};

/* The spec defines no flag yet; fsrun accepts personality(2)'s own flag names. */
static const struct name_value personality_flags[] = {
    {"ADDR_COMPAT_LAYOUT", ADDR_COMPAT_LAYOUT}, {"ADDR_LIMIT_32BIT", ADDR_LIMIT_32BIT},
    {"ADDR_LIMIT_3GB", ADDR_LIMIT_3GB},         {"ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE},
    {"FDPIC_FUNCPTRS", FDPIC_FUNCPTRS},         {"MMAP_PAGE_ZERO", MMAP_PAGE_ZERO},
    {"READ_IMPLIES_EXEC", READ_IMPLIES_EXEC},   {"SHORT_INODE", SHORT_INODE},
    {"STICKY_TIMEOUTS", STICKY_TIMEOUTS},       {"UNAME26", UNAME26},
    {"WHOLE_SECONDS", WHOLE_SECONDS},
};

int ioprio_class_from_name(const char *name) {
  return (int)LOOKUP(ioprio_classes, name);
}

int sched_policy_from_name(const char *name) {
  return (int)LOOKUP(sched_policies, name);
}

int mempolicy_mode_from_name(const char *name) {
  return (int)LOOKUP(mempolicy_modes, name);
}

/* --- id lists
 * ------------------------------------------------------------------------------------- */

void fsrun_bitmask_release(struct fsrun_bitmask *m) {
  free(m->bits);
  m->bits = NULL;
  m->n_bits = 0;
}

bool fsrun_bitmask_test(const struct fsrun_bitmask *m, size_t bit) {
  if (bit >= m->n_bits)
    return false;
  return (m->bits[bit / BITS_PER_WORD] >> (bit % BITS_PER_WORD)) & 1UL;
}

static size_t bitmask_words(const struct fsrun_bitmask *m) {
  return (m->n_bits + BITS_PER_WORD - 1) / BITS_PER_WORD;
}

/* One decimal id, no sign, no leading '+' or spaces (strtoul would take them). */
static int parse_id(const char **p, unsigned long *out) {
  char *end;
  if (!isdigit((unsigned char)**p))
    return -1;
  errno = 0;
  *out = strtoul(*p, &end, 10);
  if (errno != 0 || *out > ID_LIST_MAX)
    return -1;
  *p = end;
  return 0;
}

int fsrun_id_list_parse(const char *s, bool allow_empty, const char *what,
                        struct fsrun_bitmask *out, fsrun_error_t *err) {
  unsigned long highest = 0;
  bool any = false;
  const char *p;

  memset(out, 0, sizeof(*out));
  if (s == NULL || *s == '\0') {
    if (allow_empty)
      return 0;
    return fsrun_error_make(err, 0, "%s: empty list", what);
  }
  /* Two passes: validate and find the highest id, then fill. */
  for (int pass = 0; pass < 2; pass++) {
    p = s;
    for (;;) {
      unsigned long lo, hi;
      if (parse_id(&p, &lo) < 0)
        return fsrun_error_make(err, 0, "%s: `%s`: expected a list like `0-3,7` (ids up to %d)",
                                what, s, ID_LIST_MAX);
      hi = lo;
      if (*p == '-') {
        p++;
        if (parse_id(&p, &hi) < 0 || hi < lo)
          return fsrun_error_make(err, 0,
                                  "%s: `%s`: a range must be `LOW-HIGH` with LOW <= HIGH (ids up "
                                  "to %d)",
                                  what, s, ID_LIST_MAX);
      }
      if (pass == 0) {
        any = true;
        if (hi > highest)
          highest = hi;
      } else {
        for (unsigned long id = lo; id <= hi; id++)
          out->bits[id / BITS_PER_WORD] |= 1UL << (id % BITS_PER_WORD);
      }
      if (*p == '\0')
        break;
      if (*p != ',')
        return fsrun_error_make(err, 0, "%s: `%s`: unexpected `%c`", what, s, *p);
      p++;
    }
    if (pass == 0 && any) {
      out->n_bits = highest + 1;
      out->bits = xmalloc0(bitmask_words(out) * sizeof(unsigned long));
    }
  }
  return 0;
}

/* --- prepare
 * -------------------------------------------------------------------------------------- */

void process_attrs_free(struct fsrun_process_attrs *a) {
  if (a == NULL)
    return;
  fsrun_bitmask_release(&a->memory_nodes);
  fsrun_bitmask_release(&a->cpu_affinity_initial);
  fsrun_bitmask_release(&a->cpu_affinity_final);
  free(a->apparmor_profile);
  free(a->selinux_label);
  free(a);
}

void process_attrs_freep(struct fsrun_process_attrs **a) {
  process_attrs_free(*a);
  *a = NULL;
}

static int prepare_io_priority(const oci_io_priority *io, struct fsrun_process_attrs *a,
                               fsrun_error_t *err) {
  int cls = ioprio_class_from_name(io->class_);
  if (cls < 0)
    return fsrun_error_make(err, 0,
                            "process.ioPriority.class: unknown class `%s` (expected "
                            "IOPRIO_CLASS_RT, IOPRIO_CLASS_BE or IOPRIO_CLASS_IDLE)",
                            io->class_ != NULL ? io->class_ : "");
  if (io->priority < 0 || io->priority > 7)
    return fsrun_error_make(
        err, 0, "process.ioPriority.priority: %d is out of range (0 highest .. 7 lowest)",
        (int)io->priority);
  a->has_io_priority = true;
  a->io_priority = (cls << IOPRIO_CLASS_SHIFT) | io->priority;
  return 0;
}

static int prepare_scheduler(const oci_scheduler *s, struct fsrun_process_attrs *a,
                             fsrun_error_t *err) {
  struct fsrun_sched_attr *attr = &a->scheduler;
  int policy = sched_policy_from_name(s->policy);
  bool realtime = policy == 1 || policy == 2;

  if (policy < 0)
    return fsrun_error_make(err, 0,
                            "process.scheduler.policy: unknown policy `%s` (expected SCHED_OTHER, "
                            "SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_ISO, SCHED_IDLE or "
                            "SCHED_DEADLINE)",
                            s->policy != NULL ? s->policy : "");
  if (policy == SCHED_ISO_)
    return fsrun_error_make(
        err, 0,
        "process.scheduler.policy: SCHED_ISO is reserved: Linux does not provide "
        "this policy");
  memset(attr, 0, sizeof(*attr));
  attr->size = SCHED_ATTR_SIZE;
  attr->sched_policy = (uint32_t)policy;
  if (s->has_nice) {
    if (s->nice < -20 || s->nice > 19)
      return fsrun_error_make(err, 0, "process.scheduler.nice: %d is out of range (-20..19)",
                              (int)s->nice);
    attr->sched_nice = s->nice;
  }
  if (s->has_priority && s->priority != 0) {
    if (!realtime)
      return fsrun_error_make(err, 0,
                              "process.scheduler.priority: must be 0 for %s (only SCHED_FIFO and "
                              "SCHED_RR have a static priority)",
                              s->policy);
    if (s->priority < 1 || s->priority > 99)
      return fsrun_error_make(err, 0, "process.scheduler.priority: %d is out of range (1..99)",
                              (int)s->priority);
    attr->sched_priority = (uint32_t)s->priority;
  } else if (realtime) {
    return fsrun_error_make(
        err, 0, "process.scheduler.priority: %s needs a priority between 1 and 99", s->policy);
  }
  for (size_t i = 0; i < s->flags.len; i++) {
    long flag = LOOKUP(sched_flags, s->flags.items[i]);
    if (flag < 0)
      return fsrun_error_make(err, 0, "process.scheduler.flags[%zu]: unknown flag `%s`", i,
                              s->flags.items[i]);
    attr->sched_flags |= (uint64_t)flag;
  }
  /* The spec has no clamp values: a clamp flag resets that clamp to the system default. */
  attr->sched_util_min = UINT32_MAX;
  attr->sched_util_max = UINT32_MAX;

  if (policy == SCHED_DEADLINE_) {
    if (!s->has_runtime || s->runtime < 1024)
      return fsrun_error_make(err, 0,
                              "process.scheduler.runtime: SCHED_DEADLINE needs a runtime of at "
                              "least 1024 ns");
    if (!s->has_deadline || s->deadline < s->runtime)
      return fsrun_error_make(err, 0,
                              "process.scheduler.deadline: SCHED_DEADLINE needs a deadline no "
                              "smaller than runtime");
    if (s->has_period && s->period != 0 && s->period < s->deadline)
      return fsrun_error_make(err, 0,
                              "process.scheduler.period: must be 0 (= deadline) or no smaller than "
                              "deadline");
    attr->sched_runtime = s->runtime;
    attr->sched_deadline = s->deadline;
    attr->sched_period = s->has_period ? s->period : 0;
  } else if ((s->has_runtime && s->runtime) || (s->has_deadline && s->deadline) ||
             (s->has_period && s->period)) {
    return fsrun_error_make(err, 0,
                            "process.scheduler: runtime, deadline and period apply only to "
                            "SCHED_DEADLINE, not %s",
                            s->policy);
  }
  a->has_scheduler = true;
  return 0;
}

static int prepare_personality(const oci_personality *p, struct fsrun_process_attrs *a,
                               fsrun_error_t *err) {
  long domain = LOOKUP(personality_domains, p->domain);
  if (domain < 0)
    return fsrun_error_make(err, 0,
                            "linux.personality.domain: unknown domain `%s` (expected LINUX or "
                            "LINUX32)",
                            p->domain != NULL ? p->domain : "");
  a->personality = (unsigned long)domain;
  for (size_t i = 0; i < p->flags.len; i++) {
    long flag = LOOKUP(personality_flags, p->flags.items[i]);
    if (flag < 0)
      return fsrun_error_make(err, 0, "linux.personality.flags[%zu]: unknown flag `%s`", i,
                              p->flags.items[i]);
    a->personality |= (unsigned long)flag;
  }
  a->has_personality = true;
  return 0;
}

static int prepare_memory_policy(const oci_memory_policy *mp, struct fsrun_process_attrs *a,
                                 fsrun_error_t *err) {
  int mode = mempolicy_mode_from_name(mp->mode);
  int flags = 0;
  bool has_nodes = mp->nodes != NULL && mp->nodes[0] != '\0';
  int ret;

  if (mode < 0)
    return fsrun_error_make(err, 0,
                            "linux.memoryPolicy.mode: unknown mode `%s` (expected MPOL_DEFAULT, "
                            "MPOL_BIND, MPOL_INTERLEAVE, MPOL_WEIGHTED_INTERLEAVE, MPOL_PREFERRED, "
                            "MPOL_PREFERRED_MANY or MPOL_LOCAL)",
                            mp->mode != NULL ? mp->mode : "");
  for (size_t i = 0; i < mp->flags.len; i++) {
    long flag = LOOKUP(mempolicy_flags, mp->flags.items[i]);
    if (flag < 0)
      return fsrun_error_make(err, 0, "linux.memoryPolicy.flags[%zu]: unknown flag `%s`", i,
                              mp->flags.items[i]);
    flags |= (int)flag;
  }
  if ((flags & MPOL_F_STATIC_NODES_) && (flags & MPOL_F_RELATIVE_NODES_))
    return fsrun_error_make(err, 0,
                            "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
                            "MPOL_F_RELATIVE_NODES exclude each other");
  /* MPOL_DEFAULT and MPOL_LOCAL take no nodes; MPOL_PREFERRED may (empty = local); the rest must.
   */
  if ((mode == 0 || mode == 4) && has_nodes)
    return fsrun_error_make(err, 0, "linux.memoryPolicy.nodes: %s takes no nodes", mp->mode);
  if (mode != 0 && mode != 4 && mode != 1 && !has_nodes)
    return fsrun_error_make(err, 0, "linux.memoryPolicy.nodes: %s needs at least one node",
                            mp->mode);
  if (has_nodes) {
    ret = fsrun_id_list_parse(mp->nodes, false, "linux.memoryPolicy.nodes", &a->memory_nodes, err);
    if (ret < 0)
      return ret;
  }
  a->memory_policy_mode = mode | flags;
  a->has_memory_policy = true;
  return 0;
}

int process_attrs_prepare(const oci_process *p, const oci_linux *l,
                          struct fsrun_process_attrs **out, fsrun_error_t *err) {
  cleanup_process_attrs struct fsrun_process_attrs *a = xmalloc0(sizeof(*a));
  int ret = 0;

  *out = NULL;
  if (p != NULL) {
    if (p->io_priority != NULL && (ret = prepare_io_priority(p->io_priority, a, err)) < 0)
      return ret;
    if (p->scheduler != NULL && (ret = prepare_scheduler(p->scheduler, a, err)) < 0)
      return ret;
    if (p->exec_cpu_affinity != NULL) {
      ret = fsrun_id_list_parse(p->exec_cpu_affinity->initial, true,
                                "process.execCPUAffinity.initial", &a->cpu_affinity_initial, err);
      if (ret == 0)
        ret = fsrun_id_list_parse(p->exec_cpu_affinity->final, true,
                                  "process.execCPUAffinity.final", &a->cpu_affinity_final, err);
      if (ret < 0)
        return ret;
    }
    if (p->apparmor_profile != NULL && p->apparmor_profile[0] != '\0') {
      if (strchr(p->apparmor_profile, '\n') != NULL)
        return fsrun_error_make(err, 0, "process.apparmorProfile: contains a newline");
      if (!lsm_apparmor_enabled())
        return fsrun_error_make(err, 0,
                                "process.apparmorProfile: AppArmor is not enabled on this host");
      a->apparmor_profile = xstrdup(p->apparmor_profile);
    }
    if (p->selinux_label != NULL && p->selinux_label[0] != '\0') {
      if (strchr(p->selinux_label, '\n') != NULL)
        return fsrun_error_make(err, 0, "process.selinuxLabel: contains a newline");
      if (!lsm_selinux_enabled())
        return fsrun_error_make(err, 0,
                                "process.selinuxLabel: SELinux is not enabled on this host");
      a->selinux_label = xstrdup(p->selinux_label);
    }
  }
  if (l != NULL) {
    if (l->personality != NULL && (ret = prepare_personality(l->personality, a, err)) < 0)
      return ret;
    if (l->memory_policy != NULL && (ret = prepare_memory_policy(l->memory_policy, a, err)) < 0)
      return ret;
    if (l->mount_label != NULL && l->mount_label[0] != '\0') {
      cleanup_free char *option = NULL;
      if ((ret = lsm_mount_label_option(l->mount_label, &option, err)) < 0)
        return ret;
    }
  }
  *out = steal_ptr(&a);
  return 0;
}

/* --- apply
 * ---------------------------------------------------------------------------------------- */

static bool is_procfs_root(int fd) {
  struct statfs sfs;
  struct stat st;
  return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_VALUE && fstat(fd, &st) == 0 &&
         st.st_ino == PROC_ROOT_INODE;
}

/* Opens PATH under the procfs root procfs_fd for writing without leaving that procfs mount (an
 * overmount on any component fails with EXDEV) and checks that the file is on procfs. */
static int open_proc_attr(int procfs_fd, const char *path) {
  struct open_how how = {
      .flags = O_WRONLY | O_CLOEXEC,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  struct statfs sfs;
  long fd = openat2_compat(procfs_fd, path, &how);
  if (fd < 0)
    return -1;
  if (fstatfs((int)fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC_VALUE) {
    close((int)fd);
    errno = EXDEV;
    return -1;
  }
  return (int)fd;
}

static int write_proc_attr(int procfs_fd, const char *path, const char *fallback, const char *value,
                           const char *what, fsrun_error_t *err) {
  cleanup_close int fd = open_proc_attr(procfs_fd, path);
  size_t len = strlen(value);
  ssize_t n;
  if (fd < 0 && errno == ENOENT && fallback != NULL) {
    path = fallback;
    fd = open_proc_attr(procfs_fd, path);
  }
  if (fd < 0)
    return fsrun_error_errno(err, "%s: open `/proc/%s`", what, path);
  /* LSM attributes take the whole value in one write. */
  n = write(fd, value, len);
  if (n < 0)
    return fsrun_error_errno(err, "%s: write `/proc/%s`", what, path);
  if ((size_t)n != len)
    return fsrun_error_make(err, 0, "%s: short write to `/proc/%s`", what, path);
  return 0;
}

static int apply_lsm_labels(const struct fsrun_process_attrs *a, int procfs_fd,
                            fsrun_error_t *err) {
  cleanup_close int own_fd = -1;
  int ret;
  if (a->apparmor_profile == NULL && a->selinux_label == NULL)
    return 0;
  if (procfs_fd < 0) {
    own_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (own_fd < 0)
      return fsrun_error_errno(err, "LSM labels: open `/proc`");
    procfs_fd = own_fd;
  }
  if (!is_procfs_root(procfs_fd))
    return fsrun_error_make(err, 0, "LSM labels: the procfs handle is not a procfs root");

  if (a->apparmor_profile != NULL) {
    char buf[4096];
    int len = snprintf(buf, sizeof(buf), "exec %s", a->apparmor_profile);
    if (len < 0 || (size_t)len >= sizeof(buf))
      return fsrun_error_make(err, 0, "process.apparmorProfile: too long");
    ret = write_proc_attr(procfs_fd, "thread-self/attr/apparmor/exec", "thread-self/attr/exec", buf,
                          "process.apparmorProfile", err);
    if (ret < 0)
      return ret;
  }
  if (a->selinux_label != NULL) {
    ret = write_proc_attr(procfs_fd, "thread-self/attr/exec", NULL, a->selinux_label,
                          "process.selinuxLabel", err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int process_attrs_apply_scheduler(const struct fsrun_process_attrs *a, pid_t pid,
                                  fsrun_error_t *err) {
  if (a == NULL || !a->has_scheduler)
    return 0;
  if (syscall(SYS_sched_setattr, pid, &a->scheduler, 0) < 0) {
    if (errno == EPERM)
      return fsrun_error_errno(err, "process.scheduler: sched_setattr (real-time policies and "
                                    "negative nice need CAP_SYS_NICE)");
    return fsrun_error_errno(err, "process.scheduler: sched_setattr");
  }
  return 0;
}

int process_attrs_apply_scheduler_before_clone(const struct fsrun_process_attrs *a,
                                               fsrun_error_t *err) {
  struct fsrun_process_attrs kept;
  if (a == NULL || !a->has_scheduler)
    return 0;
  kept = *a;
  kept.scheduler.sched_flags &= ~(uint64_t)SCHED_FLAG_RESET_ON_FORK_;
  return process_attrs_apply_scheduler(&kept, 0, err);
}

int process_attrs_apply_scheduler_after_clone(const struct fsrun_process_attrs *a,
                                              fsrun_error_t *err) {
  if (a == NULL || !a->has_scheduler || !(a->scheduler.sched_flags & SCHED_FLAG_RESET_ON_FORK_))
    return 0;
  return process_attrs_apply_scheduler(a, 0, err);
}

int process_attrs_apply(const struct fsrun_process_attrs *a, int procfs_fd, fsrun_error_t *err) {
  if (a == NULL)
    return 0;
  if (a->has_memory_policy) {
    const struct fsrun_bitmask *nodes = &a->memory_nodes;
    /* the kernel reads maxnode - 1 bits (a historical off-by-one) */
    unsigned long maxnode = nodes->n_bits > 0 ? nodes->n_bits + 1 : 0;
    if (syscall(SYS_set_mempolicy, a->memory_policy_mode, nodes->n_bits > 0 ? nodes->bits : NULL,
                maxnode) < 0)
      return fsrun_error_errno(err, "linux.memoryPolicy: set_mempolicy");
  }
  if (a->has_scheduler && process_attrs_apply_scheduler(a, 0, err) < 0)
    return fsrun_error_code(err);
  if (a->has_io_priority) {
    if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, 0, a->io_priority) < 0)
      return fsrun_error_errno(err, "process.ioPriority: ioprio_set");
  }
  if (a->has_personality) {
    if (personality(a->personality) < 0)
      return fsrun_error_errno(err, "linux.personality: personality(0x%lx)", a->personality);
  }
  return apply_lsm_labels(a, procfs_fd, err);
}

int process_attrs_apply_cpu_affinity(const struct fsrun_process_attrs *a,
                                     fsrun_cpu_affinity_stage stage, fsrun_error_t *err) {
  const struct fsrun_bitmask *m;
  if (a == NULL)
    return 0;
  m = stage == CPU_AFFINITY_INITIAL ? &a->cpu_affinity_initial : &a->cpu_affinity_final;
  if (m->n_bits == 0)
    return 0;
  /* cpu_set_t is an array of unsigned long bits, the layout of our bitmask */
  if (sched_setaffinity(0, bitmask_words(m) * sizeof(unsigned long), (cpu_set_t *)m->bits) < 0)
    return fsrun_error_errno(err, "process.execCPUAffinity.%s: sched_setaffinity",
                             stage == CPU_AFFINITY_INITIAL ? "initial" : "final");
  return 0;
}

/* --- LSMs
 * ----------------------------------------------------------------------------------------- */

bool lsm_apparmor_enabled(void) {
  char buf[8] = "";
  cleanup_close int fd =
      open("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  return fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && buf[0] == 'Y';
}

bool lsm_selinux_enabled(void) {
  /* The kernel registers selinuxfs only when SELinux was enabled at boot. */
  cleanup_free char *filesystems = NULL;
  size_t len = 0;
  fsrun_error_t err = NULL;
  bool enabled = false;
  if (read_file_at(AT_FDCWD, "/proc/filesystems", &filesystems, &len, &err) == 0)
    enabled = strstr(filesystems, "\tselinuxfs\n") != NULL;
  fsrun_error_release(&err);
  return enabled;
}

int lsm_format_mount_label(const char *label, char **out, fsrun_error_t *err) {
  *out = NULL;
  if (label == NULL || label[0] == '\0')
    return 0;
  /* The option is quoted because MCS labels contain commas ("s0:c1,c2"); a quote or a newline could
   * not be carried through the mount data. */
  if (strpbrk(label, "\"\n") != NULL)
    return fsrun_error_make(err, 0, "linux.mountLabel: `%s` contains a quote or a newline", label);
  *out = xasprintf("context=\"%s\"", label);
  return 0;
}

int lsm_mount_label_option(const char *label, char **out, fsrun_error_t *err) {
  *out = NULL;
  if (label == NULL || label[0] == '\0')
    return 0;
  if (!lsm_selinux_enabled())
    return fsrun_error_make(err, 0, "linux.mountLabel: SELinux is not enabled on this host");
  return lsm_format_mount_label(label, out, err);
}

/* --- Intel RDT
 * ------------------------------------------------------------------------------------ */

static const char *resctrl_root = "/sys/fs/resctrl";
static bool resctrl_testing;

void intelrdt_set_root_for_testing(const char *dir) {
  resctrl_root = dir;
  resctrl_testing = true;
}

bool intelrdt_available(void) {
  struct statfs sfs;
  if (resctrl_testing)
    return true;
  return statfs(resctrl_root, &sfs) == 0 && sfs.f_type == RDTGROUP_SUPER_MAGIC_VALUE;
}

static bool group_name_valid(const char *name) {
  return name != NULL && name[0] != '\0' && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
         strpbrk(name, "/\n") == NULL;
}

static bool closid_is_root(const oci_intel_rdt *rdt) {
  return rdt->clos_id != NULL && strcmp(rdt->clos_id, "/") == 0;
}

int intelrdt_validate(const oci_intel_rdt *rdt, fsrun_error_t *err) {
  if (rdt == NULL)
    return 0;
  if (rdt->clos_id != NULL && !closid_is_root(rdt) && !group_name_valid(rdt->clos_id))
    return fsrun_error_make(err, 0, "linux.intelRdt.closID: `%s` is not a valid resctrl group name",
                            rdt->clos_id);
  if (rdt->l3_cache_schema != NULL && strchr(rdt->l3_cache_schema, '\n') != NULL)
    return fsrun_error_make(err, 0, "linux.intelRdt.l3CacheSchema: must not contain newlines");
  if (rdt->mem_bw_schema != NULL &&
      (strncmp(rdt->mem_bw_schema, "MB:", 3) != 0 || strchr(rdt->mem_bw_schema, '\n') != NULL))
    return fsrun_error_make(err, 0,
                            "linux.intelRdt.memBwSchema: must start with `MB:` and not contain "
                            "newlines");
  for (size_t i = 0; i < rdt->schemata.len; i++)
    if (strchr(rdt->schemata.items[i], '\n') != NULL)
      return fsrun_error_make(err, 0, "linux.intelRdt.schemata[%zu]: must not contain newlines", i);
  if (!intelrdt_available())
    return fsrun_error_make(err, 0,
                            "linux.intelRdt: resctrl is not mounted/available on this host");
  return 0;
}

static char *trim(char *s) {
  char *end;
  while (isspace((unsigned char)*s))
    s++;
  end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1]))
    *--end = '\0';
  return s;
}

/* Whether the group's schemata file has the line `want` (spaces around lines and case ignored: the
 * kernel pads and prints hex in its own way). */
static int schemata_has_line(int group_fd, const char *want, bool *found, fsrun_error_t *err) {
  cleanup_free char *content = NULL;
  cleanup_free char *want_copy = xstrdup(want);
  char *w = trim(want_copy), *save = NULL;
  size_t len;
  int ret = read_file_at(group_fd, "schemata", &content, &len, err);
  if (ret < 0)
    return ret;
  *found = false;
  for (char *line = strtok_r(content, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    if (strcasecmp(trim(line), w) == 0)
      *found = true;
  return 0;
}

static int write_line_at(int dirfd, const char *file, const char *line, const char *what,
                         fsrun_error_t *err) {
  cleanup_free char *data = xasprintf("%s\n", line);
  int ret = write_file_at(dirfd, file, data, strlen(data), err);
  if (ret < 0)
    return fsrun_error_wrap(err, "%s", what);
  return 0;
}

int intelrdt_apply(const oci_intel_rdt *rdt, const char *container_id, pid_t pid,
                   fsrun_error_t *err) {
  cleanup_close int root_fd = -1;
  cleanup_close int group_fd = -1;
  cleanup_free char *pid_text = NULL;
  const char *group;
  bool has_schema, created = false;
  int ret;

  if (rdt == NULL)
    return 0;
  ret = intelrdt_validate(rdt, err);
  if (ret < 0)
    return ret;
  if (!group_name_valid(container_id))
    return fsrun_error_make(err, 0, "linux.intelRdt: invalid container id for a group name");
  group = rdt->clos_id != NULL ? rdt->clos_id : container_id;
  has_schema = rdt->l3_cache_schema != NULL || rdt->mem_bw_schema != NULL || rdt->schemata.len > 0;

  root_fd = open(resctrl_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return fsrun_error_errno(err, "linux.intelRdt: open `%s`", resctrl_root);

  if (closid_is_root(rdt)) {
    group_fd = dup(root_fd);
  } else {
    group_fd = openat(root_fd, group, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (group_fd < 0 && errno == ENOENT) {
      if (rdt->clos_id != NULL && !has_schema)
        return fsrun_error_make(
            err, 0, "linux.intelRdt.closID: the resctrl group `%s` does not exist", group);
      if (mkdirat(root_fd, group, 0755) < 0 && errno != EEXIST)
        return fsrun_error_errno(err, "linux.intelRdt: create the resctrl group `%s`", group);
      created = true;
      group_fd = openat(root_fd, group, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  }
  if (group_fd < 0)
    return fsrun_error_errno(err, "linux.intelRdt: open the resctrl group `%s`", group);

  if (has_schema && rdt->clos_id != NULL && !created) {
    /* An existing CLOS is shared: it must already say what we would write. */
    const char *checks[2] = {rdt->l3_cache_schema, rdt->mem_bw_schema};
    for (size_t i = 0; i < 2; i++) {
      bool found;
      if (checks[i] == NULL)
        continue;
      ret = schemata_has_line(group_fd, checks[i], &found, err);
      if (ret < 0)
        return fsrun_error_wrap(err, "linux.intelRdt: resctrl group `%s`", group);
      if (!found)
        return fsrun_error_make(err, 0,
                                "linux.intelRdt.%s: `%s` does not match the schemata of the "
                                "existing resctrl group `%s`",
                                i == 0 ? "l3CacheSchema" : "memBwSchema", checks[i], group);
    }
  } else if (has_schema) {
    /* The order the spec requires: l3CacheSchema, memBwSchema, then schemata. */
    if (rdt->l3_cache_schema != NULL &&
        (ret = write_line_at(group_fd, "schemata", rdt->l3_cache_schema,
                             "linux.intelRdt.l3CacheSchema", err)) < 0)
      return ret;
    if (rdt->mem_bw_schema != NULL && (ret = write_line_at(group_fd, "schemata", rdt->mem_bw_schema,
                                                           "linux.intelRdt.memBwSchema", err)) < 0)
      return ret;
    for (size_t i = 0; i < rdt->schemata.len; i++) {
      char what[64];
      snprintf(what, sizeof(what), "linux.intelRdt.schemata[%zu]", i);
      if ((ret = write_line_at(group_fd, "schemata", rdt->schemata.items[i], what, err)) < 0)
        return ret;
    }
  }

  pid_text = xasprintf("%d", (int)pid);
  ret =
      write_line_at(group_fd, "tasks", pid_text, "linux.intelRdt: add the init to the group", err);
  if (ret < 0)
    return ret;

  if (rdt->has_enable_monitoring && rdt->enable_monitoring) {
    cleanup_close int mon_fd = -1;
    cleanup_close int mon_groups_fd =
        openat(group_fd, "mon_groups", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mon_groups_fd < 0)
      return fsrun_error_errno(err, "linux.intelRdt.enableMonitoring: open `%s/mon_groups`", group);
    if (mkdirat(mon_groups_fd, container_id, 0755) < 0)
      return fsrun_error_errno(err, "linux.intelRdt.enableMonitoring: create the MON group `%s`",
                               container_id);
    mon_fd = openat(mon_groups_fd, container_id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mon_fd < 0)
      return fsrun_error_errno(err, "linux.intelRdt.enableMonitoring: open the MON group");
    ret = write_line_at(mon_fd, "tasks", pid_text,
                        "linux.intelRdt.enableMonitoring: add the init to the MON group", err);
    if (ret < 0)
      return ret;
  }
  return 0;
}

int intelrdt_remove(const oci_intel_rdt *rdt, const char *container_id, fsrun_error_t *err) {
  cleanup_close int root_fd = -1;
  cleanup_close int group_fd = -1;
  const char *group;
  if (rdt == NULL || !group_name_valid(container_id))
    return 0;
  group = rdt->clos_id != NULL ? rdt->clos_id : container_id;
  root_fd = open(resctrl_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return errno == ENOENT ? 0 : fsrun_error_errno(err, "linux.intelRdt: open `%s`", resctrl_root);
  group_fd = closid_is_root(rdt)
                 ? dup(root_fd)
                 : openat(root_fd, group, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (group_fd < 0)
    return errno == ENOENT ? 0 : fsrun_error_errno(err, "linux.intelRdt: open `%s`", group);
  if (rdt->has_enable_monitoring && rdt->enable_monitoring) {
    cleanup_close int mon_groups_fd =
        openat(group_fd, "mon_groups", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mon_groups_fd >= 0 && unlinkat(mon_groups_fd, container_id, AT_REMOVEDIR) < 0 &&
        errno != ENOENT)
      return fsrun_error_errno(err, "linux.intelRdt: remove the MON group `%s`", container_id);
  }
  /* Only the group named after the container is ours; a closID group may be shared. */
  if (rdt->clos_id == NULL && unlinkat(root_fd, container_id, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return fsrun_error_errno(err, "linux.intelRdt: remove the resctrl group `%s`", container_id);
  return 0;
}
