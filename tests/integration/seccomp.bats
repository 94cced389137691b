#!/usr/bin/env bats
# linux.seccomp (seccomp.c): each profile is tried from inside the container, with the error the
# user would see from busybox.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  # A writable root, so that mkdir would succeed without the filter.
  update_config '.root.readonly = false'
}

teardown() {
  local pid
  for pid in ${LISTENER_PID:-} ${INIT_LISTENER_PID:-}; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  teardown_bundle
}

# set_seccomp JSON: linux.seccomp = JSON
set_seccomp() {
  update_config '.linux.seccomp = $profile' --argjson profile "$1"
}

# The syscalls busybox needs, for allow-list profiles (no mkdir).
# With noNewPrivileges the filter is loaded once the init's set-up is done: of the runtime's own,
# only what follows (writev, close, close_range, openat and write of the exec fifo, execve) must
# be listed, and busybox needs those anyway.
ALLOWED_SYSCALLS='[
  "access", "arch_prctl", "brk", "capget", "capset", "chdir", "clock_gettime", "clock_nanosleep",
  "clone", "clone3", "close", "close_range", "dup", "dup2", "dup3", "execve", "execveat", "exit",
  "exit_group", "faccessat", "faccessat2", "fchdir", "fcntl", "fstat", "fstatfs", "futex",
  "getcwd", "getdents64", "getegid", "geteuid", "getgid", "getgroups", "getpgrp", "getpid",
  "getppid", "getrandom", "getresgid", "getresuid", "getrlimit", "gettid", "gettimeofday",
  "getuid", "ioctl", "lseek", "lstat", "madvise", "mmap", "mprotect", "munmap", "nanosleep",
  "newfstatat", "open", "openat", "openat2", "pipe", "pipe2", "poll", "ppoll", "prctl", "pread64",
  "prlimit64", "read", "readlink", "readlinkat", "readv", "rseq", "rt_sigaction",
  "rt_sigprocmask", "rt_sigreturn", "select", "set_robust_list", "set_tid_address", "setgid",
  "setgroups", "setresgid", "setresuid", "setsid", "setuid", "sigaltstack", "stat", "statfs",
  "statx", "sysinfo", "tgkill", "time", "umask", "uname", "vfork", "wait4", "waitid", "write",
  "writev", "fork", "kill", "pidfd_open", "pidfd_send_signal", "sched_yield", "sched_getaffinity"
]'

@test "seccomp: without a profile, mkdir works (control for the tests below)" {
  update_config 'del(.linux.seccomp)'
  run_in_container sh -c 'mkdir /tmp/made && echo made'
  [ "$status" -eq 0 ]
  [ "$output" = made ]
}

@test "seccomp: ERRNO with errnoRet 1 makes mkdir fail with EPERM" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  run_in_container mkdir /tmp/denied
  [ "$status" -eq 1 ]
  [[ "$output" == *"Operation not permitted"* ]]
  [ ! -e "$ROOTFS/tmp/denied" ]
}

@test "seccomp: ERRNO with errnoRet 13 makes mkdir fail with EACCES" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}'
  run_in_container mkdir /tmp/denied
  [ "$status" -eq 1 ]
  [[ "$output" == *"Permission denied"* ]]
  [ ! -e "$ROOTFS/tmp/denied" ]
}

@test "seccomp: KILL_PROCESS on uname: run exits 159 (128 + SIGSYS)" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["uname"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
  run_in_container uname
  [ "$status" -eq 159 ]
}

@test "seccomp: an allow list with defaultErrnoRet 38 makes unlisted syscalls fail with ENOSYS" {
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 38,
    \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\"],
    \"syscalls\": [{\"names\": $ALLOWED_SYSCALLS, \"action\": \"SCMP_ACT_ALLOW\"}]}"
  run_in_container sh -c 'echo listed; mkdir /tmp/unlisted'
  [ "$status" -eq 1 ]
  [ "${lines[0]}" = listed ]
  [[ "${lines[1]}" == *"Function not implemented"* ]]
  [ ! -e "$ROOTFS/tmp/unlisted" ]
}

@test "seccomp: with noNewPrivileges the filter comes after the init's set-up: a profile killing its steps still runs the process" {
  # the set-up's mounts, root change, credentials, pid namespace report and sync messages (not
  # prctl: busybox itself asks PR_GET_NAME)
  update_config '.process.noNewPrivileges = true'
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mount", "umount2", "pivot_root", "open_tree", "move_mount",
                            "mount_setattr", "fsopen", "fsconfig", "fsmount", "chdir", "capset",
                            "sendmsg", "readlinkat", "newfstatat", "socketpair", "sethostname"],
                  "action": "SCMP_ACT_KILL_PROCESS"}]}'
  run_in_container echo reached-exec
  [ "$status" -eq 0 ]
  [ "$output" = reached-exec ]
}

# create_logged ID: `create` of $BUNDLE as ID; the container's stdout and stderr (the init's too)
# go to $BATS_TEST_TMPDIR/ID.out
create_logged() {
  fsrun create --bundle "$BUNDLE" "$1" </dev/null >"$BATS_TEST_TMPDIR/$1.out" 2>&1
}

@test "seccomp: with noNewPrivileges a created container's init carries its filter while it waits for start; close_range refused, it closes fds one by one" {
  local pid
  CONTAINER_ID=id-$$-$RANDOM$RANDOM
  update_config '.process.noNewPrivileges = true'
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat", "close_range"], "action": "SCMP_ACT_ERRNO",
                  "errnoRet": 1}]}'
  set_process_args sh -c 'mkdir /tmp/denied || echo refused'
  create_logged "$CONTAINER_ID"
  pid=$(fsrun state "$CONTAINER_ID" | jq -r .pid)
  grep -qx 'Seccomp:[[:space:]]*2' "/proc/$pid/status"
  fsrun start "$CONTAINER_ID"
  wait_for_status "$CONTAINER_ID" stopped
  cat "$BATS_TEST_TMPDIR/$CONTAINER_ID.out"
  grep -q 'Operation not permitted' "$BATS_TEST_TMPDIR/$CONTAINER_ID.out"
  [ "$(tail -n 1 "$BATS_TEST_TMPDIR/$CONTAINER_ID.out")" = refused ]
  [ ! -e "$ROOTFS/tmp/denied" ]
  fsrun delete "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: with noNewPrivileges a profile refusing what the init does after the load (openat of the exec fifo): the init says so and start fails, nothing left" {
  CONTAINER_ID=id-$$-$RANDOM$RANDOM
  update_config '.process.noNewPrivileges = true'
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["openat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  set_process_args echo never
  create_logged "$CONTAINER_ID"
  run fsrun start "$CONTAINER_ID"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"the container init exited before it was started"* || "$output" == *"not created: stopped"* ]]
  [ "$(cat "$BATS_TEST_TMPDIR/$CONTAINER_ID.out")" = "fsrun: open the exec fifo: Operation not permitted" ]
  fsrun delete "$CONTAINER_ID"
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: an argument filter (personality arg0 EQ PER_LINUX32) denies only that value" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                  "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]}'
  run_in_container sh -c 'linux64 echo linux64-ok; linux32 echo linux32-ran'
  [ "$status" -ne 0 ]
  [ "${lines[0]}" = linux64-ok ]
  [[ "$output" != *linux32-ran* ]]
  [[ "$output" == *"Operation not permitted"* ]]
}

@test "seccomp: two comparisons of the same argument match either value" {
  # personality(PER_LINUX32 = 8) or personality(PER_LINUX32|ADDR_LIMIT_3GB = 0x8000008)
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
                  "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"},
                           {"index": 0, "value": 134217736, "op": "SCMP_CMP_EQ"}]}]}'
  run_in_container sh -c 'linux64 echo linux64-ok; linux32 echo linux32-ran'
  [ "${lines[0]}" = linux64-ok ]
  [[ "$output" != *linux32-ran* ]]
  [[ "$output" == *"Permission denied"* ]]
}

@test "seccomp: an unknown syscall name is skipped, the rest of the profile applies" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["no_such_syscall_anywhere", "mkdir", "mkdirat"],
                  "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  run_in_container mkdir /tmp/denied
  [ "$status" -eq 1 ]
  [[ "$output" == *"Operation not permitted"* ]]
}

@test "seccomp: an unknown action is refused, naming the field, and nothing is left" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["getpid"], "action": "SCMP_ACT_ALLOW"},
                 {"names": ["mkdir"], "action": "SCMP_ACT_EXPLODE"}]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.seccomp.syscalls[1].action"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: an unknown flag and an unknown architecture are refused" {
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_BOGUS"]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.seccomp.flags[0]"* ]]
  assert_no_leftovers "$CONTAINER_ID"

  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_PDP11"]}'
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.seccomp.architectures[0]"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: the flags the kernel supports are accepted" {
  local flags
  flags=$(fsrun features | jq -c '.linux.seccomp.supportedFlags // []')
  [ "$flags" != "[]" ] || skip "fsrun features lists no supported seccomp flags"
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": $flags,
    \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\"}]}"
  run_in_container mkdir /tmp/denied
  [ "$status" -eq 1 ]
  [[ "$output" == *"Operation not permitted"* ]]
}

# start_listener ERRNO [HOLD]: the test agent on $BATS_TEST_TMPDIR/agent.sock; sets LISTENER_*
# variables. With HOLD, it holds the first syscall it lets through (see seccomp-listener.c).
start_listener() {
  LISTENER=${FSRUN%/*}/tests/seccomp-listener
  [ -x "$LISTENER" ] || skip "no $LISTENER (build it with make)"
  LISTENER_SOCKET=$BATS_TEST_TMPDIR/agent.sock
  LISTENER_STATE=$BATS_TEST_TMPDIR/agent-state.json
  LISTENER_CALLS=$BATS_TEST_TMPDIR/agent-calls
  rm -f "$LISTENER_SOCKET"
  "$LISTENER" "$LISTENER_SOCKET" "$LISTENER_STATE" "$LISTENER_CALLS" "$1" ${2:+"$2"} 3>&- &
  LISTENER_PID=$!
  wait_until test -S "$LISTENER_SOCKET"
}

# listenerMetadata as JSON text, and what it says: a quote, a backslash, DEL and a letter outside
# ASCII, which the containerProcessState the agent receives must carry back unchanged
NOTIFY_METADATA_JSON='fsrun-test \"q\" \\ \u007f é'
NOTIFY_METADATA=$(printf 'fsrun-test "q" \\ \177 \303\251')

set_notify_profile() {
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ALLOW\",
    \"listenerPath\": \"$LISTENER_SOCKET\", \"listenerMetadata\": \"$NOTIFY_METADATA_JSON\",
    \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
}

@test "seccomp: NOTIFY hands a working fd to the listener, which fakes mkdir's success" {
  start_listener 0
  set_notify_profile
  run_in_container sh -c 'mkdir /tmp/faked && echo mkdir-succeeded; [ -e /tmp/faked ] || echo not-created'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = mkdir-succeeded ]
  [ "${lines[1]}" = not-created ]
  wait "$LISTENER_PID"
  LISTENER_PID=
  grep -qx mkdir "$LISTENER_CALLS"
  # the containerProcessState the agent received
  run jq -r '[(.fds | join(",")), .state.id, .state.ociVersion, (.pid > 0)] | join(" ")' \
    "$LISTENER_STATE"
  [ "$status" -eq 0 ]
  [ "$output" = "seccompFd $CONTAINER_ID $(jq -r .ociVersion "$LISTENER_STATE") true" ]
  [ "$(jq -r .metadata "$LISTENER_STATE")" = "$NOTIFY_METADATA" ]
  iconv -f UTF-8 -t UTF-8 "$LISTENER_STATE" >/dev/null
}

@test "seccomp: NOTIFY: the listener's chosen errno reaches the container" {
  start_listener 122 # EDQUOT
  set_notify_profile
  run_in_container mkdir /tmp/quota
  [ "$status" -eq 1 ]
  [[ "$output" == *"Disk quota exceeded"* ]]
  wait "$LISTENER_PID"
  LISTENER_PID=
  grep -qx mkdir "$LISTENER_CALLS"
}

@test "seccomp: NOTIFY without a listener to connect to fails cleanly" {
  LISTENER_SOCKET=$BATS_TEST_TMPDIR/nobody-listens.sock
  set_notify_profile
  run_in_container mkdir /tmp/x
  [ "$status" -eq 1 ]
  [[ "$output" == *"listenerPath"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: fsrun features reports seccomp with every action, operator and the native arch" {
  run fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.linux.seccomp.enabled' <<<"$output")" = true ]
  [ "$(jq -r '.linux.seccomp.actions | sort | join(",")' <<<"$output")" = \
    SCMP_ACT_ALLOW,SCMP_ACT_ERRNO,SCMP_ACT_KILL,SCMP_ACT_KILL_PROCESS,SCMP_ACT_KILL_THREAD,SCMP_ACT_LOG,SCMP_ACT_NOTIFY,SCMP_ACT_TRACE,SCMP_ACT_TRAP ]
  [ "$(jq -r '.linux.seccomp.operators | sort | join(",")' <<<"$output")" = \
    SCMP_CMP_EQ,SCMP_CMP_GE,SCMP_CMP_GT,SCMP_CMP_LE,SCMP_CMP_LT,SCMP_CMP_MASKED_EQ,SCMP_CMP_NE ]
  [ "$(jq -r '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") != null' <<<"$output")" = true ]
  # every supported flag is also a known one
  [ "$(jq -r '.linux.seccomp | (.supportedFlags - .knownFlags) | length' <<<"$output")" = 0 ]
}

@test "seccomp: NOTIFY with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV where the kernel has it" {
  fsrun features | jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")' >/dev/null ||
    skip "the kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"
  start_listener 0
  set_notify_profile
  update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"]'
  run_in_container sh -c 'mkdir /tmp/faked && echo mkdir-succeeded'
  [ "$status" -eq 0 ]
  [ "$output" = mkdir-succeeded ]
  wait "$LISTENER_PID"
  LISTENER_PID=
  grep -qx mkdir "$LISTENER_CALLS"
}

@test "seccomp: NOTIFY of the syscalls the init still makes (writev, sendmsg, recvmsg, close, openat, execve) does not hang" {
  start_listener 0
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"$LISTENER_SOCKET\",
    \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\", \"writev\", \"sendmsg\", \"recvmsg\", \"close\",
                                \"openat\", \"execve\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
  set_process_args sh -c 'mkdir /tmp/faked && echo mkdir-succeeded'
  CONTAINER_ID=seccomp-nohang-$UNIQ
  # bounded: the previous binary waited forever in the init's sendmsg of the listener fd
  run timeout -s KILL 120 "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID"
  [ "$status" -eq 0 ]
  [ "$output" = mkdir-succeeded ]
  wait "$LISTENER_PID"
  LISTENER_PID=
  grep -qx mkdir "$LISTENER_CALLS"
  # the init's own writev of SYNC_CREATED (20 on x86_64) went through the listener too
  [ "$(uname -m)" != x86_64 ] || grep -qx 20 "$LISTENER_CALLS"
  assert_no_leftovers "$CONTAINER_ID"
}

# A user namespace (uid 0 is 200000 on the host: /proc/PID/environ belongs to 200000 while the
# process is dumpable, to root when it is not; the directory /proc/PID is always the process's) and
# a profile that notifies prctl, which the runtime's process makes after loading the filter, before
# execve; HOLD is where the listener reports what it holds.
notify_hold_setup() {
  HOLD=$BATS_TEST_TMPDIR/held
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"$BATS_TEST_TMPDIR/agent.sock\",
    \"syscalls\": [{\"names\": [\"prctl\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
}

# probe_held_process: the process the listener holds in its notified prctl, as the host sees it,
# in HELD: "owner UID children [PIDS]"; then lets it go
probe_held_process() {
  local pid
  wait_for_file "$HOLD" || { touch "$HOLD.go"; return 1; }
  pid=$(cat "$HOLD")
  HELD="owner $(stat -c %u "/proc/$pid/environ") children [$(cat "/proc/$pid/task/$pid/children")]"
  touch "$HOLD.go"
  echo "held $pid: $HELD"
}

# exec_held ID: container ID runs `sleep`, its init's listener apart; `exec ID true` runs in the
# background (EXEC_PID) and the listener for the exec's filter holds its first notified call other
# than mkdir, whose caller's pid goes to HELD_PID
exec_held() {
  start_listener 0
  INIT_LISTENER_PID=$LISTENER_PID
  CONTAINER_ID=$1
  start_sleeper
  start_listener 0 "$HOLD"
  timeout -s KILL 60 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" true \
    </dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1 3>&- &
  EXEC_PID=$!
  wait_for_file "$HOLD" || { touch "$HOLD.go"; return 1; }
  HELD_PID=$(cat "$HOLD")
}

@test "seccomp: NOTIFY: the init is never dumpable while it hands the listener fd over, and its courier is gone" {
  # Held in its first prctl after the load: not dumpable (/proc/PID/environ is root's, not
  # 200000's), no child left. Root's runtime never made it dumpable: this guards the courier (seccomp-handover.c),
  # which fails it when the process is made dumpable around the load.
  local run_pid
  notify_hold_setup
  start_listener 0 "$HOLD"
  set_process_args true
  CONTAINER_ID=seccomp-hold-$UNIQ
  timeout -s KILL 60 "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" "$CONTAINER_ID" \
    </dev/null >"$BATS_TEST_TMPDIR/run.out" 2>&1 3>&- &
  run_pid=$!
  probe_held_process
  wait "$run_pid"
  [ "$HELD" = "owner 0 children []" ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "seccomp: NOTIFY without noNewPrivileges: exec's filter is loaded before the container can see the process, which is never dumpable" {
  # The filter needs CAP_SYS_ADMIN: the runtime's child loads it, outside the container's pid
  # namespace, and its next prctl (the capability drop) is held. The listener got the fd (the
  # runtime did not wait for the pid of the process that execs, which would never come), its state
  # names the child, and the child is not in the container's pid namespace.
  local pid
  notify_hold_setup
  update_config '.process.noNewPrivileges = false'
  exec_held seccomp-hold-exec-nnp-$UNIQ
  pid=$HELD_PID
  PIDNS="$(readlink "/proc/$pid/ns/pid") $(readlink "/proc/$(fsrun state "$CONTAINER_ID" | jq .pid)/ns/pid")"
  probe_held_process
  wait "$EXEC_PID"
  cat "$BATS_TEST_TMPDIR/exec.out"
  fsrun delete --force "$CONTAINER_ID"
  echo "$PIDNS"
  [ "$HELD" = "owner 0 children []" ]
  [ "${PIDNS% *}" != "${PIDNS#* }" ]
  [ "$(jq .pid "$LISTENER_STATE")" = "$pid" ]
}

@test "seccomp: NOTIFY: the exec process is never dumpable while it hands the listener fd over" {
  local exec_pid
  notify_hold_setup
  start_listener 0
  INIT_LISTENER_PID=$LISTENER_PID
  CONTAINER_ID=seccomp-hold-exec-$UNIQ
  start_sleeper
  start_listener 0 "$HOLD"
  timeout -s KILL 60 "$FSRUN" --root "$FSRUN_ROOT" exec "$CONTAINER_ID" true \
    </dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1 3>&- &
  exec_pid=$!
  probe_held_process
  wait "$exec_pid"
  fsrun delete --force "$CONTAINER_ID"
  [ "$HELD" = "owner 0 children []" ]
}

@test "seccomp: NOTIFY with noNewPrivileges: exec's process carries the filter from its first step in the container's pid namespace (review19 #5)" {
  # The profile notifies setsid, the first system call of the process cloned into the pid
  # namespace: the listener holds it there. Loaded after that clone (the previous order), the
  # filter came after the setsid, which was never notified: no hold.
  local pid
  HOLD=$BATS_TEST_TMPDIR/held
  update_config '.process.noNewPrivileges = true'
  set_seccomp "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"$BATS_TEST_TMPDIR/agent.sock\",
    \"syscalls\": [{\"names\": [\"setsid\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
  exec_held seccomp-notify-nnp-exec-$UNIQ
  pid=$HELD_PID
  STATUS=$(grep -E '^(Seccomp|NoNewPrivs):' "/proc/$pid/status" | tr -s '\t' ' ' | paste -sd' ')
  PIDNS="$(readlink "/proc/$pid/ns/pid") $(readlink "/proc/$(fsrun state "$CONTAINER_ID" | jq .pid)/ns/pid")"
  touch "$HOLD.go"
  wait "$EXEC_PID"
  cat "$BATS_TEST_TMPDIR/exec.out"
  fsrun delete --force "$CONTAINER_ID"
  echo "held $pid: $STATUS; $PIDNS"
  [ "$STATUS" = "NoNewPrivs: 1 Seccomp: 2" ]
  [ "${PIDNS% *}" = "${PIDNS#* }" ]
  # the held call was setsid (112 on x86_64)
  [ "$(uname -m)" != x86_64 ] || grep -qx 112 "$LISTENER_CALLS"
}

@test "seccomp: with noNewPrivileges exec's filter is loaded before the process enters the container's pid namespace: a profile refusing setsid fails the exec, naming it, nothing left (review19 #5)" {
  # the init's setsid comes before its filter: the container runs
  update_config '.process.noNewPrivileges = true'
  set_seccomp '{"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["setsid"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
  CONTAINER_ID=seccomp-exec-setsid-$UNIQ
  start_sleeper
  run fsrun exec --pid-file "$BATS_TEST_TMPDIR/pid" "$CONTAINER_ID" /bin/true
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"setsid: Operation not permitted"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/pid" ]
  # only the init is left in the container
  [ "$(fsrun ps --format json "$CONTAINER_ID" | jq length)" -eq 1 ]
  fsrun delete --force "$CONTAINER_ID"
}
