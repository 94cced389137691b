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
  # a start_waits_for_the_process that failed half-way: strace let go, start ends with the delete
  [ -z "${HOLD_STRACE:-}" ] || kill "$HOLD_STRACE" 2>/dev/null || true
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
  # `run -d` returns once the init reported, before it holds its signals: a TERM sent then is
  # dropped (pid 1 of a pid namespace, no handler; a startContainer hook in that window made this
  # test fail). Once it has forked the process, they are held and forwarded.
  init=$(fsrun state with-init-$UNIQ | jq -r .pid)
  wait_until pgrep -P "$init"
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

# Pid 1 of a pid namespace drops a signal it has no handler for when it is sent, unless it is
# blocked (kernel/signal.c: sig_ignored() never ignores a blocked signal; sig_task_ignored()
# ignores a SIG_DFL one for a SIGNAL_UNKILLABLE init). fsrun's init is born with every signal
# blocked and keeps them so until the tiny init takes them, so a TERM sent to a created container
# is held, and forwarded to the process once start runs it. Seen to fail before (the init ran with
# the caller's mask until just before the tiny init): no TERM pending, the process ran on.
@test "init: a TERM sent to a created container is held, not dropped: start runs the process and the TERM ends it" {
  set_process_args sleep 100
  fsrun create --bundle "$BUNDLE" held-term-$UNIQ </dev/null >/dev/null 2>&1
  init=$(fsrun state held-term-$UNIQ | jq -r .pid)
  fsrun kill held-term-$UNIQ TERM
  # pending in the init (SIGTERM is bit 14 of ShdPnd)
  grep -E '^(SigBlk|ShdPnd):' "/proc/$init/status"
  (( 0x$(awk '/^ShdPnd:/ {print $2}' "/proc/$init/status") & 0x4000 ))
  fsrun start held-term-$UNIQ
  wait_for_status held-term-$UNIQ stopped
  fsrun delete held-term-$UNIQ
  assert_no_leftovers held-term-$UNIQ
}

# `run -d` returns once the process has exec'd, as `start` does (it used to return at the init's
# `created` report, before the startContainer hooks and the exec): the process is there, with the
# caller's signal mask (the hooks too, though the init holds every signal), and a TERM sent at once
# ends it. With fsrun's init and without it (pid 1 is the process then). A hook holds the init
# before the exec; seen to fail before: no `sleep` child of the init (and pid 1 not yet `sleep`)
# when `run -d` returned.
@test "init: run -d returns once the process has exec'd, after the startContainer hooks; a TERM sent at once ends it" {
  local mask id pid
  update_config '.root.readonly = false | .hooks.startContainer = [{"path": "/bin/sh",
    "args": ["sh", "-c", "grep ^SigBlk: /proc/self/status >/hook-mask; sleep 2; :"]}]'
  set_process_args sleep 100
  # what a command this shell starts has blocked, so what fsrun's caller has
  mask=$(sh -c 'grep ^SigBlk: /proc/self/status')
  id=early-term-$UNIQ
  fsrun run -d --bundle "$BUNDLE" "$id" </dev/null
  init=$(fsrun state "$id" | jq -r .pid)
  pid=$(pgrep -P "$init" -x sleep)
  [ "$(grep ^SigBlk: "/proc/$pid/status")" = "$mask" ]
  [ "$(cat "$ROOTFS/hook-mask")" = "$mask" ]
  fsrun kill "$id" TERM
  wait_for_status "$id" stopped
  fsrun delete "$id"
  assert_no_leftovers "$id"

  # pid 1 is the process: it has exec'd (a TERM would be ignored: pid 1 without a handler)
  update_config 'del(.annotations["run.fsrun.init"])'
  rm "$ROOTFS/hook-mask"
  id=early-noinit-$UNIQ
  fsrun run -d --bundle "$BUNDLE" "$id" </dev/null
  pid=$(fsrun state "$id" | jq -r .pid)
  [ "$(cat "/proc/$pid/comm")" = sleep ]
  [ "$(grep ^SigBlk: "/proc/$pid/status")" = "$mask" ]
  [ "$(cat "$ROOTFS/hook-mask")" = "$mask" ]
  fsrun delete --force "$id"
  assert_no_leftovers "$id"
}

# review29 G5: with the process forked by fsrun's init, `start` returned 0 when that fork failed
# (a pids limit of 1: the init is the only process the cgroup may hold). The init now says in the
# exec fifo that it forked the process; start (and `run -d`, which starts the same way) fails
# without it. Seen to fail before: start exited 0 after "fork the process: Resource temporarily
# unavailable".
@test "init: start fails when the process could not be forked (pids limit 1); so does run -d, leaving nothing" {
  update_config '.linux.resources.pids = {"limit": 1}'
  set_process_args sleep 100
  fsrun create --bundle "$BUNDLE" nofork-$UNIQ </dev/null >/dev/null 2>&1
  run fsrun start nofork-$UNIQ
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"the container's process could not be started"* ]]
  wait_for_status nofork-$UNIQ stopped
  fsrun delete nofork-$UNIQ
  assert_no_leftovers nofork-$UNIQ
  run fsrun run -d --bundle "$BUNDLE" nofork-d-$UNIQ </dev/null
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"the container's process could not be started"* ]]
  assert_no_leftovers nofork-d-$UNIQ
}

# `start` returns once the process is forked and has exec'd, not once pid 1 is the tiny init
# (before, root's first `exec` after `start` could take pid 2: 67f82a8). Held at its fork, the
# init keeps start waiting. Seen to fail with the fifo closed at the tiny init's exec again (no
# fork before it; main 7088681 too): start was never seen reading the fifo while the fork was held.
# The same with FSRUN_NO_TINY (the init stays a clone of the runtime; the fifo closed before its
# vfork) and in rootless.bats as an ordinary user.
@test "init: start returns once the process is forked: with the init's fork held, start waits; a first exec never takes pid 2" {
  set_process_args sleep 1000
  fsrun create --bundle "$BUNDLE" start-fork-$UNIQ </dev/null >/dev/null 2>&1
  start_waits_for_the_process start-fork-$UNIQ fsrun
  fsrun delete --force start-fork-$UNIQ
  assert_no_leftovers start-fork-$UNIQ
}

@test "init: start returns once the process is forked, without the tiny init (FSRUN_NO_TINY)" {
  set_process_args sleep 1000
  FSRUN_NO_TINY=1 fsrun create --bundle "$BUNDLE" start-fork-nt-$UNIQ </dev/null >/dev/null 2>&1
  start_waits_for_the_process start-fork-nt-$UNIQ fsrun
  # the init stayed a clone of the runtime (its /proc/1/exe is not the tiny init's memfd)
  run fsrun exec start-fork-nt-$UNIQ readlink /proc/1/exe
  [ "$status" -eq 0 ]
  [ "$output" != "/memfd:fsrun-init (deleted)" ]
  fsrun delete --force start-fork-nt-$UNIQ
  assert_no_leftovers start-fork-nt-$UNIQ
}

# review29 G2: pid 1 is dumpable once it is the tiny init (an `exec` right after `start` joins
# through it), so it must never hold the exec fifo then: a process exec'd into the created
# container (root's, without CAP_SYS_PTRACE) would take it with pidfd_getfd and keep `start`
# waiting as long as it liked. The thief tries pid 1's fds while the init's fork of the process is
# held; start returns once let go, and nothing was taken. Seen to fail with the fifo held by the
# tiny init until its own fork (the first version of the change): "taken 3", start never returned.
@test "init: a process exec'd into the created container cannot take the exec fifo from pid 1 and hold start" {
  cc -static -O2 -o "$ROOTFS/bin/ptrace-probe" "$FSRUN_TESTS_DIR/ptrace-probe.c" || skip "needs cc -static"
  update_config '.root.readonly = false'
  set_process_args sleep 1000
  fsrun create --bundle "$BUNDLE" start-thief-$UNIQ </dev/null >/dev/null 2>&1
  fsrun exec -d start-thief-$UNIQ /bin/ptrace-probe steal-fifo 1 /tmp/thief </dev/null >/dev/null 2>&1
  wait_for_file "$ROOTFS/tmp/thief.rounds"
  START_WHILE_HELD=thief_tried_while_held start_waits_for_the_process start-thief-$UNIQ fsrun
  cat "$ROOTFS/tmp/thief"
  [ ! -s "$ROOTFS/tmp/thief" ]
  fsrun delete --force start-thief-$UNIQ
  assert_no_leftovers start-thief-$UNIQ
}

# thief_tried_while_held: two more rounds of the thief's, one of them wholly while held
thief_tried_while_held() {
  local rounds
  read -r rounds <"$ROOTFS/tmp/thief.rounds"
  rounds=$((rounds + 2))
  wait_until sh -c 'read -r n <"$1" && [ "$n" -ge "$2" ]' sh "$ROOTFS/tmp/thief.rounds" "$rounds"
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
