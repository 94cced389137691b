#!/usr/bin/env bats
# The run.fsrun.landlock annotation (landlock.c), observed from inside the container: writes outside
# readWrite fail with EACCES, TCP connects only reach the listed ports, bad annotations are refused
# before anything is created.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  requires_host_command python3
  setup_bundle
  # A writable root and no_new_privs: only Landlock can refuse the writes below.
  update_config '.root.readonly = false | .process.noNewPrivileges = true'
}

teardown() {
  local pid
  for pid in ${LISTENER_PIDS:-}; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  teardown_bundle
}

# set_landlock JSON: annotations["run.fsrun.landlock"] = JSON (as the string the spec wants)
set_landlock() {
  update_config '.annotations["run.fsrun.landlock"] = ($rules | tojson)' --argjson rules "$1"
}

# listen_loopback VAR: starts a TCP listener on 127.0.0.1 that accepts forever (stopped in
# teardown) and sets VAR to its port. Not in $(...): the listener would hold the substitution open.
listen_loopback() {
  local portfile=$BATS_TEST_TMPDIR/port.$RANDOM
  python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]) + "\n")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.close()
' "$portfile" </dev/null >/dev/null 2>&1 &
  LISTENER_PIDS="${LISTENER_PIDS:-} $!"
  wait_for_file "$portfile"
  read -r "$1" <"$portfile"
}

@test "landlock: without the annotation, writing anywhere in the root works (control)" {
  run_in_container sh -c 'echo x > /outside && echo written'
  [ "$status" -eq 0 ]
  [ "$output" = written ]
  [ -e "$ROOTFS/outside" ]
}

# bats test_tags=kernel61
@test "landlock: a write outside readWrite fails with EACCES, inside works" {
  set_landlock '{"readOnly": ["/"], "readWrite": ["/tmp", "/dev/null"]}'
  run_in_container sh -c 'echo inside > /tmp/f && cat /tmp/f; echo x > /outside; echo "rc=$?"; cat /etc/passwd >/dev/null && echo read-ok'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *inside* ]]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" == *rc=1* ]]
  [[ "$output" == *read-ok* ]]
  [ ! -e "$ROOTFS/outside" ]
  [ -e "$ROOTFS/tmp/f" ]
}

@test "landlock: a path not listed at all cannot even be read" {
  set_landlock '{"readOnly": ["/bin", "/lib", "/usr"], "readWrite": ["/dev/null"]}'
  run_in_container sh -c 'cat /etc/passwd; echo "rc=$?"'
  echo "$output"
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" == *rc=1* ]]
}

@test "landlock: tcpConnect allows the listed loopback port and refuses another with EACCES" {
  local allowed denied rel major minor
  read -r rel </proc/sys/kernel/osrelease
  major=${rel%%.*} minor=${rel#*.} minor=${minor%%.*}
  ((major > 6 || (major == 6 && minor >= 7))) || skip "TCP rules need Linux 6.7 (Landlock ABI 4)"
  listen_loopback allowed
  listen_loopback denied
  # the host's network namespace, so that the listeners are reachable on 127.0.0.1
  update_config 'del(.linux.namespaces[] | select(.type == "network"))'
  set_landlock "{\"tcpConnect\": [$allowed], \"strict\": true}"
  run_in_container sh -c "nc -w 2 127.0.0.1 $allowed </dev/null; echo \"allowed=\$?\"; nc -w 2 127.0.0.1 $denied </dev/null; echo \"denied=\$?\""
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *allowed=0* ]]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" == *denied=1* ]]
}

@test "landlock: a malformed annotation is refused naming the field, nothing is left behind" {
  set_landlock '{"readOnly": ["/usr", "etc"]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *'annotations["run.fsrun.landlock"].readOnly[1]: expected an absolute path'* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "landlock: a misspelt key is an error" {
  set_landlock '{"readwrite": ["/tmp"]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *'unknown key `readwrite`'* ]]
}

@test "landlock: without noNewPrivileges or CAP_SYS_ADMIN the config is refused" {
  update_config '.process.noNewPrivileges = false'
  set_landlock '{"readWrite": ["/tmp"]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"set process.noNewPrivileges to true"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}
