#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user (cgroup-systemd.c, runc's systemdUser): fsrun asks the
# user's own systemd manager, through $XDG_RUNTIME_DIR/systemd/private, for the scope; the scope
# lives below the manager's cgroup (its ControlGroup property), the container's init is in it, the
# limits land in it, update tells the manager, and delete leaves no unit and no cgroup (50 creates
# in a row: systemd-user-runs.bats). Without a manager, or with one that does not answer, a create
# that asks for limits fails with one line. The set-up is in systemd-user-helpers.bash.
#
# setup_file starts a user manager for a user made for this file: `systemd --user` as that user,
# in a cgroup of its own that root delegates to it (chowned, as user@.service's Delegate=yes does),
# at a path that is not the usual user@UID.service one, so the test shows that fsrun asks the
# manager where it lives. The manager only needs /run/systemd/system to exist ("booted with
# systemd"): a private mount namespace gives it that, nothing else sees it. It needs no bus daemon
# (fsrun and systemctl use its private socket). setup_file waits until the manager says it is
# running (SystemState) before any test talks to it. The user's fsrun runs from a cgroup inside
# the manager's tree (the manager can only move processes it owns the way to), as podman's conmon
# runs in a scope of the user's manager. The manager needs root and cgroup v2 at /sys/fs/cgroup:
# the cgroup v2 VM (tests/vm/run.sh) has both. The tests without a manager run anywhere as root.

load helpers
load systemd-user-helpers

@test "systemd user manager: the container is a scope of the user's manager, below its cgroup, with the limits" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  # where the manager lives: not the usual user@UID.service
  [[ $UM_CG == /fsrun-user-manager-* ]]
  um_check_scope
}

@test "systemd user manager: update tells the user's manager the new limits" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  um_check_update
}

@test "systemd user manager: delete leaves no unit, no cgroup and no process" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  um_check_delete
}

@test "systemd user manager: a create it cannot serve fails naming the unit and leaves nothing" {
  requires_manager
  # from outside the manager's tree, with no system manager to ask for the move (the VM)
  [ ! -d /run/systemd/system ] || skip "a system manager would move the init for the user"
  # output to a file, not bats' pipe: a container that did start would hold that open
  status=0
  as_user "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup run -d --bundle "$UBUNDLE" "$ID" \
    </dev/null >"$UM_DIR/run-$ID.out" 2>&1 || status=$?
  output=$(cat "$UM_DIR/run-$ID.out")
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"systemd: start the scope \`$UNIT\`: the job ended with \`failed\` (see \`systemctl --user status $UNIT\`)"* ]]
  [ ! -e "$UM_DIR/state/$ID" ]
  [ ! -e "/sys/fs/cgroup$UM_CG/user.slice/$UNIT" ]
  [ -z "$(pgrep -u "$UM_UID" -x sleep)" ]
}

# user_create ENV-ARG...: the user's `--systemd-cgroup create` under `env ENV-ARG...`; $status and
# $output (through a file: a container that started would hold bats' pipe open)
user_create() {
  local out=$UM_DIR/create-$ID.out
  status=0
  as_user env "$@" "$FSRUN" --root "$UM_DIR/state" --systemd-cgroup create --bundle "$UBUNDLE" \
    "$ID" </dev/null >"$out" 2>&1 || status=$?
  output=$(cat "$out")
  echo "$output"
}

# nothing of the container: no state, no process of the user's, no scope
assert_nothing_left() {
  [ ! -e "$UM_DIR/state/$ID" ]
  [ -z "$(pgrep -u "$UM_UID" -x sleep)" ]
  [ ! -e "/sys/fs/cgroup/user.slice/fsrun-$ID.scope" ]
}

@test "--systemd-cgroup as a user, limits and no user manager: one line, exit 1, nothing left" {
  local want="--systemd-cgroup: linux.resources sets limits, but no systemd user manager runs to make the scope"
  user_create XDG_RUNTIME_DIR="$UM_DIR/norun"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: $want (no \`$UM_DIR/norun/systemd/private\`)" ]
  assert_nothing_left
  user_create -u XDG_RUNTIME_DIR
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: $want (XDG_RUNTIME_DIR is not set)" ]
  assert_nothing_left
  # without limits there is nothing to lose: the container goes on without a scope, as before
  jq 'del(.linux.resources)' "$UBUNDLE/config.json" >"$UBUNDLE/config.new"
  chown "$UM_UID:$UM_GID" "$UBUNDLE/config.new"
  mv "$UBUNDLE/config.new" "$UBUNDLE/config.json"
  user_create XDG_RUNTIME_DIR="$UM_DIR/norun"
  [ "$status" -eq 0 ]
  [ "$(user_fsrun state "$ID" | jq -r .status)" = created ]
}

@test "--systemd-cgroup as a user, a manager that does not answer: one line after the 5 s call timeout, nothing left" {
  # a socket that takes the authentication (BEGIN, then OK, as systemd does) and answers no call
  as_user mkdir -p "$UM_DIR/norun/systemd"
  as_user python3 -c '
import os, socket, sys
with open(sys.argv[2], "w") as f:
    f.write(str(os.getpid()))
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    got = b""
    while b"BEGIN\r\n" not in got:
        d = c.recv(4096)
        if not d:
            break
        got += d
    c.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
' "$UM_DIR/norun/systemd/private" "$UM_DIR/norun/fake.pid" </dev/null >/dev/null 2>&1 3>&- &
  local i starter=$!
  # its pid, once it wrote it (the background job is the shell running as_user, not python)
  for i in $(seq $((WAIT_MAX_S * 10))); do
    [ -S "$UM_DIR/norun/systemd/private" ] && break
    kill -0 "$starter" 2>/dev/null || break
    sleep 0.1
  done
  FAKE_PID=$(cat "$UM_DIR/norun/fake.pid")
  [ -S "$UM_DIR/norun/systemd/private" ]
  user_create XDG_RUNTIME_DIR="$UM_DIR/norun"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: --systemd-cgroup: the systemd user manager: Get: no reply from D-Bus within 5000 ms: Connection timed out" ]
  assert_nothing_left
}
