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
  teardown_bundle
}

@test "security-state: a new state root and the container's directory are 0700, state.json 0600" {
  root=$BATS_TEST_TMPDIR/new-root/state
  set_process_args /bin/true
  umask 000
  "$FSRUN" --root "$root" create --bundle "$BUNDLE" sec-mode
  [ "$(stat -c %a "$root")" = 700 ]
  [ "$(stat -c %a "$root/sec-mode")" = 700 ]
  [ "$(stat -c %a "$root/sec-mode/state.json")" = 600 ]
  "$FSRUN" --root "$root" delete --force sec-mode
  [ ! -e "$root/sec-mode" ]
}

@test "security-state: state.json is only ever replaced by rename, never written in place" {
  requires_host_command strace
  set_process_args /bin/true
  # LeakSanitizer cannot run under ptrace (ASan build)
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=openat,openat2,rename,renameat,renameat2 -o "$BATS_TEST_TMPDIR/trace" \
      "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" sec-atomic
  # the file is produced by renames of a temporary file...
  grep -E 'rename.*"state\.json\.tmp\.[0-9]+".*"state\.json"' "$BATS_TEST_TMPDIR/trace"
  # ...and never opened for writing under its own name
  ! grep -E 'open.*"[^"]*state\.json".*O_(WRONLY|RDWR)' "$BATS_TEST_TMPDIR/trace" | grep -v '\.tmp\.'
}

@test "security-state: kill signals through a pidfd, never kill(2)" {
  requires_host_command strace
  set_process_args /bin/sleep 100
  fsrun run --detach --bundle "$BUNDLE" sec-pidfd
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=kill,tkill,tgkill,pidfd_open,pidfd_send_signal -o "$BATS_TEST_TMPDIR/trace" \
      "$FSRUN" --root "$FSRUN_ROOT" kill sec-pidfd KILL
  grep -q 'pidfd_send_signal(.*SIGKILL' "$BATS_TEST_TMPDIR/trace"
  ! grep -qE '^[0-9]+ +(kill|tkill|tgkill)\(' "$BATS_TEST_TMPDIR/trace"
  wait_for_status sec-pidfd stopped
  fsrun delete sec-pidfd
}

@test "security-state: a reused pid is never taken for the init (state, kill, delete leave it alone)" {
  set_process_args /bin/true
  fsrun run --keep --bundle "$BUNDLE" sec-reuse
  # pretend the init's pid now belongs to an unrelated process
  sleep 1000 &
  BYSTANDER=$!
  state=$FSRUN_ROOT/sec-reuse/state.json
  # ...even within the same clock tick: it has the start time fsrun recorded for the init
  start=$(sed 's/.*) //' "/proc/$BYSTANDER/stat" | cut -d' ' -f20)
  jq --argjson p "$BYSTANDER" --argjson t "$start" \
    '.pid = $p | .status = "created" | .fsrun.pidStartTime = $t' "$state" >"$state.new"
  mv "$state.new" "$state"
  run fsrun state sec-reuse
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = stopped ]
  [ "$(jq -r .pid <<<"$output")" = 0 ]
  run fsrun kill sec-reuse KILL
  [ "$status" -eq 1 ]
  [[ $output == *"container not running"* ]]
  fsrun delete --force sec-reuse
  _fsrun_pid_alive "$BYSTANDER"
}
