#!/usr/bin/env bats
# `fsrun features` tells the truth about the LSMs and resctrl of this host, with the same probes
# that refuse a config (process-attrs.c, landlock.c), and a config asking for an LSM the host does
# not have is refused naming the field, leaving nothing behind.

load helpers

bats_require_minimum_version 1.5.0

setup() {
  setup_bundle
}

teardown() {
  teardown_bundle
}

host_has_apparmor() {
  [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]
}

host_has_selinux() {
  grep -qw selinuxfs /proc/filesystems
}

@test "lsm: features reports apparmor and selinux exactly as the host has them" {
  local want_apparmor=false want_selinux=false
  host_has_apparmor && want_apparmor=true
  host_has_selinux && want_selinux=true
  run --separate-stderr fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.linux.apparmor.enabled' <<<"$output")" = "$want_apparmor" ]
  [ "$(jq -r '.linux.selinux.enabled' <<<"$output")" = "$want_selinux" ]
}

@test "lsm: features reports intelRdt only where resctrl is mounted" {
  local want=false
  [ "$(stat -fc %T /sys/fs/resctrl 2>/dev/null)" = resctrl ] && want=true
  run --separate-stderr fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.linux.intelRdt.enabled' <<<"$output")" = "$want" ]
}

@test "lsm: features reports the kernel's Landlock ABI in the run.fsrun.landlock annotation" {
  run --separate-stderr fsrun features
  [ "$status" -eq 0 ]
  local abi
  abi=$(jq -r '.annotations["run.fsrun.landlock"]' <<<"$output")
  [[ "$abi" =~ ^[0-9]+$ ]]
  # the same kernel answer the container setup acts on: an annotation with tcpConnect needs ABI 4
  # in strict mode, and is refused exactly when the reported ABI is lower
  update_config '.process.noNewPrivileges = true
    | .annotations["run.fsrun.landlock"] = ({"tcpConnect": [1], "strict": true} | tojson)'
  CONTAINER_ID=lsm-ll-$$-$RANDOM$RANDOM
  run_in_container true
  if [ "$abi" -ge 4 ]; then
    [ "$status" -eq 0 ]
  else
    [ "$status" -eq 1 ]
    [[ "$output" == *"kernel Landlock ABI $abi"* ]]
  fi
}

@test "lsm: process.apparmorProfile is refused where AppArmor is off, nothing left behind" {
  host_has_apparmor && skip "this host has AppArmor"
  update_config '.process.apparmorProfile = "fsrun-test-profile"'
  expect_run_refused "process.apparmorProfile: AppArmor is not enabled on this host"
}

@test "lsm: process.selinuxLabel is refused where SELinux is off, nothing left behind" {
  host_has_selinux && skip "this host has SELinux"
  update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2"'
  expect_run_refused "process.selinuxLabel: SELinux is not enabled on this host"
}

@test "lsm: linux.mountLabel is refused where SELinux is off, nothing left behind" {
  host_has_selinux && skip "this host has SELinux"
  update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"'
  expect_run_refused "linux.mountLabel: SELinux is not enabled on this host"
}

@test "lsm: an empty apparmorProfile / selinuxLabel means none and runs" {
  update_config '.process.apparmorProfile = "" | .process.selinuxLabel = "" | .linux.mountLabel = ""'
  run_in_container echo RAN
  [ "$status" -eq 0 ]
  [ "$output" = RAN ]
}
