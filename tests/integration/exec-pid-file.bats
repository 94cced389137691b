#!/usr/bin/env bats
# A foreground `exec --pid-file` (exec-follow.h): the pid file names the process before the command
# runs, so a caller that SIGKILLs fsrun exec and finds no pid file knows the command never ran and
# never will (the Fusion adapter's timeout relies on it). --detach keeps runc's order (the file
# after execve: exec.bats, exec-2.bats). As root and as an ordinary user (uid 1000, rootless).
#
# The ordering is made, not waited for: strace holds fsrun at its rename of the written temporary
# file onto the pid file (helpers.bash, hold_pid_file). (A fifo at the temporary name held it before;
# fsrun now makes that file new, O_EXCL, so nothing left there is written through.)

load helpers

setup() {
  requires_root
  requires_fsrun_command exec
  requires_host_command setpriv
  setup_bundle
  CONTAINER_ID=execpid-$$-$RANDOM$RANDOM
  USER_DIR=$BATS_TEST_TMPDIR/rootless
}

teardown() {
  [ -n "${EXEC_PID:-}" ] && kill -9 "$EXEC_PID" 2>/dev/null
  [ -n "${HOLD_STRACE:-}" ] && kill "$HOLD_STRACE" 2>/dev/null
  [ -n "${ROOTLESS_ID:-}" ] && as_user "$FSRUN" --root "$USER_DIR/state" delete --force "$ROOTLESS_ID" >/dev/null 2>&1
  teardown_bundle
}

# as_user ARGS...: ARGS as uid 1000 (no XDG_RUNTIME_DIR: fsrun's default state root is not used),
# each program exec'ing the next (the same pid)
AS_USER=(setpriv --reuid=1000 --regid=1000 --clear-groups env -u XDG_RUNTIME_DIR)
as_user() {
  "${AS_USER[@]}" "$@"
}

# start_as WHO: $CONTAINER_ID runs `sleep 100000` (as root, or rootless as uid 1000); sets FS (the
# fsrun command line with its state root), RUN (the prefix that runs a command as WHO), INIT_PID
# and DIR (a directory WHO can write)
start_as() {
  if [ "$1" = root ]; then
    RUN=()
    FS=("$FSRUN" --root "$FSRUN_ROOT")
    DIR=$BATS_TEST_TMPDIR
    set_process_args sleep 100000
    "${FS[@]}" run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  else
    as_user test -x "$FSRUN" || skip "uid 1000 cannot execute $FSRUN"
    RUN=("${AS_USER[@]}")
    FS=("$FSRUN" --root "$USER_DIR/state")
    DIR=$USER_DIR
    mkdir -p "$USER_DIR/state" "$USER_DIR/bundle"
    chown 1000:1000 "$USER_DIR" "$USER_DIR/state" "$USER_DIR/bundle"
    as_user "${FS[@]}" spec --rootless --bundle "$USER_DIR/bundle"
    jq --arg r "$ROOTFS" '.root.path = $r | .process.terminal = false | .process.args = ["sleep", "100000"]' \
      "$USER_DIR/bundle/config.json" >"$USER_DIR/config.new"
    mv "$USER_DIR/config.new" "$USER_DIR/bundle/config.json"
    ROOTLESS_ID=$CONTAINER_ID
    as_user "${FS[@]}" run -d --bundle "$USER_DIR/bundle" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  fi
  INIT_PID=$("${RUN[@]}" "${FS[@]}" state "$CONTAINER_ID" | jq -r .pid)
  [ "$INIT_PID" -gt 0 ]
}

# in_pidns PID: the host pids of the processes in PID's pid namespace, one a line
in_pidns() {
  local ino
  ino=$(stat -L -c %i "/proc/$1/ns/pid") || return 1
  stat -L -c '%n %i' /proc/[0-9]*/ns/pid 2>/dev/null | awk -v ino="$ino" '$2 == ino { split($1, p, "/"); print p[3] }'
}

# only_init_left: the init is the only process in its pid namespace (a killed process gets up to
# WAIT_MAX_S to finish exiting)
only_init_left() {
  local tries=$((WAIT_MAX_S * 10))
  while [ "$(in_pidns "$INIT_PID" | wc -l)" -ne 1 ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  in_pidns "$INIT_PID" | while read -r p; do echo "in the container: $p $(tr '\0' ' ' <"/proc/$p/cmdline")"; done
  [ "$(in_pidns "$INIT_PID" | wc -l)" -eq 1 ]
}

# stalled_exec PIDFILE CMD...: fsrun exec --pid-file PIDFILE CMD in the background (EXEC_PID),
# returned once it is held writing PIDFILE
stalled_exec() {
  local pid_file=$1 held=0
  shift
  hold_pid_file "$pid_file" "$DIR" "${RUN[@]}" "${FS[@]}" exec --pid-file "$pid_file" "$CONTAINER_ID" "$@" \
    2>"$BATS_TEST_TMPDIR/exec.err" || held=$?
  EXEC_PID=$HOLD_PID
  cat "$BATS_TEST_TMPDIR/exec.err"
  [ "$held" -eq 0 ]
}

check_killed_before_pid_file() {
  start_as "$1"
  stalled_exec "$DIR/x.pid" sleep 100001
  # fsrun is writing the pid file: the command has not run yet
  ran=$(in_pidns "$INIT_PID" | while read -r p; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done | grep -cx 'sleep 100001 ' || true)
  [ "$ran" -eq 0 ]
  kill -9 "$EXEC_PID"
  # strace, asleep in its delay, lets go of the dead process only when it ends
  kill "$HOLD_STRACE"
  wait "$EXEC_PID" || true
  EXEC_PID=
  # no pid file, and the command never runs: the process that waited for fsrun died with it
  [ ! -e "$DIR/x.pid" ]
  only_init_left
  # a foreground exec without the fifo: the pid file stays, naming the process that ran
  run "${RUN[@]}" "${FS[@]}" exec --pid-file "$DIR/y.pid" "$CONTAINER_ID" sh -c 'exit 5'
  [ "$status" -eq 5 ]
  [[ $(cat "$DIR/y.pid") =~ ^[1-9][0-9]*$ ]]
  # a process that failed is no command's: its pid file is removed
  run "${RUN[@]}" "${FS[@]}" exec --pid-file "$DIR/z.pid" "$CONTAINER_ID" no-such-binary
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "no-such-binary": no such file or directory'* ]]
  [ ! -e "$DIR/z.pid" ]
  only_init_left
}

@test "exec --pid-file: fsrun SIGKILLed before the pid file is written leaves no command running (root)" {
  check_killed_before_pid_file root
}

@test "exec --pid-file: fsrun SIGKILLed before the pid file is written leaves no command running (uid 1000)" {
  check_killed_before_pid_file user
}

@test "exec --pid-file: the command's wait for the pid file needs no recvmsg from a filter loaded before it (root)" {
  # without noNewPrivileges the filter is loaded before the wait: it is read(2), so a profile
  # that refuses recvmsg and recvfrom still runs the command (before: "wait for the runtime's go")
  update_config '.process.noNewPrivileges = false
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["recvmsg", "recvfrom"],
        "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  start_as root
  run "${FS[@]}" exec --pid-file "$DIR/r.pid" "$CONTAINER_ID" sh -c 'echo ran; grep Seccomp: /proc/self/status'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == ran*"Seccomp:"*2* ]]
  [[ $(cat "$DIR/r.pid") =~ ^[1-9][0-9]*$ ]]
  only_init_left
}
