# Shared by systemd-user.bats and systemd-user-runs.bats (two files, so that each has its own
# BATS_FILE_TIMEOUT: the 50 creates take about 10 minutes in the VM): a user made for the file,
# and, where it can run, that user's own `systemd --user` (see systemd-user.bats). Also by
# systemd-logind.bats and systemd-logind-runs.bats, where the manager is user@UID.service of a
# systemd booted with logind (um_logind_setup_file): the same checks, run in that systemd's
# namespaces (um_here).

# The user's name, fixed for the file (the pid of the shell that runs setup_file and
# teardown_file; the tests get it exported): a teardown finds the user of a set-up that stopped
# half-way, before um_make_user's export.
UM_USER=${UM_USER:-fsrum$$}

# um_make_user: the user, its folder (UM_DIR) with a runtime dir, a state dir, and one with no manager
um_make_user() {
  useradd -m "$UM_USER" || return 1
  UM_UID=$(id -u "$UM_USER")
  UM_GID=$(id -g "$UM_USER")
  UM_DIR=$(mktemp -d /tmp/fsrun-systemd-user.XXXXXX)
  UM_RUNTIME=$UM_DIR/run
  export UM_USER UM_UID UM_GID UM_DIR UM_RUNTIME UM_MODE=user
  chmod 755 "$UM_DIR"
  mkdir -m 700 "$UM_DIR/run" "$UM_DIR/norun"
  mkdir "$UM_DIR/state"
  chown "$UM_UID:$UM_GID" "$UM_DIR/run" "$UM_DIR/norun" "$UM_DIR/state"
}

# um_remove_user: the user and its folder, whichever of them exists
um_remove_user() {
  ! id "$UM_USER" >/dev/null 2>&1 || userdel -r "$UM_USER" >/dev/null 2>&1 || true
  [ -z "${UM_DIR:-}" ] || rm -rf "$UM_DIR"
}

setup_file() {
  UM_MODE=none
  export UM_MODE
  [ "$EUID" = 0 ] || return 0
  local cmd
  for cmd in useradd setpriv unshare jq python3; do
    command -v "$cmd" >/dev/null || return 0
  done
  um_make_user || return 1
  UM_CG=/fsrun-user-manager-$$
  UM_CGDIR=/sys/fs/cgroup$UM_CG
  export UM_CG UM_CGDIR
  [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] || return 0
  [ -x /lib/systemd/systemd ] && command -v systemctl >/dev/null || return 0
  export UM_MODE=on
  # the delegation: the directory and the files a manager writes in it are the user's
  mkdir -p "$UM_CGDIR/driver"
  chown "$UM_UID:$UM_GID" "$UM_CGDIR" "$UM_CGDIR"/cgroup.{procs,subtree_control,threads} \
    "$UM_CGDIR/driver" "$UM_CGDIR/driver/cgroup.procs"
  unshare -m --propagation private bash -c '
    # tree not used: only systemd --user runs here, fsrun runs in the test namespace (in_manager)
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

# teardown_file: from what exists, not from UM_MODE (a set-up that failed half-way leaves it at
# none or user with a user, a folder or a manager behind it)
teardown_file() {
  local pid=
  [ -z "${UM_DIR:-}" ] || pid=$(cat "$UM_DIR/manager.pid" 2>/dev/null)
  # everything in the manager's tree, the manager last (it is PID 1 of nothing: kill by cgroup)
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
  fi
  if [ -n "${UM_CGDIR:-}" ] && [ -d "$UM_CGDIR" ]; then
    [ -e "$UM_CGDIR/cgroup.kill" ] && echo 1 >"$UM_CGDIR/cgroup.kill"
    for _ in $(seq 50); do
      [ -z "$(find "$UM_CGDIR" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
      sleep 0.2
    done
    find "$UM_CGDIR" -depth -type d -exec rmdir {} + 2>/dev/null
  fi
  um_remove_user
}

# um_here CMD...: CMD where the manager runs: in the booted systemd's namespaces (logind), else here
um_here() {
  if [ "${SD_MODE:-}" = vm ]; then
    in_sd "$@"
  else
    "$@"
  fi
}

# as_user CMD...: CMD as the user, with its runtime dir (where its manager's socket is)
as_user() {
  um_here setpriv --reuid="$UM_UID" --regid="$UM_GID" --init-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="/home/$UM_USER" \
    XDG_RUNTIME_DIR="$UM_RUNTIME" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$UM_DIR/san" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$UM_DIR/san" "$@"
}

# in_manager CMD...: as_user CMD from the driver cgroup in the manager's tree; under logind from
# outside it, as from a login session (the manager asks the system's manager to move the init)
in_manager() {
  if [ "$UM_MODE" = logind ]; then
    as_user "$@"
  else
    (echo 0 >"$UM_CGDIR/driver/cgroup.procs" && as_user "$@")
  fi
}

user_fsrun() {
  as_user "$FSRUN" --root "$UM_DIR/state" "$@"
}

# unit_prop UNIT PROPERTY: what the user's manager has for it
unit_prop() {
  as_user systemctl --user show -P "$2" "$1"
}

requires_manager() {
  [ "$UM_MODE" = on ] || [ "$UM_MODE" = logind ] || skip "needs a user manager: root, cgroup v2 at /sys/fs/cgroup, systemd (the cgroup v2 VM: tests/vm/run.sh)"
}

setup() {
  [ "$UM_MODE" != none ] || skip "${UM_SKIP:-needs root, useradd, setpriv, unshare, jq and python3}"
  requires_fsrun_command run
  ID=su-$$-$RANDOM$RANDOM
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

# um_cat FILE...: cat where the manager runs (its pids and its cgroup paths)
um_cat() {
  um_here cat "$@"
}

# um_check_scope: after run_detached, the container is the scope $UNIT of the user's manager,
# below its cgroup, with the init and the limits in it
um_check_scope() {
  local pid scope_cg
  pid=$(user_fsrun state "$ID" | jq -r .pid)
  [ "$pid" -gt 0 ]
  # where the manager lives
  [ "$(as_user systemctl --user show -P ControlGroup)" = "$UM_CG" ]
  scope_cg=$UM_CG/user.slice/$UNIT
  # the init is in the scope, and the manager knows the scope with it in it
  [ "$(um_cat "/proc/$pid/cgroup")" = "0::$scope_cg" ]
  [ "$(unit_prop "$UNIT" ActiveState)" = active ]
  [ "$(unit_prop "$UNIT" ControlGroup)" = "$scope_cg" ]
  # the limits, in the files and in the unit
  [ "$(um_cat "/sys/fs/cgroup$scope_cg/memory.max")" = 67108864 ]
  [ "$(um_cat "/sys/fs/cgroup$scope_cg/pids.max")" = 77 ]
  [ "$(unit_prop "$UNIT" MemoryMax)" = 67108864 ]
  [ "$(unit_prop "$UNIT" TasksMax)" = 77 ]
  [ "$(user_fsrun state "$ID" | jq -r .status)" = running ]
}

# um_check_update: after run_detached, update changes the files and tells the manager
um_check_update() {
  local dir=/sys/fs/cgroup$UM_CG/user.slice/$UNIT
  run user_fsrun update --memory 100663296 --pids-limit 88 "$ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(um_cat "$dir/memory.max")" = 100663296 ]
  [ "$(um_cat "$dir/pids.max")" = 88 ]
  [ "$(unit_prop "$UNIT" MemoryMax)" = 100663296 ]
  [ "$(unit_prop "$UNIT" TasksMax)" = 88 ]
}

# um_check_delete: after run_detached, delete leaves no unit, no cgroup and no process
um_check_delete() {
  local pid state tries=50 dir=/sys/fs/cgroup$UM_CG/user.slice/$UNIT
  pid=$(user_fsrun state "$ID" | jq -r .pid)
  um_here test -d "$dir"
  run user_fsrun delete --force "$ID"
  [ "$status" -eq 0 ]
  ! um_here kill -0 "$pid" 2>/dev/null || false
  ! um_here test -e "$dir" || false
  [ ! -e "$UM_DIR/state/$ID" ]
  [ -z "$(pgrep -u "$UM_UID" -x sleep)" ]
  # an empty scope ends on its own; give the manager (slow under emulation) a moment
  while state=$(unit_prop "$UNIT" ActiveState) && [ "$state" = active ] && [ "$tries" -gt 0 ]; do
    sleep 0.2
    tries=$((tries - 1))
  done
  [ "$state" = inactive ]
}

# um_create_delete_loop N: N creates and deletes in a row of the scope fsrun-ID-I.scope in the
# manager's user.slice, each checked: the init in its scope with the limit, no cgroup and no init
# left after its delete
um_create_delete_loop() {
  # no cgroupsPath: the scope fsrun-ID.scope in user.slice of the manager
  jq 'del(.linux.cgroupsPath)' "$UBUNDLE/config.json" >"$UBUNDLE/config.new"
  chown "$UM_UID:$UM_GID" "$UBUNDLE/config.new"
  mv "$UBUNDLE/config.new" "$UBUNDLE/config.json"
  local i id pid cg dir start=$SECONDS out=$UM_DIR/loop-$ID.out
  LOOP_IDS=()
  for i in $(seq "$1"); do
    id=$ID-$i
    LOOP_IDS=("$id") # the one teardown may have to delete
    dir=/sys/fs/cgroup$UM_CG/user.slice/fsrun-$id.scope
    in_manager "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup create --bundle "$UBUNDLE" \
      --pid-file "$UM_DIR/run/loop.pid" "$id" </dev/null >"$out" 2>&1 ||
      { cat "$out"; echo "create $i of $1 failed"; false; }
    pid=$(cat "$UM_DIR/run/loop.pid")
    cg=$(um_cat "/proc/$pid/cgroup")
    [ "$cg" = "0::$UM_CG/user.slice/fsrun-$id.scope" ] || { echo "create $i: the init is in $cg"; false; }
    [ "$(um_cat "$dir/memory.max")" = 67108864 ] || { echo "create $i: memory.max"; false; }
    user_fsrun delete --force "$id" || { echo "delete $i failed"; false; }
    ! um_here test -e "$dir" || { echo "delete $i left $dir"; false; }
    um_here kill -0 "$pid" 2>/dev/null && { echo "delete $i left the init $pid"; false; }
  done
  echo "# $1 creates and deletes in $((SECONDS - start)) s" >&3
}

# um_logind_setup_file: in the cgroup v2 VM, systemd booted (systemd-boot.bash) with the system
# bus and systemd-logind, a user made, and its manager started the way a desktop starts it:
# `loginctl enable-linger` (logind asks the system manager for user-runtime-dir@UID.service and
# user@UID.service); returns once that manager says it is running. Elsewhere UM_MODE=none.
um_logind_setup_file() {
  UM_MODE=none SD_MODE=none
  UM_SKIP="needs the cgroup v2 VM (tests/vm/run.sh) to boot systemd with dbus-daemon and systemd-logind"
  export UM_MODE SD_MODE UM_SKIP
  sd_can_boot_in_vm || return 0
  local cmd
  for cmd in useradd setpriv jq loginctl dbus-daemon /lib/systemd/systemd-logind; do
    command -v "$cmd" >/dev/null || { UM_SKIP="needs $cmd"; return 0; }
  done
  um_make_user || return 1
  export SD_MODE=vm
  _sd_boot_in_vm dbus.socket systemd-logind.service || return 1
  # the boot must not have run sysinit.target's services on what is shared with the VM
  [ "$(in_sd systemctl show -P ActiveState sysinit.target)" = inactive ] ||
    { echo "the booted systemd started sysinit.target" >&2; return 1; }
  in_sd loginctl enable-linger "$UM_USER" || return 1
  export UM_RUNTIME=/run/user/$UM_UID
  local i state=
  for i in $(seq 600); do
    state=$(as_user systemctl --user show -P SystemState 2>/dev/null) || state=
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.5
  done
  if [ "$state" != running ] && [ "$state" != degraded ]; then
    echo "user@$UM_UID.service did not come up (state '$state'):" >&2
    in_sd systemctl --no-pager status "user-runtime-dir@$UM_UID.service" "user@$UM_UID.service" >&2
    dmesg | grep -iE 'systemd|logind|dbus' | tail -40 >&2
    return 1
  fi
  UM_CG=$(as_user systemctl --user show -P ControlGroup) || return 1
  export UM_CG UM_MODE=logind
}

# um_logind_teardown_file: removes what um_logind_setup_file made, from what exists rather than
# from UM_MODE: a set-up that failed half-way (useradd, the boot, the linger, the manager) leaves
# UM_MODE at none or user with a user, a booted systemd or a linger mark behind it
um_logind_teardown_file() {
  sd_kill_booted
  # the linger mark would start a manager for this (removed) user at the next logind boot
  rm -f "/var/lib/systemd/linger/$UM_USER"
  um_remove_user
}
