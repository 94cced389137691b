#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user (cgroup-systemd.c, runc's systemdUser): fsrun asks the
# user's own systemd manager, through $XDG_RUNTIME_DIR/systemd/private, for the scope; the scope
# lives below the manager's cgroup (its ControlGroup property), the container's init is in it, the
# limits land in it, update tells the manager, and delete leaves no unit and no cgroup.
#
# setup_file starts a user manager for a user made for this file: `systemd --user` as that user,
# in a cgroup of its own that root delegates to it (chowned, as user@.service's Delegate=yes does),
# at a path that is not the usual user@UID.service one, so the test shows that fsrun asks the
# manager where it lives. The manager only needs /run/systemd/system to exist ("booted with
# systemd"): a private mount namespace gives it that, nothing else sees it. The user's fsrun
# runs from a cgroup inside the manager's tree (the manager can only move processes it owns the
# way to), as podman's conmon runs in a scope of the user's manager. Needs root and cgroup v2 at
# /sys/fs/cgroup: the cgroup v2 VM (tests/vm/run.sh) has both.

load helpers

setup_file() {
  UM_MODE=none
  export UM_MODE
  [ "$EUID" = 0 ] || return 0
  [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] || return 0
  [ -x /lib/systemd/systemd ] || return 0
  local cmd
  for cmd in useradd setpriv unshare systemctl jq; do
    command -v "$cmd" >/dev/null || return 0
  done
  UM_USER=fsrum$$
  useradd -m "$UM_USER" || return 1
  UM_UID=$(id -u "$UM_USER")
  UM_GID=$(id -g "$UM_USER")
  UM_DIR=$(mktemp -d /tmp/fsrun-systemd-user.XXXXXX)
  UM_CG=/fsrun-user-manager-$$
  UM_CGDIR=/sys/fs/cgroup$UM_CG
  export UM_USER UM_UID UM_GID UM_DIR UM_CG UM_CGDIR UM_MODE=on
  chmod 755 "$UM_DIR"
  mkdir -m 700 "$UM_DIR/run"
  mkdir "$UM_DIR/state"
  chown "$UM_UID:$UM_GID" "$UM_DIR/run" "$UM_DIR/state"
  # the delegation: the directory and the files a manager writes in it are the user's
  mkdir -p "$UM_CGDIR/driver"
  chown "$UM_UID:$UM_GID" "$UM_CGDIR" "$UM_CGDIR"/cgroup.{procs,subtree_control,threads} \
    "$UM_CGDIR/driver" "$UM_CGDIR/driver/cgroup.procs"
  unshare -m --propagation private bash -c '
    mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system || exit 1
    echo $$ >"$0/cgroup.procs" || exit 1
    exec setpriv --reuid="$1" --regid="$2" --init-groups env -i XDG_RUNTIME_DIR="$3" \
      HOME="/home/$4" PATH=/usr/bin:/bin:/usr/sbin:/sbin /lib/systemd/systemd --user' \
    "$UM_CGDIR" "$UM_UID" "$UM_GID" "$UM_DIR/run" "$UM_USER" \
    </dev/null >"$UM_DIR/manager.log" 2>&1 3>&- &
  echo $! >"$UM_DIR/manager.pid"
  local i state=
  for i in $(seq 300); do
    if [ -S "$UM_DIR/run/systemd/private" ]; then
      state=$(as_user systemctl --user show -P SystemState 2>/dev/null)
      [ "$state" = running ] || [ "$state" = degraded ] && return 0
    fi
    kill -0 "$(cat "$UM_DIR/manager.pid")" 2>/dev/null || break
    sleep 0.5
  done
  echo "the user manager did not come up (state '$state'); its log:" >&2
  cat "$UM_DIR/manager.log" >&2
  return 1
}

teardown_file() {
  [ "${UM_MODE:-none}" = on ] || return 0
  local pid
  pid=$(cat "$UM_DIR/manager.pid" 2>/dev/null)
  # everything in the manager's tree, the manager last (it is PID 1 of nothing: kill by cgroup)
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
  fi
  [ -e "$UM_CGDIR/cgroup.kill" ] && echo 1 >"$UM_CGDIR/cgroup.kill"
  for _ in $(seq 50); do
    [ -z "$(find "$UM_CGDIR" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
    sleep 0.2
  done
  find "$UM_CGDIR" -depth -type d -exec rmdir {} + 2>/dev/null
  userdel -r "$UM_USER" >/dev/null 2>&1 || true
  rm -rf "$UM_DIR"
}

# as_user CMD...: CMD as the user, with its runtime dir (where its manager's socket is)
as_user() {
  setpriv --reuid="$UM_UID" --regid="$UM_GID" --init-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="/home/$UM_USER" \
    XDG_RUNTIME_DIR="$UM_DIR/run" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$UM_DIR/san" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$UM_DIR/san" "$@"
}

# in_manager CMD...: as_user CMD from the driver cgroup in the manager's tree
in_manager() {
  (echo 0 >"$UM_CGDIR/driver/cgroup.procs" && as_user "$@")
}

user_fsrun() {
  as_user "$FSRUN" --root "$UM_DIR/state" "$@"
}

# unit_prop UNIT PROPERTY: what the user's manager has for it
unit_prop() {
  as_user systemctl --user show -P "$2" "$1"
}

setup() {
  [ "$UM_MODE" = on ] || skip "needs root, cgroup v2 at /sys/fs/cgroup, systemd, useradd, setpriv (the cgroup v2 VM: tests/vm/run.sh)"
  requires_fsrun_command run
  ID=su-$RANDOM$RANDOM
  UNIT=fsrun-$ID.scope
  # the user's bundle: a private copy of the rootfs, a rootless config, a scope in user.slice
  setup_bundle
  UBUNDLE=$UM_DIR/bundle-$ID
  mkdir "$UBUNDLE"
  cp -a "$ROOTFS" "$UBUNDLE/rootfs"
  chown -R "$UM_UID:$UM_GID" "$UBUNDLE"
  as_user sh -c 'cd "$1" && "$2" spec --rootless' sh "$UBUNDLE" "$FSRUN"
  jq --arg path "user.slice:fsrun:$ID" '.process.terminal = false | .process.args = ["sleep", "100000"]
      | .linux.cgroupsPath = $path
      | .linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 77}}' \
    "$UBUNDLE/config.json" >"$UBUNDLE/config.new"
  chown "$UM_UID:$UM_GID" "$UBUNDLE/config.new"
  mv "$UBUNDLE/config.new" "$UBUNDLE/config.json"
}

teardown() {
  [ "${UM_MODE:-none}" = on ] || return 0
  user_fsrun delete --force "$ID" >/dev/null 2>&1
  rm -rf "$UBUNDLE"
  teardown_bundle
  local f
  for f in "$UM_DIR"/san.*; do
    [ -e "$f" ] || continue
    cat "$f" >&2
    rm -f "$UM_DIR"/san.*
    false
  done
}

# run_detached: the user's `--systemd-cgroup run -d` from inside the manager's tree
run_detached() {
  in_manager "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup run -d --bundle "$UBUNDLE" "$ID" \
    </dev/null >"$UM_DIR/run-$ID.out" 2>&1
}

@test "systemd user manager: the container is a scope of the user's manager, below its cgroup, with the limits" {
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  local pid scope_cg
  pid=$(user_fsrun state "$ID" | jq -r .pid)
  [ "$pid" -gt 0 ]
  # where the manager lives: not the usual user@UID.service
  [ "$(as_user systemctl --user show -P ControlGroup)" = "$UM_CG" ]
  scope_cg=$UM_CG/user.slice/$UNIT
  # the init is in the scope, and the manager knows the scope with it in it
  [ "$(cat "/proc/$pid/cgroup")" = "0::$scope_cg" ]
  [ "$(unit_prop "$UNIT" ActiveState)" = active ]
  [ "$(unit_prop "$UNIT" ControlGroup)" = "$scope_cg" ]
  # the limits, in the files and in the unit
  [ "$(cat "/sys/fs/cgroup$scope_cg/memory.max")" = 67108864 ]
  [ "$(cat "/sys/fs/cgroup$scope_cg/pids.max")" = 77 ]
  [ "$(unit_prop "$UNIT" MemoryMax)" = 67108864 ]
  [ "$(unit_prop "$UNIT" TasksMax)" = 77 ]
  # the state says the same cgroup
  [ "$(user_fsrun state "$ID" | jq -r .status)" = running ]
}

@test "systemd user manager: update tells the user's manager the new limits" {
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  local dir=/sys/fs/cgroup$UM_CG/user.slice/$UNIT
  run user_fsrun update --memory 100663296 --pids-limit 88 "$ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$dir/memory.max")" = 100663296 ]
  [ "$(cat "$dir/pids.max")" = 88 ]
  [ "$(unit_prop "$UNIT" MemoryMax)" = 100663296 ]
  [ "$(unit_prop "$UNIT" TasksMax)" = 88 ]
}

@test "systemd user manager: delete leaves no unit, no cgroup and no process" {
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  local pid state tries=50 dir=/sys/fs/cgroup$UM_CG/user.slice/$UNIT
  pid=$(user_fsrun state "$ID" | jq -r .pid)
  [ -d "$dir" ]
  run user_fsrun delete --force "$ID"
  [ "$status" -eq 0 ]
  ! kill -0 "$pid" 2>/dev/null || false
  [ ! -e "$dir" ]
  [ ! -e "$UM_DIR/state/$ID" ]
  # an empty scope ends on its own; give the manager (slow under emulation) a moment
  while state=$(unit_prop "$UNIT" ActiveState) && [ "$state" = active ] && [ "$tries" -gt 0 ]; do
    sleep 0.2
    tries=$((tries - 1))
  done
  [ "$state" = inactive ]
}

@test "systemd user manager: a create it cannot serve fails naming the unit and leaves nothing" {
  # from outside the manager's tree, with no system manager to ask for the move (the VM)
  [ ! -d /run/systemd/system ] || skip "a system manager would move the init for the user"
  run as_user "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup run -d --bundle "$UBUNDLE" "$ID" </dev/null
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"systemd: start the scope \`$UNIT\`: the job ended with \`failed\` (see \`systemctl --user status $UNIT\`)"* ]]
  [ ! -e "$UM_DIR/state/$ID" ]
  [ ! -e "/sys/fs/cgroup$UM_CG/user.slice/$UNIT" ]
  [ -z "$(pgrep -u "$UM_UID" -x sleep)" ]
}
