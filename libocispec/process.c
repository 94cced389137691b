/* process (in config.json, and on its own as exec's process.json). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

const char *const oci_rlimit_types[] = {
    "RLIMIT_AS",
    "RLIMIT_CORE",
    "RLIMIT_CPU",
    "RLIMIT_DATA",
    "RLIMIT_FSIZE",
    "RLIMIT_LOCKS",
    "RLIMIT_MEMLOCK",
    "RLIMIT_MSGQUEUE",
    "RLIMIT_NICE",
    "RLIMIT_NOFILE",
    "RLIMIT_NPROC",
    "RLIMIT_RSS",
    "RLIMIT_RTPRIO",
    "RLIMIT_RTTIME",
    "RLIMIT_SIGPENDING",
    "RLIMIT_STACK",
    NULL,
};

static const char *const scheduler_policies[] = {
    "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",       "SCHED_BATCH",
    "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE", NULL,
};

static const char *const scheduler_flags[] = {
    "SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",
    "SCHED_FLAG_DL_OVERRUN",     "SCHED_FLAG_KEEP_POLICY",
    "SCHED_FLAG_KEEP_PARAMS",    "SCHED_FLAG_UTIL_CLAMP_MIN",
    "SCHED_FLAG_UTIL_CLAMP_MAX", NULL,
};

static const char *const io_priority_classes[] = {
    "IOPRIO_CLASS_RT",
    "IOPRIO_CLASS_BE",
    "IOPRIO_CLASS_IDLE",
    NULL,
};

static int validate_rlimit(decode_ctx *c, const void *obj) {
  const oci_rlimit *r = obj;
  /* setrlimit(2) refuses soft > hard: say so now rather than inside the container */
  if (r->soft > r->hard)
    return decode_fail_at_key(c, "soft", "soft limit %" PRIu64 " is above the hard limit %" PRIu64,
                              r->soft, r->hard);
  return 0;
}

static const field_desc rlimit_fields[] = {
    FIELD("type", FK_STRING, oci_rlimit, type, .flags = F_REQUIRED,
          ONE_OF(oci_rlimit_types, "rlimit type")),
    FIELD("hard", FK_U64, oci_rlimit, hard, .flags = F_REQUIRED),
    FIELD("soft", FK_U64, oci_rlimit, soft, .flags = F_REQUIRED),
};
static const type_desc rlimit_desc = DESC(oci_rlimit, rlimit_fields, .validate = validate_rlimit);

static const field_desc capabilities_fields[] = {
    FIELD("bounding", FK_STRV, oci_capabilities, bounding,
          .has_off = HAS(oci_capabilities, has_bounding)),
    FIELD("effective", FK_STRV, oci_capabilities, effective,
          .has_off = HAS(oci_capabilities, has_effective)),
    FIELD("inheritable", FK_STRV, oci_capabilities, inheritable,
          .has_off = HAS(oci_capabilities, has_inheritable)),
    FIELD("permitted", FK_STRV, oci_capabilities, permitted,
          .has_off = HAS(oci_capabilities, has_permitted)),
    FIELD("ambient", FK_STRV, oci_capabilities, ambient,
          .has_off = HAS(oci_capabilities, has_ambient)),
};
static const type_desc capabilities_desc = DESC(oci_capabilities, capabilities_fields);

static const field_desc user_fields[] = {
    FIELD("uid", FK_U32, oci_user, uid, .flags = F_REQUIRED),
    FIELD("gid", FK_U32, oci_user, gid, .flags = F_REQUIRED),
    FIELD("umask", FK_U32, oci_user, umask, .has_off = HAS(oci_user, has_umask), URANGE(0, 0777)),
    FIELD("additionalGids", FK_U32_ARRAY, oci_user, additional_gids,
          COUNT(oci_user, n_additional_gids)),
    FIELD("username", FK_STRING, oci_user, username),
};
static const type_desc user_desc = DESC(oci_user, user_fields);

/* consoleSize's two numbers live in oci_process itself; struct winsize holds 16 bits */
static const field_desc console_size_fields[] = {
    FIELD("height", FK_U32, oci_process, console_height, .flags = F_REQUIRED, URANGE(0, 65535)),
    FIELD("width", FK_U32, oci_process, console_width, .flags = F_REQUIRED, URANGE(0, 65535)),
};
static const type_desc console_size_desc = DESC(oci_process, console_size_fields);

static const field_desc scheduler_fields[] = {
    FIELD("policy", FK_STRING, oci_scheduler, policy, .flags = F_REQUIRED,
          ONE_OF(scheduler_policies, "scheduler policy")),
    FIELD("nice", FK_I32, oci_scheduler, nice, .has_off = HAS(oci_scheduler, has_nice)),
    FIELD("priority", FK_I32, oci_scheduler, priority, .has_off = HAS(oci_scheduler, has_priority)),
    FIELD("flags", FK_STRV, oci_scheduler, flags, ONE_OF(scheduler_flags, "scheduler flag")),
    FIELD("runtime", FK_U64, oci_scheduler, runtime, .has_off = HAS(oci_scheduler, has_runtime)),
    FIELD("deadline", FK_U64, oci_scheduler, deadline, .has_off = HAS(oci_scheduler, has_deadline)),
    FIELD("period", FK_U64, oci_scheduler, period, .has_off = HAS(oci_scheduler, has_period)),
};
static const type_desc scheduler_desc = DESC(oci_scheduler, scheduler_fields);

static const field_desc io_priority_fields[] = {
    FIELD("class", FK_STRING, oci_io_priority, class_, .flags = F_REQUIRED,
          ONE_OF(io_priority_classes, "I/O priority class")),
    /* required by the spec, but runc and crun take a missing one as 0 (IDLE has no levels) */
    FIELD("priority", FK_I32, oci_io_priority, priority, SRANGE(0, 7)),
};
static const type_desc io_priority_desc = DESC(oci_io_priority, io_priority_fields);

static const field_desc exec_cpu_affinity_fields[] = {
    FIELD("initial", FK_STRING, oci_exec_cpu_affinity, initial),
    FIELD("final", FK_STRING, oci_exec_cpu_affinity, final),
};
static const type_desc exec_cpu_affinity_desc =
    DESC(oci_exec_cpu_affinity, exec_cpu_affinity_fields);

static int validate_process(decode_ctx *c, const void *obj) {
  const oci_process *p = obj;
  /* "If rlimits contains duplicated entries with same type, the runtime MUST generate an error";
   * the types are checked against a short list first, so this loop ends early */
  for (size_t i = 0; i < p->n_rlimits; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(p->rlimits[i].type, p->rlimits[j].type) == 0) {
        size_t old = json_path_push_key(&c->path, "rlimits");
        decode_fail_at_index(c, i, "type", "duplicate rlimit type \"%s\" (also in rlimits[%zu])",
                             p->rlimits[i].type, j);
        json_path_pop(&c->path, old);
        return -1;
      }
  return 0;
}

static const field_desc process_fields[] = {
    FIELD("terminal", FK_BOOL, oci_process, terminal, .flags = F_OMIT_ZERO),
    {.key = "consoleSize",
     .kind = FK_INLINE,
     .off = 0,
     .has_off = HAS(oci_process, has_console_size),
     .sub = &console_size_desc},
    FIELD("user", FK_INLINE, oci_process, user, .sub = &user_desc),
    FIELD("args", FK_STRV, oci_process, args, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("commandLine", FK_STRING, oci_process, command_line),
    FIELD("env", FK_STRV, oci_process, env),
    FIELD("cwd", FK_STRING, oci_process, cwd, .flags = F_REQUIRED | F_ABSPATH),
    FIELD("capabilities", FK_OBJECT, oci_process, capabilities, .sub = &capabilities_desc),
    FIELD("rlimits", FK_OBJ_ARRAY, oci_process, rlimits, COUNT(oci_process, n_rlimits),
          .sub = &rlimit_desc),
    FIELD("noNewPrivileges", FK_BOOL, oci_process, no_new_privileges, .flags = F_OMIT_ZERO),
    FIELD("apparmorProfile", FK_STRING, oci_process, apparmor_profile),
    FIELD("oomScoreAdj", FK_I32, oci_process, oom_score_adj,
          .has_off = HAS(oci_process, has_oom_score_adj), SRANGE(-1000, 1000)),
    FIELD("selinuxLabel", FK_STRING, oci_process, selinux_label),
    FIELD("scheduler", FK_OBJECT, oci_process, scheduler, .sub = &scheduler_desc),
    FIELD("ioPriority", FK_OBJECT, oci_process, io_priority, .sub = &io_priority_desc),
    FIELD("execCPUAffinity", FK_OBJECT, oci_process, exec_cpu_affinity,
          .sub = &exec_cpu_affinity_desc),
};
const type_desc oci_process_desc = DESC(oci_process, process_fields, .validate = validate_process);

int oci_process_parse(const char *json, size_t len, const char *what, oci_process **out,
                      char **err) {
  return model_parse(&oci_process_desc, json, len, what ? what : "process.json", false,
                     (void **)out, err);
}

char *oci_process_serialize(const oci_process *p, bool pretty, char **err) {
  return model_serialize(&oci_process_desc, p, "process", pretty, err);
}

void oci_process_free(oci_process *p) {
  model_free_fields(&oci_process_desc, p);
  free(p);
}
