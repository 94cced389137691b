#!/usr/bin/env bats
# fsrun where clone3 answers ENOSYS (issue 14 section 3: Docker 20.10's and older podman's default
# seccomp profiles, valgrind): tests/noclone3 loads such a filter and execs fsrun, which clones with
# clone(2) instead, and joins the cgroup through cgroup.procs before the process runs (on cgroup v2
# there is no CLONE_INTO_CGROUP without clone3). create/start/exec/kill/delete, run and sandbox, as
# root and as an ordinary user made for this file; observed from the host (cgroup.procs, limits,
# state, leftovers) and from inside (exit status, time namespace). The cgroup v2 VM runs the three
# tests whose cgroup side differs there (no CLONE_INTO_CGROUP); the others are the same on any host.

load helpers

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export NEST_USER=nest$$
  useradd -m "$NEST_USER"
}

teardown_file() {
  if [ -n "${NEST_USER:-}" ] && id "$NEST_USER" >/dev/null 2>&1; then
    pkill -KILL -u "$NEST_USER" 2>/dev/null
    userdel -r "$NEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_host_command jq
  NOCLONE3=${FSRUN%/*}/tests/noclone3
  [ -x "$NOCLONE3" ] || skip "tests/noclone3 is not built next to $FSRUN"
  setup_bundle
  CONTAINER_ID=nest-$$-$RANDOM$RANDOM
}

teardown() {
  # a hook the binary before left running past its timeout
  if [ -n "${HOOK_NAME:-}" ]; then
    pkill -KILL -xf "$HOOK_NAME 600" || true
  fi
  # mntns_holder's process
  if [ -n "${HOLDER:-}" ]; then
    kill -KILL "$HOLDER" || true
  fi
  # the hiding tmpfs stacked on mount_api_bundle's (the EBUSY test)
  if [ -n "${MFB_HOST_STACKED:-}" ]; then
    umount "$MFB_HOST_STACKED" || true
  fi
  # mount_api_bundle's tmpfs on the host
  if [ -n "${MFB_HOST_MOUNT:-}" ]; then
    umount "$MFB_HOST_MOUNT" || true
  fi
  if [ -n "${UDIR:-}" ]; then
    local f
    for f in "$UDIR"/run/fsrun/*/; do
      [ -d "$f" ] && as_user "$FSRUN" delete --force "$(basename "$f")" >/dev/null 2>&1
    done
    rm -rf --one-file-system "$UDIR"
  fi
  teardown_bundle
}

# nested ARG...: `fsrun --root ROOT ARG...` under the filter
nested() {
  "$NOCLONE3" "$FSRUN" --root "$FSRUN_ROOT" "$@"
}

# what valgrind 3.19 does not know of what exec, kill, start and delete call (pidfd-compat.h)
NO_PIDFD=clone3,pidfd_open,pidfd_send_signal

# no_pidfd ARG...: `fsrun --root ROOT ARG...` where those calls answer ENOSYS
no_pidfd() {
  "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" --root "$FSRUN_ROOT" "$@"
}

# same_namespaces INIT OUTPUT: OUTPUT (readlink of /proc/self/ns/{mnt,pid,net,ipc,uts} in the
# container, one a line) names INIT's namespaces
same_namespaces() {
  local want="" ns
  for ns in mnt pid net ipc uts; do
    want+=$(readlink "/proc/$1/ns/$ns")$'\n'
  done
  [ "$2" = "${want%$'\n'}" ] || { printf 'want:\n%s\ngot:\n%s\n' "$want" "$2"; false; }
}

# as_user CMD...: CMD as the test user, with a runtime dir it owns
as_user() {
  setpriv --reuid="$NEST_UID" --regid="$NEST_GID" --init-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="/home/$NEST_USER" \
    XDG_RUNTIME_DIR="$UDIR/run" "$@"
}

# user_setup: the test user's bundle (spec --rootless) and worktree in $UDIR
user_setup() {
  requires_host_command setpriv
  [ -n "${NEST_USER:-}" ] || skip "needs useradd and setpriv"
  NEST_UID=$(id -u "$NEST_USER")
  NEST_GID=$(id -g "$NEST_USER")
  UDIR=$(mktemp -d /tmp/fsrun-nest.XXXXXX)
  chmod 755 "$UDIR"
  mkdir -m 700 "$UDIR/run"
  mkdir "$UDIR/bundle"
  cp -a "$ROOTFS" "$UDIR/bundle/rootfs"
  chown -R "$NEST_UID:$NEST_GID" "$UDIR"
  as_user sh -c 'cd "$1" && "$2" spec --rootless' sh "$UDIR/bundle" "$FSRUN"
}

# user_processes_gone: the test user has no process left (a killed container's zombies are given
# time to be reaped by whoever inherited them)
user_processes_gone() {
  no_process_left -u "$NEST_USER"
}

# user_run_sleep: the test user's `sleep` container, run detached with the plain binary (INIT)
user_run_sleep() {
  user_setup
  cd "$UDIR/bundle"
  jq '.process.terminal = false | .process.args = ["sleep", "1000"]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  as_user "$FSRUN" run -d "$CONTAINER_ID" </dev/null
  INIT=$(as_user "$FSRUN" state "$CONTAINER_ID" | jq -r .pid)
}

# run_init_moved_out: a `sleep` container started with the plain binary, its init (INIT) moved
# out of the container's cgroups into the root ones
run_init_moved_out() {
  local procs
  update_config '.process.args = ["sleep", "1000"]'
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  INIT=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  for procs in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do
    [ -e "$procs" ] && echo "$INIT" >"$procs"
  done
  ! grep -q "$CONTAINER_ID" "/proc/$INIT/cgroup" || false
}

# in_cgroup PID: PID is in the container's cgroup (pids controller on v1/hybrid, the v2 tree)
in_cgroup() {
  grep -qx "$1" "$(container_cgroup_file pids cgroup.procs)"
}

@test "noclone3: the filter answers clone3 with ENOSYS (the control the other tests rely on)" {
  run "$NOCLONE3" --probe
  [ "$status" = 0 ]
  [ "$output" = "clone3 ENOSYS" ]
  run "$NOCLONE3" --enosys "$NO_PIDFD" --probe
  [ "$status" = 0 ]
  [ "$output" = "$(printf 'clone3 ENOSYS\npidfd_open ENOSYS\npidfd_send_signal ENOSYS')" ]
}

# bats test_tags=cgroupv2
@test "noclone3: create, start, exec, kill, delete as root: the init and the exec'd process are in the cgroup" {
  update_config '.process.args = ["sleep", "1000"] | .linux.resources.pids = {"limit": 40}'
  # not under `run`: the init keeps its stdout, and `run` would wait for its end
  nested create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  init=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
  in_cgroup "$init"
  [ "$(cat "$(container_cgroup_file pids pids.max)")" = 40 ]
  nested start "$CONTAINER_ID" </dev/null
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  run nested exec "$CONTAINER_ID" sh -c 'exit 7'
  [ "$status" = 7 ]
  nested exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CONTAINER_ID" sleep 1000 </dev/null
  in_cgroup "$(cat "$BATS_TEST_TMPDIR/exec.pid")"
  run nested kill "$CONTAINER_ID" KILL
  [ "$status" = 0 ]
  wait_for_status "$CONTAINER_ID" stopped
  run nested delete "$CONTAINER_ID"
  [ "$status" = 0 ]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "noclone3: run as root: the pids limit is enforced on the process, a new time namespace" {
  update_config '.linux.resources.pids = {"limit": 6} | .linux.namespaces += [{"type": "time"}]'
  # busybox sh stops with 2 at the first fork the pids limit refuses
  set_process_args sh -c 'readlink /proc/self/ns/time; echo forking
    i=0; while [ $i -lt 12 ]; do sleep 1000 & i=$((i + 1)); done; exit 3'
  run nested run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 2 ] || { echo "$output"; false; }
  [ "${lines[0]}" != "$(readlink /proc/self/ns/time)" ]
  [[ ${lines[0]} == time:* ]]
  [ "${lines[1]}" = forking ]
  [[ $output == *"can't fork"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: a container joining another's pid namespace (its init cloned as a sibling) as root" {
  update_config '.process.args = ["sleep", "1000"]'
  nested run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  first=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  BUNDLE2=$BATS_TEST_TMPDIR/second
  setup_bundle "$BUNDLE2"
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$first/ns/pid"
  set_process_args sh -c 'tr "\0" " " </proc/1/cmdline'
  run nested run --bundle "$BUNDLE2" "$CONTAINER_ID-2"
  [ "$status" = 0 ] || { echo "$output"; false; }
  # pid 1 there is the first container's process
  [ "$output" = "sleep 1000 " ]
  assert_no_leftovers "$CONTAINER_ID-2" "$BUNDLE2"
  BUNDLE=$BATS_TEST_TMPDIR/bundle
}

# bats test_tags=cgroupv2
@test "noclone3: cgroup v2: exec into a container whose cgroup is no leaf joins the init's sub-cgroup" {
  requires_cgroup_v2
  update_config '.process.args = ["sleep", "1000"]'
  nested run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  init=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  # as systemd in a container does: the init in a sub-cgroup, a domain controller enabled below
  CG=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$init/cgroup")
  mkdir "$CG/init.scope"
  echo "$init" >"$CG/init.scope/cgroup.procs"
  grep -qw memory "$CG/cgroup.controllers" || skip "the memory controller is not available in $CG"
  echo +memory >"$CG/cgroup.subtree_control"
  nested exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CONTAINER_ID" sleep 1000 </dev/null
  grep -qx "$(cat "$BATS_TEST_TMPDIR/exec.pid")" "$CG/init.scope/cgroup.procs"
  nested delete --force "$CONTAINER_ID"
  [ ! -d "$CG" ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: sandbox as root runs in the sandbox (not natively), in its cgroup, and leaves nothing" {
  requires_host_command git
  wt=$BATS_TEST_TMPDIR/wt
  git init -q "$wt"
  echo '{"allowNetwork": false, "pidsLimit": 64}' >"$BATS_TEST_TMPDIR/policy.json"
  run nested sandbox --json --policy "$BATS_TEST_TMPDIR/policy.json" --worktree "$wt" -- \
    sh -c 'grep -o "sandbox-[0-9a-f]*" /proc/self/cgroup | head -n 1'
  [ "$status" = 0 ] || { echo "$output"; false; }
  [ "$(jq -r .backend <<<"$output")" = fsrun ]
  [ "$(jq -r .exitCode <<<"$output")" = 0 ]
  # the command ran in the sandbox's own cgroup, which is gone now (other tests' sandboxes may run)
  cg=$(jq -r .stdout <<<"$output")
  [[ $cg == sandbox-?* ]]
  [ -z "$(find /sys/fs/cgroup -maxdepth 3 -type d -name "$cg" 2>/dev/null)" ]
  [ -z "$(ls "$FSRUN_ROOT" | grep -v '^\.sandbox-bundle$')" ]
}

@test "noclone3: an ordinary user's run, create/exec/kill/delete and sandbox" {
  user_setup
  cd "$UDIR/bundle"
  jq '.process.terminal = false | .process.args = ["sh", "-c", "id -u; exit 4"]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  run as_user "$NOCLONE3" "$FSRUN" run "$CONTAINER_ID"
  [ "$status" = 4 ] || { echo "$output"; false; }
  [ "${lines[0]}" = 0 ]
  jq '.process.args = ["sleep", "1000"]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  as_user "$NOCLONE3" "$FSRUN" run -d "$CONTAINER_ID" </dev/null
  run as_user "$NOCLONE3" "$FSRUN" exec "$CONTAINER_ID" sh -c 'exit 5'
  [ "$status" = 5 ]
  run as_user "$NOCLONE3" "$FSRUN" kill "$CONTAINER_ID" KILL
  [ "$status" = 0 ]
  run as_user "$NOCLONE3" "$FSRUN" delete --force "$CONTAINER_ID"
  [ "$status" = 0 ]
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone

  requires_host_command git
  as_user git init -q "$UDIR/wt"
  echo '{"allowNetwork": false}' >"$UDIR/policy.json"
  run as_user "$NOCLONE3" "$FSRUN" sandbox --json --policy "$UDIR/policy.json" --worktree "$UDIR/wt" -- \
    sh -c 'grep Seccomp: /proc/self/status'
  [ "$status" = 0 ] || { echo "$output"; false; }
  [ "$(jq -r .backend <<<"$output")" = fsrun ]
  [ "$(jq -r .stdout <<<"$output")" = "$(printf 'Seccomp:\t2')" ]
  user_processes_gone
}

# seccomp_enosys_sandbox WT POLICY TASK [ARG...]: the sandbox (its options ARG...) where seccomp(2)
# answers ENOSYS, as CMD... from the environment's RUNNER (empty: as root); its command would make
# WT/ran. stderr goes to $BATS_TEST_TMPDIR/err.
seccomp_enosys_sandbox() {
  local wt=$1 policy=$2 task=$3
  shift 3
  ${RUNNER:-} "$NOCLONE3" --enosys seccomp "$FSRUN" ${STATE_ROOT:+--root "$STATE_ROOT"} sandbox \
    --policy "$policy" --worktree "$wt" --task-id "$task" "$@" -- touch "$wt/ran" \
    2>"$BATS_TEST_TMPDIR/err"
}

# seccomp_failure_seen WT TASK: the last seccomp_enosys_sandbox was a set-up failure: 125, one
# line on stderr naming seccomp, the command never ran, no cgroup or process of it is left
# the probe of a sandbox without the worktree fails the same way: the host cannot sandbox at all
NO_SANDBOX_HERE="no sandbox can be set up on this host either (.*load the seccomp filter: Function not implemented)"

seccomp_failure_seen() {
  cat "$BATS_TEST_TMPDIR/err"
  [ "$status" = 125 ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/err")" = 1 ]
  grep -q "^fsrun: .*load the seccomp filter: Function not implemented$" "$BATS_TEST_TMPDIR/err"
  [ ! -e "$1/ran" ]
  [ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$2*" 2>/dev/null)" ]
  [ -z "$(pgrep -f "$1/ran")" ]
}

@test "noclone3: where seccomp(2) answers ENOSYS, the sandbox is a set-up failure (125, seccomp named), not the command's exit; root and an ordinary user" {
  requires_host_command git
  local wt=$BATS_TEST_TMPDIR/wt task=seccomp$$
  git init -q "$wt"
  echo '{"allowNetwork": false}' >"$BATS_TEST_TMPDIR/policy.json"
  STATE_ROOT=$FSRUN_ROOT
  run seccomp_enosys_sandbox "$wt" "$BATS_TEST_TMPDIR/policy.json" "$task"
  seccomp_failure_seen "$wt" "$task"
  [ -z "$(ls "$FSRUN_ROOT" | grep -v '^\.sandbox-bundle$')" ]
  # --json: exitCode 125 and the reason in `error`, not an exit of the command's
  run seccomp_enosys_sandbox "$wt" "$BATS_TEST_TMPDIR/policy.json" "$task" --json
  seccomp_failure_seen "$wt" "$task"
  echo "$output"
  [ "$(jq -r .exitCode <<<"$output")" = 125 ]
  [ "$(jq -r .backend <<<"$output")" = fsrun ]
  [[ $(jq -r .error <<<"$output") == *"load the seccomp filter: Function not implemented" ]]
  [ "$(jq -r .stderr <<<"$output")" = "" ]
  # a set-up failure is what fallback-native runs natively (docs/sandbox.md), and it says why
  run seccomp_enosys_sandbox "$wt" "$BATS_TEST_TMPDIR/policy.json" "$task" --json \
    --failure-mode fallback-native
  [ "$status" = 0 ]
  [ "$(jq -r .backend <<<"$output")" = native ]
  grep -q "load the seccomp filter: Function not implemented; $NO_SANDBOX_HERE; running the command natively$" \
    "$BATS_TEST_TMPDIR/err"
  [ -e "$wt/ran" ]

  user_setup
  as_user git init -q "$UDIR/wt"
  echo '{"allowNetwork": false}' >"$UDIR/policy.json"
  RUNNER=as_user STATE_ROOT=
  run seccomp_enosys_sandbox "$UDIR/wt" "$UDIR/policy.json" "$task"
  seccomp_failure_seen "$UDIR/wt" "$task"
  run seccomp_enosys_sandbox "$UDIR/wt" "$UDIR/policy.json" "$task" --json
  seccomp_failure_seen "$UDIR/wt" "$task"
  [ "$(jq -r .exitCode <<<"$output")" = 125 ]
  [[ $(jq -r .error <<<"$output") == *"load the seccomp filter: Function not implemented" ]]
  [ -z "$(ls -A "$UDIR/run/fsrun" | grep -v -e '^\.sandbox-bundle$' -e '^\.sandbox-kept-[0-3]$')" ]
  user_processes_gone
  run seccomp_enosys_sandbox "$UDIR/wt" "$UDIR/policy.json" "$task" --failure-mode fallback-native
  [ "$status" = 0 ]
  grep -q "load the seccomp filter: Function not implemented; $NO_SANDBOX_HERE; running the command natively$" \
    "$BATS_TEST_TMPDIR/err"
  [ -e "$UDIR/wt/ran" ]
}

# forged_failure_sandbox DIR TASK [ARG...]: the sandbox (its options ARG...) on the worktree DIR/wt
# whose command (forge-setup-failure) forges a set-up failure on pid 1's sync socket and exits 7;
# run natively, it would make DIR/host/escaped. As CMD... from RUNNER (empty: as root); stderr goes
# to $BATS_TEST_TMPDIR/err.
forged_failure_sandbox() {
  local dir=$1 task=$2
  shift 2
  ${RUNNER:-} "$FSRUN" ${STATE_ROOT:+--root "$STATE_ROOT"} sandbox --policy "$dir/policy.json" \
    --worktree "$dir/wt" --task-id "$task" "$@" -- "$dir/wt/forge" "$dir/host/escaped" 7 \
    2>"$BATS_TEST_TMPDIR/err"
}

# forged_failure_ignored DIR [JSON]: the last forged_failure_sandbox ran the command in the sandbox
# only: the forge said what FORGE_SAYS matches, the command's own status 7 was reported, nothing
# ran natively
forged_failure_ignored() {
  local stderr
  cat "$BATS_TEST_TMPDIR/err"
  stderr=$(cat "$BATS_TEST_TMPDIR/err")
  [ -z "${2:-}" ] || stderr+=$(jq -r .stderr <<<"$output")
  [[ $stderr == $FORGE_SAYS ]]
  [ ! -e "$1/host/escaped" ]
  [ "$status" = 7 ]
  if [ -n "${2:-}" ]; then
    echo "$output"
    [ "$(jq -r .exitCode <<<"$output")" = 7 ]
    [ "$(jq -r .backend <<<"$output")" = fsrun ]
    [ "$(jq -r .error <<<"$output")" = null ]
  fi
}

# forged_failure_all DIR TASK: the forgery under both failure modes, plain and --json, where the
# command reaches pid 1's sync socket (no seccomp filter); then where the default filter refuses
# it pidfd_getfd. DIR/policy.json exists and its owner may read it.
forged_failure_all() {
  local dir=$1 task=$2 mode
  echo '{"allowNetwork": false, "seccomp": "none"}' >"$dir/policy.json"
  FORGE_SAYS="forge: sent on [1-9]* socket(s) of pid 1"
  for mode in fallback-native fail-hard; do
    run forged_failure_sandbox "$dir" "$task" --failure-mode $mode
    forged_failure_ignored "$dir"
    run forged_failure_sandbox "$dir" "$task" --failure-mode $mode --json
    forged_failure_ignored "$dir" json
  done
  echo '{"allowNetwork": false}' >"$dir/policy.json"
  FORGE_SAYS=$'forge: pidfd_getfd: Operation not permitted\nforge: sent on 0 socket(s) of pid 1'
  run forged_failure_sandbox "$dir" "$task" --failure-mode fallback-native
  forged_failure_ignored "$dir"
}

@test "noclone3: a set-up failure the command forges on pid 1's sync socket is ignored: never a native run, its own exit status; root and an ordinary user" {
  requires_host_command git cc
  local dir=$BATS_TEST_TMPDIR/forged task=forged$$
  mkdir -p "$dir/host"
  git init -q "$dir/wt"
  cc -static -O2 -o "$dir/wt/forge" "$FSRUN_TESTS_DIR/forge-setup-failure.c" ||
    skip "needs cc -static"
  touch "$dir/policy.json"
  STATE_ROOT=$FSRUN_ROOT
  forged_failure_all "$dir" "$task"
  [ -z "$(ls "$FSRUN_ROOT" | grep -v '^\.sandbox-bundle$')" ]

  user_setup
  mkdir -p "$UDIR/host"
  cp -r "$dir/wt" "$dir/policy.json" "$UDIR/"
  chown -R "$NEST_UID:$NEST_GID" "$UDIR/host" "$UDIR/wt" "$UDIR/policy.json"
  RUNNER=as_user STATE_ROOT=
  forged_failure_all "$UDIR" "$task"
  user_processes_gone
}

@test "noclone3: without pidfd_open (ENOSYS) as root: exec joins the init's namespaces, -d, signals; kill refuses; delete --force" {
  update_config '.process.args = ["sleep", "1000"]'
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  init=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  run no_pidfd exec "$CONTAINER_ID" sh -c 'for n in mnt pid net ipc uts; do readlink /proc/self/ns/$n; done; exit 7'
  [ "$status" = 7 ] || { echo "$output"; false; }
  same_namespaces "$init" "$output"
  no_pidfd exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CONTAINER_ID" sleep 1000 </dev/null
  pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
  in_cgroup "$pid"
  [ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$init/ns/pid")" ]
  # the foreground forwards a signal to its own child with kill(2) (pidfd_send_signal is refused)
  "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" \
    sh -c 'trap "exit 9" TERM; touch /dev/shm/ready; while :; do sleep 1; done' </dev/null 3>&- &
  fg=$!
  wait_for_file "/proc/$init/root/dev/shm/ready"
  kill -TERM "$fg"
  # bounded: a signal that is not forwarded leaves the command running (fsrun is then killed)
  wait_until pid_gone "$fg" || kill -KILL "$fg"
  st=0
  wait "$fg" || st=$?
  [ "$st" = 9 ]
  # kill has no fallback as safe as its pidfd: it refuses, and the container runs on
  run no_pidfd kill "$CONTAINER_ID" KILL
  [ "$status" = 1 ]
  # one line, the errno named once (before, strerror's text of it followed)
  [[ $output == "fsrun: "*"kill the container init: pidfd_open answers ENOSYS here"*"reused by then" ]]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  run no_pidfd start "$CONTAINER_ID"
  [ "$status" = 1 ]
  # delete --force kills it as a member of its cgroup
  run no_pidfd delete --force "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without pidfd_open (ENOSYS), exec into a container without a pid namespace, and start refuses" {
  update_config '.process.args = ["sleep", "1000"] | .linux.namespaces |= map(select(.type != "pid"))'
  fsrun create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  run no_pidfd start "$CONTAINER_ID"
  [ "$status" = 1 ]
  [[ $output == "fsrun: "*"start: pidfd_open answers ENOSYS here"*"reused by then" ]]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
  fsrun start "$CONTAINER_ID"
  init=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  run no_pidfd exec "$CONTAINER_ID" sh -c 'for n in mnt pid net ipc uts; do readlink /proc/self/ns/$n; done'
  [ "$status" = 0 ] || { echo "$output"; false; }
  same_namespaces "$init" "$output"
  no_pidfd delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without pidfd_open (ENOSYS), delete --force refuses an init that left its cgroup and keeps the state" {
  run_init_moved_out
  run no_pidfd delete --force "$CONTAINER_ID"
  [ "$status" = 1 ]
  [[ $output == "fsrun: "*"its init (pid $INIT) is not in its cgroup, and pidfd_open answers ENOSYS here"*"; the state is kept" ]]
  [ -e "$FSRUN_ROOT/$CONTAINER_ID/state.json" ]
  _fsrun_pid_alive "$INIT"
  # with its pidfd the init is killed wherever it is
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without pidfd_open (ENOSYS), an ordinary user's exec joins its container's namespaces (the user namespace first)" {
  user_run_sleep
  run as_user "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" exec "$CONTAINER_ID" \
    sh -c 'for n in mnt pid net ipc uts; do readlink /proc/self/ns/$n; done; readlink /proc/self/ns/user; id -u'
  [ "$status" = 0 ] || { echo "$output"; false; }
  same_namespaces "$INIT" "$(head -n 5 <<<"$output")"
  [ "${lines[5]}" = "$(readlink "/proc/$INIT/ns/user")" ]
  [ "${lines[6]}" = 0 ]
  run as_user "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" kill "$CONTAINER_ID" KILL
  [ "$status" = 1 ]
  [[ $output == "fsrun: "*"pidfd_open answers ENOSYS here"*"reused by then" ]]
  # without a cgroup (an ordinary user's container on cgroup v1) only a pidfd could kill the init
  if [ -z "$(jq -r '.fsrun.cgroup // empty' "$UDIR/run/fsrun/$CONTAINER_ID/state.json")" ]; then
    run as_user "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" delete --force "$CONTAINER_ID"
    [ "$status" = 1 ]
    [[ $output == "fsrun: "*"its init (pid $INIT) is not in a cgroup (the container has none), and pidfd_open answers ENOSYS here"*"; the state is kept" ]]
    [ -e "$UDIR/run/fsrun/$CONTAINER_ID/state.json" ]
    _fsrun_pid_alive "$INIT"
    as_user "$FSRUN" delete --force "$CONTAINER_ID"
  else
    as_user "$NOCLONE3" --enosys "$NO_PIDFD" "$FSRUN" delete --force "$CONTAINER_ID"
  fi
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# Before, create's undo of a failed step sent its SIGKILL with pidfd_send_signal only, and then
# waited for the init without a bound: the init, waiting for GO on the socket create still held,
# never ended, nor did create (the `timeout` below ends it: 124, the state left).
@test "noclone3: without pidfd_send_signal (ENOSYS) as root, a create whose prestart hook fails ends (exit 1) and leaves nothing" {
  update_config '.process.args = ["sleep", "1000"]
    | .hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]'
  run timeout 60 "$NOCLONE3" --enosys pidfd_send_signal "$FSRUN" --root "$FSRUN_ROOT" \
    create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ $output == *"prestart hook #0"*"exited with status 3"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without pidfd_send_signal (ENOSYS), an ordinary user's create whose prestart hook fails ends (exit 1) and leaves nothing" {
  user_setup
  cd "$UDIR/bundle"
  jq '.process.terminal = false | .process.args = ["sleep", "1000"]
    | .hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  run as_user timeout 60 "$NOCLONE3" --enosys pidfd_send_signal "$FSRUN" create "$CONTAINER_ID" </dev/null
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ $output == *"prestart hook #0"*"exited with status 3"* ]]
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# Before, a hook's timeout was kept only through a pidfd: where pidfd_open answers ENOSYS create
# waited for the hook's own end (600 s here: `timeout` ends it, 124); and where only
# pidfd_send_signal does, the hook's SIGKILL went unsent (the same wait).
@test "noclone3: without pidfd_open and pidfd_send_signal (ENOSYS) as root, a hook past its timeout is killed and fails create" {
  local enosys
  # argv[0] names this test's hook, so that a concurrent run's is not taken for it
  HOOK_NAME=hook-sleep-$CONTAINER_ID
  update_config '.process.args = ["sleep", "1000"]
    | .hooks.createRuntime = [{"path": "/bin/sleep", "args": [$name, "600"], "timeout": 1}]' \
    --arg name "$HOOK_NAME"
  for enosys in "$NO_PIDFD" pidfd_send_signal; do
    run timeout 60 "$NOCLONE3" --enosys "$enosys" "$FSRUN" --root "$FSRUN_ROOT" \
      create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
    [ "$status" = 1 ] || { echo "$enosys: $output"; false; }
    [[ $output == *"createRuntime hook #0"*"killed after its timeout of 1 s"* ]]
    assert_no_leftovers "$CONTAINER_ID"
    ! pgrep -xf "$HOOK_NAME 600" || false
  done
}

# delete_keeps_moved_init MESSAGE FILTER...: under `noclone3 FILTER...`, delete --force of an
# init moved out of its cgroup exits 1 with MESSAGE, keeps the state and leaves the init alive;
# an init that stayed in its cgroup dies as a member of it (exit 0, nothing left)
delete_keeps_moved_init() {
  local message=$1
  shift
  run_init_moved_out
  run "$NOCLONE3" "$@" "$FSRUN" --root "$FSRUN_ROOT" delete --force "$CONTAINER_ID"
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ $output == "fsrun: "*"its init (pid $INIT) is not in its cgroup, and $message"* ]]
  # one line, the errno named once (before, strerror's text of it followed)
  [[ $output == *"; the state is kept" ]]
  [ -e "$FSRUN_ROOT/$CONTAINER_ID/state.json" ]
  _fsrun_pid_alive "$INIT"
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  run "$NOCLONE3" "$@" "$FSRUN" --root "$FSRUN_ROOT" delete --force "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  assert_no_leftovers "$CONTAINER_ID"
}

# Before, with pidfd_open working and pidfd_send_signal answering ENOSYS, delete --force did not
# notice that its SIGKILL went unsent: it removed the state of an init that lived on outside its
# cgroup (exit 0).
@test "noclone3: without pidfd_send_signal (ENOSYS), delete --force refuses an init that left its cgroup and keeps the state; one in its cgroup dies with it" {
  delete_keeps_moved_init "pidfd_send_signal answers ENOSYS here" --enosys pidfd_send_signal
}

# Before, a SIGKILL that pidfd_send_signal refused with anything but ENOSYS (EPERM: an LSM, a
# seccomp profile) counted as sent: delete --force removed the state of an init that lived on
# outside its cgroup (exit 0).
@test "noclone3: where pidfd_send_signal answers EPERM, delete --force refuses an init that left its cgroup and keeps the state; one in its cgroup dies with it" {
  run "$NOCLONE3" --eperm pidfd_send_signal --probe
  [ "$output" = "pidfd_send_signal EPERM" ]
  delete_keeps_moved_init \
    "its SIGKILL through pidfd_send_signal failed: Operation not permitted; the state is kept" \
    --eperm pidfd_send_signal
}

# The same for an ordinary user: on cgroup v1 their container has no cgroup, so only the init's
# pidfd can kill it, and a refused SIGKILL must keep the state; with a cgroup the init dies with it.
@test "noclone3: where pidfd_send_signal answers EPERM, an ordinary user's delete --force keeps the state of an init it could not kill" {
  local cgroup
  user_run_sleep
  cgroup=$(jq -r '.fsrun.cgroup // empty' "$UDIR/run/fsrun/$CONTAINER_ID/state.json")
  run as_user "$NOCLONE3" --eperm pidfd_send_signal "$FSRUN" delete --force "$CONTAINER_ID"
  if [ -z "$cgroup" ]; then
    [ "$status" = 1 ] || { echo "$output"; false; }
    [[ $output == "fsrun: "*"its init (pid $INIT) is not in a cgroup (the container has none), and its SIGKILL through pidfd_send_signal failed: Operation not permitted; the state is kept" ]]
    [ -e "$UDIR/run/fsrun/$CONTAINER_ID/state.json" ]
    _fsrun_pid_alive "$INIT"
    as_user "$FSRUN" delete --force "$CONTAINER_ID"
  else
    [ "$status" = 0 ] || { echo "$output"; false; }
  fi
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# no_openat2 ARG...: `fsrun --root ROOT ARG...` where openat2 answers ENOSYS (valgrind 3.19): every
# path in the rootfs, /proc and the cgroup tree is then walked by openat2-compat.c
no_openat2() {
  "$NOCLONE3" --enosys openat2 "$FSRUN" --root "$FSRUN_ROOT" "$@"
}

# escape_bundle DIR ROOTFS: mounts whose destinations go through symlinks out of ROOTFS (absolute,
# `../..`, dangling, magic) to HOSTDIR, a host directory holding one file; sets HOSTDIR
escape_bundle() {
  HOSTDIR=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOSTDIR" "$2/mnt"
  chmod 755 "$BATS_TEST_TMPDIR" "$HOSTDIR"
  echo original >"$HOSTDIR/file"
  ln -s "$HOSTDIR" "$2/mnt/abs"
  ln -s ../../../../../../../../../.. "$2/mnt/up"
  ln -s "$HOSTDIR/newdir" "$2/mnt/dangling"
  jq --arg h "$HOSTDIR" '.process.terminal = false | .mounts += [
    {"destination": "/mnt/abs/t", "type": "tmpfs", "source": "tmpfs"},
    {"destination": ("/mnt/up" + $h + "/u"), "type": "tmpfs", "source": "tmpfs"},
    {"destination": "/mnt/dangling", "type": "tmpfs", "source": "tmpfs"},
    {"destination": ("/mnt/up" + $h + "/file"), "type": "bind", "source": "/dev/null", "options": ["bind"]}]' \
    "$1/config.json" >"$1/c.json"
  mv "$1/c.json" "$1/config.json"
}

# the mounts of escape_bundle, seen from the container: all inside its root, under HOSTDIR's name
ESCAPE_CHECK='grep -o " $0/[a-z]* " /proc/self/mountinfo | sort | tr -d " " | tr "\n" " "; echo; wc -c <$0/file'

# host_untouched: HOSTDIR holds its one file, unchanged, and is no mount point
host_untouched() {
  [ "$(ls -A "$HOSTDIR")" = file ]
  [ "$(cat "$HOSTDIR/file")" = original ]
  ! mountpoint -q "$HOSTDIR/file" || false
}

@test "noclone3: without openat2 (ENOSYS) as root: create, start, run; mount destinations through escaping symlinks stay in the rootfs" {
  run "$NOCLONE3" --enosys openat2 --probe
  [ "$output" = "openat2 ENOSYS" ]
  escape_bundle "$BUNDLE" "$ROOTFS"
  set_process_args sh -c "$ESCAPE_CHECK" "$HOSTDIR"
  run no_openat2 run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  [ "${lines[0]}" = "$HOSTDIR/file $HOSTDIR/newdir $HOSTDIR/t $HOSTDIR/u " ]
  [ "${lines[1]}" = 0 ]
  [ -d "$ROOTFS/$HOSTDIR/t" ]
  [ -d "$ROOTFS/$HOSTDIR/newdir" ]
  host_untouched
  assert_no_leftovers "$CONTAINER_ID"

  # a magic link on the way is refused, as RESOLVE_NO_MAGICLINKS refuses it, and nothing is left
  ln -s /proc/self/root/etc "$ROOTFS/mnt/magic"
  update_config '.mounts += [{"destination": "/mnt/magic/x", "type": "tmpfs", "source": "tmpfs"}]'
  run no_openat2 run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 1 ]
  [[ $output == *"/mnt/magic/x"*"symbolic links"* ]]
  [ ! -e /etc/x ] || [ "$(stat -c %Y /etc/x)" -lt "$(stat -c %Y "$BUNDLE/config.json")" ]
  assert_no_leftovers "$CONTAINER_ID"

  update_config '.mounts |= map(select(.destination != "/mnt/magic/x")) | .process.args = ["sleep", "1000"]'
  no_openat2 create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
  no_openat2 start "$CONTAINER_ID"
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  no_openat2 delete --force "$CONTAINER_ID"
  host_untouched
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without openat2 (ENOSYS), an ordinary user's run: mount destinations through escaping symlinks stay in the rootfs" {
  user_setup
  escape_bundle "$UDIR/bundle" "$UDIR/bundle/rootfs"
  chown -R "$NEST_UID:$NEST_GID" "$UDIR/bundle"
  cd "$UDIR/bundle"
  jq --arg c "$ESCAPE_CHECK" --arg h "$HOSTDIR" '.process.args = ["sh", "-c", $c, $h]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  run as_user "$NOCLONE3" --enosys openat2 "$FSRUN" run "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  [ "${lines[0]}" = "$HOSTDIR/file $HOSTDIR/newdir $HOSTDIR/t $HOSTDIR/u " ]
  [ "${lines[1]}" = 0 ]
  [ -d "$UDIR/bundle/rootfs/$HOSTDIR/t" ]
  host_untouched
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# what valgrind 3.19 does not know of the new mount API: the fallback through mount(2) is taken
# (mount-fallback.h)
NO_MOUNT_API=open_tree,move_mount,mount_setattr,fsopen,fsconfig,fsmount

# mount_api_bundle DIR HOSTSRC: DIR's config asks for what the fallback must keep. A read-only root;
# an rbind of HOSTSRC, recursively read-only ("rro"), whose sub/ is a nosuid,nodev,noexec tmpfs on
# the host (flags a user namespace locks: a remount that drops them is refused); a
# nosuid,nodev bind of HOSTSRC/sub; tmpfs /data with a tmpfs on /data/sub and a tmpfs on
# /ropar/sub, /data (a mount of its own) and /ropar (a plain directory) in readonlyPaths;
# /proc/timer_list and /proc/acpi masked. HOSTSRC/sub is mounted here, unmounted by teardown.
mount_api_bundle() {
  mkdir -p "$2/sub" "$1/rootfs/ropar"
  mount -t tmpfs -o mode=0777,nosuid,nodev,noexec fsrun-mfb "$2/sub"
  MFB_HOST_MOUNT=$2/sub
  echo host >"$2/sub/file"
  chmod 755 "$2" && chmod 644 "$2/sub/file"
  jq --arg h "$2" '.process.terminal = false | .root.readonly = true
    | .mounts += [
      {"destination": "/rro", "type": "bind", "source": $h, "options": ["rbind", "rro"]},
      {"destination": "/nsd", "type": "bind", "source": ($h + "/sub"), "options": ["bind", "nosuid", "nodev"]},
      {"destination": "/data", "type": "tmpfs", "source": "tmpfs"},
      {"destination": "/data/sub", "type": "tmpfs", "source": "tmpfs"},
      {"destination": "/ropar/sub", "type": "tmpfs", "source": "tmpfs"}]
    | .linux.readonlyPaths = ((.linux.readonlyPaths // []) + ["/data", "/ropar"])
    | .linux.maskedPaths = ((.linux.maskedPaths // []) + ["/proc/timer_list", "/proc/acpi"] | unique)' \
    "$1/config.json" >"$1/c.json"
  mv "$1/c.json" "$1/config.json"
}

# what the container sees of mount_api_bundle: each directory it can write to (none), the options
# of /nsd's mount, the sizes of the masked paths, /proc's and /dev's filesystems and /dev/null
MOUNT_API_CHECK='for d in / /rro /rro/sub /data /data/sub /ropar /ropar/sub; do
    touch $d/.w 2>/dev/null && echo "writable $d"; done
  echo "rro/sub: $(cat /rro/sub/file)"
  awk '"'"'$5 == "/nsd" { print "nsd: " $6 }'"'"' /proc/self/mountinfo
  echo "timer_list: $(wc -c </proc/timer_list) acpi: $(ls -A /proc/acpi | wc -l)"
  awk '"'"'$5 == "/proc" || $5 == "/dev" { print $5 ": " $9 }'"'"' /proc/self/mountinfo
  [ -c /dev/null ] && echo "null: ok"'

# check_mount_api_output: the lines of MOUNT_API_CHECK for a container that got every guarantee
check_mount_api_output() {
  local want
  want=$(printf '%s\n' "rro/sub: host" "nsd: rw,nosuid,nodev,noexec,relatime" "timer_list: 0 acpi: 0" \
    "/proc: proc" "/dev: tmpfs" "null: ok")
  [ "$output" = "$want" ] || { printf 'want:\n%s\ngot:\n%s\n' "$want" "$output"; false; }
}

# host_mounts DIR...: the host's mount points below the DIRs (the check that nothing is left;
# other tests on the host may mount elsewhere meanwhile)
host_mounts() {
  local d
  for d in "$@"; do
    awk -v d="$d/" 'substr($5, 1, length(d)) == d { print $5 }' /proc/self/mountinfo
  done | sort
}

@test "noclone3: without the new mount API (ENOSYS) as root: read-only root and rro bind with its submount, readonly and masked paths, nosuid,nodev bind, /proc and /dev; nothing left on the host" {
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" --probe
  [ "$output" = "$(printf '%s ENOSYS\n' open_tree move_mount mount_setattr fsopen fsconfig fsmount)" ]
  mount_api_bundle "$BUNDLE" "$BATS_TEST_TMPDIR/hostsrc"
  set_process_args sh -c "$MOUNT_API_CHECK"
  local before
  before=$(host_mounts "$BATS_TEST_TMPDIR" "$BUNDLE")
  [ "$before" = "$MFB_HOST_MOUNT" ]
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  check_mount_api_output
  [ "$(host_mounts "$BATS_TEST_TMPDIR" "$BUNDLE")" = "$before" ]
  assert_no_leftovers "$CONTAINER_ID"

  # create, start, delete through the fallback too
  update_config '.process.args = ["sleep", "1000"]'
  "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
  "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" start "$CONTAINER_ID"
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
  [ "$(host_mounts "$BATS_TEST_TMPDIR" "$BUNDLE")" = "$before" ]
}

@test "noclone3: without the new mount API (ENOSYS), an ordinary user's run: the same guarantees, the host's locked flags kept" {
  user_setup
  mount_api_bundle "$UDIR/bundle" "$UDIR/hostsrc"
  chown -R "$NEST_UID:$NEST_GID" "$UDIR/bundle"
  cd "$UDIR/bundle"
  jq --arg c "$MOUNT_API_CHECK" '.process.args = ["sh", "-c", $c]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  local before
  before=$(host_mounts "$UDIR")
  [ "$before" = "$MFB_HOST_MOUNT" ]
  run as_user "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" run "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  check_mount_api_output
  [ "$(host_mounts "$UDIR")" = "$before" ]
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# HOLDER_PERL FIFO: pivots into its working directory (a tmpfs: pivot_root(".", ".") stacks the old
# root on it) and lets go of the old root and every mount under it (umount2 MNT_DETACH of "."),
# says "in" on FIFO, and sleeps. Its namespace then holds no mount of anyone else: a
# copy of the host's table would lose each mount another test rmdirs the mount point of on the host
# (the kernel detaches it in every namespace; propagation being private does not keep it), which
# failed the comparison while other suites ran beside this one (their per-run git tmpfs mounts)
# shellcheck disable=SC2016 # perl's
HOLDER_PERL='require "syscall.ph";
  open(my $said, "+<", $ARGV[0]) or die "open $ARGV[0]: $!\n";
  $said->autoflush(1);
  my $here = ".";
  syscall(&SYS_pivot_root, $here, $here) == 0 or die "pivot_root: $!\n";
  syscall(&SYS_umount2, $here, 2) == 0 or die "umount2(MNT_DETACH): $!\n";
  chdir "/" or die "chdir: $!\n";
  print $said "in\n";
  sleep'

# mntns_holder DIR [CMD...]: HOLDER, a process in a mount namespace of its own whose only mount is
# a tmpfs made for it (HOLDER_PERL), running once it is in it; started through CMD (another
# unshare, for a user namespace); the fifo that says so, the tmpfs's mount point and what the
# holder said on failure are in DIR
mntns_holder() {
  local dir=$1 fifo=$1/holder
  shift
  requires_host_command perl
  mkfifo -m 666 "$fifo"
  mkdir -m 755 "$dir/holder-root"
  "$@" unshare --mount sh -c 'mount -t tmpfs -o mode=0755 fsrun-holder "$2" && cd "$2" &&
    exec perl -e "$3" "$1"' sh "$fifo" "$dir/holder-root" "$HOLDER_PERL" \
    </dev/null >/dev/null 2>"$dir/holder.err" 3>&- &
  HOLDER=$!
  # opened read-write, the fifo never waits for a writer; a holder that died before it wrote
  # (unshare refused) then fails the test after the bound instead of hanging the suite
  local fd said
  exec {fd}<>"$fifo"
  read -t 30 -r _ <&"$fd" && said=0 || said=$?
  exec {fd}>&-
  rm "$fifo"
  [ "$said" -eq 0 ] || { cat "$dir/holder.err"; false; }
  # its table is the tmpfs alone
  [ "$(awk '{ split($0, fs, " - "); split(fs[2], t, " "); print $5, t[1] }' "/proc/$HOLDER/mountinfo")" = "/ tmpfs" ] ||
    { cat "/proc/$HOLDER/mountinfo"; false; }
}

# join_holder_mntns CONFIG: CONFIG's mount namespace is HOLDER's, joined by path
join_holder_mntns() {
  jq --arg p "/proc/$HOLDER/ns/mnt" '.linux.namespaces |= map(if .type == "mount" then .path = $p else . end)' \
    "$1" >"$1.new"
  mv "$1.new" "$1"
}

# mount_ids PID: PID's mounts, id, parent and mount point (what a mount made there would add to;
# the options are left out: a superblock's change elsewhere on the host shows in them too). For a
# holder made by mntns_holder, nothing but fsrun could change them.
mount_ids() {
  awk '{ print $1, $2, $5 }' "/proc/$1/mountinfo"
}

# what the refusal of a joined mount namespace says (the mount namespace is linux.namespaces[N])
joined_mntns_refusal() {
  local n
  n=$(jq '.linux.namespaces | map(.type) | index("mount")' "$1")
  printf 'linux.namespaces[%s]: joining the mount namespace `/proc/%s/ns/mnt` needs open_tree, which answers ENOSYS here (the mount(2) fallback is only made in a new mount namespace)' "$n" "$HOLDER"
}

@test "noclone3: without the new mount API (ENOSYS), joining a mount namespace by path is refused (root and an ordinary user); nothing made in it, nothing left" {
  mntns_holder "$BATS_TEST_TMPDIR"
  local table
  table=$(mount_ids "$HOLDER")
  join_holder_mntns "$BUNDLE/config.json"
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ "$output" == *"$(joined_mntns_refusal "$BUNDLE/config.json")"* ]] || { echo "$output"; false; }
  [ "$(printf '%s\n' "$output" | grep -c .)" = 1 ] || { echo "$output"; false; }
  assert_no_leftovers "$CONTAINER_ID"
  [ "$(mount_ids "$HOLDER")" = "$table" ] || { diff <(echo "$table") <(mount_ids "$HOLDER"); false; }


  # the user's own mount namespace (in a user namespace of its own), which it may join
  kill -KILL "$HOLDER"
  wait "$HOLDER" || true
  user_setup
  mntns_holder "$UDIR" setpriv --reuid="$NEST_UID" --regid="$NEST_GID" --init-groups unshare --user --map-root-user
  table=$(mount_ids "$HOLDER")
  join_holder_mntns "$UDIR/bundle/config.json"
  chown "$NEST_UID:$NEST_GID" "$UDIR/bundle/config.json"
  cd "$UDIR/bundle"
  run as_user "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" run "$CONTAINER_ID"
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ "$output" == *"$(joined_mntns_refusal "$UDIR/bundle/config.json")"* ]] || { echo "$output"; false; }
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  [ "$(mount_ids "$HOLDER")" = "$table" ] || { diff <(echo "$table") <(mount_ids "$HOLDER"); false; }
  kill -KILL "$HOLDER"
  wait "$HOLDER" || true
  HOLDER=
  user_processes_gone
}

# a linux.devices node no host has (the full device's numbers under another name), as [0]
MFB_DEVICE='{"path": "/dev/fsrun-mfb", "type": "c", "major": 1, "minor": 7, "fileMode": 438}'

@test "noclone3: without the new mount API (ENOSYS) as root, a linux.devices node the host lacks is made (mknod): its type, major and minor from inside" {
  [ ! -e /dev/fsrun-mfb ]
  update_config '.linux.devices = [$d] | .process.args = ["stat", "-c", "%F %t:%T %a", "/dev/fsrun-mfb"]' --argjson d "$MFB_DEVICE"
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  [ "$output" = "character special file 1:7 666" ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without the new mount API (ENOSYS), an ordinary user's linux.devices node the host lacks fails create in one line naming it; nothing left" {
  user_setup
  cd "$UDIR/bundle"
  jq --argjson d "$MFB_DEVICE" '.linux.devices = [$d] | .process.args = ["true"]' config.json >c.json
  chown "$NEST_UID:$NEST_GID" c.json
  mv c.json config.json
  run as_user "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" run "$CONTAINER_ID"
  [ "$status" = 1 ] || { echo "$output"; false; }
  [[ "$output" == *'linux.devices[0]: `/dev/fsrun-mfb` is not on the host, and making it in a user namespace needs fsmount and open_tree, which answer ENOSYS here'* ]] || { echo "$output"; false; }
  [ "$(printf '%s\n' "$output" | grep -c .)" = 1 ] || { echo "$output"; false; }
  [ ! -e "$UDIR/run/fsrun/$CONTAINER_ID" ]
  user_processes_gone
}

# Root only: an ordinary user's idmapped bind is refused before any mount (idmap.c). Before, the
# line ended in strerror's text of the ENOSYS it had named.
@test "noclone3: without the new mount API (ENOSYS) as root, an idmapped bind fails create in one line naming it, the errno once; nothing left" {
  mkdir -p "$BATS_TEST_TMPDIR/idsrc"
  update_config '.mounts += [{destination: "/mnt", type: "bind", source: $s, options: ["bind"],
      uidMappings: [{containerID: 0, hostID: 1000, size: 1}],
      gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}] | .process.args = ["true"]' \
    --arg s "$BATS_TEST_TMPDIR/idsrc"
  local index
  index=$(($(jq '.mounts | length' "$BUNDLE/config.json") - 1))
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  echo "$status [$output]"
  [ "$status" = 1 ]
  [[ $output == "fsrun: "*"mounts[$index]: an idmapped bind of \`$BATS_TEST_TMPDIR/idsrc\` needs open_tree and mount_setattr, which answer ENOSYS here" ]]
  [ "$(grep -c . <<<"$output")" = 1 ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "noclone3: without the new mount API (ENOSYS) as root, an rro bind whose submount is hidden under another mount fails create with EBUSY (never left writable); nothing left" {
  mount_api_bundle "$BUNDLE" "$BATS_TEST_TMPDIR/hostsrc"
  # a second tmpfs on hostsrc/sub hides the first: the bind's copy of it cannot be reached by path
  mount -t tmpfs fsrun-mfb-hide "$MFB_HOST_MOUNT"
  MFB_HOST_STACKED=$MFB_HOST_MOUNT
  local before
  before=$(host_mounts "$BATS_TEST_TMPDIR" "$BUNDLE")
  run "$NOCLONE3" --enosys "$NO_MOUNT_API" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 1 ] || { echo "$output"; false; }
  local n
  n=$(jq '.mounts | map(.destination) | index("/rro")' "$BUNDLE/config.json")
  [[ "$output" == *"mounts[$n]: set recursive mount flags of bind \`$BATS_TEST_TMPDIR/hostsrc\` onto \`/rro\`: Device or resource busy"* ]] || { echo "$output"; false; }
  [ "$(host_mounts "$BATS_TEST_TMPDIR" "$BUNDLE")" = "$before" ]
  assert_no_leftovers "$CONTAINER_ID"

  # the native API reaches the hidden mount (mount_setattr walks the tree, not paths)
  set_process_args sh -c "$MOUNT_API_CHECK"
  run "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" = 0 ] || { echo "$output"; false; }
  [[ "$output" != *writable* ]] || { echo "$output"; false; }
}
