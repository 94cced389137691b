# Shared by sandbox-git.bats, sandbox-git-tamper.bats and sandbox-git-walk.bats (and, through
# exec-git-helpers.bash, by the exec-git files): the ordinary user made for each file, the
# repository in Fusion's `.worktrees/<task>` layout, `fsrun sandbox` as root or as that user (sbx),
# the host's git (hgit) and the tamper list of the runs.
setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=fsrgit$$
  useradd -M -d /nonexistent -s /bin/sh "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  DIR=$(mktemp -d /tmp/fsrun-sbxgit.XXXXXX)
  chmod 755 "$DIR"
  REPO=$DIR/repo
  WT=$REPO/.worktrees/task
  OTHER=$REPO/.worktrees/other
  MARKER=$DIR/marker
  echo '{}' >"$DIR/policy.json"
  # the script a route plants: run by the host's git, it leaves the marker
  printf '#!/bin/sh\necho ran >>%s\n' "$MARKER" >"$DIR/evil.sh"
  chmod 755 "$DIR/evil.sh"
}

teardown() {
  [ -n "${DIR:-}" ] || return 0
  # the per-run dirs a failed test left in /dev/shm (an ordinary user's: run_dirs)
  [ -z "${OWNER:-}" ] || run_dirs | grep '^/dev/shm/' | xargs -r rm -rf --one-file-system
  # a failed test must not leave the repository mounted anywhere
  if grep -F -- "$DIR" /proc/self/mountinfo >&2; then
    echo "leftover mount of $DIR" >&2
    rm -rf --one-file-system "$DIR"
    return 1
  fi
  rm -rf --one-file-system "$DIR"
}

# as_owner CMD...: runs CMD as the owner of the repository of this test (root, or the test user)
as_owner() {
  if [ "$OWNER" = root ]; then
    "$@"
  else
    setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups env HOME="$DIR/home" "$@"
  fi
}

# run_dirs: the per-run git dirs of this test's state root, wherever they are (git_run_dirs)
run_dirs() {
  git_run_dirs "$DIR/state" "$([ "$OWNER" = user ] && echo "$TEST_UID" || echo 0)"
}

# wait_no_run_dirs: until run_dirs lists nothing (a killed fsrun's watchdog removing them: an
# event, the 60 s bound only ends the wait; the caller asserts what is left)
wait_no_run_dirs() {
  local tries=$((WAIT_MAX_S * 10))
  while [ -n "$(run_dirs)" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
}

# hgit ARGS...: the host's git, as the owner, with nothing of the caller's own config
hgit() {
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git "$@"
}

# make_owner OWNER: $DIR, its home and state root, owned by OWNER (root | user)
make_owner() {
  OWNER=$1
  if [ "$OWNER" = user ]; then
    [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
    TEST_UID=$(id -u "$TEST_USER")
    TEST_GID=$(id -g "$TEST_USER")
    setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups unshare -U true 2>/dev/null ||
      skip "an unprivileged user cannot create a user namespace on this host"
    chown "$TEST_UID:$TEST_GID" "$DIR"
  fi
  as_owner mkdir "$DIR/home" "$DIR/state"
}

# make_repo OWNER: the repository with two tasks' worktrees, owned by OWNER (root | user)
make_repo() {
  make_owner "$1"
  hgit init -q -b main "$REPO"
  hgit -C "$REPO" config user.email sandbox@example.invalid
  hgit -C "$REPO" config user.name sandbox
  as_owner sh -c 'echo one >"$1/README"' sh "$REPO"
  hgit -C "$REPO" add README
  hgit -C "$REPO" commit -qm first
  hgit -C "$REPO" worktree add -q -b task "$WT"
  hgit -C "$REPO" worktree add -q -b other "$OTHER"
  MAIN0=$(hgit -C "$REPO" rev-parse main)
}

# sbx [WORKTREE] -- SCRIPT: the script run by sh in `fsrun sandbox` on the worktree (the task's by
# default), as the owner; fsrun's stderr in $DIR/stderr. As root with --json ($output is the
# result); as the ordinary user without it, the command's stdout in $output: --json runs of an
# ordinary user can hang in set-up (issue 11 section 2, another change), and a hang must fail this
# file, not stall it (the timeout).
sbx() {
  local wt=$WT json=--json
  if [ "$1" != -- ]; then
    wt=$1
    shift
  fi
  shift
  [ "$OWNER" = root ] || json=
  status=0
  output=$(as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="${SBX_GIT_GLOBAL:-/dev/null}" \
    timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" sandbox $json --audit-log "$DIR/audit.jsonl" \
    --policy "$DIR/policy.json" --worktree "$wt" -- /bin/sh -c "$1" 2>"$DIR/stderr") || status=$?
  cat "$DIR/stderr"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$json" ] || status=$(jq -r .exitCode <<<"$output")
  [ "$status" -eq 0 ]
  result=$output # root: the --json result
  [ -z "$json" ] || output=$(jq -r .stdout <<<"$output")
  # nothing of the run is left in the state root but the shared bundle (and, an ordinary user's
  # on a disk, the state dirs it keeps for the next runs: status-kept.h)
  [ "$(ls -A "$DIR/state" | grep -v '^\.sandbox-kept-[0-3]$')" = .sandbox-bundle ]
}

# tamper: the paths of the runs' sandbox:tamper audit events, sorted, once each, as a JSON array (a
# task container's next exec may name again what changed in the tick before the last walk began)
tamper() {
  jq -cs '[.[] | select(.event == "sandbox:tamper") | .paths[]] | sort | unique' "$DIR/audit.jsonl"
}

# tamper's config: entries alone. An exec into a task container (exec-git.bats runs these routes)
# on the main checkout right after make_repo may also report the linked worktrees' .git files the
# host has just made: its walk reports what changed in the last clock tick before it began
# (docs/sandbox.md), a false alarm these tests do not pin. A one-shot run's cutoff is exact
# (host_repo_before_run).
config_tamper() {
  tamper | jq -c 'map(select(startswith("config:")))'
}

# the host's plain `git status` in DIR ran no planted script
assert_status_runs_nothing() {
  hgit -C "$1" status >/dev/null 2>&1 || true
  [ ! -e "$MARKER" ]
}

# a fake common dir made inside the worktree: a copy of the real one whose config runs the script
PLANT_GITDIR='cp -r ../../.git evil && git config -f evil/config core.fsmonitor '

# the documented host-side invocation (docs/sandbox.md, "Git on the host after a run")
safe_git() {
  hgit -c core.fsmonitor=false -c core.hooksPath=/dev/null -c submodule.recurse=false \
    -c diff.ignoreSubmodules=all -c status.submoduleSummary=false "$@"
}

# host_args: the hostGitArgs fsrun's last run said on stderr (root and user alike), one word a line;
# nothing when it said none. As root its --json result must say the same; so must its audit event.
host_args() {
  local said
  said=$(sed -n 's/^fsrun: warning: sandbox: .*; hostGitArgs: //p' "$DIR/stderr")
  [ -z "$said" ] || jq -r '.[]' <<<"$said"
  [ -z "$said" ] || [ "$(jq -cs 'map(select(.event == "sandbox:tamper")) | last | .hostGitArgs' \
    "$DIR/audit.jsonl")" = "$said" ]
  if [ "$OWNER" = root ]; then
    [ "$(jq -c .hostGitArgs <<<"$result")" = "${said:-[]}" ]
  fi
}

# discarded: the run's left-out git paths of the sandbox:tamper audit events, as a JSON array
discarded() {
  jq -cs '[.[] | select(.event == "sandbox:tamper") | .discarded[]?] | sort | unique' \
    "$DIR/audit.jsonl"
}

# filter_x_named_and_disarmed ENTRY: the runs named ENTRY alone; hostGitArgs disarm filter x, so the
# host's `add -A` with them runs nothing of a.txt's filter, and a plain one runs it (the control)
filter_x_named_and_disarmed() {
  [ "$(config_tamper)" = "$(jq -cn --arg e "$1" '[$e]')" ]
  mapfile -t args < <(host_args)
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  hgit -C "$WT" "${args[@]}" -c core.fsmonitor=false -c core.hooksPath=/dev/null add -A
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo three >>"$1/a.txt"' sh "$WT"
  hgit -C "$WT" add -A
  # a.txt's filter (a racily clean file git hashes again may add a line)
  grep -qx ran "$MARKER"
}
