# shellcheck shell=bash
# Helpers for tests/clients/podman.bats: podman (through conmon) driving fsrun as a named runtime,
# rootful and rootless, with configuration, storage and a test user of the file's own.
#
#   podman_setup_file / podman_teardown_file    the whole environment (below); teardown removes it all
#   pm ARGS...       rootful podman with the file's containers.conf and storage.conf
#   rl ARGS...       rootless podman, as $PM_USER, with the same kind of configuration of its own
#   PM_IMAGE         the busybox image (in both stores)
#   requires_rootless    skips with the reason the rootless environment could not be set up
#   pm_cgroup CTRL ID    the host directory of a rootful container's cgroup in the v1 controller CTRL
#   pm_container_ids     every container id this file's podman ever created (from the event logs)
#
# Layout of $PM_DIR (a directory of its own under /tmp, readable by the test user):
#   root/containers.conf root/storage.conf root/store/{graph,run} root/tmp root/events.log
#   user/...             the same for the rootless podman, owned by $PM_USER
#   rootfs.tar           the image's rootfs: fsrun's busybox rootfs plus the files the tests use

# shellcheck source=../../contrib/lib.sh
source "${FSRUN_SRCDIR:-$(cd "${BATS_TEST_DIRNAME:-.}/../.." && pwd)}/contrib/lib.sh"

PM_IMAGE=localhost/fsrun-busybox:test
PM_USER=fsrun-podman-test
PM_USER_COMMENT="fsrun podman client tests" # marks a user this suite created (and may remove)
PM_TIMEOUT=${PM_TIMEOUT:-90} # one podman call; a hang must not eat the whole file's budget
# the bound of a wait for an event (as tests/integration/helpers.bash's): it only ends a failure
WAIT_MAX_S=${WAIT_MAX_S:-60}

# pm_write_confs DIR RUNTIME_PATH: containers.conf and storage.conf for a podman whose every
# directory is under DIR. No network of podman's own (netns "none"): nothing touches the host's
# bridges or firewall, and rootless slirp4netns cannot open /dev/net/tun (0600) here anyway.
# The runtime's own settings are the shipped drop-in, contrib/configs/podman/fsrun.conf, read over
# these as podman reads /etc/containers/containers.conf.d/ (CONTAINERS_CONF turns the drop-in
# directories off); only its list of paths is replaced, by RUNTIME_PATH.
pm_write_confs() {
  local dir=$1 runtime=$2
  cat >"$dir/containers.base.conf" <<EOF
[containers]
# CAP_SYS_RESOURCE is not in this machine's bounding set: podman's default (1048576) would fail
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "none"

[engine]
runtime = "fsrun"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$dir/events.log"
tmp_dir = "$dir/tmp"
volume_path = "$dir/store/volumes"
EOF
  "$FSRUN_SRCDIR/tests/clients/toml-merge.py" "$dir/containers.base.conf" \
    "$FSRUN_SRCDIR/contrib/configs/podman/fsrun.conf" \
    --replace engine.runtimes.fsrun "$(jq -cn --arg p "$runtime" '[$p]')" >"$dir/containers.conf" ||
    return 1
  cat >"$dir/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$dir/store/graph"
runroot = "$dir/store/run"
EOF
  chmod 0644 "$dir/containers.conf" "$dir/storage.conf"
}

pm() {
  CONTAINERS_CONF=$PM_DIR/root/containers.conf CONTAINERS_STORAGE_CONF=$PM_DIR/root/storage.conf \
    timeout -k 10 "$PM_TIMEOUT" podman "$@"
}

# Rootless podman as $PM_USER, with a clean environment like a login would give it: podman then
# runs fsrun as uid 0 of its user namespace with XDG_RUNTIME_DIR=/run/user/UID.
rl() {
  (
    cd "$PM_DIR" || exit 1
    runuser -u "$PM_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
      HOME="$PM_DIR/user/home" USER="$PM_USER" LOGNAME="$PM_USER" \
      XDG_RUNTIME_DIR="/run/user/$PM_UID" \
      CONTAINERS_CONF="$PM_DIR/user/containers.conf" \
      CONTAINERS_STORAGE_CONF="$PM_DIR/user/storage.conf" \
      timeout -k 10 "$PM_TIMEOUT" podman "$@"
  )
}

requires_rootless() {
  [ -z "${PM_ROOTLESS_SKIP:-}" ] || skip "$PM_ROOTLESS_SKIP"
}

pm_cgroup() { # pm_cgroup CTRL ID
  echo "/sys/fs/cgroup/$1/libpod_parent/libpod-$2"
}

# podman's own record of every container it created (events_logger = "file"), --rm ones included
pm_container_ids() {
  pm events --stream=false --filter event=create --format '{{.ID}}' 2>/dev/null
  [ -n "${PM_ROOTLESS_SKIP:-}" ] ||
    rl events --stream=false --filter event=create --format '{{.ID}}' 2>/dev/null
}

# ---- setup / teardown -----------------------------------------------------------------------------

pm_make_rootfs_tar() {
  local root=$PM_DIR/rootfs
  fsrun_make_busybox_rootfs "$root" || return 1
  # files the tests need: a script without the execute bit (exit 126), and content in /run that
  # --read-only's tmpfs must still show (podman asks for "tmpcopyup")
  printf '#!/bin/sh\necho should-not-run\n' >"$root/bin/not-executable"
  chmod 0644 "$root/bin/not-executable"
  echo from-the-image >"$root/run/image-marker"
  tar -C "$root" -cf "$PM_DIR/rootfs.tar" . || return 1
  chmod 0644 "$PM_DIR/rootfs.tar"
  rm -rf "$root"
}

# The rootless environment: a user of our own (its subordinate ids from useradd, or added), its
# XDG_RUNTIME_DIR, configuration and store. On failure PM_ROOTLESS_SKIP says why.
pm_setup_rootless() {
  local tool
  for tool in newuidmap newgidmap runuser useradd userdel; do
    command -v "$tool" >/dev/null || {
      PM_ROOTLESS_SKIP="rootless podman needs $tool (Debian packages uidmap, passwd, util-linux)"
      return 0
    }
  done
  if ! getent passwd "$PM_USER" >/dev/null; then
    if ! useradd --system -M -d /nonexistent -s /usr/sbin/nologin -c "$PM_USER_COMMENT" "$PM_USER" \
      2>"$PM_DIR/useradd.err"; then
      PM_ROOTLESS_SKIP="cannot create the test user $PM_USER: $(head -n 1 "$PM_DIR/useradd.err")"
      return 0
    fi
    echo "$PM_USER" >"$PM_DIR/created-user"
  elif [ "$(getent passwd "$PM_USER" | cut -d: -f5)" = "$PM_USER_COMMENT" ]; then
    # left by an earlier run of this file that was killed before its teardown: ours to remove
    echo "$PM_USER" >"$PM_DIR/created-user"
  fi
  PM_UID=$(id -u "$PM_USER")
  # useradd gives system users no subordinate ids: add a range of its own (removed with the user,
  # or by teardown when the user was already there)
  if ! grep -q "^$PM_USER:" /etc/subuid 2>/dev/null || ! grep -q "^$PM_USER:" /etc/subgid 2>/dev/null; then
    local start=1065536 end
    while awk -F: -v s="$start" '$2 <= s + 65535 && $2 + $3 > s { found = 1 } END { exit !found }' \
      /etc/subuid /etc/subgid 2>/dev/null; do
      start=$((start + 65536))
    done
    end=$((start + 65535))
    if ! usermod --add-subuids "$start-$end" --add-subgids "$start-$end" "$PM_USER"; then
      PM_ROOTLESS_SKIP="cannot give $PM_USER subordinate ids (usermod --add-subuids)"
      return 0
    fi
    echo "$start-$end" >"$PM_DIR/created-subids"
  fi
  if [ ! -d "/run/user/$PM_UID" ]; then
    mkdir -p "/run/user/$PM_UID" && echo "/run/user/$PM_UID" >"$PM_DIR/created-xdg"
  fi
  chown "$PM_USER:" "/run/user/$PM_UID" && chmod 0700 "/run/user/$PM_UID"
  mkdir -p "$PM_DIR/user/home" "$PM_DIR/user/store" "$PM_DIR/user/tmp"
  if ! pm_write_confs "$PM_DIR/user" "$FSRUN"; then
    PM_ROOTLESS_SKIP="cannot write the rootless podman's containers.conf"
    return 0
  fi
  chown "$PM_USER:" "$PM_DIR/user" "$PM_DIR/user/home" "$PM_DIR/user/store" "$PM_DIR/user/tmp"
  if ! runuser -u "$PM_USER" -- test -x "$FSRUN"; then
    PM_ROOTLESS_SKIP="$PM_USER cannot execute $FSRUN (a directory on its path is not traversable)"
    return 0
  fi
  if ! rl import "$PM_DIR/rootfs.tar" "$PM_IMAGE" >"$PM_DIR/rl-import.log" 2>&1; then
    PM_ROOTLESS_SKIP="rootless podman cannot import the image: $(grep -m1 -i error "$PM_DIR/rl-import.log")"
  fi
}

podman_setup_file() {
  [ "$(id -u)" = 0 ] || skip "needs root (rootful podman, and a test user for rootless podman)"
  command -v podman >/dev/null || skip "podman is not installed (apt-get install podman conmon)"
  command -v conmon >/dev/null || command -v /usr/libexec/podman/conmon >/dev/null ||
    skip "conmon is not installed (apt-get install conmon)"
  [ -x "${FSRUN:-}" ] || skip "no fsrun binary: set FSRUN"
  fsrun_static_busybox >/dev/null || skip "no static busybox (apt-get install busybox-static)"
  FSRUN=$(readlink -f "$FSRUN")
  # under /tmp rather than bats' private tmp dir: the test user must reach its part of it
  PM_DIR=$(mktemp -d /tmp/fsrun-podman.XXXXXX)
  chmod 0755 "$PM_DIR"
  export FSRUN PM_DIR
  mkdir -p "$PM_DIR/root/store" "$PM_DIR/root/tmp"
  pm_write_confs "$PM_DIR/root" "$FSRUN" || return 1
  pm_make_rootfs_tar || return 1
  pm import "$PM_DIR/rootfs.tar" "$PM_IMAGE" >"$PM_DIR/import.log" 2>&1 || {
    cat "$PM_DIR/import.log" >&2
    return 1
  }
  PM_ROOTLESS_SKIP=""
  pm_setup_rootless
  export PM_ROOTLESS_SKIP PM_UID
}

# Unmounts whatever is still mounted under DIR, deepest first (podman's overlay driver keeps its
# storage directory bind-mounted while a store is in use).
pm_unmount_under() {
  local mp
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mp; do umount -l "$mp" 2>/dev/null; done
}

podman_teardown_file() {
  [ -n "${PM_DIR:-}" ] && [ -d "$PM_DIR" ] || return 0
  pm rm -a -f -t 0 >/dev/null 2>&1
  pm rmi -a -f >/dev/null 2>&1
  if [ -n "${PM_UID:-}" ] && [ -f "$PM_DIR/user/containers.conf" ]; then
    rl rm -a -f -t 0 >/dev/null 2>&1
    rl rmi -a -f >/dev/null 2>&1
    # rootless podman keeps a pause process (catatonit -P) holding its user namespace: it must
    # not outlive us. Its pid file is in tmp_dir (older podmans: $XDG_RUNTIME_DIR/libpod/tmp).
    local pidfile pause_pid
    for pidfile in "$PM_DIR/user/tmp/pause.pid" "/run/user/$PM_UID/libpod/tmp/pause.pid"; do
      pause_pid=$(cat "$pidfile" 2>/dev/null)
      if [[ $pause_pid =~ ^[0-9]+$ ]] && [ "$(stat -c %u "/proc/$pause_pid" 2>/dev/null)" = "$PM_UID" ]; then
        kill -9 "$pause_pid" 2>/dev/null
      fi
    done
    rm -rf "/run/user/$PM_UID/libpod" "/run/user/$PM_UID/containers" "/run/user/$PM_UID/fsrun"
  fi
  if [ -f "$PM_DIR/created-xdg" ]; then
    rm -rf "$(cat "$PM_DIR/created-xdg")"
  fi
  if [ -f "$PM_DIR/created-user" ]; then
    # the user is this suite's own: whatever still runs as it was started by these tests
    local pid
    for pid in $(ps -u "$PM_UID" -o pid= 2>/dev/null); do
      kill -9 "$pid" 2>/dev/null
    done
    # refused while a process of the user is still there (the pause process being reaped)
    local _
    for _ in $(seq 50); do
      userdel "$PM_USER" 2>/dev/null && break
      sleep 0.1
    done
  fi
  # userdel removes the user's subordinate ids; a user that was already there keeps its own
  if [ -f "$PM_DIR/created-subids" ] && getent passwd "$PM_USER" >/dev/null; then
    usermod --del-subuids "$(cat "$PM_DIR/created-subids")" \
      --del-subgids "$(cat "$PM_DIR/created-subids")" "$PM_USER" 2>/dev/null
  fi
  pm_unmount_under "$PM_DIR"
  rm -rf "$PM_DIR"
}
