#!/usr/bin/env bats
# bats file_tags=cgroupv2
# vm-packages: containerd podman conmon catatonit
# Real clients checkpoint and restore an fsrun container with CRIU, in the VM (criu cannot run on
# the development host's kernel): podman (through conmon) and containerd 1.6's runc shim (ctr).
# tests/vm/run.sh installs the packages named above on the host when missing (the VM runs the
# host's /); without them the tests skip and say which is missing. Each client keeps everything of
# its own under /run (tmpfs in the VM: its sockets and fifos cannot live on the 9p share), and
# fsrun's state under this file's $FSRUN_ROOT. The counter of every container appends 1, 2, 3, ...
# to a log in its root filesystem: a restore that goes on from where the dump stopped leaves that
# log in order, without a gap or a restart, and the value before the dump is in it.

load ../integration/helpers
PM_TIMEOUT=120 # one podman call (a criu dump takes tens of seconds under emulation)
# shellcheck source=../clients/podman-helpers.bash
source "$BATS_TEST_DIRNAME/../clients/podman-helpers.bash"

CLIENT_TIMEOUT=120 # one client call (a criu dump takes tens of seconds under emulation)
IMAGE=localhost/fsrun-test/busybox:latest
COUNTER='i=0; while :; do i=$((i+1)); echo $i >>/log; echo $i >/count; sleep 0.2; done'

setup_file() {
  [ "$EUID" = 0 ] || skip "needs root"
  command -v criu >/dev/null || skip "needs criu"
  CLIENT_DIR=$(mktemp -d /run/fsrun-client-criu.XXXXXX)
  PM_DIR=$CLIENT_DIR/pm
  # fsrun's state root for ctr: the shim passes --root RUNC_ROOT/NAMESPACE
  CTR_FSRUN_ROOT=$CLIENT_DIR/fsrun-ctr/fsrun-ckpt
  export CLIENT_DIR CTR_FSRUN_ROOT PM_DIR
  "$BATS_TEST_DIRNAME/../clients/image.sh" "$CLIENT_DIR/busybox.tar" "$IMAGE"
}

teardown_file() {
  [ -n "${CLIENT_DIR:-}" ] && [ -d "$CLIENT_DIR" ] || return 0
  if [ -f "$PM_DIR/root/containers.conf" ]; then
    pmf rm -f -a -t 0 >/dev/null 2>&1
    # conmon runs `podman container cleanup` when a container exits, which mounts the storage
    # again: wait for those before the unmounts below
    pids_of_cmdline "$PM_DIR/" | wait_or_kill
  fi
  ctrd_teardown
  pm_unmount_under "$CLIENT_DIR"
  rm -rf --one-file-system "$CLIENT_DIR"
}

# pids_of_cmdline TEXT: the processes whose command line holds TEXT
pids_of_cmdline() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "$1" || continue
    f=${f#/proc/}
    echo "${f%/cmdline}"
  done
}

# wait_or_kill: the pids on stdin, given 10 s to exit, then SIGKILL
wait_or_kill() {
  local pids pid
  mapfile -t pids
  for _ in $(seq 50); do
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && break
      pid=""
    done
    [ -z "${pid:-}" ] && return 0
    sleep 0.2
  done
  for pid in "${pids[@]}"; do
    kill -9 "$pid" 2>/dev/null
  done
  return 0
}

# requires_commands CMD...: skips naming the first one missing
requires_commands() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null || skip "needs $cmd (not installed on the host: tests/vm/run.sh installs it)"
  done
}

# log_in_order TEXT: TEXT is 1, 2, 3, ... one a line (no restart, no gap)
log_in_order() {
  [ -z "$(awk 'NR != $1 { print NR ": " $0; exit }' <<<"$1")" ]
}

# wait_count ROOTFS N: until the counter in the container's root filesystem, read from the host
# (cheaper than a client's exec under emulation), is at least N (bounded: WAIT_MAX_S, a failure only)
wait_count() {
  local n
  for _ in $(seq $((WAIT_MAX_S * 5))); do
    n=$(cat "$1/count" 2>/dev/null) && [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.2
  done
  echo "the counter in $1 did not reach $2 (last: ${n:-none})"
  return 1
}

# ---- podman ---------------------------------------------------------------------------------------

# podman (tests/clients/podman-helpers.bash: its pm, with the files pm_write_confs writes under
# $PM_DIR/root) with fsrun's state in this file's state root
pmf() {
  pm --runtime-flag "root=$FSRUN_ROOT" "$@"
}

pm_setup() {
  mkdir -p "$PM_DIR/root/tmp"
  pm_write_confs "$PM_DIR/root" "$FSRUN"
  pm load -i "$CLIENT_DIR/busybox.tar" >/dev/null
}

@test "podman: container checkpoint stops it, restore goes on counting, rm leaves nothing" {
  requires_commands podman conmon
  local id rootfs at_dump log
  pm_setup
  # conmon gives the container the host's /dev/null as stdin: criu must be told it is external
  # (before, the dump failed: `Can't lookup mount=24 for fd=0 path=/dev/null`)
  id=$(pmf run -d --name counter "$IMAGE" sh -c "$COUNTER")
  [ "$(fsrun state "$id" | jq -r .status)" = running ]
  [ "$(readlink "/proc/$(fsrun state "$id" | jq -r .pid)/fd/0")" = /dev/null ]
  rootfs=$(fsrun state "$id" | jq -r .rootfs)
  wait_count "$rootfs" 3
  at_dump=$(cat "$rootfs/count")

  run pmf container checkpoint counter
  echo "$output"
  [ "$status" -eq 0 ]
  run fsrun state "$id"
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]

  run pmf container restore counter
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(fsrun state "$id" | jq -r .status)" = running ]
  rootfs=$(fsrun state "$id" | jq -r .rootfs)
  wait_count "$rootfs" $((at_dump + 3))
  log=$(pmf exec counter cat /log)
  log_in_order "$log"
  [ "$(wc -l <<<"$log")" -ge $((at_dump + 3)) ]

  run pmf rm -f -t 0 counter
  [ "$status" -eq 0 ]
  assert_no_leftovers "$id" "$PM_DIR/root/store/graph/overlay-containers/$id"
}

# ---- containerd -----------------------------------------------------------------------------------

ctrd() {
  timeout -k 10 "$CLIENT_TIMEOUT" ctr --address "$CLIENT_DIR/ctrd/c.sock" -n fsrun-ckpt "$@"
}

# containerd of our own, without its CRI plugin (not used here), up and answering within 30 s
ctrd_setup() {
  local dir=$CLIENT_DIR/ctrd
  mkdir -p "$dir/fifo"
  cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$dir/c.sock"
[ttrpc]
  address = "$dir/c.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
EOF
  containerd --config "$dir/config.toml" >>"$dir/containerd.log" 2>&1 3>&- &
  echo $! >"$dir/containerd.pid"
  for _ in $(seq $((WAIT_MAX_S * 5))); do
    ctrd version >/dev/null 2>&1 && break
    kill -0 "$(cat "$dir/containerd.pid")" 2>/dev/null || break
    sleep 0.2
  done
  ctrd version >/dev/null || { tail -n 20 "$dir/containerd.log"; return 1; }
  ctrd images import "$CLIENT_DIR/busybox.tar" >/dev/null
}

# what a failed test left: tasks, containers, containerd (by pid), its shims (by pid)
ctrd_teardown() {
  local dir=$CLIENT_DIR/ctrd id pid
  [ -f "$dir/containerd.pid" ] || return 0
  for id in $(ctrd tasks ls -q 2>/dev/null); do
    ctrd tasks kill -s SIGKILL "$id" >/dev/null 2>&1
    ctrd tasks delete -f "$id" >/dev/null 2>&1
  done
  for id in $(ctrd containers ls -q 2>/dev/null); do
    ctrd containers rm "$id" >/dev/null 2>&1
  done
  pid=$(cat "$dir/containerd.pid")
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null
  # the shims outlive containerd by design
  for pid in $(pids_of_cmdline "-address $dir/c.sock "); do
    kill -9 "$pid" 2>/dev/null
  done
  rmdir /sys/fs/cgroup/fsrun-ckpt 2>/dev/null || true
}

ctr_run() {
  ctrd run -d --runc-binary "$FSRUN" --runc-root "$CLIENT_DIR/fsrun-ctr" --fifo-dir "$CLIENT_DIR/ctrd/fifo" "$@"
}

# ctr_fsrun ARGS...: fsrun on the state root the shim gives it (--runc-root/NAMESPACE)
ctr_fsrun() {
  "$FSRUN" --root "$CTR_FSRUN_ROOT" "$@"
}

# ctr_rootfs ID: the task's root filesystem (containerd's mount of its snapshot), seen from the host
ctr_rootfs() {
  ctr_fsrun state "$1" | jq -r .rootfs
}

@test "ctr: containers checkpoint --task, then restore --live into a new container goes on counting" {
  requires_commands containerd ctr containerd-shim-runc-v2
  local at_ckpt pid log
  ctrd_setup
  ctr_run "$IMAGE" first sh -c "$COUNTER"
  wait_count "$(ctr_rootfs first)" 3

  # containerd pauses the task, fsrun dumps it with --leave-running, containerd resumes it
  at_ckpt=$(cat "$(ctr_rootfs first)/count")
  run ctrd containers checkpoint --task --rw --image first localhost/fsrun-ckpt/first:1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(ctr_fsrun state first | jq -r .status)" = running ]
  ctrd tasks kill -s SIGKILL first
  ctrd tasks delete first >/dev/null 2>&1 || true
  ctrd containers rm first
  FSRUN_ROOT=$CTR_FSRUN_ROOT assert_no_leftovers first "$CLIENT_DIR/ctrd/state"

  # fsrun restore with the shim's command line, from the checkpoint's criu images and rw layer
  run ctrd containers restore --live --rw second localhost/fsrun-ckpt/first:1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $(ctrd tasks ls) == *second*RUNNING* ]]
  [ "$(ctr_fsrun state second | jq -r .status)" = running ]
  wait_count "$(ctr_rootfs second)" $((at_ckpt + 3))
  log=$(ctrd tasks exec --exec-id log second cat /log)
  log_in_order "$log"
  [ "$(wc -l <<<"$log")" -ge $((at_ckpt + 3)) ]
  pid=$(ctr_fsrun state second | jq -r .pid)
  grep -q '^0::/fsrun-ckpt/' "/proc/$pid/cgroup"

  run ctrd tasks kill -s SIGKILL second
  [ "$status" -eq 0 ]
  for _ in $(seq $((WAIT_MAX_S * 5))); do
    [[ $(ctrd tasks ls) == *second*STOPPED* ]] && break
    sleep 0.2
  done
  run ctrd tasks delete second
  [ "$status" -eq 0 ]
  ctrd containers rm second
  FSRUN_ROOT=$CTR_FSRUN_ROOT assert_no_leftovers second "$CLIENT_DIR/ctrd/state"
  # the restored task ran in the cgroup its spec names, the checkpointed container's
  FSRUN_ROOT=$CTR_FSRUN_ROOT assert_no_leftovers first "$CLIENT_DIR/ctrd/state"
}

@test "ctr: tasks checkpoint --exit stops the task; fsrun's container is gone; delete works" {
  requires_commands containerd ctr containerd-shim-runc-v2
  local ref
  [ -f "$CLIENT_DIR/ctrd/containerd.pid" ] || ctrd_setup
  ctr_run "$IMAGE" exiting sh -c "$COUNTER"
  wait_count "$(ctr_rootfs exiting)" 3
  run ctrd tasks checkpoint --exit exiting
  echo "$output"
  [ "$status" -eq 0 ]
  ref=$output
  [[ $ref == containerd.io/checkpoint/exiting:* ]]
  ctrd images ls -q | grep -qxF "$ref"
  [[ $(ctrd tasks ls) == *exiting*STOPPED* ]]
  run ctr_fsrun state exiting
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
  # the shim's delete meets a container fsrun already deleted ("does not exist": ignored)
  run ctrd tasks delete exiting
  echo "$output"
  [ "$status" -eq 0 ]
  ctrd containers rm exiting
  FSRUN_ROOT=$CTR_FSRUN_ROOT assert_no_leftovers exiting "$CLIENT_DIR/ctrd/state"
}
