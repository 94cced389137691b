/* features.json (runtime-spec 1.3 features.md and features-linux.md). The nested "linux" sections
 * map to flat fields of oci_features. */
#include <stdlib.h>

#include "model.h"

static const field_desc cgroup_fields[] = {
    FIELD("v1", FK_BOOL, oci_features, cgroup_v1),
    FIELD("v2", FK_BOOL, oci_features, cgroup_v2),
    FIELD("systemd", FK_BOOL, oci_features, cgroup_systemd),
    FIELD("systemdUser", FK_BOOL, oci_features, cgroup_systemd_user),
    FIELD("rdma", FK_BOOL, oci_features, cgroup_rdma),
};
static const type_desc cgroup_desc = DESC(oci_features, cgroup_fields);

static const field_desc seccomp_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, seccomp_enabled),
    FIELD("actions", FK_STRV, oci_features, seccomp_actions),
    FIELD("operators", FK_STRV, oci_features, seccomp_operators),
    FIELD("archs", FK_STRV, oci_features, seccomp_archs),
    FIELD("knownFlags", FK_STRV, oci_features, seccomp_known_flags),
    FIELD("supportedFlags", FK_STRV, oci_features, seccomp_supported_flags),
};
static const type_desc seccomp_desc = DESC(oci_features, seccomp_fields);

static const field_desc apparmor_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, apparmor_enabled),
};
static const type_desc apparmor_desc = DESC(oci_features, apparmor_fields);

static const field_desc selinux_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, selinux_enabled),
};
static const type_desc selinux_desc = DESC(oci_features, selinux_fields);

static const field_desc intel_rdt_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, intel_rdt_enabled),
    FIELD("schemata", FK_BOOL, oci_features, intel_rdt_schemata),
    FIELD("monitoring", FK_BOOL, oci_features, intel_rdt_monitoring),
};
static const type_desc intel_rdt_desc = DESC(oci_features, intel_rdt_fields);

static const field_desc memory_policy_fields[] = {
    FIELD("modes", FK_STRV, oci_features, memory_policy_modes),
    FIELD("flags", FK_STRV, oci_features, memory_policy_flags),
};
static const type_desc memory_policy_desc = DESC(oci_features, memory_policy_fields);

static const field_desc idmap_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, idmap_enabled),
};
static const type_desc idmap_desc = DESC(oci_features, idmap_fields);

static const field_desc mount_extensions_fields[] = {
    {.key = "idmap", .kind = FK_INLINE, .sub = &idmap_desc},
};
static const type_desc mount_extensions_desc = DESC(oci_features, mount_extensions_fields);

static const field_desc net_devices_fields[] = {
    FIELD("enabled", FK_BOOL, oci_features, net_devices_enabled),
};
static const type_desc net_devices_desc = DESC(oci_features, net_devices_fields);

static const field_desc linux_fields[] = {
    FIELD("namespaces", FK_STRV, oci_features, namespaces),
    FIELD("capabilities", FK_STRV, oci_features, capabilities),
    {.key = "cgroup", .kind = FK_INLINE, .sub = &cgroup_desc},
    {.key = "seccomp", .kind = FK_INLINE, .sub = &seccomp_desc},
    {.key = "apparmor", .kind = FK_INLINE, .sub = &apparmor_desc},
    {.key = "selinux", .kind = FK_INLINE, .sub = &selinux_desc},
    {.key = "intelRdt", .kind = FK_INLINE, .sub = &intel_rdt_desc},
    {.key = "memoryPolicy", .kind = FK_INLINE, .sub = &memory_policy_desc},
    {.key = "mountExtensions", .kind = FK_INLINE, .sub = &mount_extensions_desc},
    {.key = "netDevices", .kind = FK_INLINE, .sub = &net_devices_desc},
};
static const type_desc linux_desc = DESC(oci_features, linux_fields);

static const field_desc features_fields[] = {
    FIELD("ociVersionMin", FK_STRING, oci_features, oci_version_min, .flags = F_REQUIRED),
    FIELD("ociVersionMax", FK_STRING, oci_features, oci_version_max, .flags = F_REQUIRED),
    FIELD("hooks", FK_STRV, oci_features, hooks),
    FIELD("mountOptions", FK_STRV, oci_features, mount_options),
    {.key = "linux", .kind = FK_INLINE, .sub = &linux_desc},
    FIELD("annotations", FK_MAP, oci_features, annotations),
    FIELD("potentiallyUnsafeConfigAnnotations", FK_STRV, oci_features,
          potentially_unsafe_config_annotations),
};
const type_desc oci_features_desc = DESC(oci_features, features_fields);

int oci_features_parse(const char *json, size_t len, const char *what, oci_features **out,
                       char **err) {
  return model_parse(&oci_features_desc, json, len, what ? what : "features.json", false,
                     (void **)out, err);
}

char *oci_features_serialize(const oci_features *f, bool pretty, char **err) {
  return model_serialize(&oci_features_desc, f, "features", pretty, err);
}

void oci_features_free(oci_features *f) {
  model_free_fields(&oci_features_desc, f);
  free(f);
}
