#!/usr/bin/env bats
# A task container of `fsrun bundle` (the Fusion adapter's task-container mode): each `fsrun exec`
# has its own overlay over the git common dir (exec-git.bats), and the container's own mount
# namespace, the one its init and every other process of the container that is not an exec's
# live in, must not be a way around it. A command reaches that namespace's view through
# `/proc/PID/root` of any process of the container it may ptrace-read (the init, a `sleep`, the
# same uid): there the common dir is read-only, so refs, packed-refs and info/ of the repository
# cannot be written past the allowlist. Where the kernel has Landlock, each exec runs in a domain of
# its own (exec-leftovers.h) and may not even read `/proc/PID/root` of the init or `sleep`: the
# attack is refused there (it says `denied`). Tried as root and as an ordinary user, checked from
# the host.

load helpers
EXEC_GIT_USER_PREFIX=fsrxsec
load exec-git-helpers

teardown() {
  as_owner "$FSRUN" --root "$DIR/state" delete --force xsec-$UNIQ >/dev/null 2>&1 || true
  sandbox_git_teardown
}

# the task container on the task's worktree, started
start_task_container() {
  as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$WT" \
    --out "$DIR/bundle" -- sleep infinity
  as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle" xsec-$UNIQ
  as_owner "$FSRUN" --root "$DIR/state" start xsec-$UNIQ
}

# xexec SCRIPT: sh -c SCRIPT through `fsrun exec` into the task container, in the worktree
xexec() {
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" exec --cwd "$WT" xsec-$UNIQ /bin/sh -c "$1"
}

# every process of the container but the exec's own shell: write through its /proc/PID/root
ATTACK='for p in /proc/[0-9]*; do
  [ "${p#/proc/}" = $$ ] && continue
  c=$p/root'"'"'$COMMON'"'"'
  [ -d "$p/root/" ] || { echo denied $p; continue; }
  [ -d "$c/refs" ] || continue
  echo reached $p
  echo 0000000000000000000000000000000000000001 >"$c/refs/heads/main" && echo wrote ref
  echo "0000000000000000000000000000000000000001 refs/heads/evil" >"$c/packed-refs" && echo wrote packed
  echo "* filter=evil" >"$c/info/attributes" && echo wrote attributes
done; true'

route_proc_root() {
  make_repo "$1"
  start_task_container
  COMMON=$REPO/.git
  run xexec "${ATTACK//\'\$COMMON\'/$COMMON}"
  echo "$output"
  [ "$status" -eq 0 ]
  # the attack did reach the container's namespace (else this test proves nothing), or, with
  # Landlock, was refused at the init's /proc/1/root...
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -gt 0 ]; then
    [[ "$output" == *"denied /proc/1"$'\n'* ]]
  else
    [[ "$output" == *"reached /proc/"* ]]
  fi
  # ...and wrote nothing there, as the host sees
  [[ "$output" != *wrote* ]]
  [ "$(hgit -C "$REPO" rev-parse main)" = "$MAIN0" ]
  [ ! -e "$REPO/.git/packed-refs" ] || ! grep -q evil "$REPO/.git/packed-refs" || false
  [ ! -e "$REPO/.git/info/attributes" ]
  # the task's own commit through an exec still reaches the repository
  xexec 'echo two >README && git commit -qam second'
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = second ]
}

@test "security-exec-git: /proc/PID/root of the task container's processes does not write the repository (root)" {
  route_proc_root root
}

@test "security-exec-git: /proc/PID/root of the task container's processes does not write the repository (ordinary user)" {
  route_proc_root user
}
