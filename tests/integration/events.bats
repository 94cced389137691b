#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# events (events.c, cmd/events.c): `--stats` prints one runc-shaped stats object whose numbers
# match the container's cgroup; without --stats a stream of stats events every --interval, an
# {"type":"oom"} event when the kernel OOM-kills a process of the container, and exit status 0
# when the container stops.

load helpers
bats_require_minimum_version 1.5.0

setup() {
  requires_root
  requires_fsrun_command events
  setup_bundle
  SHARED=$BATS_TEST_TMPDIR/shared
  mkdir -p "$SHARED"
  update_config '.mounts += [{"destination": "/shared", "type": "bind", "source": $s,
    "options": ["rbind", "rw"]}]
    | .linux.resources.memory = {"limit": 67108864}
    | .linux.resources.pids = {"limit": 20}' --arg s "$SHARED"
  CONTAINER_ID=ev-$$-$RANDOM$RANDOM
  EVENTS_PID=""
}

teardown() {
  if [ -n "$EVENTS_PID" ]; then
    kill "$EVENTS_PID" 2>/dev/null || true
    wait "$EVENTS_PID" 2>/dev/null || true
  fi
  teardown_bundle
}

start_detached() {
  set_process_args "$@"
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  wait_for_status "$CONTAINER_ID" running
}

# wait_lines FILE N: FILE (made before the writer starts) has at least N lines (the bound,
# WAIT_MAX_S, only ends a failure)
wait_lines() {
  local tries=$((WAIT_MAX_S * 10))
  while [ "$(wc -l <"$1")" -lt "$2" ] && [ $tries -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ "$(wc -l <"$1")" -ge "$2" ] || { echo "$1 has $(wc -l <"$1") lines, expected $2:" >&2; cat "$1" >&2; return 1; }
}

# wait_exit PID SECONDS: PID (a child of this shell) exits within SECONDS; its status in EXIT_STATUS
wait_exit() {
  local tries=$(($2 * 10))
  while kill -0 "$1" 2>/dev/null && [ $tries -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  kill -0 "$1" 2>/dev/null && { echo "process $1 is still running after $2 s" >&2; return 1; }
  EXIT_STATUS=0
  wait "$1" || EXIT_STATUS=$?
  EVENTS_PID=""
}

# bats test_tags=cgroupv2
@test "events --stats: one JSON object with runc's cpu, memory and pids fields and real values" {
  # some CPU time and two more processes, then a sign that all is in place
  start_detached /bin/sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done
    sleep 1000 & sleep 1000 & touch /shared/ready; wait'
  wait_for_file "$SHARED/ready"
  run --separate-stderr fsrun events --stats "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  echo "$output" | jq . >/dev/null

  [ "$(jq -r .type <<<"$output")" = stats ]
  [ "$(jq -r .id <<<"$output")" = "$CONTAINER_ID" ]
  # memory: in use, under the configured limit, which is reported as configured
  [ "$(jq -r .data.memory.usage.limit <<<"$output")" = 67108864 ]
  jq -e '.data.memory.usage.usage > 0 and .data.memory.usage.usage < 67108864' <<<"$output"
  jq -e '.data.memory.usage.failcnt == 0' <<<"$output"
  jq -e '.data.memory.swap | has("limit") and has("failcnt")' <<<"$output"
  jq -e '.data.memory.raw | type == "object" and length > 0' <<<"$output"
  # cpu: the loop took some time; kernel and user are always there
  jq -e '.data.cpu.usage.total > 0' <<<"$output"
  jq -e '.data.cpu.usage | has("kernel") and has("user")' <<<"$output"
  jq -e '.data.cpu.throttling | type == "object"' <<<"$output"
  # pids: sh and two sleeps, under the configured limit
  jq -e '.data.pids.current >= 3 and .data.pids.current <= 20' <<<"$output"
  [ "$(jq -r .data.pids.limit <<<"$output")" = 20 ]
  jq -e '(.data.blkio | type == "object") and (.data.hugetlb | type == "object")' <<<"$output"
}

# bats test_tags=cgroupv2
@test "events --stats follows update and works on a paused container" {
  start_detached /bin/sleep 1000
  fsrun update --memory 96m --pids-limit 12 "$CONTAINER_ID"
  fsrun pause "$CONTAINER_ID"
  run --separate-stderr fsrun events --stats "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$(jq -r .data.memory.usage.limit <<<"$output")" = 100663296 ]
  [ "$(jq -r .data.pids.limit <<<"$output")" = 12 ]
  fsrun resume "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "events streams stats every --interval and exits 0 when the container stops" {
  start_detached /bin/sleep 1000
  : >"$BATS_TEST_TMPDIR/events"
  fsrun events --interval 200ms "$CONTAINER_ID" >"$BATS_TEST_TMPDIR/events" 2>"$BATS_TEST_TMPDIR/events.err" &
  EVENTS_PID=$!
  wait_lines "$BATS_TEST_TMPDIR/events" 3
  # every line is a stats event of this container
  jq -e -s --arg id "$CONTAINER_ID" 'all(.type == "stats" and .id == $id and (.data.pids.current >= 1))' \
    "$BATS_TEST_TMPDIR/events"

  fsrun kill "$CONTAINER_ID" KILL
  wait_exit "$EVENTS_PID" "$WAIT_MAX_S"
  cat "$BATS_TEST_TMPDIR/events.err"
  [ "$EXIT_STATUS" -eq 0 ]
}

# bats test_tags=cgroupv2
@test "events reports an OOM kill as {\"type\":\"oom\"} and ends when the container stops" {
  # no swap to escape to: memory+swap = memory
  update_config '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
  # the hog waits for the go file, so that the OOM happens while events is watching
  start_detached /bin/sh -c 'while [ ! -e /shared/go ]; do sleep 0.05; done; exec dd if=/dev/zero of=/dev/null bs=128M count=1'
  : >"$BATS_TEST_TMPDIR/events"
  fsrun events --interval 30s "$CONTAINER_ID" >"$BATS_TEST_TMPDIR/events" 2>"$BATS_TEST_TMPDIR/events.err" &
  EVENTS_PID=$!
  # the first stats event: the watch is in place
  wait_lines "$BATS_TEST_TMPDIR/events" 1
  touch "$SHARED/go"
  wait_exit "$EVENTS_PID" "$WAIT_MAX_S"
  cat "$BATS_TEST_TMPDIR/events" "$BATS_TEST_TMPDIR/events.err"
  [ "$EXIT_STATUS" -eq 0 ]
  jq -e -s --arg id "$CONTAINER_ID" 'map(select(.type == "oom")) | length == 1 and .[0].id == $id and (.[0] | has("data") | not)' \
    "$BATS_TEST_TMPDIR/events"
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = stopped ]
}

@test "events: errors for a stopped or missing container and bad intervals" {
  set_process_args /bin/true
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  wait_for_status "$CONTAINER_ID" stopped
  run fsrun events --stats "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is not running"* ]]
  run fsrun events "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"is not running"* ]]
  run fsrun events --stats nosuch-$$-$RANDOM$RANDOM
  [ "$status" -eq 1 ]
  [[ "$output" == *"does not exist"* ]]
  run fsrun events --interval 0s "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"--interval"*"greater than 0"* ]]
  run fsrun events --interval 5 "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"--interval"*"invalid duration"* ]]
}
