#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# The container lifecycle (container.c, status.c): create -> start -> kill -> delete, run, state,
# list, ps, and the wording clients (conmon, the containerd shim) parse.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
}

teardown() {
  teardown_bundle
}

# state_field ID FIELD: one field of `fsrun state ID`.
state_field() {
  fsrun state "$1" | jq -r ".$2"
}

# bats test_tags=cgroupv2
@test "lifecycle: create + state shows created and the pid of a waiting init; start runs it; kill stops it; delete leaves nothing" {
  set_process_args /bin/sh -c 'echo started > /dev/shm/ran; sleep 100'
  fsrun create --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" life1-$UNIQ

  run fsrun state life1-$UNIQ
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = created ]
  [ "$(jq -r .id <<<"$output")" = life1-$UNIQ ]
  [ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
  [ "$(jq -r .rootfs <<<"$output")" = "$ROOTFS" ]
  [ "$(jq -r .ociVersion <<<"$output")" != null ]
  [ "$(jq -r .created <<<"$output")" != null ]
  pid=$(jq -r .pid <<<"$output")
  [ "$pid" -gt 0 ]
  [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$pid" ]
  # the init exists, is still fsrun's code (its protected image, not the user's process) and
  # has not run anything yet
  [ -d "/proc/$pid" ]
  is_protected_exe "$pid"
  [ ! -e "$ROOTFS/dev/shm/ran" ]

  fsrun start life1-$UNIQ
  [ "$(state_field life1-$UNIQ status)" = running ]
  [ "$(state_field life1-$UNIQ pid)" = "$pid" ]
  # it is now the user's process
  [[ "$(readlink "/proc/$pid/exe")" == */bin/busybox ]]

  fsrun kill life1-$UNIQ KILL
  wait_for_status life1-$UNIQ stopped
  [ "$(state_field life1-$UNIQ pid)" = 0 ]

  fsrun delete life1-$UNIQ
  [ ! -e "$FSRUN_ROOT/life1-$UNIQ" ]
  assert_no_leftovers life1-$UNIQ
}

@test "lifecycle: run exits with the process's status, 128+N for signal N" {
  run_in_container /bin/sh -c 'exit 3'
  [ "$status" -eq 3 ]
  # the init of a pid namespace ignores signals it has no handler for: without one, sh can die
  update_config '.linux.namespaces |= map(select(.type != "pid"))'
  run_in_container /bin/sh -c 'kill -TERM $$'
  [ "$status" -eq 143 ]
  run_in_container /bin/true
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$FSRUN_ROOT")" ]
}

@test "lifecycle: run exits with 137 when its process is SIGKILLed from the host" {
  set_process_args /bin/sleep 100
  "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" life-k9-$UNIQ &
  runner=$!
  wait_until test -s "$BATS_TEST_TMPDIR/pid"
  wait_for_status life-k9-$UNIQ running
  kill -9 "$(cat "$BATS_TEST_TMPDIR/pid")"
  status=0
  wait "$runner" || status=$?
  [ "$status" -eq 137 ]
  # run deletes what it created
  assert_no_leftovers life-k9-$UNIQ
}

@test "lifecycle: foreground run forwards signals to the process" {
  set_process_args /bin/sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready > /dev/shm/ready; while :; do sleep 0.1; done'
  "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" life-sig-$UNIQ >"$BATS_TEST_TMPDIR/out" &
  runner=$!
  for _ in $(seq 100); do
    [ -s "$BATS_TEST_TMPDIR/pid" ] && [ -e "/proc/$(cat "$BATS_TEST_TMPDIR/pid")/root/dev/shm/ready" ] && break
    sleep 0.1
  done
  kill -USR1 "$runner"
  status=0
  wait "$runner" || status=$?
  [ "$status" -eq 7 ]
  grep -q got-usr1 "$BATS_TEST_TMPDIR/out"
}

@test "lifecycle: a foreground run waits holding no procfs instance of its own; the process holds only stdio" {
  # create hands its procfs instance (a mount attached nowhere) to the kernel's collector instead
  # of closing it, and the init its own (perfexec25): neither is left with the runtime or the process
  local hold=$BATS_TEST_TMPDIR/hold runner found
  mkdir "$hold"
  mkfifo "$hold/go"
  update_config '.mounts += [{"destination": "/hold", "type": "bind", "source": $h,
    "options": ["rbind", "rw"]}]' --arg h "$hold"
  set_process_args /bin/sh -c 'echo up >/hold/up; read x </hold/go; ls /proc/self/fd'
  "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" life-procfs-$UNIQ </dev/null \
    >"$BATS_TEST_TMPDIR/out" 2>&1 &
  runner=$!
  wait_for_file "$hold/up"
  found=$(procfs_dirs_of "$runner")
  echo >"$hold/go"
  wait "$runner"
  echo "the runtime's procfs fds:$found"
  cat "$BATS_TEST_TMPDIR/out"
  [ -z "$found" ]
  # stdio and ls's own directory
  [ "$(tr '\n' ' ' <"$BATS_TEST_TMPDIR/out")" = "0 1 2 3 " ]
}

@test "lifecycle: run --detach returns with the container running; --keep keeps a stopped one" {
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" life-d-$UNIQ
  [ "$(state_field life-d-$UNIQ status)" = running ]
  fsrun delete --force life-d-$UNIQ
  assert_no_leftovers life-d-$UNIQ

  set_process_args /bin/true
  fsrun run --keep --bundle "$BUNDLE" life-keep-$UNIQ
  [ "$(state_field life-keep-$UNIQ status)" = stopped ]
  fsrun delete life-keep-$UNIQ
  [ ! -e "$FSRUN_ROOT/life-keep-$UNIQ" ]
}

@test "lifecycle: --bundle defaults to the current directory" {
  set_process_args /bin/sh -c 'exit 5'
  cd "$BUNDLE"
  run fsrun run life-cwd-$UNIQ
  cd /
  [ "$status" -eq 5 ]
}

@test "lifecycle: the wording clients rely on (state, kill, start, delete of stopped and missing containers)" {
  # unknown id
  run fsrun state nosuch
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
  run fsrun delete nosuch
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
  run fsrun kill nosuch 9
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
  run fsrun delete --force nosuch
  [ "$status" -eq 0 ]

  # a stopped container
  set_process_args /bin/true
  fsrun run --keep --bundle "$BUNDLE" life-w-$UNIQ
  run fsrun state life-w-$UNIQ
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = stopped ]
  [ "$(jq -r .pid <<<"$output")" = 0 ]
  run fsrun kill life-w-$UNIQ 15
  [ "$status" -eq 1 ]
  [[ $output == *"container not running"* ]]
  run fsrun kill --all life-w-$UNIQ 9
  [ "$status" -eq 0 ]
  run fsrun start life-w-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"not created"* ]]
  fsrun delete life-w-$UNIQ
  run fsrun delete life-w-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
  run fsrun delete --force life-w-$UNIQ
  [ "$status" -eq 0 ]
}

@test "lifecycle: wrong-state errors: start twice, delete a running container without --force, create an existing id" {
  set_process_args /bin/sleep 100
  fsrun create --bundle "$BUNDLE" life-s-$UNIQ
  pid=$(state_field life-s-$UNIQ pid)
  fsrun start life-s-$UNIQ
  run fsrun start life-s-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"cannot start a container that is not created: running"* ]]
  run fsrun delete life-s-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"not stopped"* ]]
  run fsrun create --bundle "$BUNDLE" life-s-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"already exists"* ]]
  # the first container is untouched
  [ "$(state_field life-s-$UNIQ status)" = running ]
  [ "$(state_field life-s-$UNIQ pid)" = "$pid" ]
  fsrun delete --force life-s-$UNIQ
  assert_no_leftovers life-s-$UNIQ
}

@test "lifecycle: delete of a created container (no --force) kills its init" {
  set_process_args /bin/true
  fsrun create --bundle "$BUNDLE" life-c-$UNIQ
  pid=$(state_field life-c-$UNIQ pid)
  fsrun delete life-c-$UNIQ
  assert_no_leftovers life-c-$UNIQ
  ! _fsrun_pid_alive "$pid" || false
}

@test "lifecycle: an init that moves to a mount namespace of its own is still the container (state, kill, delete)" {
  # before: the init's identity included its mount namespace, so after `unshare -m` state said
  # stopped (pid 0), kill said not running, and only the cgroup stopped it at delete --force
  local id=lc-unshare-$UNIQ pid
  update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])'
  set_process_args /bin/busybox unshare -m /bin/sleep 1000
  fsrun run -d --bundle "$BUNDLE" "$id" </dev/null
  pid=$(jq -r .pid "$FSRUN_ROOT/$id/state.json")
  # the init is sleep itself, in a mount namespace that is not the one create made
  wait_until comm_is "$pid" sleep
  run fsrun state "$id"
  [ "$(jq -r .status <<<"$output")" = running ]
  [ "$(jq -r .pid <<<"$output")" = "$pid" ]
  fsrun kill "$id" KILL
  wait_for_status "$id" stopped
  fsrun delete "$id"
  assert_no_leftovers "$id"
}

@test "lifecycle: kill takes names and numbers; the default is SIGTERM" {
  # the shell is pid 1: a signal that comes before its trap is dropped, so it says when they are set
  set_process_args /bin/sh -c 'trap "echo usr1 >> /dev/shm/log" USR1; trap "echo term >> /dev/shm/log; exit 0" TERM; : >/dev/shm/ready; while :; do sleep 0.1; done'
  fsrun run --detach --bundle "$BUNDLE" life-names-$UNIQ
  pid=$(state_field life-names-$UNIQ pid)
  wait_for_file "/proc/$pid/root/dev/shm/ready"
  # one at a time: a standard signal still pending is not queued twice
  n=0
  for sig in USR1 SIGUSR1 usr1 10; do
    fsrun kill life-names-$UNIQ "$sig"
    n=$((n + 1))
    # shellcheck disable=SC2016 # expanded by that shell
    wait_until sh -c '[ "$(grep -c usr1 "$1" 2>/dev/null)" = "$2" ]' sh "/proc/$pid/root/dev/shm/log" $n || :
    [ "$(grep -c usr1 "/proc/$pid/root/dev/shm/log")" = $n ]
  done
  run fsrun kill life-names-$UNIQ NOSUCHSIG
  [ "$status" -eq 1 ]
  [[ $output == *"invalid signal"* ]]
  fsrun kill life-names-$UNIQ
  wait_for_status life-names-$UNIQ stopped
  fsrun delete life-names-$UNIQ
}

# bats test_tags=cgroupv2
@test "lifecycle: kill --all signals every process of the container" {
  # no pid namespace: the init's death alone would not take the others with it
  update_config '.linux.namespaces |= map(select(.type != "pid"))'
  # the mark (no process of its own) once both children exist
  set_process_args /bin/sh -c 'sleep 100 & sleep 100 & : >/dev/shm/forked; wait'
  fsrun run --detach --bundle "$BUNDLE" life-all-$UNIQ
  wait_for_file "/proc/$(state_field life-all-$UNIQ pid)/root/dev/shm/forked"
  run fsrun ps --format json life-all-$UNIQ
  [ "$status" -eq 0 ]
  pids=$(jq -r '.[]' <<<"$output")
  [ "$(wc -w <<<"$pids")" -eq 3 ]
  fsrun kill --all life-all-$UNIQ KILL
  for p in $pids; do
    wait_until pid_gone "$p"
    ! _fsrun_pid_alive "$p" || false
  done
  fsrun delete life-all-$UNIQ
  assert_no_leftovers life-all-$UNIQ
}

# bats test_tags=cgroupv2
# one_line_status STATUS TEXT: the last `run` exited STATUS with TEXT at the end of one line
one_line_status() {
  echo "$output"
  [ "$status" -eq "$1" ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"$2" ]]
}

@test "lifecycle: an emptied state.json (a crash while it was replaced): state, kill and delete say so in one line and signal nothing; list shows the live init; delete --force removes it all" {
  # before: state, kill and delete printed yajl's three-line message naming no container, list
  # showed the running init as stopped with pid 0
  local dir pid
  CONTAINER_ID=life-empty-$UNIQ
  start_sleeper
  pid=$(state_field "$CONTAINER_ID" pid)
  dir=$FSRUN_ROOT/$CONTAINER_ID
  : >"$dir/state.json"
  # a crash between the exchange and the unlink leaves the old file under its temporary name
  echo '{}' >"$dir/state.json.tmp.99999"
  run fsrun state "$CONTAINER_ID"
  one_line_status 1 "state \`$CONTAINER_ID\`: the state file is corrupt: empty"
  run fsrun kill "$CONTAINER_ID" KILL
  one_line_status 1 "kill \`$CONTAINER_ID\`: the state file is corrupt: empty"
  run fsrun kill --all "$CONTAINER_ID" KILL
  one_line_status 1 "kill \`$CONTAINER_ID\`: the state file is corrupt: empty"
  run fsrun delete "$CONTAINER_ID"
  one_line_status 1 "delete \`$CONTAINER_ID\`: the state file is corrupt: empty"
  _fsrun_pid_alive "$pid"
  fsrun list --format json >"$BATS_TEST_TMPDIR/list.json" 2>"$BATS_TEST_TMPDIR/list.err"
  [ "$(jq -r --arg id "$CONTAINER_ID" '.[] | select(.id == $id) | "\(.status) \(.pid)"' \
    "$BATS_TEST_TMPDIR/list.json")" = "running $pid" ]
  [ "$(cat "$BATS_TEST_TMPDIR/list.err")" = "fsrun: warning: list: \`$CONTAINER_ID\`: the state file is corrupt: empty" ]
  run fsrun delete --force "$CONTAINER_ID"
  one_line_status 0 "delete \`$CONTAINER_ID\`: the state file is corrupt: empty: its init's record and its config were used instead"
  ! _fsrun_pid_alive "$pid" || false
  assert_no_leftovers "$CONTAINER_ID"
}

@test "lifecycle: delete --force of a truncated state.json never signals the pid it names; without the init's record, an empty cgroup goes with the state" {
  # before: the second delete kept the state directory ("its init cannot be told")
  local id dir
  set_process_args /bin/true
  start_witness "$BATS_TEST_TMPDIR"
  for id in life-trunc-$UNIQ life-norec-$UNIQ; do
    fsrun run --keep --bundle "$BUNDLE" "$id"
    dir=$FSRUN_ROOT/$id
    printf '{"id": "%s", "status": "created", "pid": %d, "bundle": "%s", "fsr' "$id" "$WITNESS" \
      "$BUNDLE" >"$dir/state.json"
    # the record names it too, with another start time: not the init, nothing is sent to it
    ln -sfn "$WITNESS 1 0" "$dir/init"
  done
  CONTAINER_ID=life-trunc-$UNIQ
  [ -d "$(dirname "$(container_cgroup_file pids cgroup.procs)")" ]
  run fsrun delete --force "$CONTAINER_ID"
  one_line_status 0 "its init's record and its config were used instead"
  assert_no_leftovers "$CONTAINER_ID"

  CONTAINER_ID=life-norec-$UNIQ
  rm "$FSRUN_ROOT/$CONTAINER_ID/init"
  [ -d "$(dirname "$(container_cgroup_file pids cgroup.procs)")" ]
  run fsrun delete --force "$CONTAINER_ID"
  one_line_status 0 "nothing was signalled; its empty cgroup and the state directory are removed"
  assert_no_leftovers "$CONTAINER_ID"
  witness_unsignalled
}

@test "lifecycle: delete --force with state.json and config.json both emptied kills the init its record names and leaves the cgroup it cannot place, saying so" {
  # before: exit 1, everything kept ("find the cgroup ... the state directory is kept")
  local pid
  CONTAINER_ID=life-noconf-$UNIQ
  start_sleeper
  pid=$(state_field "$CONTAINER_ID" pid)
  : >"$FSRUN_ROOT/$CONTAINER_ID/state.json"
  : >"$FSRUN_ROOT/$CONTAINER_ID/config.json"
  run fsrun delete --force "$CONTAINER_ID"
  one_line_status 0 "config.json: empty document: expected JSON: its cgroup, if it has one, is left alone"
  ! _fsrun_pid_alive "$pid" || false
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
  # the cgroup stays; empty (its init was its pid namespace's first process), removed here
  [ -d "$(dirname "$(container_cgroup_file pids cgroup.procs)")" ]
  find /sys/fs/cgroup -depth -type d -name "$CONTAINER_ID" -exec rmdir {} +
  assert_no_leftovers "$CONTAINER_ID"
}

@test "lifecycle: the init's record names the init in at most 59 bytes: no disk block for it on an ext4 state root" {
  # before: "PID START PIDNS BOOT-ID" in decimal, 60-65 bytes on a host up for more than a quarter
  # of an hour: a block allocated by create and freed by delete (a synchronous discard here)
  CONTAINER_ID=life-rec-$UNIQ
  set_process_args /bin/sleep 100
  fsrun create --bundle "$BUNDLE" "$CONTAINER_ID"
  assert_init_record "$FSRUN_ROOT/$CONTAINER_ID" "$(state_field "$CONTAINER_ID" pid)"
  # start rewrites the state: the record is replaced, still whole
  fsrun start "$CONTAINER_ID"
  assert_init_record "$FSRUN_ROOT/$CONTAINER_ID" "$(state_field "$CONTAINER_ID" pid)"
  [ "$(find "$FSRUN_ROOT/$CONTAINER_ID" -name 'init.tmp*' | wc -l)" = 0 ]
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "lifecycle: a state of another boot (a disk state root after a reboot) names no live process: state says stopped; kill, and delete --force by state or by the init's record, signal nothing" {
  # before: a process of this boot with the recorded pid, start tick and pid namespace was taken
  # for the init (state: created, kill and delete --force signalled it)
  local dir start ns other=00000000-0000-4000-8000-000000000000
  CONTAINER_ID=life-boot-$UNIQ
  set_process_args /bin/true
  fsrun run --keep --bundle "$BUNDLE" "$CONTAINER_ID"
  dir=$FSRUN_ROOT/$CONTAINER_ID
  [ "$(jq -r .fsrun.bootId "$dir/state.json")" = "$(cat /proc/sys/kernel/random/boot_id)" ]
  [[ "$(readlink "$dir/init")" == *" $(tr -d '\n-' </proc/sys/kernel/random/boot_id)" ]]
  start_witness "$BATS_TEST_TMPDIR"
  start=$(sed 's/.*) //' "/proc/$WITNESS/stat" | cut -d' ' -f20)
  ns=$(stat -L -c %i "/proc/$WITNESS/ns/pid")
  jq --argjson p "$WITNESS" --argjson t "$start" --argjson n "$ns" --arg b "$other" \
    '.pid = $p | .status = "created" | .fsrun.pidStartTime = $t | .fsrun.pidNamespace = $n |
    .fsrun.bootId = $b' "$dir/state.json" >"$BATS_TEST_TMPDIR/state.json"
  cp "$BATS_TEST_TMPDIR/state.json" "$dir/state.json"
  ln -sfn "$WITNESS $start $ns $other" "$dir/init"
  [ "$(state_field "$CONTAINER_ID" status)" = stopped ]
  run fsrun kill "$CONTAINER_ID" KILL
  [ "$status" -eq 1 ]
  [[ $output == *"container not running"* ]]
  # the crash emptied state.json: the record alone names the init
  : >"$dir/state.json"
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
  # by the state
  fsrun run --keep --bundle "$BUNDLE" "$CONTAINER_ID"
  cp "$BATS_TEST_TMPDIR/state.json" "$dir/state.json"
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
  witness_unsignalled
}

@test "lifecycle: list (table, json, -q) and ps (json, table)" {
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" life-l1-$UNIQ
  fsrun create --bundle "$BUNDLE" life-l2-$UNIQ
  pid1=$(state_field life-l1-$UNIQ pid)

  run fsrun list
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "ID"*"PID"*"STATUS"*"BUNDLE"*"CREATED"*"OWNER"* ]]
  [[ $output == *"life-l1-$UNIQ"*"$pid1"*"running"*"$BUNDLE"* ]]
  [[ $output == *"life-l2-$UNIQ"*"created"* ]]

  run fsrun list -q
  [ "$output" = "life-l1-$UNIQ"$'\n'"life-l2-$UNIQ" ]

  run fsrun list --format json
  [ "$(jq -r --arg id "life-l1-$UNIQ" 'map(select(.id == $id))[0].status' <<<"$output")" = running ]
  [ "$(jq -r --arg id "life-l2-$UNIQ" 'map(select(.id == $id))[0].status' <<<"$output")" = created ]
  [ "$(jq -r --arg id "life-l1-$UNIQ" 'map(select(.id == $id))[0].pid' <<<"$output")" = "$pid1" ]

  run fsrun ps --format json life-l1-$UNIQ
  [ "$status" -eq 0 ]
  [ "$(jq -c . <<<"$output")" = "[$pid1]" ]

  run fsrun ps life-l1-$UNIQ
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == *PID* ]]
  [ "${#lines[@]}" -eq 2 ]
  [[ ${lines[1]} == *" $pid1 "*"sleep 100"* ]]

  fsrun delete --force life-l1-$UNIQ
  fsrun delete --force life-l2-$UNIQ
  run fsrun list -q
  [ -z "$output" ]
}

@test "lifecycle: invalid container ids are refused before anything is created" {
  for id in ../escape a/b . .. .sandbox-bundle .x '' "$(printf 'x%.0s' $(seq 1100))"; do
    run fsrun create --bundle "$BUNDLE" "$id"
    [ "$status" -eq 1 ]
  done
  # dot-names are fsrun's own (the sandbox's shared bundle): no command takes them
  for cmd in state start "delete --force" kill; do
    run fsrun $cmd .sandbox-bundle
    [ "$status" -eq 1 ]
    [[ $output == *"invalid container id \`.sandbox-bundle\`: ids starting with '.' are reserved"* ]]
  done
  [ -z "$(ls -A "$FSRUN_ROOT" 2>/dev/null)" ]
  [ ! -e "$FSRUN_ROOT/../escape" ]
}

@test "lifecycle: bad bundles fail cleanly and leave nothing behind" {
  local id
  # missing args[0]: the wording podman maps to 127
  set_process_args /no/such/binary
  run fsrun create --bundle "$BUNDLE" life-bad1-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "/no/such/binary": no such file or directory'* ]]
  assert_no_leftovers life-bad1-$UNIQ
  # in PATH but missing
  set_process_args nosuchcommand
  run fsrun create --bundle "$BUNDLE" life-bad2-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "nosuchcommand": no such file or directory'* ]]
  assert_no_leftovers life-bad2-$UNIQ
  # not executable: podman maps "permission denied" to 126
  update_config '.root.readonly = false'
  echo 'not a program' >"$ROOTFS/notexec"
  chmod 0644 "$ROOTFS/notexec"
  set_process_args /notexec
  run fsrun create --bundle "$BUNDLE" life-bad3-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "/notexec": permission denied'* ]]
  assert_no_leftovers life-bad3-$UNIQ

  set_process_args /bin/true
  # unknown namespace type
  cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/good.json"
  update_config '.linux.namespaces += [{"type": "nosuchns"}]'
  run fsrun create --bundle "$BUNDLE" life-bad4-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"namespaces"* ]]
  assert_no_leftovers life-bad4-$UNIQ
  cp "$BATS_TEST_TMPDIR/good.json" "$BUNDLE/config.json"

  # missing rootfs
  update_config '.root.path = "nosuchdir"'
  run fsrun create --bundle "$BUNDLE" life-bad5-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"root.path"* ]]
  assert_no_leftovers life-bad5-$UNIQ
  cp "$BATS_TEST_TMPDIR/good.json" "$BUNDLE/config.json"

  # bad mount type
  update_config '.mounts += [{"destination": "/mnt", "type": "nosuchfs", "source": "none"}]'
  run fsrun create --bundle "$BUNDLE" life-bad6-$UNIQ
  [ "$status" -eq 1 ]
  assert_no_leftovers life-bad6-$UNIQ
  cp "$BATS_TEST_TMPDIR/good.json" "$BUNDLE/config.json"

  # /dev that is a symlink
  rm -rf "$ROOTFS/dev"
  ln -s /tmp "$ROOTFS/dev"
  run fsrun create --bundle "$BUNDLE" life-bad7-$UNIQ
  [ "$status" -eq 1 ]
  assert_no_leftovers life-bad7-$UNIQ
  [ -z "$(ls -A "$FSRUN_ROOT" 2>/dev/null)" ]
}

@test "lifecycle: errors go to --log as JSON lines under --log-format json" {
  set_process_args /no/such/binary
  run "$FSRUN" --root "$FSRUN_ROOT" --log "$BATS_TEST_TMPDIR/log.json" --log-format json create --bundle "$BUNDLE" life-json-$UNIQ
  [ "$status" -eq 1 ]
  line=$(tail -n 1 "$BATS_TEST_TMPDIR/log.json")
  [ "$(jq -r .level <<<"$line")" = error ]
  [[ $(jq -r .msg <<<"$line") == *"no such file or directory"* ]]
}

# bats test_tags=cgroupv2
@test "lifecycle: fsrun SIGKILLed in the middle of create leaves nothing that stops delete --force" {
  # The createRuntime hook says that it runs, then holds create (the init cloned, waiting for the
  # hook) until the test lets it go: no guess at how long a slow machine takes to get there.
  local hook=$BATS_TEST_TMPDIR/hook running=$BATS_TEST_TMPDIR/hook-running go=$BATS_TEST_TMPDIR/go
  mkfifo "$go"
  cat >"$hook" <<'EOF'
#!/bin/sh
# hook RUNNING GO
: >"$1"
exec timeout 120 sh -c 'read -r _ <"$1"' sh "$2"
EOF
  chmod +x "$hook"
  update_config '.hooks.createRuntime = [{"path": $hook, "args": ["hook", $running, $go]}]' \
    --arg hook "$hook" --arg running "$running" --arg go "$go"
  set_process_args /bin/sleep 100
  "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" life-sk-$UNIQ &
  creator=$!
  timeout 120 sh -c 'until [ -e "$1" ]; do sleep 0.1; done' sh "$running"
  # cloned before the hook ran: there already (pgrep's status fails the test otherwise)
  init=$(pgrep -P "$creator" -x fsrun)
  kill -9 "$creator"
  wait "$creator" || true
  # the hook outlives its creator: let it go
  timeout "$WAIT_MAX_S" sh -c 'echo go >"$1"' sh "$go"
  [ -d "$FSRUN_ROOT/life-sk-$UNIQ" ]
  run fsrun state life-sk-$UNIQ
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = stopped ]
  fsrun delete --force life-sk-$UNIQ
  assert_no_leftovers life-sk-$UNIQ
  # the orphaned init died with its creator (PR_SET_PDEATHSIG; bounded, not timed)
  wait_until pid_gone "$init"
}

# bats test_tags=cgroupv2
@test "lifecycle: 100 containers (25 in the VM) run and deleted leave no fd, mount, state dir, cgroup or process" {
  set_process_args /bin/true
  # the host makes the 100; the emulated VM (minutes for 100) repeats the cgroup v2 removal 25 times
  local n=100
  [ -z "${FSRUN_IN_VM:-}" ] || n=25
  # In a private copy of the host's mount namespace, where no mount another process on the machine
  # makes arrives: no line is added to its mount table (one can go: a mount whose mount point
  # another run removes on the host goes in every namespace), and the fds of the shell that made
  # them are the same. The shell lists its fds itself (a glob): `$(ls /proc/$$/fd)` ran in a child
  # that could list the shell before it closed that substitution's own pipe end (1 in 100 at load).
  run unshare -m --propagation private bash -c '
    fsrun() { "$FSRUN" --root "$FSRUN_ROOT" "$@" || { echo "fsrun $1 ${*: -1}: exit status $?"; exit 1; }; }
    fds_before=(/proc/$$/fd/*)
    mounts_before=$(cat /proc/self/mountinfo)
    for i in $(seq "$1"); do
      fsrun run --bundle "$BUNDLE" "life-loop-$UNIQ-$i"
    done
    for i in $(seq 1 5 "$1"); do
      fsrun create --bundle "$BUNDLE" "life-cd-$UNIQ-$i"
      fsrun delete --force "life-cd-$UNIQ-$i"
    done
    fds_after=(/proc/$$/fd/*)
    if diff <(echo "$mounts_before") /proc/self/mountinfo | grep "^>"; then
      echo "new mount lines (above)"
      exit 1
    fi
    if [ "${fds_after[*]}" != "${fds_before[*]}" ]; then
      echo "fds before: ${fds_before[*]##*/}; after: ${fds_after[*]##*/}"
      ls -l /proc/$$/fd
      exit 1
    fi' bash "$n"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$FSRUN_ROOT")" ]
  [ -z "$(find /sys/fs/cgroup -type d -name "life-loop-$UNIQ-*" -o -type d -name "life-cd-$UNIQ-*" 2>/dev/null)" ]
  [ -z "$(_fsrun_pids_in_dir "$BUNDLE")" ]
  # no fsrun process of ours is left (a waiting init would be one)
  [ -z "$(pgrep -f "$FSRUN_ROOT" || true)" ]
}

# with_cpu_limit SECONDS CMD...: CMD under RLIMIT_CPU (killed by SIGXCPU past it). CPU time, not
# wall time: a loaded machine makes fsrun wait, not compute.
with_cpu_limit() {
  local seconds=$1
  shift
  (ulimit -t "$seconds" && "$@")
}

@test "lifecycle: 100,000 annotations (13 MB) cost create, state, exec, kill and delete under 20 s of CPU each" {
  # the duplicate scan made each of them quadratic: over 60 s of CPU apiece
  # (ASan's strict_string_checks scan each number's string to its end: a bound for the plain build)
  [ -z "${FSRUN_SANITIZER_LOG_DIR:-}" ] || skip "a CPU-time bound of the plain build: ASan's string checks are slower"
  [ -z "${FSRUN_IN_VM:-}" ] || skip "a CPU-time bound for real hardware: the VM's CPU is emulated in software"
  set_process_args /bin/sleep 1000
  update_config '.annotations = ([range(100000)] | map({key: "io.example.annotation-\(.)", value: ("v" * 90)}) | from_entries)'
  [ "$(stat -c %s "$BUNDLE/config.json")" -gt 10000000 ]
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" life-ann-$UNIQ </dev/null
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" start life-ann-$UNIQ
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" state life-ann-$UNIQ >"$BATS_TEST_TMPDIR/state.json"
  [ "$(jq '.annotations | length' "$BATS_TEST_TMPDIR/state.json")" -eq 100000 ]
  [ "$(jq -r '.annotations["io.example.annotation-99999"] | length' "$BATS_TEST_TMPDIR/state.json")" -eq 90 ]
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" exec life-ann-$UNIQ /bin/true
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" kill life-ann-$UNIQ KILL
  with_cpu_limit 20 "$FSRUN" --root "$FSRUN_ROOT" delete --force life-ann-$UNIQ
  assert_no_leftovers life-ann-$UNIQ
}
