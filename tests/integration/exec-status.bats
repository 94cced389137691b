#!/usr/bin/env bats
# `fsrun exec --status-json FILE` (docs/fsrun-exec.8, "Exit status"): how the exec'd process
# ended, as JSON, beside fsrun's own exit status (128+N for a signal, as runc's). The Fusion
# adapter's task container (a `fsrun bundle` container, as here) takes exitCode, signal and
# oomKilled from it: `exit 130` is not a SIGINT. As root and as an ordinary user made for this file.

load helpers

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=fsrxst$$
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    pkill -KILL -u "$TEST_USER" 2>/dev/null || true
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command exec
  requires_fsrun_command bundle
  requires_host_command git
  requires_host_command jq
  DIR=$BATS_TEST_TMPDIR/xst
  WT=$DIR/worktree
  ID=xst-$$-$RANDOM$RANDOM
  mkdir -p "$DIR"
  git init -q "$WT"
  printf '{"allowNetwork": false}\n' >"$DIR/policy.json"
}

teardown() {
  if [ -n "${AS_USER_ROOT:-}" ]; then
    as_user "$FSRUN" --root "$AS_USER_ROOT" delete --force "$ID" >/dev/null 2>&1 || true
  else
    fsrun delete --force "$ID" >/dev/null 2>&1 || true
  fi
}

as_user() {
  setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups env HOME="$DIR" "$@"
}

# task_container [FSRUN_PREFIX...]: the task container $ID on $WT, running `sleep infinity`
task_container() {
  "$@" bundle --policy "$DIR/policy.json" --worktree "$WT" --out "$DIR/bundle" -- sleep infinity
  "$@" create --bundle "$DIR/bundle" "$ID"
  "$@" start "$ID"
}

# exec_status FSRUN_PREFIX... -- COMMAND: runs COMMAND in $ID with --status-json $DIR/status.json;
# sets status (fsrun's exit status) and STATUS_JSON (the file's content)
exec_status() {
  local prefix=()
  while [ "$1" != -- ]; do
    prefix+=("$1")
    shift
  done
  shift
  status=0
  "${prefix[@]}" exec --status-json "$DIR/status.json" "$ID" /bin/sh -c "$1" || status=$?
  STATUS_JSON=$(cat "$DIR/status.json")
  echo "fsrun exit status $status, $STATUS_JSON"
}

# as_test_user_or_skip: $DIR handed to the test user (TEST_UID, TEST_GID), AS_USER_ROOT its state
# root; skips where there is no such user or it cannot make a user namespace
as_test_user_or_skip() {
  requires_host_command setpriv
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  TEST_UID=$(id -u "$TEST_USER")
  TEST_GID=$(id -g "$TEST_USER")
  setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups unshare -U true 2>/dev/null ||
    skip "an unprivileged user cannot create a user namespace on this host"
  make_traversable "$DIR"
  chown -R "$TEST_UID:$TEST_GID" "$DIR"
  AS_USER_ROOT=$DIR/user-state
}

# check_exit_and_signal FSRUN_PREFIX...: exit 130 is an exit, kill -INT a signal; the exit status
# is 130 for both, as without the option
check_exit_and_signal() {
  exec_status "$@" -- 'exit 130'
  [ "$status" -eq 130 ]
  [ "$(jq -c '[.exitCode, .signal]' <<<"$STATUS_JSON")" = '[130,null]' ]
  exec_status "$@" -- 'kill -INT $$'
  [ "$status" -eq 130 ]
  [ "$(jq -c '[.exitCode, .signal]' <<<"$STATUS_JSON")" = '[null,"SIGINT"]' ]
  exec_status "$@" -- 'exit 0'
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.exitCode, .signal]' <<<"$STATUS_JSON")" = '[0,null]' ]
  # one object on one line
  [ "$(wc -l <"$DIR/status.json")" = 1 ]
}

@test "exec --status-json: exit 130 is exitCode 130, kill -INT \$\$ is signal SIGINT (root)" {
  task_container fsrun
  check_exit_and_signal fsrun
  # no OOM kill (the field is absent only on a host without a memory cgroup controller)
  [ "$(jq -c '.oomKilled // false' <<<"$STATUS_JSON")" = false ]
}

@test "exec --status-json: an ordinary user's task container reports the same" {
  as_test_user_or_skip
  task_container as_user "$FSRUN" --root "$AS_USER_ROOT"
  check_exit_and_signal as_user "$FSRUN" --root "$AS_USER_ROOT"
  # without a memory cgroup of its own the user's container reports no OOM kill it cannot see
  [ "$(jq -c '.oomKilled // false' <<<"$STATUS_JSON")" = false ]
  [ "$(stat -c %u "$DIR/status.json")" = "$TEST_UID" ]
}

@test "exec --status-json: the OOM killer's kill in the container's memory cgroup is oomKilled (root)" {
  [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
    skip "no memory cgroup controller on this host"
  printf '{"allowNetwork": false, "memoryLimitMb": 32}\n' >"$DIR/policy.json"
  task_container fsrun
  # tail keeps the whole "line" of zeros in memory
  exec_status fsrun -- 'exec tail /dev/zero'
  [ "$status" -eq 137 ]
  [ "$(jq -c '[.exitCode, .signal, .oomKilled]' <<<"$STATUS_JSON")" = '[null,"SIGKILL",true]' ]
  # the counter is read per exec: the next command was not OOM-killed
  exec_status fsrun -- 'exit 3'
  [ "$(jq -c '[.exitCode, .signal, .oomKilled]' <<<"$STATUS_JSON")" = '[3,null,false]' ]
}

@test "exec --status-json: a path that cannot be opened fails before anything runs; --detach is refused" {
  task_container fsrun
  run fsrun exec --status-json "$DIR/no-such-dir/status.json" "$ID" /bin/sh -c 'touch /tmp/ran; touch "$0"' "$WT/ran"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"--status-json $DIR/no-such-dir/status.json: open: No such file or directory"* ]]
  [ ! -e "$WT/ran" ]
  run fsrun exec --detach --status-json "$DIR/status.json" "$ID" /bin/sh -c 'touch "$0"' "$WT/ran"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"--status-json: cannot be used with --detach"* ]]
  [ ! -e "$WT/ran" ]
  [ ! -e "$DIR/status.json" ]
}

# check_unfit_outputs FSRUN_PREFIX...: fsrun, root or not, writes no file it did not mean to
# (caller-output.h): a symbolic link, a fifo or a second hard link at the --status-json path is
# refused before anything runs (one line naming the option and why), and what it names is unchanged;
# an existing regular file is truncated. A --pid-file at a link is replaced (runc's rename), and a
# hard link left at its temporary name (PIDFILE.tmp.PID) is not written through.
check_unfit_outputs() {
  local f opt runner=() fs=("$FSRUN" --root "$FSRUN_ROOT")
  if [ "$1" = as_user ]; then
    runner=(as_user)
    fs=("${@:2}")
  fi
  echo precious >"$DIR/target"
  ln -s "$DIR/target" "$DIR/link.json"
  mkfifo "$DIR/fifo.json"
  ln "$DIR/target" "$DIR/hard.json"
  [ -z "${TEST_UID:-}" ] || chown -h "$TEST_UID:$TEST_GID" "$DIR/target" "$DIR/link.json" "$DIR/fifo.json"
  for f in link fifo hard; do
    # a guard, not a measure: the fifo held an open with O_WRONLY for ever before
    run "${runner[@]}" timeout -s KILL 60 "${fs[@]}" exec --status-json "$DIR/$f.json" "$ID" /bin/sh -c 'touch "$0"' "$WT/ran-$f"
    echo "$output"
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
    [ ! -e "$WT/ran-$f" ]
  done
  run "$@" exec --status-json "$DIR/link.json" "$ID" /bin/true
  [[ $output == *"--status-json $DIR/link.json: a symbolic link (fsrun writes no file through one)" ]]
  run "$@" exec --status-json "$DIR/fifo.json" "$ID" /bin/true
  [[ $output == *"--status-json $DIR/fifo.json: not a regular file" ]]
  run "$@" exec --status-json "$DIR/hard.json" "$ID" /bin/true
  [[ $output == *"--status-json $DIR/hard.json: a file with another hard link"* ]]
  [ "$(cat "$DIR/target")" = precious ]
  [ -L "$DIR/link.json" ]
  [ -p "$DIR/fifo.json" ]
  # nor a parent another uid could change (path-walk.h): a link of theirs, a directory of theirs
  mkdir "$DIR/out" "$DIR/theirs"
  [ -z "${TEST_UID:-}" ] || chown "$TEST_UID:$TEST_GID" "$DIR/out"
  ln -s "$DIR/out" "$DIR/plink"
  chown -h 4343 "$DIR/plink"
  chown 4343 "$DIR/theirs"
  # (--pid-file's too, checked before anything runs: the write is runc's rename by path)
  for f in plink/s.json theirs/s.json plink/p.pid; do
    case $f in
    *.pid) opt=--pid-file ;;
    *) opt=--status-json ;;
    esac
    run "${runner[@]}" "${fs[@]}" exec "$opt" "$DIR/$f" "$ID" /bin/sh -c 'touch "$0"' "$WT/ran"
    echo "$output"
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ $output == "fsrun: $opt $DIR/$f: reached through \`"*"/${f%/*}\`, owned by uid 4343: "* ]]
    [ ! -e "$WT/ran" ]
  done
  [ -z "$(ls -A "$DIR/out" "$DIR/theirs" | grep -v :)" ]
  # the caller's own regular file: truncated, one object
  echo "an older and much longer content than the status" >"$DIR/own.json"
  [ -z "${TEST_UID:-}" ] || chown "$TEST_UID:$TEST_GID" "$DIR/own.json"
  "$@" exec --status-json "$DIR/own.json" "$ID" /bin/true
  [ "$(jq -c '[.exitCode, .signal]' "$DIR/own.json")" = '[0,null]' ]
  [ "$(wc -l <"$DIR/own.json")" = 1 ]
  # --pid-file: the link replaced by a regular file naming the process, its target unchanged
  ln -s "$DIR/target" "$DIR/link.pid"
  [ -z "${TEST_UID:-}" ] || chown -h "$TEST_UID:$TEST_GID" "$DIR/link.pid"
  "$@" exec --pid-file "$DIR/link.pid" "$ID" /bin/true
  [ ! -L "$DIR/link.pid" ]
  [[ $(cat "$DIR/link.pid") =~ ^[1-9][0-9]*$ ]]
  # a hard link to the target at the temporary name of fsrun's pid (the sh that execs it)
  "${runner[@]}" sh -c 'ln "$0" "$1.tmp.$$" && shift && exec "$@"' "$DIR/target" "$DIR/hard.pid" \
    "${fs[@]}" exec --pid-file "$DIR/hard.pid" "$ID" /bin/true
  [[ $(cat "$DIR/hard.pid") =~ ^[1-9][0-9]*$ ]]
  [ "$(cat "$DIR/target")" = precious ]
}

@test "exec --status-json: a link, a fifo or a hard link at the path is refused, what it names unchanged; --pid-file replaces a link (root)" {
  task_container fsrun
  check_unfit_outputs fsrun
}

@test "exec --status-json: a link, a fifo or a hard link at the path is refused, what it names unchanged; --pid-file replaces a link (ordinary user)" {
  as_test_user_or_skip
  task_container as_user "$FSRUN" --root "$AS_USER_ROOT"
  check_unfit_outputs as_user "$FSRUN" --root "$AS_USER_ROOT"
}

# fsrun's init becomes joinable (dumpable) before `start` returns: an ordinary user's exec right
# after start got "join the container's user namespace: Operation not permitted" when it did so
# only after starting the command (seen once in a full run of this file)
@test "exec: an ordinary user's exec right after start joins fsrun's init (20 rounds)" {
  as_test_user_or_skip
  local u=(as_user "$FSRUN" --root "$AS_USER_ROOT") round failed=0
  "${u[@]}" bundle --policy "$DIR/policy.json" --worktree "$WT" --out "$DIR/bundle" -- sleep infinity
  for round in $(seq 20); do
    "${u[@]}" create --bundle "$DIR/bundle" "$ID"
    "${u[@]}" start "$ID"
    "${u[@]}" exec "$ID" /bin/true || failed=$((failed + 1))
    "${u[@]}" delete --force "$ID"
  done
  echo "failed execs: $failed of 20"
  [ "$failed" -eq 0 ]
}
