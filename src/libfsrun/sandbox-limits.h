/* The sandbox's limits as this caller on this host can have them (docs/sandbox.md, "Limits"):
 * memoryLimitMb, pidsLimit and cpuLimit.maxCores in the sandbox's cgroup where it has one (root,
 * or a delegated cgroup v2 subtree), cpuLimit.maxMs as a CPU budget of the whole command there.
 * Without a cgroup: RLIMIT_NPROC (counted in the sandbox's own user namespace) for pidsLimit,
 * RLIMIT_DATA per process as a memory bound, RLIMIT_CPU per process for maxMs, and the rest said
 * to be not enforced. allowedTcpPorts is Landlock's, not enforced below Landlock ABI 4 (Linux 6.7).
 * An allowedPaths directory whose read-only overlay (or, for an ordinary user's with a mount below
 * it, the overlays of its pieces: overlay-spine.h) overlayfs refused at the set-up keeps the plain
 * bind, its unix sockets and FIFOs the host's: listed as "allowedPaths", naming it
 * (sandbox_limits_runtime_gap).
 * limitsMode "require" turns a limit that cannot be enforced into an error. */
#ifndef FSRUN_SANDBOX_LIMITS_H
#define FSRUN_SANDBOX_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json-out.h"
#include "oci.h"

struct sandbox_limit_gap {
  /* the policy key: "memoryLimitMb", "cpuLimit.maxCores", "pidsLimit", "allowedTcpPorts",
   * "allowedPaths" (the reason names the entry) */
  const char *limit;
  char *reason;
};

struct sandbox_limits {
  /* an ordinary caller without a delegated cgroup v2 subtree: the sandbox gets no cgroup at all
   * (create is told so: container_create_opts.no_cgroup) */
  bool no_cgroup;
  bool memory_in_cgroup, pids_in_cgroup, cpu_in_cgroup;
  bool cpu_budget;        /* cpuLimit.maxMs is a budget of the whole command (the watchdog's) */
  uint64_t nproc;         /* RLIMIT_NPROC, 0: none */
  uint64_t data_bytes;    /* RLIMIT_DATA, 0: none */
  uint64_t cpu_budget_ms; /* cpuLimit.maxMs, 0: none */
  struct sandbox_limit_gap *gaps; /* allowedPaths: one per entry */
  size_t n_gaps;
};

/* What holds for the policy's limits: userns (an ordinary caller), native (no sandbox at all). */
void sandbox_limits_plan(const oci_policy *p, bool userns, bool native, struct sandbox_limits *l);
void sandbox_limits_clear(struct sandbox_limits *l);
/* limitsMode "require": an error naming each limit that cannot be enforced, and why. */
int sandbox_limits_check(const oci_policy *p, const struct sandbox_limits *l, fsrun_error_t *err);
/* A limit the runtime found it could not put in place during the set-up (container.h's
 * on_limit_gap: an allowedPaths overlay overlayfs refused): one more gap, said in one warning line
 * as the planned ones are; under limitsMode "require" sandbox_limits_check's error instead. */
int sandbox_limits_runtime_gap(const oci_policy *p, struct sandbox_limits *l, const char *limit,
                               const char *why, fsrun_error_t *err);
/* One warning line listing what is not enforced (fsrun's log: the caller's stderr, never the
 * captured output); nothing when everything holds. */
void sandbox_limits_warn(const struct sandbox_limits *l);
/* The config as planned: the resources no cgroup will hold removed, the rlimits in their place,
 * RLIMIT_CPU dropped where the watchdog keeps the command's CPU budget. */
void sandbox_limits_apply(const struct sandbox_limits *l, oci_config *config);
/* Appends `"limitsNotEnforced":[{"limit":...,"reason":...},...]` (no leading comma). */
void sandbox_limits_gaps_json(struct strbuf *b, const struct sandbox_limits *l);

#endif
