#!/usr/bin/env bats
# fsrun run the way rootless podman runs it: as uid 0 of a user namespace that someone else made
# (an ordinary user's `unshare --map-root-user` here, newuidmap in podman's case), with
# XDG_RUNTIME_DIR and _CONTAINERS_ROOTLESS_UID set, on a config without a user namespace of its
# own (the container shares the caller's). Found with tests/clients/podman.bats.

load helpers

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null && command -v unshare >/dev/null ||
    return 0
  export TEST_USER=fsrunns$$
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command exec
  [ -n "${TEST_USER:-}" ] || skip "needs useradd, setpriv and unshare"
  TEST_UID=$(id -u "$TEST_USER")
  TEST_GID=$(id -g "$TEST_USER")
  setup_bundle
  UDIR=$(mktemp -d /tmp/fsrun-userns.XXXXXX)
  chmod 755 "$UDIR"
  mkdir -m 700 "$UDIR/run"
  mkdir "$UDIR/bundle"
  cp -a "$ROOTFS" "$UDIR/bundle/rootfs"
  # podman's rootless config: no user namespace (podman's is the container's), no cgroup
  jq '.process.terminal = false | .process.args = ["sleep", "100"]
    | .linux.namespaces |= map(select(.type != "user" and .type != "cgroup"))
    | del(.linux.uidMappings, .linux.gidMappings, .linux.cgroupsPath)
    | .linux.resources = {}
    | .mounts |= map(select(.type != "sysfs" and .type != "cgroup" and .type != "mqueue"))
    | (.mounts[] | select(.type == "devpts") | .options) |= map(select(startswith("gid=") | not))' \
    "$BUNDLE/config.json" >"$UDIR/bundle/config.json"
  chown -R "$TEST_UID:$TEST_GID" "$UDIR"
  ID=userns-$$-$RANDOM$RANDOM
}

teardown() {
  if [ -n "${UDIR:-}" ]; then
    as_root_in_userns "$FSRUN" delete --force "$ID" >/dev/null 2>&1 || true
    rm -rf "$UDIR"
  fi
  teardown_bundle
}

# as_root_in_userns CMD...: CMD as uid 0 of a new user namespace of the test user (a single
# mapping), in a clean environment like the one rootless podman gives its runtime.
# NO_ROOTLESS_ENV=1: without podman's _CONTAINERS_ROOTLESS_UID.
as_root_in_userns() {
  local podman_env=(_CONTAINERS_ROOTLESS_UID="$TEST_UID")
  [ -z "${NO_ROOTLESS_ENV:-}" ] || podman_env=()
  setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --clear-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin XDG_RUNTIME_DIR="$UDIR/run" \
    "${podman_env[@]}" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
    unshare --user --map-root-user --mount --propagation private -- "$@"
}

@test "userns runtime: state under \$XDG_RUNTIME_DIR/fsrun; exec joins the pid namespace without a warning" {
  # one user namespace for the whole lifecycle, as podman's is
  run as_root_in_userns sh -c '
    cd "$1" || exit 1
    "$2" run -d --bundle . "$3" </dev/null >/dev/null 2>"$4/run.err" || { cat "$4/run.err"; exit 1; }
    ls "$4/run/fsrun"
    # `run -d` returns before the init runs sleep: waited for (bounded, failure only)
    pid=$("$2" state "$3" | jq -r .pid) i=0
    until [ "$(cat "/proc/$pid/comm")" = sleep ] || [ $i -ge $(($5 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    "$2" exec "$3" sh -c "echo pid=\$\$; ps -o pid,comm | grep -c sleep; exit 3"
    echo "exec=$?"
    "$2" exec --detach --pid-file "$4/exec.pid" "$3" sleep 1 && echo detached
    "$2" delete --force "$3" && echo deleted' \
    sh "$UDIR/bundle" "$FSRUN" "$ID" "$UDIR" "$WAIT_MAX_S"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$ID" ]
  # the exec'd shell is a small pid in the container's pid namespace and sees the init there
  [[ "${lines[1]}" =~ ^pid=[0-9]+$ ]]
  [ "${lines[1]#pid=}" -lt 100 ]
  [ "${lines[2]}" = 1 ]
  [ "${lines[3]}" = exec=3 ]
  [ "${lines[4]}" = detached ]
  [ "${lines[5]}" = deleted ]
  # fsrun cannot return to the host's pid namespace from there: it must not have tried (a
  # "warning: return to our own pid namespace" each exec, and its later children in the container)
  [[ "$output" != *warning* ]]
  [ ! -e "$UDIR/run/fsrun/$ID" ]
}

@test "userns runtime: root of someone else's user namespace is rootless without podman's variable" {
  # as runc: no cgroup it may create is no error there, with or without _CONTAINERS_ROOTLESS_UID
  jq '.process.args = ["cat", "/proc/self/uid_map"]' "$UDIR/bundle/config.json" >"$UDIR/c.json"
  mv "$UDIR/c.json" "$UDIR/bundle/config.json"
  chown "$TEST_UID:$TEST_GID" "$UDIR/bundle/config.json"
  NO_ROOTLESS_ENV=1 run as_root_in_userns sh -c 'cd "$1" && "$2" run --bundle . "$3" </dev/null' \
    sh "$UDIR/bundle" "$FSRUN" "$ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" =~ ^\ +0\ +$TEST_UID\ +1$ ]]
  [ ! -e "$UDIR/run/fsrun/$ID" ]
}
