# Shared by exec-git.bats, exec-git-tamper.bats and exec-git-walk.bats (after exec-git-helpers.bash):
# the task container of each worktree, made on first use, and sbx as an `fsrun exec --status-json`
# into it, so that sandbox-git's routes run through an exec; the containers go at teardown.
teardown() {
  local id
  if [ -n "${SWAPPER:-}" ]; then
    kill "$SWAPPER" 2>/dev/null
    wait "$SWAPPER" 2>/dev/null
  fi
  for id in $(cat "$DIR/containers" 2>/dev/null); do
    as_owner "$FSRUN" --root "$DIR/state" delete --force "$id" >/dev/null 2>&1 || true
  done
  sandbox_git_teardown
}

# task_container WORKTREE: the id of the task container on WORKTREE (made on first use)
task_container() {
  local id
  id=xgit-$(printf '%s' "$1" | sha256sum | cut -c1-12)
  if ! grep -qx "$id" "$DIR/containers" 2>/dev/null; then
    as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$1" \
      --out "$DIR/bundle-$id" -- sleep infinity >&2
    as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle-$id" "$id" >&2
    echo "$id" >>"$DIR/containers"
    as_owner "$FSRUN" --root "$DIR/state" start "$id" >&2
  fi
  echo "$id"
}

# sbx [WORKTREE] -- SCRIPT: as sandbox-git.bats's, but `fsrun exec --status-json` into the task
# container; the status's tamper and discarded become the sandbox:tamper event of $DIR/audit.jsonl
# (as the adapter's audit carries them)
sbx() {
  local wt=$WT id
  if [ "$1" != -- ]; then
    wt=$1
    shift
  fi
  shift
  id=$(task_container "$wt")
  status=0
  output=$(as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/status.json" "$id" \
    /bin/sh -c "$1" 2>"$DIR/stderr") || status=$?
  cat "$DIR/stderr" "$DIR/status.json"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .exitCode "$DIR/status.json")" -eq 0 ]
  jq -c '{event: "sandbox:tamper", paths: .tamper, discarded: .discarded}' "$DIR/status.json" \
    >>"$DIR/audit.jsonl"
  # nothing of the exec is left in the state root (nor in /dev/shm: run_dirs)
  [ -z "$(run_dirs)" ]
}

# host_args: the last exec's hostGitArgs (--status-json), one word a line; the status must have the
# list, and fsrun's stderr line (said before the git sync) the same words when there are any
host_args() {
  local said
  jq -e '.hostGitArgs | type == "array"' "$DIR/status.json" >/dev/null
  said=$(sed -n 's/^fsrun: warning: exec: .*; hostGitArgs: //p' "$DIR/stderr")
  [ "$(jq -c .hostGitArgs "$DIR/status.json")" = "${said:-[]}" ]
  jq -r '.hostGitArgs[]' "$DIR/status.json"
}

# route_sync_killed's fsrun is an exec into the task container
killed_fsrun() {
  local id
  id=$(task_container "$WT")
  KILLED_FSRUN=("$FSRUN" --root "$DIR/state" exec --status-json "$DIR/status.json" "$id")
}

# a SIGKILLed exec's watchdog unmounts and removes its per-run dir (a tmpfs of its own as root; an
# event: the bound only ends a failure), and the next exec's tamper walk names again what the
# killed one found (its cutoff was not moved past it, and the hook's digest it compares with is the
# killed exec's "before": the first exec keeps it before the command)
after_sync_killed() {
  wait_no_run_dirs
  [ -z "$(run_dirs)" ]
  ! grep -F -- "$DIR/state/.sandbox-git." /proc/self/mountinfo || false
  sbx -- true
  [ "$(tamper)" = '["config:core.hooksPath=.husky","nested/.git"]' ]
}

# host_git_disarmed_by FILE: the host's git status under FILE's hostGitArgs runs nothing (no
# $MARKER), a plain one runs the fsmonitor (the control)
host_git_disarmed_by() {
  local args
  mapfile -t args < <(jq -r '.hostGitArgs[]' "$1")
  hgit -C "$REPO" "${args[@]}" status --short
  [ ! -e "$MARKER" ]
  hgit -C "$REPO" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}
