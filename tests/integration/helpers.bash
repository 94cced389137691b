# Helpers for fsrun's bats tests. In a test file: `load helpers` (from tests/integration) or
# `load ../integration/helpers` (from another tests/ folder).
#
#   $FSRUN          the binary under test (contrib/run-tests.sh sets it; default $BUILD/fsrun,
#                   then build/plain/fsrun or ./fsrun in the source tree)
#   $FSRUN_ROOT     the state root of this test file (fresh per file, on tmpfs inside the VM)
#   fsrun ARGS...   runs "$FSRUN" --root "$FSRUN_ROOT" ARGS...
#   setup_bundle [DIR]      makes $BUNDLE (default: in the test's tmp dir) with $ROOTFS, a busybox
#                           rootfs, and config.json from `fsrun spec` (terminal false, args
#                           /bin/sh -c true)
#   update_config FILTER [JQ_OPTION...]   jq FILTER on $BUNDLE/config.json, in place
#   set_process_args ARG...               process.args = [ARG...]
#   run_in_container CMD...  process.args = CMD, then `run fsrun run --bundle $BUNDLE $CONTAINER_ID`
#   teardown_bundle          delete --force every container of this file's state root, kill what
#                            is left in the bundle, remove it; fails on sanitizer reports
#   assert_no_leftovers ID [BUNDLE]   no state dir, mount, cgroup or process left for ID
#   wait_for_status ID STATUS [SECONDS]
#   $UNIQ                    a suffix that makes a container id unique on the host: "NAME-$UNIQ"
#   make_traversable DIR     open DIR and its parents in bats' tmp dirs to other users
#   _fsrun_pid_alive PID     the process exists and is not a zombie
#   _fsrun_pids_in_dir DIR   pids of processes whose root or cwd is the bundle DIR or its rootfs
#   requires_root, requires_cgroup_v2, requires_cgroup_v1, requires_fsrun_command NAME,
#   requires_host_command NAME   (skip with a reason otherwise)
#   hold_passwd_lock         hold the suites' lock on the host's user database for the test
#   start_recvtty [ARGS...], recvtty_output   a console-socket receiver on $SOCK, what it got
#   expect_run_refused SUBSTRING   `fsrun run` refuses $BUNDLE with one line naming SUBSTRING
#   file_test_user_add PREFIX, file_test_user_remove   a bats file's own ordinary TEST_USER
#   start_swapper DIR, stop_swapper DIR   uid 4343 swaps DIR/cache and DIR/x in a loop; stopped
#
# Rootfs regular files are private copies per bundle, except /bin/busybox, which is a hardlink to
# one shared copy: replace it (rm, then write) rather than writing into it.

# Every helper runs under bats' per-command trap and a fork costs milliseconds: parameter
# expansions and builtins here, as few external commands as possible.
# (contrib/run-tests.sh exports FSRUN_SRCDIR, which saves a subshell per test.)
FSRUN_TESTS_DIR=${BASH_SOURCE[0]%/*}
[[ $FSRUN_TESTS_DIR == /* ]] || FSRUN_TESTS_DIR=$PWD/$FSRUN_TESTS_DIR
FSRUN_SRCDIR=${FSRUN_SRCDIR:-$(cd "$FSRUN_TESTS_DIR/../.." && pwd)}
# shellcheck source=../../contrib/lib.sh
source "$FSRUN_SRCDIR/contrib/lib.sh"

if [ -z "${FSRUN:-}" ]; then
  for _fsrun_candidate in "${BUILD:+$BUILD/fsrun}" "$FSRUN_SRCDIR/build/plain/fsrun" "$FSRUN_SRCDIR/fsrun"; do
    if [ -n "$_fsrun_candidate" ] && [ -x "$_fsrun_candidate" ]; then
      FSRUN=$_fsrun_candidate
      break
    fi
  done
  FSRUN=${FSRUN:-$(command -v fsrun || echo "$FSRUN_SRCDIR/build/plain/fsrun")}
  unset _fsrun_candidate
fi
export FSRUN

# One state root per test file. contrib/run-tests.sh points FSRUN_TEST_STATE_BASE at a directory it
# sweeps after each file (so leftovers are found even when a test forgot its teardown).
if [ -z "${FSRUN_ROOT:-}" ]; then
  if [ -n "${FSRUN_TEST_STATE_BASE:-}" ]; then
    _fsrun_file=${BATS_TEST_FILENAME##*/}
    FSRUN_ROOT="$FSRUN_TEST_STATE_BASE/${_fsrun_file%.bats}"
  else
    FSRUN_ROOT="$BATS_FILE_TMPDIR/state"
  fi
fi
export FSRUN_ROOT

TEST_CACHE=${TEST_CACHE:-$BATS_RUN_TMPDIR/fsrun-cache}
export TEST_CACHE

# $UNIQ: what makes a test's container ids unique on the host ("life1-$UNIQ"): the test's number
# and its bats process. The state root is per run, but the cgroup (/fsrun/ID) and
# assert_no_leftovers go by the id alone, so a fixed id was shared with a concurrent run (whose
# delete --force killed this one's container) or with what an aborted run left behind.
UNIQ=${BATS_TEST_NUMBER:-file}-$$
export UNIQ

# Sanitizer reports (ASan build): one log prefix per test, so a report names its test even when the
# test expected fsrun to fail. teardown_bundle fails the test when one was written; run-tests.sh
# also maps them to tests after the run.
if [ -n "${FSRUN_SANITIZER_LOG_DIR:-}" ]; then
  : "${FSRUN_ASAN_OPTIONS_BASE=${ASAN_OPTIONS:-}}" "${FSRUN_UBSAN_OPTIONS_BASE=${UBSAN_OPTIONS:-}}"
  export FSRUN_ASAN_OPTIONS_BASE FSRUN_UBSAN_OPTIONS_BASE
  FSRUN_SANITIZER_PREFIX="$FSRUN_SANITIZER_LOG_DIR/${BATS_TEST_FILENAME##*/}.${BATS_TEST_NUMBER:-file}"
  export ASAN_OPTIONS="${FSRUN_ASAN_OPTIONS_BASE:+$FSRUN_ASAN_OPTIONS_BASE:}log_path=$FSRUN_SANITIZER_PREFIX"
  export UBSAN_OPTIONS="${FSRUN_UBSAN_OPTIONS_BASE:+$FSRUN_UBSAN_OPTIONS_BASE:}log_path=$FSRUN_SANITIZER_PREFIX"
fi

# The suites run side by side (plain and ASan), and their files make users with useradd, which
# renames a new /etc/shadow over the old: the kernel detaches a mount on a dentry renamed over, so a
# cover bind-mounted on the host's shadow file inside a running sandbox goes with it (docs/sandbox.md,
# "What stays open"). Every change of the user database by a test takes this lock; a test that reads
# through the covers holds it for its whole run (hold_passwd_lock).
FSRUN_PASSWD_LOCK=/run/fsrun-tests-passwd.lock
useradd() { flock "$FSRUN_PASSWD_LOCK" useradd "$@"; }
userdel() { flock "$FSRUN_PASSWD_LOCK" userdel "$@"; }
usermod() { flock "$FSRUN_PASSWD_LOCK" usermod "$@"; }
groupadd() { flock "$FSRUN_PASSWD_LOCK" groupadd "$@"; }
groupdel() { flock "$FSRUN_PASSWD_LOCK" groupdel "$@"; }

hold_passwd_lock() {
  exec {_fsrun_passwd_fd}>>"$FSRUN_PASSWD_LOCK"
  flock "$_fsrun_passwd_fd"
}

# file_test_user_add PREFIX (a file's setup_file): as root, where useradd and setpriv exist, makes
# the ordinary user PREFIX<pid> for the file's tests and exports TEST_USER; otherwise TEST_USER
# stays unset (the tests skip). file_test_user_remove (its teardown_file) removes the user and its
# subordinate id ranges.
file_test_user_add() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=$1$$
  useradd -m "$TEST_USER"
}

file_test_user_remove() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel -r "$TEST_USER" >/dev/null 2>&1 || true
    sed -i "/^$TEST_USER:/d" /etc/subuid /etc/subgid 2>/dev/null || true
  fi
}

fsrun() {
  "$FSRUN" --root "$FSRUN_ROOT" "$@"
}

# ---- skips --------------------------------------------------------------------------------------

requires_root() {
  [ "$EUID" = 0 ] || skip "needs root"
}

# unified | hybrid | legacy
cgroup_mode() {
  if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
    echo unified
  elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
    echo hybrid
  else
    echo legacy
  fi
}

requires_cgroup_v2() {
  local mode
  mode=$(cgroup_mode)
  [ "$mode" = unified ] || skip "needs cgroup v2 at /sys/fs/cgroup (this host is $mode; run it in the VM: tests/vm/run.sh)"
}

requires_cgroup_v1() {
  [ "$(stat -fc %T /sys/fs/cgroup/memory 2>/dev/null)" = cgroupfs ] || skip "needs cgroup v1 controllers (this host is $(cgroup_mode))"
}

requires_fsrun_command() {
  fsrun_has_command "$FSRUN" "$1" || skip "fsrun has no '$1' command yet"
}

requires_host_command() {
  command -v "$1" >/dev/null || skip "needs $1 on the host"
}

# requires_wchan: skips where /proc/PID/wchan does not name the kernel function a sleeping process
# waits in (it reads 0 where the kernel hides it: no CONFIG_KALLSYMS, or x86 kernels from 5.16 until
# get_wchan was mended), which a test that waits for a process to block in one relies on. Probed on
# a `sleep` known to be asleep (state S), so that a running process's 0 is never taken for it.
requires_wchan() {
  local pid state= wchan= tries=$((WAIT_MAX_S * 20))
  sleep 1000 3>&- &
  pid=$!
  while [ "$state" != S ] && [ "$tries" -gt 0 ]; do
    state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)
    [ "$state" = S ] || sleep 0.05
    tries=$((tries - 1))
  done
  [ "$state" != S ] || wchan=$(cat "/proc/$pid/wchan" 2>/dev/null)
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  [ -n "$wchan" ] && [ "$wchan" != 0 ] ||
    skip "/proc/PID/wchan reads '${wchan:-nothing}' for a sleeping process on this kernel: where a process blocks cannot be seen"
}

# hold_pid_file PIDFILE DIR CMD...: CMD (a command line that ends in fsrun writing PIDFILE, such as
# `fsrun exec --pid-file PIDFILE ...`, possibly behind setpriv) in the background, held by strace at
# its rename of the written temporary file (PIDFILE.tmp.PID) onto PIDFILE: the moment before the
# pid file exists. DIR: a directory CMD's user can read (for the fifo that starts it once strace has
# attached). Sets HOLD_PID (CMD's pid, fsrun's once it runs) and HOLD_STRACE (kill it to let fsrun
# go on: strace detaches; after a kill -9 of fsrun too, or the wait for fsrun waits out the delay).
# strace follows no child: others may trace fsrun's children.
hold_pid_file() {
  local pid_file=$1 go=$2/hold.go tries=600 nr state
  shift 2
  requires_host_command strace
  case $(uname -m) in
  x86_64) nr=' 82 264 316 ' ;;
  aarch64) nr=' 38 276 ' ;;
  *) skip "rename's system call numbers unknown on $(uname -m)" ;;
  esac
  mkfifo "$go"
  chmod 0666 "$go"
  sh -c 'read -r x <"$0" && exec "$@"' "$go" "$@" </dev/null 3>&- &
  HOLD_PID=$!
  strace -qq -o /dev/null -p "$HOLD_PID" -P "$pid_file.tmp.$HOLD_PID" \
    -e trace=rename,renameat,renameat2 -e inject=rename,renameat,renameat2:delay_enter=600000000 3>&- &
  HOLD_STRACE=$!
  while ! grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$HOLD_PID/status" && [ "$tries" -gt 0 ]; do
    sleep 0.05
    tries=$((tries - 1))
  done
  echo go >"$go"
  # a state, not a time: stopped by the tracer in a rename, the temporary file written
  while [ "$tries" -gt 0 ]; do
    state=$(cut -d' ' -f3 "/proc/$HOLD_PID/stat" 2>/dev/null)
    [ "$state" = t ] && [ -s "$pid_file.tmp.$HOLD_PID" ] &&
      [[ $nr == *" $(cut -d' ' -f1 "/proc/$HOLD_PID/syscall" 2>/dev/null) "* ]] && return 0
    sleep 0.05
    tries=$((tries - 1))
  done
  echo "fsrun ($HOLD_PID) was not held at its pid file's rename: state ${state:-gone}" >&2
  return 1
}

# start_waits_for_the_process ID FSRUN...: ID is a created container of fsrun's init
# (run.fsrun.init) whose process is `sleep`; FSRUN... runs fsrun (its state root, its user). The
# init's fork of the process is held (strace injects a delay at any fork of pid 1, kept until
# strace is killed), and `start` must wait meanwhile, asleep reading the exec fifo; without that
# wait it read EOF before the fork came (the fifo closed with the tiny init's exec) and is never
# seen reading again. $START_WHILE_HELD, when set, is run then. Let go, start returns with the
# process forked: the init has its child, and a first `exec` never takes pid 2. Sets HOLD_STRACE and
# START_PID (the teardown kills strace: start then ends).
start_waits_for_the_process() {
  local id=$1 init nr read_nr children
  shift
  requires_host_command strace
  case $(uname -m) in
  x86_64) nr=' 56 57 58 435 ' read_nr=0 ;;
  aarch64) nr=' 220 435 ' read_nr=63 ;;
  *) skip "fork's and read's system call numbers unknown on $(uname -m)" ;;
  esac
  init=$("$@" state "$id" | jq -r .pid)
  strace -qq -o /dev/null -p "$init" -e trace=fork,vfork,clone,clone3 \
    -e inject=fork,vfork,clone,clone3:delay_enter=600000000 3>&- &
  HOLD_STRACE=$!
  wait_until _fsrun_traced "$init"
  "$@" start "$id" 3>&- &
  START_PID=$!
  wait_until _fsrun_held_in "$init" "$nr"
  wait_until _fsrun_reading_fifo "$START_PID" "$read_nr"
  [ -z "${START_WHILE_HELD:-}" ] || "$START_WHILE_HELD"
  kill "$HOLD_STRACE"
  wait "$HOLD_STRACE" || true
  HOLD_STRACE=
  # bounded: a start that never returns fails here, not at the file's limit
  wait_until pid_gone "$START_PID"
  wait "$START_PID"
  START_PID=
  children=$(pgrep -P "$init")
  echo "the init's children once start returned: ${children:-none}"
  [ -n "$children" ]
  run "$@" exec "$id" sh -c 'echo $$'
  echo "exec: $output"
  [ "$status" -eq 0 ]
  [[ $output =~ ^[0-9]+$ ]]
  [ "$output" != 2 ]
}

# _fsrun_traced PID: PID has a tracer
_fsrun_traced() {
  grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$1/status"
}

# _fsrun_held_in PID " NR... ": PID is stopped by its tracer in one of the system calls NR
_fsrun_held_in() {
  local state sc
  state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)
  [ "$state" = t ] || return 1
  read -r sc _ <"/proc/$1/syscall" || return 1
  [[ $2 == *" $sc "* ]]
}

# _fsrun_reading_fifo PID READ_NR: PID, or a process below it (FSRUN... may be a shell function
# or setpriv), is blocked in read(2) (READ_NR) of a fifo
_fsrun_reading_fifo() {
  local pids=("$1") pid sc fd
  while [ ${#pids[@]} -gt 0 ]; do
    pid=${pids[0]}
    pids=("${pids[@]:1}")
    if read -r sc fd _ 2>/dev/null <"/proc/$pid/syscall" && [ "$sc" = "$2" ] &&
      [ -p "/proc/$pid/fd/$((fd))" ]; then
      return 0
    fi
    # shellcheck disable=SC2207 # pids, one a line
    pids+=($(pgrep -P "$pid"))
  done
  return 1
}

# WITH_BINDS SRC DEST [SRC DEST]... -- CMD...: CMD in a private mount namespace where each SRC is
# bound over DEST (the host's own are left as they are). An array, so that timeout(1) or setpriv
# can run it.
WITH_BINDS=(unshare -m sh -c 'mount --make-rprivate / || exit 1
  while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done
  shift && exec "$@"' sh)

# make_tun_node DIR: DIR/tun, a 0666 /dev/net/tun node as udev makes it, to bind over the host's
# (WITH_BINDS) where that is 0600, which an ordinary user's slirp4netns cannot open
make_tun_node() {
  [ -e "$1/tun" ] || mknod -m 666 "$1/tun" c 10 200
}

# Whether $FSRUN makes its protected image before the C library starts (fsrun_entry: the static
# x86-64 build; the ASan and valgrind builds are dynamic and make it in main).
fsrun_seals_early() {
  [ "$(uname -m)" = x86_64 ] || return 1
  if readelf -l "$FSRUN" 2>/dev/null | grep -q 'program interpreter'; then
    return 1
  fi
}

# ---- bundles ------------------------------------------------------------------------------------

# The bundle template, built once per bats run (flock: files may run in parallel):
#   $TEST_CACHE/bundle/rootfs   directories, applet symlinks and /bin/busybox, hardlinked into bundles
#   $TEST_CACHE/private/...     the rootfs's other regular files (/etc/passwd, ...), written into each
#                               bundle as new files, so that editing them in place stays private
#   $TEST_CACHE/config*.json    config.json as `fsrun spec` writes it, made non-terminal, per binary
_fsrun_rootfs_cache() {
  [ -f "$TEST_CACHE/.complete" ] && return 0
  mkdir -p "$TEST_CACHE"
  (
    flock 9
    [ -f "$TEST_CACHE/.complete" ] && exit 0
    rm -rf "$TEST_CACHE/bundle" "$TEST_CACHE/private"
    mkdir -p "$TEST_CACHE/bundle" || exit 1
    fsrun_make_busybox_rootfs "$TEST_CACHE/bundle/rootfs" || exit 1
    cd "$TEST_CACHE/bundle/rootfs" || exit 1
    find . -type f ! -path ./bin/busybox -printf '%P\n' >"$TEST_CACHE/private-files" || exit 1
    mkdir -p "$TEST_CACHE/private" &&
      xargs -r -d '\n' cp -a --parents -t "$TEST_CACHE/private" <"$TEST_CACHE/private-files" &&
      xargs -r -d '\n' rm -f <"$TEST_CACHE/private-files" || exit 1
    touch "$TEST_CACHE/.complete"
  ) 9>"$TEST_CACHE/.lock"
}

# The config every bundle starts from, made once per binary: from `fsrun spec` when it works.
_fsrun_config_cache() {
  _fsrun_config_file=$TEST_CACHE/config${FSRUN//\//_}.json
  [ -f "$_fsrun_config_file" ] && return 0
  (
    flock 9
    [ -f "$_fsrun_config_file" ] && exit 0
    local dir source=spec
    local filter='.process.terminal = false | .process.args = ["/bin/sh", "-c", "true"]'
    dir=$(mktemp -d "$TEST_CACHE/spec.XXXXXX") || exit 1
    if ! (cd "$dir" && "$FSRUN" spec) >/dev/null 2>&1 ||
      ! jq "$filter" "$dir/config.json" >"$dir/final.json" 2>/dev/null; then
      # Until `fsrun spec` works: the same shape, written here.
      source=builtin
      _fsrun_builtin_config >"$dir/final.json"
    fi
    echo "$source" >"$_fsrun_config_file.source"
    mv "$dir/final.json" "$_fsrun_config_file"
    rm -rf "$dir"
  ) 9>"$TEST_CACHE/.config.lock"
}

# make_traversable DIR: chmod a+x DIR and its parents inside bats' tmp dirs, so that a container
# user (a mapped uid, an unprivileged caller) can reach DIR.
make_traversable() {
  local dir=$1 dirs=()
  while [[ $dir == "$BATS_RUN_TMPDIR"/* ]]; do
    dirs+=("$dir")
    dir=${dir%/*}
  done
  [ ${#dirs[@]} -eq 0 ] || chmod a+x "$BATS_RUN_TMPDIR" "${dirs[@]}"
}
_fsrun_make_traversable() { make_traversable "$@"; }

# _fsrun_write_copy SRC DEST: a new file DEST with SRC's text, with shell builtins only.
_fsrun_write_copy() {
  local text=""
  IFS= read -r -d '' text <"$1" || true
  printf '%s' "$text" >"$2"
}

_fsrun_builtin_config() {
  cat <<'EOF'
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": ["/bin/sh", "-c", "true"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{ "type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024 }],
    "noNewPrivileges": true
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "fsrun",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
      "options": ["nosuid", "strictatime", "mode=755", "size=65536k"] },
    { "destination": "/dev/pts", "type": "devpts", "source": "devpts",
      "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"] },
    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
      "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"] },
    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
      "options": ["nosuid", "noexec", "nodev"] },
    { "destination": "/sys", "type": "sysfs", "source": "sysfs",
      "options": ["nosuid", "noexec", "nodev", "ro"] },
    { "destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
      "options": ["nosuid", "noexec", "nodev", "relatime", "ro"] }
  ],
  "linux": {
    "resources": { "devices": [{ "allow": false, "access": "rwm" }] },
    "namespaces": [
      { "type": "pid" }, { "type": "network" }, { "type": "ipc" }, { "type": "uts" },
      { "type": "mount" }, { "type": "cgroup" }
    ],
    "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
      "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
      "/sys/firmware", "/proc/scsi"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
}
EOF
}

# setup_bundle [DIR]: sets BUNDLE, ROOTFS and FSRUN_CONFIG_SOURCE (spec | builtin). Cheap: one cp
# (hardlinks) plus shell builtins, because every fork counts inside the VM.
setup_bundle() {
  BUNDLE=${1:-$BATS_TEST_TMPDIR/bundle}
  ROOTFS=$BUNDLE/rootfs
  export BUNDLE ROOTFS
  _fsrun_rootfs_cache || return 1
  _fsrun_config_cache || return 1
  # Container processes may run as a mapped uid that must still reach the rootfs: bats' run
  # directory is the only 0700 one on the way.
  if [[ $BUNDLE == "$BATS_RUN_TMPDIR"/* && ! -e $BATS_RUN_TMPDIR/.fsrun-traversable ]]; then
    chmod a+x "$BATS_RUN_TMPDIR" && : >"$BATS_RUN_TMPDIR/.fsrun-traversable"
  fi
  if [ -e "$BUNDLE" ]; then
    rm -rf --one-file-system "$ROOTFS" "$BUNDLE/config.json"
    cp -al "$TEST_CACHE/bundle/rootfs" "$ROOTFS" 2>/dev/null || cp -a "$TEST_CACHE/bundle/rootfs" "$ROOTFS" || return 1
  else
    cp -al "$TEST_CACHE/bundle" "$BUNDLE" 2>/dev/null || cp -a "$TEST_CACHE/bundle" "$BUNDLE" || return 1
  fi
  local file
  while IFS= read -r file; do
    _fsrun_write_copy "$TEST_CACHE/private/$file" "$ROOTFS/$file"
  done <"$TEST_CACHE/private-files"
  _fsrun_write_copy "$_fsrun_config_file" "$BUNDLE/config.json"
  IFS= read -r FSRUN_CONFIG_SOURCE <"$_fsrun_config_file.source"
  export FSRUN_CONFIG_SOURCE
}

# update_config FILTER [JQ_OPTION...], e.g. update_config '.hostname = $h' --arg h box
update_config() {
  local filter=$1 json
  shift
  # Written only when jq succeeds; one fork (jq) in all.
  if json=$(jq "$@" "$filter" "$BUNDLE/config.json"); then
    printf '%s\n' "$json" >"$BUNDLE/config.json"
  else
    echo "update_config: jq failed on: $filter" >&2
    return 1
  fi
}

# set_process_args ARG...: exact, whatever the arguments contain (one jq call).
set_process_args() {
  fsrun_config_set_args "$BUNDLE/config.json" "$@"
}

# run_in_container CMD...: sets $CONTAINER_ID, $status, $output, $lines (bats `run`).
run_in_container() {
  set_process_args "$@" || return 1
  CONTAINER_ID=id-$$-$RANDOM$RANDOM
  run fsrun run --bundle "$BUNDLE" "$CONTAINER_ID"
}

# expect_run_refused SUBSTRING: `fsrun run` of $BUNDLE (its process `sh -c 'echo RAN'`, as
# $CONTAINER_ID, a fresh id) exits 1 with one stderr line "fsrun: ...SUBSTRING..."; the process never
# ran and nothing is left.
expect_run_refused() {
  CONTAINER_ID=refused-$$-$RANDOM$RANDOM
  set_process_args sh -c 'echo RAN'
  run --separate-stderr fsrun run --bundle "$BUNDLE" "$CONTAINER_ID"
  echo "exit $status, stdout '$output', stderr: $stderr" >&2
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "${stderr_lines[0]}" == "fsrun: "*"$1"* ]]
  [[ "$output" != *RAN* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

# start_sleeper: `run -d` of `sleep 1000` as $CONTAINER_ID, waited for until it runs.
start_sleeper() {
  set_process_args /bin/sleep 1000
  fsrun run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  wait_for_status "$CONTAINER_ID" running
}

# start_recvtty [ARGS...]: tests/recvtty (skip without it) receiving a pty master on $SOCK (the
# test's console.sock) with ARGS, its output in $BATS_TEST_TMPDIR/tty.out; RECV_PID is its pid
# (the test's teardown kills it, when set). recvtty_output: waits for it to end (its status is the
# test's), then output= what the container wrote to the pty, without the pty's \r.
start_recvtty() {
  RECVTTY=${FSRUN%/*}/tests/recvtty
  [ -x "$RECVTTY" ] || skip "tests/recvtty is not built next to $FSRUN"
  SOCK=$BATS_TEST_TMPDIR/console.sock
  "$RECVTTY" "$SOCK" "$@" >"$BATS_TEST_TMPDIR/tty.out" 2>"$BATS_TEST_TMPDIR/tty.err" &
  RECV_PID=$!
  wait_until test -S "$SOCK"
}

recvtty_output() {
  wait "$RECV_PID"
  RECV_PID=
  output=$(cat "$BATS_TEST_TMPDIR/tty.out")
  output=${output//$'\r'/}
}

# container_cgroup_file CONTROLLER FILE: the path of FILE in $CONTAINER_ID's cgroup at fsrun's default
# place (/fsrun/ID): in CONTROLLER's v1 hierarchy, or in the v2 tree.
container_cgroup_file() {
  if [ "$(cgroup_mode)" = unified ]; then
    echo "/sys/fs/cgroup/fsrun/$CONTAINER_ID/$2"
  else
    echo "/sys/fs/cgroup/$1/fsrun/$CONTAINER_ID/$2"
  fi
}

# wait_for_status ID STATUS [SECONDS]: poll `fsrun state` until .status is STATUS.
# The bound of the waits for an event below (seconds): it only ends a failure, so it is far from
# what a loaded 2-core machine or the slow VM takes (a 5 s bound was reached at load 15-27)
WAIT_MAX_S=${WAIT_MAX_S:-60}

# wait_until CMD [ARG...]: until CMD succeeds, polled every 0.1 s; fails past WAIT_MAX_S
wait_until() {
  local tries=$((WAIT_MAX_S * 10))
  until "$@"; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || return 1
    sleep 0.1
  done
}

# pid_gone PID: PID has exited (or is a zombie), for wait_until
pid_gone() {
  if _fsrun_pid_alive "$1"; then return 1; fi
}

# comm_is PID NAME: PID's command name is NAME (it has exec'd NAME), for wait_until
comm_is() {
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

# has_line FILE REGEX: FILE (which may not exist yet) has a line matching REGEX, for wait_until
has_line() {
  grep -q -- "$2" "$1" 2>/dev/null
}

wait_for_status() {
  local id=$1 want=$2 tries=$((${3:-$WAIT_MAX_S} * 10)) got=""
  while [ "$tries" -gt 0 ]; do
    got=$(fsrun state "$id" 2>/dev/null | jq -r .status 2>/dev/null)
    [ "$got" = "$want" ] && return 0
    sleep 0.1
    tries=$((tries - 1))
  done
  echo "container $id: status '${got}', expected '$want'" >&2
  return 1
}

# wait_for_file PATH [SECONDS]: until PATH exists (an event, not a timing: the bound, default
# WAIT_MAX_S, only ends a failure)
wait_for_file() {
  local tries=$((${2:-$WAIT_MAX_S} * 10))
  while [ ! -e "$1" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -e "$1" ]
}

# procfs_dirs_of PID: the fds of PID that are procfs directories, " /proc/PID/fd/N" each, on one line
procfs_dirs_of() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    if [ -d "$fd/" ] && [ "$(stat -f -c %T "$fd/")" = proc ]; then printf ' %s' "$fd"; fi
  done
  echo
}

# git_run_dirs STATE_ROOT [UID]: the per-run git dirs of the sandbox runs and execs of that state
# root, one path a line: `STATE_ROOT/.sandbox-git.*`, and for an ordinary user (UID, not 0) on a
# state root that is not a tmpfs the ones in /dev/shm (src/libfsrun/sandbox-git-shm.c).
git_run_dirs() {
  local key
  find "$1" -mindepth 1 -maxdepth 1 -name '.sandbox-git.*' 2>/dev/null
  [ "${2:-0}" != 0 ] && [ -d "$1" ] || return 0
  key=$(stat -c '%d.%i' "$1")
  find /dev/shm -mindepth 1 -maxdepth 1 -name "fsrun-git.$2.$key.*" 2>/dev/null
}

# no_process_left PGREP_ARGS...: nothing matches `pgrep PGREP_ARGS`. Waits up to 10 s for
# processes already killed to finish exiting; one never killed stays, and fails, listed.
no_process_left() {
  local tries=$((WAIT_MAX_S * 10))
  while pgrep "$@" >/dev/null && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  ! pgrep -a "$@" || false
}

# cmdline_of PID: the process's arguments joined by spaces (each followed by one). A runtime
# that returns once its CLOEXEC sync fd closes returns inside the process's execve, before the
# kernel has set the new arguments (cmdline reads empty then): wait for them, bounded.
cmdline_of() {
  local tries=$((WAIT_MAX_S * 10)) args=""
  while [ "$tries" -gt 0 ]; do
    args=$(tr '\0' ' ' <"/proc/$1/cmdline") || return 1
    [ -n "$args" ] && break
    sleep 0.1
    tries=$((tries - 1))
  done
  printf '%s' "$args"
}

# Processes of the bundle DIR (never this shell): those whose root or cwd is DIR or DIR/rootfs,
# compared by device and inode, since after pivot_root the link text reads "/". One find (the
# bundle's own directories first, then every process's root and cwd, followed) and one awk, both
# run from / so that neither is such a process itself. Not a bash loop over the lines: bats runs
# its DEBUG trap for every command of a helper, which made this seconds per call on a host with a
# few hundred processes (and far more inside the emulated VM).
_fsrun_pids_in_dir() {
  local dir=$1 self=$$ shell=$BASHPID
  [[ $dir == /* ]] || dir=$PWD/$dir
  (
    cd / || exit 1
    find -L "$dir" /proc -maxdepth 2 \( -path "$dir" -o -path "$dir/rootfs" \) -printf 'B %D:%i\n' -o \
      -path "$dir/*" -prune -o \( -path '/proc/[0-9]*/root' -o -path '/proc/[0-9]*/cwd' \) -printf '%h %D:%i\n' 2>/dev/null |
      awk -v self="$self" -v shell="$shell" '
        $1 == "B" { bundle[$2] = 1; next }
        { pid = substr($1, 7) }
        pid ~ /^[0-9]+$/ && ($2 in bundle) && pid != self && pid != shell && !(pid in seen) { seen[pid] = 1; print pid }'
  )
}

# Mount points at or under DIR, deepest first (one awk: see _fsrun_pids_in_dir for why not a loop).
_fsrun_mounts_under() {
  awk -v dir="$1" '$5 == dir || index($5, dir "/") == 1 { found[n++] = $5 } END { while (n > 0) print found[--n] }' /proc/self/mountinfo
}

# Fails (and prints them) when sanitizer reports were written for this test.
check_sanitizer_reports() {
  [ -n "${FSRUN_SANITIZER_PREFIX:-}" ] || return 0
  local report found=0
  for report in "$FSRUN_SANITIZER_PREFIX".*; do
    [ -e "$report" ] || continue
    found=1
    echo "# sanitizer report $report:"
    head -n 80 "$report"
  done
  [ "$found" = 0 ]
}

teardown_bundle() {
  local dir pid mnt
  stop_witness
  for dir in "$FSRUN_ROOT"/*/; do
    [ -d "$dir" ] || continue
    dir=${dir%/}
    fsrun delete --force "${dir##*/}" >/dev/null 2>&1 || echo "teardown: fsrun delete --force ${dir##*/} failed" >&2
  done
  if [ -n "${BUNDLE:-}" ] && [ -d "$BUNDLE" ]; then
    [[ $PWD != "$BUNDLE" && $PWD != "$BUNDLE"/* ]] || cd /
    while read -r pid; do
      echo "teardown: killing leftover process $pid" >&2
      kill -9 "$pid" 2>/dev/null
    done < <(_fsrun_pids_in_dir "$BUNDLE")
    while read -r mnt; do
      echo "teardown: unmounting leftover mount $mnt" >&2
      umount -l "$mnt" 2>/dev/null
    done < <(_fsrun_mounts_under "$BUNDLE")
    # --one-file-system: never follow a leaked bind mount out of the bundle.
    rm -rf --one-file-system "$BUNDLE"
  fi
  check_sanitizer_reports
}

# caps_from_hex HEX: the capability names of a /proc/self/status mask, upper case, sorted,
# comma-separated ("" for none). capsh decodes with the host's libcap.
caps_from_hex() {
  local decoded
  decoded=$(capsh --decode="0x$1")
  decoded=${decoded#*=}
  tr '[:lower:]' '[:upper:]' <<<"$decoded" | tr ',' '\n' | grep -v '^$' | sort | paste -sd, -
}

# fake_procfs_files ROOTFS: with no procfs mounted, the image's own files where the runtime once read
# how many capabilities to drop (one: only CAP_CHOWN and CAP_DAC_OVERRIDE went) and whether
# setgroups is denied (then the runtime's own groups stayed)
fake_procfs_files() {
  mkdir -p "$1/proc/sys/kernel" "$1/proc/self"
  echo 1 >"$1/proc/sys/kernel/cap_last_cap"
  echo deny >"$1/proc/self/setgroups"
}

# Is PID alive (not gone, not a zombie waiting for its parent)?
# is_protected_exe PID: PID runs fsrun from its protected image (docs/process-model.md), never
# from the file on disk: the sealed memfd copy, or (root) the binary through a read-only overlay
# mounted nowhere, whose /proc/PID/exe is /NAME on an overlayfs. Either way no write reaches it.
is_protected_exe() {
  local exe
  exe=$(readlink "/proc/$1/exe") || return 1
  [ "$exe" = "/memfd:fsrun (deleted)" ] && return 0
  [ "$exe" = "/$(basename "$FSRUN")" ] && [ ! -e "$exe" ] &&
    [ "$(stat -L -f -c %T "/proc/$1/exe")" = overlayfs ] || return 1
  ! (: >>"/proc/$1/exe") 2>/dev/null || return 1
}

_fsrun_pid_alive() {
  local stat
  read -r stat <"/proc/$1/stat" 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat:0:1}" != Z ] && [ "${stat:0:1}" != X ]
}

# start_witness DIR [RUNNER...]: a process of the test's (started through RUNNER, e.g. as_user)
# that nothing under test may signal; WITNESS is its pid. It is ready (its SIGTERM trap set) when
# this returns: its fifo in DIR said so. witness_unsignalled tells whether it was left alone.
start_witness() {
  local ready=$1/witness.ready
  WITNESS_MARK=$1/witness.term
  shift
  mkfifo -m 0666 "$ready"
  install -m 0666 /dev/null "$WITNESS_MARK"
  # its output away from bats' pipes (fd 3 too): bats waits for whoever holds them. $! may be a
  # subshell running RUNNER: the witness names itself.
  "$@" sh -c 'sleep 1000 & s=$!; trap "kill \$s; echo term >\"\$2\"; exit 7" TERM; echo "$$ $s" >"$1"
    wait' sh "$ready" "$WITNESS_MARK" </dev/null >/dev/null 2>&1 3>&- &
  WITNESS_JOB=$!
  read -r WITNESS WITNESS_SLEEP <"$ready"
}

# witness_unsignalled: the witness is stopped by a SIGTERM of the test's, which its trap marks:
# without the mark, a signal it had been sent before ended it (a SIGKILL, or a SIGTERM untrapped)
witness_unsignalled() {
  kill -TERM "$WITNESS"
  wait "$WITNESS_JOB" || true
  kill "$WITNESS_SLEEP" 2>/dev/null || true
  WITNESS='' WITNESS_SLEEP='' WITNESS_JOB=''
  [ "$(cat "$WITNESS_MARK")" = term ] || { echo "the witness was signalled before the test's SIGTERM" >&2; false; }
}

# stop_witness: the witness of a test that failed before witness_unsignalled, and its sleep
stop_witness() {
  [ -n "${WITNESS_JOB:-}" ] || return 0
  kill -9 ${WITNESS:-} ${WITNESS_SLEEP:-} 2>/dev/null || true
  wait "$WITNESS_JOB" 2>/dev/null || true
  WITNESS='' WITNESS_SLEEP='' WITNESS_JOB=''
}

# assert_init_record DIR PID: the init's record in the state directory DIR names PID (its start
# tick, pid namespace and this boot) in the compact form, at most 59 bytes, and where DIR is on
# ext4 the symlink takes no block (one the delete would free, with a synchronous discard on a
# `discard` mount)
assert_init_record() {
  local dir=$1 pid=$2 rec start ns boot
  rec=$(readlink "$dir/init")
  echo "record: $rec (${#rec} bytes)" >&2
  [ "${#rec}" -le 59 ]
  [[ $rec =~ ^x([0-9a-f]+)\ ([0-9a-f]+)\ ([0-9a-f]+)\ ([0-9a-f]{32})$ ]]
  start=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f20)
  ns=$(stat -L -c %i "/proc/$pid/ns/pid")
  boot=$(tr -d '\n-' </proc/sys/kernel/random/boot_id)
  [ "$((16#${BASH_REMATCH[1]})) $((16#${BASH_REMATCH[2]})) $((16#${BASH_REMATCH[3]}))" = "$pid $start $ns" ]
  [ "${BASH_REMATCH[4]}" = "$boot" ]
  if [ "$(stat -f -c %T "$dir")" = ext2/ext3 ]; then
    [ "$(stat -c %b "$dir/init")" = 0 ]
  fi
}

# assert_no_leftovers ID [BUNDLE]: nothing of container ID remains on the host: no state directory,
# no mount mentioning the bundle, no cgroup directory named after ID, no live process in the bundle
# or in such a cgroup (a killed process gets up to WAIT_MAX_S to be gone: 2 s were a loaded machine's
# reach).
assert_no_leftovers() {
  local id=$1 bundle=${2:-${BUNDLE:-}} problems=() line pid tries=$((WAIT_MAX_S * 10))
  local -A pids=()
  [ -e "$FSRUN_ROOT/$id" ] && problems+=("state directory $FSRUN_ROOT/$id exists")
  if [ -n "$bundle" ]; then
    while read -r line; do
      problems+=("mount: $line")
    done < <(grep -F -- "$bundle" /proc/self/mountinfo)
    for pid in $(_fsrun_pids_in_dir "$bundle"); do
      pids[$pid]="has its root or cwd in the bundle"
    done
  fi
  while read -r line; do
    problems+=("cgroup directory $line")
  done < <(find /sys/fs/cgroup -type d -name "*$id*" 2>/dev/null)
  for pid in $(grep -lFw -- "$id" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3); do
    pids[$pid]+="${pids[$pid]:+, }is in a cgroup named after $id"
  done
  while [ ${#pids[@]} -gt 0 ] && [ $tries -gt 0 ]; do
    for pid in "${!pids[@]}"; do
      _fsrun_pid_alive "$pid" || unset "pids[$pid]"
    done
    [ ${#pids[@]} -eq 0 ] && break
    sleep 0.1
    tries=$((tries - 1))
  done
  for pid in "${!pids[@]}"; do
    problems+=("process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)) ${pids[$pid]}")
  done
  if [ ${#problems[@]} -gt 0 ]; then
    for line in "${problems[@]}"; do
      echo "leftover of container $id: $line" >&2
    done
    return 1
  fi
}

# start_swapper OWNER_DIR: uid 4343 exchanges `cache` and `x` there (renameat2 RENAME_EXCHANGE: the
# name always exists, a directory or a link) in a loop until stop_swapper (sandbox.bats,
# exec-git-walk.bats: a name swapped between fsrun's check of a path and its use)
start_swapper() {
  local renameat2
  case $(uname -m) in
    x86_64) renameat2=316 ;;
    aarch64) renameat2=276 ;;
    *) skip "renameat2's system call number here is not known to this test" ;;
  esac
  setpriv --reuid 4343 --regid 4343 --clear-groups perl -e \
    '($n, $a, $b) = @ARGV; while (1) { syscall($n, -100, $a, -100, $b, 2) == 0 or die "$!" }' \
    "$renameat2" "$1/cache" "$1/x" &
  SWAPPER=$!
  BACKGROUND_PIDS=$SWAPPER
}

# stop_swapper OWNER_DIR: the loop stopped by its pid (alive until then: the runs were raced), and
# `cache` the directory again
stop_swapper() {
  kill -0 "$SWAPPER"
  kill "$SWAPPER"
  wait "$SWAPPER" || true
  BACKGROUND_PIDS=
  if [ -L "$1/cache" ]; then
    mv "$1/cache" "$1/link" && mv "$1/x" "$1/cache" && mv "$1/link" "$1/x"
  fi
  [ -d "$1/cache" ] && [ ! -L "$1/cache" ]
}
