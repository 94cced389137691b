#!/usr/bin/env bats
# The run.fsrun.init annotation (reaper.c): pid 1 is a small init of fsrun's, the process is its
# child. Pid 1 of a pid namespace ignores the signals it has no handler for, so without the init a
# shell that sets none never ends on SIGTERM; with it, signals reach the process, orphans are
# reaped and the exit status is the process's. The sandbox always runs with it.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  update_config '.annotations["run.fsrun.init"] = "true"'
}

teardown() {
  teardown_bundle
}

@test "init: pid 1 is fsrun-init, the process is its child, and the runtime's command line is hidden" {
  run_in_container sh -c 'cat /proc/1/comm; echo "me=$$ parent=$PPID"; tr "\0" " " </proc/1/cmdline; echo'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = fsrun-init ]
  [ "${lines[1]}" = "me=2 parent=1" ]
  # the runtime's own arguments (bundle path, container id) do not show through pid 1
  [[ "${lines[2]}" == fsrun-init* ]]
  [[ "$output" != *"$BUNDLE"* ]]
  [[ "$output" != *"$CONTAINER_ID"* ]]
}

@test "init: pid 1 is the tiny init from a sealed memfd, without the runtime's environment or memory" {
  export FSRUN_TEST_SECRET=leak
  run_in_container sh -c 'tr "\0" "\n" </proc/1/environ | grep -c FSRUN_TEST_SECRET
    readlink /proc/1/exe; awk "\$6 ~ /^\// && \$6 !~ /fsrun-init/" /proc/1/maps | wc -l'
  echo "$output"
  [ "$status" -eq 0 ]
  # the runtime's environment is the caller's (podman's, a shell's): none of it in the container
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = "/memfd:fsrun-init (deleted)" ]
  # no file is mapped but the tiny init and its parameters: not the runtime's binary, and with it
  # none of the runtime's memory (its heap: the config, the state root)
  [ "${lines[2]}" = 0 ]
}

@test "init: SIGTERM from fsrun kill ends a shell that sets no handler (without the init it does not)" {
  set_process_args sh -c 'sleep 100'
  fsrun run -d --bundle "$BUNDLE" with-init-$UNIQ </dev/null
  wait_for_status with-init-$UNIQ running
  fsrun kill with-init-$UNIQ TERM
  wait_for_status with-init-$UNIQ stopped

  # the same container as pid 1 itself: SIGTERM is ignored
  update_config 'del(.annotations["run.fsrun.init"])'
  fsrun run -d --bundle "$BUNDLE" without-init-$UNIQ </dev/null
  wait_for_status without-init-$UNIQ running
  pid=$(fsrun state without-init-$UNIQ | jq -r .pid)
  fsrun kill without-init-$UNIQ TERM
  # kill(2) has returned: a fatal signal would have marked the process dying by now (SIGKILL
  # pending in it, or gone); an ignored one was dropped. Nothing pending: it was ignored.
  grep -E '^(SigPnd|ShdPnd):' "/proc/$pid/status"
  [ "$(grep -cE '^(SigPnd|ShdPnd):\s+0+$' "/proc/$pid/status")" = 2 ]
  [ "$(fsrun state without-init-$UNIQ | jq -r .status)" = running ]
  fsrun delete --force with-init-$UNIQ
  fsrun delete --force without-init-$UNIQ
  assert_no_leftovers with-init-$UNIQ
  assert_no_leftovers without-init-$UNIQ
}

@test "init: run exits with the process's status, 128+N when signal N ends it" {
  run_in_container sh -c 'exit 7'
  [ "$status" -eq 7 ]
  run_in_container sh -c 'kill -9 $$'
  [ "$status" -eq 137 ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "init: orphans are reaped, no zombie is left in the container" {
  # the subshell's sleep is orphaned at once and reparented to pid 1; its exit must be reaped: its
  # /proc entry (there while it is a zombie) goes (bounded: a failure ends with the zombie listed)
  # shellcheck disable=SC2016 # expanded in the container
  run_in_container sh -c 'o=$( (sleep 0 >/dev/null &
      echo $!) ); i=0
    while [ -e "/proc/$o" ] && [ $i -lt $(($1 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    grep -l "^[0-9]* ([^)]*) Z" /proc/[0-9]*/stat || echo no-zombie' sh "$WAIT_MAX_S"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = no-zombie ]
}

@test "init: a foreground run's SIGINT reaches the command a shell is waiting for" {
  set_process_args sh -c 'sleep 100; echo not-interrupted'
  # a background job of a non-interactive shell starts with SIGINT ignored, and an ignored signal
  # stays ignored across execve: give fsrun (and so the container) the default action back
  env --default-signal=INT "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" fg-int-$UNIQ \
    </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 &
  local pid=$!
  wait_for_status fg-int-$UNIQ running
  kill -INT "$pid"
  local rc=0
  wait "$pid" || rc=$?
  cat "$BATS_TEST_TMPDIR/out"
  [ "$rc" -eq 130 ]
  ! grep -q not-interrupted "$BATS_TEST_TMPDIR/out" || false
  assert_no_leftovers fg-int-$UNIQ
}

@test "init: a value other than true or false is refused, naming the annotation, nothing left" {
  update_config '.annotations["run.fsrun.init"] = "yes"'
  run_in_container true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *'annotations["run.fsrun.init"]'* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "init: features lists the annotation" {
  run fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["run.fsrun.init"]' <<<"$output")" = "true|false" ]
}
