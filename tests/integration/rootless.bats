#!/usr/bin/env bats
# Rootless (issue 5 item 2): an ordinary user, made for this file, runs `fsrun spec --rootless` and
# `fsrun run` on a bundle it owns. Everything the user does goes through as_user.

load helpers
load user-dir

setup_file() {
  file_test_user_add fsrtest
}

teardown_file() {
  file_test_user_remove
}

setup() {
  requires_root
  requires_fsrun_command run
  requires_host_command setpriv
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  setup_bundle
  # The user's own directory (user-dir.bash): its runtime dir, its bundle, and here a directory to
  # bind and an empty PATH entry.
  user_dir_make fsrun-rootless
  # a control: the user really is unprivileged
  [ "$TEST_UID" != 0 ]
  mkdir "$UDIR/data" "$UDIR/emptybin"
  chown "$TEST_UID:$TEST_GID" "$UDIR/data" "$UDIR/emptybin"
  update_user_config '.process.terminal = false
    | .mounts += [{"destination": "/data", "type": "bind", "source": $src, "options": ["rbind", "rw"]}]' \
    --arg src "$UDIR/data"
}

teardown() {
  local f reports=0
  for f in ${LISTENER_PID:-} ${CREATE_LISTENER_PID:-} ${HOLD_LISTENER_PID:-}; do
    kill "$f" 2>/dev/null
    wait "$f" 2>/dev/null
  done
  # a start_waits_for_the_process that failed half-way: strace let go, start ends with the delete
  [ -z "${HOLD_STRACE:-}" ] || kill "$HOLD_STRACE" 2>/dev/null
  # the init of a container whose state a failed test left corrupt
  [ -n "${USER_INIT:-}" ] && kill -9 "$USER_INIT" 2>/dev/null
  # containers left by a failed test, then the sanitizer reports of the user's fsrun runs
  user_dir_remove || reports=1
  teardown_bundle
  [ "$reports" = 0 ]
}

update_user_config() {
  local filter=$1
  shift
  jq "$@" "$filter" "$UDIR/bundle/config.json" >"$UDIR/config.json.new"
  chown "$TEST_UID:$TEST_GID" "$UDIR/config.json.new"
  mv "$UDIR/config.json.new" "$UDIR/bundle/config.json"
}

# user_run ARGS...: `fsrun ARGS...` as the user in its bundle, its default state root (no --root)
user_run() {
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" "$@"
}

@test "rootless: id -u is 0 inside, uid_map is '0 <uid> 1', a file made in a bind belongs to the user" {
  update_user_config '.process.args = ["sh", "-c", "id -u; cat /proc/self/uid_map; echo made >/data/file"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  read -r -a map <<<"${lines[1]}"
  [ "${map[*]}" = "0 $TEST_UID 1" ]
  [ "$(stat -c %u:%g "$UDIR/data/file")" = "$TEST_UID:$TEST_GID" ]
  [ "$(cat "$UDIR/data/file")" = made ]
}

@test "rootless: the default devices are the host's nodes bound in (no mknod in a user namespace)" {
  update_user_config '.process.args = ["sh", "-c", "stat -c \"%t:%T %F\" /dev/null /dev/zero; grep -c \" /dev/null \" /proc/self/mountinfo; echo x >/dev/null && head -c 4 /dev/zero | wc -c"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  # the host's char devices 1:3 and 1:5, each a mount of its own, and they work
  [ "${lines[0]}" = "1:3 character special file" ]
  [ "${lines[1]}" = "1:5 character special file" ]
  [ "${lines[2]}" -ge 1 ]
  [ "${lines[3]}" = 4 ]
}

@test "rootless: a linux.devices node the host lacks is a one-line error naming it; nothing is left" {
  # an ordinary user has CAP_MKNOD nowhere and there is no host node to bind; a host node is still
  # bound in (/dev/full, also in linux.devices, in the control run)
  local node=/dev/fsrun-test-null-$$ id=rl-$$-$RANDOM$RANDOM
  update_user_config '.linux.devices = [{"path": "/dev/full", "type": "c", "major": 1, "minor": 7}]
    | .process.args = ["sh", "-c", "head -c 2 /dev/full | wc -c"]'
  user_run run "$id-ok"
  [ "$status" -eq 0 ]
  [ "$output" = 2 ]
  update_user_config '.linux.devices += [{"path": $p, "type": "c", "major": 1, "minor": 3}]' --arg p "$node"
  user_run run "$id"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"linux.devices[1]: \`$node\` is not on the host"* ]]
  [ ! -e "$node" ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

# review22 F5, as the user: unified's cgroup.procs naming the user's own process outside (a
# delegated cgroup would take it in) is refused at create in one line naming the key; no state,
# the witness stays in its cgroups, unsignalled. Seen to fail with the refusal removed: rc 0.
@test "rootless: unified naming cgroup.procs (the pid of a process of the user's outside) is refused at create; nothing left" {
  local id=rl-$$-$RANDOM$RANDOM before
  start_witness "$UDIR" as_user
  before=$(cat "/proc/$WITNESS/cgroup")
  update_user_config '.process.args = ["true"] | .linux.resources.unified = {"cgroup.procs": $pid}' \
    --arg pid "$WITNESS"
  user_run run "$id"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *'linux.resources.unified: `cgroup.procs` is a core file of the cgroup'* ]]
  [ ! -e "$UDIR/run/fsrun/$id" ]
  [ "$(cat "/proc/$WITNESS/cgroup")" = "$before" ]
  witness_unsignalled
}

@test "rootless: without a network namespace of its own, /sys is the host's sysfs bound read-only" {
  # `spec --rootless` asks for a netns; share the host's instead: a new sysfs mount is then refused
  update_user_config '.linux.namespaces |= map(select(.type != "network"))
    | .process.args = ["sh", "-c", "awk '"'"'$5 == \"/sys\" { print $3, $6, $(NF-2) }'"'"' /proc/self/mountinfo; touch /sys/x 2>&1 || echo refused"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  # the host's sysfs superblock (same device as the host's /sys), mounted read-only, refusing writes
  read -r dev opts fstype <<<"${lines[0]}"
  [ "$fstype" = sysfs ]
  [ "$dev" = "$(mountpoint -d /sys)" ]
  [[ "$opts" == ro,* ]]
  [ "${lines[-1]}" = refused ]
}

@test "rootless: state lives under \$XDG_RUNTIME_DIR/fsrun, and no cgroup is created (said in the debug log)" {
  local id=rl-$$-$RANDOM$RANDOM
  update_user_config '.process.args = ["sleep", "100"]'
  # the init keeps create's stdio until it execs: a file, not bats' pipe
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" --debug create "$id" \
    >"$UDIR/create.log" 2>&1 </dev/null
  output=$(cat "$UDIR/create.log")
  [[ "$output" == *"state root \`$UDIR/run/fsrun\`"* ]]
  [[ "$output" == *"cgroup: no delegated cgroup"* ]]
  [ -f "$UDIR/run/fsrun/$id/state.json" ]
  [ "$(stat -c %u "$UDIR/run/fsrun/$id")" = "$TEST_UID" ]
  [ ! -e "/run/fsrun/$id" ]
  # no cgroup directory of that name anywhere in the host's hierarchies
  [ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$id" 2>/dev/null)" ]
  user_run state "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *'"status": "created"'* || "$output" == *'"status":"created"'* ]]
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

@test "rootless: a multi-range map goes through newuidmap/newgidmap" {
  requires_host_command newuidmap
  requires_host_command newgidmap
  local subuid subgid
  test_user_subids
  update_user_config '.process.args = ["cat", "/proc/self/uid_map", "/proc/self/gid_map"]
    | .linux.uidMappings = [{"containerID": 0, "hostID": $uid, "size": 1},
                            {"containerID": 1, "hostID": $subuid, "size": 1000}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": $gid, "size": 1},
                            {"containerID": 1, "hostID": $subgid, "size": 1000}]' \
    --argjson uid "$TEST_UID" --argjson gid "$TEST_GID" --argjson subuid "$subuid" --argjson subgid "$subgid"
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[1]}" | tr -s ' ' | sed 's/^ //')" = "1 $subuid 1000" ]
  [ "$(echo "${lines[3]}" | tr -s ' ' | sed 's/^ //')" = "1 $subgid 1000" ]
}

@test "rootless: a multi-range map without newgidmap in PATH fails naming the tool, leaving nothing" {
  local id=rl-$$-$RANDOM$RANDOM
  update_user_config '.linux.gidMappings += [{"containerID": 1, "hostID": 3000000, "size": 10}]'
  USER_PATH=$UDIR/emptybin user_run run "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *newgidmap*"package uidmap"* ]]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

# user_run_detached ID: `run -d` as the user, its init's pid in USER_INIT
user_run_detached() {
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" run -d "$1" \
    >"$UDIR/run.log" 2>&1 </dev/null
  USER_INIT=$(jq -r .pid "$UDIR/run/fsrun/$1/state.json")
  _fsrun_pid_alive "$USER_INIT"
}

# test_user_subids: the test user's first subordinate uid and gid in subuid and subgid (the
# caller's locals), given 65536 of each from 3000000 when /etc/subuid or /etc/subgid has none
test_user_subids() {
  subuid=$(awk -F: -v u="$TEST_USER" '$1 == u {print $2; exit}' /etc/subuid)
  subgid=$(awk -F: -v u="$TEST_USER" '$1 == u {print $2; exit}' /etc/subgid)
  if [ -z "$subuid" ] || [ -z "$subgid" ]; then
    subuid=3000000 subgid=3000000
    echo "$TEST_USER:$subuid:65536" >>/etc/subuid
    echo "$TEST_USER:$subgid:65536" >>/etc/subgid
  fi
}

# assert_user_init_gone: USER_INIT is dead (a killed init may take a moment to be reaped: up to
# WAIT_MAX_S); then teardown has nothing left to kill
assert_user_init_gone() {
  wait_until pid_gone "$USER_INIT" || return 1
  USER_INIT=''
}

# all_capabilities_json: every capability this host knows, as a JSON list of names
all_capabilities_json() {
  echo "[$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' |
    sed 's/^cap_/CAP_/; s/.*/"\U&"/' | paste -sd, -)]"
}

@test "rootless: while the init is dumpable for newgidmap/newuidmap, another container of the user (every capability, the host's pids) reaches nothing of it; the user's own shell does" {
  # The window is real: an ordinary user's init stays dumpable until GO, so that newuidmap (which
  # wants /proc/PID to belong to the user) can write its maps, and it has not entered its root yet.
  # What decides who reaches it is the kernel's ptrace rule: a process of another user namespace
  # needs CAP_SYS_PTRACE over the init's (its new one), which only the user's own processes in the
  # runtime's user namespace (its owner) and root have. Container A of the same user, with every
  # capability in its user namespace, no pid namespace of its own and the host's /proc, tries while
  # a newgidmap wrapper holds B's create in that window; the user's own shell tries too (the
  # control: it takes the host's root, the fds, and seizes the init).
  requires_host_command newuidmap
  requires_host_command newgidmap
  requires_host_command cc
  local subuid subgid probe pid out=$UDIR/reach-host.out a=rl-reach-a-$UNIQ b=rl-reach-b-$UNIQ
  test_user_subids
  probe=$UDIR/bundle/rootfs/bin/ptrace-probe
  cc -static -O2 -o "$probe" "$FSRUN_TESTS_DIR/ptrace-probe.c" || skip "needs cc -static"
  cp "$probe" "$UDIR/ptrace-probe"
  echo secret >"$UDIR/host-only"
  # holds newgidmap (the first of the two) until released, at most 60 s
  mkdir "$UDIR/bin"
  printf '#!/bin/sh\necho "$1" >%s/held.tmp && mv %s/held.tmp %s/held\ni=0\nwhile [ ! -e %s/release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\nexec %s "$@"\n' \
    "$UDIR" "$UDIR" "$UDIR" "$UDIR" "$(command -v newgidmap)" >"$UDIR/bin/newgidmap"
  chmod 755 "$UDIR/bin/newgidmap"
  chown -R "$TEST_UID:$TEST_GID" "$probe" "$UDIR/ptrace-probe" "$UDIR/host-only" "$UDIR/bin"
  cp "$UDIR/bundle/config.json" "$UDIR/config.orig"
  # A: every capability, the host's pid namespace and /proc
  update_user_config '.root.readonly = false
    | .linux.namespaces |= map(select(.type != "pid"))
    | .mounts |= map(if .destination == "/proc"
        then {"destination": "/proc", "type": "bind", "source": "/proc", "options": ["rbind"]} else . end)
    | .process.capabilities |= (with_entries(.value = $all) | del(.ambient))
    | .process.args = ["sleep", "1000"]' --argjson all "$(all_capabilities_json)"
  user_run_detached "$a"
  # B: a multi-range map, through the held newgidmap
  cp "$UDIR/config.orig" "$UDIR/bundle/config.json"
  update_user_config '.process.args = ["true"]
    | .linux.uidMappings = [{"containerID": 0, "hostID": $uid, "size": 1},
                            {"containerID": 1, "hostID": $subuid, "size": 1000}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": $gid, "size": 1},
                            {"containerID": 1, "hostID": $subgid, "size": 1000}]' \
    --argjson uid "$TEST_UID" --argjson gid "$TEST_GID" --argjson subuid "$subuid" --argjson subgid "$subgid"
  # in the background, without bats' own fds (a failing test would wait for them to close)
  USER_PATH=$UDIR/bin:/usr/local/bin:/usr/bin:/bin as_user /bin/sh -c 'cd "$1" && exec "$2" create "$3"' \
    sh "$UDIR/bundle" "$FSRUN" "$b" </dev/null >"$UDIR/create.log" 2>&1 3>&- 4>&- &
  wait_for_file "$UDIR/held"
  pid=$(cat "$UDIR/held")
  # in the window: dumpable (/proc/PID is the user's), in a user namespace of its own
  [ "$(stat -c %u "/proc/$pid")" = "$TEST_UID" ]
  [ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]
  user_run exec "$a" /bin/ptrace-probe reach "$pid" "$UDIR/host-only" /tmp/reach.out
  as_user "$UDIR/ptrace-probe" reach "$pid" "$UDIR/host-only" "$out"
  : >"$UDIR/release"
  wait
  cat "$UDIR/create.log"
  echo "from container A:"
  cat "$UDIR/bundle/rootfs/tmp/reach.out"
  echo "from the user's shell:"
  cat "$out"
  # A got nothing at all
  [ "$(grep -vc '^refused ' "$UDIR/bundle/rootfs/tmp/reach.out")" = 0 ]
  [ "$(grep -c '^refused ' "$UDIR/bundle/rootfs/tmp/reach.out")" = 6 ]
  # the control: the user's own process took all of it
  grep -qx root-escape "$out"
  grep -q '^fd [0-9]* /proc$' "$out"
  grep -qx environ "$out"
  grep -q '^fd-taken ' "$out"
  grep -qx seized "$out"
  # and B was created all the same
  user_run state "$b"
  [ "$(jq -r .status <<<"$output")" = created ]
  user_run delete --force "$b"
  user_run delete --force "$a"
}

@test "rootless: delete --force with a corrupt state.json and no cgroup kills the init its record names" {
  # before: no cgroup to look into, so it failed and kept the state (the init lived on)
  local id=rl-corrupt-$$-$RANDOM$RANDOM
  update_user_config '.process.args = ["sleep", "1000"]'
  user_run_detached "$id"
  printf '{"id": ' >"$UDIR/run/fsrun/$id/state.json"
  user_run delete --force "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
  assert_user_init_gone
}

@test "rootless: a truncated state.json: state and kill refuse in one line, list shows the live init, delete --force removes it all and never signals the pid the file names" {
  # before: state and kill printed yajl's three-line message, list showed the init as stopped
  local id=rl-trunc-$$-$RANDOM$RANDOM dir
  update_user_config '.process.args = ["sleep", "1000"]'
  user_run_detached "$id"
  dir=$UDIR/run/fsrun/$id
  start_witness "$UDIR" as_user
  printf '{"id": "%s", "status": "created", "pid": %d, "fsr' "$id" "$WITNESS" >"$dir/state.json"
  user_run state "$id"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"state \`$id\`: the state file is corrupt: "* ]]
  user_run kill "$id" KILL
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  as_user "$FSRUN" list --format json >"$UDIR/list.json" 2>/dev/null
  [ "$(jq -r --arg id "$id" '.[] | select(.id == $id) | "\(.status) \(.pid)"' "$UDIR/list.json")" = "running $USER_INIT" ]
  user_run delete --force "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"delete \`$id\`: the state file is corrupt: "*": its init's record and its config were used instead" ]]
  [ ! -e "$dir" ]
  assert_user_init_gone
  witness_unsignalled
}

@test "rootless: the init's record names the init in at most 59 bytes: no disk block for it on an ext4 state root" {
  local id=rl-rec-$$-$RANDOM$RANDOM pid
  update_user_config '.process.args = ["sleep", "100"]'
  # not through `run`: the init would keep its output pipe open
  as_user /bin/sh -c 'cd "$1" && exec "$2" create "$3"' sh "$UDIR/bundle" "$FSRUN" "$id" \
    </dev/null >/dev/null 2>&1
  user_run state "$id"
  pid=$(jq -r .pid <<<"$output")
  assert_init_record "$UDIR/run/fsrun/$id" "$pid"
  user_run start "$id"
  [ "$status" -eq 0 ]
  assert_init_record "$UDIR/run/fsrun/$id" "$pid"
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

# init.bats has root's: `start` returns once the process is forked and has exec'd. Seen to fail
# with the fifo closed at the tiny init's exec again: start was never seen reading the fifo while
# the init's fork was held.
@test "rootless: start returns once the process is forked: with the init's fork held, start waits; a first exec never takes pid 2" {
  local id=rl-startfork-$UNIQ
  update_user_config '.process.args = ["sleep", "1000"] | .annotations["run.fsrun.init"] = "true"'
  # not through `run`: the init would keep its output pipe open
  as_user /bin/sh -c 'cd "$1" && exec "$2" create "$3"' sh "$UDIR/bundle" "$FSRUN" "$id" \
    </dev/null >/dev/null 2>&1
  start_waits_for_the_process "$id" as_user "$FSRUN"
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

# init.bats has root's: fsrun's init holds every signal from its clone on (a pid namespace's init
# drops one it has no handler for), so a TERM sent to a created container ends the process once
# start runs it; `run -d` returns once the process has exec'd, after the startContainer hooks,
# with the caller's signal mask. Seen to fail before: no TERM pending in the init; no `sleep`
# child of the init when `run -d` returned.
@test "rootless: a TERM sent to a created container is held for the process; run -d returns once the process has exec'd" {
  local id=rl-held-$UNIQ mask init pid
  update_user_config '.process.args = ["sleep", "1000"] | .annotations["run.fsrun.init"] = "true"'
  as_user /bin/sh -c 'cd "$1" && exec "$2" create "$3"' sh "$UDIR/bundle" "$FSRUN" "$id" \
    </dev/null >/dev/null 2>&1
  user_run state "$id"
  init=$(jq -r .pid <<<"$output")
  user_run kill "$id" TERM
  [ "$status" -eq 0 ]
  grep -E '^(SigBlk|ShdPnd):' "/proc/$init/status"
  (( 0x$(awk '/^ShdPnd:/ {print $2}' "/proc/$init/status") & 0x4000 ))
  user_run start "$id"
  [ "$status" -eq 0 ]
  wait_until pid_gone "$init"
  user_run delete "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]

  id=rl-early-$UNIQ
  update_user_config '.root.readonly = false | .hooks.startContainer = [{"path": "/bin/sh",
    "args": ["sh", "-c", "grep ^SigBlk: /proc/self/status >/hook-mask; sleep 2; :"]}]'
  mask=$(as_user sh -c 'grep ^SigBlk: /proc/self/status')
  as_user /bin/sh -c 'cd "$1" && exec "$2" run -d "$3"' sh "$UDIR/bundle" "$FSRUN" "$id" \
    </dev/null >/dev/null 2>&1
  user_run state "$id"
  init=$(jq -r .pid <<<"$output")
  pid=$(pgrep -P "$init" -x sleep)
  [ "$(grep ^SigBlk: "/proc/$pid/status")" = "$mask" ]
  [ "$(cat "$UDIR/bundle/rootfs/hook-mask")" = "$mask" ]
  user_run kill "$id" TERM
  [ "$status" -eq 0 ]
  wait_until pid_gone "$init"
  user_run delete "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

@test "rootless: a state of another boot names no live process: state says stopped, kill and delete --force signal nothing" {
  # before: a process of the user's with the recorded pid, start tick and pid namespace was taken
  # for the init
  local id=rl-boot-$$-$RANDOM$RANDOM dir start ns other=00000000-0000-4000-8000-000000000000
  update_user_config '.process.args = ["true"]'
  user_run run --keep "$id"
  [ "$status" -eq 0 ]
  dir=$UDIR/run/fsrun/$id
  start_witness "$UDIR" as_user
  start=$(sed 's/.*) //' "/proc/$WITNESS/stat" | cut -d' ' -f20)
  ns=$(stat -L -c %i "/proc/$WITNESS/ns/pid")
  jq --argjson p "$WITNESS" --argjson t "$start" --argjson n "$ns" --arg b "$other" \
    '.pid = $p | .status = "created" | .fsrun.pidStartTime = $t | .fsrun.pidNamespace = $n |
    .fsrun.bootId = $b' "$dir/state.json" >"$UDIR/state.json"
  cat "$UDIR/state.json" >"$dir/state.json"
  as_user ln -sfn "$WITNESS $start $ns $other" "$dir/init"
  user_run state "$id"
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = stopped ]
  user_run kill "$id" KILL
  [ "$status" -eq 1 ]
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$dir" ]
  witness_unsignalled
}

@test "rootless: an init that moves to a mount namespace of its own is still the container; delete --force stops it" {
  # before: state said stopped after the init's `unshare -m`, and delete --force (no cgroup here)
  # exited 0 leaving it running
  local id=rl-unshare-$$-$RANDOM$RANDOM
  update_user_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])
    | .process.args = ["/bin/busybox", "unshare", "-m", "/bin/sleep", "1000"]'
  user_run_detached "$id"
  wait_until comm_is "$USER_INIT" sleep
  user_run state "$id"
  [ "$(jq -r .status <<<"$output")" = running ]
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  assert_user_init_gone
}

@test "rootless: delete --force with state.json and the init's record both corrupt stops nothing, keeps the state, says why" {
  local id=rl-blind-$$-$RANDOM$RANDOM state
  update_user_config '.process.args = ["sleep", "1000"]'
  user_run_detached "$id"
  state=$UDIR/run/fsrun/$id/state.json
  cp "$state" "$UDIR/state.json.good"
  printf '{"id": ' >"$state"
  rm -f "$UDIR/run/fsrun/$id/init"
  user_run delete --force "$id"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"the state file is corrupt"*"read the init's record \`init\`: No such file or directory: its init cannot be told, nothing was stopped"*"is kept" ]]
  # nothing was removed while its process lives on
  [ -e "$state" ]
  _fsrun_pid_alive "$USER_INIT"
  # with the state repaired, delete --force stops it
  cp "$UDIR/state.json.good" "$state"
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ ! -e "$UDIR/run/fsrun/$id" ]
  assert_user_init_gone
}

@test "rootless: a config without a mount namespace runs chrooted in the rootfs; the caller's root is untouched" {
  update_user_config '.linux.namespaces |= map(select(.type != "mount")) | .mounts = [] |
    .root.readonly = false | .linux.maskedPaths = [] | .linux.readonlyPaths = [] |
    .process.args = ["sh", "-c", "[ -e /linuxrc ] && echo in-rootfs"]'
  local id=rl-nomnt-$UNIQ
  run as_user /bin/sh -c 'cd "$1" && before=$(stat -c %d:%i /) && "$2" run "$3" || exit 1
    [ "$(stat -c %d:%i /)" = "$before" ] && echo caller-unchanged' sh "$UDIR/bundle" "$FSRUN" "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = in-rootfs ]
  [ "${lines[1]}" = caller-unchanged ]
  # a mount would be made in the caller's mount namespace: refused in one line, nothing left
  update_user_config '.mounts = [{"destination": "/proc", "type": "proc", "source": "proc"}]'
  user_run run "$id"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"mounts: needs a mount namespace"* ]]
  [ ! -e "$UDIR/run/fsrun/$id" ]
}

@test "rootless: a tmpfs without mode= over an existing 0712 directory keeps its mode" {
  mkdir "$UDIR/bundle/rootfs/t712"
  chmod 0712 "$UDIR/bundle/rootfs/t712"
  chown "$TEST_UID:$TEST_GID" "$UDIR/bundle/rootfs/t712"
  update_user_config '.process.args = ["sh", "-c", "stat -c %a /t712; grep -c \" /t712 .* tmpfs \" /proc/self/mountinfo"]
    | .mounts += [{"destination": "/t712", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]}]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 712 ]
  [ "${lines[1]}" = 1 ]
}

@test "rootless: a missing process.cwd on a read-only root is created before the root is made read-only" {
  update_user_config '.root.readonly = true | .process.cwd = "/work/dir" | .process.args = ["pwd"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  [ "$output" = /work/dir ]
}

@test "rootless: rootfsPropagation unbindable runs, and the root is unbindable" {
  update_user_config '.linux.rootfsPropagation = "unbindable"
    | .process.args = ["sh", "-c", "awk '"'"'$5 == \"/\" { for (i = 7; $i != \"-\"; i++) print $i }'"'"' /proc/self/mountinfo"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  [[ " ${lines[*]} " == *" unbindable "* ]]
}

@test "rootless: the default devices are bound nosuid,noexec" {
  update_user_config '.process.args = ["sh", "-c", "grep \" /dev/null \" /proc/self/mountinfo"]'
  user_run run rl-$$-$RANDOM$RANDOM
  [ "$status" -eq 0 ]
  read -r _ _ _ _ _ opts _ <<<"$output"
  [[ ",$opts," == *,nosuid,* ]]
  [[ ",$opts," == *,noexec,* ]]
}

@test "rootless: a seccomp NOTIFY profile of the init's own syscalls (sendmsg, recvmsg, close) with listenerPath does not hang" {
  local listener=${FSRUN%/*}/tests/seccomp-listener
  [ -x "$listener" ] || skip "no $listener (build it with make)"
  cp "$listener" "$UDIR/listener"
  chown "$TEST_UID:$TEST_GID" "$UDIR/listener"
  # the listener's own pid (a background shell function would give the subshell's), for teardown
  as_user /bin/sh -c 'echo $$ >"$1/listener.pid" && exec "$1/listener" "$1/agent.sock" \
    "$1/agent-state" "$1/agent-calls" 0' sh "$UDIR" 3>&- &
  wait_until test -S "$UDIR/agent.sock"
  LISTENER_PID=$(cat "$UDIR/listener.pid")
  update_user_config '.root.readonly = false
    | .process.args = ["sh", "-c", "mkdir /tmp/faked && echo mkdir-succeeded"]
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $sock,
        "syscalls": [{"names": ["mkdir", "mkdirat", "sendmsg", "recvmsg", "close"],
                      "action": "SCMP_ACT_NOTIFY"}]}' --arg sock "$UDIR/agent.sock"
  # bounded: the previous binary waited forever in the init's sendmsg of the listener fd
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" run "rl-notify-$UNIQ"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = mkdir-succeeded ]
  grep -qx mkdir "$UDIR/agent-calls"
}

@test "rootless: a foreground run waits holding no procfs instance of its own; the process holds only stdio" {
  # as lifecycle.bats's test of the same name, as the user (perfexec25)
  local runner found
  as_user mkdir "$UDIR/hold"
  as_user mkfifo "$UDIR/hold/go"
  update_user_config '.process.args = ["sh", "-c", "echo up >/hold/up; read x </hold/go; ls /proc/self/fd"]
    | .mounts += [{"destination": "/hold", "type": "bind", "source": $h, "options": ["rbind", "rw"]}]' \
    --arg h "$UDIR/hold"
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" run "rl-procfs-$UNIQ" \
    </dev/null >"$UDIR/out" 2>&1 &
  runner=$!
  wait_for_file "$UDIR/hold/up"
  found=$(procfs_dirs_of "$runner")
  echo >"$UDIR/hold/go"
  wait "$runner"
  echo "the runtime's procfs fds:$found"
  cat "$UDIR/out"
  [ -z "$found" ]
  [ "$(tr '\n' ' ' <"$UDIR/out")" = "0 1 2 3 " ]
}

@test "rootless: with a config that mounts no /proc, the waiting init holds no host procfs" {
  # checked from the host: a procfs directory the init holds open in which this (host) shell's
  # "self" resolves is the host's; before, the init kept the one its ordinary-user runtime opened
  # (the host's /proc) whenever the container mounted no /proc
  local id=rl-noproc-$UNIQ pid fd found=""
  update_user_config '.process.args = ["sleep", "1000"] | .mounts |= map(select(.type != "proc"))'
  # not through `run`: the init keeps the output it was given until it execs
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" create "$id" \
    </dev/null >/dev/null 2>&1
  user_run state "$id"
  pid=$(jq -r .pid <<<"$output")
  USER_INIT=$pid
  for fd in /proc/"$pid"/fd/*; do
    [ -d "$fd/" ] && [ "$(stat -f -c %T "$fd/")" = proc ] && readlink "$fd/self" >/dev/null &&
      found="$found $fd"
  done
  user_run delete --force "$id"
  echo "host procfs fds:$found"
  [ -z "$found" ]
}

# start_user_listener [HOLD]: tests/seccomp-listener as the user on $UDIR/agent.sock, its pid in
# LISTENER_PID; with HOLD, it holds the first syscall it lets through (see seccomp-listener.c)
start_user_listener() {
  rm -f "$UDIR/listener.pid"
  as_user /bin/sh -c 'echo $$ >"$1/listener.pid" && exec "$1/listener" "$1/agent.sock" \
    "$1/agent-state" "$1/agent-calls" 0 $2' sh "$UDIR" "${1:-}" 3>&- &
  wait_until test -S "$UDIR/agent.sock" -a -s "$UDIR/listener.pid"
  LISTENER_PID=$(cat "$UDIR/listener.pid")
}

@test "rootless: exec with a seccomp NOTIFY profile of its own syscalls (sendmsg, recvmsg, close) with listenerPath does not hang" {
  local listener=${FSRUN%/*}/tests/seccomp-listener id=rl-notify-exec-$UNIQ
  [ -x "$listener" ] || skip "no $listener (build it with make)"
  cp "$listener" "$UDIR/listener"
  chown "$TEST_UID:$TEST_GID" "$UDIR/listener"
  # the listener serves one connection: one for create's init, another for the exec
  start_user_listener
  CREATE_LISTENER_PID=$LISTENER_PID
  update_user_config '.root.readonly = false | .process.args = ["sleep", "1000"]
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $sock,
        "syscalls": [{"names": ["mkdir", "mkdirat", "sendmsg", "recvmsg", "close"],
                      "action": "SCMP_ACT_NOTIFY"}]}' --arg sock "$UDIR/agent.sock"
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" run -d "$id" </dev/null >/dev/null 2>&1
  start_user_listener
  # bounded: the previous binary's exec child waited forever in its sendmsg of the listener fd
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" exec "$id" sh -c 'mkdir /tmp/faked-exec && echo mkdir-succeeded'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = mkdir-succeeded ]
  user_run delete --force "$id"
}

# notify_hold_setup: the user's copy of the listener, and a profile that notifies prctl (which the
# runtime's process makes after loading the filter, before execve)
notify_hold_setup() {
  local listener=${FSRUN%/*}/tests/seccomp-listener
  [ -x "$listener" ] || skip "no $listener (build it with make)"
  cp "$listener" "$UDIR/listener"
  chown "$TEST_UID:$TEST_GID" "$UDIR/listener"
  update_user_config '.root.readonly = false
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $sock,
        "syscalls": [{"names": ["prctl"], "action": "SCMP_ACT_NOTIFY"}]}' --arg sock "$UDIR/agent.sock"
}

# wait_held: HELD_PID, the process the listener holds ($UDIR/held); on a failure, lets it go
wait_held() {
  wait_for_file "$UDIR/held" || { touch "$UDIR/held.go"; return 1; }
  HELD_PID=$(cat "$UDIR/held")
}

# probe_held_process: the process the listener holds in its notified prctl ($UDIR/held), as the
# host sees it, in HELD: "owner UID fds readable|denied children [PIDS]", then lets it go.
# /proc/PID/environ belongs to the process's uid only while it is dumpable (else to root); the user
# lists its fds (the listener fd among them) only then.
probe_held_process() {
  local pid fds=denied
  wait_held
  pid=$HELD_PID
  as_user ls "/proc/$pid/fd/" >/dev/null 2>&1 && fds=readable
  HELD="owner $(stat -c %u "/proc/$pid/environ") fds $fds children [$(cat "/proc/$pid/task/$pid/children")]"
  touch "$UDIR/held.go"
  echo "held $pid: $HELD"
}

@test "rootless: the init is never dumpable while it hands its seccomp listener fd over" {
  # Held in its first prctl after the load. Before, the init was dumpable from its message to
  # the runtime's GO (so that the user's runtime could take the fd with pidfd_getfd): owned by
  # the user, its fds listed by the user.
  local run_pid
  notify_hold_setup
  update_user_config '.process.args = ["true"]'
  start_user_listener "$UDIR/held"
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" run "rl-notify-hold-$UNIQ" </dev/null >"$UDIR/run.out" 2>&1 3>&- &
  run_pid=$!
  probe_held_process
  wait "$run_pid"
  cat "$UDIR/run.out"
  [ "$HELD" = "owner 0 fds denied children []" ]
}

@test "rootless: the exec process is never dumpable while it hands its seccomp listener fd over" {
  local id=rl-notify-hold-exec-$UNIQ exec_pid
  notify_hold_setup
  update_user_config '.process.args = ["sleep", "1000"]'
  start_user_listener
  CREATE_LISTENER_PID=$LISTENER_PID
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" run -d "$id" </dev/null >/dev/null 2>&1
  start_user_listener "$UDIR/held"
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$FSRUN" exec "$id" true </dev/null >"$UDIR/exec.out" 2>&1 3>&- &
  exec_pid=$!
  probe_held_process
  wait "$exec_pid"
  cat "$UDIR/exec.out"
  user_run delete --force "$id"
  [ "$HELD" = "owner 0 fds denied children []" ]
}

@test "rootless: a process with CAP_SYS_PTRACE in the container cannot take the exec process's listener fd during the hand-over" {
  # The first exec is held in its first prctl after the load; a second one (the same uid,
  # CAP_SYS_PTRACE in the container's user namespace) tries PTRACE_SEIZE and pidfd_getfd on it,
  # against a copy of the binary. Before, the first was dumpable there: seized, its listener fd
  # taken.
  local id=rl-notify-take-$UNIQ exec_pid nspid probe copy=$UDIR/fsrun-copy
  requires_host_command cc
  notify_hold_setup
  probe=$UDIR/bundle/rootfs/bin/ptrace-probe
  cc -static -O2 -o "$probe" "$FSRUN_TESTS_DIR/ptrace-probe.c" || skip "needs cc -static"
  cp "$FSRUN" "$copy"
  chown "$TEST_UID:$TEST_GID" "$probe" "$copy"
  update_user_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])
    | .process.args = ["sleep", "1000"]'
  start_user_listener
  CREATE_LISTENER_PID=$LISTENER_PID
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$copy" run -d "$id" </dev/null >/dev/null 2>&1
  start_user_listener "$UDIR/held"
  HOLD_LISTENER_PID=$LISTENER_PID
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$copy" exec "$id" true </dev/null >"$UDIR/exec.out" 2>&1 3>&- &
  exec_pid=$!
  wait_held
  nspid=$(awk '$1 == "NSpid:" { print $NF }' "/proc/$HELD_PID/status")
  start_user_listener
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 60 "$copy" exec "$id" /bin/ptrace-probe listener "$nspid" /tmp/take.out
  touch "$UDIR/held.go"
  wait "$exec_pid"
  echo "$output"
  cat "$UDIR/bundle/rootfs/tmp/take.out"
  user_run delete --force "$id"
  [ "$status" -eq 0 ]
  [ "$(cat "$UDIR/bundle/rootfs/tmp/take.out")" = "refused Operation not permitted" ]
}

@test "rootless: joining another container's pid namespace with a new user namespace is refused in one line, nothing left behind" {
  # an ordinary user cannot enter a pid namespace from outside the user namespace that owns it
  # (setns wants CAP_SYS_ADMIN in the host's user namespace too): before, the runtime tried anyway
  # and failed with "join the pid namespace: Operation not permitted"
  local pid a=rl-newuser-a-$UNIQ b=rl-newuser-b-$UNIQ
  update_user_config '.process.args = ["sleep", "1000"]'
  cp "$UDIR/bundle/config.json" "$UDIR/config.a"
  # not through `run`: the container would keep its output pipe open
  as_user /bin/sh -c 'cd "$1" && exec "$2" run -d "$3"' sh "$UDIR/bundle" "$FSRUN" "$a" \
    </dev/null >/dev/null 2>&1
  user_run state "$a"
  pid=$(jq -r .pid <<<"$output")
  update_user_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$pid/ns/pid"
  user_run create "$b"
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"linux.namespaces: the pid namespace \`/proc/$pid/ns/pid\` can be joined without the user namespace that owns it, or one above that, only by root"* ]]
  user_run state "$b"
  [ "$status" -ne 0 ]
  user_run delete --force "$a"
}

@test "rootless: a watcher with CAP_SYS_PTRACE in container A never reaches the host through containers joining A's user and pid namespaces" {
  # A's process (CAP_SYS_PTRACE in A's user namespace) tries every new pid while 10 containers
  # join A's user and pid namespaces, against a copy of the binary; the joining container's /proc
  # is A's pid namespace's (A's process is its pid 1), masked. Before, create failed: the ordinary
  # user's runtime entered the pid namespace itself, before the clone (EPERM from the host's user
  # namespace), and the namespaces of a joined user namespace were unshared only after the first
  # mounts.
  local i pid probe copy=$UDIR/fsrun-copy a=rl-join-a-$UNIQ
  requires_host_command cc
  probe=$UDIR/bundle/rootfs/bin/ptrace-probe
  cc -static -O2 -o "$probe" "$FSRUN_TESTS_DIR/ptrace-probe.c" || skip "needs cc -static"
  cp "$FSRUN" "$copy"
  cp "$FSRUN" "$UDIR/fsrun-original"
  echo secret >"$UDIR/host-only"
  chown "$TEST_UID:$TEST_GID" "$probe" "$UDIR/host-only"
  update_user_config '.root.readonly = false
    | .process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])
    | .process.args = ["/bin/ptrace-probe", "watch", $f, "/tmp/stop", "/tmp/watch.out"]' \
    --arg f "$UDIR/host-only"
  cp "$UDIR/bundle/config.json" "$UDIR/config.a"
  as_user /bin/sh -c 'cd "$1" && exec "$2" run -d "$3"' sh "$UDIR/bundle" "$copy" "$a" \
    </dev/null >/dev/null 2>&1
  FSRUN=$copy user_run state "$a"
  pid=$(jq -r .pid <<<"$output")
  update_user_config '.linux.namespaces |= map(if .type == "pid" or .type == "user"
      then .path = "/proc/\($p)/ns/\(.type)" else . end)
    | del(.linux.uidMappings, .linux.gidMappings) | .process.args = ["/bin/true"]' --arg p "$pid"
  for i in $(seq 10); do
    # not through `run`: the init keeps the output it was given until it execs
    as_user /bin/sh -c 'cd "$1" && exec "$2" create "$3"' sh "$UDIR/bundle" "$copy" "rl-join-$i-$UNIQ" \
      </dev/null >/dev/null
    FSRUN=$copy user_run delete --force "rl-join-$i-$UNIQ"
  done
  update_user_config '.process.args = ["/bin/sh", "-c",
    "cat /proc/1/comm; readlink /proc/self/ns/pid; wc -c </proc/timer_list"]'
  FSRUN=$copy user_run run "rl-join-run-$UNIQ"
  echo "$output"
  [ "$status" = 0 ]
  [ "${lines[0]}" = ptrace-probe ]
  [ "${lines[1]}" = "$(readlink "/proc/$pid/ns/pid")" ]
  [ "${lines[2]}" = 0 ]
  # one container the watcher surely tries: the short-lived ones above can all come and go while
  # it waits for a core (watched 0 on a correct run)
  update_user_config '.process.args = ["/bin/ptrace-probe", "wait-tried", "/tmp/watch.out"]'
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 150 "$copy" run "rl-join-tried-$UNIQ"
  echo "$output"
  [ "$status" = 0 ]
  : >"$UDIR/bundle/rootfs/tmp/stop"
  wait_until has_line "$UDIR/bundle/rootfs/tmp/watch.out" '^watched' || :
  cat "$UDIR/bundle/rootfs/tmp/watch.out"
  grep -q '^watched [1-9]' "$UDIR/bundle/rootfs/tmp/watch.out"
  [ -z "$(grep '^root-escape' "$UDIR/bundle/rootfs/tmp/watch.out")" ]
  [ -z "$(grep -F " $copy" "$UDIR/bundle/rootfs/tmp/watch.out")" ]
  cmp "$copy" "$UDIR/fsrun-original"
  FSRUN=$copy user_run delete --force "$a"
}

@test "rootless: a container joins its user namespace and a pid namespace made below it inside; a watcher with every capability there never reaches the late init" {
  # A's process makes a user and pid namespace of its own below A's (unshare --user --map-root-user
  # --pid) and, as their pid 1, watches every new pid (root-escape, PTRACE_SEIZE, /proc/PID/exe).
  # B joins A's user namespace and that pid namespace, against a copy of the binary. Before, an
  # ordinary user's such config was refused ("can be joined without the user namespace that owns
  # it only by root").
  local a b watcher probe copy=$UDIR/fsrun-copy out ida=rl-anc-a-$UNIQ
  requires_host_command cc
  probe=$UDIR/bundle/rootfs/bin/ptrace-probe
  cc -static -O2 -o "$probe" "$FSRUN_TESTS_DIR/ptrace-probe.c" || skip "needs cc -static"
  cp "$FSRUN" "$copy"
  echo secret >"$UDIR/host-only"
  chown "$TEST_UID:$TEST_GID" "$probe" "$UDIR/host-only" "$copy"
  out=$UDIR/bundle/rootfs/tmp/watch.out
  # a procfs of the inner pid namespace needs /proc fully visible in A (no masked paths); making
  # the inner user namespace's map needs CAP_SETFCAP in A
  update_user_config '.root.readonly = false | del(.linux.maskedPaths, .linux.readonlyPaths)
    | .process.capabilities |= (with_entries(.value = $all) | del(.ambient))
    | .process.args = ["/bin/sh", "-c", "/bin/busybox unshare --user --map-root-user --pid --fork --mount-proc /bin/ptrace-probe watch \($f) /tmp/stop /tmp/watch.out & exec /bin/sleep 1000"]' \
    --arg f "$UDIR/host-only" --argjson all "$(all_capabilities_json)"
  as_user /bin/sh -c 'cd "$1" && exec "$2" run -d "$3"' sh "$UDIR/bundle" "$copy" "$ida" \
    </dev/null >/dev/null 2>&1
  FSRUN=$copy user_run state "$ida"
  a=$(jq -r .pid <<<"$output")
  # the watcher: the grandchild of A's init (sh forked unshare, which forked it)
  for _ in $(seq $((WAIT_MAX_S * 10))); do
    watcher=$(cat "/proc/$a/task/$a/children" 2>/dev/null | tr -d ' ')
    [ -n "$watcher" ] && watcher=$(cat "/proc/$watcher/task/$watcher/children" 2>/dev/null | tr -d ' ')
    [ -n "$watcher" ] && [ -e "$out" ] && break
    sleep 0.1
  done
  [ -n "$watcher" ]
  # it is in a user namespace below A's, and pid 1 of a pid namespace of its own
  [ "$(readlink "/proc/$watcher/ns/user")" != "$(readlink "/proc/$a/ns/user")" ]
  [ "$(readlink "/proc/$watcher/ns/pid")" != "$(readlink "/proc/$a/ns/pid")" ]
  update_user_config '.linux.namespaces |= map(if .type == "user" then .path = "/proc/\($a)/ns/user"
      elif .type == "pid" then .path = "/proc/\($w)/ns/pid" else . end)
    | del(.linux.uidMappings, .linux.gidMappings)
    | .process.args = ["/bin/sh", "-c", "cat /proc/1/comm; readlink /proc/self/ns/pid; readlink /proc/self/ns/user"]' \
    --arg a "$a" --arg w "$watcher"
  for b in 1 2 3 4 5; do
    FSRUN=$copy user_run run "rl-anc-b$b-$UNIQ"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = ptrace-probe ]
    [ "${lines[1]}" = "$(readlink "/proc/$watcher/ns/pid")" ]
    [ "${lines[2]}" = "$(readlink "/proc/$a/ns/user")" ]
  done
  # one B the watcher surely tries: the five short runs can all end while it waits for a core
  update_user_config '.process.args = ["/bin/ptrace-probe", "wait-tried", "/tmp/watch.out"]'
  run as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" \
    timeout -s KILL 150 "$copy" run "rl-anc-tried-$UNIQ"
  echo "$output"
  [ "$status" -eq 0 ]
  : >"$UDIR/bundle/rootfs/tmp/stop"
  wait_until has_line "$out" '^watched' || :
  cat "$out"
  # it saw B's processes (the late inits among them) and reached none
  grep -q '^watched [1-9]' "$out"
  [ -z "$(grep -E '^(root-escape|seized)' "$out")" ]
  [ -z "$(grep -F " $copy" "$out")" ]
  FSRUN=$copy user_run delete --force "$ida"
}

@test "rootless: an image's /proc/sys/kernel/cap_last_cap (no procfs) does not widen the bounding set, init and exec" {
  # failed before 2026-12: read inside the container, it said to drop capabilities 0 and 1 only
  update_user_config '.mounts |= map(select(.destination != "/proc"))
    | .process.args = ["/bin/sleep", "1000"]'
  as_user sh -c "$(declare -f fake_procfs_files); fake_procfs_files \"\$1\"" sh "$UDIR/bundle/rootfs"
  local id=rl-bnd-$$-$RANDOM$RANDOM want pid
  want=$(jq -r '.process.capabilities.bounding[]' "$UDIR/bundle/config.json" | sort | paste -sd, -)
  # detached: nothing of theirs may hold bats' output open
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" run -d "$id" \
    >"$UDIR/run.log" 2>&1 </dev/null
  as_user "$FSRUN" exec -d --pid-file "$UDIR/exec.pid" "$id" /bin/sleep 1000 \
    >"$UDIR/exec.log" 2>&1 </dev/null
  for pid in "$(as_user "$FSRUN" state "$id" | jq -r .pid)" "$(cat "$UDIR/exec.pid")"; do
    [ "$(caps_from_hex "$(awk '$1 == "CapBnd:" { print $2 }' "/proc/$pid/status")")" = "$want" ]
  done
  user_run delete --force "$id"
}

@test "rootless: the first image makes the sealed memfd copy (before the C library starts), and the init runs from it" {
  requires_host_command strace
  local trace=$UDIR/trace pid
  # (LeakSanitizer cannot run under ptrace: off for the commands of a sanitizer build)
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    as_user strace -f -qq -o "$trace" "$FSRUN" exec nosuch-$UNIQ true || true
  sed -n '1,/execveat(/p' "$trace"
  sed -n '1,/execveat(/p' "$trace" | grep -q 'memfd_create("fsrun"'
  if fsrun_seals_early; then
    [ "$(sed -n '1,/execveat(/p' "$trace" | grep -c 'arch_prctl(ARCH_SET_FS')" -eq 0 ]
  fi
  update_user_config '.process.args = ["/bin/sleep", "100"]'
  # the init keeps create's stdio until it execs: a file, not bats' pipe
  as_user /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$UDIR/bundle" "$FSRUN" create "ru-memfd-$UNIQ" \
    >"$UDIR/create.log" 2>&1 </dev/null
  user_run state "ru-memfd-$UNIQ"
  pid=$(jq -r .pid <<<"$output")
  [ "$(readlink "/proc/$pid/exe")" = "/memfd:fsrun (deleted)" ]
  user_run delete --force "ru-memfd-$UNIQ"
  [ "$status" -eq 0 ]
}
