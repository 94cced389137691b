#!/usr/bin/env bats
# Invariant 5: the state directory is 0700, state files are replaced atomically (write + rename),
# signals go through pidfds, and a reused pid is never mistaken for the container's init.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
}

teardown() {
  [ -n "${BYSTANDER:-}" ] && kill "$BYSTANDER" 2>/dev/null
  remove_decoy_cgroup
  # the first test's container is in a state root of its own
  if [ -d "$BATS_TEST_TMPDIR/new-root/state/sec-mode-$UNIQ" ]; then
    "$FSRUN" --root "$BATS_TEST_TMPDIR/new-root/state" delete --force "sec-mode-$UNIQ" >/dev/null 2>&1
  fi
  teardown_bundle
}

@test "security-state: a new state root and the container's directory are 0700, state.json 0600" {
  root=$BATS_TEST_TMPDIR/new-root/state
  set_process_args /bin/true
  umask 000
  "$FSRUN" --root "$root" create --bundle "$BUNDLE" sec-mode-$UNIQ
  [ "$(stat -c %a "$root")" = 700 ]
  [ "$(stat -c %a "$root/sec-mode-$UNIQ")" = 700 ]
  [ "$(stat -c %a "$root/sec-mode-$UNIQ/state.json")" = 600 ]
  "$FSRUN" --root "$root" delete --force sec-mode-$UNIQ
  [ ! -e "$root/sec-mode-$UNIQ" ]
}

@test "security-state: state.json is only ever replaced by rename, never written in place" {
  requires_host_command strace
  set_process_args /bin/true
  # LeakSanitizer cannot run under ptrace (ASan build)
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=openat,openat2,rename,renameat,renameat2 -o "$BATS_TEST_TMPDIR/trace" \
      "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" sec-atomic-$UNIQ
  # the file is produced by renames of a temporary file...
  grep -E 'rename.*"state\.json\.tmp\.[0-9]+".*"state\.json"' "$BATS_TEST_TMPDIR/trace"
  # ...and never opened for writing under its own name
  ! grep -E 'open.*"[^"]*state\.json".*O_(WRONLY|RDWR)' "$BATS_TEST_TMPDIR/trace" | grep -v '\.tmp\.' || false
}

@test "security-state: kill signals through a pidfd, never kill(2)" {
  requires_host_command strace
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" sec-pidfd-$UNIQ
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=kill,tkill,tgkill,pidfd_open,pidfd_send_signal -o "$BATS_TEST_TMPDIR/trace" \
      "$FSRUN" --root "$FSRUN_ROOT" kill sec-pidfd-$UNIQ KILL
  grep -q 'pidfd_send_signal(.*SIGKILL' "$BATS_TEST_TMPDIR/trace"
  ! grep -qE '^[0-9]+ +(kill|tkill|tgkill)\(' "$BATS_TEST_TMPDIR/trace" || false
  wait_for_status sec-pidfd-$UNIQ stopped
  fsrun delete sec-pidfd-$UNIQ
}

@test "security-state: a reused pid is never taken for the init (state, kill, exec, delete leave it alone)" {
  set_process_args /bin/true
  fsrun run --keep --bundle "$BUNDLE" sec-reuse-$UNIQ
  # pretend the init's pid now belongs to an unrelated process
  sleep 1000 &
  BYSTANDER=$!
  state=$FSRUN_ROOT/sec-reuse-$UNIQ/state.json
  # ...even within the same clock tick: it has the start time fsrun recorded for the init
  start=$(sed 's/.*) //' "/proc/$BYSTANDER/stat" | cut -d' ' -f20)
  jq --argjson p "$BYSTANDER" --argjson t "$start" \
    '.pid = $p | .status = "created" | .fsrun.pidStartTime = $t' "$state" >"$state.new"
  mv "$state.new" "$state"
  run fsrun state sec-reuse-$UNIQ
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = stopped ]
  [ "$(jq -r .pid <<<"$output")" = 0 ]
  run fsrun kill sec-reuse-$UNIQ KILL
  [ "$status" -eq 1 ]
  [[ $output == *"container not running"* ]]
  # exec's pidfd on the init is kept only when the liveness check after its opening passed: never
  # the bystander's namespaces (a host shell's here: the exec would run on the host)
  run fsrun exec sec-reuse-$UNIQ /bin/true
  [ "$status" -eq 1 ]
  [[ $output == *"cannot exec in a stopped container"* ]]
  fsrun delete --force sec-reuse-$UNIQ
  _fsrun_pid_alive "$BYSTANDER"
}

# The init's pid of container $1, as the state reports it.
init_pid_of() {
  fsrun state "$1" | jq -r .pid
}

# wait_pid_gone PID: until PID is gone (or a zombie); fails past WAIT_MAX_S.
wait_pid_gone() {
  wait_until pid_gone "$1"
}

@test "security-state: delete --force with a corrupt state.json kills the container and removes it all" {
  CONTAINER_ID=sec-corrupt-$UNIQ
  start_sleeper
  pid=$(init_pid_of sec-corrupt-$UNIQ)
  printf '{"id": "sec-corr' >"$FSRUN_ROOT/sec-corrupt-$UNIQ/state.json"
  # without --force the container is kept, as runc keeps it
  run fsrun delete sec-corrupt-$UNIQ
  [ "$status" -eq 1 ]
  [ -e "$FSRUN_ROOT/sec-corrupt-$UNIQ/state.json" ]
  fsrun delete --force sec-corrupt-$UNIQ
  wait_pid_gone "$pid"
  assert_no_leftovers sec-corrupt-$UNIQ
}

# move_out_of_cgroup PID: PID into the root cgroup of every hierarchy (no longer in its container's)
move_out_of_cgroup() {
  local procs
  for procs in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do
    [ -e "$procs" ] && echo "$1" >"$procs"
  done
  ! grep -q "$CONTAINER_ID" "/proc/$1/cgroup" || return 1
}

@test "security-state: delete --force with a corrupt state.json kills the init that left its cgroup (its record is kept apart)" {
  # before: the cgroup, found from the id, was empty; delete exited 0 and the init lived on
  CONTAINER_ID=sec-moved-$UNIQ
  start_sleeper
  pid=$(init_pid_of "$CONTAINER_ID")
  move_out_of_cgroup "$pid"
  printf '{"id": "sec-mo' >"$FSRUN_ROOT/$CONTAINER_ID/state.json"
  fsrun delete --force "$CONTAINER_ID"
  wait_pid_gone "$pid"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "security-state: delete --force with state.json and the init's record both corrupt stops nothing, keeps the state, says why" {
  # before: exit 0, the state directory gone, the init alive
  local dir
  CONTAINER_ID=sec-blind-$UNIQ
  start_sleeper
  pid=$(init_pid_of "$CONTAINER_ID")
  dir=$FSRUN_ROOT/$CONTAINER_ID
  cp "$dir/state.json" "$BATS_TEST_TMPDIR/state.json"
  printf '{"id": ' >"$dir/state.json"
  ln -sfn garbage "$dir/init"
  run fsrun delete --force "$CONTAINER_ID"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"the state file is corrupt"*"the init's record \`init\` is corrupt: its init cannot be told, nothing was stopped: the state directory $dir is kept" ]]
  [ -e "$dir/state.json" ]
  _fsrun_pid_alive "$pid"
  grep -q "$CONTAINER_ID" "/proc/$pid/cgroup"
  # with the state repaired, delete --force stops it
  cp "$BATS_TEST_TMPDIR/state.json" "$dir/state.json"
  fsrun delete --force "$CONTAINER_ID"
  wait_pid_gone "$pid"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "security-state: delete --force with state.json a symlink to another container's state kills only its own" {
  # the other container has a bundle of its own, so that its process is not taken for a leftover
  setup_bundle "$BATS_TEST_TMPDIR/victim"
  CONTAINER_ID=sec-victim-$UNIQ
  start_sleeper
  victim=$(init_pid_of sec-victim-$UNIQ)
  setup_bundle
  CONTAINER_ID=sec-link-$UNIQ
  start_sleeper
  pid=$(init_pid_of sec-link-$UNIQ)
  ln -sf "$FSRUN_ROOT/sec-victim-$UNIQ/state.json" "$FSRUN_ROOT/sec-link-$UNIQ/state.json"
  fsrun delete --force sec-link-$UNIQ
  wait_pid_gone "$pid"
  assert_no_leftovers sec-link-$UNIQ
  # the other container is untouched
  _fsrun_pid_alive "$victim"
  [ "$(fsrun state sec-victim-$UNIQ | jq -r .status)" = running ]
  fsrun delete --force sec-victim-$UNIQ
}

# A cgroup outside fsrun's, with a process of ours in it: DECOY (the directory) and DECOY_PID.
make_decoy_cgroup() {
  local hierarchy=/sys/fs/cgroup/pids
  [ "$(cgroup_mode)" = unified ] && hierarchy=/sys/fs/cgroup
  DECOY_NAME=fsrun-decoy-$$
  DECOY=$hierarchy/$DECOY_NAME
  mkdir "$DECOY"
  sleep 1000 &
  DECOY_PID=$!
  echo "$DECOY_PID" >"$DECOY/cgroup.procs"
}

remove_decoy_cgroup() {
  if [ -n "${DECOY_PID:-}" ]; then
    kill -9 "$DECOY_PID" 2>/dev/null
    wait "$DECOY_PID" 2>/dev/null || true
  fi
  if [ -n "${DECOY:-}" ] && [ -d "$DECOY" ]; then
    rmdir "$DECOY"
  fi
  DECOY_PID='' DECOY=''
}

@test "security-state: a forged cgroup in state.json is never killed in or removed (kill --all, delete --force)" {
  CONTAINER_ID=sec-forged-$UNIQ
  start_sleeper
  pid=$(init_pid_of sec-forged-$UNIQ)
  make_decoy_cgroup
  state=$FSRUN_ROOT/sec-forged-$UNIQ/state.json
  jq --arg cg "$(cgroup_mode):/$DECOY_NAME" '.fsrun.cgroup = $cg' "$state" >"$state.new"
  mv "$state.new" "$state"
  run fsrun kill --all sec-forged-$UNIQ KILL
  [ "$status" -eq 1 ]
  [[ $output == *"not one that the container's id and linux.cgroupsPath lead to"* ]]
  _fsrun_pid_alive "$DECOY_PID"
  run fsrun delete --force sec-forged-$UNIQ
  [ "$status" -eq 0 ]
  [[ $output == *"left alone"* ]]
  # the decoy and its process are untouched; the container's own cgroup and init are gone
  [ -d "$DECOY" ]
  _fsrun_pid_alive "$DECOY_PID"
  grep -qx "$DECOY_PID" "$DECOY/cgroup.procs"
  wait_pid_gone "$pid"
  remove_decoy_cgroup
  assert_no_leftovers sec-forged-$UNIQ
}
