#!/usr/bin/env bats
# containerd (Debian's 1.6, runc shim v2) driving fsrun, as a Kubernetes node would:
#   - `ctr` with `--runc-binary $FSRUN --runc-root DIR` (what a runtime's BinaryName/Root options do):
#     run, exec (with and without a tty), ps, pause/resume, kill (one process and --all), delete,
#     resource limits, a restart of containerd under a running container, a failing create;
#   - the CRI plugin with a runtime handler `fsrun` (runtime_type io.containerd.runc.v2, options
#     BinaryName, Root, SystemdCgroup = false), driven over gRPC by tests/clients/cri/cri.py (Debian's
#     python3-grpcio): RunPodSandbox, CreateContainer, StartContainer, ExecSync,
#     UpdateContainerResources, StopContainer, RemoveContainer, StopPodSandbox, RemovePodSandbox.
# The file starts a containerd of its own (root, state, sockets under $CTRD_DIR) and stops it by pid;
# images come from tests/clients/image.sh (no network). Pods use the host network (NamespaceOption
# network NODE), so that no CNI plugin is needed. Every test looks at fsrun's own state directory
# (`fsrun --root ROOT/NAMESPACE state ID`) to show that fsrun, not runc, ran the container.

load ../integration/helpers

CTRD_TIMEOUT=60 # one client call; a hang must not eat the whole file's budget

# ---- the daemon -----------------------------------------------------------------------------------

setup_file() {
  [ "$EUID" = 0 ] || skip "needs root"
  local cmd
  for cmd in containerd ctr containerd-shim-runc-v2 jq; do
    command -v "$cmd" >/dev/null || skip "needs $cmd (Debian packages containerd, jq, util-linux)"
  done
  if ! /usr/bin/python3 -c 'import grpc, grpc_tools, google.protobuf' 2>/dev/null; then
    skip "needs Debian's python3-grpcio, python3-grpc-tools and python3-protobuf (/usr/bin/python3)"
  fi
  [ -x "$FSRUN" ] || skip "no fsrun binary at $FSRUN"

  # Sockets have a 108-byte limit: a short directory of our own (under $TMPDIR, which the test
  # runner sweeps for leftovers), not bats' deep one.
  CTRD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ctrd.XXXXXX")
  export CTRD_DIR
  export CTRD_SOCK=$CTRD_DIR/c.sock
  export CTRD_NS=fsrun-ctr-${CTRD_DIR##*.}     # the ctr tests' containerd namespace (and cgroup)
  export CRI_CGROUP=/fsrun-cri-${CTRD_DIR##*.} # the pods' cgroup parent
  export FSRUN_CTR_ROOT=$CTRD_DIR/fsrun-ctr     # fsrun's --root for ctr is this/NAMESPACE
  export FSRUN_CRI_ROOT=$CTRD_DIR/fsrun-cri     # the CRI handler's Root; pods are in k8s.io
  export RUNC_CRI_ROOT=$CTRD_DIR/runc-cri       # the default handler (runc): must stay empty
  export IMAGE=localhost/fsrun-test/busybox:latest
  export PAUSE_IMAGE=localhost/fsrun-test/pause:latest
  mkdir -p "$CTRD_DIR"/{cni/bin,cni/conf,fifo,logs,opt,cri-gen}
  write_containerd_config >"$CTRD_DIR/config.toml" || return 1
  # the RuntimeClass's handler is the name the runtime entry defines
  export HANDLER
  HANDLER=$(runtime_class_handler)
  grep -qF "containerd.runtimes.$HANDLER]" "$CTRD_DIR/config.toml" || {
    echo "runtimeclass.yaml's handler '$HANDLER' is not the runtime in containerd/fsrun.toml" >&2
    return 1
  }

  start_containerd

  # the images: busybox, and a pause-like sandbox image whose sh waits for a signal
  "$BATS_TEST_DIRNAME/image.sh" "$CTRD_DIR/busybox.tar" "$IMAGE"
  FSRUN_IMAGE_CMD='["sh", "-c", "trap \"exit 0\" TERM INT; while :; do sleep 100000 & wait $!; done"]' \
    "$BATS_TEST_DIRNAME/image.sh" "$CTRD_DIR/pause.tar" "$PAUSE_IMAGE"
  ctrd images import "$CTRD_DIR/busybox.tar" >/dev/null
  ctr --address "$CTRD_SOCK" -n k8s.io images import "$CTRD_DIR/busybox.tar" >/dev/null
  ctr --address "$CTRD_SOCK" -n k8s.io images import "$CTRD_DIR/pause.tar" >/dev/null
}

teardown_file() {
  [ -n "${CTRD_DIR:-}" ] && [ -d "$CTRD_DIR" ] || return 0
  local pid id mnt ns i dir
  # what a failed test left: pods through the CRI, tasks and containers through ctr
  if [ -f "$CTRD_DIR/containerd.pid" ] && kill -0 "$(cat "$CTRD_DIR/containerd.pid")" 2>/dev/null; then
    for id in $(cat "$CTRD_DIR"/pods 2>/dev/null); do
      cri StopPodSandbox "{\"pod_sandbox_id\": \"$id\"}" >/dev/null 2>&1
      cri RemovePodSandbox "{\"pod_sandbox_id\": \"$id\"}" >/dev/null 2>&1
    done
    for ns in "$CTRD_NS" k8s.io; do
      for id in $(ctr --address "$CTRD_SOCK" -n "$ns" tasks ls -q 2>/dev/null); do
        timeout 20 ctr --address "$CTRD_SOCK" -n "$ns" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1
        timeout 20 ctr --address "$CTRD_SOCK" -n "$ns" tasks delete -f "$id" >/dev/null 2>&1
      done
      for id in $(ctr --address "$CTRD_SOCK" -n "$ns" containers ls -q 2>/dev/null); do
        timeout 20 ctr --address "$CTRD_SOCK" -n "$ns" containers rm "$id" >/dev/null 2>&1
      done
    done
  fi
  # containerd, by pid
  [ -f "$CTRD_DIR/containerd.pid" ] && stop_containerd
  # shims our containerd started (they outlive it by design), by pid
  for pid in $(ctrd_shim_pids); do
    kill -9 "$pid" 2>/dev/null
  done
  # fsrun containers the shims could not delete
  for dir in "$FSRUN_CTR_ROOT/$CTRD_NS" "$FSRUN_CRI_ROOT/k8s.io"; do
    for id in "$dir"/*/; do
      [ -d "$id" ] || continue
      id=${id%/}
      "$FSRUN" --root "$dir" delete --force "${id##*/}" >/dev/null 2>&1
    done
  done
  # mounts (rootfs overlays, the pods' shm), the deepest first
  for mnt in $(awk -v dir="$CTRD_DIR/" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
  done
  # the cgroups: the namespace's and the pods' parents (their children went with delete)
  for dir in /sys/fs/cgroup/*/"$CTRD_NS" /sys/fs/cgroup/*/"${CRI_CGROUP#/}" \
    /sys/fs/cgroup/"$CTRD_NS" /sys/fs/cgroup/"${CRI_CGROUP#/}"; do
    [ -d "$dir" ] || continue
    find "$dir" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null
    rmdir "$dir" 2>/dev/null
  done
  rm -rf --one-file-system "$CTRD_DIR"
}

# after a failed test: what containerd said about it
teardown() {
  if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -f "${CTRD_DIR:-}/containerd.log" ]; then
    echo "--- containerd's last errors and warnings:"
    grep -E 'level=(error|warning)' "$CTRD_DIR/containerd.log" |
      grep -vE 'snapshotter|cni|devmapper' | tail -n 15
    # what fsrun said to the shim (--log of each task's bundle)
    local log
    for log in "$CTRD_DIR"/state/io.containerd.runtime.v2.task/*/*/log.json; do
      [ -s "$log" ] && { echo "--- $log:"; tail -n 10 "$log"; }
    done
  fi
}

# start_containerd: our containerd in the background (its pid in $CTRD_DIR/containerd.pid), up and
# answering; its log appended to $CTRD_DIR/containerd.log
start_containerd() {
  # fd 3 closed: bats waits for every holder of it before it ends the file
  containerd --config "$CTRD_DIR/config.toml" >>"$CTRD_DIR/containerd.log" 2>&1 3>&- &
  echo $! >"$CTRD_DIR/containerd.pid"
  local i
  for i in $(seq $((WAIT_MAX_S * 5))); do
    ctr --address "$CTRD_SOCK" version >/dev/null 2>&1 && break
    kill -0 "$(cat "$CTRD_DIR/containerd.pid")" 2>/dev/null || break
    sleep 0.2
  done
  if ! ctr --address "$CTRD_SOCK" version >/dev/null 2>&1; then
    echo "containerd did not start; the end of its log:" >&2
    tail -n 20 "$CTRD_DIR/containerd.log" >&2
    return 1
  fi
}

# stop_containerd: SIGTERM by pid, SIGKILL after 10 s; the shims stay (they outlive it by design)
stop_containerd() {
  local pid i
  pid=$(cat "$CTRD_DIR/containerd.pid")
  kill "$pid" 2>/dev/null
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

write_containerd_config() {
  cat <<EOF
version = 2
root = "$CTRD_DIR/root"
state = "$CTRD_DIR/state"
oom_score = 0

[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "$CTRD_SOCK.ttrpc"
[debug]
  level = "info"

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD_DIR/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # CAP_SYS_RESOURCE is not in this machine's bounding set: no runtime can lower a score
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    # empty: pods use the host network, nothing of the host's CNI setup is read
    bin_dir = "$CTRD_DIR/cni/bin"
    conf_dir = "$CTRD_DIR/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$RUNC_CRI_ROOT"
EOF
  shipped_runtime_entry
}

# the fsrun handler: the shipped entry (contrib/configs/containerd/fsrun.toml) as a user appends
# it to config.toml, with its binary and state root replaced by the test's; a changed entry that
# no longer names them fails here rather than running the pods with runc
shipped_runtime_entry() {
  local entry=$FSRUN_SRCDIR/contrib/configs/containerd/fsrun.toml
  grep -qx '    BinaryName = "/usr/bin/fsrun"' "$entry" &&
    grep -qx '    Root = "/run/containerd/fsrun"' "$entry" || {
    echo "$entry does not name BinaryName /usr/bin/fsrun and Root /run/containerd/fsrun" >&2
    return 1
  }
  sed -e "s|^    BinaryName = .*|    BinaryName = \"$FSRUN\"|" \
    -e "s|^    Root = .*|    Root = \"$FSRUN_CRI_ROOT\"|" "$entry"
}

# the handler the shipped RuntimeClass (contrib/configs/kubernetes/runtimeclass.yaml) asks for
runtime_class_handler() {
  sed -n 's/^handler: *//p' "$FSRUN_SRCDIR/contrib/configs/kubernetes/runtimeclass.yaml"
}

# ---- helpers --------------------------------------------------------------------------------------

# ctrd ARGS...: ctr on our containerd, in the ctr tests' namespace
ctrd() {
  timeout "$CTRD_TIMEOUT" ctr --address "$CTRD_SOCK" -n "$CTRD_NS" "$@"
}

# ctr_run ARGS...: `ctr run` with fsrun as the runc binary (extra ctr options first, then image...)
ctr_run() {
  ctrd run --runc-binary "$FSRUN" --runc-root "$FSRUN_CTR_ROOT" --fifo-dir "$CTRD_DIR/fifo" "$@"
}

# ctr_fsrun ARGS...: fsrun on the state root the shim gives it for the ctr tests
ctr_fsrun() {
  "$FSRUN" --root "$FSRUN_CTR_ROOT/$CTRD_NS" "$@"
}

# cri RPC [JSON]: one CRI call; prints the response JSON
cri() {
  timeout "$CTRD_TIMEOUT" /usr/bin/python3 "$BATS_TEST_DIRNAME/cri/cri.py" --socket "$CTRD_SOCK" \
    --gen-dir "$CTRD_DIR/cri-gen" "$@"
}

cri_fsrun() {
  "$FSRUN" --root "$FSRUN_CRI_ROOT/k8s.io" "$@"
}

ctrd_shim_pids() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "-address $CTRD_SOCK " && { f=${f#/proc/}; echo "${f%/cmdline}"; }
  done
}

# task_field ID COLUMN: PID or STATUS of `ctr task ls` for ID
task_field() {
  ctrd tasks ls | awk -v id="$1" -v col="$2" '$1 == id { print (col == "PID" ? $2 : $3) }'
}

# wait_task_status ID STATUS: (the bound, WAIT_MAX_S, only ends a failure)
wait_task_status() {
  local i
  for i in $(seq $((WAIT_MAX_S * 5))); do
    [ "$(task_field "$1" STATUS)" = "$2" ] && return 0
    sleep 0.2
  done
  echo "task $1: status $(task_field "$1" STATUS), expected $2" >&2
  return 1
}

# wait_file FILE: until it exists and is not empty (the bound, WAIT_MAX_S, only ends a failure)
wait_file() {
  local i
  for i in $(seq $((WAIT_MAX_S * 5))); do
    [ -s "$1" ] && return 0
    sleep 0.2
  done
  echo "no $1 after ${WAIT_MAX_S} s" >&2
  return 1
}

# cgroup_file CONTROLLER V1FILE V2FILE PATH: the host file of a container's cgroup
cgroup_file() {
  if [ -d "/sys/fs/cgroup/$1" ]; then
    echo "/sys/fs/cgroup/$1$4/$2"
  else
    echo "/sys/fs/cgroup$4/$3"
  fi
}

# assert_gone_from_host ROOT ID: no fsrun state, no mount and no cgroup left for ID
assert_gone_from_host() {
  local root=$1 id=$2
  [ ! -e "$root/$id" ] || { echo "fsrun state dir $root/$id is still there" >&2; return 1; }
  ! grep -F "/$id/" /proc/self/mountinfo >&2 || { echo "mounts of $id are left" >&2; return 1; }
  ! compgen -G "/sys/fs/cgroup/*/*/$id" >&2 || { echo "cgroups of $id are left" >&2; return 1; }
}

# ---- ctr ------------------------------------------------------------------------------------------

@test "ctr run: the output and the exit status come through fsrun" {
  run ctr_run --rm "$IMAGE" run-out sh -c 'echo "hello from $(cat /etc/hostname 2>/dev/null || hostname)"; exit 3'
  echo "$output"
  [ "$status" -eq 3 ]
  [[ $output == *"hello from "* ]]
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" run-out
}

@test "ctr run -d: fsrun holds the container; ctr task exec runs in it" {
  mkdir -p "$CTRD_DIR/out-life"
  ctr_run -d --mount "type=bind,src=$CTRD_DIR/out-life,dst=/out,options=rbind:rw" "$IMAGE" life \
    sh -c 'trap "echo TERM >/out/term; exit 7" TERM; sleep 100000 & echo up >/out/up; wait; wait'
  wait_file "$CTRD_DIR/out-life/up"
  [ "$(task_field life STATUS)" = RUNNING ]

  # fsrun's state root has it, with the pid containerd reports
  run ctr_fsrun state life
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = running ]
  [ "$(jq -r .pid <<<"$output")" = "$(task_field life PID)" ]

  # exec: output and exit status
  run ctrd tasks exec --fifo-dir "$CTRD_DIR/fifo" --exec-id e1 life sh -c 'echo "in $(readlink /proc/1/exe)"; exit 4'
  [ "$status" -eq 4 ]
  [ "$output" = "in /bin/busybox" ]
}

@test "ctr task exec --tty: the process gets a terminal" {
  requires_host_command script
  # exec --tty: a terminal of its own (ctr wants one too: script gives it a pty)
  # a hang: SIGQUIT makes ctr print where each of its goroutines waits.
  # --foreground: else, when script's shell is dash (SHELL unset) and forks instead of exec'ing,
  # timeout puts ctr in a background process group of the pty; ctr's stdin reads then fail with
  # EIO, ctr closes the exec's stdin, and the shim hangs up the terminal (runc hangs the same way)
  run script -qec "timeout --foreground -s QUIT -k 5 $CTRD_TIMEOUT ctr --address $CTRD_SOCK -n $CTRD_NS tasks exec --fifo-dir $CTRD_DIR/fifo -t --exec-id e2 life sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-ttys; exit 5'" /dev/null </dev/null
  echo "status $status: $output"
  [ "$status" -eq 5 ]
  [[ $output == *"/dev/pts/"* ]]
  [[ $output == *"both-ttys"* ]]
}

@test "ctr task ps: the container's processes by host pid" {
  run ctrd tasks ps life
  [ "$status" -eq 0 ]
  local listed procs pid
  listed=$(awk 'NR > 1 { print $1 }' <<<"$output" | sort -n | tr '\n' ' ')
  # exactly the processes of the container's cgroup, the init and its sleep
  procs=$(sort -n "$(cgroup_file pids cgroup.procs cgroup.procs "/$CTRD_NS/life")" | tr '\n' ' ')
  echo "ctr: $listed  cgroup: $procs"
  [ "$listed" = "$procs" ]
  [ "$(wc -w <<<"$listed")" -eq 2 ]
  [[ " $listed" == *" $(task_field life PID) "* ]]
  for pid in $listed; do
    grep -qx 'sleep 100000\|sh -c .*' <(tr '\0' ' ' <"/proc/$pid/cmdline" | sed 's/ $//')
  done
}

@test "ctr task pause/resume: the container's freezer, and fsrun's status" {
  local freezer
  freezer=$(cgroup_file freezer freezer.state cgroup.freeze "/$CTRD_NS/life")
  ctrd tasks pause life
  [ "$(task_field life STATUS)" = PAUSED ]
  [ "$(ctr_fsrun state life | jq -r .status)" = paused ]
  [[ $(cat "$freezer") == FROZEN || $(cat "$freezer") == 1 ]]

  ctrd tasks resume life
  [ "$(task_field life STATUS)" = RUNNING ]
  [ "$(ctr_fsrun state life | jq -r .status)" = running ]
  [[ $(cat "$freezer") == THAWED || $(cat "$freezer") == 0 ]]
}

@test "ctr task kill: SIGTERM reaches the init; delete reports its exit status and cleans up" {
  local pids
  pids=$(cat "$(cgroup_file pids cgroup.procs cgroup.procs "/$CTRD_NS/life")")
  ctrd tasks kill life
  wait_task_status life STOPPED
  [ "$(cat "$CTRD_DIR/out-life/term")" = TERM ]
  # the init's exit takes the rest of its pid namespace with it
  for pid in $pids; do
    ! kill -0 "$pid" 2>/dev/null || false
  done
  # a stopped container: kill fails as runc's does
  run ctrd tasks kill life
  [ "$status" -ne 0 ]

  run ctrd tasks delete life
  [ "$status" -eq 0 ]
  [[ $output == *"exit code 7"* ]]
  ctrd containers rm life
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" life
}

@test "ctr task kill --all: every process of the container gets the signal" {
  # The init survives SIGTERM (a handler), its two sleeps do not (handlers are reset by exec):
  # without --all only the init would get it, and nothing would die.
  mkdir -p "$CTRD_DIR/out-all"
  ctr_run -d --mount "type=bind,src=$CTRD_DIR/out-all,dst=/out,options=rbind:rw" "$IMAGE" killall \
    sh -c 'trap "echo TERM >>/out/init" TERM; sleep 100000 & sleep 100000 & wait; wait; wait; sleep 100000'
  local procs pids pid init i
  procs=$(cgroup_file pids cgroup.procs cgroup.procs "/$CTRD_NS/killall")
  for i in $(seq $((WAIT_MAX_S * 5))); do
    [ "$(wc -l <"$procs")" -eq 3 ] && break
    sleep 0.2
  done
  pids=$(cat "$procs")
  [ "$(wc -w <<<"$pids")" -eq 3 ]
  init=$(task_field killall PID)

  run ctrd tasks kill --all -s SIGTERM killall
  [ "$status" -eq 0 ]
  wait_file "$CTRD_DIR/out-all/init"
  for pid in $pids; do
    [ "$pid" = "$init" ] && continue
    for _ in $(seq $((WAIT_MAX_S * 5))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    ! kill -0 "$pid" 2>/dev/null || false
  done
  [ "$(task_field killall STATUS)" = RUNNING ]
  kill -0 "$init"

  run ctrd tasks kill --all -s SIGKILL killall
  [ "$status" -eq 0 ]
  wait_task_status killall STOPPED
  for pid in $(cat "$procs" 2>/dev/null) $init; do
    ! kill -0 "$pid" 2>/dev/null || false
  done
  run ctrd tasks delete killall
  [[ $output == *"exit code 137"* ]]
  ctrd containers rm killall
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" killall
}

@test "ctr run with limits: fsrun writes them to the container's cgroup" {
  ctr_run -d --memory-limit 33554432 --cpu-quota 25000 --cpu-period 100000 "$IMAGE" limits sleep 100000
  wait_task_status limits RUNNING
  local mem cpu
  mem=$(cgroup_file memory memory.limit_in_bytes memory.max "/$CTRD_NS/limits")
  cpu=$(cgroup_file cpu cpu.cfs_quota_us cpu.max "/$CTRD_NS/limits")
  [ "$(cat "$mem")" = 33554432 ]
  [[ $(cat "$cpu") == 25000 || $(cat "$cpu") == "25000 100000" ]]
  # and the init is in it
  grep -qx "$(task_field limits PID)" "$(dirname "$mem")/cgroup.procs"
  ctrd tasks kill -s SIGKILL limits
  wait_task_status limits STOPPED
  ctrd tasks delete limits >/dev/null 2>&1
  ctrd containers rm limits
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" limits
}

@test "ctr: a restart of containerd keeps the container; fsrun still kills and deletes it" {
  mkdir -p "$CTRD_DIR/out-restart"
  ctr_run -d --mount "type=bind,src=$CTRD_DIR/out-restart,dst=/out,options=rbind:rw" "$IMAGE" survivor \
    sh -c 'trap "echo TERM >/out/term; exit 9" TERM; sleep 100000 & wait; wait'
  wait_task_status survivor RUNNING
  local pid
  pid=$(task_field survivor PID)

  # containerd goes away and comes back (an upgrade on a node); the shim and the container stay
  stop_containerd
  kill -0 "$pid"
  [ "$(ctr_fsrun state survivor | jq -r .status)" = running ]
  start_containerd

  # it finds the task again through the shim, with the same pid
  wait_task_status survivor RUNNING
  [ "$(task_field survivor PID)" = "$pid" ]
  run ctrd tasks exec --fifo-dir "$CTRD_DIR/fifo" --exec-id after-restart survivor sh -c 'echo "pid1 $(cat /proc/1/cmdline | tr "\\0" " ")"'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == "pid1 sh -c "* ]]
  # kill and delete still reach fsrun
  ctrd tasks kill survivor
  wait_task_status survivor STOPPED
  [ "$(cat "$CTRD_DIR/out-restart/term")" = TERM ]
  run ctrd tasks delete survivor
  [ "$status" -eq 0 ]
  [[ $output == *"exit code 9"* ]]
  ctrd containers rm survivor
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" survivor
}

@test "ctr run of a missing command: fsrun's error reaches the user, nothing is left" {
  run ctr_run --rm "$IMAGE" missing /no/such/binary
  echo "$output"
  [ "$status" -ne 0 ]
  [[ $output == *"no such file or directory"* ]]
  ctrd containers rm missing >/dev/null 2>&1 || true
  assert_gone_from_host "$FSRUN_CTR_ROOT/$CTRD_NS" missing
}

@test "ctr: nothing of the ctr tests is left (state, mounts, processes, cgroups)" {
  [ -z "$(ctrd tasks ls -q)" ]
  [ -z "$(ctrd containers ls -q)" ]
  # (the state root's cache of compiled seccomp programs is fsrun's, not a container's)
  run ls -A "$FSRUN_CTR_ROOT/$CTRD_NS"
  [ "$(grep -vx '\.seccomp-cache' <<<"$output")" = "" ]
  ! grep -F "$CTRD_DIR/state/io.containerd.runtime.v2.task/$CTRD_NS/" /proc/self/mountinfo || false
  ! compgen -G "/sys/fs/cgroup/*/$CTRD_NS/*/" || false
}

# ---- the CRI --------------------------------------------------------------------------------------

@test "CRI: Version answers for runtime API v1" {
  run cri Version '{"version": "v1"}'
  [ "$status" -eq 0 ]
  [ "$(jq -r .runtime_name <<<"$output")" = containerd ]
  [ "$(jq -r .runtime_api_version <<<"$output")" = v1 ]
}

# the pod config, as RunPodSandbox got it (CreateContainer wants it again)
pod_config() {
  jq -cn --arg logs "$CTRD_DIR/logs" --arg cg "$CRI_CGROUP" '{
    metadata: {name: "fsrun-pod", uid: "fsrun-pod-uid", namespace: "fsrun-test"},
    log_directory: $logs,
    linux: {cgroup_parent: $cg, security_context: {namespace_options: {network: "NODE"}}}
  }'
}

@test "CRI: RunPodSandbox with runtime_handler fsrun runs the sandbox under fsrun" {
  run cri RunPodSandbox "{\"config\": $(pod_config), \"runtime_handler\": \"$HANDLER\"}"
  echo "$output"
  [ "$status" -eq 0 ]
  local pod
  pod=$(jq -r .pod_sandbox_id <<<"$output")
  [ -n "$pod" ]
  echo "$pod" >>"$CTRD_DIR/pods"

  run cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
  [ "$(jq -r .status.state <<<"$output")" = SANDBOX_READY ]
  [ "$(jq -r .status.runtime_handler <<<"$output")" = "$HANDLER" ]
  # fsrun's state root has the sandbox; runc's (the default handler) has nothing
  run cri_fsrun state "$pod"
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = running ]
  [ "$(jq -r '.annotations["io.kubernetes.cri.container-type"]' <<<"$output")" = sandbox ]
  [ -z "$(ls -A "$RUNC_CRI_ROOT/k8s.io" 2>/dev/null)" ]
}

@test "CRI: CreateContainer and StartContainer run the container under fsrun" {
  local pod config
  pod=$(tail -n 1 "$CTRD_DIR/pods")
  config=$(jq -cn --arg image "$IMAGE" '{
    metadata: {name: "work"},
    image: {image: $image},
    command: ["sh", "-c", "trap \"echo got-term; exit 0\" TERM; echo started; while :; do sleep 1 & wait $!; done"],
    log_path: "work.log",
    linux: {resources: {memory_limit_in_bytes: 104857600}}
  }')
  run cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $config, \"sandbox_config\": $(pod_config)}"
  echo "$output"
  [ "$status" -eq 0 ]
  local ctr
  ctr=$(jq -r .container_id <<<"$output")
  [ -n "$ctr" ]
  echo "$ctr" >"$CTRD_DIR/cri-ctr"
  # containerd's CRI creates the task (fsrun create) only at StartContainer
  run cri_fsrun state "$ctr"
  [ "$status" -ne 0 ]

  run cri StartContainer "{\"container_id\": \"$ctr\"}"
  [ "$status" -eq 0 ]
  run cri ContainerStatus "{\"container_id\": \"$ctr\"}"
  [ "$(jq -r .status.state <<<"$output")" = CONTAINER_RUNNING ]
  run cri_fsrun state "$ctr"
  [ "$(jq -r .status <<<"$output")" = running ]
  local pid
  pid=$(jq -r .pid <<<"$output")
  # in the pod's cgroup parent, with the limit from the create
  [ "$(cat "$(cgroup_file memory memory.limit_in_bytes memory.max "$CRI_CGROUP/$ctr")")" = 104857600 ]
  grep -qx "$pid" "$(cgroup_file memory cgroup.procs cgroup.procs "$CRI_CGROUP/$ctr")"
  wait_file "$CTRD_DIR/logs/work.log"
  grep -q ' stdout F started$' "$CTRD_DIR/logs/work.log"
}

@test "CRI: ExecSync runs in the container: stdout, stderr, exit code, the container's OOM score" {
  local ctr pid
  ctr=$(cat "$CTRD_DIR/cri-ctr")
  # in the container's root: the image's busybox, not the host's
  run cri ExecSync "{\"container_id\": \"$ctr\", \"cmd\": [\"sh\", \"-c\", \"echo out; echo err >&2; cat /etc/passwd | wc -l; exit 3\"], \"timeout\": 20}"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .exit_code <<<"$output")" = 3 ]
  [ "$(jq -r .stderr <<<"$output")" = err ]
  [ "$(jq -r .stdout <<<"$output")" = $'out\n2' ]

  # the exec'd process has the container's oom_score_adj, not the shim's (one above containerd's)
  pid=$(cri_fsrun state "$ctr" | jq -r .pid)
  run cri ExecSync "{\"container_id\": \"$ctr\", \"cmd\": [\"cat\", \"/proc/self/oom_score_adj\"], \"timeout\": 20}"
  [ "$(jq -r .exit_code <<<"$output")" = 0 ]
  [ "$(jq -r .stdout <<<"$output")" = "$(cat "/proc/$pid/oom_score_adj")" ]
}

@test "CRI: UpdateContainerResources changes the container's cgroup" {
  local ctr mem cpu
  ctr=$(cat "$CTRD_DIR/cri-ctr")
  run cri UpdateContainerResources "{\"container_id\": \"$ctr\", \"linux\": {\"memory_limit_in_bytes\": 67108864, \"cpu_period\": 100000, \"cpu_quota\": 50000, \"cpu_shares\": 512, \"cpuset_cpus\": \"0\"}}"
  echo "$output"
  [ "$status" -eq 0 ]
  mem=$(cgroup_file memory memory.limit_in_bytes memory.max "$CRI_CGROUP/$ctr")
  cpu=$(cgroup_file cpu cpu.cfs_quota_us cpu.max "$CRI_CGROUP/$ctr")
  [ "$(cat "$mem")" = 67108864 ]
  [[ $(cat "$cpu") == 50000 || $(cat "$cpu") == "50000 100000" ]]
  [ "$(cat "$(cgroup_file cpuset cpuset.cpus cpuset.cpus "$CRI_CGROUP/$ctr")")" = 0 ]
  # what the container itself sees of its limit
  if [ -d /sys/fs/cgroup/memory ]; then
    run cri ExecSync "{\"container_id\": \"$ctr\", \"cmd\": [\"cat\", \"/sys/fs/cgroup/memory/memory.limit_in_bytes\"], \"timeout\": 20}"
    [ "$(jq -r .stdout <<<"$output")" = 67108864 ]
  fi
}

@test "CRI: StopContainer delivers SIGTERM, RemoveContainer deletes it from fsrun" {
  local ctr
  ctr=$(cat "$CTRD_DIR/cri-ctr")
  run cri StopContainer "{\"container_id\": \"$ctr\", \"timeout\": 20}"
  [ "$status" -eq 0 ]
  run cri ContainerStatus "{\"container_id\": \"$ctr\"}"
  echo "$output"
  [ "$(jq -r .status.state <<<"$output")" = CONTAINER_EXITED ]
  [ "$(jq -r .status.exit_code <<<"$output")" = 0 ]
  grep -q ' stdout F got-term$' "$CTRD_DIR/logs/work.log"

  run cri RemoveContainer "{\"container_id\": \"$ctr\"}"
  [ "$status" -eq 0 ]
  assert_gone_from_host "$FSRUN_CRI_ROOT/k8s.io" "$ctr"
}

@test "CRI: StopContainer kills a container that ignores SIGTERM after the timeout" {
  local pod config ctr
  pod=$(tail -n 1 "$CTRD_DIR/pods")
  config=$(jq -cn --arg image "$IMAGE" '{
    metadata: {name: "stubborn"}, image: {image: $image}, log_path: "stubborn.log",
    command: ["sh", "-c", "trap \"\" TERM; echo ignoring; while :; do sleep 1; done"]
  }')
  ctr=$(cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $config, \"sandbox_config\": $(pod_config)}" | jq -r .container_id)
  cri StartContainer "{\"container_id\": \"$ctr\"}"
  wait_file "$CTRD_DIR/logs/stubborn.log"
  [ "$(cri_fsrun state "$ctr" | jq -r .status)" = running ]

  run cri StopContainer "{\"container_id\": \"$ctr\", \"timeout\": 1}"
  [ "$status" -eq 0 ]
  run cri ContainerStatus "{\"container_id\": \"$ctr\"}"
  [ "$(jq -r .status.state <<<"$output")" = CONTAINER_EXITED ]
  [ "$(jq -r .status.exit_code <<<"$output")" = 137 ]
  cri RemoveContainer "{\"container_id\": \"$ctr\"}"
  assert_gone_from_host "$FSRUN_CRI_ROOT/k8s.io" "$ctr"
}

@test "CRI: a restricted container: RuntimeDefault seccomp, read-only root, non-root, own pid namespace" {
  local pod config ctr
  pod=$(tail -n 1 "$CTRD_DIR/pods")
  config=$(jq -cn --arg image "$IMAGE" '{
    metadata: {name: "restricted"}, image: {image: $image}, log_path: "restricted.log",
    command: ["sleep", "100000"],
    linux: {security_context: {
      seccomp: {profile_type: "RuntimeDefault"},
      namespace_options: {pid: "CONTAINER"},
      readonly_rootfs: true,
      run_as_user: {value: 1000},
      no_new_privs: true,
      capabilities: {drop_capabilities: ["NET_RAW"]}
    }}
  }')
  ctr=$(cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $config, \"sandbox_config\": $(pod_config)}" | jq -r .container_id)
  [ -n "$ctr" ]
  run cri StartContainer "{\"container_id\": \"$ctr\"}"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cri_fsrun state "$ctr" | jq -r .status)" = running ]

  run cri ExecSync "{\"container_id\": \"$ctr\", \"cmd\": [\"sh\", \"-c\", \"id -u; cat /proc/1/cmdline; echo; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; touch /probe; unshare -r true\"], \"timeout\": 20}"
  echo "$output"
  [ "$status" -eq 0 ]
  local out err bnd
  out=$(jq -r .stdout <<<"$output")
  err=$(jq -r .stderr <<<"$output")
  [ "$(jq -r .exit_code <<<"$output")" -ne 0 ] # unshare
  [ "$(sed -n 1p <<<"$out")" = 1000 ]
  [ "$(sed -n 2p <<<"$out" | tr -d '\0')" = sleep100000 ] # pid 1 is its own command, not the pod's
  grep -qx $'CapEff:\t0000000000000000' <<<"$out"
  grep -qx $'NoNewPrivs:\t1' <<<"$out"
  grep -qx $'Seccomp:\t2' <<<"$out"
  bnd=$(awk '$1 == "CapBnd:" { print $2 }' <<<"$out")
  [ $(((0x$bnd >> 13) & 1)) = 0 ] # CAP_NET_RAW
  [[ $err == *"/probe"*"Read-only file system"* ]]
  # the host lets uid 1000 make a user namespace; the runtime's default seccomp profile does not
  [[ $err == *"unshare"*"Operation not permitted"* ]]

  cri StopContainer "{\"container_id\": \"$ctr\", \"timeout\": 1}" >/dev/null
  cri RemoveContainer "{\"container_id\": \"$ctr\"}" >/dev/null
  assert_gone_from_host "$FSRUN_CRI_ROOT/k8s.io" "$ctr"
}

@test "CRI: hostPath volumes keep their own propagation (rprivate stays private, bidirectional is shared)" {
  local pod config ctr out
  pod=$(tail -n 1 "$CTRD_DIR/pods")
  mkdir -p "$CTRD_DIR/vol-private" "$CTRD_DIR/vol-shared"
  echo hostfile >"$CTRD_DIR/vol-private/f"
  # a bidirectional volume must come from a shared mount (containerd checks)
  mount --bind "$CTRD_DIR/vol-shared" "$CTRD_DIR/vol-shared"
  mount --make-rshared "$CTRD_DIR/vol-shared"
  config=$(jq -cn --arg image "$IMAGE" --arg p "$CTRD_DIR/vol-private" --arg s "$CTRD_DIR/vol-shared" '{
    metadata: {name: "volumes"}, image: {image: $image}, log_path: "volumes.log",
    command: ["sleep", "100000"],
    mounts: [
      {container_path: "/private", host_path: $p, readonly: true},
      {container_path: "/shared", host_path: $s, propagation: "PROPAGATION_BIDIRECTIONAL"}
    ]
  }')
  ctr=$(cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $config, \"sandbox_config\": $(pod_config)}" | jq -r .container_id)
  [ -n "$ctr" ]
  cri StartContainer "{\"container_id\": \"$ctr\"}"
  [ "$(cri_fsrun state "$ctr" | jq -r .status)" = running ]

  # a mount made on the host in the bidirectional volume shows in the container
  mkdir -p "$CTRD_DIR/vol-shared/sub"
  mount -t tmpfs -o size=1m fsrun-test-prop "$CTRD_DIR/vol-shared/sub"
  run cri ExecSync "{\"container_id\": \"$ctr\", \"cmd\": [\"sh\", \"-c\", \"cat /private/f; grep -E ' /(private|shared|shared/sub) ' /proc/self/mountinfo\"], \"timeout\": 20}"
  umount "$CTRD_DIR/vol-shared/sub"
  echo "$output"
  [ "$status" -eq 0 ]
  out=$(jq -r .stdout <<<"$output")
  [ "$(head -n 1 <<<"$out")" = hostfile ]
  # mountinfo: field 5 is the mount point, the optional fields run from 7 to "-"
  [ -z "$(awk '$5 == "/private" { for (i = 7; $i != "-"; i++) printf "%s ", $i }' <<<"$out")" ]
  [[ $(awk '$5 == "/shared" { for (i = 7; $i != "-"; i++) printf "%s ", $i }' <<<"$out") == *shared:* ]]
  grep -q ' /shared/sub .* fsrun-test-prop ' <<<"$out"

  cri StopContainer "{\"container_id\": \"$ctr\", \"timeout\": 1}" >/dev/null
  cri RemoveContainer "{\"container_id\": \"$ctr\"}" >/dev/null
  umount "$CTRD_DIR/vol-shared"
  assert_gone_from_host "$FSRUN_CRI_ROOT/k8s.io" "$ctr"
}

@test "CRI: StopPodSandbox and RemovePodSandbox leave nothing of the pod" {
  local pod
  pod=$(tail -n 1 "$CTRD_DIR/pods")
  run cri StopPodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
  [ "$status" -eq 0 ]
  run cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
  [ "$(jq -r .status.state <<<"$output")" = SANDBOX_NOTREADY ]
  run cri RemovePodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
  [ "$status" -eq 0 ]
  run cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
  [ "$status" -ne 0 ]

  # (the state root's cache of compiled seccomp programs is fsrun's, not the pod's)
  run ls -A "$FSRUN_CRI_ROOT/k8s.io"
  [ "$(grep -vx '\.seccomp-cache' <<<"$output")" = "" ]
  ! grep -F "$CTRD_DIR/state/" /proc/self/mountinfo || false
  ! compgen -G "/sys/fs/cgroup/*${CRI_CGROUP}/*/" || false
  [ -z "$(ls -A "$RUNC_CRI_ROOT/k8s.io" 2>/dev/null)" ]
}

@test "no shim of this containerd is left once every task is deleted" {
  for _ in $(seq $((WAIT_MAX_S * 5))); do
    [ -z "$(ctrd_shim_pids)" ] && break
    sleep 0.2
  done
  [ -z "$(ctrd_shim_pids)" ]
}
