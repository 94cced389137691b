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
  CONTAINER_ID=ck-$$-$RANDOM$RANDOM
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
  [ "$(jq -r '.annotations["org.fsrun.checkpoint.lazy-pages"]' <<<"$output")" = null ]
  # a lazy checkpoint stops at the same line, before criu could write to the status fd
  run fsrun checkpoint --lazy-pages --page-server 127.0.0.1:27277 --status-fd 7 \
    --image-path "$BATS_TEST_TMPDIR/lazy" "$CONTAINER_ID" 7>"$BATS_TEST_TMPDIR/status"
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: checkpoint: CRIU cannot run on this kernel: "* ]]
  [ ! -s "$BATS_TEST_TMPDIR/status" ]
  [ ! -e "$BATS_TEST_TMPDIR/lazy" ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r '.status, .pid' | tr '\n' ' ')" = "running $pid " ]
}

# lazy_refused LINE ARGS...: `fsrun ARGS` exits 1 with exactly the line LINE
lazy_refused() {
  local line=$1
  shift
  run "$@"
  [ "$status" -eq 1 ] || { echo "exit $status: $*: $output"; return 1; }
  [ "$output" = "$line" ] || { echo "$*: got: $output"; echo "expected: $line"; return 1; }
}

@test "checkpoint --lazy-pages/--page-server/--status-fd: a bad value or combination is one line naming the option, the container untouched" {
  local pid bad address
  start_sleeper
  pid=$(fsrun state "$CONTAINER_ID" | jq .pid)
  address="fsrun: --page-server: expected ADDRESS:PORT (e.g. 127.0.0.1:27277 or [::1]:27277), got"
  for bad in 127.0.0.1 :27277 '[::1]27277' '::1:27277' '[::1' '[]:27277' ''; do
    lazy_refused "$address \`$bad\`" fsrun checkpoint --page-server "$bad" "$CONTAINER_ID"
  done
  for bad in host:0 host:65536 host: host:12x host:-1 '[::1]:99999'; do
    lazy_refused "fsrun: --page-server: \`$bad\`: the port must be a number from 1 to 65535" \
      fsrun checkpoint --page-server "$bad" "$CONTAINER_ID"
  done
  lazy_refused "fsrun: --status-fd: expected a file descriptor number, got \`x1\`" \
    fsrun checkpoint --status-fd x1 "$CONTAINER_ID"
  # runc takes --lazy-pages alone, and criu would then listen on every address at a port nobody
  # is told: the restore side could not find it
  lazy_refused "fsrun: --lazy-pages: --page-server ADDRESS:PORT is required: the restore side's \`criu lazy-pages\` daemon pulls the memory from there" \
    fsrun checkpoint --lazy-pages "$CONTAINER_ID"
  lazy_refused "fsrun: --lazy-pages: not with --pre-dump (a pre-dump writes the memory to the images)" \
    fsrun checkpoint --pre-dump --lazy-pages --page-server 127.0.0.1:27277 "$CONTAINER_ID"
  lazy_refused "fsrun: --status-fd: only with --lazy-pages (criu reports there when its lazy page server is ready)" \
    fsrun checkpoint --page-server 127.0.0.1:27277 --status-fd 7 "$CONTAINER_ID" 7>/dev/null
  lazy_refused "fsrun: --status-fd: descriptor 7 is not open" \
    fsrun checkpoint --lazy-pages --page-server 127.0.0.1:27277 --status-fd 7 "$CONTAINER_ID" 7>&-
  lazy_refused "fsrun: --status-fd: descriptor 7 is not open for writing" \
    fsrun checkpoint --lazy-pages --page-server 127.0.0.1:27277 --status-fd 7 "$CONTAINER_ID" 7</dev/null
  # fd 3 closed by the caller is fsrun's own log file (close-on-exec): not the caller's
  lazy_refused "fsrun: --status-fd: descriptor 3 is not open" \
    "$FSRUN" --root "$FSRUN_ROOT" --log "$BATS_TEST_TMPDIR/log.json" checkpoint --lazy-pages \
    --page-server 127.0.0.1:27277 --status-fd 3 "$CONTAINER_ID" 3>&-
  [ ! -e checkpoint ]
  [ "$(fsrun state "$CONTAINER_ID" | jq -r '.status, .pid' | tr '\n' ' ')" = "running $pid " ]
}

@test "restore --lazy-pages without a criu lazy-pages daemon in the work directory: one line, nothing made" {
  mkdir "$BATS_TEST_TMPDIR/images"
  : >"$BATS_TEST_TMPDIR/images/inventory.img"
  lazy_refused "fsrun: restore: --lazy-pages: no \`criu lazy-pages\` daemon in the work directory \`$BATS_TEST_TMPDIR/work\` (no lazy-pages.socket there): start \`criu lazy-pages --images-dir IMAGES --work-dir $BATS_TEST_TMPDIR/work\` first" \
    fsrun restore --lazy-pages --image-path "$BATS_TEST_TMPDIR/images" \
    --work-path "$BATS_TEST_TMPDIR/work" --bundle "$BUNDLE" -d "lazy-$UNIQ"
  [ ! -e "$BATS_TEST_TMPDIR/work" ]
  # the work directory defaults to the image path; a plain file there is no daemon's socket
  : >"$BATS_TEST_TMPDIR/images/lazy-pages.socket"
  lazy_refused "fsrun: restore: --lazy-pages: no \`criu lazy-pages\` daemon in the work directory \`$BATS_TEST_TMPDIR/images\` (no lazy-pages.socket there): start \`criu lazy-pages --images-dir IMAGES --work-dir $BATS_TEST_TMPDIR/images\` first" \
    fsrun restore --lazy-pages --image-path "$BATS_TEST_TMPDIR/images" --bundle "$BUNDLE" -d "lazy-$UNIQ"
  [ ! -e "$FSRUN_ROOT/lazy-$UNIQ" ]
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
  wait_until test -S "$sock"
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

# restore_bind_refused LINE: `fsrun restore` of $BUNDLE exits 1 with exactly LINE and makes no
# container; `fsrun create` of it is refused too (the same checks)
restore_bind_refused() {
  run fsrun restore --bundle "$BUNDLE" --image-path "$BATS_TEST_TMPDIR" "$CONTAINER_ID"
  [ "$status" -eq 1 ] || { echo "restore: exit $status: $output"; return 1; }
  [ "$output" = "$1" ] || { echo "restore: got: $output"; echo "expected: $1"; return 1; }
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
  run fsrun create --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" -ne 0 ]
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
}

# A task container's binds carry checks in run.fsrun.mounts.N annotations (bind-identity.h);
# criu makes the binds of a restore itself, so restore checks them first, as create does.
@test "restore: a bind's run.fsrun.mounts checks hold as at create (a replaced source, a destination through a link, covers, a malformed annotation): one line, exit 1, nothing made" {
  local shared=$BATS_TEST_TMPDIR/shared n
  mkdir "$shared"
  update_config '.mounts += [{"destination": "/shared", "type": "bind", "source": $s,
      "options": ["bind", "ro"]}]' --arg s "$shared"
  n=$(jq '.mounts | length - 1' "$BUNDLE/config.json")
  cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/plain.json"
  annotate() {
    jq --arg k "run.fsrun.mounts.$n" --arg v "$1" '.annotations[$k] = $v' \
      "$BATS_TEST_TMPDIR/plain.json" >"$BUNDLE/config.json"
  }
  : >"$BATS_TEST_TMPDIR/inventory.img"
  # as recorded: restore goes past the checks (and stops at criu, which cannot run here)
  annotate "{\"destination\": \"/shared\", \"sourceId\": \"$(stat -c %d:%i "$shared")\"}"
  run fsrun restore --bundle "$BUNDLE" --image-path "$BATS_TEST_TMPDIR" "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ "$output" == "fsrun: restore: "* ]]
  [ ! -e "$FSRUN_ROOT/$CONTAINER_ID" ]
  # the source replaced since the annotation was written (a rename and a new directory)
  mv "$shared" "$shared.old"
  mkdir "$shared"
  restore_bind_refused "fsrun: mounts[$n]: bind source \`$shared\` was replaced after the config was built: Stale file handle"
  # as the ordinary user too, before criu's need for root is even looked at
  if [ -n "${TEST_USER:-}" ]; then
    make_traversable "$BUNDLE"
    chmod a+rx "$BUNDLE" "$BATS_TEST_TMPDIR"
    run setpriv --reuid "$TEST_USER" --regid "$TEST_USER" --clear-groups \
      env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" "$FSRUN" --root "$BATS_TEST_TMPDIR/user-root" \
      restore -d --bundle "$BUNDLE" --image-path "$BATS_TEST_TMPDIR" x
    [ "$status" -eq 1 ]
    [ "$output" = "fsrun: mounts[$n]: bind source \`$shared\` was replaced after the config was built: Stale file handle" ]
    [ ! -e "$BATS_TEST_TMPDIR/user-root/x" ]
  fi
  # a destination reached through a link in the rootfs
  ln -s tmp "$BUNDLE/rootfs/lnk"
  jq --arg n "$n" '.mounts[$n | tonumber].destination = "/lnk/x"' "$BATS_TEST_TMPDIR/plain.json" \
    >"$BATS_TEST_TMPDIR/lnk.json"
  cp "$BATS_TEST_TMPDIR/lnk.json" "$BATS_TEST_TMPDIR/plain.json"
  annotate '{"destination": "/lnk/x", "destinationNoSymlinks": true}'
  restore_bind_refused "fsrun: mounts[$n]: destination \`/lnk/x\`: passes through a symbolic link"
  # covers over secret files: mounts of their own, which criu cannot be trusted to re-make
  annotate '{"destination": "/lnk/x", "covers": ["shadow"]}'
  restore_bind_refused "fsrun: mounts[$n]: \`/lnk/x\` has covers over secret files, which a restore cannot re-apply: create the container again instead"
  annotate '{"destination": "/lnk/x", "relax": true}'
  restore_bind_refused "fsrun: annotations[\"run.fsrun.mounts.$n\"]: unknown key \`relax\` (known: destination, sourceId, destinationNoSymlinks, covers, overlayView)"
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
  # the lazy options' checks come first, as for root
  run user_fsrun checkpoint --lazy-pages --image-path "$dir/images" "$USER_ID"
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: --lazy-pages: --page-server ADDRESS:PORT is required: the restore side's \`criu lazy-pages\` daemon pulls the memory from there" ]
  run user_fsrun checkpoint --lazy-pages --page-server 127.0.0.1:27277 --status-fd 7 "$USER_ID" 7>&-
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: --status-fd: descriptor 7 is not open" ]
  [ ! -e "$dir/images" ]
  [ "$(user_fsrun state "$USER_ID" | jq -r .status)" = running ]
  user_fsrun delete --force "$USER_ID"
  [ ! -e "$dir/state/$USER_ID" ]
}
