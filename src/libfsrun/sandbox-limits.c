#include "sandbox-limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "landlock.h"
#include "log.h"
#include "sandbox-net.h"
#include "sandbox.h"
#include "utils.h"

static void add_gap(struct sandbox_limits *l, const char *limit, char *reason) {
  struct sandbox_limit_gap *grown = realloc(l->gaps, sizeof(*grown) * (l->n_gaps + 1));
  if (grown == NULL)
    abort();
  l->gaps = grown;
  l->gaps[l->n_gaps].limit = limit;
  l->gaps[l->n_gaps].reason = reason;
  l->n_gaps++;
}

/* Why an ordinary caller's sandbox has no cgroup for controller (NULL: none at all). Caller
 * frees. */
static char *no_cgroup_reason(cgroup_mode_t mode, const char *base, const char *controller) {
  if (base != NULL)
    return xasprintf("the delegated cgroup %s has no %s controller", base, controller);
  if (mode != CGROUP_MODE_UNIFIED)
    return xasprintf("an ordinary user has no cgroup of its own on this cgroup v1 host");
  return xasprintf("uid %u has no delegated cgroup v2 subtree", (unsigned)getuid());
}

/* " cpu" in "cpuset cpu io": the list of cgroup.controllers has one space between names */
static bool word_in(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *s = list; (s = strstr(s, word)) != NULL; s += n)
    if ((s == list || s[-1] == ' ') && (s[n] == '\0' || s[n] == ' ' || s[n] == '\n'))
      return true;
  return false;
}

/* An ordinary caller: which controllers its delegated cgroup v2 subtree offers, if it has one. */
static void plan_unprivileged(const oci_policy *p, struct sandbox_limits *l) {
  cleanup_free char *base = NULL;
  cleanup_free char *available = NULL;
  cgroup_mode_t mode = CGROUP_MODE_LEGACY;
  cleanup_error fsrun_error_t err = NULL;

  if (cgroup_detect_mode(&mode, &err) == 0 && mode == CGROUP_MODE_UNIFIED)
    base = cgroup_rootless_delegated_base();
  /* no limit would be in a cgroup of its (a v1 directory an administrator gave the user included:
   * the table in docs/sandbox.md), so none is looked for */
  l->no_cgroup = base == NULL;
  if (base != NULL) {
    cleanup_free char *dir = xasprintf("/sys/fs/cgroup%s", base);
    cleanup_free char *path = xasprintf("%s/cgroup.controllers", dir);
    size_t len = 0;
    if (read_file_at(AT_FDCWD, path, &available, &len, &err) < 0)
      available = xstrdup("");
    l->memory_in_cgroup = word_in(available, "memory");
    l->pids_in_cgroup = word_in(available, "pids");
    l->cpu_in_cgroup = word_in(available, "cpu");
    /* cpu.stat (usage_usec) is in every cgroup v2 directory */
    l->cpu_budget = l->cpu_budget_ms > 0;
  }
  if (!l->memory_in_cgroup && p->has_memory_limit_mb) {
    cleanup_free char *why = no_cgroup_reason(mode, base, "memory");
#ifdef __SANITIZE_ADDRESS__
    /* fsrun's init runs under the command's rlimits, and an AddressSanitizer build's init cannot
     * map its shadow memory under RLIMIT_DATA: a test build only, which says so */
    add_gap(l, "memoryLimitMb",
            xasprintf("%s; no RLIMIT_DATA either (an AddressSanitizer build)", why));
#else
    l->data_bytes = p->memory_limit_mb * 1024 * 1024;
    add_gap(l, "memoryLimitMb",
            xasprintf("%s; RLIMIT_DATA bounds each process to %llu MB instead", why,
                      (unsigned long long)p->memory_limit_mb));
#endif
  }
  if (!l->cpu_in_cgroup && p->has_cpu_max_cores)
    add_gap(l, "cpuLimit.maxCores", no_cgroup_reason(mode, base, "cpu"));
  /* the fork-bomb guard: in the sandbox's own user namespace RLIMIT_NPROC counts the tasks of
   * that namespace only (Linux >= 5.14 counts rlimits per user namespace), which is pidsLimit */
  if (!l->pids_in_cgroup)
    l->nproc = p->has_pids_limit ? p->pids_limit : SANDBOX_DEFAULT_PIDS_LIMIT;
}

/* allowedTcpPorts: the init's Landlock rule set, which a kernel before ABI 4 (Debian 12's 6.1 has
 * 2) loads without the TCP rules: every port is then reachable, for root and users alike */
static void plan_tcp_ports(const oci_policy *p, struct sandbox_limits *l) {
  int abi;
  if (!p->allow_network || p->n_allowed_tcp_ports == 0)
    return;
  abi = landlock_abi_version();
  if (abi < LANDLOCK_TCP_ABI)
    add_gap(l, "allowedTcpPorts",
            xasprintf("the kernel's Landlock ABI %d cannot restrict TCP (ABI %d, Linux 6.7)", abi,
                      LANDLOCK_TCP_ABI));
  /* egress keeps its namespace to TCP and DNS (sandbox_net_tcp_only); the host's is not fsrun's */
  else if (sandbox_network_profile(p) == SANDBOX_NET_HOST)
    add_gap(
        l, "allowedTcpPorts",
        xstrdup("the host network restricts TCP only: UDP and ICMP reach any address and port"));
}

void sandbox_limits_plan(const oci_policy *p, bool userns, bool native, struct sandbox_limits *l) {
  memset(l, 0, sizeof(*l));
  l->cpu_budget_ms = p->has_cpu_max_ms ? p->cpu_max_ms : 0;
  if (native) {
    static const char why[] = "fallback-native: the command ran outside any sandbox and cgroup";
    if (p->has_memory_limit_mb)
      add_gap(l, "memoryLimitMb", xstrdup(why));
    if (p->has_pids_limit)
      add_gap(l, "pidsLimit", xstrdup(why));
    if (p->has_cpu_max_cores)
      add_gap(l, "cpuLimit.maxCores", xstrdup(why));
    return;
  }
  if (userns) {
    plan_unprivileged(p, l);
  } else {
    /* root: the sandbox's cgroup holds them all (a missing controller fails the set-up) */
    l->memory_in_cgroup = l->pids_in_cgroup = l->cpu_in_cgroup = true;
    l->cpu_budget = l->cpu_budget_ms > 0;
  }
  plan_tcp_ports(p, l);
}

void sandbox_limits_clear(struct sandbox_limits *l) {
  for (size_t i = 0; i < l->n_gaps; i++)
    free(l->gaps[i].reason);
  free(steal_ptr(&l->gaps));
  l->n_gaps = 0;
}

/* "memoryLimitMb (reason); cpuLimit.maxCores (reason)". Caller frees. */
static char *gaps_text(const struct sandbox_limits *l) {
  char *text = xstrdup("");
  for (size_t i = 0; i < l->n_gaps; i++) {
    char *next = xasprintf("%s%s%s (%s)", text, i ? "; " : "", l->gaps[i].limit, l->gaps[i].reason);
    free(text);
    text = next;
  }
  return text;
}

int sandbox_limits_check(const oci_policy *p, const struct sandbox_limits *l, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  if (p->limits_mode == NULL || strcmp(p->limits_mode, "require") != 0 || l->n_gaps == 0)
    return 0;
  text = gaps_text(l);
  return fsrun_error_make(err, 0, "sandbox: limitsMode \"require\": cannot enforce %s", text);
}

int sandbox_limits_runtime_gap(const oci_policy *p, struct sandbox_limits *l, const char *limit,
                               const char *why, fsrun_error_t *err) {
  /* the gaps' keys are these strings, never the runtime's text */
  static const char *const keys[] = {"allowedPaths"};
  const char *key = NULL;
  size_t before = l->n_gaps;
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (strcmp(limit, keys[i]) == 0)
      key = keys[i];
  if (key == NULL)
    return fsrun_error_make(err, EPROTO, "the set-up named an unknown limit `%s`", limit);
  add_gap(l, key, xstrdup(why));
  if (sandbox_limits_check(p, l, err) < 0)
    return fsrun_error_code(err);
  /* said as the planned ones were, one line for this one */
  log_warning("sandbox: limits not enforced: %s (%s)", l->gaps[before].limit,
              l->gaps[before].reason);
  return 0;
}

void sandbox_limits_warn(const struct sandbox_limits *l) {
  cleanup_free char *text = NULL;
  if (l->n_gaps == 0)
    return;
  text = gaps_text(l);
  log_warning("sandbox: limits not enforced: %s", text);
}

static void push_rlimit(oci_process *proc, const char *type, uint64_t value) {
  oci_rlimit *grown = realloc(proc->rlimits, sizeof(oci_rlimit) * (proc->n_rlimits + 1));
  if (grown == NULL)
    abort();
  proc->rlimits = grown;
  proc->rlimits[proc->n_rlimits].type = xstrdup(type);
  proc->rlimits[proc->n_rlimits].soft = proc->rlimits[proc->n_rlimits].hard = value;
  proc->n_rlimits++;
}

static void drop_rlimit(oci_process *proc, const char *type) {
  for (size_t i = 0; i < proc->n_rlimits; i++) {
    if (strcmp(proc->rlimits[i].type, type) != 0)
      continue;
    free(proc->rlimits[i].type);
    memmove(&proc->rlimits[i], &proc->rlimits[i + 1],
            sizeof(oci_rlimit) * (proc->n_rlimits - i - 1));
    proc->n_rlimits--;
    return;
  }
}

void sandbox_limits_apply(const struct sandbox_limits *l, oci_config *config) {
  oci_resources *r = config->linux_ ? config->linux_->resources : NULL;
  oci_process *proc = config->process;
  if (r != NULL) {
    /* what no cgroup holds is not handed to the runtime, which would only drop it */
    if (!l->memory_in_cgroup)
      free(steal_ptr(&r->memory));
    if (!l->cpu_in_cgroup)
      free(steal_ptr(&r->cpu));
    if (!l->pids_in_cgroup)
      free(steal_ptr(&r->pids));
  }
  if (proc == NULL)
    return;
  /* the watchdog ends the whole command when its CPU is spent: a per-process RLIMIT_CPU of the
   * same size would only race it */
  if (l->cpu_budget)
    drop_rlimit(proc, "RLIMIT_CPU");
  if (l->nproc > 0)
    push_rlimit(proc, "RLIMIT_NPROC", l->nproc);
  if (l->data_bytes > 0)
    push_rlimit(proc, "RLIMIT_DATA", l->data_bytes);
}

void sandbox_limits_gaps_json(struct strbuf *b, const struct sandbox_limits *l) {
  sb_puts(b, "\"limitsNotEnforced\":[");
  for (size_t i = 0; i < l->n_gaps; i++) {
    sb_printf(b, "%s{\"limit\":\"%s\",\"reason\":", i ? "," : "", l->gaps[i].limit);
    sb_json_string(b, l->gaps[i].reason, strlen(l->gaps[i].reason));
    sb_puts(b, "}");
  }
  sb_puts(b, "]");
}
