#!/bin/bash
# bench.sh [ROUNDS]: issue 15's measures, one line each:
#   bench NAME fsrun=MS peer=MS ratio=R cpu_fsrun=MS cpu_peer=MS cpu_ratio=R
# medians of ROUNDS rounds (default 20) of exactly two commands alternating (the kernel tears a
# namespace down after its last process exits and that deferred work lands on whatever runs next,
# so only the pair of one measure takes turns). Wall and CPU time (user + system of the command and
# everything it waited for; for the sandbox pairs every descendant, reaped or orphaned) from timeit;
# rss-* lines are peak resident sets in KB instead.
#   sandbox/bwrap            `sandbox -- /bin/true` as root, default policy, vs bwrap --unshare-all
#                            with ro /usr /etc, the worktree rw, tmpfs /tmp, proc, dev
#   sandbox-egress/bwrap-net the egress network profile vs bwrap --share-net (when slirp4netns); its
#                            line ends in helper=NAME-VERSION, the helper fsrun's --debug log named
#   sandbox-user/bwrap-user  the same as an ordinary user (made here, removed at the end) the way the
#                            Fusion adapter runs it: fsrun's own environment only (PATH, HOME,
#                            XDG_RUNTIME_DIR), no --root, so fsrun's default state root
#                            $XDG_RUNTIME_DIR/fsrun, a tmpfs as a login session's /run/user/UID is
#   sandbox-user-disk/bwrap-user  the same without XDG_RUNTIME_DIR (a service, cron, a CI job):
#                            the default /tmp/fsrun-UID, on the disk here
#   run/crun, run/runc       `run /bin/true` of a busybox bundle (create+start+wait+delete)
#   create/crun, start/crun, delete/crun   each step alone
#   exec/crun                `exec /bin/true` into a running container
#   exec-seccomp/crun        the same into a container whose profile, as Docker's and Podman's
#                            defaults do, allows a list of ~300 syscall names (every name of this
#                            architecture's unistd_64.h but those below; errno for the rest)
#   run-seccomp/crun         `run /bin/true` of a bundle with exec-seccomp's profile: the compile of
#                            a Docker-like profile at each create (fsrun: its cache's hit after the
#                            first run, seccomp-cache.h; crun compiles each time)
#   run-disk/crun            `run /bin/true` with both state roots on the disk (/var/tmp) instead
#                            of a tmpfs: what a disk state root adds (issue 15)
#   run-par/crun             100 `run`s, 20 at a time (wall of the whole batch)
#   rss-run/crun             the peak resident set of a `run` (the runtime, its init, the process)
#   */base                   with FSRUN_BASE=path/to/another/fsrun: the same fsrun measure against
#                            that binary (sandbox, sandbox-user, sandbox-user-disk, run, run-disk,
#                            run-seccomp, exec, exec-seccomp)
# Every sandbox runs in a linked worktree in Fusion's layout (<repo>/.worktrees/task), bwrap with the
# worktree and the repository's .git bound read-write.
# BENCH_ONLY=sandbox stops after the sandbox measures (sandbox-user: the ordinary user's only);
# BENCH_ONLY=runtime skips them;
# BENCH_ONLY=exec measures exec only (exec/crun, exec/base); BENCH_ONLY=run-seccomp run-seccomp only; BENCH_ONLY=sandbox-egress the egress
# profile only (sandbox-egress/bwrap-net, and sandbox-egress/base with FSRUN_BASE);
# BENCH_ONLY=sandbox-root root's default sandbox only (sandbox/bwrap, and sandbox/base with
# FSRUN_BASE): an A/B of a change to root's sandbox, more rounds in the same time.
# The runtime measures run in a private mount namespace where the host's /sys/fs/cgroup/unified is
# unmounted (crun 1.8 refuses this hybrid host), and under `chrt` the v1 cpu hierarchy too (a
# real-time process cannot join a cpu cgroup without a real-time budget), state roots on a tmpfs
# (run-disk: on /var/tmp). Needs root. A missing peer
# skips its lines. FSRUN=path/to/fsrun (default: the build next to this tree). Not a pass/fail test.
set -eu

rounds=${1:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "bench.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")
[ -n "${FSRUN_BASE:-}" ] && FSRUN_BASE=$(realpath "$FSRUN_BASE")
# shellcheck source=lib.sh
source "$here/lib.sh"

# bench_pair NAME A B RUN [EXTRA]: ROUNDS rounds of `RUN A` and `RUN B` alternating; prints the
# line (EXTRA at its end)
bench_pair() {
  local name=$1 a=$2 b=$3 run=$4
  bench_rounds "$rounds" "$run" "$a" "$b"
  bench_report 1 "$a" "$b" >/dev/null
  printf 'bench %s fsrun=%.2f peer=%.2f ratio=%.2f cpu_fsrun=%.2f cpu_peer=%.2f cpu_ratio=%.2f%s\n' \
    "$name" "${mwall[$a]}" "${mwall[$b]}" "$(bc -l <<<"${mwall[$a]} / ${mwall[$b]}")" \
    "${mcpu[$a]}" "${mcpu[$b]}" "$(bc -l <<<"${mcpu[$a]} / ${mcpu[$b]}")" "${5:+ $5}"
}

have() { command -v "$1" >/dev/null; }
only=${BENCH_ONLY:-}
# the sandbox measures are wanted
sandboxes() { [ "$only" != runtime ] && [ "$only" != exec ] && [ "$only" != run-seccomp ]; }

if [ -z "${BENCH_INNER:-}" ]; then
  work=$(mktemp -d /tmp/fsrun-bench.XXXXXX)
  user=fsbench$$
  state=$(mktemp -d /run/fsrun-bench.XXXXXX)
  disk=$(mktemp -d /var/tmp/fsrun-bench.XXXXXX)
  uid=
  # set -e holds in the EXIT trap too: a step that fails there ends the clean-up (the umount of a
  # tmpfs that only the ordinary user's part mounts ended every other run before its rm, leaving
  # /run/fsrun-bench.* and /tmp/fsrun-bench.*, and made the script exit 32)
  cleanup() {
    if [ -n "$uid" ]; then umount "$work/u/run" 2>/dev/null || true; fi
    rm -rf --one-file-system "$work" "$state" "$disk" ${uid:+"/tmp/fsrun-$uid"} || true
    if id "$user" >/dev/null 2>&1; then userdel "$user" 2>/dev/null || true; fi
    return 0
  }
  trap cleanup EXIT
  chmod 755 "$work"
  cc -O2 -o "$work/timeit" "$here/timeit.c"
  TIMEIT=$work/timeit
  echo '{}' >"$work/policy.json"
  echo '{"allowNetwork": true}' >"$work/egress.json"
  bench_make_worktree "$work/repo"
  mapfile -t bw < <(bench_bwrap_args "$work/repo/.worktrees/task" "$work/repo/.git")
  sbx() { "$TIMEIT" "$1" --root "$state/${2:-s}" sandbox --policy "$work/${3:-policy}.json" --worktree "$work/repo/.worktrees/task" -- /bin/true; }
  run_sandbox() {
    case $1 in
      fsrun) sbx "$FSRUN" ;;
      base) sbx "$FSRUN_BASE" b ;;
      bwrap) "$TIMEIT" bwrap "${bw[@]}" /bin/true ;;
      fsrun-egress) sbx "$FSRUN" s egress ;;
      base-egress) sbx "$FSRUN_BASE" b egress ;;
      bwrap-net) "$TIMEIT" bwrap --share-net "${bw[@]}" /bin/true ;;
    esac
  }
  # bwrap's outer process exits before its sandbox's pid 1 is reaped: timeit reaps every
  # descendant (both sides), or that CPU time is never counted (timeit.c)
  export TIMEIT_DESCENDANTS=1
  # the egress lines' helper=: the one fsrun's debug log says ran, and its version
  egress_helper() {
    local path
    path=$("$1" --debug --root "$state/h" sandbox --policy "$work/egress.json" \
      --worktree "$work/repo/.worktrees/task" -- /bin/true 2>&1 |
      sed -n 's/.*network egress: \([^ ]*\) configured the network.*/\1/p')
    [ -n "$path" ] || { echo helper=unknown; return 0; }
    echo "helper=${path##*/}-$("$path" --version 2>/dev/null | awk 'NR == 1 { print $NF }')"
  }
  if [ "$only" = sandbox-egress ] && have slirp4netns; then
    have bwrap && bench_pair sandbox-egress/bwrap-net fsrun-egress bwrap-net run_sandbox "$(egress_helper "$FSRUN")"
    [ -n "${FSRUN_BASE:-}" ] && bench_pair sandbox-egress/base fsrun-egress base-egress run_sandbox "$(egress_helper "$FSRUN")"
    exit 0
  fi
  if [ "$only" = sandbox-root ]; then
    have bwrap && bench_pair sandbox/bwrap fsrun bwrap run_sandbox
    [ -n "${FSRUN_BASE:-}" ] && bench_pair sandbox/base fsrun base run_sandbox
    exit 0
  fi
  if sandboxes && [ "$only" != sandbox-user ] && have bwrap; then
    bench_pair sandbox/bwrap fsrun bwrap run_sandbox
    have slirp4netns && bench_pair sandbox-egress/bwrap-net fsrun-egress bwrap-net run_sandbox "$(egress_helper "$FSRUN")"
  fi
  sandboxes && [ "$only" != sandbox-user ] && [ -n "${FSRUN_BASE:-}" ] &&
    bench_pair sandbox/base fsrun base run_sandbox

  # an ordinary user: its own worktree, fsrun's default state root; bwrap unprivileged
  if sandboxes && have bwrap && useradd -M -d /nonexistent -s /usr/sbin/nologin "$user" 2>/dev/null; then
    uid=$(id -u "$user")
    mkdir -p "$work/u/run"
    chown "$user:" "$work/u"
    # the user's runtime dir, a tmpfs as /run/user/UID is (unmounted by cleanup)
    mount -t tmpfs -o "mode=700,uid=$uid,gid=$(id -g "$user")" tmpfs "$work/u/run"
    uwt=$work/u/repo/.worktrees/task
    setpriv --reuid="$user" --regid="$user" --clear-groups env -i PATH=/usr/bin:/bin HOME="$work/u" \
      bash -c "$(declare -f bench_make_worktree); bench_make_worktree '$work/u/repo'"
    mapfile -t bwu < <(bench_bwrap_args "$uwt" "$work/u/repo/.git")
    # as the Fusion adapter runs fsrun: its own environment only (contrib/fusion/src/fsrun-cli.ts)
    as_user() { # as_user tmpfs|disk CMD...: with or without $XDG_RUNTIME_DIR
      local xdg=()
      [ "$1" = tmpfs ] && xdg=(XDG_RUNTIME_DIR="$work/u/run")
      shift
      setpriv --reuid="$user" --regid="$user" --clear-groups env -i PATH=/usr/bin:/bin \
        HOME="$work/u" "${xdg[@]}" TIMEIT_DESCENDANTS=1 "$@"
    }
    usbx() { as_user "$1" "$TIMEIT" "$2" sandbox --policy "$work/policy.json" --worktree "$uwt" -- /bin/true; }
    run_user() {
      case $1 in
        fsrun) usbx tmpfs "$FSRUN" ;;
        base) usbx tmpfs "$FSRUN_BASE" ;;
        fsrun-disk) usbx disk "$FSRUN" ;;
        base-disk) usbx disk "$FSRUN_BASE" ;;
        bwrap) as_user tmpfs "$TIMEIT" bwrap "${bwu[@]}" /bin/true ;;
      esac
    }
    if as_user tmpfs bwrap "${bwu[@]}" /bin/true 2>/dev/null; then
      bench_pair sandbox-user/bwrap-user fsrun bwrap run_user
      bench_pair sandbox-user-disk/bwrap-user fsrun-disk bwrap run_user
    fi
    if [ -n "${FSRUN_BASE:-}" ]; then
      bench_pair sandbox-user/base fsrun base run_user
      bench_pair sandbox-user-disk/base fsrun-disk base-disk run_user
    fi
  fi
  unset TIMEIT_DESCENDANTS # from here a timed `create` leaves its init running
  [ "$only" = sandbox ] || [ "$only" = sandbox-user ] && exit 0

  # shellcheck source=../../contrib/lib.sh
  source "$srcdir/contrib/lib.sh"
  fsrun_make_busybox_rootfs "$work/bundle/rootfs" >/dev/null
  (cd "$work/bundle" && "$FSRUN" spec)
  # one config for every runtime: crun 1.8 only knows runtime-spec versions up to 1.0.x/1.1
  jq '.ociVersion = "1.0.2" | .process.terminal = false | .process.args = ["/bin/true"]' \
    "$work/bundle/config.json" >"$work/config.json"
  mv "$work/config.json" "$work/bundle/config.json"
  mkdir "$work/sleeper"
  ln -s ../bundle/rootfs "$work/sleeper/rootfs"
  jq '.process.args = ["/bin/sleep", "100000"]' "$work/bundle/config.json" >"$work/sleeper/config.json"
  unistd=$(ls /usr/include/*/asm/unistd_64.h 2>/dev/null | head -n 1)
  if [ -n "$unistd" ]; then
    mkdir "$work/sleeper-seccomp"
    ln -s ../bundle/rootfs "$work/sleeper-seccomp/rootfs"
    denied='kexec_.*|.*init_module|delete_module|reboot|swapo.*|acct|bpf|perf_event_open|ptrace|mount|umount2|pivot_root|unshare|setns|open_by_handle_at|keyctl|add_key|request_key|userfaultfd|iopl|ioperm|quotactl|kcmp|process_vm_.*|settimeofday|clock_settime|clock_adjtime|adjtimex|syslog|open_tree|move_mount|fs(open|config|mount|pick)|mount_setattr'
    grep -oP '#define __NR_\K\w+' "$unistd" | grep -vxE "$denied" | jq -R . | jq -s . >"$work/names.json"
    jq --slurpfile n "$work/names.json" '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO",
      architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      syscalls: [{names: $n[0], action: "SCMP_ACT_ALLOW"}]}' \
      "$work/sleeper/config.json" >"$work/sleeper-seccomp/config.json"
    mkdir "$work/bundle-seccomp"
    ln -s ../bundle/rootfs "$work/bundle-seccomp/rootfs"
    jq '.process.args = ["/bin/true"]' "$work/sleeper-seccomp/config.json" \
      >"$work/bundle-seccomp/config.json"
  fi
  export BENCH_INNER=1 FSRUN FSRUN_BASE=${FSRUN_BASE:-} WORK=$work TIMEIT DISK=$disk
  unshare -m --propagation private "$0" "$rounds"
  exit 0
fi

# inside the private mount namespace: the runtimes
umount /sys/fs/cgroup/unified 2>/dev/null || true
# Under a real-time policy (`chrt -f 10 bench.sh`: no other process takes a CPU from the runs) no
# runtime can join a v1 cpu cgroup whose cpu.rt_runtime_us is 0, as a new one's is (EINVAL, crun
# and fsrun alike): the cpu hierarchy goes too, for both
if chrt -p $$ 2>/dev/null | grep -qE 'SCHED_(FIFO|RR)' && umount /sys/fs/cgroup/cpu 2>/dev/null; then
  echo "bench note: real-time policy, the v1 cpu hierarchy unmounted for the runtime measures"
fi
mkdir -p "$WORK/state"
mount -t tmpfs tmpfs "$WORK/state"
cd "$WORK/bundle"
rt() { # rt NAME: the runtime's command and its state root
  case $1 in
    fsrun) echo "$FSRUN --root $WORK/state/fsrun" ;;
    base) echo "$FSRUN_BASE --root $WORK/state/base" ;;
    *) echo "$1 --root $WORK/state/$1" ;;
  esac
}
run_runtime() { "$TIMEIT" $(rt "$1") run "r-$1-$2"; }
# the same with the state root on the disk
run_disk_runtime() { "$TIMEIT" $(rt "$1" | sed "s|$WORK/state/|$DISK/|") run "d-$1-$2"; }
# create, start and delete of one container, each timed: the step named by STEP
phase_runtime() {
  local id=p-$1-$2-$STEP
  case $STEP in
    create) "$TIMEIT" $(rt "$1") create --bundle "$WORK/bundle" "$id"
      $(rt "$1") delete --force "$id" >/dev/null 2>&1 ;;
    start) $(rt "$1") create --bundle "$WORK/bundle" "$id" >/dev/null 2>&1
      "$TIMEIT" $(rt "$1") start "$id"
      $(rt "$1") delete --force "$id" >/dev/null 2>&1 ;;
    delete) $(rt "$1") create --bundle "$WORK/bundle" "$id" >/dev/null 2>&1
      "$TIMEIT" $(rt "$1") delete --force "$id" ;;
  esac
}
exec_runtime() { "$TIMEIT" $(rt "$1") exec "keep-$1" /bin/true; }
exec_seccomp_runtime() { "$TIMEIT" $(rt "$1") exec "keepsc-$1" /bin/true; }
par_runtime() {
  local r=$1 i=$2
  # shellcheck disable=SC2046
  "$TIMEIT" bash -c "seq 100 | xargs -P 20 -I{} $(rt "$r") run --bundle '$WORK/bundle' par-$i-{}"
}
run_seccomp_runtime() { "$TIMEIT" $(rt "$1") run --bundle "$WORK/bundle-seccomp" "rs-$1-$2"; }
rss_runtime() { "$TIMEIT" $(rt "$1") run "rss-$1-$2" | awk '{print $4, $4, $3}'; }

if [ -d "$WORK/bundle-seccomp" ] && { [ "$only" = run-seccomp ] || [ "$only" != exec ]; }; then
  have crun && bench_pair run-seccomp/crun fsrun crun run_seccomp_runtime
  [ -n "$FSRUN_BASE" ] && bench_pair run-seccomp/base fsrun base run_seccomp_runtime
fi
[ "$only" = run-seccomp ] && exit 0
if [ "$only" != exec ]; then
  have crun && bench_pair run/crun fsrun crun run_runtime
  have runc && bench_pair run/runc fsrun runc run_runtime
  [ -n "$FSRUN_BASE" ] && bench_pair run/base fsrun base run_runtime
  if [ "$(stat -f -c %T "$DISK")" != tmpfs ]; then
    have crun && bench_pair run-disk/crun fsrun crun run_disk_runtime
    [ -n "$FSRUN_BASE" ] && bench_pair run-disk/base fsrun base run_disk_runtime
  fi
fi
if have crun; then
  for STEP in create start delete; do
    [ "$only" = exec ] || bench_pair "$STEP/crun" fsrun crun phase_runtime
  done
  for r in fsrun crun ${FSRUN_BASE:+base}; do
    $(rt "$r") run --detach --bundle "$WORK/sleeper" "keep-$r" >/dev/null 2>&1 </dev/null
  done
  bench_pair exec/crun fsrun crun exec_runtime
  [ -n "$FSRUN_BASE" ] && bench_pair exec/base fsrun base exec_runtime
  for r in fsrun crun ${FSRUN_BASE:+base}; do
    $(rt "$r") delete --force "keep-$r" >/dev/null 2>&1 || true
  done
  if [ -d "$WORK/sleeper-seccomp" ]; then
    for r in fsrun crun ${FSRUN_BASE:+base}; do
      $(rt "$r") run --detach --bundle "$WORK/sleeper-seccomp" "keepsc-$r" >/dev/null 2>&1 </dev/null
    done
    bench_pair exec-seccomp/crun fsrun crun exec_seccomp_runtime
    [ -n "$FSRUN_BASE" ] && bench_pair exec-seccomp/base fsrun base exec_seccomp_runtime
    for r in fsrun crun ${FSRUN_BASE:+base}; do
      $(rt "$r") delete --force "keepsc-$r" >/dev/null 2>&1 || true
    done
  fi
  [ "$only" = exec ] && exit 0
  rounds_all=$rounds
  rounds=$(((rounds + 4) / 5))
  bench_pair run-par/crun fsrun crun par_runtime
  rounds=$rounds_all
  bench_pair rss-run/crun fsrun crun rss_runtime | sed 's/ cpu_.*//'
fi
echo "bench load-average $(cut -d' ' -f1-3 /proc/loadavg)"
