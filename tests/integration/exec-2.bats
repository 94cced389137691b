#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# exec, continued (exec.c, with status.c, terminal.c, caps.c): the regressions of the exec review.
# exec uses the config stored at create, not the bundle's (which may change or vanish); a process
# that dies before execve is a failed exec, never a pid in --pid-file; the pty belongs to the
# process's user; ambient capabilities are cleared with one prctl; on cgroup v2, exec into a
# container whose cgroup is no longer a leaf joins the init's cgroup.

load helpers

setup() {
  requires_root
  requires_fsrun_command exec
  setup_bundle
  update_config '.root.readonly = false'
  CONTAINER_ID=exec2-$$-$RANDOM$RANDOM
}

teardown() {
  [ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2>/dev/null
  [ -n "${EXEC_PID:-}" ] && kill -9 "$EXEC_PID" 2>/dev/null
  teardown_bundle
}

# start_container: $CONTAINER_ID runs `sleep` detached; sets INIT_PID (host pid of its init)
start_container() {
  set_process_args sleep 100000
  fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" running
  INIT_PID=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  [ "$INIT_PID" -gt 0 ]
}

# ---- the config stored at create -----------------------------------------------------------

@test "exec-2: exec uses the config create stored, not the bundle's config.json changed since" {
  update_config '.process.env += ["FROM_CREATE=1"]'
  start_container
  # the state dir keeps config.json's bytes as create read them, 0600
  cmp "$BUNDLE/config.json" "$FSRUN_ROOT/$CONTAINER_ID/config.json"
  [ "$(stat -c %a "$FSRUN_ROOT/$CONTAINER_ID/config.json")" = 600 ]
  # containerd and podman rewrite or remove bundle files after create
  update_config '.process.user = {"uid": 1234, "gid": 1234} | .process.env = ["CHANGED=1"]
    | .process.cwd = "/no/such/dir" | .linux.namespaces = []'
  run fsrun exec "$CONTAINER_ID" sh -c 'echo "$(id -u):$(id -g) ${FROM_CREATE:-unset} ${CHANGED:-unset} $(pwd)"; readlink /proc/self/ns/mnt; readlink /proc/self/ns/pid'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "0:0 1 unset /" ]
  # still the container's namespaces, though the changed file lists none
  [ "${lines[1]}" = "$(readlink /proc/$INIT_PID/ns/mnt)" ]
  [ "${lines[2]}" = "$(readlink /proc/$INIT_PID/ns/pid)" ]
}

@test "exec-2: exec works after the bundle's config.json was removed" {
  start_container
  rm "$BUNDLE/config.json"
  run fsrun exec "$CONTAINER_ID" sh -c 'echo in; readlink /proc/self/ns/mnt'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = in ]
  [ "${lines[1]}" = "$(readlink /proc/$INIT_PID/ns/mnt)" ]
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/d.pid" "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/d.pid")
  _fsrun_pid_alive "$EXEC_PID"
  # delete does not need it either
  fsrun delete --force "$CONTAINER_ID"
  EXEC_PID=
  assert_no_leftovers "$CONTAINER_ID"
}

# ---- a death before execve is a failed exec --------------------------------------------------

@test "exec-2: --detach with a process killed before execve exits 1 and writes no --pid-file" {
  # without noNewPrivileges the filter is loaded before the user switch: only exec's setresuid to
  # uid 1234 (the init stays root) is killed, a death without any message from the process
  update_config '.process.noNewPrivileges = false
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["setresuid"],
        "action": "SCMP_ACT_KILL", "args": [{"index": 0, "value": 1234, "op": "SCMP_CMP_EQ"}]}]}'
  start_container
  run fsrun exec --detach --user 1234 --pid-file "$BATS_TEST_TMPDIR/k.pid" "$CONTAINER_ID" sleep 100000
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "sleep": the process died before execve (killed by signal 31'* ]]
  [ ! -e "$BATS_TEST_TMPDIR/k.pid" ]
  # in the foreground too: a setup failure (1), not the status of a command that never ran
  run fsrun exec --user 1234 "$CONTAINER_ID" true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"died before execve"* ]]
  # the control: another uid passes the filter
  run fsrun exec --user 1235 "$CONTAINER_ID" id -u
  [ "$status" -eq 0 ]
  [ "$output" = 1235 ]
  # nothing is left running but the init
  run fsrun ps --format json "$CONTAINER_ID"
  [ "$(jq length <<<"$output")" -eq 1 ]
}

@test "exec-2: --detach --pid-file holds the running process even when the filter refuses what the runtime does before it" {
  # with noNewPrivileges the filter is loaded after the runtime's setup, right before the clone
  # into the pid namespace (review19 #5; before, it was the very last step, and a profile refusing
  # prctl(PR_SET_PDEATHSIG) passed here): a profile that refuses prctl(PR_SET_DUMPABLE) must not
  # make exec's own setup fail
  update_config '.process.noNewPrivileges = true
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["prctl"],
        "action": "SCMP_ACT_ERRNO", "args": [{"index": 0, "value": 4, "op": "SCMP_CMP_EQ"}]}]}'
  start_container
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/p.pid" "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/p.pid")
  [[ $EXEC_PID =~ ^[0-9]+$ ]]
  _fsrun_pid_alive "$EXEC_PID"
  [ "$(readlink /proc/$EXEC_PID/ns/pid)" = "$(readlink /proc/$INIT_PID/ns/pid)" ]
  [ "$(cmdline_of "$EXEC_PID")" = "sleep 100000 " ]
  # and the filter applies to it
  run fsrun exec "$CONTAINER_ID" sh -c 'grep Seccomp: /proc/self/status'
  [[ $output == *"Seccomp:"*2* ]]
}

@test "exec-2: --detach with a missing or non-executable command exits 1 with runc's words, no --pid-file" {
  start_container
  run fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/m.pid" "$CONTAINER_ID" no-such-binary
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "no-such-binary": no such file or directory'* ]]
  [ ! -e "$BATS_TEST_TMPDIR/m.pid" ]
  run fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/m.pid" "$CONTAINER_ID" /etc/passwd
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "/etc/passwd": permission denied'* ]]
  [ ! -e "$BATS_TEST_TMPDIR/m.pid" ]
  run fsrun ps --format json "$CONTAINER_ID"
  [ "$(jq length <<<"$output")" -eq 1 ]
}

# ---- the pty belongs to the process's user -------------------------------------------------

@test "exec-2: exec --tty: the pty is the process user's, group tty (devpts gid=5), mode 0620" {
  start_container
  start_recvtty
  fsrun exec --tty --detach --console-socket "$SOCK" --user 1000:1000 "$CONTAINER_ID" \
    sh -c 'echo "owner $(stat -L -c "%u %g %a" /proc/self/fd/0) id $(id -u):$(id -g)"'
  recvtty_output
  echo "$output"
  [[ $output == *"owner 1000 5 620 id 1000:1000"* ]]
  # root's pty in the foreground relay: unchanged
  run bash -c '"$FSRUN" --root "$FSRUN_ROOT" exec --tty "$0" stat -L -c "%u %g %a" /proc/self/fd/0 </dev/null' "$CONTAINER_ID"
  output=${output//$'\r'/}
  [ "$status" -eq 0 ]
  [ "$output" = "0 5 620" ]
}

@test "exec-2: terminal init with process.user 1000: its pty (and /dev/console) is uid 1000, mode 0620" {
  update_config '.process.terminal = true | .process.user = {"uid": 1000, "gid": 1000}'
  set_process_args sh -c 'echo "owner $(stat -L -c "%u %g %a" /proc/self/fd/0)"; echo "console $(stat -L -c "%u %g %a" /dev/console)"'
  start_recvtty
  fsrun run --detach --bundle "$BUNDLE" --console-socket "$SOCK" "$CONTAINER_ID"
  recvtty_output
  echo "$output"
  [[ $output == *"owner 1000 5 620"* ]]
  [[ $output == *"console 1000 5 620"* ]]
}

@test "exec-2: a devpts without gid= gives the pty the process's gid; mode 0620 either way" {
  update_config '(.mounts[] | select(.destination == "/dev/pts") | .options) |= map(select(startswith("gid=") or startswith("mode=") | not))'
  jq -e '.mounts[] | select(.destination == "/dev/pts") | .options | all(startswith("gid=") | not)' "$BUNDLE/config.json"
  start_container
  start_recvtty
  fsrun exec --tty --detach --console-socket "$SOCK" --user 1000:1001 "$CONTAINER_ID" \
    sh -c 'echo "owner $(stat -L -c "%u %g %a" /proc/self/fd/0)"'
  recvtty_output
  echo "$output"
  [[ $output == *"owner 1000 1001 620"* ]]
}

# ---- ambient capabilities ------------------------------------------------------------------

@test "exec-2: ambient capabilities are cleared with one prctl, and CapAmb is what the config says" {
  requires_host_command strace
  start_container
  # (LeakSanitizer cannot run under ptrace: off for this one command of a sanitizer build)
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=prctl -o "$BATS_TEST_TMPDIR/strace.out" \
    "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" true
  grep PR_CAP_AMBIENT "$BATS_TEST_TMPDIR/strace.out" || true
  [ "$(grep -c PR_CAP_AMBIENT "$BATS_TEST_TMPDIR/strace.out")" -eq 1 ]
  grep -q 'PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL' "$BATS_TEST_TMPDIR/strace.out"
  # a caller with an ambient capability: none of it reaches the process
  run setpriv --inh-caps +net_raw --ambient-caps +net_raw \
    "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" grep CapAmb /proc/self/status
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "CapAmb:	0000000000000000" ]
}

@test "exec-2: ambient capabilities the config asks for are kept (uid 1000), the caller's are not" {
  update_config '.process.user = {"uid": 1000, "gid": 1000}
    | .process.capabilities.inheritable = ["CAP_NET_BIND_SERVICE", "CAP_NET_RAW"]
    | .process.capabilities.permitted += ["CAP_NET_RAW"]
    | .process.capabilities.bounding += ["CAP_NET_RAW"]
    | .process.capabilities.ambient = ["CAP_NET_BIND_SERVICE"]'
  start_container
  run setpriv --inh-caps +net_raw --ambient-caps +net_raw \
    "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" grep CapAmb /proc/self/status
  echo "$output"
  [ "$status" -eq 0 ]
  # CAP_NET_BIND_SERVICE is 10; CAP_NET_RAW (13) is inheritable and permitted but not asked for
  [ "$output" = "CapAmb:	0000000000000400" ]
}

# ---- cgroup v2: the container's cgroup is no longer a leaf ----------------------------------

# nest_init: moves the init into a sub-cgroup and enables a domain controller (memory: not one
# that threaded cgroups accept, which would leave the cgroup usable) for the sub-cgroups, as
# systemd in a container does; sets CG (the container's cgroup directory)
nest_init() {
  CG=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/$INIT_PID/cgroup)
  [ -d "$CG" ]
  mkdir "$CG/init.scope"
  echo "$INIT_PID" >"$CG/init.scope/cgroup.procs"
  grep -qw memory "$CG/cgroup.controllers" || skip "the memory controller is not available in $CG"
  echo +memory >"$CG/cgroup.subtree_control"
  grep -qw memory "$CG/cgroup.subtree_control"
}

# bats test_tags=cgroupv2
@test "exec-2: cgroup v2: exec into a container whose cgroup is no leaf joins the init's sub-cgroup" {
  requires_cgroup_v2
  start_container
  nest_init
  # the kernel refuses new processes in $CG itself now
  run sh -c "echo \$\$ >'$CG/cgroup.procs'"
  [ "$status" -ne 0 ]
  run fsrun exec "$CONTAINER_ID" sh -c 'cat /proc/self/cgroup /proc/1/cgroup'
  echo "$output"
  [ "$status" -eq 0 ]
  # the init's cgroup, as both see it from inside
  [ "${lines[0]}" = "${lines[1]}" ]
  [[ ${lines[0]} == */init.scope ]]
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/c.pid" "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/c.pid")
  grep -qx "$EXEC_PID" "$CG/init.scope/cgroup.procs"
  # delete removes the nested cgroups too
  fsrun delete --force "$CONTAINER_ID"
  EXEC_PID=
  [ ! -d "$CG" ]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "exec-2: cgroup v2: an init moved out of the container's cgroup is not followed" {
  requires_cgroup_v2
  start_container
  nest_init
  # the init leaves for a cgroup beside the container's: exec must not follow it there
  OUTSIDE=$(dirname "$CG")/$CONTAINER_ID-outside
  mkdir "$OUTSIDE"
  echo "$INIT_PID" >"$OUTSIDE/cgroup.procs"
  run fsrun exec "$CONTAINER_ID" true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"not a leaf"*"is not below the container's"* ]]
  echo "$INIT_PID" >"$CG/init.scope/cgroup.procs"
  rmdir "$OUTSIDE"
}
