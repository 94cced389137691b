#!/usr/bin/env bats
# bats file_tags=cgroupv2
# linux.resources as Docker sends them: every field present, 0 for each one the user did not set
# (`docker run` without limits; `docker update --cpus` carries memory 0, `docker update --memory`
# carries cpu 0). 0 means "not set", as runc reads it: a create must not fail on it (blkio.weight
# 0 is out of range) and an update must not reset the limits it leaves alone (cpu.shares 0 became
# 2, quota 0 removed the CPU limit, memory 0 failed with EBUSY or would OOM-kill on v2).
# tests/clients/docker.bats shows the same through dockerd.

load helpers

setup() {
  requires_root
  setup_bundle
  CONTAINER_ID=dkres-$$-$RANDOM$RANDOM
}

teardown() {
  teardown_bundle
}

# cg_read CONTROLLER FILE: a file of the container's cgroup (v1 hierarchy, or v2)
cg_read() {
  cat "$(container_cgroup_file "$1" "$2")"
}

V1_UNLIMITED=9223372036854771712

@test "create with Docker's all-zero resources leaves every limit at its default" {
  update_config '.linux.resources += {
      "memory": {"limit": 0, "reservation": 0, "swap": 0, "kernel": 0},
      "cpu": {"shares": 0, "quota": 0, "period": 0},
      "blockIO": {"weight": 0}}'
  start_sleeper
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(cg_read cpu cpu.weight)" = 100 ]
    [ "$(cg_read cpu cpu.max)" = "max 100000" ]
    [ "$(cg_read memory memory.max)" = max ]
    [ "$(cg_read memory memory.low)" = 0 ]
  else
    [ "$(cg_read cpu cpu.shares)" = 1024 ]
    [ "$(cg_read cpu cpu.cfs_quota_us)" = -1 ]
    [ "$(cg_read memory memory.limit_in_bytes)" = "$V1_UNLIMITED" ]
    [ "$(cg_read memory memory.soft_limit_in_bytes)" = "$V1_UNLIMITED" ]
  fi
}

@test "update with Docker's zeros changes only the limits it sets" {
  update_config '.linux.resources += {
      "memory": {"limit": 50331648, "reservation": 16777216, "swap": 100663296},
      "cpu": {"shares": 512, "quota": 150000, "period": 100000}}'
  start_sleeper

  # docker update --cpus 0.5
  run fsrun update --resources - "$CONTAINER_ID" <<<'{
      "memory": {"limit": 0, "reservation": 0, "kernel": 0},
      "cpu": {"shares": 0, "quota": 50000, "period": 100000}, "blockIO": {"weight": 0}}'
  [ "$status" -eq 0 ]
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(cg_read cpu cpu.max)" = "50000 100000" ]
    [ "$(cg_read cpu cpu.weight)" = 59 ]
    [ "$(cg_read memory memory.max)" = 50331648 ]
    [ "$(cg_read memory memory.low)" = 16777216 ]
  else
    [ "$(cg_read cpu cpu.cfs_quota_us)" = 50000 ]
    [ "$(cg_read cpu cpu.shares)" = 512 ]
    [ "$(cg_read memory memory.limit_in_bytes)" = 50331648 ]
    [ "$(cg_read memory memory.soft_limit_in_bytes)" = 16777216 ]
  fi

  # docker update --memory 64m --memory-swap 128m
  run fsrun update --resources - "$CONTAINER_ID" <<<'{
      "memory": {"limit": 67108864, "reservation": 0, "swap": 134217728, "kernel": 0},
      "cpu": {"shares": 0, "quota": 0, "period": 0}, "blockIO": {"weight": 0}}'
  [ "$status" -eq 0 ]
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(cg_read memory memory.max)" = 67108864 ]
    [ "$(cg_read cpu cpu.max)" = "50000 100000" ]
    [ "$(cg_read cpu cpu.weight)" = 59 ]
    [ "$(cg_read memory memory.low)" = 16777216 ]
  else
    [ "$(cg_read memory memory.limit_in_bytes)" = 67108864 ]
    [ "$(cg_read memory memory.memsw.limit_in_bytes)" = 134217728 ]
    [ "$(cg_read cpu cpu.cfs_quota_us)" = 50000 ]
    [ "$(cg_read cpu cpu.cfs_period_us)" = 100000 ]
    [ "$(cg_read cpu cpu.shares)" = 512 ]
    [ "$(cg_read memory memory.soft_limit_in_bytes)" = 16777216 ]
  fi
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
}
