#!/usr/bin/env bats
# `fsrun sandbox` as Fusion runs it (issue 11, sections 2 and 5, and the exitCode/signal fields of
# the --json result): each scenario as root and as an ordinary user made for this file, on a real
# `git worktree add` worktree the caller owns. Observed from the result, the exit status, and the
# host (the state root, processes).

load helpers

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export SBX_USER=sbxrun$$
  useradd -m "$SBX_USER"
}

teardown_file() {
  if [ -n "${SBX_USER:-}" ] && id "$SBX_USER" >/dev/null 2>&1; then
    userdel -r "$SBX_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  requires_host_command setpriv
  [ -n "${SBX_USER:-}" ] || skip "needs useradd and setpriv"
  SBX_UID=$(id -u "$SBX_USER")
  SBX_GID=$(id -g "$SBX_USER")
  SBX_HOME=$(getent passwd "$SBX_USER" | cut -d: -f6)
  TASK=task-$RANDOM$RANDOM
  BASE=$(mktemp -d /tmp/fsrun-sbxrun.XXXXXX)
  chmod 755 "$BASE"
}

teardown() {
  local pid entry
  for pid in ${BACKGROUND_PIDS:-}; do
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # containers a failed test left, deleted as the caller that made them
  if [ -n "${STATE:-}" ]; then
    for entry in "$STATE"/*"$TASK"*; do
      [ -e "$entry" ] && as_caller "$FSRUN" --root "$STATE" delete --force "${entry##*/}" >/dev/null 2>&1
    done
  fi
  [ -n "${SECRET:-}" ] && rm -f "$SECRET"
  rm -rf --one-file-system "$BASE"
  teardown_bundle
}

# as_caller CMD...: CMD as this test's caller (root, or the ordinary user)
as_caller() {
  if [ "$CALLER" = user ]; then
    setpriv --reuid="$SBX_UID" --regid="$SBX_GID" --init-groups \
      env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$SBX_HOME" "$@"
  else
    "$@"
  fi
}

# use_caller root|user: a repository and a linked worktree of the caller's own ($REPO, $WT), and
# the state root it uses ($STATE).
use_caller() {
  CALLER=$1
  DIR=$BASE/$1
  mkdir -p "$DIR"
  if [ "$CALLER" = user ]; then
    chown "$SBX_UID:$SBX_GID" "$DIR"
    as_caller unshare -U true 2>/dev/null ||
      skip "an unprivileged user cannot create a user namespace on this host"
    STATE=$DIR/state
  else
    STATE=$FSRUN_ROOT
  fi
  REPO=$DIR/repo
  WT=$DIR/worktree
  as_caller git init -q "$REPO"
  as_caller git -C "$REPO" -c user.email=s@example.invalid -c user.name=s commit -q --allow-empty -m first
  as_caller git -C "$REPO" worktree add -q -b "$TASK" "$WT"
}

# sbx ARGS...: `fsrun sandbox` as the caller, on its worktree, with this test's task id
sbx() {
  as_caller "$FSRUN" --root "$STATE" sandbox --worktree "$WT" --task-id "$TASK" "$@"
}

# two busy loops for the rest of the test (the load under which the hang was seen)
start_load() {
  local i
  for i in 1 2; do
    sh -c 'while :; do :; done' 3>&- &
    BACKGROUND_PIDS="${BACKGROUND_PIDS:-} $!"
  done
}

# Nothing of this test's sandboxes is in the state root (no `creating` state dir, no half-made
# bundle) or in the cgroup tree.
assert_state_clean() {
  local entry problems=0
  for entry in "$STATE"/*"$TASK"* "$STATE"/.sandbox-bundle.*; do
    [ -e "$entry" ] || continue
    echo "leftover: $entry: $(cat "$entry/state.json" 2>/dev/null)" >&2
    problems=1
  done
  if [ -n "$(find /sys/fs/cgroup -type d -name "*$TASK*" 2>/dev/null)" ]; then
    echo "leftover cgroup: $(find /sys/fs/cgroup -type d -name "*$TASK*")" >&2
    problems=1
  fi
  [ "$problems" = 0 ]
}

# ---- section 2: no hang -------------------------------------------------------------------------

# hang_free_runs N: N `sandbox --json -- true` runs under load, each bounded by timeout(1); stops at
# the first run that hangs or fails.
hang_free_runs() {
  local n=$1 i rc line hung=0 failed=0
  start_load
  for i in $(seq "$n"); do
    rc=0
    timeout -s KILL 60 setpriv --reuid="$SBX_UID" --regid="$SBX_GID" --init-groups \
      env -i PATH=/usr/bin:/bin HOME="$SBX_HOME" \
      "$FSRUN" --root "$STATE" sandbox --json --worktree "$WT" --task-id "$TASK" -- true \
      >"$DIR/out" 2>"$DIR/err" 3>&- || rc=$?
    if [ "$rc" = 137 ]; then
      hung=1
      break
    fi
    read -r line <"$DIR/out" || :
    if [ "$rc" != 0 ] || [[ $line != *'"exitCode":0,'* ]]; then
      cat "$DIR/out" "$DIR/err"
      failed=1
      break
    fi
  done
  echo "runs: $i, hung: $hung, failed: $failed"
  [ "$hung" = 0 ] && [ "$failed" = 0 ]
}

@test "sandbox-run: 1000 ordinary-user --json runs under load, none hangs (no thread exists when the init is cloned)" {
  use_caller user
  hang_free_runs 1000
  assert_state_clean
}

# ---- exitCode and signal: from the command's wait status ----------------------------------------

# exit_fields ARGS...: `sbx --json ARGS...`; prints "STATUS EXITCODE SIGNAL TIMEDOUT"
exit_fields() {
  local rc=0 out
  out=$(sbx --json "$@" 3>&-) || rc=$?
  echo "$rc $(jq -r '"\(.exitCode) \(.signal) \(.timedOut)"' <<<"$out")"
}

check_exit_and_signal() {
  use_caller "$1"
  # a plain exit above 128 is an exit, not a signal
  [ "$(exit_fields -- /bin/sh -c 'exit 130')" = "130 130 null false" ]
  [ "$(exit_fields -- /bin/sh -c 'exit 137')" = "137 137 null false" ]
  # a real signal: exitCode null and its name; fsrun's own status stays 128+N
  [ "$(exit_fields -- /bin/sh -c 'kill -INT $$')" = "130 null SIGINT false" ]
  [ "$(exit_fields -- /bin/sh -c 'kill -KILL $$')" = "137 null SIGKILL false" ]
  # the timeout kills the sandbox: null, SIGKILL, timedOut, and 124
  [ "$(exit_fields --timeout-ms 300 -- sleep 100)" = "124 null SIGKILL true" ]
  # without --json the status is the shell's
  run sbx -- /bin/sh -c 'kill -TERM $$'
  [ "$status" -eq 143 ]
  # the audit log says the same
  sbx --audit-log "$DIR/audit.log" -- /bin/sh -c 'kill -INT $$' 3>&- || :
  sbx --audit-log "$DIR/audit.log" -- /bin/sh -c 'exit 130' 3>&- || :
  cat "$DIR/audit.log"
  [ "$(jq -sr '[.[] | select(.event == "sandbox:run") | "\(.exitCode) \(.signal)"] | join(",")' "$DIR/audit.log")" = \
    "null SIGINT,130 null" ]
  assert_state_clean
}

@test "sandbox-run: exitCode and signal come from the wait status: exit 130 is 130, kill -INT is SIGINT, a timeout SIGKILL (root)" {
  check_exit_and_signal root
}

@test "sandbox-run: exitCode and signal come from the wait status: exit 130 is 130, kill -INT is SIGINT, a timeout SIGKILL (ordinary user)" {
  check_exit_and_signal user
}
