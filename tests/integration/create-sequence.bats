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
}

@test "create-sequence: start returns only once the process is exec'd, after the startContainer hooks (as runc)" {
  # The hook holds the init between the exec fifo and execve. It waits (bounded) for a marker that
  # the test makes only after `start` returned: it must never see it.
  update_config '.root.readonly = false | .hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c",
    "i=0; while [ $i -lt 30 ] && [ ! -e /marker ]; do sleep 0.1; i=$((i+1)); done; [ -e /marker ] && echo saw-marker >/tmp/hook || echo no-marker >/tmp/hook"]}]'
  set_process_args /bin/sleep 1000
  fsrun create --bundle "$BUNDLE" seq-start
  pid=$(fsrun state seq-start | jq -r .pid)
  fsrun start seq-start
  # what a `kill` right now would reach: the user's process, no longer the runtime's init
  exe=$(readlink "/proc/$pid/exe")
  : >"$ROOTFS/marker"
  [ "$(cat "$ROOTFS/tmp/hook")" = no-marker ]
  [[ $exe == */bin/busybox ]]
  [ "$(fsrun state seq-start | jq -r .status)" = running ]
  fsrun delete --force seq-start
  assert_no_leftovers seq-start
}
