/* fsrun update [-r FILE|-] [--memory N] ... [--pids-limit N] [--blkio-weight N] ID */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "live.h"
#include "utils.h"

static void update_usage(FILE *out) {
  fprintf(out,
          "Usage: fsrun update [-r FILE|-] [OPTIONS] ID\n\n"
          "Change the resource limits of the created, running or paused container ID, live.\n"
          "-r reads a linux.resources JSON object from FILE, or from stdin with `-`; the options\n"
          "below override its fields. Sizes take runc's units (64m, 1.5g, 512KiB; -1 =\n"
          "unlimited).\n\n"
          "Options:\n"
          "  -r, --resources FILE|-     the resources as JSON (only the fields given change)\n"
          "  --memory N                 memory limit (bytes)\n"
          "  --memory-swap N            memory+swap limit (bytes)\n"
          "  --memory-reservation N     soft memory limit (bytes)\n"
          "  --kernel-memory N          kernel memory limit (bytes; ignored by current kernels)\n"
          "  --kernel-memory-tcp N      kernel TCP buffer limit (bytes)\n"
          "  --cpu-share N              CPU shares (relative weight); also --cpu-shares\n"
          "  --cpu-quota N              CFS quota per period (microseconds; -1 = none)\n"
          "  --cpu-period N             CFS period (microseconds)\n"
          "  --cpu-burst N              CFS burst (microseconds)\n"
          "  --cpu-rt-runtime N         realtime runtime per period (microseconds)\n"
          "  --cpu-rt-period N          realtime period (microseconds)\n"
          "  --cpu-idle N               1 = SCHED_IDLE for the cgroup (cgroup v2)\n"
          "  --cpuset-cpus LIST         CPUs to use (0-3,7)\n"
          "  --cpuset-mems LIST         memory nodes to use\n"
          "  --pids-limit N             maximum number of tasks (-1 = unlimited)\n"
          "  --blkio-weight N           block I/O weight, 10 to 1000\n"
          "  -h, --help                 print this help\n");
}

enum {
  OPT_MEMORY = 1000,
  OPT_MEMORY_SWAP,
  OPT_MEMORY_RESERVATION,
  OPT_KERNEL_MEMORY,
  OPT_KERNEL_MEMORY_TCP,
  OPT_CPU_SHARE,
  OPT_CPU_QUOTA,
  OPT_CPU_PERIOD,
  OPT_CPU_BURST,
  OPT_CPU_RT_RUNTIME,
  OPT_CPU_RT_PERIOD,
  OPT_CPU_IDLE,
  OPT_CPUSET_CPUS,
  OPT_CPUSET_MEMS,
  OPT_PIDS_LIMIT,
  OPT_BLKIO_WEIGHT,
  OPT_END,
};
#define N_FLAGS (OPT_END - OPT_MEMORY)

static const struct option options[] = {
    {"resources", required_argument, NULL, 'r'},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
    {"memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION},
    {"kernel-memory", required_argument, NULL, OPT_KERNEL_MEMORY},
    {"kernel-memory-tcp", required_argument, NULL, OPT_KERNEL_MEMORY_TCP},
    {"cpu-share", required_argument, NULL, OPT_CPU_SHARE},
    {"cpu-shares", required_argument, NULL, OPT_CPU_SHARE},
    {"cpu-quota", required_argument, NULL, OPT_CPU_QUOTA},
    {"cpu-period", required_argument, NULL, OPT_CPU_PERIOD},
    {"cpu-burst", required_argument, NULL, OPT_CPU_BURST},
    {"cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME},
    {"cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD},
    {"cpu-idle", required_argument, NULL, OPT_CPU_IDLE},
    {"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
    {"cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS},
    {"pids-limit", required_argument, NULL, OPT_PIDS_LIMIT},
    {"blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *flag_name(int opt) {
  for (const struct option *o = options; o->name; o++)
    if (o->val == opt)
      return o->name;
  return "?";
}

static int parse_i64(int opt, const char *text, int64_t *v, fsrun_error_t *err) {
  char *end;
  long long n;
  errno = 0;
  n = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0)
    return fsrun_error_make(err, 0, "update: --%s: expected an integer, got `%s`", flag_name(opt),
                            text);
  *v = n;
  return 0;
}

static int parse_u64(int opt, const char *text, uint64_t *v, fsrun_error_t *err) {
  char *end;
  unsigned long long n;
  errno = 0;
  n = strtoull(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || text[strspn(text, " \t")] == '-')
    return fsrun_error_make(err, 0, "update: --%s: expected an unsigned integer, got `%s`",
                            flag_name(opt), text);
  *v = n;
  return 0;
}

static int parse_bytes(int opt, const char *text, int64_t *v, fsrun_error_t *err) {
  if (live_parse_bytes(text, v, err) < 0)
    return fsrun_error_wrap(err, "update: --%s", flag_name(opt));
  return 0;
}

static oci_memory *memory_of(oci_resources *r) {
  if (r->memory == NULL)
    r->memory = xmalloc0(sizeof(*r->memory));
  return r->memory;
}

static oci_cpu *cpu_of(oci_resources *r) {
  if (r->cpu == NULL)
    r->cpu = xmalloc0(sizeof(*r->cpu));
  return r->cpu;
}

static void replace_string(char **field, const char *value) {
  free(*field);
  *field = xstrdup(value);
}

/* Sets the field of one flag in r. */
static int apply_flag(oci_resources *r, int opt, const char *text, fsrun_error_t *err) {
  int64_t i = 0;
  uint64_t u = 0;
  int ret = 0;
  switch (opt) {
  case OPT_MEMORY:
    ret = parse_bytes(opt, text, &i, err);
    memory_of(r)->has_limit = true;
    r->memory->limit = i;
    break;
  case OPT_MEMORY_SWAP:
    ret = parse_bytes(opt, text, &i, err);
    memory_of(r)->has_swap = true;
    r->memory->swap = i;
    break;
  case OPT_MEMORY_RESERVATION:
    ret = parse_bytes(opt, text, &i, err);
    memory_of(r)->has_reservation = true;
    r->memory->reservation = i;
    break;
  case OPT_KERNEL_MEMORY:
    ret = parse_bytes(opt, text, &i, err);
    memory_of(r)->has_kernel = true;
    r->memory->kernel = i;
    break;
  case OPT_KERNEL_MEMORY_TCP:
    ret = parse_bytes(opt, text, &i, err);
    memory_of(r)->has_kernel_tcp = true;
    r->memory->kernel_tcp = i;
    break;
  case OPT_CPU_SHARE:
    ret = parse_u64(opt, text, &u, err);
    cpu_of(r)->has_shares = true;
    r->cpu->shares = u;
    break;
  case OPT_CPU_QUOTA:
    ret = parse_i64(opt, text, &i, err);
    cpu_of(r)->has_quota = true;
    r->cpu->quota = i;
    break;
  case OPT_CPU_PERIOD:
    ret = parse_u64(opt, text, &u, err);
    cpu_of(r)->has_period = true;
    r->cpu->period = u;
    break;
  case OPT_CPU_BURST:
    ret = parse_u64(opt, text, &u, err);
    cpu_of(r)->has_burst = true;
    r->cpu->burst = u;
    break;
  case OPT_CPU_RT_RUNTIME:
    ret = parse_i64(opt, text, &i, err);
    cpu_of(r)->has_realtime_runtime = true;
    r->cpu->realtime_runtime = i;
    break;
  case OPT_CPU_RT_PERIOD:
    ret = parse_u64(opt, text, &u, err);
    cpu_of(r)->has_realtime_period = true;
    r->cpu->realtime_period = u;
    break;
  case OPT_CPU_IDLE:
    ret = parse_i64(opt, text, &i, err);
    cpu_of(r)->has_idle = true;
    r->cpu->idle = i;
    break;
  case OPT_CPUSET_CPUS:
    replace_string(&cpu_of(r)->cpus, text);
    break;
  case OPT_CPUSET_MEMS:
    replace_string(&cpu_of(r)->mems, text);
    break;
  case OPT_PIDS_LIMIT:
    ret = parse_i64(opt, text, &i, err);
    if (r->pids == NULL)
      r->pids = xmalloc0(sizeof(*r->pids));
    r->pids->has_limit = true;
    r->pids->limit = i;
    break;
  case OPT_BLKIO_WEIGHT:
    ret = parse_u64(opt, text, &u, err);
    if (ret == 0 && (u < 10 || u > 1000))
      return fsrun_error_make(err, 0, "update: --blkio-weight: %s is not in [10, 1000]", text);
    if (r->block_io == NULL)
      r->block_io = xmalloc0(sizeof(*r->block_io));
    r->block_io->has_weight = true;
    r->block_io->weight = (uint16_t)u;
    break;
  }
  return ret;
}

FSRUN_COMMAND(update) {
  const char *flags[N_FLAGS] = {0};
  const char *resources_path = NULL, *id;
  oci_resources *r = NULL;
  bool any_flag = false;
  int opt, ret = 0;

  (void)exit_status;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":r:h", options, NULL)) != -1) {
    if (opt >= OPT_MEMORY && opt < OPT_END) {
      flags[opt - OPT_MEMORY] = optarg; /* the last one given wins */
      any_flag = true;
      continue;
    }
    switch (opt) {
    case 'r':
      resources_path = optarg;
      break;
    case 'h':
      update_usage(stdout);
      return 0;
    default:
      return fsrun_command_option_error("update", opt, argv, err);
    }
  }
  if (fsrun_command_take_id("update", argc, argv, &id, err) < 0)
    return -1;
  if (resources_path == NULL && !any_flag)
    return fsrun_error_make(err, 0,
                            "update: nothing to update: give -r FILE|- or a resource option (see "
                            "fsrun update --help)");

  if (resources_path != NULL) {
    ret = live_read_resources(resources_path, &r, err);
    if (ret < 0)
      return ret;
  } else {
    r = xmalloc0(sizeof(*r));
  }
  for (int i = 0; i < N_FLAGS && ret == 0; i++)
    if (flags[i] != NULL)
      ret = apply_flag(r, OPT_MEMORY + i, flags[i], err);
  if (ret == 0)
    ret = container_update(ctx, id, r, err);
  oci_resources_free(r);
  return ret;
}
