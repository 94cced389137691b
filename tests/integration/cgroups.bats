#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# Cgroups (cgroup.c, cgroup-v1.c, cgroup-v2.c, cgroup-systemd.c, ebpf.c): the limits of
# config.json land in the cgroup files and hold, devices are denied by default, the path forms
# (relative, absolute, systemd slice:prefix:name) resolve as documented, errors name the resource
# and the file, and delete leaves no cgroup directory in any hierarchy.
# v1 tests run on the hybrid development host; requires_cgroup_v2 tests run in the cgroup v2 VM.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  EXTRA_CGROUP_DIRS=()
  STRAY=
}

teardown() {
  # a process a test moved out of the container's cgroups
  [ -z "${STRAY:-}" ] || kill -9 "$STRAY" 2>/dev/null || true
  teardown_bundle
  local pattern d
  # parents made by tests that chose their own cgroupsPath (deepest first); the patterns are
  # globbed now, when the directories exist
  for pattern in "${EXTRA_CGROUP_DIRS[@]}"; do
    for d in $pattern; do
      rmdir "$d" 2>/dev/null || true
    done
  done
}

# cg_dir CONTROLLER [PATH]: the container's directory for a v1 controller, or the v2 directory.
cg_dir() {
  local path=${2:-/fsrun/$CONTAINER_ID}
  if [ "$(cgroup_mode)" = unified ]; then
    echo "/sys/fs/cgroup$path"
  else
    echo "/sys/fs/cgroup/$1$path"
  fi
}

# cg_read CONTROLLER FILE: the value of a file of the container's cgroup
cg_read() {
  cat "$(cg_dir "$1")/$2"
}

# start_detached CMD...: `run -d` with process.args = CMD; sets CONTAINER_ID and INIT_PID.
start_detached() {
  set_process_args "$@" || return 1
  CONTAINER_ID=${CONTAINER_ID:-cg-$$-$RANDOM$RANDOM}
  if ! fsrun "${FSRUN_GLOBAL_ARGS[@]}" run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null \
    >"$BATS_TEST_TMPDIR/run.out" 2>&1; then
    cat "$BATS_TEST_TMPDIR/run.out"
    return 1
  fi
  wait_for_status "$CONTAINER_ID" running || return 1
  INIT_PID=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
}

# cgroup directories on the host whose path ends in SUFFIX, in any hierarchy
cgroup_dirs_ending_in() {
  find /sys/fs/cgroup -maxdepth 8 -type d -path "*$1" 2>/dev/null
}

FSRUN_GLOBAL_ARGS=()

@test "v1: memory, pids and cpu limits from config.json are in the controllers' files" {
  requires_cgroup_v1
  update_config '.linux.resources.memory = {"limit": 67108864, "reservation": 33554432, "swap": 67108864}
    | .linux.resources.pids = {"limit": 17}
    | .linux.resources.cpu = {"shares": 512, "quota": 20000, "period": 100000, "cpus": "0", "mems": "0"}'
  start_detached sleep 1000

  [ "$(cg_read memory memory.limit_in_bytes)" = 67108864 ]
  [ "$(cg_read memory memory.soft_limit_in_bytes)" = 33554432 ]
  if [ -e "$(cg_dir memory)/memory.memsw.limit_in_bytes" ]; then
    [ "$(cg_read memory memory.memsw.limit_in_bytes)" = 67108864 ]
  fi
  [ "$(cg_read pids pids.max)" = 17 ]
  [ "$(cg_read cpu cpu.shares)" = 512 ]
  [ "$(cg_read cpu cpu.cfs_quota_us)" = 20000 ]
  [ "$(cg_read cpu cpu.cfs_period_us)" = 100000 ]
  [ "$(cg_read cpuset cpuset.cpus)" = 0 ]
  [ "$(cg_read cpuset cpuset.mems)" = 0 ]

  # the init is in the container's cgroup of every hierarchy
  run cat "/proc/$INIT_PID/cgroup"
  echo "$output"
  [[ "$output" == *":memory:/fsrun/$CONTAINER_ID"* ]]
  [[ "$output" == *":pids:/fsrun/$CONTAINER_ID"* ]]
  [[ "$output" == *":cpu:/fsrun/$CONTAINER_ID"* ]]
  [[ "$output" == *":freezer:/fsrun/$CONTAINER_ID"* ]]
  if [ "$(cgroup_mode)" = hybrid ]; then
    # on a hybrid host the cgroup2 line points at the container too
    [[ "$output" == *"0::/fsrun/$CONTAINER_ID"* ]]
  fi

  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "v1: the device cgroup is deny-by-default plus the defaults and the spec's rules" {
  requires_cgroup_v1
  update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "w"}]'
  start_detached sleep 1000
  run cg_read devices devices.list
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"a *:* rwm"* ]]
  [[ "$output" == *"c 1:3 rwm"* ]]
  [[ "$output" == *"c 136:* rwm"* ]]
  [[ "$output" == *"c 1:11 w"* ]]
  fsrun delete --force "$CONTAINER_ID"
}

@test "v1: a container's cpuset has its parent's CPUs and memory nodes, in new and existing parents" {
  requires_cgroup_v1
  local top=/sys/fs/cgroup/cpuset/fsrun-test-cpuset-$UNIQ first second
  [ -d /sys/fs/cgroup/cpuset ] || skip "no v1 cpuset hierarchy"
  EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*/fsrun-test-cpuset-$UNIQ/mid" "/sys/fs/cgroup/*/fsrun-test-cpuset-$UNIQ")
  # first container: both levels above it are new (each gets its parent's values)
  first=cg-cs1-$$-$RANDOM$RANDOM
  CONTAINER_ID=$first
  update_config '.linux.cgroupsPath = $p' --arg p "/fsrun-test-cpuset-$UNIQ/mid/$first"
  start_detached sleep 1000
  [ "$(cat "$top/mid/$first/cpuset.cpus")" = "$(cat /sys/fs/cgroup/cpuset/cpuset.cpus)" ]
  [ "$(cat "$top/mid/$first/cpuset.mems")" = "$(cat /sys/fs/cgroup/cpuset/cpuset.mems)" ]
  # the levels fsrun made hand their values to new children themselves from now on
  [ "$(cat "$top/mid/cgroup.clone_children")" = 1 ]
  # second container: the parent exists; a container's own values still win over inherited ones
  second=cg-cs2-$$-$RANDOM$RANDOM
  CONTAINER_ID=$second
  update_config '.linux.cgroupsPath = $p | .linux.resources.cpu = {"cpus": "0"}' \
    --arg p "/fsrun-test-cpuset-$UNIQ/mid/$second"
  start_detached sleep 1000
  [ "$(cat "$top/mid/$second/cpuset.cpus")" = 0 ]
  [ "$(cat "$top/mid/$second/cpuset.mems")" = "$(cat /sys/fs/cgroup/cpuset/cpuset.mems)" ]
  grep -q "cpuset:/fsrun-test-cpuset-$UNIQ/mid/$second\$" "/proc/$INIT_PID/cgroup"
  fsrun delete --force "$first"
  fsrun delete --force "$second"
  [ ! -e "$top/mid/$first" ]
  [ ! -e "$top/mid/$second" ]
}

# bats test_tags=cgroupv2
@test "a process over the pids limit cannot fork" {
  update_config '.linux.resources.pids = {"limit": 4}'
  run_in_container sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; echo all-forked'
  echo "$output"
  [[ "$output" == *"can't fork: Resource temporarily unavailable"* ]]
  [[ "$output" != *all-forked* ]]
  [ "$status" -ne 0 ]

  # the same script without the limit forks them all
  update_config 'del(.linux.resources.pids)'
  run_in_container sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; echo all-forked'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *all-forked* ]]
}

# bats test_tags=cgroupv2
@test "a memory hog is OOM-killed and run exits 137" {
  update_config '.linux.resources.memory = {"limit": 67108864, "swap": 67108864}'
  # busybox tail keeps the last lines; /dev/zero has no newline, so its one line grows forever
  run_in_container tail /dev/zero
  echo "$output"
  [ "$status" -eq 137 ]
  assert_no_leftovers "$CONTAINER_ID"

  # the hog in a pipeline: the shell reports the killed tail
  run_in_container sh -c 'head -c 314572800 /dev/zero | tail'
  echo "$output"
  [ "$status" -eq 137 ]
}

# bats test_tags=cgroupv2
@test "delete leaves no cgroup directory in any hierarchy" {
  start_detached sh -c 'sleep 1000 & sleep 1000'
  run cgroup_dirs_ending_in "/fsrun/$CONTAINER_ID"
  echo "$output"
  [ -n "$output" ]
  if [ "$(cgroup_mode)" != unified ]; then
    # one per v1 hierarchy (and the cgroup2 mount on hybrid)
    [ "${#lines[@]}" -ge 5 ]
  fi
  # a straggler forked in the background must not keep the cgroup alive
  fsrun delete --force "$CONTAINER_ID"
  run cgroup_dirs_ending_in "/fsrun/$CONTAINER_ID"
  echo "$output"
  [ -z "$output" ]
  assert_no_leftovers "$CONTAINER_ID"
}

# The init joins its v1 hierarchies itself (`0` into each `tasks`, which spares the kernel's global
# threadgroup lock that a pid written to cgroup.procs takes) and, on a hybrid host, is cloned into
# its cgroup2 directory; with a user namespace the runtime still moves it (the files are the host
# root's). Either way the process is in the container's cgroup everywhere, and a cgroup namespace
# is made only after that (rooted there).
@test "v1: the init joins its cgroup through tasks itself, or is moved with a user namespace; its cgroup namespace is rooted there" {
  requires_cgroup_v1
  requires_host_command strace
  local trace=$BATS_TEST_TMPDIR/trace line n mode variant
  mode=$(cgroup_mode)
  set_process_args cat /proc/self/cgroup
  for variant in own userns; do
    if [ "$variant" = userns ]; then
      update_config '.linux.namespaces += [{"type": "user"}]
        | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
        | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
    fi
    # without a cgroup namespace the process sees its host paths
    cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/with-cgroupns.json"
    update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
    CONTAINER_ID=cg-join-$variant-$$-$RANDOM$RANDOM
    # (LeakSanitizer cannot run under ptrace: off for this command of a sanitizer build)
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
      run strace -f -qq -e trace=openat,clone3 -o "$trace" \
      "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
    echo "$variant: $output"
    [ "$status" -eq 0 ]
    n=0
    for line in "${lines[@]}"; do
      [[ "$line" == 0::* ]] && [ "$mode" != hybrid ] && continue
      [[ "$line" == *":/fsrun/$CONTAINER_ID" ]]
      n=$((n + 1))
    done
    [ "$n" -ge 5 ]
    grep -E 'tasks"|cgroup\.procs"|CLONE_INTO_CGROUP' "$trace" || true
    if [ "$variant" = own ]; then
      [ "$(grep -c 'cgroup\.procs", O_WRONLY' "$trace")" -eq 0 ]
      [ "$(grep -c "/fsrun/$CONTAINER_ID/tasks\", O_WRONLY" "$trace")" -ge 5 ]
    else
      grep -q "/fsrun/$CONTAINER_ID/cgroup\.procs\", O_WRONLY" "$trace"
    fi
    if [ "$mode" = hybrid ]; then
      grep -q 'clone3(.*CLONE_INTO_CGROUP' "$trace"
    fi
    assert_no_leftovers "$CONTAINER_ID"
    # with one, every path is its root
    cp "$BATS_TEST_TMPDIR/with-cgroupns.json" "$BUNDLE/config.json"
    run_in_container cat /proc/self/cgroup
    echo "$output"
    [ "$status" -eq 0 ]
    for line in "${lines[@]}"; do
      [[ "$line" == *":/" ]]
    done
  done
}

# delete removes each empty directory with one rmdir and falls back to listing and killing at the
# first busy one. A process outlives the init (no pid namespace) after it left the first
# hierarchies and the freezer's: delete must still find it through the others and kill it.
@test "v1: delete kills a process left in some of a stopped container's hierarchies" {
  requires_cgroup_v1
  local h first=() moved=()
  update_config '.linux.namespaces |= map(select(.type != "pid"))'
  start_detached sh -c 'sleep 1000 & exec sleep 1001'
  # `run -d` returns before the init has exec'd the shell, let alone its fork: the stray is waited for
  wait_until pgrep -P "$INIT_PID" -x sleep
  STRAY=$(pgrep -P "$INIT_PID" -x sleep)
  # the first two hierarchies in mount order and the freezer's: back to their roots
  for h in $(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup") print $5; break } }' /proc/self/mountinfo); do
    [ -d "$h/fsrun/$CONTAINER_ID" ] && [ "${#first[@]}" -lt 2 ] && first+=("$h")
  done
  for h in "${first[@]}" /sys/fs/cgroup/freezer; do
    [ -d "$h/fsrun/$CONTAINER_ID" ] || continue
    echo "$STRAY" >"$h/cgroup.procs"
    moved+=("$h")
  done
  [ "${#moved[@]}" -ge 2 ]
  kill -9 "$INIT_PID"
  wait_for_status "$CONTAINER_ID" stopped
  run fsrun delete "$CONTAINER_ID"
  echo "$output"
  [ "$status" -eq 0 ]
  wait_until pid_gone "$STRAY"
  run cgroup_dirs_ending_in "/fsrun/$CONTAINER_ID"
  echo "$output"
  [ -z "$output" ]
  assert_no_leftovers "$CONTAINER_ID"
}

# cgroup.kill that cannot be written (a delegated cgroup2 directory whose cgroup.kill is not the
# caller's, as systemd's Delegate=yes leaves it; here a read-only file bound over it in a private
# mount namespace) is no reason to give up: kill --all and delete --force freeze, signal each
# process of the cgroup and thaw. A process outlives the init (no pid namespace), so only the
# cgroup's kill reaches it. Seen to fail before (cgroup_kill_all returned cgroup.kill's error):
# kill --all exit 1 "Read-only file system", delete --force exit 1 after 10 s "1 process(es)
# still in the cgroup", the sleep alive both times. (Not tagged for the VM, whose suite is near its
# time limit: the same path on cgroup v2 runs there in rootless-delegated.bats, as the user.)
@test "kill --all and delete --force kill each process of the cgroup when its cgroup.kill cannot be written" {
  local mode cg2 how args
  mode=$(cgroup_mode)
  [ "$mode" != legacy ] || skip "needs a cgroup2 directory (cgroup.kill); this host is $mode"
  update_config '.linux.namespaces |= map(select(.type != "pid"))'
  : >"$BATS_TEST_TMPDIR/read-only"
  for how in "kill --all" "delete --force"; do
    CONTAINER_ID=cg-rokill-${how%% *}-$UNIQ
    start_detached sh -c 'sleep 1000 & exec sleep 1001'
    # `run -d` returns before the shell has forked (or even run): the stray is waited for
    wait_until pgrep -P "$INIT_PID" -x sleep
    STRAY=$(pgrep -P "$INIT_PID" -x sleep)
    cg2=/sys/fs/cgroup/fsrun/$CONTAINER_ID
    [ "$mode" = unified ] || cg2=/sys/fs/cgroup/unified/fsrun/$CONTAINER_ID
    [ -f "$cg2/cgroup.kill" ] || skip "no cgroup.kill on this kernel"
    args=(delete --force "$CONTAINER_ID")
    [ "$how" = "delete --force" ] || args=(kill --all "$CONTAINER_ID" KILL)
    run unshare -m --propagation private sh -c '
      mount --bind -o ro "$1" "$2/cgroup.kill" || exit 99
      ! (echo 1 >"$2/cgroup.kill") 2>/dev/null || exit 98
      shift 2 && exec "$@"' sh "$BATS_TEST_TMPDIR/read-only" "$cg2" \
      "$FSRUN" --root "$FSRUN_ROOT" "${args[@]}"
    echo "$how: $output"
    [ "$status" -eq 0 ]
    wait_until pid_gone "$STRAY"
    wait_until pid_gone "$INIT_PID"
    [ "$how" = "delete --force" ] || fsrun delete --force "$CONTAINER_ID"
    run cgroup_dirs_ending_in "/fsrun/$CONTAINER_ID"
    echo "$output"
    [ -z "$output" ]
    assert_no_leftovers "$CONTAINER_ID"
    STRAY=
  done
}

# bats test_tags=cgroupv2
@test "an absolute cgroupsPath is used as is" {
  CONTAINER_ID=cg-abs-$$-$RANDOM$RANDOM
  update_config '.linux.cgroupsPath = $p' --arg p "/fsrun-test-abs-$UNIQ/$CONTAINER_ID"
  if [ "$(cgroup_mode)" = unified ]; then
    EXTRA_CGROUP_DIRS=(/sys/fs/cgroup/fsrun-test-abs-$UNIQ)
  else
    EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*/fsrun-test-abs-$UNIQ")
  fi
  start_detached sleep 1000
  [ -d "$(cg_dir memory "/fsrun-test-abs-$UNIQ/$CONTAINER_ID")" ]
  [ -d "$(cg_dir pids "/fsrun-test-abs-$UNIQ/$CONTAINER_ID")" ]
  grep -q ":/fsrun-test-abs-$UNIQ/$CONTAINER_ID\$" "/proc/$INIT_PID/cgroup"
  [ ! -e "$(cg_dir memory "/fsrun/$CONTAINER_ID")" ]
  fsrun delete --force "$CONTAINER_ID"
  run cgroup_dirs_ending_in "/fsrun-test-abs-$UNIQ/$CONTAINER_ID"
  [ -z "$output" ]
}

# bats test_tags=cgroupv2
@test "a relative cgroupsPath goes under /fsrun" {
  CONTAINER_ID=cg-rel-$$-$RANDOM$RANDOM
  update_config '.linux.cgroupsPath = $p' --arg p "reltest-$UNIQ/$CONTAINER_ID"
  if [ "$(cgroup_mode)" = unified ]; then
    EXTRA_CGROUP_DIRS=(/sys/fs/cgroup/fsrun/reltest-$UNIQ)
  else
    EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*/fsrun/reltest-$UNIQ")
  fi
  start_detached sleep 1000
  [ -d "$(cg_dir memory "/fsrun/reltest-$UNIQ/$CONTAINER_ID")" ]
  grep -q ":/fsrun/reltest-$UNIQ/$CONTAINER_ID\$" "/proc/$INIT_PID/cgroup"
  fsrun delete --force "$CONTAINER_ID"
  run cgroup_dirs_ending_in "/reltest-$UNIQ/$CONTAINER_ID"
  [ -z "$output" ]
}

# bats test_tags=cgroupv2
@test "--systemd-cgroup maps slice:prefix:name onto the cgroupfs path systemd would use" {
  CONTAINER_ID=cg-sd-$$-$RANDOM$RANDOM
  # this run's slice (another suite may run at once): no `-` in its name, which would nest it
  local sl=fsrunt${UNIQ//-/}
  update_config '.linux.cgroupsPath = $p' --arg p "$sl-sub.slice:pfx:$CONTAINER_ID"
  local scope=/$sl.slice/$sl-sub.slice/pfx-$CONTAINER_ID.scope
  if [ "$(cgroup_mode)" = unified ]; then
    EXTRA_CGROUP_DIRS=(/sys/fs/cgroup/$sl.slice/$sl-sub.slice /sys/fs/cgroup/$sl.slice)
  else
    EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*/$sl.slice/$sl-sub.slice" "/sys/fs/cgroup/*/$sl.slice")
  fi
  FSRUN_GLOBAL_ARGS=(--systemd-cgroup)
  start_detached sleep 1000
  [ -d "$(cg_dir memory "$scope")" ]
  grep -q ":$scope\$" "/proc/$INIT_PID/cgroup"
  fsrun --systemd-cgroup delete --force "$CONTAINER_ID"
  run cgroup_dirs_ending_in "$scope"
  [ -z "$output" ]
}

@test "--systemd-cgroup refuses a cgroupsPath that is not slice:prefix:name" {
  update_config '.linux.cgroupsPath = "not-a-systemd-path"'
  CONTAINER_ID=cg-sdbad-$$-$RANDOM$RANDOM
  run fsrun --systemd-cgroup run --bundle "$BUNDLE" "$CONTAINER_ID"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.cgroupsPath"*"slice:prefix:name"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "a value the kernel refuses names the resource and the file, and nothing is left" {
  update_config '.linux.resources.cpu = {"cpus": "999"}'
  run_in_container true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.resources.cpu.cpus: write \`cpuset.cpus\` in /sys/fs/cgroup/"*"$CONTAINER_ID"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "v1: a controller the host does not have is named" {
  requires_cgroup_v1
  [ ! -d /sys/fs/cgroup/rdma ] || skip "this host has an rdma hierarchy"
  ! grep -qw rdma /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null || skip "rdma in cgroup2"
  update_config '.linux.resources.rdma = {"mlx5_0": {"hcaHandles": 2}}'
  run_in_container true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.resources.rdma: the rdma controller is not available on this host"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "devices: a node the spec does not allow cannot be opened, an allowed one can" {
  # /dev/kmsg (c 1:11) is not a default device: bind it in, the device cgroup must refuse it
  update_config '.mounts += [{"destination": "/dev/kmsg", "type": "bind", "source": "/dev/kmsg", "options": ["bind"]}]'
  run_in_container sh -c 'exec 3>/dev/kmsg && echo opened'
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"Operation not permitted"* ]]
  [[ "$output" != *opened* ]]

  # a default device works under the same filter
  run_in_container sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c'
  [ "$status" -eq 0 ]
  [ "$output" = 4 ]

  # allowed for writing by the spec: opens for writing, still not for reading
  update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "w"}]'
  run_in_container sh -c 'exec 3>/dev/kmsg && echo opened; exec 4</dev/kmsg'
  echo "$output"
  [[ "$output" == *opened* ]]
  [[ "$output" == *"Operation not permitted"* ]]
}

# bats test_tags=cgroupv2
@test "v2: memory.max, memory.swap.max, memory.low, cpu.max, cpu.weight, pids.max and unified values" {
  requires_cgroup_v2
  update_config '.linux.resources.memory = {"limit": 67108864, "swap": 100663296, "reservation": 16777216}
    | .linux.resources.cpu = {"shares": 1024, "quota": 50000, "period": 100000}
    | .linux.resources.pids = {"limit": 20}
    | .linux.resources.unified = {"memory.oom.group": "1", "memory.high": "50331648"}'
  start_detached sleep 1000
  local dir=/sys/fs/cgroup/fsrun/$CONTAINER_ID
  [ "$(cat "$dir/memory.max")" = 67108864 ]
  [ "$(cat "$dir/memory.swap.max")" = 33554432 ]
  [ "$(cat "$dir/memory.low")" = 16777216 ]
  [ "$(cat "$dir/cpu.max")" = "50000 100000" ]
  [ "$(cat "$dir/cpu.weight")" = 100 ]
  [ "$(cat "$dir/pids.max")" = 20 ]
  [ "$(cat "$dir/memory.oom.group")" = 1 ]
  [ "$(cat "$dir/memory.high")" = 50331648 ]
  # CLONE_INTO_CGROUP: the init is there
  grep -qx "0::/fsrun/$CONTAINER_ID" "/proc/$INIT_PID/cgroup"
  fsrun delete --force "$CONTAINER_ID"
  [ ! -e "$dir" ]
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "v2: swap -1 is max, an unset quota is max" {
  requires_cgroup_v2
  update_config '.linux.resources.memory = {"limit": 67108864, "swap": -1}
    | .linux.resources.cpu = {"period": 200000}'
  start_detached sleep 1000
  local dir=/sys/fs/cgroup/fsrun/$CONTAINER_ID
  [ "$(cat "$dir/memory.swap.max")" = max ]
  [ "$(cat "$dir/cpu.max")" = "max 200000" ]
  fsrun delete --force "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "v2: io.max and io.weight from blockIO" {
  requires_cgroup_v2
  [ -e /sys/block/ram0/dev ] || modprobe brd rd_nr=1 rd_size=1024 2>/dev/null || true
  [ -e /sys/block/ram0/dev ] || skip "no block device (brd) to throttle"
  local majmin major minor
  majmin=$(cat /sys/block/ram0/dev)
  major=${majmin%:*} minor=${majmin#*:}
  update_config '.linux.resources.blockIO = {"weight": 500,
      "throttleReadBpsDevice": [{"major": $ma, "minor": $mi, "rate": 1048576}],
      "throttleWriteIOPSDevice": [{"major": $ma, "minor": $mi, "rate": 300}]}' \
    --argjson ma "$major" --argjson mi "$minor"
  start_detached sleep 1000
  local dir=/sys/fs/cgroup/fsrun/$CONTAINER_ID
  run cat "$dir/io.max"
  echo "$output"
  [ "$output" = "$majmin rbps=1048576 wbps=max riops=max wiops=300" ]
  if [ -e "$dir/io.weight" ]; then
    # blkio 500 -> 1 + (500 - 10) * 9999 / 990
    run cat "$dir/io.weight"
    echo "$output"
    [[ "$output" == "default 4950"* ]]
  fi
  fsrun delete --force "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "hugepageLimits: v1 hugetlb, or cgroup2 where the host has hugetlb only there (hybrid)" {
  [ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages on this kernel"
  local mode root_had="" dir file
  mode=$(cgroup_mode)
  if [ "$mode" = hybrid ] && [ ! -d /sys/fs/cgroup/hugetlb ]; then
    grep -qw hugetlb /sys/fs/cgroup/unified/cgroup.controllers || skip "no hugetlb controller"
    root_had=$(grep -ow hugetlb /sys/fs/cgroup/unified/cgroup.subtree_control || true)
  fi
  update_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
  start_detached sleep 1000
  case $mode in
  unified) file=/sys/fs/cgroup/fsrun/$CONTAINER_ID/hugetlb.2MB.max ;;
  *)
    if [ -d /sys/fs/cgroup/hugetlb ]; then
      file=/sys/fs/cgroup/hugetlb/fsrun/$CONTAINER_ID/hugetlb.2MB.limit_in_bytes
    else
      file=/sys/fs/cgroup/unified/fsrun/$CONTAINER_ID/hugetlb.2MB.max
    fi
    ;;
  esac
  run cat "$file"
  echo "$file: $output"
  fsrun delete --force "$CONTAINER_ID"
  if [ "$mode" = hybrid ] && [ -z "$root_had" ] && [ ! -d /sys/fs/cgroup/hugetlb ]; then
    # leave the host's cgroup2 tree as it was
    for dir in /sys/fs/cgroup/unified/fsrun /sys/fs/cgroup/unified; do
      echo -hugetlb >"$dir/cgroup.subtree_control" 2>/dev/null || true
    done
  fi
  [ "$output" = 4194304 ]
}

# bats test_tags=cgroupv2
@test "pause freezes the cgroup and resume thaws it" {
  requires_fsrun_command pause
  start_detached sleep 1000
  fsrun pause "$CONTAINER_ID"
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(cat "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.freeze")" = 1 ]
    grep -qx "frozen 1" "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.events"
  else
    [ "$(cg_read freezer freezer.state)" = FROZEN ]
  fi
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = paused ]
  fsrun resume "$CONTAINER_ID"
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(cat "/sys/fs/cgroup/fsrun/$CONTAINER_ID/cgroup.freeze")" = 0 ]
  else
    [ "$(cg_read freezer freezer.state)" = THAWED ]
  fi
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  fsrun delete --force "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

# bats test_tags=cgroupv2
@test "features: claims cgroup v1, v2, systemd, systemdUser and rdma, and this host's driver applies a limit" {
  run fsrun features
  [ "$status" -eq 0 ]
  jq -e '.linux.cgroup.v1 == true and .linux.cgroup.v2 == true and .linux.cgroup.rdma == true' <<<"$output"
  # systemd.bats drives a real systemd in the VM, systemd-user.bats a real user manager
  jq -e '.linux.cgroup.systemd == true and .linux.cgroup.systemdUser == true' <<<"$output"
  # the claim for this host's kind holds: a limit from config.json lands in its file
  update_config '.linux.resources.pids = {"limit": 17}'
  start_detached sleep 1000
  [ "$(cg_read pids pids.max)" = 17 ]
  fsrun delete --force "$CONTAINER_ID"
}

@test "cgroups v1: cpu.realtimeRuntime works under a parent without a budget (as fsrun's /fsrun), which is given the budget the container asks for" {
  requires_cgroup_v1
  [ -e /sys/fs/cgroup/cpu/fsrun/cpu.rt_runtime_us ] || [ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] ||
    skip "no realtime group scheduling (cpu.rt_runtime_us) on this host"
  # a parent of this test's own, there before with no budget, as /fsrun is once any container ran:
  # /fsrun's budget is every root container's on the machine (CI runs two suites at once)
  local parent=/fsrun-rt-$UNIQ
  EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*$parent")
  mkdir "/sys/fs/cgroup/cpu$parent"
  [ "$(cat "/sys/fs/cgroup/cpu$parent/cpu.rt_runtime_us")" = 0 ]
  CONTAINER_ID=cg-rt-$$-$RANDOM$RANDOM
  update_config '.linux.cgroupsPath = $p' --arg p "$parent/$CONTAINER_ID"
  update_config '.linux.resources.cpu = {"realtimeRuntime": 10000, "realtimePeriod": 1000000}'
  start_sleeper
  [ "$(cat "$(cg_dir cpu "$parent/$CONTAINER_ID")/cpu.rt_runtime_us")" = 10000 ]
  [ "$(cat "$(cg_dir cpu "$parent/$CONTAINER_ID")/cpu.rt_period_us")" = 1000000 ]
  [ "$(cat "/sys/fs/cgroup/cpu$parent/cpu.rt_runtime_us")" -ge 10000 ]
  fsrun delete --force "$CONTAINER_ID"
  run cgroup_dirs_ending_in "$parent/$CONTAINER_ID"
  [ -z "$output" ]
}

# shared_cgroup_dirs PATH: every directory of cgroup PATH (one per v1 hierarchy, or the v2 one)
shared_cgroup_dirs() {
  if [ "$(cgroup_mode)" = unified ]; then
    [ ! -d "/sys/fs/cgroup$1" ] || echo "/sys/fs/cgroup$1"
  else
    local d
    for d in /sys/fs/cgroup/*/; do
      [ -d "$d${1#/}" ] && echo "$d${1#/}"
    done
  fi
}

# bats test_tags=cgroupv2
@test "create refuses a cgroupsPath whose cgroup holds another container's process (as runc 1.2); that one is untouched" {
  # before: the second container joined the first one's cgroup silently, and `delete --force` of
  # either killed both
  local parent=/fsrun-test-shared-$UNIQ first first_pid second
  if [ "$(cgroup_mode)" = unified ]; then
    EXTRA_CGROUP_DIRS=("/sys/fs/cgroup$parent")
  else
    EXTRA_CGROUP_DIRS=("/sys/fs/cgroup/*$parent")
  fi
  update_config '.linux.cgroupsPath = $p' --arg p "$parent/cg"
  start_detached sleep 1000
  first=$CONTAINER_ID first_pid=$INIT_PID
  second=cg-second-$$-$RANDOM$RANDOM
  # into a file: a created init (the binary before) keeps its output open until it execs
  status=0
  fsrun create --bundle "$BUNDLE" "$second" </dev/null >"$BATS_TEST_TMPDIR/second.out" 2>&1 || status=$?
  output=$(<"$BATS_TEST_TMPDIR/second.out")
  echo "$output"
  [ "$status" -eq 1 ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/second.out")" -eq 1 ]
  [[ "$output" == *"linux.cgroupsPath: container's cgroup is not empty: 1 process(es) found in /sys/fs/cgroup"*"$parent/cg" ]]
  [ ! -e "$FSRUN_ROOT/$second" ]
  # the first container runs on in its cgroup, which is still there
  [ "$(fsrun state "$first" | jq -r .status)" = running ]
  grep -q ":$parent/cg\$" "/proc/$first_pid/cgroup"
  [ -n "$(shared_cgroup_dirs "$parent/cg")" ]
  fsrun delete --force "$first"
  [ -z "$(shared_cgroup_dirs "$parent/cg")" ]
}

# bats test_tags=cgroupv2
@test "create refuses a frozen cgroup at once (as runc), leaving it; an empty existing one is taken and removed at delete" {
  # before: `run` waited forever for an init that could never run
  local parent=/fsrun-test-frozen-$UNIQ dir
  if [ "$(cgroup_mode)" = unified ]; then
    dir=/sys/fs/cgroup$parent/cg
    EXTRA_CGROUP_DIRS=("$dir" "/sys/fs/cgroup$parent")
    mkdir -p "$dir"
    echo 1 >"$dir/cgroup.freeze"
  else
    dir=/sys/fs/cgroup/freezer$parent/cg
    EXTRA_CGROUP_DIRS=("$dir" "/sys/fs/cgroup/*$parent")
    mkdir -p "$dir"
    echo FROZEN >"$dir/freezer.state"
  fi
  update_config '.linux.cgroupsPath = $p' --arg p "$parent/cg"
  set_process_args echo ran
  CONTAINER_ID=cg-frozen-$$-$RANDOM$RANDOM
  # into a file: the init the binary before left behind, frozen, kept its output open
  status=0
  timeout -k 5 "$WAIT_MAX_S" "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null \
    >"$BATS_TEST_TMPDIR/run.out" 2>&1 || status=$?
  output=$(<"$BATS_TEST_TMPDIR/run.out")
  echo "$output"
  # thawed for what follows (and for the binary before, whose init waited in it)
  if [ "$(cgroup_mode)" = unified ]; then echo 0 >"$dir/cgroup.freeze"; else echo THAWED >"$dir/freezer.state"; fi
  [ "$status" -eq 1 ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/run.out")" -eq 1 ]
  [ "$output" = "fsrun: linux.cgroupsPath: container's cgroup unexpectedly frozen: $dir" ]
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
  [ -d "$dir" ]
  # thawed and empty, the same cgroup is the container's
  run fsrun run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
  [ -z "$(shared_cgroup_dirs "$parent/cg")" ]
}

# exec_after_pids_change HOW ID PIDFILE: `fsrun exec -d` in a private mount namespace in which the
# pids hierarchy was unmounted and mounted again at its point (HOW remounted), or mounted elsewhere
# with the memory hierarchy mounted at its old point (HOW moved)
exec_after_pids_change() {
  local moved=$BATS_TEST_TMPDIR/pids
  mkdir -p "$moved"
  unshare -m --propagation private sh -c '
    umount /sys/fs/cgroup/pids || exit
    if [ "$1" = remounted ]; then
      mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids || exit
    else
      mount -t cgroup -o pids cgroup "$2" && mount -t cgroup -o memory cgroup /sys/fs/cgroup/pids &&
        grep " /sys/fs/cgroup/pids .* - cgroup cgroup rw,memory" /proc/self/mountinfo || exit
    fi
    exec "$3" --root "$4" exec -d --pid-file "$5" "$6" sleep 1000' \
    sh "$1" "$moved" "$FSRUN" "$FSRUN_ROOT" "$3" "$2"
}

# pid_in_hierarchy CONTROLLER PID: the pid is in the container's cgroup of that host hierarchy
pid_in_hierarchy() {
  grep -qx "$2" "$(cg_dir "$1")/cgroup.procs"
}

@test "v1: exec joins the hierarchies create recorded without reading the mount table, and finds them again when one was moved (a private mount namespace)" {
  requires_cgroup_v1
  requires_host_command strace
  requires_host_command unshare
  local trace=$BATS_TEST_TMPDIR/trace record pid how
  start_detached sleep 1000
  record=$(jq -r '.fsrun.cgroupHierarchies // empty' "$FSRUN_ROOT/$CONTAINER_ID/state.json")
  echo "record: $record"
  # unique mount ids are Linux 6.8's: before it there is no record, and exec reads the table
  if [ -z "$record" ]; then
    [ "$(printf '%s\n' 6.8 "$(uname -r)" | sort -V | head -1)" != 6.8 ]
    skip "no unique mount ids on this kernel"
  fi
  echo "$record" | grep -q " pids /sys/fs/cgroup/pids$"
  # the record holds: no read of /proc/self/mountinfo (strace -f waits for every process it
  # follows: a foreground exec), and every hierarchy joined
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    run strace -f -qq -e trace=openat -o "$trace" "$FSRUN" --root "$FSRUN_ROOT" \
    exec "$CONTAINER_ID" true
  echo "$output"
  [ "$status" -eq 0 ]
  run grep mountinfo "$trace"
  echo "$output"
  [ "$status" -eq 1 ]
  # (a detached process keeps what it was given open: its output goes to a file, not to `run`)
  fsrun exec -d --pid-file "$BATS_TEST_TMPDIR/a.pid" "$CONTAINER_ID" sleep 1000 </dev/null \
    >"$BATS_TEST_TMPDIR/a.out" 2>&1 || { cat "$BATS_TEST_TMPDIR/a.out"; false; }
  pid=$(cat "$BATS_TEST_TMPDIR/a.pid")
  pid_in_hierarchy pids "$pid"
  pid_in_hierarchy memory "$pid"
  # a new mount at the point (unmounted and mounted again), or the pids hierarchy moved and the
  # memory one mounted at its point: the record's mount is not there, so exec reads the table and
  # joins the pids hierarchy where it is now, never the memory one through the old point
  for how in remounted moved; do
    exec_after_pids_change "$how" "$CONTAINER_ID" "$BATS_TEST_TMPDIR/$how.pid" </dev/null \
      >"$BATS_TEST_TMPDIR/$how.out" 2>&1 || { cat "$BATS_TEST_TMPDIR/$how.out"; false; }
    pid=$(cat "$BATS_TEST_TMPDIR/$how.pid")
    pid_in_hierarchy pids "$pid"
    pid_in_hierarchy memory "$pid"
    grep -q ":pids:/fsrun/$CONTAINER_ID$" "/proc/$pid/cgroup"
  done
  run fsrun delete --force "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  assert_no_leftovers "$CONTAINER_ID"
}
