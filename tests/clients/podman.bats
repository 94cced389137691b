#!/usr/bin/env bats
# fsrun as a drop-in backend for podman (podman -> conmon -> fsrun), rootful and rootless.
# podman gets fsrun as a named runtime in a containers.conf of this file's own, with
# runtime_supports_json (so it passes --log-format=json --log and maps fsrun's errors to exit codes
# 126/127), cgroupfs, a file event log, ulimits this machine can grant, and a store of its own.
# fsrun gets no --root from podman: rootful it keeps its state in /run/fsrun, rootless in
# $XDG_RUNTIME_DIR/fsrun. Assertions are what a podman user sees (output, exit codes, podman
# inspect) plus the host's view (cgroup files, fsrun's state dirs, mounts, processes).
# The last test checks that nothing of any container this file made is left on the host.

# in-container shell code is single-quoted on purpose; $stderr is set by bats' run --separate-stderr
# shellcheck disable=SC2016,SC2154
bats_require_minimum_version 1.5.0
load podman-helpers

setup_file() {
  podman_setup_file
}

teardown_file() {
  podman_teardown_file
}

teardown() {
  # a failed test must not leave its containers to the next one (the normal paths remove them)
  pm rm -a -f -t 0 >/dev/null 2>&1 || true
  if [[ $BATS_TEST_DESCRIPTION == rootless* ]] && [ -z "${PM_ROOTLESS_SKIP:-}" ]; then
    rl rm -a -f -t 0 >/dev/null 2>&1 || true
  fi
}

# cap_bit HEX BIT: whether capability BIT is set in a /proc/PID/status mask
cap_bit() {
  (((0x$1 >> $2) & 1))
}

# ---- rootful ------------------------------------------------------------------------------------

@test "podman info names fsrun as the runtime with its version" {
  run pm info --format '{{.Host.OCIRuntime.Name}}|{{.Host.OCIRuntime.Path}}|{{.Host.OCIRuntime.Version}}'
  [ "$status" -eq 0 ]
  [[ "$output" == "fsrun|$FSRUN|"* ]]
  [[ "$output" == *"fsrun version "* ]]
  # the version line podman shows is the one fsrun prints
  [[ "$output" == *"$("$FSRUN" --version | head -n 1)"* ]]
}

@test "podman run --rm: output, and the exit status of the container's process" {
  run --separate-stderr pm run --rm --name pm-out "$PM_IMAGE" sh -c 'echo hello from fsrun; echo to-stderr >&2'
  [ "$status" -eq 0 ]
  [ "$output" = "hello from fsrun" ]
  [[ "$stderr" == *to-stderr* ]]
  run pm run --rm --name pm-exit3 "$PM_IMAGE" sh -c 'exit 3'
  [ "$status" -eq 3 ]
  run pm run --rm --name pm-exit0 "$PM_IMAGE" true
  [ "$status" -eq 0 ]
  # --rm removed them
  run pm ps -a -q
  [ -z "$output" ]
}

@test "podman run: a missing command exits 127, a non-executable one 126" {
  run -127 pm run --rm --name pm-missing "$PM_IMAGE" /no/such/command
  [ "$status" -eq 127 ]
  [[ "$output" == *"no such file or directory"* ]]
  run -127 pm run --rm --name pm-notinpath "$PM_IMAGE" no-such-command-in-path
  [ "$status" -eq 127 ]
  run pm run --rm --name pm-noexec "$PM_IMAGE" /bin/not-executable
  [ "$status" -eq 126 ]
  [[ "$output" == *"permission denied"* ]]
  run pm run --rm --name pm-dir "$PM_IMAGE" /etc
  [ "$status" -eq 126 ]
  [[ "$output" != *should-not-run* ]]
}

@test "podman run -i passes stdin; podman run -t gives a terminal" {
  run pm run --rm -i --name pm-stdin "$PM_IMAGE" sh -c 'read line; echo "got: $line"' <<<"from-stdin"
  [ "$status" -eq 0 ]
  [ "$output" = "got: from-stdin" ]
  run pm run --rm -t --name pm-tty "$PM_IMAGE" sh -c 'tty; stty size'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == /dev/pts/* ]]
  # without -t there is none
  run pm run --rm --name pm-notty "$PM_IMAGE" tty
  [ "$status" -ne 0 ]
  [[ "$output" == *"not a tty"* ]]
}

@test "podman run -d, exec with and without -t, ps, and fsrun's state in /run/fsrun" {
  run pm run -d --name pm-detached "$PM_IMAGE" sleep 1000
  [ "$status" -eq 0 ]
  id=${lines[-1]}
  run pm ps --format '{{.Names}} {{.Status}}'
  [ "$status" -eq 0 ]
  [[ "$output" == *"pm-detached Up"* ]]
  # podman gave fsrun no --root: the default state dir of a root runtime, private
  [ -d "/run/fsrun/$id" ]
  [ "$(stat -c %a "/run/fsrun/$id")" = 700 ]
  run "$FSRUN" state "$id"
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = running ]

  run pm exec pm-detached sh -c 'echo in-container; cat /proc/1/cmdline | tr "\0" " "; exit 5'
  [ "$status" -eq 5 ]
  [ "${lines[0]}" = in-container ]
  [ "${lines[1]}" = "sleep 1000 " ]
  run pm exec pm-detached tty
  [ "$status" -ne 0 ]
  run pm exec -t pm-detached sh -c 'tty; echo $((6 * 7))'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == /dev/pts/* ]]
  [[ "${lines[1]}" == 42* ]]
  run -127 pm exec pm-detached /no/such/command
  [ "$status" -eq 127 ]
  # an exec runs in the container's pid namespace: it sees the init as pid 1 and itself
  run pm exec pm-detached sh -c 'ls /proc | grep -c "^[0-9]"'
  [ "$status" -eq 0 ]
  [ "$output" -le 5 ] # the init, sh, ls, grep

  run pm rm -f -t 0 pm-detached
  [ "$status" -eq 0 ]
  [ ! -e "/run/fsrun/$id" ]
}

@test "podman stop: SIGTERM first, SIGKILL when the process ignores it" {
  pm run -d --name pm-term "$PM_IMAGE" sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.1; done'
  # pid 1 ignores a signal it has no handler for: sleep must be killed
  pm run -d --name pm-kill "$PM_IMAGE" sleep 1000
  pid=$(pm inspect -f '{{.State.Pid}}' pm-kill)
  [ "$pid" -gt 0 ]
  for _ in $(seq $((WAIT_MAX_S * 10))); do pm logs pm-term | grep -q ready && break; sleep 0.1; done

  run pm stop -t 20 pm-term
  [ "$status" -eq 0 ]
  run pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' pm-term
  [ "$output" = "exited 7" ]
  run pm logs pm-term
  [[ "$output" == *got-term* ]]

  run pm stop -t 1 pm-kill
  [ "$status" -eq 0 ]
  run pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' pm-kill
  [ "$output" = "exited 137" ]
  run ! kill -0 "$pid"
  # a stopped container can be started again
  run pm start pm-term
  [ "$status" -eq 0 ]
  run pm inspect -f '{{.State.Status}}' pm-term
  [ "$output" = running ]
  run pm rm -f -t 0 pm-term pm-kill
  [ "$status" -eq 0 ]
}

@test "podman kill: a chosen signal reaches the process; the default kills it" {
  pm run -d --name pm-sig "$PM_IMAGE" sh -c 'trap "echo got-usr1" USR1; echo ready; while :; do sleep 0.1; done'
  for _ in $(seq $((WAIT_MAX_S * 10))); do pm logs pm-sig | grep -q ready && break; sleep 0.1; done
  run pm kill --signal USR1 pm-sig
  [ "$status" -eq 0 ]
  for _ in $(seq $((WAIT_MAX_S * 10))); do pm logs pm-sig | grep -q got-usr1 && break; sleep 0.1; done
  run pm logs pm-sig
  [[ "$output" == *got-usr1* ]]
  run pm inspect -f '{{.State.Status}}' pm-sig
  [ "$output" = running ]
  run pm kill pm-sig
  [ "$status" -eq 0 ]
  pm wait pm-sig
  run pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' pm-sig
  [ "$output" = "exited 137" ]
  # kill of a container that is not running is refused
  run pm kill pm-sig
  [ "$status" -ne 0 ]
  pm rm pm-sig
}

@test "podman pause and unpause freeze and thaw the container's cgroup" {
  pm run -d --name pm-pause "$PM_IMAGE" sh -c 'while :; do date +%s%N >/tmp/tick; sleep 0.05; done'
  id=$(pm inspect -f '{{.Id}}' pm-pause)
  freezer=$(pm_cgroup freezer "$id")
  run pm pause pm-pause
  [ "$status" -eq 0 ]
  run pm inspect -f '{{.State.Status}}' pm-pause
  [ "$output" = paused ]
  [ "$(cat "$freezer/freezer.state")" = FROZEN ]
  run "$FSRUN" state "$id"
  [ "$(jq -r .status <<<"$output")" = paused ]
  run pm unpause pm-pause
  [ "$status" -eq 0 ]
  [ "$(cat "$freezer/freezer.state")" = THAWED ]
  run pm inspect -f '{{.State.Status}}' pm-pause
  [ "$output" = running ]
  run pm exec pm-pause cat /tmp/tick
  [ "$status" -eq 0 ]
  pm rm -f -t 0 pm-pause
}

@test "podman run --memory and podman update --memory/--cpus reach the host's cgroup" {
  pm run -d --name pm-limits --memory 64m "$PM_IMAGE" sleep 1000
  id=$(pm inspect -f '{{.Id}}' pm-limits)
  [ "$(cat "$(pm_cgroup memory "$id")/memory.limit_in_bytes")" = $((64 << 20)) ]
  # the container's process is in that cgroup
  pid=$(pm inspect -f '{{.State.Pid}}' pm-limits)
  grep -qx "$pid" "$(pm_cgroup memory "$id")/cgroup.procs"

  run pm update --memory 128m pm-limits
  [ "$status" -eq 0 ]
  [ "$(cat "$(pm_cgroup memory "$id")/memory.limit_in_bytes")" = $((128 << 20)) ]
  run pm update --cpus 0.5 pm-limits
  [ "$status" -eq 0 ]
  period=$(cat "$(pm_cgroup cpu "$id")/cpu.cfs_period_us")
  quota=$(cat "$(pm_cgroup cpu "$id")/cpu.cfs_quota_us")
  [ "$quota" -gt 0 ]
  [ $((quota * 2)) -eq "$period" ]
  # the memory limit is still there
  [ "$(cat "$(pm_cgroup memory "$id")/memory.limit_in_bytes")" = $((128 << 20)) ]
  pm rm -f -t 0 pm-limits
}

@test "podman rm -f removes a running container: process, state dir, cgroups and mounts" {
  pm run -d --name pm-rmf "$PM_IMAGE" sleep 1000
  id=$(pm inspect -f '{{.Id}}' pm-rmf)
  pid=$(pm inspect -f '{{.State.Pid}}' pm-rmf)
  kill -0 "$pid"
  [ -d "/run/fsrun/$id" ]
  [ -d "$(pm_cgroup memory "$id")" ]
  run pm rm -f -t 0 pm-rmf
  [ "$status" -eq 0 ]
  run ! kill -0 "$pid"
  [ ! -e "/run/fsrun/$id" ]
  for ctrl in memory pids cpu freezer devices blkio; do
    [ ! -e "$(pm_cgroup "$ctrl" "$id")" ]
  done
  run ! grep -q "$id" /proc/self/mountinfo
  run pm ps -a -q
  [ -z "$output" ]
}

@test "podman run --network none: only a loopback, in a network namespace of its own" {
  run pm run --rm --network none --name pm-nonet "$PM_IMAGE" sh -c 'ls /sys/class/net; readlink /proc/self/ns/net'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = lo ]
  [ "${#lines[@]}" -eq 2 ]
  [ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
}

@test "podman run --user 1000:1000 runs the process as that user" {
  run pm run --rm --user 1000:1000 --name pm-user "$PM_IMAGE" sh -c 'id -u; id -g; grep CapEff /proc/self/status'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1000 ]
  # a non-root user has no effective capabilities
  [ "${lines[2]}" = "CapEff:	0000000000000000" ]
  run pm run --rm --user user --name pm-username "$PM_IMAGE" id
  [ "$status" -eq 0 ]
  [[ "$output" == "uid=1000(user) gid=1000(user)"* ]]
}

@test "podman run --read-only: the root is read-only, its tmpfs mounts keep the image's files" {
  run pm run --rm --read-only --name pm-ro "$PM_IMAGE" sh -c '
    touch /new-file 2>&1 || echo root-ro
    echo x >/tmp/f && echo tmp-rw
    cat /run/image-marker'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"Read-only file system"* ]]
  [ "${lines[1]}" = root-ro ]
  [ "${lines[2]}" = tmp-rw ]
  # /run is a tmpfs that podman asks to start with a copy of the image's /run ("tmpcopyup")
  [ "${lines[3]}" = from-the-image ]
  run pm run --rm --tmpfs /run --name pm-tmpfs "$PM_IMAGE" sh -c 'cat /run/image-marker; grep " /run " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = from-the-image ]
  [[ "${lines[1]}" == *" - tmpfs "* ]]
}

@test "podman run --cap-drop/--cap-add: the capability sets inside" {
  run pm run --rm --name pm-capdef "$PM_IMAGE" grep CapEff /proc/self/status
  [ "$status" -eq 0 ]
  default=${output##*:}
  default=${default//[[:space:]]/}
  cap_bit "$default" 0        # CAP_CHOWN is one of podman's defaults
  run ! cap_bit "$default" 21 # CAP_SYS_ADMIN is not

  run pm run --rm --cap-drop chown --name pm-capdrop "$PM_IMAGE" sh -c 'grep CapEff /proc/self/status; chown 1:1 /tmp 2>&1 || echo chown-refused'
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = chown-refused ]
  eff=${lines[0]##*:}
  eff=${eff//[[:space:]]/}
  run ! cap_bit "$eff" 0

  run pm run --rm --cap-drop all --cap-add sys_admin --name pm-capadd "$PM_IMAGE" grep -E '^Cap(Prm|Eff|Bnd)' /proc/self/status
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "CapPrm:	0000000000200000" ]
  [ "${lines[1]}" = "CapEff:	0000000000200000" ]
  [ "${lines[2]}" = "CapBnd:	0000000000200000" ]
}

# ---- rootless -----------------------------------------------------------------------------------

@test "rootless podman: id and the user namespace's uid_map" {
  requires_rootless
  run --separate-stderr rl run --rm --network none --name rl-id "$PM_IMAGE" sh -c 'id -u; cat /proc/self/uid_map'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  # root in the container is the test user on the host; the other ids are its subordinate range
  read -r inside outside count <<<"${lines[1]}"
  [ "$inside $outside $count" = "0 $PM_UID 1" ]
  sub_start=$(awk -F: -v u="$PM_USER" '$1 == u { print $2; exit }' /etc/subuid)
  read -r inside outside count <<<"${lines[2]}"
  [ "$inside $outside" = "1 $sub_start" ]
  [ "$count" -ge 65536 ]
}

@test "rootless podman: exit codes 0, 3, 127 and 126" {
  requires_rootless
  run rl run --rm --network none --name rl-ok "$PM_IMAGE" true
  [ "$status" -eq 0 ]
  run rl run --rm --network none --name rl-exit3 "$PM_IMAGE" sh -c 'exit 3'
  [ "$status" -eq 3 ]
  run -127 rl run --rm --network none --name rl-missing "$PM_IMAGE" /no/such/command
  [ "$status" -eq 127 ]
  [[ "$output" == *"no such file or directory"* ]]
  run rl run --rm --network none --name rl-noexec "$PM_IMAGE" /bin/not-executable
  [ "$status" -eq 126 ]
  [[ "$output" == *"permission denied"* ]]
}

@test "rootless podman: run -d, exec, stop; fsrun keeps its state in \$XDG_RUNTIME_DIR/fsrun" {
  requires_rootless
  run --separate-stderr rl run -d --network none --name rl-detached "$PM_IMAGE" sleep 1000
  [ "$status" -eq 0 ]
  id=${lines[-1]}
  [ -d "/run/user/$PM_UID/fsrun/$id" ]
  [ "$(stat -c %U "/run/user/$PM_UID/fsrun/$id")" = "$PM_USER" ]
  [ ! -e "/run/fsrun/$id" ]
  run --separate-stderr rl exec rl-detached sh -c 'id -u; exit 4'
  [ "$status" -eq 4 ]
  [ "$output" = 0 ]
  run --separate-stderr rl exec -t rl-detached tty
  [ "$status" -eq 0 ]
  [[ "$output" == /dev/pts/* ]]
  run --separate-stderr rl exec --user 1000:1000 rl-detached id -u
  [ "$output" = 1000 ]
  run rl stop -t 1 rl-detached
  [ "$status" -eq 0 ]
  run --separate-stderr rl inspect -f '{{.State.Status}} {{.State.ExitCode}}' rl-detached
  [ "$output" = "exited 137" ]
  run rl rm rl-detached
  [ "$status" -eq 0 ]
  [ ! -e "/run/user/$PM_UID/fsrun/$id" ]
}

@test "rootless podman: --user, --read-only and -t" {
  requires_rootless
  run --separate-stderr rl run --rm --network none --read-only --user 1000:1000 --name rl-user "$PM_IMAGE" \
    sh -c 'id -u; touch /x 2>/dev/null || echo root-ro; cat /run/image-marker'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = root-ro ]
  [ "${lines[2]}" = from-the-image ]
  run --separate-stderr rl run --rm -t --network none --name rl-tty "$PM_IMAGE" tty
  [ "$status" -eq 0 ]
  [[ "$output" == /dev/pts/* ]]
}

# ---- after everything ---------------------------------------------------------------------------

@test "nothing is left of any container: fsrun state, cgroups, mounts, processes" {
  mapfile -t ids < <(pm_container_ids | sort -u)
  # the tests above made containers (this check must see them to mean anything)
  [ "${#ids[@]}" -gt 0 ] || skip "no container was made in this run (the other tests were filtered out)"
  run pm ps -a -q
  [ -z "$output" ]
  printf '%s\n' "${ids[@]}" >"$BATS_TEST_TMPDIR/ids"
  for id in "${ids[@]}"; do
    [ ! -e "/run/fsrun/$id" ] || {
      echo "fsrun state left: /run/fsrun/$id"
      false
    }
    [ -z "${PM_UID:-}" ] || [ ! -e "/run/user/$PM_UID/fsrun/$id" ] || {
      echo "rootless fsrun state left: /run/user/$PM_UID/fsrun/$id"
      false
    }
    for dir in /sys/fs/cgroup/*/libpod_parent/libpod-"$id"; do
      [ ! -e "$dir" ] || {
        echo "cgroup left: $dir"
        false
      }
    done
  done
  # no mount names a container (podman's userdata) and no container rootfs is still mounted
  run grep -F -f "$BATS_TEST_TMPDIR/ids" /proc/self/mountinfo
  [ -z "$output" ]
  run grep '/merged ' /proc/self/mountinfo
  [[ "$output" != *"$PM_DIR"* ]]
  # no process (conmon, a container's init or exec) is in a container's cgroup or names one
  run --separate-stderr grep -l -F -f "$BATS_TEST_TMPDIR/ids" /proc/[0-9]*/cgroup /proc/[0-9]*/cmdline
  for f in "${lines[@]}"; do
    pid=${f#/proc/}
    pid=${pid%%/*}
    echo "left: pid $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)"
  done
  [ -z "$output" ]
}
