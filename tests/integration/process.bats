#!/usr/bin/env bats
# The container's process as it sees itself (process.c, namespaces.c): user, pid 1, names,
# namespaces, environment, cwd, fds. Assertions are made from inside the container.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
}

teardown() {
  local state=$BATS_TEST_TMPDIR/rootless/state
  if [ -d "$state/proc-ioidle-user-$UNIQ" ]; then
    setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$state" \
      delete --force proc-ioidle-user-$UNIQ || true
  fi
  teardown_bundle
}

@test "process: id shows the configured user, groups and umask" {
  update_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [10, 20], "umask": 23}'
  run_in_container /bin/sh -c 'echo "uid=$(id -u) gid=$(id -g)"; echo "groups=$(id -G)"; umask'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "uid=1000 gid=1001" ]
  [[ " ${lines[1]#groups=} " == *" 10 "* ]]
  [[ " ${lines[1]#groups=} " == *" 20 "* ]]
  [ "${lines[2]}" = 0027 ]
}

@test "process: the process is pid 1 of its pid namespace" {
  run_in_container /bin/sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [[ ${lines[1]} == "/bin/sh -c "* ]]
}

@test "process: hostname and domainname are the configured ones" {
  update_config '.hostname = "box-name" | .domainname = "example.test"'
  run_in_container /bin/sh -c 'hostname; cat /proc/sys/kernel/domainname'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = box-name ]
  [ "${lines[1]}" = example.test ]
  # and the host's are untouched
  [ "$(hostname)" != box-name ]
}

@test "process: a new network namespace has only lo" {
  run_in_container cat /proc/net/dev
  [ "$status" -eq 0 ]
  devices=$(tail -n +3 <<<"$output" | cut -d: -f1 | tr -d ' ' | paste -sd, -)
  [ "$devices" = lo ]
}

@test "process: env, args resolved through the process's PATH, cwd (created when missing)" {
  update_config '.process.env = ["PATH=/opt/tools:/bin", "FOO=bar baz"] | .process.cwd = "/work/dir" | .root.readonly = false'
  mkdir -p "$ROOTFS/opt/tools"
  printf '#!/bin/sh\necho "tool in $(pwd) FOO=$FOO"\n' >"$ROOTFS/opt/tools/mytool"
  chmod 755 "$ROOTFS/opt/tools/mytool"
  run_in_container mytool
  [ "$status" -eq 0 ]
  [ "$output" = "tool in /work/dir FOO=bar baz" ]
}

@test "process: oomScoreAdj is applied; lowering it without CAP_SYS_RESOURCE is a clear error" {
  update_config '.process.oomScoreAdj = 123'
  run_in_container cat /proc/self/oom_score_adj
  [ "$status" -eq 0 ]
  [ "$output" = 123 ]

  update_config '.process.oomScoreAdj = -500'
  run_in_container cat /proc/self/oom_score_adj
  bnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)
  if [ $(((0x$bnd >> 24) & 1)) = 1 ]; then # CAP_SYS_RESOURCE
    [ "$status" -eq 0 ]
    [ "$output" = -500 ]
  else
    [ "$status" -eq 1 ]
    [[ $output == *"oomScoreAdj"*"CAP_SYS_RESOURCE"* ]]
    assert_no_leftovers "$CONTAINER_ID"
  fi
}

@test "process: a new user namespace gets the configured uid and gid maps" {
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
  run_in_container /bin/sh -c 'cat /proc/self/uid_map /proc/self/gid_map; id -u'
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "0 200000 65536" ]
  [ "$(echo ${lines[1]})" = "0 200000 65536" ]
  [ "${lines[2]}" = 0 ]
}

@test "process: a time namespace gets the configured offsets" {
  [ -e /proc/self/timens_offsets ] || skip "no time namespaces in this kernel"
  update_config '.linux.namespaces += [{"type": "time"}]
    | .linux.timeOffsets = {"monotonic": {"secs": 86400, "nanosecs": 0}, "boottime": {"secs": 864000, "nanosecs": 0}}'
  run_in_container /bin/sh -c 'cat /proc/self/timens_offsets; cut -d. -f1 /proc/uptime'
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "monotonic 86400 0" ]
  [ "$(echo ${lines[1]})" = "boottime 864000 0" ]
  [ "${lines[2]}" -ge 864000 ]
}

@test "process: namespaces joined by path are the other container's" {
  update_config '.hostname = "first"'
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" proc-first-$UNIQ
  pid=$(fsrun state proc-first-$UNIQ | jq -r .pid)
  net=$(readlink "/proc/$pid/ns/net")
  update_config '.hostname = null
    | .linux.namespaces |= map(if .type == "network" then .path = ($p + "/net") elif .type == "uts" then .path = ($p + "/uts") else . end)' --arg p "/proc/$pid/ns"
  run_in_container /bin/sh -c 'readlink /proc/self/ns/net; hostname'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$net" ]
  [ "${lines[1]}" = first ]
  fsrun delete --force proc-first-$UNIQ
}

@test "process: a duplicate namespace is refused" {
  update_config '.linux.namespaces += [{"type": "network"}]'
  run_in_container /bin/true
  [ "$status" -eq 1 ]
  [[ $output == *"namespaces"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "process: a caller's fd is invisible inside; --preserve-fds 1 passes fd 3" {
  echo secret-content >"$BATS_TEST_TMPDIR/file"
  set_process_args /bin/sh -c 'ls /proc/self/fd | sort -n | paste -sd, -; { cat <&3; } 2>/dev/null || echo no-fd-3'
  # fd 3 and 7 are the caller's; ls's own directory fd is the only one above 2
  run fsrun run --bundle "$BUNDLE" proc-nofd-$UNIQ 3<"$BATS_TEST_TMPDIR/file" 7<"$BATS_TEST_TMPDIR/file"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "0,1,2,3" ]
  [ "${lines[1]}" = no-fd-3 ]

  run fsrun run --preserve-fds 1 --bundle "$BUNDLE" proc-fd-$UNIQ 3<"$BATS_TEST_TMPDIR/file" 7<"$BATS_TEST_TMPDIR/file"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "0,1,2,3,4" ]
  [ "${lines[1]}" = secret-content ]
}

@test "process: LISTEN_FDS from systemd socket activation is passed on" {
  set_process_args /bin/sh -c 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3'
  echo activated >"$BATS_TEST_TMPDIR/file"
  LISTEN_FDS=1 run fsrun run --bundle "$BUNDLE" proc-listen-$UNIQ 3<"$BATS_TEST_TMPDIR/file"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "1 1" ]
  [ "${lines[1]}" = activated ]
}

@test "process: joining a user namespace by path and creating a pid namespace owned by it" {
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 300000, "size": 65536}]'
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" proc-userns-$UNIQ
  pid=$(fsrun state proc-userns-$UNIQ | jq -r .pid)
  user=$(readlink "/proc/$pid/ns/user")
  update_config '.linux.uidMappings = null | .linux.gidMappings = null
    | .linux.namespaces |= map(if .type == "user" then .path = $u else . end)' --arg u "/proc/$pid/ns/user"
  # a new pid namespace (its /proc must mount) and the joined user namespace
  run_in_container /bin/sh -c 'readlink /proc/self/ns/user; echo pid=$$; head -1 /proc/self/uid_map'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$user" ]
  [ "${lines[1]}" = pid=1 ]
  [ "$(echo ${lines[2]})" = "0 300000 65536" ]
  fsrun delete --force proc-userns-$UNIQ
}

@test "process: a new user namespace with a network namespace joined by path (joined with the host's rights)" {
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" proc-netns-$UNIQ
  pid=$(fsrun state proc-netns-$UNIQ | jq -r .pid)
  net=$(readlink "/proc/$pid/ns/net")
  update_config '.linux.namespaces |= map(if .type == "network" then .path = $n else . end)
    | .linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 300000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 300000, "size": 65536}]' --arg n "/proc/$pid/ns/net"
  run_in_container /bin/sh -c 'readlink /proc/self/ns/net; echo pid=$$; head -1 /proc/self/uid_map'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$net" ]
  [ "${lines[1]}" = pid=1 ]
  [ "$(echo ${lines[2]})" = "0 300000 65536" ]
  fsrun delete --force proc-netns-$UNIQ
  assert_no_leftovers "$CONTAINER_ID"
}

@test "process: ioPriority class IDLE without a priority is accepted and applied (root and uid 1000)" {
  requires_host_command ionice
  update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE"}'
  set_process_args /bin/sleep 1000
  fsrun run -d --bundle "$BUNDLE" proc-ioidle-$UNIQ </dev/null
  pid=$(fsrun state proc-ioidle-$UNIQ | jq -r .pid)
  [ "$(ionice -p "$pid")" = idle ]
  fsrun delete --force proc-ioidle-$UNIQ
  # an ordinary user with its own user namespace: no privilege is needed for IDLE
  requires_host_command setpriv
  local dir=$BATS_TEST_TMPDIR/rootless
  mkdir -p "$dir/state"
  chown 1000:1000 "$dir" "$dir/state"
  setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" spec --rootless --bundle "$dir"
  jq --arg r "$ROOTFS" '.root.path = $r | .process.terminal = false | .process.args = ["sleep", "1000"]
    | .process.ioPriority = {"class": "IOPRIO_CLASS_IDLE"}' "$dir/config.json" >"$dir/config.new"
  mv "$dir/config.new" "$dir/config.json"
  setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$dir/state" \
    run -d --bundle "$dir" proc-ioidle-user-$UNIQ </dev/null
  pid=$(setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$dir/state" state proc-ioidle-user-$UNIQ | jq -r .pid)
  [ "$(ionice -p "$pid")" = idle ]
  setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$dir/state" delete --force proc-ioidle-user-$UNIQ
}
