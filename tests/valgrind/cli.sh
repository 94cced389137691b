#!/bin/bash
# cli.sh FSRUN: the CLI under valgrind's memcheck, as TAP. Every command must exit as it does
# without valgrind and leave no memcheck report: no invalid access, no uninitialised use, no leak of
# any kind (still-reachable blocks included).
#
# valgrind 3.19 (Debian 12) does not know clone3, openat2, the new mount API (open_tree,
# move_mount, mount_setattr, fsopen, fsconfig, fsmount), pidfd_open, pidfd_send_signal, seccomp(2)
# or the Landlock calls (it answers ENOSYS and warns). fsrun clones with clone(2) where clone3
# answers ENOSYS, walks paths itself where openat2 does (docs/process-model.md), and mounts with
# mount(2) where the new mount API does (docs/mounts.md), so memcheck follows create and run to
# the end: the config, the state dir, the cgroup, the clone, the init's whole rootfs, the sync with
# the init and the undoing. The created container is started by the plain binary; exec runs under
# memcheck through its ENOSYS fallbacks (the init's namespaces through /proc/PID, kill(2) of its
# own child; docs/process-model.md, "Without pidfd_open"), and so do delete --force (through the
# cgroup) and the commands that only read or write state and cgroup files. kill and start have no
# fallback as safe as a pidfd: they refuse, and that refusal is checked. The ASan/UBSan build
# covers the rest (the asan suite).
# The sandbox runs up to its init's failed seccomp(2): the policy, the config it makes, the rootfs
# and the cleanup. Warnings about unknown syscalls are not
# memcheck reports; a line of memcheck's own (==PID==) is. One log per process (the clones too): fsrun's
# own must have none at all; a cloned process that ends with _exit (the init that failed) may
# hold still-reachable blocks, it must have no other report. Needs root and a busybox rootfs
# (contrib/lib.sh).
set -u

FSRUN=${1:?usage: cli.sh FSRUN}
# memcheck follows malloc and free by replacing libc.so's: in a static binary it sees no heap at
# all, and every check below would pass without looking.
if ! LC_ALL=C readelf -l "$FSRUN" 2>/dev/null | grep -q 'Requesting program interpreter'; then
  echo "1..1"
  echo "not ok 1 - $FSRUN is a static binary: memcheck cannot follow its heap (configure --disable-static-binary)"
  exit 1
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/valgrind}
# shellcheck source=../../contrib/lib.sh
source "$srcdir/contrib/lib.sh"

work=$(mktemp -d /tmp/fsrun-valgrind.XXXXXX)
root=$work/root
id=vg-$$
cleanup() {
  "$FSRUN" --root "$root" delete --force "$id" >/dev/null 2>&1
  "$FSRUN" --root "$root" delete --force "$id-nr" >/dev/null 2>&1
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

count=0
failures=0
# reports FILE [REACHABLE_OK]: memcheck's records in FILE, less those of still-reachable blocks
# when REACHABLE_OK (a cloned process that _exits keeps its heap: nothing is lost), and less
# valgrind's note that it does not know TIOCGPTPEER (0x5441: exec's pty slave; it returns an fd and
# writes no memory, so nothing can come of it)
reports() {
  awk -v ok="${2:-}" '
    function flush() {
      if (rec != "" && !(ok && head ~ / are still reachable in loss record /)) printf "%s", rec
      rec = head = ""
    }
    /^==[0-9]+== Warning: noted but unhandled ioctl 0x5441 with no size\/direction hints\.$/ { skip = 2; next }
    skip > 0 && /^==[0-9]+==    (This could cause spurious|See README_MISSING_SYSCALL_OR_IOCTL)/ { skip--; next }
    /^==[0-9]+== *$/ { flush(); next }
    /^==[0-9]+==/ { if (head == "") head = $0; rec = rec $0 "\n" }
    END { flush() }' "$1"
}
# check NAME WANT_STATUS ARGS...: `fsrun --root ROOT ARGS...` under memcheck
check() {
  local name=$1 want=$2 status pid log found=""
  shift 2
  count=$((count + 1))
  # one fd for every process's log: exec's processes are in the container's mount namespace,
  # where a --log-file path would not lead (memcheck opens a clone's log at the clone)
  valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
    --suppressions="$here/fsrun.supp" --error-exitcode=99 --log-fd=9 \
    "$FSRUN" --root "$root" "$@" >"$work/out.$count" 2>&1 </dev/null 9>>"$work/vg.$count" &
  pid=$!
  wait "$pid"
  status=$?
  # one log per process: memcheck begins each of its lines with ==PID== (--PID-- for warnings)
  awk -v base="$work/vg.$count" 'match($0, /^(==|--)[0-9]+(==|--)/) {
      print > (base "." substr($0, 3, RLENGTH - 4)) }' "$work/vg.$count"
  for log in "$work/vg.$count".*; do
    [ -e "$log" ] || continue
    if [ "$log" = "$work/vg.$count.$pid" ]; then
      found+=$(reports "$log")
    else
      found+=$(reports "$log" reachable-ok)
    fi
  done
  if [ "$status" = "$want" ] && [ -z "$found" ]; then
    echo "ok $count - $name"
  else
    failures=$((failures + 1))
    echo "not ok $count - $name (exit $status, wanted $want)"
    grep -v '^--' "$work/vg.$count" | cat - "$work/out.$count" | sed 's/^/# /' | head -n 40
  fi
}

# expect_output NAME TEXT: the last check's output holds TEXT
expect_output() {
  count=$((count + 1))
  if grep -qF -- "$2" "$work/out.$((count - 1))"; then
    echo "ok $count - $1"
  else
    failures=$((failures + 1))
    echo "not ok $count - $1"
    sed 's/^/# /' "$work/out.$((count - 1))"
  fi
}

# the processes whose root is this bundle's rootfs: the container's, not another test's (other runs
# on the machine start their own `sleep 1000`)
container_pids() {
  local want pid
  want=$(stat -Lc %d:%i "$work/bundle/rootfs") || return 1
  for pid in /proc/[0-9]*; do
    [ "$(stat -Lc %d:%i "$pid/root" 2>/dev/null)" = "$want" ] && echo "${pid#/proc/}"
  done
  return 0
}

# exec into the running container $id: the pidfd_open fallback (the init's namespaces through its
# /proc/PID; docs/process-model.md), the clone into the pid namespace, the foreground, -d, a
# process.json, a pty, and the error of a command that is not there
check_exec() {
  check "exec" 3 exec "$id" sh -c 'echo out; exit 3'
  expect_output "exec's output" out
  check "exec -d --pid-file" 0 exec -d --pid-file "$work/exec.pid" "$id" sleep 1001
  count=$((count + 1))
  if [ "$(readlink "/proc/$(cat "$work/exec.pid")/ns/pid")" = \
    "$(readlink "/proc/$("$FSRUN" --root "$root" state "$id" | jq -r .pid)/ns/pid")" ]; then
    echo "ok $count - exec -d's process is in the container's pid namespace"
  else
    failures=$((failures + 1))
    echo "not ok $count - exec -d's process is in the container's pid namespace"
  fi
  jq -n '{"args": ["sh", "-c", "echo $FOO $(id -u) $(pwd)"], "env": ["FOO=bar", "PATH=/bin"],
    "cwd": "/tmp", "user": {"uid": 65534, "gid": 65534}, "noNewPrivileges": true}' >"$work/process.json"
  check "exec --process" 0 exec --process "$work/process.json" "$id"
  expect_output "exec --process's environment, user and cwd" "bar 65534 /tmp"
  check "exec --tty" 4 exec -t "$id" sh -c '[ -t 0 ] && [ -t 1 ] && exit 4'
  check "exec of a command that is not there" 1 exec "$id" /nosuch
}

command -v valgrind >/dev/null || {
  echo "1..0 # SKIP valgrind is not installed (Debian package valgrind)"
  exit 0
}

mkdir -p "$work/bundle" "$root"
fsrun_make_busybox_rootfs "$work/bundle/rootfs" >/dev/null
cd "$work/bundle" || exit 1
"$FSRUN" spec
# no rlimits: memcheck refuses (EPERM) any RLIMIT_NOFILE whose hard limit is not its own (it keeps
# fds of its own above it), and exec's process would take the config's
jq '.process.terminal = false | .process.args = ["sleep", "1000"] | del(.process.rlimits)' \
  config.json >c.json && mv c.json config.json
# a bundle of the same rootfs whose process ends: `run` to its exit status
mkdir -p "$work/bundle7"
jq --arg r "$work/bundle/rootfs" '.root.path = $r | .process.args = ["sh", "-c", "exit 7"]' \
  config.json >"$work/bundle7/config.json"

check "--version" 0 --version
check "--help" 0 --help
mkdir -p "$work/spec1" "$work/spec2"
check "spec" 0 spec --bundle "$work/spec1"
check "spec --rootless" 0 spec --rootless --bundle "$work/spec2"
check "spec where a config.json exists" 1 spec --bundle "$work/spec1"
check "features" 0 features
check "validate of a good bundle" 0 validate
for bad in "$srcdir"/tests/data/bad-config/*.json; do
  [ -e "$bad" ] || continue
  mkdir -p "$work/bad"
  cp "$bad" "$work/bad/config.json"
  check "validate rejects $(basename "$bad")" 1 validate --bundle "$work/bad"
  # a few are enough to cover the error paths of the parser and of the checks
  [ "$count" -ge 12 ] && break
done
check "state of an unknown container" 1 state nosuch
check "delete --force of an unknown container" 0 delete --force nosuch
check "kill of an unknown container" 1 kill nosuch

# run and create through the clone(2) fallback, the openat2 walk (openat2-compat.c) and mount(2)
# where the new mount API answers ENOSYS (mount-fallback.c), to the end: the config, the state
# dir, the cgroups, the clone, the init's whole rootfs (binds, remounts, masks, pivot_root), the
# sync with the init and the undoing are under memcheck
check "run, through clone(2), the openat2 walk and mount(2), to the process's exit status" 7 \
  run --bundle "$work/bundle7" "$id-nr"
count=$((count + 1))
if [ ! -e "$root/$id-nr" ] && [ -z "$(find /sys/fs/cgroup -maxdepth 4 -name "$id-nr" 2>/dev/null)" ]; then
  echo "ok $count - the run left no state dir or cgroup"
else
  failures=$((failures + 1))
  echo "not ok $count - the run left no state dir or cgroup"
  { ls -lA "$root"; find /sys/fs/cgroup -maxdepth 4 -name "$id-nr"; } 2>&1 | sed 's/^/# /'
fi

# a container created under memcheck (started by the plain binary: start refuses without
# pidfd_open, checked below)
check "create, through clone(2), the openat2 walk and mount(2)" 0 create "$id"
if [ "$("$FSRUN" --root "$root" state "$id" 2>/dev/null | jq -r .status)" = created ]; then
  check "list" 0 list
  check "list --format json" 0 list --format json
  check "state (created)" 0 state "$id"
  check "start refuses without pidfd_open" 1 start "$id"
  expect_output "start names what it cannot do" "pidfd_open answers ENOSYS here"
  "$FSRUN" --root "$root" start "$id"
  check "state (running)" 0 state "$id"
  check "ps" 0 ps "$id"
  check "ps --format json" 0 ps --format json "$id"
  check "events --stats" 0 events --stats "$id"
  check "update --pids-limit" 0 update --pids-limit 77 "$id"
  check "update --memory" 0 update --memory 67108864 "$id"
  check "update -r with a bad file" 1 update -r "$work/nosuch.json" "$id"
  check_exec
  check "kill refuses without pidfd_open" 1 kill "$id" KILL
  expect_output "kill names what it cannot do" "pidfd_open answers ENOSYS here"
  check "delete --force of a running container (killed through its cgroup)" 0 delete --force "$id"
  count=$((count + 1))
  if [ ! -e "$root/$id" ] && [ -z "$(container_pids)" ]; then
    echo "ok $count - nothing of the container is left"
  else
    failures=$((failures + 1))
    echo "not ok $count - nothing of the container is left"
    { ls -lA "$root"; container_pids | xargs -r ps -o pid=,args= -p; } 2>&1 | sed 's/^/# /'
  fi
else
  count=$((count + 1))
  failures=$((failures + 1))
  echo "not ok $count - the container created under memcheck is there"
fi

# the sandbox: policy parsing, the bundle it makes, and its whole rootfs (mount(2) where the new
# mount API answers ENOSYS). Its init then stops at seccomp(2), which valgrind does not know
# either. That failure comes after start; the init reports it to the runtime before its marker
# that the command follows, so it is a set-up failure (125), never the command's exit status.
# Under fallback-native the host probe cannot run here: /proc/self/exe is valgrind's own tool, so
# the probe says nothing and the run is refused (125, "the host could not be probed"), never run
# natively: run_native is not reached under memcheck.
wt=$work/worktree
git init -q "$wt"
git -C "$wt" -c user.name=vg -c user.email=vg@example.invalid commit -q --allow-empty -m init
cat >"$work/policy.json" <<'POLICY'
{"allowNetwork": false, "allowedPaths": ["/usr/share"], "writablePaths": ["/var/tmp"],
 "envAllowlist": ["PATH", "CI"], "cpuLimit": {"maxCores": 1, "maxMs": 60000},
 "memoryLimitMb": 256, "pidsLimit": 64}
POLICY
echo '{"allowNetwork": false, "memoryLimitMB": 256}' >"$work/misspelt.json"
check "bundle" 0 bundle --policy "$work/policy.json" --worktree "$wt" --out "$work/sbx-bundle" -- /bin/true
check "sandbox with a misspelt policy key" 125 sandbox --policy "$work/misspelt.json" --worktree "$wt" -- /bin/true
check "sandbox on a missing worktree" 125 sandbox --policy "$work/policy.json" --worktree "$work/nosuch" -- /bin/true
check "sandbox where seccomp(2) answers ENOSYS (fail-hard)" 125 sandbox --policy "$work/policy.json" --worktree "$wt" -- /bin/true
expect_output "the sandbox's init made its rootfs and stopped at the seccomp filter" \
  "load the seccomp filter: Function not implemented"
check "sandbox --json where seccomp(2) answers ENOSYS (fallback-native, the probe cannot run)" 125 \
  sandbox --json --failure-mode fallback-native --audit-log "$work/audit.log" \
  --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c 'echo out; echo err >&2'
count=$((count + 1))
if grep -qF '"backend":"fsrun"' "$work/out.$((count - 1))" &&
  grep -qF '"stdout":""' "$work/out.$((count - 1))" &&
  grep '"event":"sandbox:failure"' "$work/audit.log" | grep -qF 'load the seccomp filter: Function not implemented' &&
  grep '"event":"sandbox:failure"' "$work/audit.log" | grep -qF 'the host could not be probed' &&
  ! grep -qE '"event":"sandbox:(run|fallback)"' "$work/audit.log"; then
  echo "ok $count - the init's seccomp failure, with a probe that cannot run, is refused, never run natively"
else
  failures=$((failures + 1))
  echo "not ok $count - the init's seccomp failure, with a probe that cannot run, is refused, never run natively"
  sed 's/^/# /' "$work/out.$((count - 1))" "$work/audit.log"
fi
# the sandboxes left no state (the shared bundle stays, by design, and so does the CRIU
# check's cache that `features` writes, and `fsrun bundle`'s marks, 1902824)
count=$((count + 1))
if [ -z "$(ls -A "$root" | grep -vx -e .sandbox-bundle -e .criu-check -e .bundle-marks)" ]; then
  echo "ok $count - nothing of the sandboxes is left in the state root"
else
  failures=$((failures + 1))
  echo "not ok $count - nothing of the sandboxes is left in the state root"
  ls -lA "$root" | sed 's/^/# /'
fi

echo "1..$count"
[ "$failures" = 0 ]
