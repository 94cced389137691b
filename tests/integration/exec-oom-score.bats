#!/usr/bin/env bats
# exec and process.oomScoreAdj: the exec'd process gets the score of its process.json, else the
# container's, never the caller's. (Found under containerd: the runc shim runs one above
# containerd, and exec'd processes, such as Kubernetes exec probes, kept the shim's score.)

load helpers

setup() {
  requires_root
  requires_fsrun_command exec
  setup_bundle
  CONTAINER_ID=exec-oom-$$-$RANDOM$RANDOM
}

teardown() {
  teardown_bundle
}

# in_caller_with_score SCORE CMD...: CMD runs with oom_score_adj SCORE (raising it needs no
# privilege), as a shim's children do
in_caller_with_score() {
  local score=$1
  shift
  (echo "$score" >/proc/self/oom_score_adj && exec "$@")
}

@test "exec: the process gets the container's oomScoreAdj, not the caller's" {
  update_config '.process.oomScoreAdj = 123'
  set_process_args sleep 100000
  fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" running

  run in_caller_with_score 7 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" cat /proc/self/oom_score_adj
  [ "$status" -eq 0 ]
  [ "$output" = 123 ]

  # a process.json without oomScoreAdj (as containerd's, when the spec has none): the container's
  jq -n '{args: ["/bin/cat", "/proc/self/oom_score_adj"], cwd: "/", env: ["PATH=/bin"]}' \
    >"$BATS_TEST_TMPDIR/p.json"
  run in_caller_with_score 7 "$FSRUN" --root "$FSRUN_ROOT" exec --process "$BATS_TEST_TMPDIR/p.json" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$output" = 123 ]

  # its own value wins
  jq '.oomScoreAdj = 200' "$BATS_TEST_TMPDIR/p.json" >"$BATS_TEST_TMPDIR/p2.json"
  run in_caller_with_score 7 "$FSRUN" --root "$FSRUN_ROOT" exec --process "$BATS_TEST_TMPDIR/p2.json" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$output" = 200 ]
}

@test "exec: lowering oomScoreAdj below what the caller may set is a clear error" {
  bnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)
  [ $(((0x$bnd >> 24) & 1)) = 0 ] || skip "CAP_SYS_RESOURCE is in the bounding set: lowering is allowed"
  set_process_args sleep 100000
  fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" running
  jq -n '{args: ["/bin/true"], cwd: "/", oomScoreAdj: -500}' >"$BATS_TEST_TMPDIR/p.json"
  run "$FSRUN" --root "$FSRUN_ROOT" exec --process "$BATS_TEST_TMPDIR/p.json" "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ $output == *"oomScoreAdj"*"CAP_SYS_RESOURCE"* ]]
}
