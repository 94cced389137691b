# Helpers for tests/clients/docker.bats: a private dockerd (Debian's docker.io 20.10) whose `fsrun`
# runtime is $FSRUN, and a clean stop of it.
#
#   dk_start_daemon      (setup_file) start dockerd and its managed containerd with every path
#                        under $DK_DIR, in a network namespace of its own with a bridge of its own
#                        ($DK_BRIDGE, "" when the kernel has no bridges) and the cgroup parent
#                        $DK_CGPARENT; load $DK_IMAGE
#   dk_stop_daemon       (teardown_file) remove the containers, stop the daemons by pid, kill what
#                        is left of them, unmount, remove the cgroups, the bridge and $DK_DIR
#   dk ARGS...           Debian's docker client (/usr/bin/docker) against the private daemon
#   dk_run ARGS...       `dk run --runtime fsrun --rm ARGS...` under bats' `run`
#   dk_fsrun ARGS...     fsrun with the state root Docker's runtime calls use
#   dk_cgroup CTRL ID    the host cgroup v1 directory of container ID for controller CTRL
#   dk_id NAME           the full id of container NAME
#   dk_net CMD...        CMD in the daemon's network namespace (e.g. dk_net ip link)
#
# Nothing here touches the machine's default Docker or containerd paths (/var/lib/docker,
# /run/docker.sock, /run/containerd) or the host's network, except for what these daemons always make: the shims'
# sockets under /run/containerd/s (named by a hash of our containerd's address; each shim removes
# its own) and an empty /run/docker/plugins (removed again when this run made it).

DK_CLIENT=/usr/bin/docker # /usr/local/bin/docker is a different, newer client
DK_DAEMON=/usr/sbin/dockerd
DK_IMAGE=localhost/fsrun-test/busybox:latest
# the moby namespace's state root: Docker names it runtime-runc whatever the runtime
dk_state_root() { echo "$DK_DIR/exec/runtime-runc/moby"; }

dk() {
  DOCKER_CONFIG=$DK_DIR/client "$DK_CLIENT" -H "unix://$DK_DIR/docker.sock" "$@"
}

dk_run() {
  run dk run --runtime fsrun --rm "$@"
}

dk_fsrun() {
  "$FSRUN" --root "$(dk_state_root)" "$@"
}

dk_id() {
  dk inspect -f '{{.Id}}' "$1"
}

dk_cgroup() {
  echo "/sys/fs/cgroup/$1$DK_CGPARENT/$2"
}

# dk_pids_matching PATTERN: pids of the processes whose command line contains PATTERN
dk_pids_matching() {
  local f
  # (the glob is expanded before grep starts: grep's own command line is not among the files)
  while IFS= read -r f; do
    f=${f#/proc/}
    echo "${f%/cmdline}"
  done < <(grep -lF -- "$1" /proc/[0-9]*/cmdline 2>/dev/null)
}

# processes in our cgroup parent (the containers' processes), from the pids controller
dk_container_pids() {
  local dir=/sys/fs/cgroup/pids$DK_CGPARENT
  [ -d "$dir" ] || return 0
  find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null
}

# our mounts, deepest first
dk_mounts() {
  awk -v dir="$DK_DIR" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# dk_net CMD...: CMD in the daemon's network namespace ($DK_DIR/net.ns, a bind mount of it)
dk_net() {
  nsenter --net="$DK_DIR/net.ns" -- "$@"
}

# _dk_image_tar OUT: the busybox docker-archive of tests/clients/image.sh (kept in $TEST_CACHE
# when contrib/run-tests.sh gives one: it is the same bytes for the same busybox)
_dk_image_tar() {
  local out=$1 cache=""
  [ -x "$BATS_TEST_DIRNAME/image.sh" ] || return 1
  if [ -n "${TEST_CACHE:-}" ] && [ -d "$TEST_CACHE" ]; then
    cache=$TEST_CACHE/docker-busybox.tar
    [ -s "$cache" ] && cp "$cache" "$out" && return 0
  fi
  "$BATS_TEST_DIRNAME/image.sh" "$out" "$DK_IMAGE" >/dev/null || return 1
  if [ -n "$cache" ]; then
    cp "$out" "$cache.$$" && mv "$cache.$$" "$cache"
  fi
  return 0
}

dk_start_daemon() {
  DK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fsrun-docker.XXXXXX")
  DK_CGPARENT=/fsrun-docker-${DK_DIR##*.}
  # removed by the sweep after the file (contrib/lib.sh) if dk_stop_daemon could not (bats stopped)
  [ -z "${FSRUN_SWEEP_CGROUPS:-}" ] || echo "${DK_CGPARENT#/}" >>"$FSRUN_SWEEP_CGROUPS"
  DK_BRIDGE="" DK_SUBNET=""
  export DK_DIR DK_CGPARENT DK_BRIDGE DK_SUBNET
  mkdir -p "$DK_DIR/client"
  # dockerd always makes /run/docker/plugins (no option moves it): removed again if it is new
  [ -e /run/docker ] || touch "$DK_DIR/made-run-docker"

  # dockerd, its containerd and the shims live in a network namespace of their own: the host's
  # interfaces, routes and sysctls are neither seen nor changed, whatever state they are in. In it
  # a bridge of ours makes Docker's default bridge network work offline, without iptables or a
  # docker0 that another daemon might want; and ip_forward is on there (a namespace's own
  # setting), or Docker adds "IPv4 forwarding is disabled" to every `docker run`'s output.
  touch "$DK_DIR/net.ns"
  unshare --net="$DK_DIR/net.ns" true || return 1
  dk_net ip link set lo up || return 1
  dk_net sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward' || return 1
  local bridge_json='"none"'
  if dk_net ip link add name fsdk0 type bridge 2>/dev/null; then
    DK_BRIDGE=fsdk0
    if dk_net ip addr add 10.213.0.1/24 dev fsdk0 && dk_net ip link set fsdk0 up; then
      DK_SUBNET=10.213.0
      bridge_json='"fsdk0"'
    fi
  fi
  export DK_BRIDGE DK_SUBNET

  jq -n --arg d "$DK_DIR" --argjson bridge "$bridge_json" \
    --arg cgparent "$DK_CGPARENT" '{
      "data-root": "\($d)/data",
      "exec-root": "\($d)/exec",
      "pidfile": "\($d)/docker.pid",
      "hosts": ["unix://\($d)/docker.sock"],
      "deprecated-key-path": "\($d)/key.json",
      "iptables": false,
      "ip6tables": false,
      "ip-forward": false,
      "ip-masq": false,
      "userland-proxy": false,
      "bridge": $bridge,
      "storage-driver": "overlay2",
      "cgroup-parent": $cgparent,
      "exec-opts": ["native.cgroupdriver=cgroupfs"],
      "log-driver": "json-file",
      "default-runtime": "fsrun"
    }' >"$DK_DIR/daemon.base.json" || return 1
  # the runtime's entry is the shipped contrib/configs/docker/daemon.json, merged in as a user
  # merges it into theirs; only the binary's path is the test's
  jq -e '.runtimes.fsrun.path | strings' "$FSRUN_SRCDIR/contrib/configs/docker/daemon.json" >/dev/null || {
    echo "contrib/configs/docker/daemon.json has no runtimes.fsrun.path" >&2
    return 1
  }
  jq -s --arg fsrun "$FSRUN" '.[0] * .[1] | .runtimes.fsrun.path = $fsrun' "$DK_DIR/daemon.base.json" \
    "$FSRUN_SRCDIR/contrib/configs/docker/daemon.json" >"$DK_DIR/daemon.json" || return 1

  # Debian's dockerd, containerd and shim only (PATH), and no fd of bats' left open in them
  nsenter --net="$DK_DIR/net.ns" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$DK_DIR" \
    "$DK_DAEMON" --config-file "$DK_DIR/daemon.json" </dev/null >"$DK_DIR/dockerd.log" 2>&1 3>&- &
  DK_DAEMON_PID=$!
  export DK_DAEMON_PID
  echo "$DK_DAEMON_PID" >"$DK_DIR/dockerd.started-pid"

  local i
  for i in $(seq $((WAIT_MAX_S * 5))); do
    dk version >/dev/null 2>&1 && break
    if ! kill -0 "$DK_DAEMON_PID" 2>/dev/null; then
      echo "dockerd exited during start-up:" >&2
      tail -n 30 "$DK_DIR/dockerd.log" >&2
      return 1
    fi
    sleep 0.2
  done
  dk version >/dev/null || {
    tail -n 30 "$DK_DIR/dockerd.log" >&2
    return 1
  }

  if _dk_image_tar "$DK_DIR/image.tar" && dk load -i "$DK_DIR/image.tar" >/dev/null; then
    :
  else
    # without image.sh: a busybox rootfs of the integration tests' shape, imported
    fsrun_make_busybox_rootfs "$DK_DIR/rootfs" &&
      tar -C "$DK_DIR/rootfs" -cf "$DK_DIR/rootfs.tar" . &&
      dk import -c 'CMD ["sh"]' "$DK_DIR/rootfs.tar" "$DK_IMAGE" >/dev/null || return 1
  fi
  rm -rf "$DK_DIR/rootfs" "$DK_DIR/rootfs.tar" "$DK_DIR/image.tar"
}

dk_stop_daemon() {
  [ -n "${DK_DIR:-}" ] && [ -d "$DK_DIR" ] || return 0
  local pid i ids containerd_pid=""
  [ -f "$DK_DIR/exec/containerd/containerd.pid" ] && containerd_pid=$(cat "$DK_DIR/exec/containerd/containerd.pid")
  if [ -n "${DK_DAEMON_PID:-}" ] && kill -0 "$DK_DAEMON_PID" 2>/dev/null; then
    ids=$(dk ps -aq 2>/dev/null)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || timeout 60 "$DK_CLIENT" -H "unix://$DK_DIR/docker.sock" rm -f $ids >/dev/null 2>&1
    kill -TERM "$DK_DAEMON_PID"
    for i in $(seq 150); do
      kill -0 "$DK_DAEMON_PID" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$DK_DAEMON_PID" 2>/dev/null
  fi
  # dockerd stops its containerd; if it could not: that containerd (ours: its config is in DK_DIR)
  if [ -n "$containerd_pid" ] && grep -qF "$DK_DIR" "/proc/$containerd_pid/cmdline" 2>/dev/null; then
    kill -TERM "$containerd_pid"
    for i in $(seq 50); do
      kill -0 "$containerd_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$containerd_pid" 2>/dev/null
  fi
  # shims of our containerd (their command line names its address), then container processes
  for pid in $(dk_pids_matching "$DK_DIR/exec/containerd/containerd.sock"); do
    kill -KILL "$pid" 2>/dev/null
  done
  for pid in $(dk_container_pids); do
    kill -KILL "$pid" 2>/dev/null
  done
  # (the network namespace goes with its mount, $DK_DIR/net.ns, and its bridge with it)
  local m
  for m in $(dk_mounts); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  local dir
  for dir in /sys/fs/cgroup/*"$DK_CGPARENT"; do
    [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  # (empty, and no other dockerd on the machine that could be using it)
  if [ -e "$DK_DIR/made-run-docker" ] && ! pgrep -x dockerd >/dev/null; then
    rmdir /run/docker/plugins /run/docker 2>/dev/null
  fi
  rm -rf --one-file-system "$DK_DIR"
}
