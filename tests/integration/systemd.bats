#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup against a real systemd (cgroup-systemd.c, dbus.c): fsrun asks systemd for the
# transient scope over D-Bus (StartTransientUnit, systemd's private socket), the scope is known to
# systemd with the container's init in it before the container's own code runs, the limits land in
# the scope, and delete stops the unit and leaves no cgroup. Without systemd (or when it does not
# answer) the cgroupfs mapping is used, with a debug line and no warning.
#
# Where systemd already is PID 1 the tests use it. In the cgroup v2 VM (tests/vm/run.sh, PID 1 is
# busybox) setup_file boots the host's /lib/systemd/systemd as PID 1 of new pid, mount and cgroup
# namespaces (systemd-boot.bash): cgroup2 at /sys/fs/cgroup is the subtree fsrun-systemd-test,
# /run is a private tmpfs holding only the unit fsrun-test.target, which has no dependencies.
# Commands that talk to that systemd run inside its namespaces (in_sd), from a cgroup inside its
# tree (systemd can only move a process it can see). Elsewhere the systemd tests skip.

load helpers
load systemd-boot
bats_require_minimum_version 1.5.0

setup_file() {
  SD_MODE=none
  SD_ROOT=$(mktemp -d /tmp/fsrun-systemd-state.XXXXXX)
  export SD_MODE SD_ROOT
  if [ "$(id -u)" != 0 ]; then
    return 0
  fi
  local comm=
  read -r comm </proc/1/comm
  if [ "$comm" = systemd ] && [ -d /run/systemd/system ]; then
    SD_MODE=host
  elif sd_can_boot_in_vm; then
    SD_MODE=vm # in_sd enters its namespaces from now on
    _sd_boot_in_vm || return 1
  fi
}

teardown_file() {
  [ "$SD_MODE" != vm ] || sd_kill_booted
  rm -rf "$SD_ROOT"
}

sd_fsrun() {
  in_sd "$FSRUN" --root "$SD_ROOT" "$@"
}

# sd_run_detached ID: `--systemd-cgroup run -d`; its output in $output (a file, not a pipe: the
# container keeps its stdio open)
sd_run_detached() {
  local out=$BATS_TEST_TMPDIR/run-$1.out rc=0
  sd_fsrun --systemd-cgroup run -d --bundle "$BUNDLE" "$1" </dev/null >"$out" 2>&1 || rc=$?
  output=$(cat "$out")
  return "$rc"
}

requires_systemd() {
  [ "$SD_MODE" != none ] || skip "needs systemd: PID 1 here, or the cgroup v2 VM to boot it in (tests/vm/run.sh)"
}

setup() {
  requires_root
  setup_bundle
  CONTAINER_ID=sd-$$-$RANDOM$RANDOM
  IDS=("$CONTAINER_ID")
}

teardown() {
  local id
  if [ "$SD_MODE" != none ]; then
    for id in "${IDS[@]}"; do
      sd_fsrun delete --force "$id" >/dev/null 2>&1
    done
  fi
  teardown_bundle
}

# unit_prop UNIT PROPERTY: the value systemd has for it
unit_prop() {
  in_sd systemctl show -P "$2" "$1"
}

# the unit is gone or inactive, and its cgroup directory is gone
assert_unit_gone() {
  local unit=$1 dir=$2 state tries=$((WAIT_MAX_S * 5))
  # an empty scope ends on its own; give systemd (slow under emulation) a moment to notice
  while state=$(unit_prop "$unit" ActiveState) && [ -n "$state" ] && [ "$state" != inactive ] &&
    [ $tries -gt 0 ]; do
    sleep 0.2
    tries=$((tries - 1))
  done
  [ "$state" = inactive ] || [ -z "$state" ] || {
    echo "$unit is still $state" >&2
    return 1
  }
  ! in_sd test -e "/sys/fs/cgroup$dir" || {
    echo "/sys/fs/cgroup$dir is still there" >&2
    return 1
  }
}

@test "systemd: run -d makes a scope that systemd knows, with the init and the limits in it" {
  requires_systemd
  update_config '.linux.resources.memory = {"limit": 67108864}
    | .linux.resources.pids = {"limit": 33}'
  set_process_args sleep 1000
  local unit=fsrun-$CONTAINER_ID.scope dir=/system.slice/fsrun-$CONTAINER_ID.scope pid
  sd_run_detached "$CONTAINER_ID" || { echo "$output"; false; }

  [ "$(unit_prop "$unit" ActiveState)" = active ]
  [ "$(unit_prop "$unit" ControlGroup)" = "$dir" ]
  [ "$(unit_prop "$unit" Delegate)" = yes ]
  [ "$(unit_prop "$unit" Description)" = "fsrun container $CONTAINER_ID" ]
  [ "$(unit_prop "$unit" MemoryMax)" = 67108864 ]
  [ "$(unit_prop "$unit" TasksMax)" = 33 ]
  pid=$(sd_fsrun state "$CONTAINER_ID" | jq -r .pid)
  [ "$(in_sd cat "/proc/$pid/cgroup")" = "0::$dir" ]
  [ "$(in_sd cat "/sys/fs/cgroup$dir/memory.max")" = 67108864 ]
  [ "$(in_sd cat "/sys/fs/cgroup$dir/pids.max")" = 33 ]

  run sd_fsrun --debug delete --force "$CONTAINER_ID"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # delete asked systemd to stop the unit (which may have ended on its own once the cgroup emptied)
  [[ $output == *"systemd: stopped \`$unit\`"* || $output == *"\`$unit\` is gone already"* ||
    $output == *"systemd: stop \`$unit\`: "* ]] ||
    { echo "$output"; false; }
  assert_unit_gone "$unit" "$dir"
}

@test "systemd: update tells systemd the new limits, so that a reload of systemd keeps them" {
  requires_systemd
  update_config '.linux.resources.memory = {"limit": 67108864}
    | .linux.resources.pids = {"limit": 33}'
  set_process_args sleep 1000
  local unit=fsrun-$CONTAINER_ID.scope dir=/system.slice/fsrun-$CONTAINER_ID.scope
  sd_run_detached "$CONTAINER_ID" || { echo "$output"; false; }

  run sd_fsrun update --memory 100663296 --pids-limit 44 "$CONTAINER_ID"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(in_sd cat "/sys/fs/cgroup$dir/memory.max")" = 100663296 ]
  [ "$(in_sd cat "/sys/fs/cgroup$dir/pids.max")" = 44 ]
  [ "$(unit_prop "$unit" MemoryMax)" = 100663296 ]
  [ "$(unit_prop "$unit" TasksMax)" = 44 ]
  # systemd writes its own values into the scope when it reloads: they are the new ones
  in_sd systemctl daemon-reload
  [ "$(in_sd cat "/sys/fs/cgroup$dir/memory.max")" = 100663296 ]
  [ "$(in_sd cat "/sys/fs/cgroup$dir/pids.max")" = 44 ]
}

@test "systemd: the container's first process already runs in the scope" {
  requires_systemd
  # no cgroup namespace, so that /proc/self/cgroup shows the real path
  update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
  set_process_args cat /proc/self/cgroup
  run sd_fsrun --systemd-cgroup run --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$output" = "0::/system.slice/fsrun-$CONTAINER_ID.scope" ]
  # run deletes the container when it exits
  assert_unit_gone "fsrun-$CONTAINER_ID.scope" "/system.slice/fsrun-$CONTAINER_ID.scope"
}

@test "systemd: linux.cgroupsPath slice:prefix:name puts the scope in that slice" {
  requires_systemd
  update_config ".linux.cgroupsPath = \"fsruntest-a.slice:tst:$CONTAINER_ID\""
  set_process_args sleep 1000
  local unit=tst-$CONTAINER_ID.scope dir=/fsruntest.slice/fsruntest-a.slice/tst-$CONTAINER_ID.scope
  sd_run_detached "$CONTAINER_ID" || { echo "$output"; false; }
  [ "$(unit_prop "$unit" Slice)" = fsruntest-a.slice ]
  [ "$(unit_prop "$unit" ControlGroup)" = "$dir" ]
  [ "$(sd_fsrun ps "$CONTAINER_ID" | wc -l)" -ge 2 ]
  run sd_fsrun delete --force "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  assert_unit_gone "$unit" "$dir"
}

@test "systemd: a second container for the same scope fails and leaves the first one running" {
  requires_systemd
  local second=${CONTAINER_ID}b unit=dup-$CONTAINER_ID.scope
  IDS+=("$second")
  update_config ".linux.cgroupsPath = \"system.slice:dup:$CONTAINER_ID\""
  set_process_args sleep 1000
  sd_run_detached "$CONTAINER_ID" || { echo "$output"; false; }
  if sd_run_detached "$second"; then
    echo "the second container started: $output"
    false
  fi
  [[ $output == *"dup-$CONTAINER_ID.scope"*"exists already"* ]] || { echo "$output"; false; }
  [ "$(sd_fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
  [ "$(unit_prop "$unit" ActiveState)" = active ]
  [ -n "$(in_sd cat "/sys/fs/cgroup/system.slice/$unit/cgroup.procs")" ]
}

@test "systemd: systemctl stop of the scope stops the container, and delete still cleans up" {
  requires_systemd
  # PID 1 of a pid namespace ignores an unhandled SIGTERM: handle it
  set_process_args sh -c 'trap "exit 0" TERM; sleep 1000 & wait'
  local unit=fsrun-$CONTAINER_ID.scope i
  sd_run_detached "$CONTAINER_ID" || { echo "$output"; false; }
  in_sd systemctl stop "$unit"
  for ((i = 0; i < WAIT_MAX_S * 10; i++)); do
    [ "$(sd_fsrun state "$CONTAINER_ID" | jq -r .status)" = stopped ] && break
    sleep 0.1
  done
  [ "$(sd_fsrun state "$CONTAINER_ID" | jq -r .status)" = stopped ]
  run sd_fsrun delete "$CONTAINER_ID"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  assert_unit_gone "$unit" "/system.slice/$unit"
}

@test "no systemd: --systemd-cgroup maps the path itself, with no warning" {
  requires_cgroup_v2
  [ ! -d /run/systemd/system ] || skip "systemd runs here"
  update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
  set_process_args cat /proc/self/cgroup
  local made_slice=0
  [ -d /sys/fs/cgroup/system.slice ] || made_slice=1
  run --separate-stderr fsrun --debug --systemd-cgroup run --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$made_slice" = 0 ] || rmdir /sys/fs/cgroup/system.slice 2>/dev/null || true
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$output" = "0::/system.slice/fsrun-$CONTAINER_ID.scope" ]
  [[ $stderr == *"systemd is not running"* ]] || { echo "$stderr"; false; }
  [[ $stderr != *warning* ]] || { echo "$stderr"; false; }
}

@test "systemd not answering on D-Bus: the cgroupfs mapping, a debug line, no warning" {
  requires_cgroup_v2
  [ ! -d /run/systemd/system ] || skip "systemd runs here"
  update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
  set_process_args cat /proc/self/cgroup
  local made_slice=0
  [ -d /sys/fs/cgroup/system.slice ] || made_slice=1
  # /run/systemd/system exists (in a private /run), nothing listens on either socket; fsrun is
  # copied into it, as a tree under /run is hidden by it
  run --separate-stderr unshare -m bash -c 'exec 9<"$FSRUN" && mount -t tmpfs tmpfs /run &&
    mkdir -p /run/systemd/system && cp /proc/self/fd/9 /run/fsrun && chmod 755 /run/fsrun &&
    exec 9<&- && exec /run/fsrun --root /run/fsrun-state --debug --systemd-cgroup run \
    --bundle "$1" "$2"' sh "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$made_slice" = 0 ] || rmdir /sys/fs/cgroup/system.slice 2>/dev/null || true
  [ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
  [ "$output" = "0::/system.slice/fsrun-$CONTAINER_ID.scope" ]
  [[ $stderr == *"D-Bus API does not answer"* ]] || { echo "$stderr"; false; }
  [[ $stderr != *warning* ]] || { echo "$stderr"; false; }
  [ ! -e "/sys/fs/cgroup/system.slice/fsrun-$CONTAINER_ID.scope" ]
}
