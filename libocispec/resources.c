/* linux.resources (also the document `update --resources` reads). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const cgroup_device_types[] = {"a", "c", "b", NULL};

static int validate_device_cgroup(decode_ctx *c, const void *obj) {
  const oci_device_cgroup *d = obj;
  if (d->access != NULL && d->access[strspn(d->access, "rwm")] != '\0')
    return decode_fail_at_key(c, "access", "must consist of the letters r, w and m");
  return 0;
}

static const field_desc device_cgroup_fields[] = {
    FIELD("allow", FK_BOOL, oci_device_cgroup, allow, .flags = F_REQUIRED),
    FIELD("type", FK_STRING, oci_device_cgroup, type,
          ONE_OF(cgroup_device_types, "device cgroup type")),
    FIELD("major", FK_I64, oci_device_cgroup, major, .has_off = HAS(oci_device_cgroup, has_major)),
    FIELD("minor", FK_I64, oci_device_cgroup, minor, .has_off = HAS(oci_device_cgroup, has_minor)),
    FIELD("access", FK_STRING, oci_device_cgroup, access),
};
static const type_desc device_cgroup_desc =
    DESC(oci_device_cgroup, device_cgroup_fields, .validate = validate_device_cgroup);

static const field_desc memory_fields[] = {
    FIELD("limit", FK_I64, oci_memory, limit, .has_off = HAS(oci_memory, has_limit)),
    FIELD("reservation", FK_I64, oci_memory, reservation,
          .has_off = HAS(oci_memory, has_reservation)),
    FIELD("swap", FK_I64, oci_memory, swap, .has_off = HAS(oci_memory, has_swap)),
    FIELD("kernel", FK_I64, oci_memory, kernel, .has_off = HAS(oci_memory, has_kernel)),
    FIELD("kernelTCP", FK_I64, oci_memory, kernel_tcp, .has_off = HAS(oci_memory, has_kernel_tcp)),
    /* vm.swappiness takes 0..100 */
    FIELD("swappiness", FK_U64, oci_memory, swappiness, .has_off = HAS(oci_memory, has_swappiness),
          URANGE(0, 100)),
    FIELD("disableOOMKiller", FK_BOOL, oci_memory, disable_oom_killer,
          .has_off = HAS(oci_memory, has_disable_oom_killer)),
    FIELD("useHierarchy", FK_BOOL, oci_memory, use_hierarchy,
          .has_off = HAS(oci_memory, has_use_hierarchy)),
    FIELD("checkBeforeUpdate", FK_BOOL, oci_memory, check_before_update,
          .has_off = HAS(oci_memory, has_check_before_update)),
};
static const type_desc memory_desc = DESC(oci_memory, memory_fields);

static const field_desc cpu_fields[] = {
    FIELD("shares", FK_U64, oci_cpu, shares, .has_off = HAS(oci_cpu, has_shares)),
    FIELD("quota", FK_I64, oci_cpu, quota, .has_off = HAS(oci_cpu, has_quota)),
    FIELD("burst", FK_U64, oci_cpu, burst, .has_off = HAS(oci_cpu, has_burst)),
    FIELD("period", FK_U64, oci_cpu, period, .has_off = HAS(oci_cpu, has_period)),
    FIELD("realtimeRuntime", FK_I64, oci_cpu, realtime_runtime,
          .has_off = HAS(oci_cpu, has_realtime_runtime)),
    FIELD("realtimePeriod", FK_U64, oci_cpu, realtime_period,
          .has_off = HAS(oci_cpu, has_realtime_period)),
    FIELD("cpus", FK_STRING, oci_cpu, cpus),
    FIELD("mems", FK_STRING, oci_cpu, mems),
    FIELD("idle", FK_I64, oci_cpu, idle, .has_off = HAS(oci_cpu, has_idle)),
};
static const type_desc cpu_desc = DESC(oci_cpu, cpu_fields);

static const field_desc pids_fields[] = {
    FIELD("limit", FK_I64, oci_pids, limit, .has_off = HAS(oci_pids, has_limit)),
};
static const type_desc pids_desc = DESC(oci_pids, pids_fields);

static const field_desc weight_device_fields[] = {
    FIELD("major", FK_I64, oci_weight_device, major, .flags = F_REQUIRED),
    FIELD("minor", FK_I64, oci_weight_device, minor, .flags = F_REQUIRED),
    FIELD("weight", FK_U16, oci_weight_device, weight,
          .has_off = HAS(oci_weight_device, has_weight)),
    FIELD("leafWeight", FK_U16, oci_weight_device, leaf_weight,
          .has_off = HAS(oci_weight_device, has_leaf_weight)),
};
static const type_desc weight_device_desc = DESC(oci_weight_device, weight_device_fields);

static const field_desc throttle_device_fields[] = {
    FIELD("major", FK_I64, oci_throttle_device, major, .flags = F_REQUIRED),
    FIELD("minor", FK_I64, oci_throttle_device, minor, .flags = F_REQUIRED),
    FIELD("rate", FK_U64, oci_throttle_device, rate, .flags = F_REQUIRED),
};
static const type_desc throttle_device_desc = DESC(oci_throttle_device, throttle_device_fields);

static const field_desc block_io_fields[] = {
    FIELD("weight", FK_U16, oci_block_io, weight, .has_off = HAS(oci_block_io, has_weight)),
    FIELD("leafWeight", FK_U16, oci_block_io, leaf_weight,
          .has_off = HAS(oci_block_io, has_leaf_weight)),
    FIELD("weightDevice", FK_OBJ_ARRAY, oci_block_io, weight_device,
          COUNT(oci_block_io, n_weight_device), .sub = &weight_device_desc),
    FIELD("throttleReadBpsDevice", FK_OBJ_ARRAY, oci_block_io, throttle_read_bps,
          COUNT(oci_block_io, n_throttle_read_bps), .sub = &throttle_device_desc),
    FIELD("throttleWriteBpsDevice", FK_OBJ_ARRAY, oci_block_io, throttle_write_bps,
          COUNT(oci_block_io, n_throttle_write_bps), .sub = &throttle_device_desc),
    FIELD("throttleReadIOPSDevice", FK_OBJ_ARRAY, oci_block_io, throttle_read_iops,
          COUNT(oci_block_io, n_throttle_read_iops), .sub = &throttle_device_desc),
    FIELD("throttleWriteIOPSDevice", FK_OBJ_ARRAY, oci_block_io, throttle_write_iops,
          COUNT(oci_block_io, n_throttle_write_iops), .sub = &throttle_device_desc),
};
static const type_desc block_io_desc = DESC(oci_block_io, block_io_fields);

static const field_desc hugepage_fields[] = {
    FIELD("pageSize", FK_STRING, oci_hugepage_limit, page_size, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("limit", FK_U64, oci_hugepage_limit, limit, .flags = F_REQUIRED),
};
static const type_desc hugepage_desc = DESC(oci_hugepage_limit, hugepage_fields);

static const field_desc net_priority_fields[] = {
    FIELD("name", FK_STRING, oci_net_priority, name, .flags = F_REQUIRED),
    FIELD("priority", FK_U32, oci_net_priority, priority, .flags = F_REQUIRED),
};
static const type_desc net_priority_desc = DESC(oci_net_priority, net_priority_fields);

static const field_desc network_fields[] = {
    FIELD("classID", FK_U32, oci_network, class_id, .has_off = HAS(oci_network, has_class_id)),
    FIELD("priorities", FK_OBJ_ARRAY, oci_network, priorities, COUNT(oci_network, n_priorities),
          .sub = &net_priority_desc),
};
static const type_desc network_desc = DESC(oci_network, network_fields);

static const field_desc rdma_fields[] = {
    FIELD("hcaHandles", FK_U32, oci_rdma, hca_handles, .has_off = HAS(oci_rdma, has_hca_handles)),
    FIELD("hcaObjects", FK_U32, oci_rdma, hca_objects, .has_off = HAS(oci_rdma, has_hca_objects)),
};
static const type_desc rdma_desc = DESC(oci_rdma, rdma_fields);

static const field_desc resources_fields[] = {
    FIELD("devices", FK_OBJ_ARRAY, oci_resources, devices, COUNT(oci_resources, n_devices),
          .sub = &device_cgroup_desc),
    FIELD("memory", FK_OBJECT, oci_resources, memory, .sub = &memory_desc),
    FIELD("cpu", FK_OBJECT, oci_resources, cpu, .sub = &cpu_desc),
    FIELD("pids", FK_OBJECT, oci_resources, pids, .sub = &pids_desc),
    FIELD("blockIO", FK_OBJECT, oci_resources, block_io, .sub = &block_io_desc),
    FIELD("hugepageLimits", FK_OBJ_ARRAY, oci_resources, hugepage_limits,
          COUNT(oci_resources, n_hugepage_limits), .sub = &hugepage_desc),
    FIELD("network", FK_OBJECT, oci_resources, network, .sub = &network_desc),
    FIELD("rdma", FK_OBJ_MAP, oci_resources, rdma, COUNT(oci_resources, n_rdma), .sub = &rdma_desc,
          .key_off = offsetof(oci_rdma, device)),
    FIELD("unified", FK_MAP, oci_resources, unified),
};
const type_desc oci_resources_desc = DESC(oci_resources, resources_fields);

int oci_resources_parse(const char *json, size_t len, const char *what, oci_resources **out,
                        char **err) {
  return model_parse(&oci_resources_desc, json, len, what ? what : "resources", false, (void **)out,
                     err);
}

char *oci_resources_serialize(const oci_resources *r, bool pretty, char **err) {
  return model_serialize(&oci_resources_desc, r, "resources", pretty, err);
}

void oci_resources_free(oci_resources *r) {
  model_free_fields(&oci_resources_desc, r);
  free(r);
}
