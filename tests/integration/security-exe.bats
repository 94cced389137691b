#!/usr/bin/env bats
# Invariant 1 (CVE-2019-5736): the container cannot overwrite or reopen the runtime binary. The init
# is a clone of fsrun running from its protected image (a sealed memfd copy, or as root the binary
# through a read-only overlay mounted nowhere), non-dumpable until it execs the user's process,
# so nothing in the container can open its /proc/PID/exe, read its memory or environment.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
}

teardown() {
  teardown_bundle
}

# probe_init PID: runs a second container in the pid namespace of PID's container (as root in the
# container, without CAP_SYS_PTRACE) that tries to reach that container's pid 1.
probe_init() {
  local pid=$1
  cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/config.saved"
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' --arg p "/proc/$pid/ns/pid"
  set_process_args /bin/sh -c '
    readlink /proc/1/exe >/dev/null 2>&1 && echo exe-readable || echo exe-denied
    (: >>/proc/1/exe) 2>/dev/null && echo exe-writable || echo exe-not-writable
    cat /proc/1/environ >/dev/null 2>&1 && echo environ-readable || echo environ-denied
    readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fds-readable || echo fds-denied'
  run fsrun run --bundle "$BUNDLE" "probe-$$-$RANDOM$RANDOM"
  cp "$BATS_TEST_TMPDIR/config.saved" "$BUNDLE/config.json"
}

@test "security-exe: the waiting init is fsrun's clone, and nothing in the container can open its exe, environ or fds" {
  set_process_args /bin/sleep 100
  fsrun create --bundle "$BUNDLE" sec-exe-$UNIQ
  pid=$(fsrun state sec-exe-$UNIQ | jq -r .pid)
  # the init's exe is the runtime's protected image (docs/process-model.md), never writable
  is_protected_exe "$pid"
  run bash -c "exec 3>>/proc/$pid/exe && echo x >&3"
  [ "$status" -ne 0 ]

  probe_init "$pid"
  [ "$status" -eq 0 ]
  [[ $output == *exe-denied* ]]
  [[ $output == *exe-not-writable* ]]
  [[ $output == *environ-denied* ]]
  [[ $output == *fds-denied* ]]

  # control: once the user's process runs (dumpable again, an ordinary program), the same probe
  # reaches it, so the denials above came from the init being non-dumpable
  fsrun start sec-exe-$UNIQ
  probe_init "$pid"
  [ "$status" -eq 0 ]
  [[ $output == *exe-readable* ]]
  [[ $output == *environ-readable* ]]
  [[ $output == *fds-readable* ]]
  fsrun delete --force sec-exe-$UNIQ
}

# assert_overlay_image PID BIN: PID runs BIN through a read-only overlay: its exe is /NAME on an
# overlayfs, the same bytes as BIN (read from the page cache, not a copy of them), not writable
assert_overlay_image() {
  local pid=$1 bin=$2
  [ "$(readlink "/proc/$pid/exe")" = "/${bin##*/}" ]
  [ "$(stat -L -f -c %T "/proc/$pid/exe")" = overlayfs ]
  cmp "$bin" "/proc/$pid/exe"
  run bash -c "exec 3>>/proc/$pid/exe"
  [ "$status" -ne 0 ]
  [[ $output == *"Read-only file system"* ]]
}

@test "security-exe: as root the init runs the binary through a read-only overlay mounted nowhere: no copy, no write, no path to it" {
  # a copy on this machine's /tmp (a local filesystem overlayfs takes as its lower layer)
  local bin=$BATS_TEST_TMPDIR/fsrun-ovl pid
  cp "$FSRUN" "$bin"
  set_process_args /bin/sleep 100
  # create in a private copy of the host's mount namespace, where no mount another process on the
  # machine makes arrives: no line is added to its mount table (the init keeps create's stdio)
  run unshare -m --propagation private bash -c '
    before=$(cat /proc/self/mountinfo)
    "$1" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" "$2" </dev/null >"$3" 2>&1 || exit 1
    ! diff <(echo "$before") /proc/self/mountinfo | grep "^>" || exit 1' bash "$bin" "sec-ovl-$UNIQ" "$BATS_TEST_TMPDIR/create.out"
  cat "$BATS_TEST_TMPDIR/create.out"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$("$bin" --root "$FSRUN_ROOT" state sec-ovl-$UNIQ | jq -r .pid)
  assert_overlay_image "$pid" "$bin"
  # the overlay is in no mount namespace of the host's
  ! grep -q 'overlay.*fsrun-ovl' /proc/self/mountinfo || false
  "$bin" --root "$FSRUN_ROOT" delete --force sec-ovl-$UNIQ
}

@test "security-exe: where /dev overlaps the binary's directory, the overlay's second layer is an empty tmpfs: still an overlay mounted nowhere" {
  # the overlay's second layer is /dev as a data-only layer; overlayfs refuses one that overlaps
  # the binary's directory (here /dev is that directory, in a private mount namespace)
  local dir=$BATS_TEST_TMPDIR/ovl pid
  mkdir "$dir"
  cp "$FSRUN" "$dir/fsrun-ovl"
  set_process_args /bin/sleep 100
  run unshare -m --propagation private bash -c '
    exec </dev/null >"$3" 2>&1
    mount --bind "$1" /dev || exit 1
    "$1/fsrun-ovl" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" "$2"' bash "$dir" "sec-ovl2-$UNIQ" "$BATS_TEST_TMPDIR/create.out"
  cat "$BATS_TEST_TMPDIR/create.out"
  [ "$status" -eq 0 ]
  pid=$("$FSRUN" --root "$FSRUN_ROOT" state sec-ovl2-$UNIQ | jq -r .pid)
  assert_overlay_image "$pid" "$dir/fsrun-ovl"
  "$FSRUN" --root "$FSRUN_ROOT" delete --force sec-ovl2-$UNIQ
  assert_no_leftovers sec-ovl2-$UNIQ
}

@test "security-exe: the overlay's mounts are released by the kernel's collector of unix-socket cycles: no socket is left, not even in a created container's init" {
  # the mount fds go into a socket that holds its own end (sealed-image.c, close_mounts_later): in
  # a network namespace of our own, every socket made there must be gone once the kernel
  # collected the cycles, while the container's init (a clone of the protected image) still runs
  set_process_args /bin/sleep 100
  run unshare -n bash -c '
    for i in 1 2 3; do "$1" --root "$FSRUN_ROOT" exec "nosuch-$2" true 2>/dev/null; done
    "$1" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" "sec-gc-$2" </dev/null >/dev/null 2>&1 || exit 1
    for i in $(seq $(($3 * 10))); do
      [ "$(grep -c . /proc/net/unix)" -eq 1 ] && exit 0
      sleep 0.1
    done
    cat /proc/net/unix
    exit 1' bash "$FSRUN" "$UNIQ" "$WAIT_MAX_S"
  echo "$output"
  "$FSRUN" --root "$FSRUN_ROOT" delete --force sec-gc-$UNIQ
  [ "$status" -eq 0 ]
  assert_no_leftovers sec-gc-$UNIQ
}

# before_first_execveat TRACE: the lines of `strace -f` output up to the first execveat
before_first_execveat() {
  sed -n '1,/execveat(/p' "$1"
}

@test "security-exe: the first image hands over to the protected one before the C library starts; a directory overlayfs refuses gets a sealed memfd copy" {
  requires_host_command strace
  local trace=$BATS_TEST_TMPDIR/trace dir bin pid
  # (LeakSanitizer cannot run under ptrace: off for the commands of a sanitizer build)
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
  # a command that starts processes (exec of a missing container: the image, then its error)
  run strace -f -qq -o "$trace" "$FSRUN" --root "$FSRUN_ROOT" exec nosuch-$UNIQ true
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *nosuch-$UNIQ* ]]
  before_first_execveat "$trace"
  before_first_execveat "$trace" | grep -q 'fsmount('
  # the overlay's second layer is /dev as a data-only layer: no tmpfs is made for it
  before_first_execveat "$trace" | grep -q '"datadir+", "/dev"'
  ! before_first_execveat "$trace" | grep -q 'fsopen("tmpfs"' || false
  # the C library sets up its thread pointer first thing: the first image never got that far
  if fsrun_seals_early; then
    [ "$(before_first_execveat "$trace" | grep -c 'arch_prctl(ARCH_SET_FS')" -eq 0 ]
  fi
  # a command that starts nothing is not re-executed
  strace -f -qq -o "$trace" "$FSRUN" --root "$FSRUN_ROOT" state nosuch-$UNIQ || true
  [ "$(grep -c 'execveat(' "$trace")" -eq 0 ]
  # a directory name overlayfs cannot take (`,`): a sealed memfd copy
  dir=$BATS_TEST_TMPDIR/a,b
  mkdir "$dir"
  bin=$dir/fsrun
  cp "$FSRUN" "$bin"
  strace -f -qq -o "$trace" "$bin" --root "$FSRUN_ROOT" exec nosuch-$UNIQ true || true
  before_first_execveat "$trace" | grep -q 'memfd_create("fsrun"'
  if fsrun_seals_early; then
    [ "$(before_first_execveat "$trace" | grep -c 'arch_prctl(ARCH_SET_FS')" -eq 0 ]
  fi
  set_process_args /bin/sleep 100
  "$bin" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" sec-memfd-$UNIQ
  pid=$("$bin" --root "$FSRUN_ROOT" state sec-memfd-$UNIQ | jq -r .pid)
  [ "$(readlink "/proc/$pid/exe")" = "/memfd:fsrun (deleted)" ]
  run bash -c "exec 3>>/proc/$pid/exe"
  [ "$status" -ne 0 ]
  "$bin" --root "$FSRUN_ROOT" delete --force sec-memfd-$UNIQ
  assert_no_leftovers sec-memfd-$UNIQ
}

# The check of the image (statmount, or /proc/self/mountinfo where the kernel has no statmount): a
# read-only overlay that is mounted somewhere is not protected (its path leads to it), so the
# binary run from one makes its own image, mounted nowhere.
# create_from_attached_overlay ID [WRAPPER...]: creates ID with a copy of the binary in $FSRUN,
# started from such an overlay (through WRAPPER), and checks that its init runs from another
# overlay, the same bytes.
# The overlay is mounted in a private mount namespace of the create alone: a mount namespace that
# another process made meanwhile would otherwise keep a copy of it.
create_from_attached_overlay() {
  local id=$1 lower=$BATS_TEST_TMPDIR/lower empty=$BATS_TEST_TMPDIR/empty mnt=$BATS_TEST_TMPDIR/mnt
  local pid mounted_dev
  shift
  mkdir "$lower" "$empty" "$mnt"
  cp "$FSRUN" "$lower/fsrun"
  set_process_args /bin/sleep 100
  mounted_dev=$(unshare -m --propagation private /bin/sh -ec '
    mnt=$1 lower=$2 empty=$3 root=$4 bundle=$5 id=$6; shift 6
    mount -t overlay overlay -o "lowerdir=$lower:$empty" "$mnt"
    [ "$(stat -f -c %T "$mnt/fsrun")" = overlayfs ]
    "$@" "$mnt/fsrun" --root "$root" create --bundle "$bundle" "$id" >&2
    stat -c %d "$mnt/fsrun"' sh "$mnt" "$lower" "$empty" "$FSRUN_ROOT" "$BUNDLE" "$id" "$@" </dev/null)
  pid=$(fsrun state "$id" | jq -r .pid)
  readlink "/proc/$pid/exe"
  # another overlay than the mounted one, holding the same bytes
  [ -n "$mounted_dev" ]
  [ "$(stat -L -c %d "/proc/$pid/exe")" != "$mounted_dev" ]
  cmp "$FSRUN" "/proc/$pid/exe"
  fsrun delete --force "$id"
  assert_no_leftovers "$id"
}

@test "security-exe: a binary run from a read-only overlay mounted somewhere still makes an image mounted nowhere" {
  create_from_attached_overlay sec-att-$UNIQ
}

@test "security-exe: where statmount answers ENOSYS (before Linux 6.8, valgrind), /proc/self/mountinfo tells that the overlay is mounted" {
  local noclone3=${FSRUN%/*}/tests/noclone3
  [ -x "$noclone3" ] || skip "tests/noclone3 is not built next to $FSRUN"
  [ "$(uname -m)" = x86_64 ] || skip "statmount's number (457) is x86-64's"
  create_from_attached_overlay sec-att-$UNIQ "$noclone3" --enosys 457
}
