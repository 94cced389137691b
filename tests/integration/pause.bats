#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# pause / resume (live.c): a paused container's processes stop (a counter the container writes
# into a host directory stops advancing) and continue after resume; `state` says paused/running;
# pause and resume refuse containers in the wrong state with a clear error and exit status 1.
# The freezer is v1's freezer.state on this hybrid host and cgroup.freeze on cgroup v2 (the VM).

load helpers

setup() {
  requires_root
  requires_fsrun_command pause
  setup_bundle
  SHARED=$BATS_TEST_TMPDIR/shared
  mkdir -p "$SHARED"
  update_config '.mounts += [{"destination": "/shared", "type": "bind", "source": $s,
    "options": ["rbind", "rw"]}] | .root.readonly = false' --arg s "$SHARED"
  CONTAINER_ID=pause-$$-$RANDOM$RANDOM
}

teardown() {
  # thawed before the delete of teardown_bundle, removed after it (bounded: an exiting task
  # keeps the directory busy for a moment)
  if [ -n "${FOREIGN:-}" ] && [ -d "$FOREIGN" ]; then
    echo THAWED >"$FOREIGN/freezer.state"
  fi
  if [ -n "${ROOTLESS_ID:-}" ]; then
    as_user delete --force "$ROOTLESS_ID" || true
  fi
  teardown_bundle
  if [ -n "${FOREIGN:-}" ]; then
    # shellcheck disable=SC2016 # expanded by that shell
    wait_until sh -c '[ ! -d "$1" ] || rmdir "$1" 2>/dev/null' sh "$FOREIGN"
  fi
}

# as_user ARGS...: fsrun as uid 1000 with its own state root (the rootless test)
as_user() {
  setpriv --reuid=1000 --regid=1000 --clear-groups env -u XDG_RUNTIME_DIR \
    "$FSRUN" --root "$BATS_TEST_TMPDIR/rootless/state" "$@"
}

# start_counter: a detached container that appends a line to /shared/ticks every 50 ms
start_counter() {
  set_process_args /bin/sh -c 'while true; do echo x >>/shared/ticks; sleep 0.05; done'
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  wait_for_status "$CONTAINER_ID" running
}

ticks() {
  local n=0
  [ -f "$SHARED/ticks" ] && n=$(wc -l <"$SHARED/ticks")
  echo "$n"
}

# wait_ticks_above N: the counter passes N (the bound, WAIT_MAX_S, only ends a failure)
wait_ticks_above() {
  local tries=$((WAIT_MAX_S * 10))
  while [ "$(ticks)" -le "$1" ] && [ $tries -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ "$(ticks)" -gt "$1" ] || { echo "the counter stays at $(ticks), expected more than $1" >&2; return 1; }
}

# all_frozen: the kernel says the container's cgroup is frozen (cgroup.events' frozen 1,
# freezer.state FROZEN: not FREEZING) and every process of the container's pid namespace is in it:
# none of them can run until the thaw
all_frozen() {
  local dir ns p
  if [ "$(cgroup_mode)" = unified ]; then
    dir=/sys/fs/cgroup/fsrun/$CONTAINER_ID
    grep -x 'frozen 1' "$dir/cgroup.events"
  else
    dir=/sys/fs/cgroup/freezer/fsrun/$CONTAINER_ID
    grep -x FROZEN "$dir/freezer.state"
  fi
  ns=$(readlink "/proc/$(fsrun state "$CONTAINER_ID" | jq -r .pid)/ns/pid")
  [ -n "$ns" ]
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
    grep -qx "${p#/proc/}" "$dir/cgroup.procs" || { echo "process ${p#/proc/} is not in $dir" >&2; return 1; }
  done
}

# freezer_file: the file that says whether the container's cgroup is frozen, and its frozen value
freezer_file() {
  if [ "$(cgroup_mode)" = unified ]; then
    echo "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.freeze"
  else
    echo "/sys/fs/cgroup/freezer/fsrun/$CONTAINER_ID/freezer.state"
  fi
}

# bats test_tags=cgroupv2
@test "pause freezes the container's processes, resume lets them continue" {
  start_counter
  wait_ticks_above 2

  run fsrun pause "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = paused ]

  # not a wait that nothing moves: the kernel's word that no process of it can run
  all_frozen
  local before after
  before=$(ticks)
  after=$(ticks)
  echo "ticks while paused: $before -> $after"
  [ "$before" -eq "$after" ]

  run fsrun resume "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  wait_ticks_above "$after"
}

# bats test_tags=cgroupv2
@test "pause: state keeps the pid, delete --force removes a paused container" {
  start_counter
  local pid
  pid=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  fsrun pause "$CONTAINER_ID"
  run fsrun state "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = paused ]
  [ "$(jq -r .pid <<<"$output")" = "$pid" ]
  # the init is stopped by the freezer, not gone
  _fsrun_pid_alive "$pid"

  run fsrun delete --force "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "pause of a paused container and resume of a running one fail with a clear error" {
  start_counter
  run fsrun resume "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"container \`$CONTAINER_ID\` is not paused"* ]]

  fsrun pause "$CONTAINER_ID"
  run fsrun pause "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"container \`$CONTAINER_ID\` is not running"* ]]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = paused ]
  fsrun resume "$CONTAINER_ID"
}

@test "pause of a stopped, a created or a missing container fails" {
  set_process_args /bin/true
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  wait_for_status "$CONTAINER_ID" stopped
  run fsrun pause "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is not running"* ]]
  run fsrun resume "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is not paused"* ]]
  fsrun delete "$CONTAINER_ID"

  set_process_args /bin/sleep 100
  fsrun create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  run fsrun pause "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is not running"* ]]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
  fsrun delete --force "$CONTAINER_ID"

  run fsrun pause nosuch-$$-$RANDOM$RANDOM
  [ "$status" -eq 1 ]
  [[ "$output" == *"does not exist"* ]]
  run fsrun pause
  [ "$status" -eq 1 ]
  [[ "$output" == *"expected exactly one container ID"* ]]
}

@test "pause on cgroup v1: freezer.state is FROZEN while paused, THAWED after resume" {
  requires_cgroup_v1
  [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy"
  start_counter
  fsrun pause "$CONTAINER_ID"
  [ "$(cat "$(freezer_file)")" = FROZEN ]
  fsrun resume "$CONTAINER_ID"
  [ "$(cat "$(freezer_file)")" = THAWED ]
}

@test "delete --force of a container whose init was moved into a foreign, frozen v1 freezer cgroup" {
  requires_cgroup_v1
  [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy"
  start_sleeper
  pid=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  # a freezer cgroup that is not the container's, with the init in it, frozen
  FOREIGN=/sys/fs/cgroup/freezer/fsrun-foreign-$$
  mkdir "$FOREIGN"
  echo "$pid" >"$FOREIGN/cgroup.procs"
  echo FROZEN >"$FOREIGN/freezer.state"
  run fsrun delete --force "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  wait_until pid_gone "$pid"
  assert_no_leftovers "$CONTAINER_ID"
  # the foreign cgroup was never written to: still frozen, now empty
  [ "$(cat "$FOREIGN/freezer.state")" = FROZEN ]
  [ -z "$(cat "$FOREIGN/cgroup.procs")" ]
}

# bats test_tags=cgroupv2
@test "pause on cgroup v2: cgroup.freeze is 1 while paused, 0 after resume" {
  requires_cgroup_v2
  start_counter
  [ "$(cat "$(freezer_file)")" = 0 ]
  fsrun pause "$CONTAINER_ID"
  [ "$(cat "$(freezer_file)")" = 1 ]
  grep -qx 'frozen 1' "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.events"
  fsrun resume "$CONTAINER_ID"
  [ "$(cat "$(freezer_file)")" = 0 ]
  grep -qx 'frozen 0' "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.events"
}

# bats test_tags=cgroupv2
@test "pause, update and events of a rootless container without a cgroup fail clearly" {
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN" ||
    skip "uid 1000 cannot execute $FSRUN"
  local dir=$BATS_TEST_TMPDIR/rootless
  mkdir -p "$dir/state"
  chown 1000:1000 "$dir" "$dir/state"
  as_user spec --rootless --bundle "$dir"
  jq --arg r "$ROOTFS" '.root.path = $r | .process.terminal = false | .process.args = ["sleep", "1000"]' \
    "$dir/config.json" >"$dir/config.new"
  mv "$dir/config.new" "$dir/config.json"
  ROOTLESS_ID=$CONTAINER_ID
  as_user run -d --bundle "$dir" "$ROOTLESS_ID" </dev/null
  [ "$(as_user state "$ROOTLESS_ID" | jq -r .status)" = running ]
  [ "$(jq -r .fsrun.cgroup "$dir/state/$ROOTLESS_ID/state.json")" = null ] ||
    skip "this host delegates a cgroup to uid 1000"

  run as_user pause "$ROOTLESS_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"container \`$ROOTLESS_ID\` has no cgroup"*"cannot pause it"* ]]
  [ "$(as_user state "$ROOTLESS_ID" | jq -r .status)" = running ]
  run as_user update --memory 64m "$ROOTLESS_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"has no cgroup"*"cannot update it"* ]]
  run as_user events --stats "$ROOTLESS_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"has no cgroup"*"cannot read its events"* ]]
}
