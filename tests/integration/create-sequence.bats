#!/usr/bin/env bats
# The create/start sequence where fsrun differed from runc (issue 13, section 3): when `start`
# returns, a config that shares the caller's mount namespace, process.scheduler.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
}

teardown() {
  teardown_bundle
  # the scheduler test's parent cgroup, which fsrun made in every other hierarchy too
  local dir
  for dir in /sys/fs/cgroup/*/proctest$$ /sys/fs/cgroup/proctest$$; do
    [ ! -d "$dir" ] || rmdir "$dir"
  done
}

@test "create-sequence: start returns only once the process is exec'd, after the startContainer hooks (as runc)" {
  # The hook holds the init between the exec fifo and execve. It waits (bounded) for a marker that
  # the test makes only after `start` returned: it must never see it.
  update_config '.root.readonly = false | .hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c",
    "i=0; while [ $i -lt 30 ] && [ ! -e /marker ]; do sleep 0.1; i=$((i+1)); done; [ -e /marker ] && echo saw-marker >/tmp/hook || echo no-marker >/tmp/hook"]}]'
  set_process_args /bin/sleep 1000
  fsrun create --bundle "$BUNDLE" seq-start-$UNIQ
  pid=$(fsrun state seq-start-$UNIQ | jq -r .pid)
  fsrun start seq-start-$UNIQ
  # what a `kill` right now would reach: the user's process, no longer the runtime's init
  exe=$(readlink "/proc/$pid/exe")
  : >"$ROOTFS/marker"
  [ "$(cat "$ROOTFS/tmp/hook")" = no-marker ]
  [[ $exe == */bin/busybox ]]
  [ "$(fsrun state seq-start-$UNIQ | jq -r .status)" = running ]
  fsrun delete --force seq-start-$UNIQ
  assert_no_leftovers seq-start-$UNIQ
}

@test "create-sequence: USR1 or TERM sent as soon as start returns reaches the process (run.fsrun.init, a startContainer hook holding the init)" {
  # pid 1 drops a signal it has no handler for, so the process runs under fsrun's init, which
  # forwards them; the hook holds the init before the exec for a second, in which an early return
  # of start would let the signal reach the runtime's init instead
  update_config '.annotations["run.fsrun.init"] = "true" |
    .hooks.startContainer = [{"path": "/bin/sleep", "args": ["sleep", "1"]}]'
  set_process_args /bin/sleep 1000
  for sig in USR1 TERM; do
    fsrun create --bundle "$BUNDLE" "seq-sig-$sig-$UNIQ" </dev/null
    fsrun start "seq-sig-$sig-$UNIQ"
    fsrun kill "seq-sig-$sig-$UNIQ" "$sig"
    wait_for_status "seq-sig-$sig-$UNIQ" stopped
    fsrun delete "seq-sig-$sig-$UNIQ"
    assert_no_leftovers "seq-sig-$sig-$UNIQ"
  done
}

# no_mount_namespace: the config without a mount namespace, and without what would need one
no_mount_namespace() {
  update_config '.linux.namespaces |= map(select(.type != "mount")) | .mounts = [] |
    .root.readonly = false | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
}

@test "create-sequence: a config without a mount namespace leaves the caller's root and mounts as they were; the process is chrooted into the rootfs (as runc)" {
  no_mount_namespace
  set_process_args /bin/sh -c '[ -e /linuxrc ] && echo in-rootfs >/tmp/seen; sleep 1000'
  # in a mount namespace of the test's own: a binary that pivots would pivot only that one. No
  # mount another process makes arrives there, but one can go: a mount whose mount point another
  # run on the machine removes goes in every namespace (CI runs two suites at once). So a line
  # that went counts only while its mount point is still there.
  run unshare -m --propagation private bash -c '
    root=$(stat -c %d:%i /)
    mounts=$(cat /proc/self/mountinfo)
    changed() {
      [ "$(stat -c %d:%i /)" = "$root" ] || echo "root: $root -> $(stat -c %d:%i /)"
      diff <(echo "$mounts") /proc/self/mountinfo | while read -r sign _ _ _ _ point _; do
        [ "$sign" != ">" ] || echo "added: $point"
        [ "$sign" != "<" ] || [ ! -e "$point" ] || echo "removed: $point"
      done
    }
    "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" seq-nomnt-$UNIQ </dev/null >/dev/null 2>&1 || exit 1
    [ -z "$(changed)" ] && echo caller-unchanged || echo "caller-changed: $(changed)"
    "$FSRUN" --root "$FSRUN_ROOT" start seq-nomnt-$UNIQ || exit 1
    "$FSRUN" --root "$FSRUN_ROOT" exec seq-nomnt-$UNIQ /bin/sh -c "[ -e /linuxrc ] && echo exec-in-rootfs"
    [ -z "$(changed)" ] && echo still-unchanged || echo "changed-after-start: $(changed)"'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *caller-unchanged* ]]
  [[ $output == *exec-in-rootfs* ]]
  [[ $output == *still-unchanged* ]]
  [ "$(cat "$ROOTFS/tmp/seen")" = in-rootfs ]
  fsrun delete --force seq-nomnt-$UNIQ
  assert_no_leftovers seq-nomnt-$UNIQ
}

@test "create-sequence: without a mount namespace, mounts, maskedPaths, readonlyPaths and a read-only root are refused before anything is made" {
  update_config '.linux.namespaces |= map(select(.type != "mount"))'
  # refused_without_mntns: create in a mount namespace of the test's own (a binary that accepts
  # the config changes only that one); its one line of stderr in $output
  refused_without_mntns() {
    status=0
    unshare -m --propagation private "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" \
      seq-refuse-$UNIQ </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/err" || status=$?
    output=$(cat "$BATS_TEST_TMPDIR/err")
    [ "$status" -eq 1 ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
    [ ! -e "$FSRUN_ROOT/seq-refuse-$UNIQ" ]
  }
  refused_without_mntns
  [[ $output == *"config.json: mounts: needs a mount namespace"* ]]
  for filter in '.mounts = [] | .linux.readonlyPaths = [] | .linux.maskedPaths = ["/proc/kcore"]' \
    '.mounts = [] | .linux.maskedPaths = [] | .linux.readonlyPaths = ["/proc/sys"]' \
    '.mounts = [] | .linux.maskedPaths = [] | .linux.readonlyPaths = [] | .root.readonly = true'; do
    update_config "$filter"
    refused_without_mntns
    [[ $output == *"needs a mount namespace of the container's own"* ]]
  done
  assert_no_leftovers seq-refuse-$UNIQ
}

# sched_in_userns ID: a config with a user namespace and, on v1 with RT group scheduling, a parent
# cgroup of the test's own with a real-time budget (fsrun's default parent has none)
sched_in_userns() {
  update_config '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
  if [ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ]; then
    local rt_parent=/sys/fs/cgroup/cpu/proctest$$
    mkdir -p "$rt_parent"
    echo 20000 >"$rt_parent/cpu.rt_runtime_us"
    update_config '.linux.cgroupsPath = $p | .linux.resources.cpu = {"realtimeRuntime": 10000, "realtimePeriod": 1000000}' \
      --arg p "/proctest$$/$1"
  fi
}

@test "create-sequence: process.scheduler SCHED_FIFO in a user namespace is set by the runtime, which still has CAP_SYS_NICE" {
  # an init in a user namespace has no CAP_SYS_NICE where real-time policies need it: before, the
  # init set its own policy and failed with EPERM
  update_config '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 1}'
  sched_in_userns seq-sched
  run_in_container /bin/sh -c 'grep "^policy" /proc/self/sched'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output =~ ^policy\ +:\ +1$ ]]
}

@test "create-sequence: exec with process.scheduler SCHED_FIFO, or SCHED_RR with SCHED_FLAG_RESET_ON_FORK, in a user namespace" {
  # the exec child joins the user namespace, where it has no CAP_SYS_NICE: before, it set the policy
  # there and failed with EPERM; and the clone into the pid namespace dropped a reset-on-fork one
  sched_in_userns seq-sched-exec-$UNIQ
  set_process_args /bin/sleep 1000
  fsrun run -d --bundle "$BUNDLE" seq-sched-exec-$UNIQ </dev/null
  # the first grep is a child of the shell, the second the exec'd process itself
  jq '.process | .args = ["sh", "-c", "grep ^policy /proc/self/sched; exec grep ^policy /proc/self/sched"]
    | .scheduler = {"policy": "SCHED_FIFO", "priority": 1}' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/fifo.json"
  run fsrun exec -p "$BATS_TEST_TMPDIR/fifo.json" seq-sched-exec-$UNIQ
  echo "$output"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} =~ ^policy\ +:\ +1$ ]]
  [[ ${lines[1]} =~ ^policy\ +:\ +1$ ]]
  jq '.scheduler = {"policy": "SCHED_RR", "priority": 1, "flags": ["SCHED_FLAG_RESET_ON_FORK"]}' \
    "$BATS_TEST_TMPDIR/fifo.json" >"$BATS_TEST_TMPDIR/rr.json"
  run fsrun exec -p "$BATS_TEST_TMPDIR/rr.json" seq-sched-exec-$UNIQ
  echo "$output"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} =~ ^policy\ +:\ +0$ ]]
  [[ ${lines[1]} =~ ^policy\ +:\ +2$ ]]
  fsrun delete --force seq-sched-exec-$UNIQ
  assert_no_leftovers seq-sched-exec-$UNIQ
}
