#!/usr/bin/env bats
# fsrun checkpoint and restore on a host where they cannot work, and the options they refuse.
# The checkpoint/restore itself is tested in the cgroup v2 VM (tests/vm/criu.bats), the only
# machine of the suite whose kernel criu accepts.

load helpers

setup_file() {
  CRIU_WORKS=0
  if command -v criu >/dev/null && criu check >/dev/null 2>&1; then CRIU_WORKS=1; fi
  export CRIU_WORKS
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  TEST_USER=fsrck$$
  export TEST_USER
  useradd -M "$TEST_USER"
}

teardown_file() {
  [ -n "${TEST_USER:-}" ] && userdel "$TEST_USER" >/dev/null 2>&1 || true
}

setup() {
  requires_root
  setup_bundle
  CONTAINER_ID=ck-$RANDOM$RANDOM
  cd "$BATS_TEST_TMPDIR"
}

teardown() {
  cd /
  [ -n "${USER_ID:-}" ] && user_fsrun delete --force "$USER_ID" >/dev/null 2>&1
  teardown_bundle
}

# user_fsrun ARGS...: fsrun as $TEST_USER with a state root of its own
user_fsrun() {
  setpriv --reuid "$TEST_USER" --regid "$TEST_USER" --clear-groups \
    env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" "$FSRUN" --root "$BATS_TEST_TMPDIR/user/state" "$@"
}

@test "checkpoint: where criu cannot run on the kernel, one line, exit 1, the container untouched" {
  command -v criu >/dev/null || skip "needs criu"
  [ "$CRIU_WORKS" = 0 ] || skip "criu works on this kernel (tests/vm/criu.bats covers it)"
  local pid
  start_sleeper
  pid=$(fsrun state "$CONTAINER_ID" | jq .pid)
  run fsrun checkpoint "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == "fsrun: checkpoint: CRIU cannot run on this kernel: \`criu check\` failed: "?* ]]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r '.status, .pid' | tr '\n' ' ')" = "running $pid " ]
  [ ! -e checkpoint ]
  # the second time from criu check's cached verdict, with the same line
  run fsrun checkpoint --image-path "$BATS_TEST_TMPDIR/img" "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: checkpoint: CRIU cannot run on this kernel: "* ]]
  [ ! -e "$BATS_TEST_TMPDIR/img" ]
  run fsrun restore --bundle "$BUNDLE" --image-path "$BATS_TEST_TMPDIR" other
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: --image-path \`$BATS_TEST_TMPDIR\`: no checkpoint there"* ]]
  : >"$BATS_TEST_TMPDIR/inventory.img"
  run fsrun restore --bundle "$BUNDLE" --image-path "$BATS_TEST_TMPDIR" other
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: CRIU cannot run on this kernel: "* ]]
  [ ! -e "$FSRUN_ROOT/other" ]
  # features does not claim it
  run fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["org.fsrun.checkpoint"]' <<<"$output")" = null ]
}

@test "checkpoint: no criu on PATH is one line naming the package" {
  start_sleeper
  run env PATH=/nonexistent "$FSRUN" --root "$FSRUN_ROOT" checkpoint "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: checkpoint: criu not found in PATH (install the criu package)" ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = running ]
}

@test "checkpoint and restore: options fsrun or criu cannot honour are refused in one line" {
  local cmd
  for cmd in checkpoint restore; do
    run fsrun "$cmd" --lazy-pages x
    [ "$status" -eq 1 ]
    [[ "$output" == "fsrun: --lazy-pages: not supported: "* ]]
    run fsrun "$cmd" --manage-cgroups-mode bogus x
    [ "$status" -eq 1 ]
    [ "$output" = "fsrun: --manage-cgroups-mode: expected soft, full, strict or ignore, got \`bogus\`" ]
    run fsrun "$cmd" --empty-ns pid x
    [ "$status" -eq 1 ]
    [ "$output" = "fsrun: --empty-ns: only \`network\` is supported, got \`pid\`" ]
    run fsrun "$cmd" --no-such-option x
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
  done
  run fsrun restore --no-pivot --bundle "$BUNDLE" x
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: --no-pivot: "* ]]
  run fsrun restore --no-subreaper --bundle "$BUNDLE" x
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: --no-subreaper: "* ]]
  # containerd's shim (go-runc) spells it with one dash, as runc's flag parser allows
  run fsrun restore -no-subreaper --bundle "$BUNDLE" x
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: --no-subreaper: "* ]]
  update_config '.process.terminal = true'
  run fsrun restore -d --bundle "$BUNDLE" x
  [ "$status" -eq 1 ]
  # as runc: a detached restore has only the console socket to hand the new pty's master to
  [ "$output" = "fsrun: restore: process.terminal is true: --console-socket is required to receive the pty with --detach" ]
  [ ! -e "$FSRUN_ROOT/x" ]
}

# a terminal is checkpointed (tests/vm/criu.bats); here criu's kernel check stops it, the same line
@test "checkpoint: a container with a terminal where criu cannot run: one line, it runs on" {
  local recvtty=${FSRUN%/*}/tests/recvtty sock=$BATS_TEST_TMPDIR/console.sock pid
  [ -x "$recvtty" ] || skip "tests/recvtty is not built next to $FSRUN"
  command -v criu >/dev/null || skip "needs criu"
  [ "$CRIU_WORKS" = 0 ] || skip "criu works on this kernel (tests/vm/criu.bats covers it)"
  update_config '.process.terminal = true'
  set_process_args /bin/sleep 100000
  "$recvtty" "$sock" >/dev/null 2>&1 3>&- &
  pid=$!
  for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  fsrun run --detach --bundle "$BUNDLE" --console-socket "$sock" tty-$UNIQ </dev/null
  run fsrun checkpoint --image-path "$BATS_TEST_TMPDIR/images" tty-$UNIQ
  kill "$pid" 2>/dev/null || true
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == "fsrun: checkpoint: CRIU cannot run on this kernel: "?* ]]
  [ "$(fsrun state tty-$UNIQ | jq -r .status)" = running ]
  [ ! -e "$BATS_TEST_TMPDIR/images" ]
  fsrun delete --force tty-$UNIQ
  assert_no_leftovers tty-$UNIQ
}

@test "checkpoint: a container that is not running, or missing, is refused" {
  set_process_args /bin/sleep 1000
  fsrun create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  run fsrun checkpoint "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: checkpoint: container \`$CONTAINER_ID\` is created, not running" ]
  run fsrun checkpoint missing-one
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: container \`missing-one\` does not exist" ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r .status)" = created ]
}

@test "restore: an ordinary user is told that criu needs root, and features does not offer it" {
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  make_traversable "$BUNDLE"
  chmod a+rx "$BUNDLE" "$BATS_TEST_TMPDIR"
  run setpriv --reuid "$TEST_USER" --regid "$TEST_USER" --clear-groups \
    env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" "$FSRUN" --root "$BATS_TEST_TMPDIR/user-root" restore -d --bundle "$BUNDLE" x
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: restore: criu needs root: an ordinary user cannot restore a container" ]
  [ ! -e "$BATS_TEST_TMPDIR/user-root/x" ]
  # and features does not offer it to the user, with criu on PATH
  run setpriv --reuid "$TEST_USER" --regid "$TEST_USER" --clear-groups \
    env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" "$FSRUN" --root "$BATS_TEST_TMPDIR/user-root" features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["org.fsrun.checkpoint"]' <<<"$output")" = null ]
}

@test "checkpoint: an ordinary user's running container is refused (criu needs root), it runs on" {
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  local dir=$BATS_TEST_TMPDIR/user
  make_traversable "$BUNDLE"
  chmod a+rx "$BUNDLE" "$BATS_TEST_TMPDIR"
  mkdir -p "$dir/state"
  chown "$TEST_USER:" "$dir" "$dir/state"
  user_fsrun spec --rootless --bundle "$dir"
  jq --arg r "$ROOTFS" '.root.path = $r | .process.terminal = false | .process.args = ["sleep", "100000"]' \
    "$dir/config.json" >"$dir/config.new"
  mv "$dir/config.new" "$dir/config.json"
  USER_ID=$CONTAINER_ID
  user_fsrun run -d --bundle "$dir" "$USER_ID" </dev/null >/dev/null 2>&1
  [ "$(user_fsrun state "$USER_ID" | jq -r .status)" = running ]
  run user_fsrun checkpoint --image-path "$dir/images" "$USER_ID"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: checkpoint: criu needs root: an ordinary user's container cannot be checkpointed" ]
  [ ! -e "$dir/images" ]
  [ "$(user_fsrun state "$USER_ID" | jq -r .status)" = running ]
  user_fsrun delete --force "$USER_ID"
  [ ! -e "$dir/state/$USER_ID" ]
}
