/* config.json: the top level, mounts, hooks and the linux section (resources, seccomp and process
 * are described in their own files). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

const char *const oci_namespace_types[] = {
    "pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time", NULL,
};

static const char *const device_types[] = {"c", "b", "u", "p", NULL};

static const char *const propagation_values[] = {
    "shared", "slave",    "private",     "unbindable", "rshared",
    "rslave", "rprivate", "runbindable", NULL,
};

static const char *const memory_policy_modes[] = {
    "MPOL_DEFAULT",   "MPOL_BIND",           "MPOL_INTERLEAVE", "MPOL_WEIGHTED_INTERLEAVE",
    "MPOL_PREFERRED", "MPOL_PREFERRED_MANY", "MPOL_LOCAL",      NULL,
};

static const char *const memory_policy_flags[] = {
    "MPOL_F_NUMA_BALANCING",
    "MPOL_F_RELATIVE_NODES",
    "MPOL_F_STATIC_NODES",
    NULL,
};

static const char *const personality_domains[] = {"LINUX", "LINUX32", NULL};

/* --- mounts, hooks ---------------------------------------------------------------------------- */

static const field_desc id_mapping_fields[] = {
    FIELD("containerID", FK_U32, oci_id_mapping, container_id, .flags = F_REQUIRED),
    FIELD("hostID", FK_U32, oci_id_mapping, host_id, .flags = F_REQUIRED),
    FIELD("size", FK_U32, oci_id_mapping, size, .flags = F_REQUIRED),
};
const type_desc oci_id_mapping_desc = DESC(oci_id_mapping, id_mapping_fields);

static int validate_mount(decode_ctx *c, const void *obj) {
  const oci_mount *m = obj;
  /* "If specified, it MUST be specified along with gidMappings" (and the other way round) */
  if ((m->n_uid_mappings > 0) != (m->n_gid_mappings > 0))
    return decode_fail_at_key(c, m->n_uid_mappings ? "gidMappings" : "uidMappings",
                              "uidMappings and gidMappings must be given together");
  return 0;
}

static const field_desc mount_fields[] = {
    FIELD("destination", FK_STRING, oci_mount, destination, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("type", FK_STRING, oci_mount, type),
    FIELD("source", FK_STRING, oci_mount, source),
    FIELD("options", FK_STRV, oci_mount, options),
    FIELD("uidMappings", FK_OBJ_ARRAY, oci_mount, uid_mappings, COUNT(oci_mount, n_uid_mappings),
          .sub = &oci_id_mapping_desc),
    FIELD("gidMappings", FK_OBJ_ARRAY, oci_mount, gid_mappings, COUNT(oci_mount, n_gid_mappings),
          .sub = &oci_id_mapping_desc),
};
static const type_desc mount_desc = DESC(oci_mount, mount_fields, .validate = validate_mount);

static const field_desc hook_fields[] = {
    /* "path MUST be absolute" */
    FIELD("path", FK_STRING, oci_hook, path, .flags = F_REQUIRED | F_ABSPATH),
    FIELD("args", FK_STRV, oci_hook, args),
    FIELD("env", FK_STRV, oci_hook, env),
    /* "If set, timeout MUST be greater than zero" */
    FIELD("timeout", FK_I64, oci_hook, timeout, .has_off = HAS(oci_hook, has_timeout),
          SRANGE(1, INT32_MAX)),
};
static const type_desc hook_desc = DESC(oci_hook, hook_fields);

#define HOOK_LIST(key, member)                                                                     \
  FIELD(key, FK_OBJ_ARRAY, oci_hooks, member.items, COUNT(oci_hooks, member.len), .sub = &hook_desc)
static const field_desc hooks_fields[] = {
    HOOK_LIST("prestart", prestart),
    HOOK_LIST("createRuntime", create_runtime),
    HOOK_LIST("createContainer", create_container),
    HOOK_LIST("startContainer", start_container),
    HOOK_LIST("poststart", poststart),
    HOOK_LIST("poststop", poststop),
};
static const type_desc hooks_desc = DESC(oci_hooks, hooks_fields);

/* --- linux ------------------------------------------------------------------------------------ */

static const field_desc namespace_fields[] = {
    FIELD("type", FK_STRING, oci_namespace, type, .flags = F_REQUIRED,
          ONE_OF(oci_namespace_types, "namespace type")),
    FIELD("path", FK_STRING, oci_namespace, path, .flags = F_NONEMPTY),
};
static const type_desc namespace_desc = DESC(oci_namespace, namespace_fields);

static int validate_device(decode_ctx *c, const void *obj) {
  const oci_device *d = obj;
  /* "major, minor (int64, REQUIRED unless type is p)" */
  if (strcmp(d->type, "p") != 0) {
    if (!d->has_major)
      return decode_fail_at_key(c, "major", "required field missing (type is not \"p\")");
    if (!d->has_minor)
      return decode_fail_at_key(c, "minor", "required field missing (type is not \"p\")");
  }
  return 0;
}

static const field_desc device_fields[] = {
    FIELD("path", FK_STRING, oci_device, path, .flags = F_REQUIRED | F_ABSPATH),
    FIELD("type", FK_STRING, oci_device, type, .flags = F_REQUIRED,
          ONE_OF(device_types, "device type")),
    /* makedev(3) takes unsigned ints */
    FIELD("major", FK_I64, oci_device, major, .has_off = HAS(oci_device, has_major),
          SRANGE(0, UINT32_MAX)),
    FIELD("minor", FK_I64, oci_device, minor, .has_off = HAS(oci_device, has_minor),
          SRANGE(0, UINT32_MAX)),
    FIELD("fileMode", FK_U32, oci_device, file_mode, .has_off = HAS(oci_device, has_file_mode)),
    FIELD("uid", FK_U32, oci_device, uid, .has_off = HAS(oci_device, has_uid)),
    FIELD("gid", FK_U32, oci_device, gid, .has_off = HAS(oci_device, has_gid)),
};
static const type_desc device_desc = DESC(oci_device, device_fields, .validate = validate_device);

static const field_desc net_device_fields[] = {
    FIELD("name", FK_STRING, oci_net_device, name),
};
static const type_desc net_device_desc = DESC(oci_net_device, net_device_fields);

static const field_desc monotonic_fields[] = {
    FIELD("secs", FK_I64, oci_time_offsets, monotonic_secs),
    FIELD("nanosecs", FK_U32, oci_time_offsets, monotonic_nanosecs, URANGE(0, 999999999)),
};
static const type_desc monotonic_desc = DESC(oci_time_offsets, monotonic_fields);

static const field_desc boottime_fields[] = {
    FIELD("secs", FK_I64, oci_time_offsets, boottime_secs),
    FIELD("nanosecs", FK_U32, oci_time_offsets, boottime_nanosecs, URANGE(0, 999999999)),
};
static const type_desc boottime_desc = DESC(oci_time_offsets, boottime_fields);

/* the keys are clock names; a time namespace has only these two */
static const field_desc time_offsets_fields[] = {
    {.key = "monotonic",
     .kind = FK_INLINE,
     .has_off = HAS(oci_time_offsets, has_monotonic),
     .sub = &monotonic_desc},
    {.key = "boottime",
     .kind = FK_INLINE,
     .has_off = HAS(oci_time_offsets, has_boottime),
     .sub = &boottime_desc},
};
static const type_desc time_offsets_desc =
    DESC(oci_time_offsets, time_offsets_fields, .strict = true);

static const field_desc intel_rdt_fields[] = {
    FIELD("closID", FK_STRING, oci_intel_rdt, clos_id),
    FIELD("schemata", FK_STRV, oci_intel_rdt, schemata),
    FIELD("l3CacheSchema", FK_STRING, oci_intel_rdt, l3_cache_schema),
    FIELD("memBwSchema", FK_STRING, oci_intel_rdt, mem_bw_schema),
    FIELD("enableMonitoring", FK_BOOL, oci_intel_rdt, enable_monitoring,
          .has_off = HAS(oci_intel_rdt, has_enable_monitoring)),
};
static const type_desc intel_rdt_desc = DESC(oci_intel_rdt, intel_rdt_fields);

static const field_desc memory_policy_fields[] = {
    FIELD("mode", FK_STRING, oci_memory_policy, mode, .flags = F_REQUIRED,
          ONE_OF(memory_policy_modes, "memory policy mode")),
    FIELD("nodes", FK_STRING, oci_memory_policy, nodes),
    FIELD("flags", FK_STRV, oci_memory_policy, flags,
          ONE_OF(memory_policy_flags, "memory policy flag")),
};
static const type_desc memory_policy_desc = DESC(oci_memory_policy, memory_policy_fields);

static const field_desc personality_fields[] = {
    FIELD("domain", FK_STRING, oci_personality, domain, .flags = F_REQUIRED,
          ONE_OF(personality_domains, "personality domain")),
    FIELD("flags", FK_STRV, oci_personality, flags),
};
static const type_desc personality_desc = DESC(oci_personality, personality_fields);

static int validate_linux(decode_ctx *c, const void *obj) {
  const oci_linux *l = obj;
  /* "If a namespaces field contains duplicated namespaces with same type, the runtime MUST
   * generate an error"; the types come from a list of eight, so this ends early */
  for (size_t i = 0; i < l->n_namespaces; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(l->namespaces[i].type, l->namespaces[j].type) == 0) {
        size_t old = json_path_push_key(&c->path, "namespaces");
        decode_fail_at_index(c, i, "type",
                             "duplicate namespace type \"%s\" (also in namespaces[%zu])",
                             l->namespaces[i].type, j);
        json_path_pop(&c->path, old);
        return -1;
      }
  return 0;
}

static const field_desc linux_fields[] = {
    FIELD("uidMappings", FK_OBJ_ARRAY, oci_linux, uid_mappings, COUNT(oci_linux, n_uid_mappings),
          .sub = &oci_id_mapping_desc),
    FIELD("gidMappings", FK_OBJ_ARRAY, oci_linux, gid_mappings, COUNT(oci_linux, n_gid_mappings),
          .sub = &oci_id_mapping_desc),
    FIELD("sysctl", FK_MAP, oci_linux, sysctl),
    FIELD("resources", FK_OBJECT, oci_linux, resources, .sub = &oci_resources_desc),
    FIELD("cgroupsPath", FK_STRING, oci_linux, cgroups_path),
    FIELD("namespaces", FK_OBJ_ARRAY, oci_linux, namespaces, COUNT(oci_linux, n_namespaces),
          .sub = &namespace_desc),
    FIELD("devices", FK_OBJ_ARRAY, oci_linux, devices, COUNT(oci_linux, n_devices),
          .sub = &device_desc),
    FIELD("netDevices", FK_OBJ_MAP, oci_linux, net_devices, COUNT(oci_linux, n_net_devices),
          .sub = &net_device_desc, .key_off = offsetof(oci_net_device, host_name)),
    FIELD("seccomp", FK_OBJECT, oci_linux, seccomp, .sub = &oci_seccomp_desc),
    FIELD("rootfsPropagation", FK_STRING, oci_linux, rootfs_propagation,
          ONE_OF(propagation_values, "rootfs propagation")),
    FIELD("maskedPaths", FK_STRV, oci_linux, masked_paths),
    FIELD("readonlyPaths", FK_STRV, oci_linux, readonly_paths),
    FIELD("mountLabel", FK_STRING, oci_linux, mount_label),
    FIELD("intelRdt", FK_OBJECT, oci_linux, intel_rdt, .sub = &intel_rdt_desc),
    FIELD("memoryPolicy", FK_OBJECT, oci_linux, memory_policy, .sub = &memory_policy_desc),
    FIELD("personality", FK_OBJECT, oci_linux, personality, .sub = &personality_desc),
    FIELD("timeOffsets", FK_OBJECT, oci_linux, time_offsets, .sub = &time_offsets_desc),
};
static const type_desc linux_desc = DESC(oci_linux, linux_fields, .validate = validate_linux);

/* --- config.json -------------------------------------------------------------------------------
 */

/* root's two fields live in oci_config itself */
static const field_desc root_fields[] = {
    FIELD("path", FK_STRING, oci_config, root_path, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("readonly", FK_BOOL, oci_config, root_readonly, .flags = F_OMIT_ZERO),
};
static const type_desc root_desc = DESC(oci_config, root_fields);

static const field_desc config_fields[] = {
    FIELD("ociVersion", FK_STRING, oci_config, oci_version, .flags = F_REQUIRED),
    FIELD("process", FK_OBJECT, oci_config, process, .sub = &oci_process_desc),
    {.key = "root",
     .kind = FK_INLINE,
     .off = 0,
     .has_off = HAS(oci_config, has_root),
     .sub = &root_desc},
    FIELD("hostname", FK_STRING, oci_config, hostname),
    FIELD("domainname", FK_STRING, oci_config, domainname),
    FIELD("mounts", FK_OBJ_ARRAY, oci_config, mounts, COUNT(oci_config, n_mounts),
          .sub = &mount_desc),
    FIELD("hooks", FK_OBJECT, oci_config, hooks, .sub = &hooks_desc),
    FIELD("annotations", FK_MAP, oci_config, annotations),
    FIELD("linux", FK_OBJECT, oci_config, linux_, .sub = &linux_desc),
};
const type_desc oci_config_desc = DESC(oci_config, config_fields);

int oci_config_parse(const char *json, size_t len, const char *what, oci_config **out, char **err) {
  return model_parse(&oci_config_desc, json, len, what ? what : "config.json", false, (void **)out,
                     err);
}

int oci_config_parse_file(const char *path, const char *what, oci_config **out, char **err) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  if (oci_read_file(path, &text, &len, err) < 0)
    return -1;
  int r = oci_config_parse(text, len, what ? what : path, out, err);
  free(text);
  return r;
}

char *oci_config_serialize(const oci_config *c, bool pretty, char **err) {
  return model_serialize(&oci_config_desc, c, "config.json", pretty, err);
}

void oci_config_free(oci_config *c) {
  model_free_fields(&oci_config_desc, c);
  free(c);
}

void oci_config_freep(oci_config **c) {
  if (*c != NULL)
    oci_config_free(*c);
  *c = NULL;
}
