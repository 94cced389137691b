/* libocispec: every section of config.json parsed and round-tripped, exact uint64s, every kind of
 * error (type, missing, range, enum, nesting, bad JSON, empty input), the other documents, the
 * Fusion policy, and every file of tests/data/{good,bad}-config. TAP output. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "oci.h"
#include "tap.h"

#define LIT(s) (s), strlen(s)

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

static char *read_data(const char *rel, size_t *len) {
  char path[4096], *text = NULL, *err = NULL;
  snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, rel);
  if (oci_read_file(path, &text, len, &err) < 0) {
    tap_diag("cannot read %s: %s", path, err);
    free(err);
    return NULL;
  }
  return text;
}

/* parse(serialise(parse(x))) == parse(x), pretty and compact, and serialising is stable */
static void check_config_round_trip(const oci_config *c, const char *name) {
  for (int pretty = 0; pretty <= 1; pretty++) {
    char *err = NULL, *err2 = NULL;
    char *text = oci_config_serialize(c, pretty, &err);
    oci_config *again = NULL;
    bool parsed = text && oci_config_parse(text, strlen(text), "again", &again, &err2) == 0;
    tap_ok(parsed && oci_config_equal(c, again), "%s: %s round trip is the identity", name,
           pretty ? "pretty" : "compact");
    if (!parsed)
      tap_diag("serialise: %s / reparse: %s", err ? err : "-", err2 ? err2 : "-");
    char *text2 = again ? oci_config_serialize(again, pretty, &err) : NULL;
    tap_ok(text && text2 && strcmp(text, text2) == 0, "%s: serialising twice gives the same text",
           name);
    free(text);
    free(text2);
    free(err);
    free(err2);
    oci_config_free(again);
  }
}

static bool strv_is(const oci_strv *v, size_t n, const char *const *want) {
  if (v->len != n || v->items == NULL || v->items[n] != NULL)
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp(v->items[i], want[i]) != 0)
      return false;
  return true;
}

static void test_full_config(void) {
  size_t len;
  char *text = read_data("good-config/full.json", &len);
  oci_config *c = NULL;
  char *err = NULL;
  if (!tap_ok(text && oci_config_parse(text, len, "full.json", &c, &err) == 0,
              "full.json parses")) {
    tap_diag("%s", err ? err : "");
    free(err);
    free(text);
    return;
  }
  free(text);

  /* top level, root, mounts */
  tap_ok(strcmp(c->oci_version, "1.3.0") == 0 && strcmp(c->hostname, "full-host") == 0 &&
             strcmp(c->domainname, "example.org") == 0,
         "ociVersion, hostname, domainname");
  tap_ok(c->has_root && strcmp(c->root_path, "rootfs") == 0 && c->root_readonly,
         "root.path and root.readonly");
  tap_ok(c->n_mounts == 3 && strcmp(c->mounts[1].destination, "/data") == 0 &&
             strcmp(c->mounts[1].source, "/srv/data") == 0 &&
             strcmp(c->mounts[1].type, "none") == 0 &&
             strv_is(&c->mounts[1].options, 3, (const char *[]){"rbind", "rw", "idmap"}),
         "mounts: destination, source, type, options");
  tap_ok(c->mounts[1].n_uid_mappings == 1 && c->mounts[1].uid_mappings[0].host_id == 100000 &&
             c->mounts[1].uid_mappings[0].size == 65536 && c->mounts[1].n_gid_mappings == 1 &&
             c->mounts[1].gid_mappings[0].host_id == 200000,
         "mounts[].uidMappings / gidMappings");
  tap_ok(c->mounts[2].options.items != NULL && c->mounts[2].options.len == 0 &&
             c->mounts[0].options.items == NULL,
         "an empty options array is kept apart from an absent one");

  /* process */
  oci_process *p = c->process;
  tap_ok(p && p->terminal && p->has_console_size && p->console_height == 25 &&
             p->console_width == 80,
         "process.terminal and consoleSize");
  tap_ok(p && p->user.uid == UINT32_MAX && p->user.gid == 1000 && p->user.has_umask &&
             p->user.umask == 18 && p->user.n_additional_gids == 3 &&
             p->user.additional_gids[2] == UINT32_MAX && strcmp(p->user.username, "winuser") == 0,
         "process.user: uid 2^32-1, gid, umask, additionalGids, username");
  tap_ok(p && p->args.len == 3 && p->args.items[3] == NULL &&
             strcmp(p->args.items[2], "echo \"hi\" \\ \xc3\xa9\xe4\xb8\xad") == 0,
         "process.args: escapes and UTF-8 decoded, NULL-terminated");
  tap_ok(p && strcmp(p->command_line, "sh -c echo") == 0 && p->env.len == 3 &&
             strcmp(p->env.items[2], "EMPTY=") == 0 && strcmp(p->cwd, "/root") == 0,
         "process.commandLine, env, cwd");
  tap_ok(p && p->capabilities && p->capabilities->has_bounding &&
             p->capabilities->bounding.len == 2 && p->capabilities->has_inheritable &&
             p->capabilities->inheritable.len == 0 && p->capabilities->permitted.len == 3 &&
             strcmp(p->capabilities->permitted.items[2], "CAP_NOT_A_REAL_ONE") == 0 &&
             p->capabilities->ambient.len == 1 && p->capabilities->effective.len == 1,
         "process.capabilities: five sets, unknown names kept");
  tap_ok(p && p->n_rlimits == 3 && strcmp(p->rlimits[0].type, "RLIMIT_NOFILE") == 0 &&
             p->rlimits[0].hard == 1024 && p->rlimits[0].soft == 512 &&
             p->rlimits[1].hard == UINT64_MAX && p->rlimits[1].soft == UINT64_MAX &&
             p->rlimits[2].hard == 9007199254740993ULL,
         "process.rlimits: 2^64-1 and 2^53+1 exact");
  tap_ok(p && p->no_new_privileges && strcmp(p->apparmor_profile, "acme_secure_profile") == 0 &&
             p->has_oom_score_adj && p->oom_score_adj == -1000 &&
             strncmp(p->selinux_label, "system_u:", 9) == 0,
         "process.noNewPrivileges, apparmorProfile, oomScoreAdj, selinuxLabel");
  tap_ok(p && p->scheduler && strcmp(p->scheduler->policy, "SCHED_DEADLINE") == 0 &&
             p->scheduler->has_nice && p->scheduler->nice == -20 && p->scheduler->has_priority &&
             p->scheduler->priority == 99 && p->scheduler->flags.len == 2 &&
             p->scheduler->runtime == 10000000 && p->scheduler->deadline == 20000000 &&
             p->scheduler->has_period && p->scheduler->period == UINT64_MAX,
         "process.scheduler: every field");
  tap_ok(p && p->io_priority && strcmp(p->io_priority->class_, "IOPRIO_CLASS_BE") == 0 &&
             p->io_priority->priority == 7 && p->exec_cpu_affinity &&
             strcmp(p->exec_cpu_affinity->initial, "0-3,7") == 0 &&
             strcmp(p->exec_cpu_affinity->final, "4") == 0,
         "process.ioPriority and execCPUAffinity");

  /* hooks */
  oci_hooks *h = c->hooks;
  tap_ok(h && h->prestart.len == 1 &&
             strcmp(h->prestart.items[0].path, "/usr/bin/fix-mounts") == 0 &&
             h->prestart.items[0].args.len == 2 && h->prestart.items[0].env.len == 1 &&
             !h->prestart.items[0].has_timeout,
         "hooks.prestart");
  tap_ok(h && h->create_runtime.len == 2 && h->create_runtime.items[0].has_timeout &&
             h->create_runtime.items[0].timeout == 5 && h->create_container.len == 1 &&
             h->create_container.items[0].timeout == 2147483647 && h->start_container.len == 1 &&
             h->poststart.len == 1 && h->poststart.items[0].timeout == 1 && h->poststop.len == 1 &&
             strcmp(h->poststop.items[0].args.items[1], "-f") == 0,
         "hooks: createRuntime, createContainer, startContainer, poststart, poststop");

  /* annotations */
  tap_ok(c->annotations.len == 3 &&
             strcmp(oci_map_get(&c->annotations, "com.example.key2"), "value2") == 0 &&
             strcmp(oci_map_get(&c->annotations, "odd key \"quoted\""), "\t tab") == 0,
         "annotations");

  /* linux */
  oci_linux *l = c->linux_;
  tap_ok(l && l->n_namespaces == 8 && strcmp(l->namespaces[1].type, "network") == 0 &&
             strcmp(l->namespaces[1].path, "/var/run/netns/neta") == 0 &&
             strcmp(l->namespaces[7].type, "time") == 0 && l->namespaces[0].path == NULL,
         "linux.namespaces: all eight types, path");
  tap_ok(l && l->n_uid_mappings == 2 && l->uid_mappings[1].host_id == UINT32_MAX &&
             l->uid_mappings[1].container_id == 32000 && l->n_gid_mappings == 1,
         "linux.uidMappings / gidMappings");
  tap_ok(l && l->time_offsets && l->time_offsets->has_monotonic &&
             l->time_offsets->monotonic_secs == INT64_MIN &&
             l->time_offsets->monotonic_nanosecs == 999999999 && l->time_offsets->has_boottime &&
             l->time_offsets->boottime_secs == INT64_MAX && l->time_offsets->boottime_nanosecs == 1,
         "linux.timeOffsets: int64 extremes exact");
  tap_ok(l && l->n_devices == 4 && strcmp(l->devices[0].path, "/dev/fuse") == 0 &&
             l->devices[0].major == 10 && l->devices[0].minor == 229 &&
             l->devices[0].has_file_mode && l->devices[0].file_mode == 438 &&
             l->devices[0].has_uid && l->devices[0].has_gid && !l->devices[1].has_uid &&
             !l->devices[2].has_major && l->devices[3].major == UINT32_MAX,
         "linux.devices");
  tap_ok(l && l->n_net_devices == 2 && strcmp(l->net_devices[0].host_name, "eth0") == 0 &&
             strcmp(l->net_devices[0].name, "container_eth0") == 0 &&
             strcmp(l->net_devices[1].host_name, "ens4") == 0 && l->net_devices[1].name == NULL,
         "linux.netDevices");
  tap_ok(l && strcmp(l->cgroups_path, "/myRuntime/myContainer") == 0, "linux.cgroupsPath");
  oci_resources *r = l ? l->resources : NULL;
  tap_ok(r && r->n_devices == 4 && !r->devices[0].allow && r->devices[0].type == NULL &&
             strcmp(r->devices[0].access, "rwm") == 0 && r->devices[2].major == -1 &&
             r->devices[2].has_minor && !r->devices[3].has_major,
         "linux.resources.devices");
  tap_ok(r && r->memory && r->memory->has_limit && r->memory->limit == 536870912 &&
             r->memory->reservation == 536870912 && r->memory->swap == -1 &&
             r->memory->kernel == -1 && r->memory->kernel_tcp == -1 && r->memory->has_swappiness &&
             r->memory->swappiness == 0 && r->memory->has_disable_oom_killer &&
             !r->memory->disable_oom_killer && r->memory->use_hierarchy &&
             r->memory->has_check_before_update && r->memory->check_before_update,
         "linux.resources.memory: every field");
  tap_ok(r && r->cpu && r->cpu->shares == 1024 && r->cpu->quota == 1000000 &&
             r->cpu->burst == 1000000 && r->cpu->period == 500000 &&
             r->cpu->realtime_runtime == 950000 && r->cpu->realtime_period == 1000000 &&
             strcmp(r->cpu->cpus, "2-3") == 0 && strcmp(r->cpu->mems, "0-7") == 0 &&
             r->cpu->has_idle && r->cpu->idle == 0,
         "linux.resources.cpu: every field");
  tap_ok(r && r->pids && r->pids->has_limit && r->pids->limit == 32771, "linux.resources.pids");
  oci_block_io *b = r ? r->block_io : NULL;
  tap_ok(b && b->weight == 10 && b->leaf_weight == 65535 && b->n_weight_device == 2 &&
             b->weight_device[0].leaf_weight == 300 && !b->weight_device[1].has_leaf_weight &&
             b->n_throttle_read_bps == 1 && b->throttle_read_bps[0].rate == 600 &&
             b->throttle_write_bps[0].rate == UINT64_MAX && b->throttle_read_iops[0].rate == 300 &&
             b->throttle_write_iops[0].minor == 16,
         "linux.resources.blockIO: every field");
  tap_ok(r && r->n_hugepage_limits == 2 && strcmp(r->hugepage_limits[1].page_size, "1GB") == 0 &&
             r->hugepage_limits[0].limit == 209715200,
         "linux.resources.hugepageLimits");
  tap_ok(r && r->network && r->network->has_class_id && r->network->class_id == 1048577 &&
             r->network->n_priorities == 2 && r->network->priorities[1].priority == 1000,
         "linux.resources.network");
  tap_ok(r && r->n_rdma == 3 && strcmp(r->rdma[0].device, "mlx5_1") == 0 &&
             r->rdma[0].hca_handles == 3 && r->rdma[0].hca_objects == 10000 &&
             !r->rdma[1].has_hca_handles && r->rdma[1].has_hca_objects &&
             !r->rdma[2].has_hca_objects,
         "linux.resources.rdma");
  tap_ok(r && r->unified.len == 2 &&
             strcmp(oci_map_get(&r->unified, "memory.high"), "1073741824") == 0,
         "linux.resources.unified");
  tap_ok(l && l->intel_rdt && strcmp(l->intel_rdt->clos_id, "guaranteed_group") == 0 &&
             strcmp(l->intel_rdt->l3_cache_schema, "L3:0=7f0;1=1f") == 0 &&
             strcmp(l->intel_rdt->mem_bw_schema, "MB:0=20;1=70") == 0 &&
             l->intel_rdt->schemata.len == 2 && l->intel_rdt->has_enable_monitoring &&
             l->intel_rdt->enable_monitoring,
         "linux.intelRdt");
  tap_ok(l && l->memory_policy && strcmp(l->memory_policy->mode, "MPOL_INTERLEAVE") == 0 &&
             strcmp(l->memory_policy->nodes, "2-3") == 0 && l->memory_policy->flags.len == 1,
         "linux.memoryPolicy");
  tap_ok(l && l->sysctl.len == 2 &&
             strcmp(oci_map_get(&l->sysctl, "net.ipv4.ip_forward"), "1") == 0,
         "linux.sysctl");
  oci_seccomp *s = l ? l->seccomp : NULL;
  tap_ok(s && strcmp(s->default_action, "SCMP_ACT_ERRNO") == 0 && s->has_default_errno_ret &&
             s->default_errno_ret == 1 && s->architectures.len == 3 && s->flags.len == 2 &&
             strcmp(s->listener_path, "/run/seccomp-agent.socket") == 0 &&
             strcmp(s->listener_metadata, "metadata") == 0 && s->n_syscalls == 4,
         "linux.seccomp: top-level fields");
  tap_ok(s && s->syscalls[1].n_args == 2 && s->syscalls[1].args[0].value == UINT64_MAX &&
             s->syscalls[1].args[0].value_two == UINT64_MAX - 1 &&
             strcmp(s->syscalls[1].args[0].op, "SCMP_CMP_MASKED_EQ") == 0 &&
             s->syscalls[1].args[1].index == 5 && s->syscalls[2].has_errno_ret &&
             s->syscalls[2].errno_ret == 38 && !s->syscalls[0].has_errno_ret,
         "linux.seccomp.syscalls: args with uint64 values exact, errnoRet");
  tap_ok(l && strcmp(l->rootfs_propagation, "slave") == 0 && l->masked_paths.len == 2 &&
             l->readonly_paths.len == 2 && strncmp(l->mount_label, "system_u:", 9) == 0,
         "linux.rootfsPropagation, maskedPaths, readonlyPaths, mountLabel");
  tap_ok(l && l->personality && strcmp(l->personality->domain, "LINUX32") == 0 &&
             l->personality->flags.items != NULL && l->personality->flags.len == 0,
         "linux.personality");

  check_config_round_trip(c, "full.json");

  /* uint64 written exactly */
  char *compact = oci_config_serialize(c, false, &err);
  tap_ok(compact && strstr(compact, "\"hard\":18446744073709551615") &&
             strstr(compact, "\"value\":18446744073709551615,\"valueTwo\":18446744073709551614") &&
             strstr(compact, "\"secs\":-9223372036854775808"),
         "uint64 and int64 extremes are written exactly");
  tap_ok(compact && !strstr(compact, "unknownTopLevel") && !strstr(compact, "layerFolders"),
         "unknown properties are ignored");
  free(compact);
  free(err);
  oci_config_free(c);
}

/* --- errors -------------------------------------------------------------------------------------
 */

typedef struct {
  const char *json;
  const char *want; /* substring of the error */
  const char *why;
} error_case;

#define BASE "\"ociVersion\":\"1.3.0\""
#define PROC(x)                                                                                    \
  "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"],\"user\":{\"uid\":0,\"gid\":0}," x "}}"
#define LINUX(x)   "{" BASE ",\"linux\":{" x "}}"
#define RES(x)     LINUX("\"resources\":{" x "}")
#define SECCOMP(x) LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"," x "}")

static const error_case config_errors[] = {
    /* JSON level */
    {"", "config.json: empty document", "empty input"},
    {"   \n\t ", "empty document", "whitespace only"},
    {"{\"ociVersion\": \"1.3.0\"", "invalid JSON", "truncated"},
    {"{\"ociVersion\": \"1.3.0\"} {}", "trailing garbage", "trailing garbage"},
    {"{\"ociVersion\": \"1.3.0\",}", "invalid JSON at line 1", "trailing comma"},
    {"{\"ociVersion\": \"1.\xff\"}", "UTF8", "invalid UTF-8"},
    {"// comment\n{}", "invalid JSON", "comments"},
    {"[]", "config.json: expected an object, got an array", "top level is not an object"},
    {"{\"ociVersion\": \"a\\u0000b\"}", "ociVersion: string contains a NUL", "escaped NUL"},
    /* required */
    {"{}", "config.json: ociVersion: required field missing", "ociVersion"},
    {"{\"ociVersion\": null}", "ociVersion: required field missing", "null ociVersion"},
    {"{" BASE ",\"root\":{}}", "root.path: required field missing", "root.path"},
    {"{" BASE ",\"mounts\":[{\"source\":\"x\"}]}", "mounts[0].destination: required field missing",
     "mounts[].destination"},
    {"{" BASE ",\"process\":{\"args\":[\"sh\"]}}", "process.cwd: required field missing",
     "process.cwd"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\"}}", "process.args: required field missing",
     "process.args"},
    {PROC("\"args\":[]"), "process.args: must have at least one entry", "empty args"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"a\"],\"user\":{\"gid\":0}}}",
     "process.user.uid: required field missing", "user.uid"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":1}]"),
     "process.rlimits[0].soft: required field missing", "rlimit soft"},
    {"{" BASE ",\"hooks\":{\"poststop\":[{\"args\":[]}]}}",
     "hooks.poststop[0].path: required field missing", "hook path"},
    {LINUX("\"namespaces\":[{\"path\":\"/x\"}]"),
     "linux.namespaces[0].type: required field missing", "namespace type"},
    {LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"major\":1}]"),
     "linux.devices[0].minor: required field missing", "device minor"},
    {LINUX("\"devices\":[{\"type\":\"p\"}]"), "linux.devices[0].path: required field missing",
     "device path"},
    {LINUX("\"seccomp\":{}"), "linux.seccomp.defaultAction: required field missing",
     "seccomp defaultAction"},
    {SECCOMP("\"syscalls\":[{\"action\":\"SCMP_ACT_ALLOW\"}]"),
     "linux.seccomp.syscalls[0].names: required field missing", "syscall names"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{"
             "\"index\":1,\"op\":\"SCMP_CMP_EQ\"}]}]"),
     "linux.seccomp.syscalls[0].args[0].value: required field missing", "arg value"},
    {LINUX("\"uidMappings\":[{\"containerID\":0,\"hostID\":0}]"),
     "linux.uidMappings[0].size: required field missing", "idmapping size"},
    /* types */
    {"{\"ociVersion\": 1}", "ociVersion: expected a string, got a number", "ociVersion type"},
    {LINUX("\"namespaces\":[{\"type\":7}]"), "linux.namespaces[0].type: expected a string",
     "namespace type type"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":1,\"soft\":1},"
          "{\"type\":\"RLIMIT_NOFILE\",\"hard\":1,\"soft\":\"1\"}]"),
     "process.rlimits[1].soft: expected an unsigned integer", "rlimit soft as string"},
    {PROC("\"terminal\":\"yes\""), "process.terminal: expected a boolean, got a string",
     "terminal"},
    {PROC("\"env\":[\"A=1\",2]"), "process.env[1]: expected a string", "env entry"},
    {PROC("\"env\":\"A=1\""), "process.env: expected an array", "env not an array"},
    {"{" BASE ",\"mounts\":{}}", "mounts: expected an array", "mounts object"},
    {"{" BASE ",\"annotations\":{\"a\":1}}", "annotations.a: expected a string", "annotation"},
    {"{" BASE ",\"annotations\":{\"io.k8s/x\":true}}", "annotations[\"io.k8s/x\"]",
     "odd key in path"},
    {"{" BASE ",\"hooks\":{\"prestart\":{}}}", "hooks.prestart: expected an array",
     "hooks wrong type"},
    {"{" BASE ",\"hooks\":{\"createRuntime\":[{\"path\":\"/x\",\"timeout\":\"5\"}]}}",
     "hooks.createRuntime[0].timeout: expected an integer", "hook timeout type"},
    {"{" BASE ",\"linux\":[]}", "linux: expected an object, got an array", "linux type"},
    {RES("\"memory\":{\"limit\":1.5}"), "linux.resources.memory.limit: expected an integer",
     "fraction"},
    {RES("\"memory\":{\"limit\":1e9}"), "linux.resources.memory.limit: expected an integer",
     "exponent"},
    {RES("\"unified\":{\"a\":[]}"), "linux.resources.unified.a: expected a string", "unified"},
    {"{" BASE ",\"root\":{\"path\":\"r\",\"readonly\":1}}", "root.readonly: expected a boolean",
     "readonly"},
    /* ranges */
    {PROC("\"user\":{\"uid\":4294967296,\"gid\":0}"),
     "process.user.uid: value 4294967296 is out of range 0..4294967295", "uid 2^32"},
    {PROC("\"user\":{\"uid\":-1,\"gid\":0}"),
     "process.user.uid: expected an unsigned integer, got -1", "negative uid"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":18446744073709551616,\"soft\":1}]"),
     "process.rlimits[0].hard: value 18446744073709551616 is out of range", "rlimit 2^64"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":10,\"soft\":20}]"),
     "process.rlimits[0].soft: soft limit 20 is above the hard limit 10", "soft > hard"},
    {PROC("\"oomScoreAdj\":1001"), "process.oomScoreAdj: value 1001 is out of range -1000..1000",
     "oomScoreAdj"},
    {PROC("\"oomScoreAdj\":-1001"), "process.oomScoreAdj: value -1001 is out of range",
     "oomScoreAdj low"},
    {RES("\"blockIO\":{\"weight\":65536}"), "linux.resources.blockIO.weight: value 65536",
     "weight > 65535"},
    {RES("\"memory\":{\"limit\":9223372036854775808}"), "memory.limit: value 9223372036854775808",
     "int64 overflow"},
    {RES("\"memory\":{\"swappiness\":101}"), "memory.swappiness: value 101 is out of range 0..100",
     "swappiness"},
    {PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_RT\",\"priority\":8}"),
     "process.ioPriority.priority: value 8", "ioprio"},
    {"{" BASE ",\"hooks\":{\"poststart\":[{\"path\":\"/x\",\"timeout\":0}]}}",
     "hooks.poststart[0].timeout: value 0 is out of range", "hook timeout 0"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{"
             "\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]"),
     "syscalls[0].args[0].index: value 6 is out of range 0..5", "arg index"},
    {PROC("\"consoleSize\":{\"height\":70000,\"width\":80}"), "process.consoleSize.height",
     "console height"},
    {PROC("\"user\":{\"uid\":0,\"gid\":0,\"umask\":512}"), "process.user.umask: value 512",
     "umask"},
    {PROC("\"user\":{\"uid\":0,\"gid\":0,\"additionalGids\":[1,-2]}"),
     "process.user.additionalGids[1]: expected an unsigned integer", "negative gid"},
    {LINUX("\"timeOffsets\":{\"monotonic\":{\"nanosecs\":1000000000}}"),
     "linux.timeOffsets.monotonic.nanosecs: value 1000000000", "nanosecs"},
    {RES("\"pids\":{\"limit\":123456789012345678901234567890}"), "pids.limit: value 1234567890",
     "huge number"},
    /* allowed values */
    {LINUX("\"namespaces\":[{\"type\":\"pidd\"}]"),
     "linux.namespaces[0].type: unknown namespace type \"pidd\"", "namespace type"},
    {LINUX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"uts\"},{\"type\":\"pid\"}]"),
     "linux.namespaces[2].type: duplicate namespace type \"pid\"", "duplicate namespace"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_FOO\",\"hard\":1,\"soft\":1}]"),
     "process.rlimits[0].type: unknown rlimit type \"RLIMIT_FOO\"", "rlimit type"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"hard\":1,\"soft\":1},{\"type\":\"RLIMIT_CORE\","
          "\"hard\":2,\"soft\":2}]"),
     "process.rlimits[1].type: duplicate rlimit type \"RLIMIT_CORE\"", "duplicate rlimit"},
    {LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_DENY\"}"),
     "linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_DENY\"", "seccomp action"},
    {SECCOMP("\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_VAX\"]"),
     "linux.seccomp.architectures[1]: unknown seccomp architecture", "seccomp arch"},
    {SECCOMP("\"flags\":[\"SECCOMP_FILTER_FLAG_NOPE\"]"),
     "linux.seccomp.flags[0]: unknown seccomp flag", "seccomp flag"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{"
             "\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_NEQ\"}]}]"),
     "syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_NEQ\"", "seccomp op"},
    {LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"x\",\"major\":1,\"minor\":1}]"),
     "linux.devices[0].type: unknown device type \"x\"", "device type"},
    {LINUX("\"devices\":[{\"path\":\"dev/x\",\"type\":\"c\",\"major\":1,\"minor\":1}]"),
     "linux.devices[0].path: must be an absolute path", "relative device path"},
    {RES("\"devices\":[{\"allow\":true,\"type\":\"p\"}]"),
     "linux.resources.devices[0].type: unknown device cgroup type", "cgroup device type"},
    {RES("\"devices\":[{\"allow\":true,\"access\":\"rwx\"}]"),
     "linux.resources.devices[0].access: must consist of", "cgroup access"},
    {LINUX("\"rootfsPropagation\":\"everywhere\""),
     "linux.rootfsPropagation: unknown rootfs propagation \"everywhere\"", "propagation"},
    {PROC("\"ioPriority\":{\"class\":\"IOPRIO_CLASS_NONE\",\"priority\":0}"),
     "process.ioPriority.class: unknown I/O priority class", "ioprio class"},
    {PROC("\"scheduler\":{\"policy\":\"SCHED_FAST\"}"),
     "process.scheduler.policy: unknown scheduler policy", "scheduler policy"},
    {PROC("\"scheduler\":{\"policy\":\"SCHED_RR\",\"flags\":[\"SCHED_FLAG_X\"]}"),
     "process.scheduler.flags[0]: unknown scheduler flag", "scheduler flag"},
    {LINUX("\"personality\":{\"domain\":\"LINUX64\"}"),
     "linux.personality.domain: unknown personality domain", "personality"},
    {LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_FAST\"}"),
     "linux.memoryPolicy.mode: unknown memory policy mode", "mempolicy mode"},
    {LINUX("\"memoryPolicy\":{\"mode\":\"MPOL_BIND\",\"flags\":[\"MPOL_F_X\"]}"),
     "linux.memoryPolicy.flags[0]: unknown memory policy flag", "mempolicy flag"},
    {LINUX("\"timeOffsets\":{\"realtime\":{\"secs\":1}}"),
     "linux.timeOffsets.realtime: unknown key", "clock name"},
    {"{" BASE ",\"hooks\":{\"prestart\":[{\"path\":\"hook\"}]}}",
     "hooks.prestart[0].path: must be an absolute path", "relative hook path"},
    {PROC("\"cwd\":\"relative\""), "process.cwd: must be an absolute path", "relative cwd"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[{\"containerID\":0,"
     "\"hostID\":1,\"size\":1}]}]}",
     "mounts[0].gidMappings: uidMappings and gidMappings must be given together", "idmap pair"},
};

static void test_config_errors(void) {
  for (size_t i = 0; i < sizeof config_errors / sizeof config_errors[0]; i++) {
    const error_case *t = &config_errors[i];
    oci_config *c = NULL;
    char *err = NULL;
    int r = oci_config_parse(t->json, strlen(t->json), "config.json", &c, &err);
    char what[128];
    snprintf(what, sizeof what, "config error (%s)", t->why);
    if (r == 0) {
      tap_ok(false, "%s: parse fails", what);
      oci_config_free(c);
      continue;
    }
    bool one_line = err && strchr(err, '\n') == NULL;
    if (!tap_contains(err, t->want, what) || !one_line)
      tap_ok(one_line, "%s: message is one line", what);
    free(err);
  }
}

static void test_numbers(void) {
  /* the 2^53 region is where a double would round: 9007199254740993 */
  const char *json =
      "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"a\"],\"rlimits\":["
      "{\"type\":\"RLIMIT_AS\",\"hard\":18446744073709551615,\"soft\":9007199254740993}]}}";
  oci_config *c = NULL;
  char *err = NULL;
  bool parsed = oci_config_parse(json, strlen(json), "n", &c, &err) == 0;
  tap_ok(parsed && c->process->rlimits[0].hard == UINT64_MAX &&
             c->process->rlimits[0].soft == 9007199254740993ULL,
         "uint64 max and 2^53+1 parse exactly");
  char *out = parsed ? oci_config_serialize(c, false, &err) : NULL;
  tap_ok(out && strstr(out, "\"hard\":18446744073709551615,\"soft\":9007199254740993"),
         "and are written back exactly");
  free(out);
  free(err);
  oci_config_free(c);

  const char *bad[] = {"-0", "1.0", "1E2", "-1", "18446744073709551616", "\"5\"", "true"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char doc[256];
    snprintf(doc, sizeof doc,
             "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"a\"],\"rlimits\":["
             "{\"type\":\"RLIMIT_AS\",\"hard\":%s,\"soft\":0}]}}",
             bad[i]);
    err = NULL;
    c = NULL;
    int r = oci_config_parse(doc, strlen(doc), "n", &c, &err);
    tap_ok(r < 0 && err && strstr(err, "process.rlimits[0].hard: "),
           "rlimit hard %s is refused (%s)", bad[i], err ? err : "accepted");
    free(err);
    oci_config_free(c);
  }

  /* the path names a many-digit index exactly */
  {
    char doc[4096];
    size_t o = (size_t)snprintf(doc, sizeof doc, "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[");
    for (int i = 0; i < 120; i++)
      o += (size_t)snprintf(doc + o, sizeof doc - o, "\"a\",");
    snprintf(doc + o, sizeof doc - o, "7]}}");
    err = NULL;
    c = NULL;
    int r = oci_config_parse(doc, strlen(doc), "n", &c, &err);
    tap_ok(r < 0 && err && strstr(err, "process.args[120]: "), "args[120] is named (%s)",
           err ? err : "accepted");
    free(err);
    oci_config_free(c);
  }
}

static char *repeat(char ch, size_t n, const char *tail) {
  size_t tl = strlen(tail);
  char *s = malloc(n + tl + 1);
  memset(s, ch, n);
  memcpy(s + n, tail, tl + 1);
  return s;
}

static void test_nesting(void) {
  char *deep = repeat('[', 200000, "");
  oci_config *c = NULL;
  char *err = NULL;
  int r = oci_config_parse(deep, strlen(deep), "config.json", &c, &err);
  tap_ok(r < 0 && err && strstr(err, "nesting deeper than 256"), "200,000 x '[' is refused: %s",
         err ? err : "accepted");
  free(err);
  free(deep);

  /* exactly at the limit parses (and frees), one more does not */
  for (int depth = JSON_MAX_DEPTH; depth <= JSON_MAX_DEPTH + 1; depth++) {
    char *open = repeat('[', (size_t)depth, "");
    char *doc = malloc(2 * (size_t)depth + 1);
    memcpy(doc, open, (size_t)depth);
    memset(doc + depth, ']', (size_t)depth);
    doc[2 * depth] = '\0';
    json_value *v = NULL;
    err = NULL;
    r = json_parse(doc, strlen(doc), "deep", NULL, &v, &err);
    tap_ok(depth == JSON_MAX_DEPTH ? r == 0 : (r < 0 && strstr(err, "nesting")),
           "nesting depth %d %s", depth, depth == JSON_MAX_DEPTH ? "parses" : "is refused");
    json_free(v);
    free(err);
    free(open);
    free(doc);
  }

  /* a deep chain of objects under a config key is refused the same way */
  size_t n = 100000;
  char *objs = malloc(n * 6 + 64);
  size_t o = (size_t)sprintf(objs, "{" BASE ",\"annotations\":");
  for (size_t i = 0; i < n; i++)
    o += (size_t)sprintf(objs + o, "{\"a\":");
  objs[o] = '\0';
  err = NULL;
  r = oci_config_parse(objs, o, "config.json", &c, &err);
  tap_ok(r < 0 && err && strstr(err, "nesting deeper"), "100,000 nested objects are refused");
  free(err);
  free(objs);
}

static void test_duplicates_and_nulls(void) {
  size_t len;
  char *text = read_data("good-config/duplicate-keys.json", &len);
  oci_config *c = NULL;
  char *err = NULL;
  int r = text ? oci_config_parse(text, len, "dup", &c, &err) : -1;
  tap_ok(r == 0 && strcmp(c->oci_version, "1.3.0") == 0 && strcmp(c->hostname, "last") == 0 &&
             c->annotations.len == 2 && strcmp(oci_map_get(&c->annotations, "a"), "3") == 0,
         "config.json: a repeated key keeps its last value");
  oci_config_free(c);
  free(text);
  free(err);

  /* many repeated keys (the sorted path of the de-duplication) */
  size_t n = 5000;
  char *doc = malloc(n * 32 + 64);
  size_t o = (size_t)sprintf(doc, "{" BASE ",\"annotations\":{");
  for (size_t i = 0; i < n; i++)
    o += (size_t)sprintf(doc + o, "%s\"k%zu\":\"%zu\"", i ? "," : "", i % 1000, i);
  o += (size_t)sprintf(doc + o, "}}");
  c = NULL;
  err = NULL;
  r = oci_config_parse(doc, o, "dup", &c, &err);
  tap_ok(r == 0 && c->annotations.len == 1000 &&
             strcmp(oci_map_get(&c->annotations, "k7"), "4007") == 0 &&
             strcmp(c->annotations.keys[0], "k0") == 0,
         "5000 annotations over 1000 keys: last value wins, first order kept");
  oci_config_free(c);
  free(doc);
  free(err);

  text = read_data("good-config/nulls.json", &len);
  c = NULL;
  err = NULL;
  r = text ? oci_config_parse(text, len, "nulls", &c, &err) : -1;
  tap_ok(r == 0 && c->process && c->process->env.items == NULL && !c->process->user.has_umask &&
             c->hooks == NULL && c->linux_ && c->linux_->n_namespaces == 0 &&
             c->linux_->resources->memory && !c->linux_->resources->memory->has_limit &&
             !c->has_root,
         "null is the same as absent");
  if (r != 0)
    tap_diag("%s", err);
  oci_config_free(c);
  free(text);
  free(err);
}

/* --- the other documents
 * --------------------------------------------------------------------------- */

static void test_process_json(void) {
  const char *json =
      "{\"terminal\":false,\"user\":{\"uid\":1000,\"gid\":1000,\"additionalGids\":[10]},"
      "\"args\":[\"ls\",\"-l\"],\"env\":[\"A=b\"],\"cwd\":\"/tmp\","
      "\"capabilities\":{\"bounding\":[\"CAP_KILL\"]},\"noNewPrivileges\":true,"
      "\"apparmorProfile\":\"p\",\"oomScoreAdj\":0,\"unknownField\":1}";
  oci_process *p = NULL, *p2 = NULL;
  char *err = NULL;
  int r = oci_process_parse(json, strlen(json), "process.json", &p, &err);
  tap_ok(r == 0 && p->user.uid == 1000 && p->args.len == 2 && p->has_oom_score_adj &&
             p->oom_score_adj == 0 && p->no_new_privileges,
         "process.json parses");
  char *out = r == 0 ? oci_process_serialize(p, true, &err) : NULL;
  r = out ? oci_process_parse(out, strlen(out), "again", &p2, &err) : -1;
  tap_ok(r == 0 && oci_process_equal(p, p2), "process.json round trip");
  tap_ok(out && strstr(out, "\"oomScoreAdj\": 0") && !strstr(out, "terminal"),
         "oomScoreAdj 0 kept (it has a has_ flag), terminal false omitted");
  free(out);
  oci_process_free(p);
  oci_process_free(p2);
  free(err);

  err = NULL;
  p = NULL;
  r = oci_process_parse(LIT("{\"args\":[\"sh\"]}"), "process.json", &p, &err);
  tap_contains(err, "process.json: cwd: required field missing", "process.json without cwd");
  free(err);
  oci_process_free(p);
}

static void test_resources_json(void) {
  const char *json = "{\"memory\":{\"limit\":1048576,\"swap\":-1},\"cpu\":{\"shares\":512,"
                     "\"quota\":-1,\"cpus\":\"0\"},\"pids\":{\"limit\":-1},"
                     "\"blockIO\":{\"weight\":100},\"unified\":{\"cpu.idle\":\"1\"}}";
  oci_resources *r1 = NULL, *r2 = NULL;
  char *err = NULL;
  int r = oci_resources_parse(json, strlen(json), "resources", &r1, &err);
  tap_ok(r == 0 && r1->memory->limit == 1048576 && r1->memory->swap == -1 && r1->cpu->quota == -1 &&
             r1->pids->limit == -1 && r1->block_io->weight == 100 && r1->network == NULL,
         "update's resources JSON parses");
  char *out = r == 0 ? oci_resources_serialize(r1, false, &err) : NULL;
  r = out ? oci_resources_parse(out, strlen(out), "again", &r2, &err) : -1;
  tap_ok(r == 0 && oci_resources_equal(r1, r2), "resources round trip");
  free(out);
  oci_resources_free(r1);
  oci_resources_free(r2);
  free(err);

  err = NULL;
  r1 = NULL;
  r = oci_resources_parse(LIT("{\"memory\":{\"limit\":\"1G\"}}"), "resources.json", &r1, &err);
  tap_contains(err, "resources.json: memory.limit: expected an integer", "resources type error");
  free(err);
  oci_resources_free(r1);
}

static void test_state_json(void) {
  const char *json =
      "{\"ociVersion\":\"1.3.0\",\"id\":\"c1\",\"status\":\"running\",\"pid\":4242,"
      "\"bundle\":\"/b\",\"rootfs\":\"/b/rootfs\",\"created\":\"2026-01-02T03:04:05.123456789Z\","
      "\"owner\":\"\",\"annotations\":{\"k\":\"v\"},\"extra\":[1]}";
  oci_state *s = NULL, *s2 = NULL;
  char *err = NULL;
  int r = oci_state_parse(json, strlen(json), "state.json", &s, &err);
  tap_ok(r == 0 && s->pid == 4242 && strcmp(s->status, "running") == 0 &&
             strcmp(s->owner, "") == 0 && strcmp(oci_map_get(&s->annotations, "k"), "v") == 0,
         "state.json parses");
  char *out = r == 0 ? oci_state_serialize(s, false, &err) : NULL;
  r = out ? oci_state_parse(out, strlen(out), "again", &s2, &err) : -1;
  tap_ok(r == 0 && oci_state_equal(s, s2), "state round trip");
  free(out);
  oci_state_free(s);
  oci_state_free(s2);
  free(err);

  /* writing one from scratch, as the runtime does */
  oci_state st = {
      .oci_version = "1.3.0", .id = "x", .status = "created", .pid = 1, .bundle = "/bundle"};
  err = NULL;
  out = oci_state_serialize(&st, false, &err);
  tap_ok(out && strcmp(out, "{\"ociVersion\":\"1.3.0\",\"id\":\"x\",\"status\":\"created\","
                            "\"pid\":1,\"bundle\":\"/bundle\"}") == 0,
         "a hand-built state serialises with only the set fields: %s", out ? out : err);
  free(out);
  free(err);

  st.id = NULL;
  err = NULL;
  out = oci_state_serialize(&st, false, &err);
  tap_ok(out == NULL && err && strstr(err, "id: required field missing"),
         "serialising without a required field fails: %s", err ? err : "");
  free(out);
  free(err);

  st.id = "bad\xff";
  err = NULL;
  out = oci_state_serialize(&st, false, &err);
  tap_ok(out == NULL && err && strstr(err, "id: string is not valid UTF-8"),
         "serialising invalid UTF-8 fails: %s", err ? err : "");
  free(out);
  free(err);

  err = NULL;
  s = NULL;
  r = oci_state_parse(LIT("{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"x\",\"bundle\":\"/\","
                          "\"pid\":-5}"),
                      "state.json", &s, &err);
  tap_contains(err, "state.json: pid: value -5 is out of range", "negative pid");
  free(err);
  oci_state_free(s);
}

static void test_features_json(void) {
  const char *json =
      "{\"ociVersionMin\":\"1.0.0\",\"ociVersionMax\":\"1.3.0\",\"hooks\":[\"prestart\"],"
      "\"mountOptions\":[\"ro\",\"rbind\"],\"linux\":{\"namespaces\":[\"pid\"],\"capabilities\":["
      "\"CAP_KILL\"],\"cgroup\":{\"v1\":true,\"v2\":true,\"systemd\":false,\"systemdUser\":true,"
      "\"rdma\":true},\"seccomp\":{\"enabled\":true,\"actions\":[\"SCMP_ACT_LOG\"],\"operators\":["
      "\"SCMP_CMP_EQ\"],\"archs\":[\"SCMP_ARCH_X86_64\"],\"knownFlags\":[\"a\"],\"supportedFlags\":"
      "["
      "\"b\"]},\"apparmor\":{\"enabled\":true},\"selinux\":{\"enabled\":true},\"intelRdt\":{"
      "\"enabled\":true,\"schemata\":true,\"monitoring\":true},\"memoryPolicy\":{\"modes\":["
      "\"MPOL_BIND\"],\"flags\":[\"MPOL_F_STATIC_NODES\"]},\"mountExtensions\":{\"idmap\":{"
      "\"enabled\":true}},\"netDevices\":{\"enabled\":true}},\"annotations\":{\"org.x\":\"1\"},"
      "\"potentiallyUnsafeConfigAnnotations\":[\"com.example.\"]}";
  oci_features *f = NULL, *f2 = NULL;
  char *err = NULL;
  int r = oci_features_parse(json, strlen(json), "features.json", &f, &err);
  tap_ok(r == 0 && f->cgroup_v1 && f->cgroup_v2 && !f->cgroup_systemd && f->cgroup_systemd_user &&
             f->cgroup_rdma && f->seccomp_enabled && f->seccomp_supported_flags.len == 1 &&
             f->apparmor_enabled && f->selinux_enabled && f->intel_rdt_enabled &&
             f->intel_rdt_schemata && f->intel_rdt_monitoring && f->idmap_enabled &&
             f->net_devices_enabled && f->memory_policy_modes.len == 1 &&
             f->potentially_unsafe_config_annotations.len == 1,
         "features.json: every field");
  char *out = r == 0 ? oci_features_serialize(f, true, &err) : NULL;
  r = out ? oci_features_parse(out, strlen(out), "again", &f2, &err) : -1;
  tap_ok(r == 0 && oci_features_equal(f, f2), "features round trip");
  tap_ok(out &&
             strstr(out, "\"mountExtensions\": {\n      \"idmap\": {\n        \"enabled\": true"),
         "nested sections are written back, two-space indented");
  free(out);
  oci_features_free(f);
  oci_features_free(f2);
  free(err);
}

/* --- policy
 * ---------------------------------------------------------------------------------------- */

static void test_policy(void) {
  const char *bare = "{\"allowNetwork\":true,\"allowedPaths\":[\"/home/dev/.nvm\"],"
                     "\"writablePaths\":[\"/home/dev/.cache/pnpm\"],\"envAllowlist\":[\"PATH\","
                     "\"CI\"],\"cpuLimit\":{\"maxCores\":1.5,\"maxMs\":600000},"
                     "\"memoryLimitMb\":2048,\"allowedTcpPorts\":[443,22],\"pidsLimit\":100,"
                     "\"seccomp\":\"default\"}";
  oci_policy *p = NULL, *p2 = NULL;
  char *err = NULL;
  int r = oci_policy_parse(bare, strlen(bare), "policy.json", &p, &err);
  tap_ok(r == 0 && p->allow_network && p->allowed_paths.len == 1 && p->writable_paths.len == 1 &&
             p->has_env_allowlist && p->env_allowlist.len == 2 && p->has_cpu_max_cores &&
             p->cpu_max_cores == 1.5 && p->cpu_max_ms == 600000 && p->memory_limit_mb == 2048 &&
             p->n_allowed_tcp_ports == 2 && p->allowed_tcp_ports[1] == 22 && p->pids_limit == 100 &&
             strcmp(p->seccomp, "default") == 0 && p->backend == NULL,
         "bare policy parses");
  char *canon = r == 0 ? oci_policy_serialize(p, &err) : NULL;
  tap_ok(canon && strcmp(canon, "{\"allowNetwork\":true,\"allowedPaths\":[\"/home/dev/.nvm\"],"
                                "\"allowedTcpPorts\":[443,22],\"cpuLimit\":{\"maxCores\":1.5,"
                                "\"maxMs\":600000},\"envAllowlist\":[\"PATH\",\"CI\"],"
                                "\"memoryLimitMb\":2048,\"pidsLimit\":100,\"seccomp\":\"default\","
                                "\"writablePaths\":[\"/home/dev/.cache/pnpm\"]}") == 0,
         "canonical form: keys sorted, compact");
  if (canon)
    tap_diag("%s", canon);
  r = canon ? oci_policy_parse(canon, strlen(canon), "again", &p2, &err) : -1;
  tap_ok(r == 0 && oci_policy_equal(p, p2), "policy round trip");
  oci_policy_free(p2);
  free(canon);
  oci_policy_free(p);

  /* semantically equal policies hash equal */
  oci_policy *a = NULL, *b = NULL;
  oci_policy_parse(LIT("{}"), "a", &a, &err);
  oci_policy_parse(LIT("{\"allowNetwork\":false,\"allowedPaths\":[],\"cpuLimit\":{}}"), "b", &b,
                   &err);
  char *ca = a ? oci_policy_serialize(a, &err) : NULL,
       *cb = b ? oci_policy_serialize(b, &err) : NULL;
  tap_ok(ca && cb && strcmp(ca, cb) == 0 && strcmp(ca, "{\"allowNetwork\":false}") == 0,
         "{} and explicit defaults have the same canonical form (%s)", ca ? ca : "");
  free(ca);
  free(cb);
  oci_policy_free(a);
  oci_policy_free(b);

  const char *settings = "{\"sandbox\":{\"backend\":\"fsrun\",\"failureMode\":\"fallback-native\","
                         "\"policy\":{\"allowNetwork\":false,\"memoryLimitMb\":512}}}";
  p = NULL;
  r = oci_policy_parse(settings, strlen(settings), "settings.json", &p, &err);
  tap_ok(r == 0 && strcmp(p->backend, "fsrun") == 0 &&
             strcmp(p->failure_mode, "fallback-native") == 0 && p->memory_limit_mb == 512,
         "Fusion settings wrapper parses");
  canon = r == 0 ? oci_policy_serialize(p, &err) : NULL;
  tap_ok(canon && strcmp(canon, "{\"sandbox\":{\"backend\":\"fsrun\",\"failureMode\":"
                                "\"fallback-native\",\"policy\":{\"allowNetwork\":false,"
                                "\"memoryLimitMb\":512}}}") == 0,
         "wrapper canonical form: %s", canon ? canon : "");
  p2 = NULL;
  r = canon ? oci_policy_parse(canon, strlen(canon), "again", &p2, &err) : -1;
  tap_ok(r == 0 && oci_policy_equal(p, p2), "wrapper round trip");
  free(canon);
  oci_policy_free(p);
  oci_policy_free(p2);

  static const error_case policy_errors[] = {
      {"{\"allowNetwrok\":true}",
       "policy.json: allowNetwrok: unknown key (did you mean \"allowNetwork\"?)", "misspelt key"},
      {"{\"cpuLimit\":{\"maxCore\":2}}", "policy.json: cpuLimit.maxCore: unknown key",
       "nested unknown key"},
      {"{\"sandbox\":{\"policy\":{\"memoryLimitMB\":1}}}",
       "policy.json: sandbox.policy.memoryLimitMB: unknown key", "unknown key in wrapper policy"},
      {"{\"sandbox\":{\"backend\":\"fsrun\",\"extra\":1}}",
       "policy.json: sandbox.extra: unknown key", "unknown key in wrapper"},
      {"{\"sandbox\":{},\"allowNetwork\":true}", "policy.json: allowNetwork: unknown key",
       "policy keys beside sandbox"},
      {"{\"sandbox\":{\"failureMode\":\"retry\"}}",
       "policy.json: sandbox.failureMode: unknown failure mode \"retry\"", "failureMode"},
      {"{\"allowNetwork\":false,\"allowNetwork\":true}", "policy.json: allowNetwork: duplicate key",
       "duplicate key"},
      {"{\"allowNetwork\":\"no\"}", "policy.json: allowNetwork: expected a boolean", "type"},
      {"{\"allowedPaths\":[\"relative/dir\"]}",
       "policy.json: allowedPaths[0]: must be an absolute path", "relative path"},
      {"{\"memoryLimitMb\":-1}", "memoryLimitMb: expected an unsigned integer", "negative memory"},
      {"{\"memoryLimitMb\":0}", "memoryLimitMb: value 0 is out of range", "zero memory"},
      {"{\"memoryLimitMb\":8796093022208}", "memoryLimitMb: value 8796093022208 is out of range",
       "memory overflowing int64 bytes"},
      {"{\"cpuLimit\":{\"maxCores\":0}}", "cpuLimit.maxCores: must be a number above 0",
       "zero cores"},
      {"{\"cpuLimit\":{\"maxCores\":\"2\"}}", "cpuLimit.maxCores: expected a number", "cores type"},
      {"{\"allowedTcpPorts\":[80,65536]}",
       "allowedTcpPorts[1]: value 65536 is out of range 1..65535", "port range"},
      {"{\"envAllowlist\":[\"A=B\"]}", "envAllowlist[0]: not a variable name", "env name"},
      {"{\"seccomp\":\"\"}", "seccomp: must not be empty", "empty seccomp"},
      {"[]", "policy.json: expected an object, got an array", "array policy"},
      {"", "policy.json: empty document", "empty policy"},
  };
  for (size_t i = 0; i < sizeof policy_errors / sizeof policy_errors[0]; i++) {
    const error_case *t = &policy_errors[i];
    p = NULL;
    err = NULL;
    r = oci_policy_parse(t->json, strlen(t->json), "policy.json", &p, &err);
    char what[128];
    snprintf(what, sizeof what, "policy error (%s)", t->why);
    if (r == 0) {
      tap_ok(false, "%s: parse fails", what);
      oci_policy_free(p);
      continue;
    }
    tap_contains(err, t->want, what);
    free(err);
  }
}

/* --- the data directories
 * ---------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t list_json(const char *dir, char ***names) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, dir);
  DIR *d = opendir(path);
  size_t n = 0;
  *names = NULL;
  if (d == NULL)
    return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t l = strlen(de->d_name);
    if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
      continue;
    *names = realloc(*names, (n + 1) * sizeof(char *));
    (*names)[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(*names, n, sizeof(char *), name_cmp);
  return n;
}

static void test_good_configs(void) {
  char **names;
  size_t n = list_json("good-config", &names);
  tap_ok(n >= 3, "tests/data/good-config has %zu files", n);
  for (size_t i = 0; i < n; i++) {
    char rel[512], *err = NULL;
    snprintf(rel, sizeof rel, "good-config/%s", names[i]);
    size_t len;
    char *text = read_data(rel, &len);
    oci_config *c = NULL;
    if (tap_ok(text && oci_config_parse(text, len, names[i], &c, &err) == 0, "%s parses", rel))
      check_config_round_trip(c, rel);
    else
      tap_diag("%s", err ? err : "");
    oci_config_free(c);
    free(text);
    free(err);
    free(names[i]);
  }
  free(names);
}

static void test_bad_configs(void) {
  char **names;
  size_t n = list_json("bad-config", &names);
  tap_ok(n >= 35, "tests/data/bad-config has %zu files (at least 35)", n);
  for (size_t i = 0; i < n; i++) {
    char rel[512], expect_rel[512];
    snprintf(rel, sizeof rel, "bad-config/%s", names[i]);
    snprintf(expect_rel, sizeof expect_rel, "bad-config/%.*s.expect", (int)(strlen(names[i]) - 5),
             names[i]);
    size_t len, elen;
    char *text = read_data(rel, &len);
    char *want = read_data(expect_rel, &elen);
    while (want && elen > 0 && (want[elen - 1] == '\n' || want[elen - 1] == '\r'))
      want[--elen] = '\0';
    oci_config *c = NULL;
    char *err = NULL;
    int r = text ? oci_config_parse(text, len, "config.json", &c, &err) : 0;
    if (r == 0) {
      tap_ok(false, "%s is refused", rel);
      oci_config_free(c);
    } else {
      tap_contains(err, want ? want : "(missing .expect)", rel);
    }
    free(err);
    free(text);
    free(want);
    free(names[i]);
  }
  free(names);
}

static void test_helpers(void) {
  oci_map m = {0};
  tap_ok(oci_map_set(&m, "a", "1") == 0 && oci_map_set(&m, "b", "2") == 0 &&
             oci_map_set(&m, "a", "3") == 0 && m.len == 2 &&
             strcmp(oci_map_get(&m, "a"), "3") == 0 && oci_map_get(&m, "c") == NULL,
         "oci_map_set replaces and appends, oci_map_get finds");
  oci_map_free(&m);
  tap_ok(m.len == 0 && m.keys == NULL, "oci_map_free empties");

  char *text = NULL, *err = NULL;
  size_t len;
  tap_ok(oci_read_file("/nonexistent/config.json", &text, &len, &err) < 0 && err &&
             strstr(err, "/nonexistent/config.json: open: No such file"),
         "oci_read_file names the file and the errno");
  free(err);
  err = NULL;
  oci_config *c = NULL;
  tap_ok(oci_config_parse_file("/nonexistent/x.json", NULL, &c, &err) < 0 && c == NULL && err,
         "oci_config_parse_file of a missing file fails");
  free(err);
  err = NULL;
  tap_ok(oci_read_file("/", &text, &len, &err) < 0 && err && strstr(err, "Is a directory"),
         "oci_read_file refuses a directory");
  free(err);
}

int main(void) {
  test_full_config();
  test_numbers();
  test_config_errors();
  test_nesting();
  test_duplicates_and_nulls();
  test_process_json();
  test_resources_json();
  test_state_json();
  test_features_json();
  test_policy();
  test_good_configs();
  test_bad_configs();
  test_helpers();
  return tap_done();
}
