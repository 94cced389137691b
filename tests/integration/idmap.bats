#!/usr/bin/env bats
# Idmapped bind mounts (idmap.c, mounts.c): mounts[].uidMappings / gidMappings and the "idmap" /
# "ridmap" options. Owners are read inside the container with stat, and on the host for files the
# container created. A mapping entry maps on-disk ids [containerID, +size) to [hostID, +size) as the
# kernel sees them; with a container user namespace those ids are then shown through it.

load helpers

bats_require_minimum_version 1.5.0

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  HOSTDIR=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOSTDIR"
  echo data >"$HOSTDIR/file"
  chown 1000:1000 "$HOSTDIR" "$HOSTDIR/file"
  make_traversable "$HOSTDIR"
}

teardown() {
  local mnt
  for mnt in "${HOST_MOUNTS[@]}"; do
    umount -l "$mnt" 2>/dev/null || true
  done
  teardown_bundle
}

HOST_MOUNTS=()

# add_idmapped_bind DEST OPTIONS_JSON UID_MAPPINGS_JSON GID_MAPPINGS_JSON [SOURCE]
add_idmapped_bind() {
  update_config '.mounts += [{destination: $d, type: "bind", source: $s, options: $o,
                              uidMappings: $u, gidMappings: $g}]' \
    --arg d "$1" --argjson o "$2" --argjson u "$3" --argjson g "$4" --arg s "${5:-$HOSTDIR}"
}

add_plain_bind() { # add_plain_bind DEST [OPTIONS_JSON]
  update_config '.mounts += [{destination: $d, type: "bind", source: $s, options: $o}]' \
    --arg d "$1" --arg s "$HOSTDIR" --argjson o "${2:-[\"bind\"]}"
}

use_userns() { # container root is host 100000; the mount points exist (root cannot create them)
  mkdir -p "$ROOTFS/mnt/plain" "$ROOTFS/mnt/idm"
  update_config '.linux.namespaces += [{type: "user"}]
    | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
    | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
}

ONE_1000_TO_0='[{"containerID": 1000, "hostID": 0, "size": 1}]'
ONE_1000_TO_100000='[{"containerID": 1000, "hostID": 100000, "size": 1}]'

# next_mount_index: the index the next mounts[] entry gets
next_mount_index() {
  jq '.mounts | length' "$BUNDLE/config.json"
}

@test "idmap: a host file of 1000:1000 shows as 0:0 through uidMappings/gidMappings (no user namespace)" {
  add_plain_bind /mnt/plain
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  run_in_container sh -c 'stat -c %u:%g /mnt/plain/file /mnt/idm/file /mnt/idm; cat /mnt/idm/file'
  [ "$status" -eq 0 ]
  # the plain bind is the control: same file, on-disk owner
  [ "${lines[0]}" = 1000:1000 ]
  [ "${lines[1]}" = 0:0 ]
  [ "${lines[2]}" = 0:0 ]
  [ "${lines[3]}" = data ]
  # the host sees its files unchanged
  [ "$(stat -c %u:%g "$HOSTDIR/file")" = 1000:1000 ]
}

@test "idmap: a file created through the idmapped mount belongs to 1000 on the host" {
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  run_in_container sh -c 'echo new >/mnt/idm/created && mkdir /mnt/idm/dir && stat -c %u:%g /mnt/idm/created'
  [ "$status" -eq 0 ]
  [ "$output" = 0:0 ]
  [ "$(stat -c %u:%g "$HOSTDIR/created")" = 1000:1000 ]
  [ "$(stat -c %u:%g "$HOSTDIR/dir")" = 1000:1000 ]
  [ "$(cat "$HOSTDIR/created")" = new ]
}

@test "idmap: mappings without the option still idmap (runtime-spec: the option is a SHOULD)" {
  add_idmapped_bind /mnt/idm '["bind"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  run_in_container stat -c %u:%g /mnt/idm/file
  [ "$status" -eq 0 ]
  [ "$output" = 0:0 ]
}

@test "idmap: with a user namespace, 1000 -> the container root's host id shows as 0:0 and writes as 1000" {
  use_userns
  add_plain_bind /mnt/plain
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' "$ONE_1000_TO_100000" "$ONE_1000_TO_100000"
  run_in_container sh -c 'cat /proc/self/uid_map; stat -c %u:%g /mnt/plain/file /mnt/idm/file; touch /mnt/idm/made-in-userns'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"0"*"100000"*"65536"* ]]
  # control: host 1000 is not mapped into the container's user namespace
  [ "${lines[1]}" = 65534:65534 ]
  [ "${lines[2]}" = 0:0 ]
  [ "$(stat -c %u:%g "$HOSTDIR/made-in-userns")" = 1000:1000 ]
}

@test "idmap: the idmap option without mappings uses the container's user namespace" {
  use_userns
  echo root >"$HOSTDIR/rootfile"
  mkdir "$HOSTDIR/rootdir"
  chown 0:0 "$HOSTDIR/rootfile" "$HOSTDIR/rootdir"
  add_plain_bind /mnt/plain
  update_config '.mounts += [{destination: "/mnt/idm", type: "bind", source: $s, options: ["bind", "idmap"]}]' \
    --arg s "$HOSTDIR"
  run_in_container sh -c 'stat -c %u:%g /mnt/plain/rootfile /mnt/idm/rootfile /mnt/idm/file; touch /mnt/idm/rootdir/by-root'
  [ "$status" -eq 0 ]
  # control: host root is unmapped in the user namespace
  [ "${lines[0]}" = 65534:65534 ]
  # through the container's own mapping (0 -> 100000): on-disk ids are the container's ids
  [ "${lines[1]}" = 0:0 ]
  [ "${lines[2]}" = 1000:1000 ]
  [ "$(stat -c %u:%g "$HOSTDIR/rootdir/by-root")" = 0:0 ]
}

@test "idmap: ridmap idmaps the submounts of an rbind, idmap only the top mount" {
  local sub=$HOSTDIR/sub
  mkdir -p "$sub"
  mount -t tmpfs -o mode=755 tmpfs "$sub"
  HOST_MOUNTS+=("$sub")
  echo sub >"$sub/subfile"
  chown 1000:1000 "$sub/subfile"
  add_idmapped_bind /mnt/r '["rbind", "ridmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  add_idmapped_bind /mnt/top '["rbind", "idmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  run_in_container sh -c 'stat -c %u:%g /mnt/r/file /mnt/r/sub/subfile /mnt/top/file /mnt/top/sub/subfile'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0:0 ]
  [ "${lines[1]}" = 0:0 ]
  [ "${lines[2]}" = 0:0 ]
  [ "${lines[3]}" = 1000:1000 ]
}

@test "idmap: the idmapped mount keeps its other options (ro)" {
  add_idmapped_bind /mnt/idm '["bind", "idmap", "ro"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  run_in_container sh -c 'stat -c %u:%g /mnt/idm/file; touch /mnt/idm/nope; echo rc=$?'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0:0 ]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *rc=1* ]]
  [ ! -e "$HOSTDIR/nope" ]
}

@test "idmap: in a user namespace, the host's flags on the source stay locked (no remount rw, even with CAP_SYS_ADMIN)" {
  use_userns
  mkdir "$HOSTDIR/ro"
  echo data >"$HOSTDIR/ro/file"
  chown -R 1000:1000 "$HOSTDIR/ro"
  mount --bind "$HOSTDIR/ro" "$HOSTDIR/ro"
  HOST_MOUNTS+=("$HOSTDIR/ro")
  mount -o remount,bind,ro "$HOSTDIR/ro"
  update_config '.process.capabilities = {bounding: ["CAP_SYS_ADMIN"], effective: ["CAP_SYS_ADMIN"],
                                          permitted: ["CAP_SYS_ADMIN"]}'
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' "$ONE_1000_TO_100000" "$ONE_1000_TO_100000" "$HOSTDIR/ro"
  run_in_container sh -c 'stat -c %u:%g /mnt/idm/file; mount -o remount,bind,rw /mnt/idm; echo remount=$?; touch /mnt/idm/x; echo touch=$?'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0:0 ]
  [[ "$output" == *remount=1* ]]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *touch=1* ]]
  [ ! -e "$HOSTDIR/ro/x" ]
}

@test "idmap: in a user namespace, an idmapped bind (not rbind) of a directory with submounts, as /tmp, works" {
  use_userns
  local sub=$HOSTDIR/sub
  mkdir -p "$sub"
  mount -t tmpfs -o mode=755 tmpfs "$sub"
  HOST_MOUNTS+=("$sub")
  add_idmapped_bind /mnt/idm '["bind"]' "$ONE_1000_TO_100000" "$ONE_1000_TO_100000"
  run_in_container sh -c 'stat -c %u:%g /mnt/idm/file; ls -A /mnt/idm/sub | wc -l; touch /mnt/idm/made'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0:0 ]
  # a bind, not an rbind: the submount is not there, its mount point is
  [ "${lines[1]}" = 0 ]
  [ "$(stat -c %u:%g "$HOSTDIR/made")" = 1000:1000 ]
}

@test "idmap: fsrun features claims idmap, ridmap and linux idmap" {
  run --separate-stderr fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.linux.mountExtensions.idmap.enabled' <<<"$output")" = true ]
  jq -e '.mountOptions | index("idmap") and index("ridmap")' <<<"$output" >/dev/null
}

@test "idmap: mappings on a non-bind mount are refused naming the field, nothing left behind" {
  local idx
  idx=$(next_mount_index)
  update_config '.mounts += [{destination: "/mnt/t", type: "tmpfs", source: "tmpfs",
                              uidMappings: $m, gidMappings: $m}]' --argjson m "$ONE_1000_TO_0"
  expect_run_refused "mounts[$idx].uidMappings: only a bind mount can be idmapped (type \`tmpfs\`)"
}

@test "idmap: a mapping of size 0 is refused naming the field, nothing left behind" {
  local idx
  idx=$(next_mount_index)
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' '[{"containerID": 1000, "hostID": 0, "size": 0}]' "$ONE_1000_TO_0"
  expect_run_refused "mounts[$idx].uidMappings[0].size: must be greater than 0"
}

@test "idmap: the idmap option on a tmpfs is refused naming the field, nothing left behind" {
  use_userns
  local idx
  idx=$(next_mount_index)
  update_config '.mounts += [{destination: "/mnt/t", type: "tmpfs", source: "tmpfs", options: ["idmap"]}]'
  expect_run_refused "mounts[$idx].options: \`idmap\` is only valid on a bind mount (type \`tmpfs\`)"
}

@test "idmap: the idmap option without mappings or a user namespace is refused, nothing left behind" {
  local idx
  idx=$(next_mount_index)
  update_config '.mounts += [{destination: "/mnt/idm", type: "bind", source: $s, options: ["rbind", "ridmap"]}]' \
    --arg s "$HOSTDIR"
  expect_run_refused "mounts[$idx].options: \`ridmap\` without uidMappings/gidMappings uses the container's user namespace"
}

@test "idmap: a filesystem that cannot be idmapped (sysfs) fails naming the mount and the fs, nothing left behind" {
  local idx
  idx=$(next_mount_index)
  add_idmapped_bind /mnt/sys '["bind", "idmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0" /sys
  expect_run_refused "mounts[$idx]: \`/sys\` is on a filesystem (sysfs) that does not support idmapped mounts"
}

@test "idmap: a rootless fsrun refuses idmapped mounts clearly, nothing left behind" {
  requires_host_command setpriv
  local root=$BATS_TEST_TMPDIR/rootless-state index
  mkdir -p "$root"
  chown -R 1000:1000 "$BUNDLE" "$root"
  make_traversable "$BUNDLE"
  rm -f "$BUNDLE/config.json"
  (cd "$BUNDLE" && setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" spec --rootless)
  index=$(jq '.mounts | length' "$BUNDLE/config.json")
  add_idmapped_bind /mnt/idm '["bind", "idmap"]' "$ONE_1000_TO_0" "$ONE_1000_TO_0"
  update_config '.process.terminal = false | .process.args = ["sh", "-c", "echo RAN"]'
  mkdir -p "$ROOTFS/mnt/idm"
  CONTAINER_ID=idmap-rootless-$$-$RANDOM$RANDOM
  run --separate-stderr setpriv --reuid=1000 --regid=1000 --clear-groups \
    env XDG_RUNTIME_DIR="$root" "$FSRUN" --root "$root" run --bundle "$BUNDLE" "$CONTAINER_ID"
  echo "exit $status, stdout '$output', stderr: $stderr" >&2
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"mounts[$index]: idmapped mounts need CAP_SYS_ADMIN in the initial user namespace"* ]]
  [[ "$output" != *RAN* ]]
  [ ! -e "$root/$CONTAINER_ID" ]
  FSRUN_ROOT=$root assert_no_leftovers "$CONTAINER_ID"
}
