#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user, 50 times in a row against a real `systemd --user` (the
# set-up of systemd-user.bats, in systemd-user-helpers.bash). Before dbus.c sent BEGIN with AUTH,
# one create in three waited 25 s for the manager's first answer and ran without a cgroup; each of
# the 50 here must have its scope, its limit, and leave no cgroup and no process. It takes about
# 10 minutes in the cgroup v2 VM (588 s measured, with other jobs on the host).

load helpers
load systemd-user-helpers

@test "systemd user manager: 50 creates in a row, each init in its scope with the limits, each delete leaves no cgroup" {
  requires_manager
  # no cgroupsPath: the scope fsrun-ID.scope in user.slice of the manager
  jq 'del(.linux.cgroupsPath)' "$UBUNDLE/config.json" >"$UBUNDLE/config.new"
  chown "$UM_UID:$UM_GID" "$UBUNDLE/config.new"
  mv "$UBUNDLE/config.new" "$UBUNDLE/config.json"
  local i id pid cg dir start=$SECONDS out=$UM_DIR/loop-$ID.out
  LOOP_IDS=()
  for i in $(seq 50); do
    id=$ID-$i
    LOOP_IDS=("$id") # the one teardown may have to delete
    dir=/sys/fs/cgroup$UM_CG/user.slice/fsrun-$id.scope
    in_manager "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup create --bundle "$UBUNDLE" \
      --pid-file "$UM_DIR/run/loop.pid" "$id" </dev/null >"$out" 2>&1 ||
      { cat "$out"; echo "create $i of 50 failed"; false; }
    pid=$(cat "$UM_DIR/run/loop.pid")
    cg=$(cat "/proc/$pid/cgroup")
    [ "$cg" = "0::$UM_CG/user.slice/fsrun-$id.scope" ] || { echo "create $i: the init is in $cg"; false; }
    [ "$(cat "$dir/memory.max")" = 67108864 ] || { echo "create $i: memory.max"; false; }
    user_fsrun delete --force "$id" || { echo "delete $i failed"; false; }
    [ ! -e "$dir" ] || { echo "delete $i left $dir"; false; }
    kill -0 "$pid" 2>/dev/null && { echo "delete $i left the init $pid"; false; }
  done
  echo "# 50 creates and deletes in $((SECONDS - start)) s" >&3
}
