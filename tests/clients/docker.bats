#!/usr/bin/env bats
# fsrun as a drop-in backend for Docker's `runtimes`: a private dockerd (Debian's docker.io 20.10,
# its own data-root, exec-root, socket, managed containerd, bridge and cgroup parent) with
# `"runtimes": {"fsrun": {"path": $FSRUN}}`, driven by Debian's docker client. Docker reaches
# fsrun through containerd's runc shim v2: create/start/exec/kill/pause/update/delete/ps with
# `--root EXEC_ROOT/runtime-runc/moby`.

load ../integration/helpers
load docker-helpers

setup_file() {
  [ "$EUID" = 0 ] || skip "needs root"
  if [ ! -x "$DK_DAEMON" ] || [ ! -x "$DK_CLIENT" ]; then
    skip "needs Debian's docker.io (/usr/sbin/dockerd, /usr/bin/docker)"
  fi
  if ! command -v containerd >/dev/null || ! command -v containerd-shim-runc-v2 >/dev/null; then
    skip "needs containerd and containerd-shim-runc-v2 (Debian package containerd)"
  fi
  command -v jq >/dev/null || skip "needs jq"
  [ -x "$FSRUN" ] || skip "no fsrun binary at $FSRUN"
  [[ $FSRUN == /* ]] || FSRUN=$(cd "$(dirname "$FSRUN")" && pwd)/$(basename "$FSRUN")
  export FSRUN
  # the host's forwarding setting, which the daemon must leave as it found it
  export DK_HOST_IP_FORWARD
  DK_HOST_IP_FORWARD=$(cat /proc/sys/net/ipv4/ip_forward)
  dk_start_daemon
}

teardown_file() {
  dk_stop_daemon
}

teardown() {
  # a failed test must not leave its containers to the next one
  local ids
  ids=$(dk ps -aq --filter label=fsrun-test 2>/dev/null) || return 0
  # shellcheck disable=SC2086
  [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
}

# dk_detached NAME ARGS...: a background container labelled for teardown
dk_detached() {
  local name=$1
  shift
  dk run -d --runtime fsrun --label fsrun-test --name "$name" "$@" >/dev/null
}

# the value of a /proc/self/status field in container output
status_field() {
  awk -v f="$1:" '$1 == f { print $2 }' <<<"$2"
}

@test "docker info lists fsrun and shows the commit of its --version" {
  run dk info --format '{{json .Runtimes}}'
  [ "$status" -eq 0 ]
  [ "$(jq -r '.fsrun.path' <<<"$output")" = "$FSRUN" ]
  run dk info --format '{{.DefaultRuntime}} {{.RuncCommit.ID}}'
  [ "$status" -eq 0 ]
  # Docker parses `fsrun --version` as runc's: "NAME version X" and "commit: C"
  local commit
  commit=$("$FSRUN" --version | sed -n 's/^commit: *//p')
  [ -n "$commit" ]
  [ "$output" = "fsrun $commit" ]
}

@test "docker run: output, stdin, exit code propagation" {
  dk_run "$DK_IMAGE" echo hello from fsrun
  [ "$status" -eq 0 ]
  [ "$output" = "hello from fsrun" ]

  dk_run "$DK_IMAGE" sh -c 'exit 3'
  [ "$status" -eq 3 ]

  run bash -c 'echo piped-in | "$0" -H "unix://$1/docker.sock" run --runtime fsrun --rm -i "$2" cat' \
    "$DK_CLIENT" "$DK_DIR" "$DK_IMAGE"
  [ "$status" -eq 0 ]
  [ "$output" = piped-in ]

  # the clients' exit codes for a command that is missing (127) or not executable (126)
  local rc=0
  output=$(dk run --runtime fsrun --rm "$DK_IMAGE" /no/such/command 2>&1) || rc=$?
  [ "$rc" -eq 127 ]
  [[ $output == *"no such file or directory"* ]]
  rc=0
  output=$(dk run --runtime fsrun --rm "$DK_IMAGE" /etc/passwd 2>&1) || rc=$?
  [ "$rc" -eq 126 ]
  [[ $output == *"permission denied"* ]]
}

@test "docker run -t gives the container a terminal" {
  dk_run -t "$DK_IMAGE" sh -c 'tty; [ -t 1 ] && echo stdout-is-a-tty'
  [ "$status" -eq 0 ]
  [[ ${lines[0]%$'\r'} == /dev/pts/* ]]
  [ "${lines[1]%$'\r'}" = stdout-is-a-tty ]
  dk_run "$DK_IMAGE" tty
  [ "$status" -ne 0 ]
  [[ $output == *"not a tty"* ]]
}

@test "docker run -d runs the container with fsrun; exec, top, ps" {
  dk_detached e1 "$DK_IMAGE" sleep 1000
  local id pid
  id=$(dk_id e1)
  pid=$(dk inspect -f '{{.State.Pid}}' e1)
  [ "$(dk inspect -f '{{.HostConfig.Runtime}}' e1)" = fsrun ]
  # fsrun's own state for the container agrees with Docker
  run dk_fsrun state "$id"
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = running ]
  [ "$(jq -r .pid <<<"$output")" = "$pid" ]

  run dk ps --filter name=e1 --format '{{.Status}}'
  [[ $output == Up* ]]

  # stdout and stderr stay apart; the exec sees the container's init
  output=$(dk exec e1 sh -c 'echo exec-out; echo exec-err >&2; cat /proc/1/cmdline | tr "\0" " "' \
    2>"$BATS_TEST_TMPDIR/err")
  [ "$output" = "exec-out"$'\n'"sleep 1000 " ]
  [ "$(cat "$BATS_TEST_TMPDIR/err")" = exec-err ]

  run dk exec e1 sh -c 'exit 5'
  [ "$status" -eq 5 ]
  run dk exec e1 sh -c 'kill -9 $$'
  [ "$status" -eq 137 ]

  run dk exec -t e1 tty
  [ "$status" -eq 0 ]
  [[ ${output%$'\r'} == /dev/pts/* ]]
  run dk exec e1 tty
  [ "$status" -ne 0 ]

  run dk exec -u 1000:1000 -w /tmp -e FOO=bar e1 sh -c 'id -u; id -g; pwd; echo "$FOO"'
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "1000 1000 /tmp bar" ]

  # the exec joined the container's namespaces
  local ns
  for ns in pid mnt net ipc uts; do
    run dk exec e1 readlink "/proc/self/ns/$ns"
    [ "$output" = "$(readlink "/proc/$pid/ns/$ns")" ]
  done

  # docker top asks the runtime (`ps`) which processes belong to the container
  dk exec -d e1 sleep 777
  local i
  for i in $(seq $((WAIT_MAX_S * 10))); do
    dk top e1 -o pid,args | grep -q 'sleep 777' && break
    sleep 0.1
  done
  run dk top e1 -o pid,args
  [ "$status" -eq 0 ]
  [[ $output == *"$pid "*"sleep 1000"* ]]
  [[ $output == *"sleep 777"* ]]
  [ "${#lines[@]}" -eq 3 ] # a header and the two sleeps, nothing of the host
}

@test "docker stop: SIGTERM first, SIGKILL after the timeout" {
  dk_detached st1 "$DK_IMAGE" sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.1; done'
  local i
  for i in $(seq $((WAIT_MAX_S * 10))); do
    [ "$(dk logs st1 2>&1)" = ready ] && break
    sleep 0.1
  done
  run dk stop -t 20 st1
  [ "$status" -eq 0 ]
  [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' st1)" = "exited 7" ]
  run dk logs st1
  [ "$output" = "ready"$'\n'"got-term" ]

  # the container's init ignores SIGTERM (pid 1 without a handler): docker stop must SIGKILL it
  dk_detached st2 "$DK_IMAGE" sleep 1000
  run dk stop -t 1 st2
  [ "$status" -eq 0 ]
  [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}' st2)" = "exited 137 false" ]

  # a stopped container starts again, under fsrun, with a new init
  local pid
  dk_detached rs1 "$DK_IMAGE" sleep 1000
  pid=$(dk inspect -f '{{.State.Pid}}' rs1)
  run dk restart -t 1 rs1
  [ "$status" -eq 0 ]
  [ "$(dk inspect -f '{{.State.Status}}' rs1)" = running ]
  [ "$(dk inspect -f '{{.State.Pid}}' rs1)" != "$pid" ]
  run dk_fsrun state "$(dk_id rs1)"
  [ "$(jq -r .status <<<"$output")" = running ]
}

@test "docker kill: a chosen signal reaches the process, the default one kills" {
  dk_detached k1 "$DK_IMAGE" sh -c 'trap "echo got-usr1" USR1; echo ready; while :; do sleep 0.1; done'
  local i
  for i in $(seq $((WAIT_MAX_S * 10))); do
    [ "$(dk logs k1 2>&1)" = ready ] && break
    sleep 0.1
  done
  run dk kill -s USR1 k1
  [ "$status" -eq 0 ]
  for i in $(seq $((WAIT_MAX_S * 10))); do
    dk logs k1 2>&1 | grep -q got-usr1 && break
    sleep 0.1
  done
  run dk logs k1
  [[ $output == *got-usr1* ]]
  [ "$(dk inspect -f '{{.State.Status}}' k1)" = running ]

  run dk kill k1
  [ "$status" -eq 0 ]
  dk wait k1 >/dev/null
  [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' k1)" = "exited 137" ]
  # killing a stopped container is an error
  run dk kill k1
  [ "$status" -ne 0 ]
  [[ $output == *"is not running"* ]]
}

@test "docker pause and unpause freeze and thaw the container's cgroup" {
  dk_detached p1 "$DK_IMAGE" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count; sleep 0.05; done'
  local id
  id=$(dk_id p1)
  run dk pause p1
  [ "$status" -eq 0 ]
  [ "$(cat "$(dk_cgroup freezer "$id")/freezer.state")" = FROZEN ]
  [ "$(dk inspect -f '{{.State.Status}}' p1)" = paused ]
  run dk_fsrun state "$id"
  [ "$(jq -r .status <<<"$output")" = paused ]
  run dk exec p1 true
  [ "$status" -ne 0 ]
  [[ $output == *paused* ]]

  run dk unpause p1
  [ "$status" -eq 0 ]
  [ "$(cat "$(dk_cgroup freezer "$id")/freezer.state")" = THAWED ]
  [ "$(dk inspect -f '{{.State.Status}}' p1)" = running ]
  # it runs again: the counter moves
  local before after i
  before=$(dk exec p1 cat /tmp/count)
  for i in $(seq $((WAIT_MAX_S * 10))); do
    after=$(dk exec p1 cat /tmp/count)
    [ "$after" -gt "$before" ] && break
    sleep 0.1
  done
  [ "$after" -gt "$before" ]
}

@test "docker run --memory and docker update --memory/--cpus set the host cgroup" {
  dk_detached u1 --memory 48m --memory-swap 96m --cpus 1.5 "$DK_IMAGE" sleep 1000
  local id mem cpu
  id=$(dk_id u1)
  mem=$(dk_cgroup memory "$id") cpu=$(dk_cgroup cpu "$id")
  [ "$(cat "$mem/memory.limit_in_bytes")" = $((48 << 20)) ]
  [ "$(cat "$mem/memory.memsw.limit_in_bytes")" = $((96 << 20)) ]
  [ "$(cat "$cpu/cpu.cfs_quota_us")" = 150000 ]
  [ "$(cat "$cpu/cpu.cfs_period_us")" = 100000 ]
  # what Docker sends as 0 (shares, reservation) keeps the kernel's default
  [ "$(cat "$cpu/cpu.shares")" = 1024 ]
  [ "$(cat "$mem/memory.soft_limit_in_bytes")" = "$(cat /sys/fs/cgroup/memory/memory.soft_limit_in_bytes)" ]
  # the container's init is in that cgroup, and sees its own limit
  grep -qx "$(dk inspect -f '{{.State.Pid}}' u1)" "$mem/cgroup.procs"
  run dk exec u1 cat /sys/fs/cgroup/memory/memory.limit_in_bytes
  [ "$output" = $((48 << 20)) ]

  run dk update --memory 64m --memory-swap 128m --cpus 0.5 u1
  [ "$status" -eq 0 ]
  [ "$(cat "$mem/memory.limit_in_bytes")" = $((64 << 20)) ]
  [ "$(cat "$mem/memory.memsw.limit_in_bytes")" = $((128 << 20)) ]
  [ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ]
  [ "$(dk inspect -f '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}' u1)" = "$((64 << 20)) 500000000" ]

  # an update of one resource leaves the others alone (Docker sends 0 for them)
  run dk update --cpu-shares 512 u1
  [ "$status" -eq 0 ]
  [ "$(cat "$cpu/cpu.shares")" = 512 ]
  [ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ]
  [ "$(cat "$mem/memory.limit_in_bytes")" = $((64 << 20)) ]
  run dk update --memory 32m u1
  [ "$status" -eq 0 ]
  [ "$(cat "$mem/memory.limit_in_bytes")" = $((32 << 20)) ]
  [ "$(cat "$cpu/cpu.shares")" = 512 ]
  [ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ]

  run dk update --pids-limit 77 u1
  [ "$status" -eq 0 ]
  [ "$(cat "$(dk_cgroup pids "$id")/pids.max")" = 77 ]
}

@test "docker run --memory: a process over the limit is OOM-killed and Docker reports it" {
  # tail buffers /dev/zero's one endless line until the memory cgroup kills it
  run dk run --runtime fsrun --label fsrun-test --name oom1 --memory 16m --memory-swap 16m \
    "$DK_IMAGE" tail /dev/zero
  [ "$status" -eq 137 ]
  [ "$(dk inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' oom1)" = "137 true" ]
}

@test "docker rm -f removes a running container and everything fsrun made for it" {
  dk_detached rm1 "$DK_IMAGE" sleep 1000
  local id pid
  id=$(dk_id rm1)
  pid=$(dk inspect -f '{{.State.Pid}}' rm1)
  [ -d "$(dk_state_root)/$id" ]
  [ -d "$(dk_cgroup memory "$id")" ]
  run dk rm -f rm1
  [ "$status" -eq 0 ]
  [ -z "$(dk ps -aq --filter "id=$id")" ]
  [ ! -e "$(dk_state_root)/$id" ]
  run _fsrun_pid_alive "$pid"
  [ "$status" -ne 0 ]
  local ctrl
  for ctrl in memory cpu pids freezer devices blkio cpuset; do
    [ ! -e "$(dk_cgroup "$ctrl" "$id")" ]
  done
  run grep -F "$id" /proc/self/mountinfo
  [ "$status" -eq 1 ]
}

@test "docker run --user, --read-only, --tmpfs, -v" {
  dk_run --user 1000:1000 "$DK_IMAGE" id
  [ "$status" -eq 0 ]
  [ "$output" = "uid=1000 gid=1000 groups=1000" ]

  dk_run --read-only "$DK_IMAGE" sh -c 'touch /newfile'
  [ "$status" -ne 0 ]
  [[ $output == *"Read-only file system"* ]]
  dk_run --read-only --tmpfs /scratch "$DK_IMAGE" sh -c 'touch /scratch/f && echo writable'
  [ "$status" -eq 0 ]
  [ "$output" = writable ]
  # without --read-only the root is writable
  dk_run "$DK_IMAGE" sh -c 'touch /newfile && echo writable'
  [ "$output" = writable ]

  mkdir -p "$DK_DIR/vol"
  dk_run -v "$DK_DIR/vol:/vol" "$DK_IMAGE" sh -c 'echo from-container >/vol/f'
  [ "$status" -eq 0 ]
  [ "$(cat "$DK_DIR/vol/f")" = from-container ]
  dk_run -v "$DK_DIR/vol:/vol:ro" "$DK_IMAGE" sh -c 'echo x >/vol/g'
  [ "$status" -ne 0 ]
  [ ! -e "$DK_DIR/vol/g" ]
}

@test "docker run --cap-drop/--cap-add, privileged, seccomp, no-new-privileges" {
  dk_run --cap-drop ALL "$DK_IMAGE" cat /proc/self/status
  [ "$status" -eq 0 ]
  [ "$(status_field CapEff "$output")" = 0000000000000000 ]
  [ "$(status_field CapBnd "$output")" = 0000000000000000 ]
  [ "$(status_field CapPrm "$output")" = 0000000000000000 ]

  # CAP_CHOWN (bit 0) and CAP_NET_ADMIN (bit 12)
  dk_run --cap-drop ALL --cap-add CHOWN --cap-add NET_ADMIN "$DK_IMAGE" cat /proc/self/status
  [ "$(status_field CapEff "$output")" = 0000000000001001 ]
  [ "$(status_field CapBnd "$output")" = 0000000000001001 ]

  # Docker's default set (chown, dac_override, fowner, fsetid, kill, setgid, setuid, setpcap,
  # net_bind_service, net_raw, sys_chroot, mknod, audit_write, setfcap), its seccomp profile
  dk_run "$DK_IMAGE" cat /proc/self/status
  [ "$(status_field CapEff "$output")" = 00000000a80425fb ]
  [ "$(status_field Seccomp "$output")" = 2 ]
  [ "$(status_field NoNewPrivs "$output")" = 0 ]
  # the profile is enforced: unshare(CLONE_NEWUSER) needs no capability, but Docker's profile
  # refuses it without CAP_SYS_ADMIN
  dk_run "$DK_IMAGE" unshare -U true
  [ "$status" -ne 0 ]
  [[ $output == *"Operation not permitted"* ]]
  dk_run --security-opt seccomp=unconfined "$DK_IMAGE" unshare -U true
  [ "$status" -eq 0 ]

  dk_run --security-opt no-new-privileges "$DK_IMAGE" cat /proc/self/status
  [ "$(status_field NoNewPrivs "$output")" = 1 ]

  # privileged: every capability Docker knows (0 .. N-1, in config.json) that this host's bounding
  # set has (not CAP_SYS_RESOURCE here), no seccomp, host devices, mount allowed
  dk_detached pv1 --privileged "$DK_IMAGE" sleep 1000
  local n want host_bnd
  n=$(jq '.process.capabilities.bounding | length' \
    "$DK_DIR/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/$(dk_id pv1)/config.json")
  [ "$n" -ge 38 ]
  host_bnd=$(status_field CapBnd "$(cat /proc/self/status)")
  want=$(printf '%016x' $((((1 << n) - 1) & 0x$host_bnd)))
  run dk exec pv1 cat /proc/1/status
  [ "$(status_field CapEff "$output")" = "$want" ]
  [ "$(status_field CapBnd "$output")" = "$want" ]
  [ "$(status_field Seccomp "$output")" = 0 ]
  run dk exec pv1 sh -c 'mount -t tmpfs none /tmp && grep -c " /tmp tmpfs" /proc/mounts'
  [ "$status" -eq 0 ]
  [ "$output" = 1 ]
  # the host's devices are there (the default set has no /dev/kmsg)
  run dk exec pv1 test -c /dev/kmsg
  [ "$status" -eq 0 ]
  run dk exec pv1 sh -c 'ls /dev | wc -l'
  [ "$output" -gt 20 ]
}

@test "docker run options: hostname, env, workdir, ulimit, pids, sysctl, shm, --init" {
  dk_run -h dkhost -e FOO=bar -w /tmp --ulimit nofile=1000:1000 --pids-limit 50 \
    --sysctl net.ipv4.ip_unprivileged_port_start=80 --shm-size 8m "$DK_IMAGE" \
    sh -c 'hostname; echo $FOO; pwd; ulimit -n; cat /sys/fs/cgroup/pids/pids.max;
           cat /proc/sys/net/ipv4/ip_unprivileged_port_start; df -k /dev/shm | awk "NR==2 {print \$2}"'
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "dkhost bar /tmp 1000 50 80 8192" ]

  # --init: Docker's tini (docker-init), bind-mounted from the host, is pid 1
  dk_run --init "$DK_IMAGE" sh -c 'cat /proc/1/comm'
  [ "$status" -eq 0 ]
  [ "$output" = docker-init ]
}

@test "docker run --network none: the prestart hook runs, only lo exists" {
  dk_detached n1 --network none "$DK_IMAGE" sleep 1000
  local id pid key
  id=$(dk_id n1)
  pid=$(dk inspect -f '{{.State.Pid}}' n1)
  # Docker's config.json asks for its libnetwork-setkey hook ...
  jq -e '.hooks.prestart[0].args[0] == "libnetwork-setkey"' \
    "$DK_DIR/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/$id/config.json"
  # ... which tells dockerd the container's network namespace: dockerd binds it at the sandbox key
  key=$(dk inspect -f '{{.NetworkSettings.SandboxKey}}' n1)
  [ -n "$key" ]
  [ "$(stat -L -c %i "$key")" = "$(stat -L -c %i "/proc/$pid/ns/net")" ]
  [ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ]

  run dk exec n1 ls /sys/class/net
  [ "$status" -eq 0 ]
  [ "$output" = lo ]
  run dk exec n1 ip -o link show up
  [[ $output == *"lo:"* ]]
}

@test "docker run on the default bridge: eth0 with Docker's address" {
  [ -n "$DK_SUBNET" ] || skip "no bridge device (ip link add type bridge failed)"
  dk_detached b1 "$DK_IMAGE" sleep 1000
  local ip pid
  ip=$(dk inspect -f '{{.NetworkSettings.IPAddress}}' b1)
  [[ $ip == "$DK_SUBNET".* ]]
  # the prestart hook ran: dockerd got the container's network namespace and moved eth0 into it
  pid=$(dk inspect -f '{{.State.Pid}}' b1)
  [ "$(stat -L -c %i "$(dk inspect -f '{{.NetworkSettings.SandboxKey}}' b1)")" = \
    "$(stat -L -c %i "/proc/$pid/ns/net")" ]
  run dk exec b1 ip -o -4 addr show dev eth0
  [ "$status" -eq 0 ]
  [[ $output == *"inet $ip/24"* ]]
  # the host end is on our bridge, and the gateway answers
  [ -n "$(dk_net ip link show master "$DK_BRIDGE")" ]
  run dk exec b1 ping -c 1 -W 5 "$DK_SUBNET.1"
  [ "$status" -eq 0 ]
  # and Docker wrote the container's /etc/hosts with that address
  run dk exec b1 cat /etc/hosts
  [[ $output == *"$ip"* ]]
}

@test "after the containers are removed nothing of them is left" {
  local ids
  ids=$(dk ps -aq)
  # shellcheck disable=SC2086
  [ -z "$ids" ] || dk rm -f $ids >/dev/null
  [ -z "$(dk ps -aq)" ]
  # no fsrun state dirs (the state root's cache of compiled seccomp programs is fsrun's: Docker
  # passes its default profile to every container)
  [ -z "$(ls -A "$(dk_state_root)" | grep -vx '\.seccomp-cache')" ]
  # no container rootfs or network namespace mounted
  run dk_mounts
  [[ $output != *"/merged"* ]]
  [[ $output != *"/netns/"* ]]
  # no cgroups, no processes, no veth on the bridge, no shims left (the shims exit on their own)
  local i shims
  for i in $(seq $((WAIT_MAX_S * 5))); do
    shims=$(dk_pids_matching "$DK_DIR/exec/containerd/containerd.sock")
    [ -z "$shims" ] && break
    sleep 0.2
  done
  [ -z "$shims" ]
  # no fsrun process (Docker's calls name the state root) and nothing in the containers' cgroups
  [ -z "$(dk_pids_matching "$(dk_state_root)")" ]
  [ -z "$(dk_container_pids)" ]
  [ -z "$(find /sys/fs/cgroup/*"$DK_CGPARENT" -mindepth 1 -type d 2>/dev/null)" ]
  [ -z "$DK_BRIDGE" ] || [ -z "$(dk_net ip link show master "$DK_BRIDGE")" ]
  # the host's network is not the daemon's: no bridge of ours there, forwarding as it was
  [ -z "$DK_BRIDGE" ] || [ -z "$(ip link show "$DK_BRIDGE" 2>/dev/null)" ]
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$DK_HOST_IP_FORWARD" ]
}
