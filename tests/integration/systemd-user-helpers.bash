# Shared by systemd-user.bats and systemd-user-runs.bats (two files, so that each has its own
# BATS_FILE_TIMEOUT: the 50 creates take about 10 minutes in the VM): a user made for the file,
# and, where it can run, that user's own `systemd --user` (see systemd-user.bats).

setup_file() {
  UM_MODE=none
  export UM_MODE
  [ "$EUID" = 0 ] || return 0
  local cmd
  for cmd in useradd setpriv unshare jq python3; do
    command -v "$cmd" >/dev/null || return 0
  done
  UM_USER=fsrum$$
  useradd -m "$UM_USER" || return 1
  UM_UID=$(id -u "$UM_USER")
  UM_GID=$(id -g "$UM_USER")
  UM_DIR=$(mktemp -d /tmp/fsrun-systemd-user.XXXXXX)
  UM_CG=/fsrun-user-manager-$$
  UM_CGDIR=/sys/fs/cgroup$UM_CG
  export UM_USER UM_UID UM_GID UM_DIR UM_CG UM_CGDIR UM_MODE=user
  chmod 755 "$UM_DIR"
  mkdir -m 700 "$UM_DIR/run" "$UM_DIR/norun"
  mkdir "$UM_DIR/state"
  chown "$UM_UID:$UM_GID" "$UM_DIR/run" "$UM_DIR/norun" "$UM_DIR/state"
  [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] || return 0
  [ -x /lib/systemd/systemd ] && command -v systemctl >/dev/null || return 0
  export UM_MODE=on
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
  [ "${UM_MODE:-none}" != none ] || return 0
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
  [ -d "$UM_CGDIR" ] || pid= # no manager: nothing to wait for
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

requires_manager() {
  [ "$UM_MODE" = on ] || skip "needs a user manager: root, cgroup v2 at /sys/fs/cgroup, systemd (the cgroup v2 VM: tests/vm/run.sh)"
}

setup() {
  [ "$UM_MODE" != none ] || skip "needs root, useradd, setpriv, unshare, jq and python3"
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
  [ "${UM_MODE:-none}" != none ] || return 0
  local id
  if [ -n "${FAKE_PID:-}" ]; then
    kill "$FAKE_PID" 2>/dev/null
    for _ in $(seq 100); do
      kill -0 "$FAKE_PID" 2>/dev/null || break
      sleep 0.1
    done
    rm -rf "$UM_DIR/norun/systemd" "$UM_DIR/norun/fake.pid"
  fi
  for id in "$ID" "${LOOP_IDS[@]}"; do
    [ ! -e "$UM_DIR/state/$id" ] || user_fsrun delete --force "$id" >/dev/null 2>&1
  done
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

