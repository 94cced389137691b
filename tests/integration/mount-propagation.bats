#!/usr/bin/env bats
# linux.rootfsPropagation together with the mounts' own propagation options: the root's
# propagation is for the root (and the default of the mounts made under it), a mount's own option
# wins. (Found under containerd's CRI, which sets rootfsPropagation "rshared" whenever one volume
# is bidirectional and "rprivate" on the other hostPath volumes: every mount came out shared.)

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  HOSTDIR=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOSTDIR/private" "$HOSTDIR/slave" "$HOSTDIR/shared"
}

teardown() {
  teardown_bundle
}

# optional_fields DEST: the optional fields (shared:N, master:N, unbindable) of DEST in $output
optional_fields() {
  awk -v d="$1" '$5 == d { v = ""; for (i = 7; $i != "-"; i++) v = v " " $i } END { print v }' <<<"$output"
}

@test "propagation: with rootfsPropagation rshared, a mount's rprivate or rslave option still holds" {
  update_config '.linux.rootfsPropagation = "rshared"
    | .mounts += [
        {destination: "/mnt/private", type: "bind", source: ($h + "/private"), options: ["rbind", "rprivate"]},
        {destination: "/mnt/slave", type: "bind", source: ($h + "/slave"), options: ["rbind", "rslave"]},
        {destination: "/mnt/shared", type: "bind", source: ($h + "/shared"), options: ["rbind", "rshared"]}]' \
    --arg h "$HOSTDIR"
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  echo "$output" | awk '{ print $5, $7, $8 }'
  [[ "$(optional_fields /)" == *shared:* ]]
  [ -z "$(optional_fields /mnt/private)" ]
  [[ "$(optional_fields /mnt/slave)" != *shared:* ]]
  [[ "$(optional_fields /mnt/shared)" == *shared:* ]]
}

@test "propagation: with rootfsPropagation rslave, a mount's rshared option still holds" {
  update_config '.linux.rootfsPropagation = "rslave"
    | .mounts += [{destination: "/mnt/shared", type: "bind", source: ($h + "/shared"), options: ["rbind", "rshared"]}]' \
    --arg h "$HOSTDIR"
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  echo "$output" | awk '{ print $5, $7, $8 }'
  [[ "$(optional_fields /mnt/shared)" == *shared:* ]]
}

@test "propagation: rootfsPropagation unbindable makes the root unbindable (root, and in a user namespace)" {
  update_config '.linux.rootfsPropagation = "unbindable"'
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [[ " $(optional_fields /) " == *" unbindable "* ]]
  # the same with a user namespace, as an ordinary user's container has
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [[ " $(optional_fields /) " == *" unbindable "* ]]
}
