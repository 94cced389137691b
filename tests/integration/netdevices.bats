#!/usr/bin/env bats
# linux.netDevices (netlink.c, wired in container.c) and the loopback of a new network namespace.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  requires_host_command ip
  setup_bundle
  HOST_IF=fsrt$$
  PEER_IF=fsrp$$
}

# A host interface to move: a dummy where the kernel has the module, else one end of a veth pair
# (its peer stays on the host and dies with it).
make_host_if() {
  ip link add "$HOST_IF" type dummy 2>/dev/null || ip link add "$HOST_IF" type veth peer name "$PEER_IF"
}

teardown() {
  ip link del "$HOST_IF" 2>/dev/null || true
  ip link del "$PEER_IF" 2>/dev/null || true
  teardown_bundle
}

@test "netDevices: a host interface is moved in and renamed, and is up" {
  make_host_if
  update_config '.linux.netDevices = {($hostif): {"name": "eth9"}}' --arg hostif "$HOST_IF"
  run_in_container sh -c 'cat /proc/net/dev; cat /sys/class/net/eth9/operstate /sys/class/net/eth9/flags'
  [ "$status" -eq 0 ]
  [[ "$output" == *"eth9:"* ]]
  [[ "$output" != *"$HOST_IF"* ]]
  # IFF_UP (0x1) is set in flags
  flags=${lines[${#lines[@]} - 1]}
  (( flags & 1 ))
  # moved, not copied: the host no longer has it (a virtual device dies with the container's
  # network namespace, asynchronously; teardown removes whatever is left)
  ! ip link show "$HOST_IF" 2>/dev/null || false
}

@test "netDevices: a missing host device is refused before anything is created" {
  update_config '.linux.netDevices = {"fsrnosuch0": {"name": "eth9"}}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *'linux.netDevices["fsrnosuch0"]'* ]]
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
}

@test "netDevices: without a network namespace is refused" {
  make_host_if
  update_config '.linux.namespaces |= map(select(.type != "network")) | .linux.netDevices = {($hostif): {}}' --arg hostif "$HOST_IF"
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.netDevices"* ]]
  ip link show "$HOST_IF" >/dev/null
}

@test "a new network namespace has its loopback up" {
  run_in_container cat /sys/class/net/lo/flags
  [ "$status" -eq 0 ]
  (( output & 1 ))
}
