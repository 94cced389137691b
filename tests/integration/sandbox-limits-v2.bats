#!/usr/bin/env bats
# bats file_tags=cgroupv2
# The sandbox's limits on a cgroup v2 host (run in the cgroup v2 VM: tests/vm/run.sh), for
# as an ordinary user with a subtree delegated the way systemd's user@.service delegates it (the
# directory and its cgroup.procs, cgroup.subtree_control and cgroup.threads owned by the user, the
# controllers enabled in the parent, the user's shell in a leaf below it): the sandbox's cgroup is
# made beside that leaf and memory, pids and cpu hold as for root. Without delegation the user is
# told what is not enforced (sandbox-limits.bats has the rest of that case).

load helpers
load cgroup-delegation
bats_require_minimum_version 1.5.0

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export LIMITS_USER=fsrlimv$$
  useradd -M -d /nonexistent "$LIMITS_USER"
}

teardown_file() {
  if [ -n "${LIMITS_USER:-}" ] && id "$LIMITS_USER" >/dev/null 2>&1; then
    userdel "$LIMITS_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_cgroup_v2
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  requires_host_command python3
  [ -n "${LIMITS_USER:-}" ] || skip "needs useradd and setpriv"
  TASK=limitsv2-$$-$RANDOM$RANDOM
  DIR=$(mktemp -d /tmp/fsrun-limits.XXXXXX)
  chmod 755 "$DIR"
  WT=$DIR/worktree
  POLICY=$DIR/policy.json
  AUDIT=$DIR/audit.jsonl
  USER_ROOT=$DIR/state
  mkdir "$DIR/home"
  git init -q "$DIR/repo"
  git -C "$DIR/repo" -c user.email=l@example.invalid -c user.name=l commit -q --allow-empty -m first
  git -C "$DIR/repo" worktree add -q -b "$TASK" "$WT"
  cp "$FSRUN_TESTS_DIR/limits-probe.py" "$WT/probe.py"
  chown -R "$LIMITS_USER:$LIMITS_USER" "$DIR"
}

teardown() {
  local pid
  for pid in ${BACKGROUND_PIDS:-}; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  teardown_bundle
  remove_delegation
  [ -z "${DIR:-}" ] || rm -rf "$DIR"
}

write_policy() {
  printf '%s\n' "$1" >"$POLICY"
  chmod 644 "$POLICY"
}

as_user() {
  setpriv --reuid="$LIMITS_USER" --regid="$LIMITS_USER" --clear-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$DIR/home" "$@"
}

# deleg_sbx ARGS... -- COMMAND...: `fsrun sandbox` as the user, started in the leaf of its subtree
deleg_sbx() {
  in_delegated_leaf setpriv --reuid="$LIMITS_USER" --regid="$LIMITS_USER" --clear-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$DIR/home" \
    "$FSRUN" --root "$USER_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" "$@"
}

# user_sbx: the same user in root's cgroup, which it does not own: no delegation
user_sbx() {
  as_user "$FSRUN" --root "$USER_ROOT" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" "$@"
}

sbx() {
  fsrun sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" "$@"
}

# The sandbox's cgroup directory below PARENT (made for this test's task), one level down or two.
sandbox_cgroup_under() {
  find "$1" -mindepth 1 -maxdepth 2 -type d -name "sandbox-${TASK}__*" | head -n 1
}

# A sandbox that waits for $WT/stop: its cgroup files are read from the host meanwhile.
start_waiting_sandbox() {
  rm -f "$WT/started" "$WT/stop"
  "$@" -- /bin/sh -c 'touch started; while [ ! -e stop ]; do sleep 0.1; done' >"$DIR/out.json" 2>"$DIR/err" &
  BACKGROUND_PIDS+=" $!"
  WAITING_PID=$!
  wait_for_file "$WT/started"
}

stop_waiting_sandbox() {
  touch "$WT/stop"
  wait "$WAITING_PID"
}

# --- a delegated subtree ------------------------------------------------------------------------

@test "sandbox-limits-v2: delegated user: the sandbox's cgroup is made in the subtree, with memory.max, pids.max and cpu.max from the policy" {
  delegate_subtree "$LIMITS_USER" "$TASK"
  write_policy '{"memoryLimitMb": 96, "pidsLimit": 40, "cpuLimit": {"maxCores": 0.5}, "limitsMode": "require"}'
  start_waiting_sandbox deleg_sbx --json
  local cg
  cg=$(sandbox_cgroup_under "$DELEG")
  echo "cgroup: $cg"
  [ -n "$cg" ]
  [ "$(cat "$cg/memory.max")" = $((96 * 1024 * 1024)) ]
  [ "$(cat "$cg/pids.max")" = 40 ]
  [ "$(cat "$cg/cpu.max")" = "50000 100000" ]
  stop_waiting_sandbox
  cat "$DIR/out.json"
  [ "$(jq -c .limitsNotEnforced "$DIR/out.json")" = "[]" ]
  [ "$(jq -c '.limits | [.memoryLimitMb, .cpuMaxCores, .pidsLimit, .pidsLimitBy]' "$DIR/out.json")" = '[96,0.5,40,"cgroup"]' ]
  [ -z "$(sandbox_cgroup_under "$DELEG")" ]
}

@test "sandbox-limits-v2: delegated user: a memory hog under memoryLimitMb is OOM-killed and reported oomKilled" {
  delegate_subtree "$LIMITS_USER" "$TASK"
  write_policy '{"memoryLimitMb": 64}'
  run --separate-stderr deleg_sbx --json --audit-log "$AUDIT" -- python3 probe.py touch-memory 400
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 137 ]
  [ "$(jq -r .oomKilled <<<"$output")" = true ]
  [ "$(jq -r .signal <<<"$output")" = SIGKILL ]
  [ "$(jq -c .limitsNotEnforced <<<"$output")" = "[]" ]
  [ "$(jq -r 'select(.event == "sandbox:run") | .oomKilled' "$AUDIT")" = true ]
}

@test "sandbox-limits-v2: delegated user: a fork loop under pidsLimit stops at the limit (the cgroup's pids.max)" {
  delegate_subtree "$LIMITS_USER" "$TASK"
  write_policy '{"pidsLimit": 20}'
  run --separate-stderr deleg_sbx --json -- python3 probe.py fork-loop 60
  echo "$output"
  [ "$status" -eq 0 ]
  # 20 tasks: fsrun's init, python, and 18 children
  [ "$(jq -r .stdout <<<"$output")" = "forked 18" ]
  [ "$(jq -r .limits.pidsLimitBy <<<"$output")" = cgroup ]
}

@test "sandbox-limits-v2: delegated user: cpuLimit.maxMs is a budget of the whole command (cpu.stat)" {
  delegate_subtree "$LIMITS_USER" "$TASK"
  write_policy '{"cpuLimit": {"maxMs": 1000}}'
  run --separate-stderr deleg_sbx --json -- /bin/sh -c \
    'for i in 1 2 3 4 5 6 7 8 9 10; do python3 probe.py burn-cpu 400 || exit 3; done; echo all-done'
  echo "$output"
  [ "$status" -eq 124 ]
  [ "$(jq -r .cpuBudgetExceeded <<<"$output")" = true ]
  [ "$(jq -r .limits.cpuMaxMsScope <<<"$output")" = command ]
  [[ $(jq -r .stdout <<<"$output") != *all-done* ]]
}

# --- cgroup v2 without delegation ---------------------------------------------------------------

@test "sandbox-limits-v2: user without delegation: memory and cpu are said not enforced, require refuses with 125" {
  write_policy '{"memoryLimitMb": 64, "pidsLimit": 20, "cpuLimit": {"maxCores": 1}}'
  run --separate-stderr user_sbx --json -- python3 probe.py fork-loop 60
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -c '[.limitsNotEnforced[].limit]' <<<"$output")" = '["memoryLimitMb","cpuLimit.maxCores"]' ]
  [[ $(jq -r '.limitsNotEnforced[0].reason' <<<"$output") == *"no delegated cgroup v2 subtree"* ]]
  [ "$(jq -r .stdout <<<"$output")" = "forked 18" ]
  [ "$(grep -c 'limits not enforced' <<<"$stderr")" = 1 ]
  write_policy '{"memoryLimitMb": 64, "limitsMode": "require"}'
  run --separate-stderr user_sbx -- /bin/sh -c 'touch ran'
  [ "$status" -eq 125 ]
  [ ! -e "$WT/ran" ]
}

# Root on cgroup v2 (cpu.max, the OOM kill from memory.events, the CPU budget from cpu.stat) has no
# test here yet: the one written waited forever in the VM for its first sandbox to start, while the
# same sandbox started by hand in the VM runs and reports those limits. Left for the next session.
