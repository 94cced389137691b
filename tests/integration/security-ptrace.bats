#!/usr/bin/env bats
# Issue 13 section 1: a container process with CAP_SYS_PTRACE (and one with every capability)
# attacks the runtime's processes. Non-dumpability does not stop it, so what is tried here must
# fail by construction (docs/process-model.md): the exec'd process is visible only once it is in
# the container's mount namespace and root, and no runtime process has the on-disk binary as its
# /proc/PID/exe (they run from a sealed memfd copy). Every attack runs against a copy of the
# binary, so that a successful overwrite does not destroy the build.

load helpers

setup_file() {
  requires_host_command cc
  PROBE_BIN=$BATS_FILE_TMPDIR/ptrace-probe
  cc -static -O2 -o "$PROBE_BIN" "$FSRUN_TESTS_DIR/ptrace-probe.c"
  export PROBE_BIN
}

setup() {
  requires_root
  requires_fsrun_command exec
  [ -x "${PROBE_BIN:-}" ] || skip "needs cc -static for the probe"
  setup_bundle
  cp "$PROBE_BIN" "$ROOTFS/bin/ptrace-probe"
  # the runtime under attack: a copy
  FSRUN_COPY=$BATS_TEST_TMPDIR/fsrun-copy
  cp "$FSRUN" "$FSRUN_COPY"
  cp "$FSRUN" "$BATS_TEST_TMPDIR/fsrun-original"
  # a file only the host has
  HOST_FILE=$BATS_TEST_TMPDIR/host-only
  echo secret >"$HOST_FILE"
  update_config '.root.readonly = false'
  # Container ids unique on the host: the cgroup (/fsrun/ID) follows the id, not the state root,
  # so a concurrent run of this file with fixed ids shared it, and its `delete --force` killed
  # this run's containers (a joined pid namespace whose init was killed gives clone ENOMEM).
  SEC=sec$$
}

teardown() {
  # a held exec (held_exec_start) of a test that failed before it let it go
  [ -z "${HELD_PARENT:-}" ] || kill -9 "$HELD_PARENT" 2>/dev/null || true
  [ -z "${HOLD_STRACE:-}" ] || kill "$HOLD_STRACE" 2>/dev/null || true
  teardown_bundle
}

copy() {
  "$FSRUN_COPY" --root "$FSRUN_ROOT" "$@"
}

# with_caps ptrace|all: the container's process gets CAP_SYS_PTRACE, or every capability
with_caps() {
  if [ "$1" = ptrace ]; then
    update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])'
  else
    local all
    all=$(capsh --print 2>/dev/null | sed -n 's/^Bounding set =//p' | tr ',' '\n' |
      sed 's/^cap_/CAP_/; s/.*/"\U&"/' | paste -sd, -)
    [ -n "$all" ] || all='"CAP_SYS_PTRACE","CAP_SYS_ADMIN","CAP_DAC_OVERRIDE"'
    update_config ".process.capabilities |= with_entries(.value = [$all])"
  fi
}

# exec_attack CAPS: a watcher in the container tries every new process during 21 execs
exec_attack() {
  with_caps "$1"
  set_process_args /bin/ptrace-probe watch "$HOST_FILE" /tmp/stop /tmp/watch.out
  copy run -d --bundle "$BUNDLE" $SEC-ptrace </dev/null >/dev/null 2>&1
  wait_for_status $SEC-ptrace running
  for _ in $(seq 20); do
    copy exec $SEC-ptrace /bin/true
  done
  # one exec the watcher surely tries: the 20 short ones can all end while it waits for a core
  timeout -s KILL 150 "$FSRUN_COPY" --root "$FSRUN_ROOT" exec $SEC-ptrace /bin/ptrace-probe wait-tried /tmp/watch.out
  : >"$ROOTFS/tmp/stop"
  wait_until has_line "$ROOTFS/tmp/watch.out" '^watched' || :
  cat "$ROOTFS/tmp/watch.out"
  grep -q '^watched [1-9]' "$ROOTFS/tmp/watch.out"
  [ -z "$(grep '^root-escape' "$ROOTFS/tmp/watch.out")" ]
  # what it could see (and seize) is never the runtime binary on disk
  [ -z "$(grep -F " $FSRUN_COPY" "$ROOTFS/tmp/watch.out")" ]
  cmp "$FSRUN_COPY" "$BATS_TEST_TMPDIR/fsrun-original"
  copy delete --force $SEC-ptrace
}

@test "security-ptrace: with CAP_SYS_PTRACE, a process watching for exec's child never reaches the host's root or the runtime binary" {
  exec_attack ptrace
}

@test "security-ptrace: with every capability, a process watching for exec's child never reaches the host's root or the runtime binary" {
  exec_attack all
}

# with_caps_but_escape: every capability but the two that reach a host file by its handle
# (CAP_DAC_READ_SEARCH, CAP_SYS_ADMIN): the container itself cannot, so nothing it makes the
# runtime's process do may
with_caps_but_escape() {
  with_caps all
  update_config '.process.capabilities |= with_entries(.value -= ["CAP_DAC_READ_SEARCH", "CAP_SYS_ADMIN"])'
}

# capwatch_start CAPS ID: container ID (no user namespace) whose init seizes every new process of
# its pid namespace, reads its capabilities and makes it open the host-only file by its handle
capwatch_start() {
  [ "$(uname -m)" = x86_64 ] || skip "the probe injects system calls on x86_64 only"
  [ "$1" = ptrace ] && with_caps ptrace || with_caps_but_escape
  HANDLE=$("$PROBE_BIN" handle "$HOST_FILE") || skip "no file handles on this filesystem"
  # shellcheck disable=SC2086
  set_process_args /bin/ptrace-probe capwatch $HANDLE /tmp/stop /tmp/cap.out
  copy run -d --bundle "$BUNDLE" "$2" </dev/null >/dev/null 2>&1
  wait_for_status "$2" running
}

# capwatch_check ID: a process seized for sure (it waits until it is), then the verdict: the
# container could not open the file itself, the watcher seized and injected, and no process it
# seized ever held a capability beyond the container's (or lacked its no_new_privs or seccomp
# filter) or reached the file
capwatch_check() {
  timeout -s KILL 150 "$FSRUN_COPY" --root "$FSRUN_ROOT" exec "$1" /bin/ptrace-probe wait-injected /tmp/cap.out
  : >"$ROOTFS/tmp/stop"
  wait_until has_line "$ROOTFS/tmp/cap.out" '^capwatched' || :
  grep -v '^injected' "$ROOTFS/tmp/cap.out"
  echo "injected into, by executable:"
  grep '^injected' "$ROOTFS/tmp/cap.out" | cut -d' ' -f4- | sort | uniq -c
  echo "$(grep -c '^beyond' "$ROOTFS/tmp/cap.out") beyond, $(grep -c '^escape' "$ROOTFS/tmp/cap.out") escape"
  grep -qx 'self Operation not permitted' "$ROOTFS/tmp/cap.out"
  grep -q '^capwatched [1-9][0-9]* [1-9]' "$ROOTFS/tmp/cap.out"
  [ -z "$(grep '^beyond\|^escape' "$ROOTFS/tmp/cap.out")" ]
}

# cap_exec_attack CAPS [filter]: 40 execs into the watcher's container; with `filter`, without
# noNewPrivileges and with a seccomp profile (the runtime's child loads it before the clone)
cap_exec_attack() {
  [ "${2:-}" != filter ] || update_config '.process.noNewPrivileges = false |
    .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
                      "syscalls": [{"names": ["kexec_load"], "action": "SCMP_ACT_ERRNO"}]}'
  capwatch_start "$1" $SEC-capx
  for _ in $(seq 40); do
    copy exec $SEC-capx /bin/true
  done
  capwatch_check $SEC-capx
  copy delete --force $SEC-capx
}

@test "security-ptrace: with CAP_SYS_PTRACE, exec's process never holds a capability beyond the container's while the container can seize it" {
  cap_exec_attack ptrace
}

@test "security-ptrace: with every capability but CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN, exec's process never holds one of them while the container can seize it" {
  cap_exec_attack all
}

@test "security-ptrace: with CAP_SYS_PTRACE, no noNewPrivileges and a seccomp profile, exec's process holds the container's filter whenever the container can seize it" {
  cap_exec_attack ptrace filter
}

# requires_procfs_pidns: procfs takes pidns= (Linux 6.15). Without it the late init mounts proc
# itself and holds the runtime's capabilities meanwhile, a documented limit (docs/process-model.md)
requires_procfs_pidns() {
  mkdir -p "$BATS_TEST_TMPDIR/pidns-proc"
  unshare -m --propagation private mount -t proc -o pidns=/proc/self/ns/pid proc \
    "$BATS_TEST_TMPDIR/pidns-proc" 2>/dev/null ||
    skip "procfs has no pidns= option (Linux < 6.15): the late init's capability window is open there"
}

# cap_join_attack CAPS: 15 containers (no user namespace) created in the watcher's pid namespace
cap_join_attack() {
  local i pid
  requires_procfs_pidns
  capwatch_start "$1" $SEC-capj
  pid=$(copy state $SEC-capj | jq -r .pid)
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$pid/ns/pid"
  set_process_args /bin/true
  for i in $(seq 15); do
    copy create --bundle "$BUNDLE" "$SEC-capj-$i" </dev/null
    copy delete --force "$SEC-capj-$i"
  done
  capwatch_check $SEC-capj
  copy delete --force $SEC-capj
}

@test "security-ptrace: with CAP_SYS_PTRACE, the init of a container joining the pid namespace never holds a capability beyond the container's while the container can seize it" {
  cap_join_attack ptrace
}

@test "security-ptrace: with every capability but CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN, the init of a container joining the pid namespace never holds one of them while the container can seize it" {
  cap_join_attack all
}

# exe_attack CAPS: between create and start, an exec'd process opens the waiting init's
# /proc/1/exe and keeps it; once fsrun has exited and the container runs, it reopens it to write
exe_attack() {
  with_caps "$1"
  set_process_args /bin/sleep 1000
  copy create --bundle "$BUNDLE" $SEC-exe2 </dev/null >/dev/null 2>&1
  pid=$(copy state $SEC-exe2 | jq -r .pid)
  init_exe=$(readlink "/proc/$pid/exe")
  copy exec $SEC-exe2 /bin/ptrace-probe overwrite 1 /tmp/overwrite.out
  copy start $SEC-exe2
  wait_until test -s "$ROOTFS/tmp/overwrite.out" || :
  cat "$ROOTFS/tmp/overwrite.out"
  [ -s "$ROOTFS/tmp/overwrite.out" ]
  [ -z "$(grep overwritten "$ROOTFS/tmp/overwrite.out")" ]
  cmp "$FSRUN_COPY" "$BATS_TEST_TMPDIR/fsrun-original"
  [ "$init_exe" != "$FSRUN_COPY" ]
  copy delete --force $SEC-exe2
}

@test "security-ptrace: with CAP_SYS_PTRACE, the waiting init's /proc/1/exe does not lead to the runtime binary (CVE-2019-5736)" {
  exe_attack ptrace
}

@test "security-ptrace: with every capability, the waiting init's /proc/1/exe does not lead to the runtime binary (CVE-2019-5736)" {
  exe_attack all
}

# fd_attack CAPS: between create and start, an exec'd process goes through every directory the
# waiting init holds open (/proc/1/fd/N) to every process's root it can name there
fd_attack() {
  with_caps "$1"
  set_process_args /bin/sleep 1000
  copy create --bundle "$BUNDLE" $SEC-fd </dev/null >/dev/null 2>&1
  run copy exec $SEC-fd /bin/sh -c '
    for fd in /proc/1/fd/*; do
      [ -d "$fd/" ] || continue
      for p in "$fd"/[0-9]*; do
        [ -e "$p/root$1" ] && echo "root-escape through $fd to $p"
      done
    done
    echo tried' sh "$HOST_FILE"
  copy delete --force $SEC-fd
  echo "$output"
  [ "$status" = 0 ]
  [[ "$output" == *tried* ]]
  [[ "$output" != *root-escape* ]]
}

@test "security-ptrace: with CAP_SYS_PTRACE, the waiting init holds no host procfs that leads to the host's root" {
  fd_attack ptrace
}

@test "security-ptrace: with every capability, the waiting init holds no host procfs that leads to the host's root" {
  fd_attack all
}

USERNS_MAPS='.linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
  .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'

# join_attack CAPS [MODE]: a watcher in container A tries every new pid while 10 containers are
# created in A's pid namespace (each a new mount namespace), and one more runs until it has been
# tried (ptrace-probe wait-tried). MODE: none (no user namespace),
# userns-both (A in a user namespace of its own, B joining A's user and pid namespaces), userns-new
# (A in none, B in a new one; no proc mount: the config the binary before could create),
# userns-new-proc (the same with the proc mount), userns-other (A in none, B joining the user
# namespace of a third container, which does not own A's pid namespace). In the userns-new* and
# userns-other modes B has a createContainer hook that records its pid namespace: never A's.
join_attack() {
  local i pid upid mode=${2:-none}
  with_caps "$1"
  [ "$mode" = userns-both ] &&
    update_config ".linux.namespaces += [{\"type\": \"user\"}] | $USERNS_MAPS"
  cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/config.a"
  if [ "$mode" = userns-other ]; then
    update_config ".linux.namespaces += [{\"type\": \"user\"}] | $USERNS_MAPS"
    set_process_args /bin/sleep 1000
    copy run -d --bundle "$BUNDLE" $SEC-join-u </dev/null >/dev/null 2>&1
    wait_for_status $SEC-join-u running
    upid=$(copy state $SEC-join-u | jq -r .pid)
    cp "$BATS_TEST_TMPDIR/config.a" "$BUNDLE/config.json"
  fi
  set_process_args /bin/ptrace-probe watch "$HOST_FILE" /tmp/stop /tmp/watch.out
  copy run -d --bundle "$BUNDLE" $SEC-join-a </dev/null >/dev/null 2>&1
  wait_for_status $SEC-join-a running
  pid=$(copy state $SEC-join-a | jq -r .pid)
  cp "$BATS_TEST_TMPDIR/config.a" "$BUNDLE/config.json"
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$pid/ns/pid"
  case $mode in
  userns-both)
    update_config '.linux.namespaces |= map(if .type == "user" then .path = $p else . end) |
      del(.linux.uidMappings, .linux.gidMappings)' --arg p "/proc/$pid/ns/user"
    ;;
  userns-new*)
    update_config ".linux.namespaces += [{\"type\": \"user\"}] | $USERNS_MAPS"
    ;;
  userns-other)
    update_config '.linux.namespaces += [{"type": "user", "path": $p}]' --arg p "/proc/$upid/ns/user"
    ;;
  esac
  [ "$mode" = userns-new ] && update_config '.mounts |= map(select(.type != "proc"))'
  case $mode in
  userns-new* | userns-other)
    update_config '.hooks.createContainer = [{"path": "/bin/sh",
      "args": ["sh", "-c", "readlink /proc/self/ns/pid >>\"$1\"", "sh", $f]}]' \
      --arg f "$BATS_TEST_TMPDIR/hook-pidns"
    ;;
  esac
  set_process_args /bin/true
  for i in $(seq 10); do
    copy create --bundle "$BUNDLE" "$SEC-join-$i" </dev/null
    copy delete --force "$SEC-join-$i"
  done
  # the joining container's /proc is its pid namespace's (A's init is its pid 1), masked as asked
  if [ "$mode" != userns-new ]; then
    set_process_args /bin/sh -c 'cat /proc/1/comm; readlink /proc/self/ns/pid; wc -c </proc/timer_list'
    run copy run --bundle "$BUNDLE" $SEC-join-run </dev/null
    echo "$output"
    [ "$status" = 0 ]
    [ "${lines[0]}" = ptrace-probe ]
    [ "${lines[1]}" = "$(readlink "/proc/$pid/ns/pid")" ]
    [ "${lines[2]}" = 0 ]
  fi
  # one container the watcher surely tries: the short-lived inits above can all come and go while
  # it waits for a core (watched 0 on a correct run)
  set_process_args /bin/ptrace-probe wait-tried /tmp/watch.out
  timeout -s KILL 150 "$FSRUN_COPY" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" $SEC-join-tried </dev/null
  : >"$ROOTFS/tmp/stop"
  wait_until has_line "$ROOTFS/tmp/watch.out" '^watched' || :
  cat "$ROOTFS/tmp/watch.out"
  grep -q '^watched [1-9]' "$ROOTFS/tmp/watch.out"
  [ -z "$(grep '^root-escape' "$ROOTFS/tmp/watch.out")" ]
  [ -z "$(grep -F " $FSRUN_COPY" "$ROOTFS/tmp/watch.out")" ]
  if [ -e "$BATS_TEST_TMPDIR/hook-pidns" ]; then
    cat "$BATS_TEST_TMPDIR/hook-pidns"
    [ "$(wc -l <"$BATS_TEST_TMPDIR/hook-pidns")" -ge 10 ]
    ! grep -qxF "$(readlink "/proc/$pid/ns/pid")" "$BATS_TEST_TMPDIR/hook-pidns" || false
  fi
  copy delete --force $SEC-join-a
  [ "$mode" != userns-other ] || copy delete --force $SEC-join-u
}

@test "security-ptrace: with CAP_SYS_PTRACE, a process watching for the init of a container joining its pid namespace never reaches the host's root" {
  join_attack ptrace
}

@test "security-ptrace: with every capability, a process watching for the init of a container joining its pid namespace never reaches the host's root" {
  join_attack all
}

@test "security-ptrace: with CAP_SYS_PTRACE, a watcher in a user namespace never reaches the host's root through a container joining its user and pid namespaces" {
  join_attack ptrace userns-both
}

@test "security-ptrace: with every capability, a watcher in a user namespace never reaches the host's root through a container joining its user and pid namespaces" {
  join_attack all userns-both
}

@test "security-ptrace: with CAP_SYS_PTRACE, a watcher never reaches the host's root through a container joining its pid namespace with a new user namespace" {
  join_attack ptrace userns-new
}

@test "security-ptrace: with every capability, a watcher never reaches the host's root through a container joining its pid namespace with a new user namespace" {
  join_attack all userns-new
}

@test "security-ptrace: with CAP_SYS_PTRACE, a container joining a pid namespace with a new user namespace gets that pid namespace's procfs, and the watcher never reaches the host" {
  join_attack ptrace userns-new-proc
}

@test "security-ptrace: with CAP_SYS_PTRACE, a watcher never reaches the host's root through a container joining its pid namespace and a user namespace that does not own it" {
  join_attack ptrace userns-other
}

@test "security-ptrace: with every capability, a watcher never reaches the host's root through a container joining its pid namespace and a user namespace that does not own it" {
  join_attack all userns-other
}

# the procfs directories the waiting init $1 holds open that show the host's pid namespace: this
# shell is in it (its "self" resolves there). A process with CAP_SYS_PTRACE in the container that
# opened /proc/1/fd/N there would reach every host process's root.
init_host_procfs_fds() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    [ -d "$fd/" ] && [ "$(stat -f -c %T "$fd/")" = proc ] && readlink "$fd/self" >/dev/null &&
      echo "$fd"
  done
  return 0
}

@test "security-ptrace: in a user namespace whose config mounts no /proc, the waiting init holds no host procfs" {
  # before: the init's own procfs instance was made after pivot_root, where a user namespace may
  # mount none (no procfs fully visible there), and it kept the host's handle while it waited
  update_config '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
    .mounts |= map(select(.type != "proc"))'
  set_process_args /bin/sleep 1000
  copy create --bundle "$BUNDLE" $SEC-noproc </dev/null
  pid=$(copy state $SEC-noproc | jq -r .pid)
  run init_host_procfs_fds "$pid"
  copy delete --force $SEC-noproc
  echo "$output"
  [ "$status" = 0 ]
  [ -z "$output" ]
}

# forge_setup FORGER.c ID: the forger built as $BATS_TEST_TMPDIR/forge, container ID (a sleeper)
# running, and the bundle set to join its pid namespace and run /bin/true
forge_setup() {
  local pid
  requires_host_command cc
  cc -static -O2 -o "$BATS_TEST_TMPDIR/forge" "$FSRUN_TESTS_DIR/$1" || skip "needs cc -static"
  set_process_args /bin/sleep 1000
  copy run -d --bundle "$BUNDLE" "$2" </dev/null >/dev/null 2>&1
  wait_for_status "$2" running
  pid=$(copy state "$2" | jq -r .pid)
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$pid/ns/pid"
  set_process_args /bin/true
}

@test "security-ptrace: a message forged on the init's sync socket never makes create take and signal another process as the container's init" {
  # A process that takes the late init's sync socket (a watcher with CAP_SYS_PTRACE in the
  # joined pid namespace can, with pidfd_getfd) reports a host process as the init and then an
  # error. A prestart hook does it here, deterministically before the init's own report; before,
  # create took the victim as the container's init and SIGKILLed it while undoing the create.
  local victim
  forge_setup forge-init-pid.c $SEC-forge-a
  sleep 1000 </dev/null >/dev/null 2>&1 &
  victim=$!
  update_config '.hooks.prestart = [{"path": $f, "args": ["forge", $v]}]' \
    --arg f "$BATS_TEST_TMPDIR/forge" --arg v "$victim"
  run copy create --bundle "$BUNDLE" $SEC-forge-b </dev/null
  echo "$output"
  alive=no
  kill -0 "$victim" 2>/dev/null && alive=yes
  kill -9 "$victim" 2>/dev/null || true
  wait "$victim" 2>/dev/null || true
  copy delete --force $SEC-forge-b 2>/dev/null || true
  copy delete --force $SEC-forge-a
  [ "$status" -ne 0 ]
  [ "$alive" = yes ]
}

@test "security-ptrace: a message on the init's sync socket from another process fails create, with nothing left behind" {
  # A process that took the init's sync socket (the late init of a joined pid namespace, seized
  # before its pid reached create) queues "created" ahead of the init's own messages. A prestart
  # hook does it here, deterministically while the first init waits for GO; before, create took it
  # for the init's and returned 0 with the init half set up.
  forge_setup forge-created.c $SEC-forgec-a
  update_config '.hooks.prestart = [{"path": $f}]' --arg f "$BATS_TEST_TMPDIR/forge"
  run copy create --bundle "$BUNDLE" $SEC-forgec-b </dev/null
  echo "$output"
  copy delete --force $SEC-forgec-a
  [ "$status" = 1 ]
  [[ $output == *"message 7 from pid "*", not the init (pid "* ]]
  [ "${#lines[@]}" = 1 ]
  assert_no_leftovers $SEC-forgec-b
}

# review19 #5: with noNewPrivileges the filter used to be loaded last, after the process became
# visible in the container's pid namespace: a container with CAP_SYS_PTRACE (no user namespace)
# seized it there and ran what its profile denies. These hold the runtime's process still at its
# last wait before execve and inject mkdir, which the profile refuses.
DENY_MKDIR='.process.noNewPrivileges = true | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'

# ns_pid HOST_PID: its pid in its innermost pid namespace
ns_pid() {
  awk '/^NSpid:/ { print $NF }' "/proc/$1/status"
}

# held_exec_start ID PIDFILE: a foreground `exec --pid-file PIDFILE ID /bin/true` held by strace at
# its pid file's rename (helpers.bash, hold_pid_file): after its process (pid_late) reported ready
# and before that process's go (exec-follow.c). Sets HELD_PARENT and HELD_PID (in the container).
held_exec_start() {
  local hpid
  hold_pid_file "$2" "$BATS_TEST_TMPDIR" "$FSRUN_COPY" --root "$FSRUN_ROOT" exec --pid-file "$2" "$1" /bin/true
  HELD_PARENT=$HOLD_PID
  hpid=$(cat /proc/"$HELD_PARENT"/task/*/children)
  HELD_PID=$(ns_pid $hpid)
}

@test "security-ptrace: with CAP_SYS_PTRACE and noNewPrivileges, exec's process runs no system call its seccomp profile denies, even seized while the runtime holds it (review19 #5)" {
  [ "$(uname -m)" = x86_64 ] || skip "the probe injects system calls on x86_64 only"
  with_caps ptrace
  update_config "$DENY_MKDIR"
  set_process_args /bin/sleep 1000
  copy run -d --bundle "$BUNDLE" $SEC-held </dev/null >/dev/null 2>&1
  wait_for_status $SEC-held running
  run copy exec $SEC-held /bin/mkdir /self-made
  [ "$status" != 0 ]
  held_exec_start $SEC-held "$BATS_TEST_TMPDIR/held.pid"
  run copy exec $SEC-held /bin/ptrace-probe inject-mkdir "$HELD_PID" /bypass-exec /tmp/inject.out
  # let it go: strace detaches, the parent renames the pid file into place and lets the process exec
  kill "$HOLD_STRACE"
  wait "$HELD_PARENT"
  cat "$ROOTFS/tmp/inject.out"
  # seized and injected (the probe works), the profile refused it, and the filter was there
  grep -qx "mkdir $HELD_PID -1 2" "$ROOTFS/tmp/inject.out"
  [ ! -e "$ROOTFS/bypass-exec" ]
  copy delete --force $SEC-held
}

@test "security-ptrace: with CAP_SYS_PTRACE and noNewPrivileges, the waiting init of a container joining the pid namespace runs no system call its profile denies (review19 #5)" {
  local pid bpid
  [ "$(uname -m)" = x86_64 ] || skip "the probe injects system calls on x86_64 only"
  requires_procfs_pidns
  with_caps ptrace
  set_process_args /bin/sleep 1000
  copy run -d --bundle "$BUNDLE" $SEC-heldj-a </dev/null >/dev/null 2>&1
  wait_for_status $SEC-heldj-a running
  pid=$(copy state $SEC-heldj-a | jq -r .pid)
  update_config "$DENY_MKDIR"
  update_config '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
    --arg p "/proc/$pid/ns/pid"
  set_process_args /bin/true
  # created: its init waits for `start` in A's pid namespace
  copy create --bundle "$BUNDLE" $SEC-heldj-b </dev/null
  bpid=$(copy state $SEC-heldj-b | jq -r .pid)
  run copy exec $SEC-heldj-a /bin/ptrace-probe inject-mkdir "$(ns_pid "$bpid")" /bypass-join \
    /tmp/inject.out
  cat "$ROOTFS/tmp/inject.out"
  grep -qx "mkdir $(ns_pid "$bpid") -1 2" "$ROOTFS/tmp/inject.out"
  [ ! -e "$ROOTFS/bypass-join" ]
  # the filter loaded before the init's last steps still lets it start and exec
  copy start $SEC-heldj-b
  copy delete --force $SEC-heldj-b
  copy delete --force $SEC-heldj-a
}

@test "security-ptrace: with CAP_SYS_PTRACE and noNewPrivileges, a created container's own init runs no system call its profile denies while it waits for start" {
  local pid
  [ "$(uname -m)" = x86_64 ] || skip "the probe injects system calls on x86_64 only"
  with_caps ptrace
  update_config "$DENY_MKDIR"
  set_process_args /bin/sh -c 'echo started >/tmp/started'
  # created: its init (pid 1 of its own pid namespace) waits for `start` on the exec fifo
  copy create --bundle "$BUNDLE" $SEC-heldi </dev/null
  pid=$(copy state $SEC-heldi | jq -r .pid)
  run copy exec $SEC-heldi /bin/ptrace-probe inject-mkdir 1 /bypass-init /tmp/inject.out
  cat "$ROOTFS/tmp/inject.out"
  # seized and injected (the probe works), the profile refused it, and the filter was there
  grep -qx "mkdir 1 -1 2" "$ROOTFS/tmp/inject.out"
  [ ! -e "$ROOTFS/bypass-init" ]
  # seen from the host as well
  grep -qx 'Seccomp:[[:space:]]*2' "/proc/$pid/status"
  # the filter loaded before the init's last steps still lets it start and exec
  copy start $SEC-heldi
  wait_for_status $SEC-heldi stopped
  [ "$(cat "$ROOTFS/tmp/started")" = started ]
  copy delete --force $SEC-heldi
  assert_no_leftovers $SEC-heldi
}

# as_user ARGS: the copy of the runtime as uid 1000, with a state root of its own
as_user() {
  setpriv --reuid=1000 --regid=1000 --clear-groups env -u XDG_RUNTIME_DIR \
    "$FSRUN_COPY" --root "$BATS_TEST_TMPDIR/rootless/state" "$@"
}

@test "security-ptrace: rootless, with CAP_SYS_PTRACE in its user namespace and noNewPrivileges, a created container's own init carries its filter and cannot be joined" {
  local dir=$BATS_TEST_TMPDIR/rootless pid
  requires_host_command setpriv
  setpriv --reuid=1000 --regid=1000 --clear-groups test -x "$FSRUN_COPY" ||
    skip "uid 1000 cannot execute $FSRUN_COPY"
  mkdir -p "$dir/state"
  chown 1000:1000 "$dir" "$dir/state" "$ROOTFS/tmp"
  as_user spec --rootless --bundle "$dir"
  jq --arg r "$ROOTFS" '.root.path = $r | .root.readonly = false | .process.terminal = false
    | .process.args = ["/bin/sh", "-c", "echo started >/tmp/s.tmp && mv /tmp/s.tmp /tmp/started"]
    | .process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"]) | '"$DENY_MKDIR" \
    "$dir/config.json" >"$dir/config.new"
  mv "$dir/config.new" "$dir/config.json"
  as_user create --bundle "$dir" $SEC-heldr </dev/null
  pid=$(as_user state $SEC-heldr | jq -r .pid)
  grep -qx 'Seccomp:[[:space:]]*2' "/proc/$pid/status"
  # nothing of the container can reach it before its execve: the init is not dumpable and its
  # memory is the host user namespace's, so an ordinary user's setns into it is refused
  run as_user exec $SEC-heldr /bin/ptrace-probe inject-mkdir 1 /tmp/bypass-rootless /tmp/inject.out
  [ "$status" -ne 0 ]
  [[ "$output" == *"join the container's namespaces"*"Operation not permitted"* ]]
  [ ! -e "$ROOTFS/tmp/inject.out" ]
  [ ! -e "$ROOTFS/tmp/bypass-rootless" ]
  as_user start $SEC-heldr
  wait_for_file "$ROOTFS/tmp/started"
  [ "$(cat "$ROOTFS/tmp/started")" = started ]
  as_user delete --force $SEC-heldr
  [ ! -e "$dir/state/$SEC-heldr" ]
}
