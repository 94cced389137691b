/* The Fusion sandbox policy (Fusion's SandboxPolicy plus fsrun's extensions), bare or inside a
 * Fusion settings object {"sandbox": {"backend", "policy", "failureMode"}}. Strict: an unknown or
 * repeated key is an error, so that a misspelt key can never silently widen the sandbox. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const failure_modes[] = {"fail-hard", "fallback-native", NULL};
static const char *const network_profiles[] = {"egress", "host", NULL};
static const char *const limits_modes[] = {"best-effort", "require", NULL};

static const field_desc cpu_limit_fields[] = {
    FIELD("maxCores", FK_DOUBLE, oci_policy, cpu_max_cores,
          .has_off = HAS(oci_policy, has_cpu_max_cores)),
    FIELD("maxMs", FK_U64, oci_policy, cpu_max_ms, .has_off = HAS(oci_policy, has_cpu_max_ms),
          URANGE(1, INT64_MAX)),
};
static const type_desc cpu_limit_desc = DESC(oci_policy, cpu_limit_fields, .strict = true);

static int validate_policy(decode_ctx *c, const void *obj) {
  const oci_policy *p = obj;
  if (p->has_cpu_max_cores && !(p->cpu_max_cores > 0 && p->cpu_max_cores <= 65536)) {
    size_t old = json_path_push_key(&c->path, "cpuLimit");
    decode_fail_at_key(c, "maxCores", "must be a number above 0 and at most 65536");
    json_path_pop(&c->path, old);
    return -1;
  }
  /* a profile for a network that is off says something the policy does not mean */
  if (p->network != NULL && !p->allow_network) {
    decode_fail_at_key(c, "network", "only applies with \"allowNetwork\": true");
    return -1;
  }
  /* the routes are the egress profile's network namespace's: the host's is not ours to change */
  if ((p->allow_link_local || p->block_private_networks) &&
      (!p->allow_network || (p->network != NULL && strcmp(p->network, "host") == 0))) {
    decode_fail_at_key(c, p->allow_link_local ? "allowLinkLocal" : "blockPrivateNetworks",
                       "only applies with \"allowNetwork\": true and the egress profile");
    return -1;
  }
  for (size_t i = 0; i < p->env_allowlist.len; i++) {
    const char *name = p->env_allowlist.items[i];
    if (name[0] == '\0' || strchr(name, '=') != NULL) {
      size_t old = json_path_push_key(&c->path, "envAllowlist");
      decode_fail_at_index(c, i, NULL, "not a variable name");
      json_path_pop(&c->path, old);
      return -1;
    }
  }
  return 0;
}

/* keys in byte order: the serialisation is canonical (its sha256 is the audit's policyHash) */
static const field_desc policy_fields[] = {
    FIELD("allowLinkLocal", FK_BOOL, oci_policy, allow_link_local, .flags = F_OMIT_ZERO),
    FIELD("allowNetwork", FK_BOOL, oci_policy, allow_network),
    FIELD("allowedPaths", FK_STRV, oci_policy, allowed_paths, .flags = F_ABSPATH | F_OMIT_ZERO),
    FIELD("allowedTcpPorts", FK_U16_ARRAY, oci_policy, allowed_tcp_ports,
          COUNT(oci_policy, n_allowed_tcp_ports), URANGE(1, 65535)),
    FIELD("blockPrivateNetworks", FK_BOOL, oci_policy, block_private_networks,
          .flags = F_OMIT_ZERO),
    {.key = "cpuLimit", .kind = FK_INLINE, .sub = &cpu_limit_desc},
    FIELD("envAllowlist", FK_STRV, oci_policy, env_allowlist,
          .has_off = HAS(oci_policy, has_env_allowlist)),
    FIELD("limitsMode", FK_STRING, oci_policy, limits_mode, ONE_OF(limits_modes, "limits mode")),
    /* in bytes it must still fit the cgroup's int64 */
    FIELD("memoryLimitMb", FK_U64, oci_policy, memory_limit_mb,
          .has_off = HAS(oci_policy, has_memory_limit_mb), URANGE(1, INT64_MAX / (1024 * 1024))),
    FIELD("network", FK_STRING, oci_policy, network, ONE_OF(network_profiles, "network profile")),
    FIELD("pidsLimit", FK_U64, oci_policy, pids_limit, .has_off = HAS(oci_policy, has_pids_limit),
          URANGE(1, INT64_MAX)),
    FIELD("seccomp", FK_STRING, oci_policy, seccomp, .flags = F_NONEMPTY),
    FIELD("writablePaths", FK_STRV, oci_policy, writable_paths, .flags = F_ABSPATH | F_OMIT_ZERO),
};
const type_desc oci_policy_desc =
    DESC(oci_policy, policy_fields, .strict = true, .validate = validate_policy);

static const field_desc sandbox_fields[] = {
    FIELD("backend", FK_STRING, oci_policy, backend, .flags = F_NONEMPTY),
    FIELD("failureMode", FK_STRING, oci_policy, failure_mode,
          ONE_OF(failure_modes, "failure mode")),
    {.key = "policy", .kind = FK_INLINE, .sub = &oci_policy_desc},
};
static const type_desc sandbox_desc = DESC(oci_policy, sandbox_fields, .strict = true);

static const field_desc settings_fields[] = {
    {.key = "sandbox", .kind = FK_INLINE, .flags = F_REQUIRED, .sub = &sandbox_desc},
};
const type_desc oci_policy_settings_desc = DESC(oci_policy, settings_fields, .strict = true);

int oci_policy_parse(const char *json, size_t len, const char *what, oci_policy **out, char **err) {
  *out = NULL;
  *err = NULL;
  if (what == NULL)
    what = "policy.json";
  if (json == NULL) {
    json = "";
    len = 0;
  }
  json_parse_options opts = {.reject_duplicate_keys = true};
  json_value *root = NULL;
  if (json_parse(json, len, what, &opts, &root, err) < 0)
    return -1;
  oci_policy *p = calloc(1, sizeof *p);
  if (p == NULL) {
    json_free(root);
    *err = strdup("out of memory");
    return -1;
  }
  /* "sandbox" is not a policy key, so the two forms cannot be confused */
  const type_desc *d =
      json_object_get(root, "sandbox") != NULL ? &oci_policy_settings_desc : &oci_policy_desc;
  decode_ctx c = {.what = what};
  int r = model_decode(&c, d, root, p);
  json_free(root);
  json_path_free(&c.path);
  if (r < 0) {
    oci_policy_free(p);
    *err = c.err ? c.err : strdup("invalid policy");
    return -1;
  }
  free(c.err);
  *out = p;
  return 0;
}

char *oci_policy_serialize(const oci_policy *p, char **err) {
  const type_desc *d = p != NULL && (p->backend != NULL || p->failure_mode != NULL)
                           ? &oci_policy_settings_desc
                           : &oci_policy_desc;
  return model_serialize(d, p, "policy", false, err);
}

void oci_policy_free(oci_policy *p) {
  if (p != NULL)
    free(p->seccomp_profile_text);
  /* the settings description covers every field, the bare policy's included */
  model_free_fields(&oci_policy_settings_desc, p);
  free(p);
}
