#!/usr/bin/env bats
# The sandbox's limits (docs/sandbox.md, "Limits"), on this host: as root in the sandbox's cgroup
# (an OOM kill reported as such, cpuLimit.maxMs a CPU budget of the whole command), and as an
# ordinary user with no cgroup of its own (a cgroup v1 host, or v2 without delegation): the
# rlimit guards hold (RLIMIT_NPROC for pidsLimit, RLIMIT_DATA per process), what is not enforced
# is said (stderr, the result's limitsNotEnforced, the audit event), and limitsMode "require"
# refuses to run (125, nothing run, nothing left). The cgroup v2 cases, a delegated subtree
# included, are in sandbox-limits-v2.bats.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export LIMITS_USER=fsrlim$$
  useradd -M -d /nonexistent "$LIMITS_USER"
}

teardown_file() {
  local tries=$((WAIT_MAX_S * 10))
  if [ -n "${LIMITS_USER:-}" ] && id "$LIMITS_USER" >/dev/null 2>&1; then
    # the user is this file's own, so all its processes are the tests' (the background sleeps run
    # under a subshell whose kill does not reach them): userdel refuses a user that still has any
    pkill -KILL -u "$LIMITS_USER" 2>/dev/null
    while pgrep -u "$LIMITS_USER" >/dev/null && [ "$tries" -gt 0 ]; do
      sleep 0.1
      tries=$((tries - 1))
    done
    userdel "$LIMITS_USER" >/dev/null 2>&1 || echo "# userdel $LIMITS_USER failed" >&3
  fi
}

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  requires_host_command python3
  TASK=limits-$$-$RANDOM$RANDOM
  DIR=$(mktemp -d /tmp/fsrun-limits.XXXXXX)
  chmod 755 "$DIR"
  WT=$DIR/worktree
  POLICY=$DIR/policy.json
  # root's audit log in a directory of root's own: fsrun refuses to append, as root, below the test
  # user's $DIR (a85d562)
  AUDIT=$BATS_TEST_TMPDIR/audit.jsonl
  USER_AUDIT=$DIR/audit.jsonl
  git init -q "$DIR/repo"
  git -C "$DIR/repo" -c user.email=l@example.invalid -c user.name=l commit -q --allow-empty -m first
  git -C "$DIR/repo" worktree add -q -b "$TASK" "$WT"
  mkdir "$DIR/home"
  cp "$FSRUN_TESTS_DIR/limits-probe.py" "$WT/probe.py"
  if [ -n "${LIMITS_USER:-}" ]; then
    chown -R "$LIMITS_USER:$LIMITS_USER" "$DIR"
    USER_ROOT=$DIR/state
  fi
}

teardown() {
  local pid
  for pid in ${BACKGROUND_PIDS:-}; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  teardown_bundle
  [ -z "${DIR:-}" ] || rm -rf "$DIR"
}

write_policy() {
  printf '%s\n' "$1" >"$POLICY"
  chmod 644 "$POLICY"
}

# sbx ARGS... -- COMMAND...: `fsrun sandbox` as root on the worktree with the policy
sbx() {
  fsrun sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" "$@"
}

# as_user CMD...: CMD as the test user (a clean environment, its own HOME and state root)
as_user() {
  setpriv --reuid="$LIMITS_USER" --regid="$LIMITS_USER" --clear-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$DIR/home" "$@"
}

# user_sbx ARGS... -- COMMAND...: `fsrun sandbox` as the test user, with its own state root
user_sbx() {
  as_user "$FSRUN" --root "$USER_ROOT" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" "$@"
}

requires_user_without_cgroup() {
  [ -n "${LIMITS_USER:-}" ] || skip "needs useradd and setpriv"
  # the test user is in root's cgroup here, which it does not own: no delegation
  if [ "$(cgroup_mode)" = unified ] && [ "$(stat -c %U "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup | sed 's|/[^/]*$||')" 2>/dev/null)" = "$LIMITS_USER" ]; then
    skip "the test user has a delegated cgroup here"
  fi
}

# Nothing of this test's sandboxes remains in either state root, and no process of the user.
assert_nothing_left() {
  local entry
  for entry in "$FSRUN_ROOT"/* ${USER_ROOT:+"$USER_ROOT"/*}; do
    [ -e "$entry" ] || continue
    [[ ${entry##*/} == *"$TASK"* ]] && { echo "leftover: $entry" >&2; return 1; }
  done
  assert_no_leftovers "$TASK"
}

# --- root: the cgroup --------------------------------------------------------------------------

@test "sandbox-limits: root: a memory hog over memoryLimitMb is OOM-killed and reported oomKilled in the result and the audit event" {
  write_policy '{"memoryLimitMb": 64}'
  run --separate-stderr sbx --json --audit-log "$AUDIT" -- python3 probe.py touch-memory 400
  echo "$output"
  [ "$status" -eq 137 ]
  [ "$(jq -r .oomKilled <<<"$output")" = true ]
  [ "$(jq -r .signal <<<"$output")" = SIGKILL ]
  [[ $(jq -r .stdout <<<"$output") != *touched* ]]
  [ "$(jq -c .limitsNotEnforced <<<"$output")" = "[]" ]
  [ "$(jq -r .limits.memoryLimitMb <<<"$output")" = 64 ]
  [ "$(jq -r 'select(.event == "sandbox:run") | .oomKilled' "$AUDIT")" = true ]
  # a command that stays under the limit is not reported as killed
  run --separate-stderr sbx --json -- python3 probe.py touch-memory 8
  [ "$(jq -r .stdout <<<"$output")" = "touched 8 MB" ]
  [ "$(jq -r .oomKilled <<<"$output")" = false ]
  assert_nothing_left
}

@test "sandbox-limits: root: cpuLimit.maxMs is one CPU budget for the whole command: children that each stay under it are killed together once they spend it" {
  # ten children of 0.4 s CPU each: per-process RLIMIT_CPU (1 s) never fires, the budget does
  write_policy '{"cpuLimit": {"maxMs": 1000}}'
  run --separate-stderr sbx --json --audit-log "$AUDIT" -- /bin/sh -c \
    'for i in 1 2 3 4 5 6 7 8 9 10; do python3 probe.py burn-cpu 400 || exit 3; done; echo all-done'
  echo "$output"
  [ "$status" -eq 124 ]
  [ "$(jq -r .cpuBudgetExceeded <<<"$output")" = true ]
  [ "$(jq -r .timedOut <<<"$output")" = false ]
  [ "$(jq -r .signal <<<"$output")" = SIGKILL ]
  [[ $(jq -r .stdout <<<"$output") != *all-done* ]]
  [ "$(jq -r .limits.cpuMaxMsScope <<<"$output")" = command ]
  [ "$(jq -r 'select(.event == "sandbox:run") | .cpuBudgetExceeded' "$AUDIT")" = true ]
  # without --json: the timeout's status, 124
  run sbx -- /bin/sh -c 'while :; do :; done'
  [ "$status" -eq 124 ]
  assert_nothing_left
}

@test "sandbox-limits: root: a command within its CPU budget ends normally, and nothing is said to be unenforced" {
  write_policy '{"cpuLimit": {"maxMs": 60000, "maxCores": 1}, "memoryLimitMb": 256, "pidsLimit": 64, "limitsMode": "require"}'
  run --separate-stderr sbx --json -- python3 probe.py burn-cpu 100
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(jq -r .exitCode <<<"$output")" = 0 ]
  [ "$(jq -r .cpuBudgetExceeded <<<"$output")" = false ]
  [ "$(jq -c .limitsNotEnforced <<<"$output")" = "[]" ]
  [ "$(jq -c '.limits | [.memoryLimitMb, .cpuMaxCores, .pidsLimit, .pidsLimitBy, .cpuMaxMsScope]' <<<"$output")" = '[256,1,64,"cgroup","command"]' ]
  [[ $stderr != *"not enforced"* ]]
}

# --- an ordinary user without a cgroup -----------------------------------------------------------

@test "sandbox-limits: user without a cgroup: pidsLimit holds (RLIMIT_NPROC, counted in the sandbox's user namespace, whatever the user runs outside)" {
  requires_user_without_cgroup
  local i
  # 30 processes of the same user outside the sandbox do not count against it
  for i in $(seq 30); do
    as_user sleep 1000 &
    BACKGROUND_PIDS+=" $!"
  done
  write_policy '{"pidsLimit": 20}'
  run --separate-stderr user_sbx --json -- python3 probe.py fork-loop 60
  echo "$output"
  [ "$status" -eq 0 ]
  # 20 tasks: fsrun's init, python, and 18 children
  [ "$(jq -r .stdout <<<"$output")" = "forked 18" ]
  [ "$(jq -c '.limits | [.pidsLimit, .pidsLimitBy]' <<<"$output")" = '[20,"RLIMIT_NPROC"]' ]
  assert_nothing_left
}

@test "sandbox-limits: user without a cgroup: memoryLimitMb bounds each process by RLIMIT_DATA: a bigger allocation fails" {
  requires_user_without_cgroup
  # fsrun's init runs under the rlimits, and an ASan build's init cannot map its shadow memory
  # under RLIMIT_DATA: that build sets none (it says so), and the plain suite tests this
  [ -z "${FSRUN_SANITIZER_LOG_DIR:-}" ] || skip "the ASan build sets no RLIMIT_DATA (its init's shadow memory would not fit)"
  write_policy '{"memoryLimitMb": 64}'
  run --separate-stderr user_sbx --json -- python3 probe.py touch-memory 200
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $(jq -r .stdout <<<"$output") == "MemoryError after "* ]]
  [ "$(jq -r .limits.memoryPerProcessMb <<<"$output")" = 64 ]
  [ "$(jq -r .oomKilled <<<"$output")" = false ]
  # under the bound it works
  run --separate-stderr user_sbx --json -- python3 probe.py touch-memory 16
  [ "$(jq -r .stdout <<<"$output")" = "touched 16 MB" ]
}

@test "sandbox-limits: user without a cgroup: what is not enforced is said on one stderr line, in limitsNotEnforced and in the audit event" {
  requires_user_without_cgroup
  write_policy '{"memoryLimitMb": 128, "pidsLimit": 50, "cpuLimit": {"maxCores": 1, "maxMs": 60000}}'
  run --separate-stderr user_sbx --json --audit-log "$USER_AUDIT" -- /bin/true
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$(grep -c 'limits not enforced' <<<"$stderr")" = 1 ]
  [[ $stderr == *"memoryLimitMb ("*"cpuLimit.maxCores ("* ]]
  [ "$(jq -c '[.limitsNotEnforced[].limit]' <<<"$output")" = '["memoryLimitMb","cpuLimit.maxCores"]' ]
  [ "$(jq -r '.limitsNotEnforced[0].reason' <<<"$output")" != "" ]
  # limits lists only what held, and says maxMs is per process
  [ "$(jq -c '.limits | [has("memoryLimitMb"), has("cpuMaxCores"), .pidsLimit, .cpuMaxMsScope]' <<<"$output")" = '[false,false,50,"process"]' ]
  [ "$(jq -c 'select(.event == "sandbox:run") | [.limitsNotEnforced[].limit]' "$USER_AUDIT")" = '["memoryLimitMb","cpuLimit.maxCores"]' ]
  # nothing unenforceable asked for: nothing said
  write_policy '{"pidsLimit": 50}'
  run --separate-stderr user_sbx --json -- /bin/true
  [ "$(jq -c .limitsNotEnforced <<<"$output")" = "[]" ]
  [[ $stderr != *"not enforced"* ]]
}

@test "sandbox-limits: user without a cgroup: limitsMode require with an unenforceable limit exits 125, runs nothing, logs the reason and leaves nothing" {
  requires_user_without_cgroup
  write_policy '{"memoryLimitMb": 128, "limitsMode": "require"}'
  run --separate-stderr user_sbx --audit-log "$USER_AUDIT" -- /bin/sh -c 'touch ran'
  echo "$stderr"
  [ "$status" -eq 125 ]
  [ ! -e "$WT/ran" ]
  [[ $stderr == *'limitsMode "require": cannot enforce memoryLimitMb'* ]]
  [ "$(jq -r 'select(.event == "sandbox:failure") | .reason' "$USER_AUDIT")" = "$(tail -n 1 <<<"$stderr" | sed 's/^fsrun: //')" ]
  [ "$(jq -r 'select(.event == "sandbox:run") | .event' "$USER_AUDIT")" = "" ]
  # --json: the same, as a result; not run natively either under fallback-native
  run --separate-stderr user_sbx --json --failure-mode fallback-native -- /bin/sh -c 'touch ran'
  echo "$output"
  [ "$status" -eq 125 ]
  [ "$(jq -r .exitCode <<<"$output")" = 125 ]
  [[ $(jq -r .error <<<"$output") == *"cannot enforce memoryLimitMb"* ]]
  [ "$(jq -r .backend <<<"$output")" = fsrun ]
  [ ! -e "$WT/ran" ]
  [ -z "$(ls -A "$USER_ROOT" 2>/dev/null | grep -v '^\.')" ]
  assert_nothing_left
}

@test "sandbox-limits: user without a cgroup: limitsMode require runs when every requested limit holds (pidsLimit by RLIMIT_NPROC, maxMs per process)" {
  requires_user_without_cgroup
  write_policy '{"pidsLimit": 30, "cpuLimit": {"maxMs": 60000}, "limitsMode": "require"}'
  run --separate-stderr user_sbx --json -- /bin/echo ran
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .stdout <<<"$output")" = ran ]
  [ "$(jq -c .limitsNotEnforced <<<"$output")" = "[]" ]
}

@test "sandbox-limits: limitsMode takes best-effort or require; another value is bad input naming the key" {
  write_policy '{"limitsMode": "strict"}'
  run --separate-stderr fsrun validate --policy "$POLICY"
  [ "$status" -ne 0 ]
  [ "$stderr" = "fsrun: $POLICY: limitsMode: unknown limits mode \"strict\"" ]
  # a bad policy: the sandbox cannot be set up
  run --separate-stderr sbx -- /bin/sh -c 'touch ran'
  [ "$status" -eq 125 ]
  [ ! -e "$WT/ran" ]
  [[ $stderr == *"limitsMode: unknown limits mode"* ]]
  write_policy '{"limitsMode": "best-effort"}'
  run fsrun validate --policy "$POLICY"
  [ "$status" -eq 0 ]
}
