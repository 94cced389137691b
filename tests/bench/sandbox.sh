#!/bin/bash
# sandbox.sh [ROUNDS]: what a sandboxed command costs, side by side, rounds alternating (the order
# rotates each round), medians in ms. The command is `sh -c true` in a git worktree:
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
# Needs root (bwrap as root; fsrun's cgroups). FSRUN=path/to/fsrun (default: the build next to this
# tree). Not a pass/fail test: it prints numbers.
set -eu

rounds=${1:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "sandbox.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "sandbox.sh: needs root" >&2; exit 1; }

work=$(mktemp -d /tmp/fsrun-bench.XXXXXX)
# the state under /run, as fsrun's default /run/fsrun (a tmpfs on most hosts; on this development
# machine /run is on the root's ext4, where each run's state dir costs more)
state=$(mktemp -d /run/fsrun-bench.XXXXXX)
cleanup() {
  "$FSRUN" --root "$state" delete --force bench-kept >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work" "$state" "$state-base"
}
trap cleanup EXIT
cc -O2 -o "$work/timeit" "$here/timeit.c"
# the CPU time of every descendant: bwrap's outer process exits before its sandbox's pid 1 is
# reaped (timeit.c); none of these commands leaves anything running
export TIMEIT_DESCENDANTS=1
wt=$work/repo
git init -q "$wt"
git -C "$wt" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
echo '{}' >"$work/policy.json"
echo '{"allowNetwork": true}' >"$work/egress.json"
echo '{"allowNetwork": true, "network": "host"}' >"$work/host.json"

"$FSRUN" --root "$state" bundle --policy "$work/policy.json" --worktree "$wt" --out "$work/kept" \
  -- /bin/sleep 100000 >/dev/null
"$FSRUN" --root "$state" run --detach --bundle "$work/kept" bench-kept

cmd_native=(/bin/sh -c true)
cmd_sandbox=("$FSRUN" --root "$state" sandbox --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c true)
cmd_json=("$FSRUN" --root "$state" sandbox --json --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c true)
cmd_egress=("$FSRUN" --root "$state" sandbox --policy "$work/egress.json" --worktree "$wt" -- /bin/sh -c true)
cmd_net_host=("$FSRUN" --root "$state" sandbox --policy "$work/host.json" --worktree "$wt" -- /bin/sh -c true)
cmd_exec=("$FSRUN" --root "$state" exec --cwd "$wt" bench-kept /bin/sh -c true)
cmd_base=("${FSRUN_BASE:-}" --root "$state-base" sandbox --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c true)
bwrap_args=(--unshare-all --die-with-parent --cap-drop ALL --ro-bind /usr /usr)
for d in bin sbin lib lib32 lib64; do
  [ -L "/$d" ] && bwrap_args+=(--symlink "$(readlink "/$d")" "/$d")
done
# /tmp first: the worktree may be under it
bwrap_args+=(--ro-bind /etc /etc --tmpfs /tmp --bind "$wt" "$wt" --dev /dev --proc /proc --chdir "$wt")
cmd_bwrap=(bwrap "${bwrap_args[@]}" /bin/sh -c true)
cmd_bwrap_net=(bwrap --share-net "${bwrap_args[@]}" /bin/sh -c true)

runners=(native sandbox sandbox-json exec)
command -v slirp4netns >/dev/null && runners+=(egress)
runners+=(net-host)
command -v bwrap >/dev/null && runners+=(bwrap bwrap-net)
[ -n "${FSRUN_BASE:-}" ] && runners+=(base)
# shellcheck source=lib.sh
source "$here/lib.sh"
run_one() { # run_one NAME: prints "wall cpu status"
  case $1 in
    native) (cd "$wt" && "$work/timeit" "${cmd_native[@]}") ;;
    sandbox) "$work/timeit" "${cmd_sandbox[@]}" ;;
    sandbox-json) "$work/timeit" "${cmd_json[@]}" | tail -n 1 ;;
    exec) "$work/timeit" "${cmd_exec[@]}" ;;
    egress) "$work/timeit" "${cmd_egress[@]}" ;;
    net-host) "$work/timeit" "${cmd_net_host[@]}" ;;
    bwrap-net) "$work/timeit" "${cmd_bwrap_net[@]}" ;;
    bwrap) "$work/timeit" "${cmd_bwrap[@]}" ;;
    base) "$work/timeit" "${cmd_base[@]}" ;;
  esac
}

for r in "${runners[@]}"; do # warm-up, and a check that each one runs
  read -r _ _ status _ < <(run_one "$r")
  [ "$status" = 0 ] || { echo "sandbox.sh: $r exited with $status" >&2; exit 1; }
done

bench_rounds "$rounds" run_one "${runners[@]}"
echo "sh -c true in a worktree, $rounds rounds, medians (wall, cpu):"
bench_report 13 "${runners[@]}"
for r in sandbox sandbox-json exec; do
  bench_ratio "$r" native
  bench_ratio "$r" bwrap
done
for r in egress net-host; do
  case " ${runners[*]} " in *" $r "*) bench_ratio "$r" sandbox ;; esac
done
case " ${runners[*]} " in *" egress "*" bwrap-net "*) bench_ratio egress bwrap-net ;; esac
[ -n "${FSRUN_BASE:-}" ] && bench_ratio sandbox base
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
