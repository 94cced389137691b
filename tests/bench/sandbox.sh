#!/bin/bash
# sandbox.sh [ROUNDS]: what a sandboxed command costs, side by side, rounds alternating (the order
# rotates each round), medians in ms. The command is `sh -c true` in a linked git worktree in Fusion's
# layout (<repo>/.worktrees/task; bwrap gets the worktree and the repository's .git read-write):
#   native        the command itself, as Fusion runs it without a sandbox (the floor)
#   sandbox       fsrun sandbox under the default policy (network off)
#   sandbox-json  the same with --json (what the Fusion adapter uses)
#   egress        fsrun sandbox with allowNetwork true: a network namespace of its own and
#                 slirp4netns started, waited for and stopped around the command
#   net-host      fsrun sandbox with allowNetwork true, network host (the host's network)
#   exec          fsrun exec into a container kept from `fsrun bundle` (one per task, a command each)
#   bwrap         bubblewrap with the same shape: read-only system dirs, the worktree read-write,
#                 tmpfs /tmp, new namespaces, all capabilities dropped
#   bwrap-net     the same with --share-net (bwrap's network on: the host's network)
#   base          (with FSRUN_BASE=path/to/another/fsrun) `sandbox` under that binary: a change
#                 measured against its base in the same run
#   base-egress   (with FSRUN_BASE) `egress` under that binary
# SANDBOX_BENCH_ONLY="sandbox base bwrap": only those runners (names as below; bench_ratio skips
# the pairs not run).
# SANDBOX_BENCH_USER=1: every command above runs as an ordinary user (made for the run, removed at
# the end; bwrap unprivileged, fsrun in a user namespace of its own, no cgroup), with its own
# worktree, fsrun's own environment only as the Fusion adapter passes it (PATH, HOME,
# XDG_RUNTIME_DIR a tmpfs as /run/user/UID is, so the state root $XDG_RUNTIME_DIR/fsrun, fsrun's
# default), plus three more runners:
#   sandbox-disk  the user's sandbox with its state root on the worktree's disk (/tmp/fsrun-UID,
#                 fsrun's default where no $XDG_RUNTIME_DIR is set)
#   root-sandbox, root-bwrap   sandbox and bwrap as root, for the ratio
# The run happens in a private mount namespace where /dev/net/tun is a 0666 node (as udev makes it;
# an ordinary user's egress needs that), so the host's node is left as it is.
# Needs root (bwrap as root; fsrun's cgroups). FSRUN=path/to/fsrun (default: the build next to this
# tree). Not a pass/fail test: it prints numbers.
set -eu

rounds=${1:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "sandbox.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "sandbox.sh: needs root" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")
[ -n "${FSRUN_BASE:-}" ] && FSRUN_BASE=$(realpath "$FSRUN_BASE")
as_user=${SANDBOX_BENCH_USER:-}
if [ -n "$as_user" ] && [ -z "${SANDBOX_BENCH_INNER:-}" ]; then
  SANDBOX_BENCH_INNER=1 exec unshare -m --propagation private "$0" "$@"
fi
# shellcheck source=lib.sh
source "$here/lib.sh"

work=$(mktemp -d /tmp/fsrun-bench.XXXXXX)
chmod 755 "$work"
# root's state under /run, as fsrun's default /run/fsrun (a tmpfs on most hosts; on this development
# machine /run is on the root's ext4, where each run's state dir costs more)
rstate=$(mktemp -d /run/fsrun-bench.XXXXXX)
rwt=$work/repo/.worktrees/task
user=fsbench$$
caller=() # the prefix that runs a command as the caller measured
cleanup() {
  "${caller[@]}" "$FSRUN" --root "$cstate" delete --force bench-kept >/dev/null 2>&1 || true
  [ -n "$as_user" ] && umount "$work/u/run" 2>/dev/null
  rm -rf --one-file-system "$work" "$rstate" "$rstate-base"
  id "$user" >/dev/null 2>&1 && userdel "$user"
  return 0
}
cstate=$rstate
trap cleanup EXIT
cc -O2 -o "$work/timeit" "$here/timeit.c"
# the CPU time of every descendant: bwrap's outer process exits before its sandbox's pid 1 is
# reaped (timeit.c); none of these commands leaves anything running
export TIMEIT_DESCENDANTS=1
bench_make_worktree "$work/repo"
echo '{}' >"$work/policy.json"
echo '{"allowNetwork": true}' >"$work/egress.json"
echo '{"allowNetwork": true, "network": "host"}' >"$work/host.json"
cwt=$rwt
kept=$work/kept

if [ -n "$as_user" ]; then
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$user"
  mkdir -p "$work/u/run"
  # the user's runtime dir, a tmpfs as /run/user/UID is
  mount -t tmpfs -o "mode=700,uid=$(id -u "$user"),gid=$(id -g "$user")" tmpfs "$work/u/run"
  chown "$user:" "$work/u"
  caller=(setpriv --reuid="$user" --regid="$user" --clear-groups env -i PATH=/usr/bin:/bin
    HOME="$work/u" XDG_RUNTIME_DIR="$work/u/run" TIMEIT_DESCENDANTS=1)
  cwt=$work/u/repo/.worktrees/task
  cstate=$work/u/run/fsrun # = fsrun's default there
  kept=$work/u/kept
  "${caller[@]}" bash -c "$(declare -f bench_make_worktree); bench_make_worktree '$work/u/repo'"
  if command -v slirp4netns >/dev/null && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
    mknod -m 666 "$work/tun" c 10 200
    mount --bind "$work/tun" /dev/net/tun
  fi
fi

"${caller[@]}" "$FSRUN" --root "$cstate" bundle --policy "$work/policy.json" --worktree "$cwt" \
  --out "$kept" -- /bin/sleep 100000 >/dev/null
"${caller[@]}" "$FSRUN" --root "$cstate" run --detach --bundle "$kept" bench-kept

runners=(native sandbox sandbox-json exec)
command -v slirp4netns >/dev/null && runners+=(egress)
runners+=(net-host)
command -v bwrap >/dev/null && runners+=(bwrap bwrap-net)
[ -n "${FSRUN_BASE:-}" ] && runners+=(base) && command -v slirp4netns >/dev/null && runners+=(base-egress)
[ -n "$as_user" ] && runners+=(sandbox-disk root-sandbox) && command -v bwrap >/dev/null && runners+=(root-bwrap)
if [ -n "${SANDBOX_BENCH_ONLY:-}" ]; then # a subset: fewer runners, more rounds in the same time
  only=()
  for r in $SANDBOX_BENCH_ONLY; do
    case " ${runners[*]} " in
    *" $r "*) only+=("$r") ;;
    *) echo "sandbox.sh: SANDBOX_BENCH_ONLY: no runner \`$r' here (${runners[*]})" >&2 && exit 1 ;;
    esac
  done
  runners=("${only[@]}")
fi

run_one() { # run_one NAME: prints "wall cpu status"; root-NAME is NAME as root
  local name=$1 as=("${caller[@]}") wt=$cwt state=$cstate bw
  if [[ $name == root-* ]]; then
    as=() wt=$rwt state=$rstate name=${name#root-}
  fi
  local t=("${as[@]}" "$work/timeit") sbx=("$FSRUN" --root "$state" sandbox --worktree "$wt")
  case $name in
    native) (cd "$wt" && "${t[@]}" /bin/sh -c true) ;;
    sandbox) "${t[@]}" "${sbx[@]}" --policy "$work/policy.json" -- /bin/sh -c true ;;
    sandbox-disk) "${t[@]}" "$FSRUN" --root "$work/u/state" sandbox --worktree "$wt" \
      --policy "$work/policy.json" -- /bin/sh -c true ;;
    sandbox-json) "${t[@]}" "${sbx[@]}" --json --policy "$work/policy.json" -- /bin/sh -c true | tail -n 1 ;;
    exec) "${t[@]}" "$FSRUN" --root "$state" exec --cwd "$wt" bench-kept /bin/sh -c true ;;
    egress) "${t[@]}" "${sbx[@]}" --policy "$work/egress.json" -- /bin/sh -c true ;;
    net-host) "${t[@]}" "${sbx[@]}" --policy "$work/host.json" -- /bin/sh -c true ;;
    bwrap | bwrap-net)
      mapfile -t bw < <(bench_bwrap_args "$wt" "${wt%/.worktrees/task}/.git")
      [ "$name" = bwrap-net ] && bw=(--share-net "${bw[@]}")
      "${t[@]}" bwrap "${bw[@]}" /bin/sh -c true ;;
    base) "${t[@]}" "$FSRUN_BASE" --root "$state-base" sandbox --worktree "$wt" \
      --policy "$work/policy.json" -- /bin/sh -c true ;;
    base-egress) "${t[@]}" "$FSRUN_BASE" --root "$state-base" sandbox --worktree "$wt" \
      --policy "$work/egress.json" -- /bin/sh -c true ;;
  esac
}

for r in "${runners[@]}"; do # warm-up, and a check that each one runs
  read -r _ _ status _ < <(run_one "$r")
  [ "$status" = 0 ] || { echo "sandbox.sh: $r exited with $status" >&2; exit 1; }
done

bench_rounds "$rounds" run_one "${runners[@]}"
echo "sh -c true in a worktree, ${as_user:+as an ordinary user, }$rounds rounds, medians (wall, cpu):"
bench_report 13 "${runners[@]}"
for r in sandbox sandbox-json exec; do
  bench_ratio "$r" native
  bench_ratio "$r" bwrap
done
for r in egress net-host; do
  case " ${runners[*]} " in *" $r "*) bench_ratio "$r" sandbox ;; esac
done
bench_ratio egress bwrap-net
[ -n "${FSRUN_BASE:-}" ] && bench_ratio sandbox base && bench_ratio egress base-egress
bench_ratio base-egress bwrap-net
bench_ratio root-sandbox root-bwrap
bench_ratio sandbox root-sandbox
bench_ratio sandbox-disk sandbox
bench_ratio bwrap root-bwrap
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
