#!/usr/bin/env bats
# bats file_tags=cgroupv2
# The VM suite's own ground: what every cgroup v2 test assumes about the machine it runs on.
# Runs only in the VM (tests/vm/run.sh); a failure here explains failures everywhere else.

load ../integration/helpers

setup() {
  setup_bundle
}

teardown() {
  teardown_bundle
}

@test "vm: cgroup v2 is mounted alone, with the controllers fsrun manages delegated" {
  requires_cgroup_v2
  [ "$(cgroup_mode)" = unified ]
  local controller
  for controller in cpu cpuset io memory pids; do
    grep -qw "$controller" /sys/fs/cgroup/cgroup.subtree_control
  done
  [ ! -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]
}

@test "vm: the state root and the bundles are on tmpfs, where fifos work" {
  mkdir -p "$FSRUN_ROOT"
  [ "$(stat -fc %T "$FSRUN_ROOT")" = tmpfs ]
  [ "$(stat -fc %T "$BUNDLE")" = tmpfs ]
  mkfifo "$FSRUN_ROOT/probe.fifo"
  [ -p "$FSRUN_ROOT/probe.fifo" ]
  rm "$FSRUN_ROOT/probe.fifo"
}

@test "vm: the fsrun under test runs" {
  run "$FSRUN" --version
  [ "$status" -eq 0 ]
  [[ "$output" == *"fsrun version"* ]]
}

@test "vm: a reference runtime runs the helpers' bundle in its own cgroup v2 cgroup" {
  requires_host_command crun
  _fsrun_builtin_config >"$BUNDLE/config.json"
  set_process_args /bin/sh -c 'cat /proc/self/cgroup; cat /sys/fs/cgroup/cgroup.controllers'
  local id=ref-$$-$RANDOM$RANDOM
  run crun --root "$BATS_TEST_TMPDIR/crun" run --bundle "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "0::/" ] # cgroup namespace: the container sees its own cgroup as the root
  [[ "${lines[1]}" == *memory* ]]
  run crun --root "$BATS_TEST_TMPDIR/crun" delete --force "$id"
}
