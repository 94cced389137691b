#!/usr/bin/env bats
# Run by harness.bats through fsrun_run_bats_file (contrib/lib.sh), never on its own: a test that
# holds (its sleep's pid in $HOLD_DIR/sleep.pid, then $HOLD_DIR/holding) until bats is stopped;
# teardown_file says it ran ($HOLD_DIR/teardown_file).

teardown_file() {
  : >"$HOLD_DIR/teardown_file"
}

@test "hold until stopped" {
  sleep 1000 &
  echo "$!" >"$HOLD_DIR/sleep.pid"
  : >"$HOLD_DIR/holding"
  wait
}
