#!/usr/bin/env bats
# Tests tagged cgroupv2 also run in the cgroup v2 VM (tests/vm/run.sh); the others do not depend on the cgroup version.
# exec (exec.c): a new process in a running container, seen from inside (namespaces, cgroup,
# credentials, seccomp, fds) and from the host (its pid, its cgroup); exit statuses; the terminal
# (console socket and relay); exec into a stopped or paused container; what clients rely on
# (--detach --pid-file, -p process.json, the "no such file or directory" words).

load helpers

setup() {
  requires_root
  requires_fsrun_command exec
  setup_bundle
  # a writable root: tests leave marks in /tmp for the host to read
  update_config '.root.readonly = false'
  CONTAINER_ID=exec-$$-$RANDOM$RANDOM
}

teardown() {
  [ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2>/dev/null
  [ -n "${EXEC_PID:-}" ] && kill -9 "$EXEC_PID" 2>/dev/null
  [ -n "${ROOTLESS_ID:-}" ] && as_user delete --force "$ROOTLESS_ID" >/dev/null 2>&1
  teardown_bundle
}

# as_user ARGS...: fsrun as uid 1000 with its own state root (the rootless test)
as_user() {
  setpriv --reuid=1000 --regid=1000 --clear-groups env -u XDG_RUNTIME_DIR \
    "$FSRUN" --root "$BATS_TEST_TMPDIR/rootless/state" "$@"
}

# start_rootless [JQ]: $ROOTLESS_ID runs `sleep` detached as uid 1000, from a `spec --rootless`
# bundle in $BATS_TEST_TMPDIR/rootless over $ROOTFS whose config the jq filter JQ changes further
start_rootless() {
  rootless_bundle "$@"
  as_user run -d --bundle "$BATS_TEST_TMPDIR/rootless" "$ROOTLESS_ID" </dev/null >/dev/null 2>&1
}

# create_rootless [JQ]: the same, only created
create_rootless() {
  rootless_bundle "$@"
  as_user create --bundle "$BATS_TEST_TMPDIR/rootless" "$ROOTLESS_ID" </dev/null >/dev/null 2>&1
}

rootless_bundle() {
  local dir=$BATS_TEST_TMPDIR/rootless
  mkdir -p "$dir/state"
  chown 1000:1000 "$dir" "$dir/state"
  as_user spec --rootless --bundle "$dir"
  jq --arg r "$ROOTFS" '.root.path = $r | .process.terminal = false
    | .process.args = ["sleep", "100000"] | '"${1:-.}" "$dir/config.json" >"$dir/config.new"
  mv "$dir/config.new" "$dir/config.json"
  ROOTLESS_ID=$CONTAINER_ID
}

# start_container: $CONTAINER_ID runs `sleep` detached; sets INIT_PID (host pid of its init)
start_container() {
  set_process_args sleep 100000
  fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" running
  INIT_PID=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  [ "$INIT_PID" -gt 0 ]
}

# bats test_tags=cgroupv2
@test "exec: runs in the container's namespaces (hostname, pid 1, every /proc/self/ns link)" {
  update_config '.hostname = "exec-box"'
  start_container
  run fsrun exec "$CONTAINER_ID" hostname
  [ "$status" -eq 0 ]
  [ "$output" = exec-box ]

  run fsrun exec "$CONTAINER_ID" sh -c 'tr "\0" " " </proc/1/cmdline'
  [ "$status" -eq 0 ]
  [ "$output" = "sleep 100000 " ]

  # every namespace link of the exec'd process is the init's, as the host sees the init's
  for ns in cgroup ipc mnt net pid uts user time; do
    [ -e "/proc/$INIT_PID/ns/$ns" ] || continue
    want=$(readlink "/proc/$INIT_PID/ns/$ns")
    run fsrun exec "$CONTAINER_ID" readlink "/proc/self/ns/$ns"
    [ "$status" -eq 0 ]
    echo "$ns: init $want, exec $output"
    [ "$output" = "$want" ]
  done
  # and they are not the host's (the namespaces the config asks for)
  [ "$(readlink /proc/$INIT_PID/ns/pid)" != "$(readlink /proc/self/ns/pid)" ]
  [ "$(readlink /proc/$INIT_PID/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]
}

@test "exec: joins a user namespace (its id maps) and a time namespace (its offsets)" {
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
  if [ -e /proc/self/timens_offsets ]; then
    update_config '.linux.namespaces += [{"type": "time"}]
      | .linux.timeOffsets = {"boottime": {"secs": 864000, "nanosecs": 0}}'
  fi
  start_container
  run fsrun exec "$CONTAINER_ID" sh -c 'cat /proc/self/uid_map; id -u; readlink /proc/self/ns/user'
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "0 200000 65536" ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = "$(readlink /proc/$INIT_PID/ns/user)" ]
  # container uid 1000 is host uid 201000
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/u.pid" --user 1000:1000 "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/u.pid")
  [[ $(grep ^Uid: /proc/$EXEC_PID/status) =~ ^Uid:[[:space:]]+201000[[:space:]] ]]
  if [ -e /proc/self/timens_offsets ]; then
    run fsrun exec "$CONTAINER_ID" sh -c 'readlink /proc/self/ns/time; cut -d. -f1 /proc/uptime'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$(readlink /proc/$INIT_PID/ns/time)" ]
    [ "${lines[1]}" -ge 864000 ]
  fi
}

@test "exec: rootless (uid 1000, its own user namespace) joins the pid namespace from inside it" {
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN" ||
    skip "uid 1000 cannot execute $FSRUN"
  local dir=$BATS_TEST_TMPDIR/rootless
  start_rootless
  init=$(as_user state "$ROOTLESS_ID" | jq -r .pid)
  [ "$init" -gt 0 ]
  run as_user exec "$ROOTLESS_ID" sh -c 'id -u; cat /proc/1/cmdline | tr "\0" " "; echo; readlink /proc/self/ns/pid; readlink /proc/self/ns/user; exit 3'
  echo "$output"
  [ "$status" -eq 3 ]
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = "sleep 100000 " ]
  [ "${lines[2]}" = "$(readlink /proc/$init/ns/pid)" ]
  [ "${lines[3]}" = "$(readlink /proc/$init/ns/user)" ]
  # detached: the pid file names the process that runs the command (not a helper that exited)
  as_user exec --detach --pid-file "$dir/exec.pid" "$ROOTLESS_ID" sleep 100000
  EXEC_PID=$(cat "$dir/exec.pid")
  [ "$(cmdline_of "$EXEC_PID")" = "sleep 100000 " ]
  [ "$(readlink /proc/$EXEC_PID/ns/pid)" = "$(readlink /proc/$init/ns/pid)" ]
  run as_user exec "$ROOTLESS_ID" no-such-binary
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "no-such-binary": no such file or directory'* ]]
}

# bats test_tags=cgroupv2
@test "exec: joins the container's cgroup (inside: the init's /proc/self/cgroup; host: the init's cgroup)" {
  start_container
  run fsrun exec "$CONTAINER_ID" sh -c 'cat /proc/self/cgroup; echo ---; cat /proc/1/cgroup'
  [ "$status" -eq 0 ]
  mine=${output%%---*}
  init=${output##*---}
  [ -n "$mine" ]
  [ "$(echo $mine)" = "$(echo $init)" ]

  # from the host: the exec'd process (detached, --pid-file) is in exactly the init's cgroups
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/exec.pid")
  [ "$EXEC_PID" -gt 0 ]
  [ "$(cat /proc/$EXEC_PID/cgroup)" = "$(cat /proc/$INIT_PID/cgroup)" ]
  grep -q "$CONTAINER_ID" "/proc/$EXEC_PID/cgroup"
  # it runs the command, and `ps` lists it among the container's processes
  [ "$(cmdline_of "$EXEC_PID")" = "sleep 100000 " ]
  run fsrun ps --format json "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  jq -e --argjson p "$EXEC_PID" 'index($p) != null' <<<"$output"
}

@test "exec: exits with the command's status; 128+N when killed by signal N" {
  start_container
  run fsrun exec "$CONTAINER_ID" sh -c 'exit 7'
  [ "$status" -eq 7 ]
  run fsrun exec "$CONTAINER_ID" sh -c 'kill -9 $$'
  [ "$status" -eq 137 ]
  run fsrun exec "$CONTAINER_ID" sh -c 'kill -TERM $$'
  [ "$status" -eq 143 ]
  run fsrun exec "$CONTAINER_ID" true
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "exec: signals sent to fsrun are forwarded to the process" {
  start_container
  # the binary itself in the background (the fsrun function would put a subshell in between)
  "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" sh -c 'trap "exit 42" TERM; touch /tmp/trap-ready; while :; do sleep 0.1; done' &
  EXEC_PID=$!
  wait_until test -e "$ROOTFS/tmp/trap-ready"
  [ -e "$ROOTFS/tmp/trap-ready" ]
  kill -TERM "$EXEC_PID"
  status=0
  wait "$EXEC_PID" || status=$?
  EXEC_PID=
  [ "$status" -eq 42 ]
}

@test "exec: -p process.json gives args, env, cwd and user" {
  start_container
  cat >"$BATS_TEST_TMPDIR/process.json" <<'EOF'
{
  "terminal": false,
  "user": {"uid": 1000, "gid": 1000, "additionalGids": [5]},
  "args": ["sh", "-c", "echo foo=$FOO; pwd; id -u; id -g; id -G"],
  "env": ["PATH=/bin:/usr/bin", "FOO=from-file"],
  "cwd": "/tmp"
}
EOF
  run fsrun exec -p "$BATS_TEST_TMPDIR/process.json" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = foo=from-file ]
  [ "${lines[1]}" = /tmp ]
  [ "${lines[2]}" = 1000 ]
  [ "${lines[3]}" = 1000 ]
  [[ " ${lines[4]} " == *" 5 "* ]]

  # the long form, as conmon and the containerd shim call it
  run fsrun exec --process "$BATS_TEST_TMPDIR/process.json" --detach --pid-file "$BATS_TEST_TMPDIR/p.pid" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$(cat "$BATS_TEST_TMPDIR/p.pid")" -gt 0 ]

  # a bad process file is refused with its field named, nothing runs
  echo '{"args": "not-an-array", "cwd": "/"}' >"$BATS_TEST_TMPDIR/bad.json"
  run fsrun exec -p "$BATS_TEST_TMPDIR/bad.json" "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [[ $output == *"bad.json"*"args"* ]]
}

@test "exec: --env, --cwd, --user, --additional-gids and --cap apply (seen in /proc/self/status)" {
  start_container
  run fsrun exec --env FOO=bar --env PATH=/bin --cwd /tmp "$CONTAINER_ID" sh -c 'echo "$FOO $PATH"; pwd'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "bar /bin" ]
  [ "${lines[1]}" = /tmp ]

  # the config's environment is the base; nothing of fsrun's caller leaks in
  run env LEAKED_FROM_HOST=1 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" env
  [ "$status" -eq 0 ]
  [[ $output == *"TERM=xterm"* ]]
  [[ $output != *LEAKED_FROM_HOST* ]]

  run fsrun exec --user 1000:1001 --additional-gids 5 -g 7 "$CONTAINER_ID" grep -E '^(Uid|Gid|Groups):' /proc/self/status
  [ "$status" -eq 0 ]
  [[ ${lines[0]} =~ ^Uid:[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000$ ]]
  [[ ${lines[1]} =~ ^Gid:[[:space:]]+1001[[:space:]]+1001[[:space:]]+1001[[:space:]]+1001$ ]]
  [[ ${lines[2]} =~ ^Groups:[[:space:]]+5[[:space:]]+7[[:space:]]*$ ]]

  # --user UID alone keeps the config's gid (0)
  run fsrun exec -u 1234 "$CONTAINER_ID" sh -c 'id -u; id -g'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1234 ]
  [ "${lines[1]}" = 0 ]

  # CAP_SYS_ADMIN (bit 21) is not in the config's sets; --cap adds it to bounding and effective
  run fsrun exec "$CONTAINER_ID" grep -E '^Cap(Bnd|Eff):' /proc/self/status
  [ "$status" -eq 0 ]
  without_bnd=$(awk '/^CapBnd/ {print $2}' <<<"$output")
  ((((0x$without_bnd >> 21) & 1) == 0))
  run fsrun exec --cap CAP_SYS_ADMIN "$CONTAINER_ID" grep -E '^Cap(Bnd|Eff):' /proc/self/status
  [ "$status" -eq 0 ]
  bnd=$(awk '/^CapBnd/ {print $2}' <<<"$output")
  eff=$(awk '/^CapEff/ {print $2}' <<<"$output")
  (((0x$bnd >> 21) & 1))
  (((0x$eff >> 21) & 1))
  # and only it: the rest of the bounding set is the config's
  ((0x$bnd == (0x$without_bnd | (1 << 21))))

  # --no-new-privs (the default config already sets it: check it stays set)
  run fsrun exec --no-new-privs "$CONTAINER_ID" grep NoNewPrivs /proc/self/status
  [[ $output =~ NoNewPrivs:[[:space:]]+1 ]]
}

@test "exec: --user parsing is exact: bad values exit 1 before anything runs" {
  start_container
  for bad in 4294967296 4294967295 18446744073709551616 -1 +1 ' 1' '1 ' 1: :1 1:2:3 0x10 root 1000:users ''; do
    run fsrun exec --user "$bad" "$CONTAINER_ID" sh -c 'echo RAN'
    echo "--user '$bad': status $status, output $output"
    [ "$status" -eq 1 ]
    [[ $output == *"--user"*"UID:GID"* ]]
    [[ $output != *RAN* ]]
  done
  run fsrun exec --additional-gids -5 "$CONTAINER_ID" true
  [ "$status" -eq 1 ]
  [[ $output == *"--additional-gids"* ]]
  run fsrun exec --cap CAP_NOT_A_CAP "$CONTAINER_ID" true
  [ "$status" -eq 1 ]
  [[ $output == *"--cap"*"CAP_NOT_A_CAP"* ]]
  # libcap takes the first name of `A,B` or `A junk`: refused whole, never fewer than asked silently
  for cap in 'CAP_SYS_ADMIN,CAP_NET_ADMIN' 'CAP_NET_ADMIN junk' 'CAP_NET_ADMIN+ep'; do
    run fsrun exec --cap "$cap" "$CONTAINER_ID" sh -c 'echo RAN'
    [ "$status" -eq 1 ]
    [[ $output == *"--cap: unknown capability \`$cap\`"* ]]
    [[ $output != *RAN* ]]
  done
}

@test "exec: --apparmor and --process-label are refused clearly where that LSM is off" {
  start_container
  if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ]; then
    run fsrun exec --apparmor some-profile "$CONTAINER_ID" sh -c 'echo RAN'
    [ "$status" -eq 1 ]
    [[ $output == *"process.apparmorProfile: AppArmor is not enabled on this host"* ]]
    [[ $output != *RAN* ]]
  fi
  if [ ! -e /sys/fs/selinux/enforce ]; then
    run fsrun exec --process-label system_u:system_r:container_t:s0 "$CONTAINER_ID" sh -c 'echo RAN'
    [ "$status" -eq 1 ]
    [[ $output == *"process.selinuxLabel: SELinux is not enabled on this host"* ]]
    [[ $output != *RAN* ]]
  fi
}

@test "exec: --detach returns at once with the pid in --pid-file (written atomically)" {
  start_container
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/d.pid" "$CONTAINER_ID" sh -c 'sleep 100000; true'
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/d.pid")
  [[ $EXEC_PID =~ ^[0-9]+$ ]]
  _fsrun_pid_alive "$EXEC_PID"
  # a host pid of a process in the container's pid namespace
  [ "$(readlink /proc/$EXEC_PID/ns/pid)" = "$(readlink /proc/$INIT_PID/ns/pid)" ]
  # no temporary file left next to it
  [ "$(ls "$BATS_TEST_TMPDIR" | grep -c '^d\.pid')" -eq 1 ]
  # the container's init is unaffected and the process dies with the container
  fsrun delete --force "$CONTAINER_ID"
  wait_until pid_gone "$EXEC_PID"
  run _fsrun_pid_alive "$EXEC_PID"
  [ "$status" -ne 0 ]
  EXEC_PID=
  assert_no_leftovers "$CONTAINER_ID"
}

@test "exec: --tty sends a working pty over --console-socket" {
  start_recvtty --input $'typed-input\n'
  start_container
  fsrun exec --tty --detach --console-socket "$SOCK" --pid-file "$BATS_TEST_TMPDIR/t.pid" "$CONTAINER_ID" \
    sh -c 'tty; read line; echo "got:$line"; echo "stat $(cut -d" " -f6,7 /proc/self/stat)"'
  recvtty_output
  [[ $output == *"/dev/pts/"* ]]
  [[ $output == *"got:typed-input"* ]]
  # a controlling terminal (tty_nr != 0) of its own session
  [[ $output =~ stat\ [0-9]+\ [1-9][0-9]* ]]
  # the pty is the container's: its devpts, not the host's
  pts=$(grep -o '/dev/pts/[0-9]*' <<<"$output")
  [ -n "$pts" ]
}

@test "exec: --tty in the foreground without a console socket relays the pty" {
  start_container
  run bash -c 'echo relayed-input | "$FSRUN" --root "$FSRUN_ROOT" exec --tty "$0" sh -c "tty; read line; echo got:\$line; exit 5"' "$CONTAINER_ID"
  [ "$status" -eq 5 ]
  output=${output//$'\r'/}
  [[ $output == *"/dev/pts/"* ]]
  [[ $output == *"got:relayed-input"* ]]
}

@test "exec: terminal and console socket combinations that cannot work are refused" {
  start_container
  run fsrun exec --tty --detach "$CONTAINER_ID" true
  [ "$status" -eq 1 ]
  [[ $output == *"console-socket"* ]]
  run fsrun exec --console-socket "$BATS_TEST_TMPDIR/none.sock" "$CONTAINER_ID" true
  [ "$status" -eq 1 ]
  [[ $output == *"console-socket"* ]]
}

@test "exec: a stopped container is refused with a clear message and exit status 1" {
  set_process_args true
  fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" stopped
  run fsrun exec "$CONTAINER_ID" sh -c 'echo RAN'
  [ "$status" -eq 1 ]
  [[ $output == *"cannot exec in a stopped container"* ]]
  [[ $output != *RAN* ]]
  [ "$(echo "$output" | wc -l)" -eq 1 ]

  run fsrun exec no-such-container-$$-$RANDOM$RANDOM true
  [ "$status" -eq 1 ]
  [[ $output == *"does not exist"* ]]
}

# bats test_tags=cgroupv2
@test "exec: a paused container is refused unless --ignore-paused (which runs once resumed)" {
  start_container
  fsrun pause "$CONTAINER_ID"
  wait_for_status "$CONTAINER_ID" paused
  run fsrun exec "$CONTAINER_ID" sh -c 'echo RAN'
  [ "$status" -eq 1 ]
  [[ $output == *"container \`$CONTAINER_ID' is paused"* || $output == *"container \`$CONTAINER_ID\` is paused"* ]]
  [[ $output == *"--ignore-paused"* ]]
  [[ $output != *RAN* ]]

  fsrun exec --ignore-paused "$CONTAINER_ID" sh -c 'echo ran-after-resume' >"$BATS_TEST_TMPDIR/ignored.out" 2>&1 &
  EXEC_PID=$!
  fsrun resume "$CONTAINER_ID"
  status=0
  wait "$EXEC_PID" || status=$?
  EXEC_PID=
  [ "$status" -eq 0 ]
  [ "$(cat "$BATS_TEST_TMPDIR/ignored.out")" = ran-after-resume ]
}

@test "exec: a created (not yet started) container can be exec'd into, as with runc" {
  set_process_args sleep 100000
  fsrun create --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>&1
  run fsrun exec "$CONTAINER_ID" sh -c 'hostname >/dev/null && echo in-created'
  [ "$status" -eq 0 ]
  [ "$output" = in-created ]
  run fsrun state "$CONTAINER_ID"
  [ "$(jq -r .status <<<"$output")" = created ]
}

@test "exec: the container's seccomp profile applies to exec'd processes" {
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  start_container
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/denied
  [ "$status" -eq 1 ]
  [[ $output == *"Operation not permitted"* ]]
  [ ! -e "$ROOTFS/tmp/denied" ]
  run fsrun exec "$CONTAINER_ID" grep Seccomp: /proc/self/status
  [[ $output =~ Seccomp:[[:space:]]+2 ]]
}

@test "exec: the filter create compiled and kept is the one exec loads; a damaged or missing one is compiled again" {
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  start_container
  kept=$FSRUN_ROOT/$CONTAINER_ID/seccomp.bpf
  [ -s "$kept" ]
  [ "$(stat -c %a "$kept")" = 600 ]
  cp "$kept" "$BATS_TEST_TMPDIR/compiled"
  # a program of one instruction that allows everything, with the kept header (magic, version,
  # flags, no listener): exec runs that, not the config's profile compiled afresh
  { head -c 20 "$BATS_TEST_TMPDIR/compiled"; printf '\x01\x00\x00\x00\x06\x00\x00\x00\x00\x00\xff\x7f'; } >"$kept"
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/kept-allows
  [ "$status" -eq 0 ]
  [ -d "$ROOTFS/tmp/kept-allows" ]
  # damaged (a size that does not match its count): compiled from the config, mkdir refused
  head -c 30 "$BATS_TEST_TMPDIR/compiled" >"$kept"
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/damaged
  [ "$status" -eq 1 ]
  [[ $output == *"Operation not permitted"* ]]
  [ ! -e "$ROOTFS/tmp/damaged" ]
  rm "$kept"
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/missing
  [ "$status" -eq 1 ]
  [ ! -e "$ROOTFS/tmp/missing" ]
  cp "$BATS_TEST_TMPDIR/compiled" "$kept"
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/compiled
  [ "$status" -eq 1 ]
  [ ! -e "$ROOTFS/tmp/compiled" ]
  run fsrun exec "$CONTAINER_ID" grep Seccomp: /proc/self/status
  [[ $output =~ Seccomp:[[:space:]]+2 ]]
}

# needs_listener: LISTENER, tests/seccomp-listener (skip without it); SOCK, the agents' socket
needs_listener() {
  LISTENER=${FSRUN%/*}/tests/seccomp-listener
  [ -x "$LISTENER" ] || skip "no $LISTENER (build it with make)"
  SOCK=$BATS_TEST_TMPDIR/agent.sock
}

# start_agent N ERRNO: a listener on $SOCK (one connection) answering ERRNO, its files suffixed N,
# its pid added to AGENT_PIDS
start_agent() {
  rm -f "$SOCK"
  "$LISTENER" "$SOCK" "$BATS_TEST_TMPDIR/state$1.json" "$BATS_TEST_TMPDIR/calls$1" "$2" 3>&- &
  AGENT_PIDS+=" $!"
  wait_until test -S "$SOCK"
}

@test "exec: a NOTIFY profile hands the exec'd process's own notify fd to the listener" {
  needs_listener
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $s,
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}' --arg s "$SOCK"
  start_agent 1 0
  start_container
  # the init's agent took its one connection: the exec's filter goes to a second agent
  start_agent 2 122 # EDQUOT
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/quota
  kill $AGENT_PIDS 2>/dev/null || true
  [ "$status" -eq 1 ]
  [[ $output == *"Disk quota exceeded"* ]]
  grep -qx mkdir "$BATS_TEST_TMPDIR/calls2"
  [ "$(jq -r '.state.id' "$BATS_TEST_TMPDIR/state2.json")" = "$CONTAINER_ID" ]
  [ "$(jq -r '.fds | join(",")' "$BATS_TEST_TMPDIR/state2.json")" = seccompFd ]
}

@test "exec: a NOTIFY profile of the syscalls the runtime's child still makes (sendmsg, recvmsg, close) does not hang" {
  needs_listener
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $s,
    "syscalls": [{"names": ["mkdir", "mkdirat", "sendmsg", "recvmsg", "close"], "action": "SCMP_ACT_NOTIFY"}]}' --arg s "$SOCK"
  start_agent 1 0
  # bounded: the previous binary waited forever in the init's (and exec child's) sendmsg of its
  # listener fd
  set_process_args sleep 100000
  timeout -s KILL 120 "$FSRUN" --root "$FSRUN_ROOT" run --detach --bundle "$BUNDLE" "$CONTAINER_ID" \
    </dev/null >/dev/null 2>&1
  wait_for_status "$CONTAINER_ID" running
  start_agent 2 122 # EDQUOT
  run timeout -s KILL 120 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" mkdir /tmp/quota
  kill $AGENT_PIDS 2>/dev/null || true
  [ "$status" -eq 1 ]
  [[ $output == *"Disk quota exceeded"* ]]
  grep -qx mkdir "$BATS_TEST_TMPDIR/calls2"
}

@test "exec: without a seccomp profile mkdir works (control for the test above)" {
  update_config 'del(.linux.seccomp)'
  start_container
  run fsrun exec "$CONTAINER_ID" mkdir /tmp/allowed
  [ "$status" -eq 0 ]
  [ -d "$ROOTFS/tmp/allowed" ]
}

@test "exec: the container's Landlock rules apply to exec'd processes" {
  set_process_args sleep 100000
  # strict first: a kernel without Landlock refuses the container (not exec's business: skip);
  # one with an older ABI (no truncate right before 6.2) still restricts writes, non-strict.
  # (Not `run`: the detached container would hold its output pipe open.)
  for strict in true false; do
    update_config '.process.noNewPrivileges = true
      | .annotations["run.fsrun.landlock"] = ({"readOnly": ["/"], "readWrite": ["/tmp", "/dev/null"], "strict": $s} | tojson)' \
      --argjson s "$strict"
    status=0
    fsrun run --detach --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/run.err" || status=$?
    [ "$status" -eq 0 ] && break
    cat "$BATS_TEST_TMPDIR/run.err"
    ! grep -q "has no Landlock" "$BATS_TEST_TMPDIR/run.err" || skip "no Landlock in this kernel"
    grep -q "Landlock ABI" "$BATS_TEST_TMPDIR/run.err"
  done
  [ "$status" -eq 0 ]
  wait_for_status "$CONTAINER_ID" running
  run fsrun exec "$CONTAINER_ID" sh -c 'echo in > /tmp/in && echo tmp-ok; echo x > /outside; echo "rc=$?"'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *tmp-ok* ]]
  [[ $output == *"Permission denied"* ]]
  [[ $output == *rc=1* ]]
  [ ! -e "$ROOTFS/outside" ]
  [ -e "$ROOTFS/tmp/in" ]
}

@test "exec: no file descriptor of the runtime or its caller leaks in, except --preserve-fds" {
  start_container
  # the shell's own fds ($$, not ls's); `; true` keeps sh from exec'ing ls in its place
  run fsrun exec "$CONTAINER_ID" sh -c 'ls /proc/$$/fd; true' 7</etc/hostname 9<"$BUNDLE"
  [ "$status" -eq 0 ]
  [ "$(echo $output)" = "0 1 2" ]

  run fsrun exec --preserve-fds 1 "$CONTAINER_ID" sh -c 'ls /proc/$$/fd; cat <&3; true' 3<<<"preserved-fd"
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "0 1 2 3 preserved-fd" ]
}

@test "exec: a symlink in the image through /proc/self/fd cannot make execve run a host binary" {
  [ -x /bin/busybox ] || skip "no /bin/busybox on the host"
  start_container
  # the image's only `echo` (PATH is /usr/local/bin) is a link to the host's static busybox
  # through fd 9, a host directory the runtime inherited: reachable if that fd were still open
  # when execve resolves the path (CLOEXEC alone closes it too late)
  mkdir -p "$ROOTFS/usr/local/bin"
  ln -s /proc/self/fd/9/../../../../../../../../../../../../../../../../bin/busybox "$ROOTFS/usr/local/bin/echo"
  run fsrun exec --env PATH=/usr/local/bin "$CONTAINER_ID" echo ESCAPED 9<"$BATS_TEST_TMPDIR"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output != *ESCAPED* ]]
  [[ $output == *'exec: "echo": no such file or directory'* ]]
}

@test "exec: --cwd through an inherited host directory fd is refused (cwd stays inside the root)" {
  start_container
  mkdir -p "$BATS_TEST_TMPDIR/hostdir"
  run fsrun exec --cwd /proc/self/fd/9 "$CONTAINER_ID" sh -c 'pwd; ls' 9<"$BATS_TEST_TMPDIR/hostdir"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ $output == *"process.cwd"* ]]

  run fsrun exec --cwd /nonexistent "$CONTAINER_ID" true
  [ "$status" -eq 1 ]
  [[ $output == *"process.cwd"*"/nonexistent"* ]]
}

@test "exec: a missing command exits 1 with \"no such file or directory\" (podman maps it to 127)" {
  start_container
  run fsrun exec "$CONTAINER_ID" no-such-binary
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "no-such-binary": no such file or directory'* ]]
  run fsrun exec "$CONTAINER_ID" /bin/no-such-binary arg
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "/bin/no-such-binary": no such file or directory'* ]]
  # not executable: "permission denied" (126 for podman)
  run fsrun exec "$CONTAINER_ID" /etc/passwd
  [ "$status" -eq 1 ]
  [[ $output == *'exec: "/etc/passwd": permission denied'* ]]
  # the json log carries the words too
  run "$FSRUN" --root "$FSRUN_ROOT" --log "$BATS_TEST_TMPDIR/log.json" --log-format json exec "$CONTAINER_ID" no-such-binary
  [ "$status" -eq 1 ]
  jq -e 'select(.level == "error") | .msg | contains("no such file or directory")' "$BATS_TEST_TMPDIR/log.json"
  # and nothing was left running
  run fsrun ps --format json "$CONTAINER_ID"
  [ "$(jq length <<<"$output")" -eq 1 ]
}

@test "exec: the exec'd process is non-dumpable until execve and never the runtime's binary" {
  start_container
  fsrun exec --detach --pid-file "$BATS_TEST_TMPDIR/x.pid" "$CONTAINER_ID" sleep 100000
  EXEC_PID=$(cat "$BATS_TEST_TMPDIR/x.pid")
  # what runs is the container's binary, not fsrun
  exe=$(readlink "/proc/$EXEC_PID/exe")
  [[ $exe == */bin/busybox || $exe == /bin/busybox ]]
  [ "$(stat -Lc %i /proc/$EXEC_PID/exe)" = "$(stat -c %i "$ROOTFS/bin/busybox")" ]
}

# the image's users: a home, an empty home, and uid 1002 has no entry
write_passwd() {
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'u1:x:1000:1000::/home/u1:/bin/sh' \
    'u2:x:1001:1001:::/bin/sh' >"$ROOTFS/etc/passwd"
}

@test "exec: HOME is the user's home in the container's /etc/passwd, / without one; an explicit HOME wins" {
  write_passwd
  update_config '.process.env |= map(select(startswith("HOME=") | not))'
  start_container
  for want in 0:/root 1000:/home/u1 1001:/ 1002:/; do
    run fsrun exec --user "${want%%:*}" "$CONTAINER_ID" sh -c 'echo "[$HOME]"'
    [ "$status" -eq 0 ]
    [ "$output" = "[${want#*:}]" ]
  done
  run fsrun exec --env HOME=/elsewhere "$CONTAINER_ID" sh -c 'echo "[$HOME]"'
  [ "$output" = "[/elsewhere]" ]
  # the init gets it too
  [ "$(tr '\0' '\n' <"/proc/$INIT_PID/environ" | grep '^HOME=')" = HOME=/root ]
  # an /etc/passwd that is a FIFO is not read (it would block): the fallback
  rm "$ROOTFS/etc/passwd"
  mkfifo "$ROOTFS/etc/passwd"
  run timeout 60 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" sh -c 'echo "[$HOME]"'
  [ "$status" -eq 0 ]
  [ "$output" = "[/]" ]
}

@test "exec: rootless (uid 1000): HOME from the container's /etc/passwd" {
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN" ||
    skip "uid 1000 cannot execute $FSRUN"
  write_passwd
  start_rootless '.process.env |= map(select(startswith("HOME=") | not))'
  run as_user exec "$ROOTLESS_ID" sh -c 'echo "[$HOME]"'
  [ "$status" -eq 0 ]
  [ "$output" = "[/root]" ]
}

@test "exec: rootless (uid 1000): with noNewPrivileges the filter, loaded before the clone into the pid namespace, holds in the exec'd process" {
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN" ||
    skip "uid 1000 cannot execute $FSRUN"
  start_rootless '.process.noNewPrivileges = true
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
  run as_user exec "$ROOTLESS_ID" sh -c 'grep Seccomp: /proc/self/status; mkdir /tmp/denied-rl'
  echo "$output"
  [ "$status" -eq 1 ]
  [[ ${lines[0]} =~ Seccomp:[[:space:]]+2 ]]
  [[ $output == *"Operation not permitted"* ]]
  [ ! -e "$ROOTFS/tmp/denied-rl" ]
}

@test "exec: rootless (uid 1000): an exec made before the init reached its execve waits for it (no EPERM)" {
  # While `start` (or `run -d`) runs, the init is released but has not reached its execve; until
  # then it is non-dumpable with the runtime's memory, and a rootless setns on its pidfd got EPERM.
  # A startContainer hook (run by the init before its execve) holds it there on a fifo; start,
  # which returns only after the execve, waits in the background meanwhile.
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN" ||
    skip "uid 1000 cannot execute $FSRUN"
  local dir=$BATS_TEST_TMPDIR/rootless init start_pid exec_pid
  mkfifo -m 666 "$ROOTFS/hold"
  create_rootless '.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "read x </hold"]}]'
  init=$(as_user state "$ROOTLESS_ID" | jq -r .pid)
  as_user start "$ROOTLESS_ID" >"$dir/start.out" 2>&1 &
  start_pid=$!
  # the init runs the hook: held before its execve
  wait_until pgrep -P "$init" -x sh
  as_user exec "$ROOTLESS_ID" sh -c 'echo joined' >"$dir/exec.out" 2>&1 &
  exec_pid=$!
  timeout "$WAIT_MAX_S" sh -c 'echo go >"$1"' _ "$ROOTFS/hold"
  wait "$start_pid"
  local status=0
  wait "$exec_pid" || status=$?
  cat "$dir/exec.out"
  [ "$status" -eq 0 ]
  [ "$(cat "$dir/exec.out")" = joined ]
}

@test "exec: noNewPrivileges is inherited from config.json without --process; a process file decides with it" {
  update_config '.process.noNewPrivileges = true'
  start_container
  run fsrun exec "$CONTAINER_ID" grep NoNewPrivs /proc/self/status
  [ "$status" -eq 0 ]
  [[ "$output" == *"1" ]]
  # podman and docker pass a process file: its value (false, or absent) is the one
  jq '.process | .args = ["grep", "NoNewPrivs", "/proc/self/status"] | .noNewPrivileges = false' \
    "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/process.json"
  run fsrun exec -p "$BATS_TEST_TMPDIR/process.json" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [[ "$output" == *"0" ]]
  jq 'del(.noNewPrivileges)' "$BATS_TEST_TMPDIR/process.json" >"$BATS_TEST_TMPDIR/process2.json"
  run fsrun exec -p "$BATS_TEST_TMPDIR/process2.json" "$CONTAINER_ID"
  [[ "$output" == *"0" ]]
}
