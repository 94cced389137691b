#!/bin/bash
# run-true.sh [ROUNDS]: the full `run` of /bin/true on one busybox bundle with fsrun, crun and runc,
# rounds alternating (the order rotates each round), medians in ms and fsrun's ratio to each.
#
# crun 1.8 refuses this kind of hybrid cgroup host, so all three run inside a private mount namespace
# where /sys/fs/cgroup/unified is unmounted (the host's mounts are not touched); their state roots
# are on a tmpfs there, as /run is on a usual host. Needs root. FSRUN=path/to/fsrun (default: the
# build next to this tree). Not a pass/fail test: it prints numbers.
set -eu

rounds=${1:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "run-true.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run-true.sh: needs root" >&2; exit 1; }

if [ -z "${RUN_TRUE_INNER:-}" ]; then
  work=$(mktemp -d /tmp/fsrun-bench.XXXXXX)
  trap 'rm -rf --one-file-system "$work"' EXIT
  # shellcheck source=../../contrib/lib.sh
  source "$srcdir/contrib/lib.sh"
  fsrun_make_busybox_rootfs "$work/bundle/rootfs" >/dev/null
  (cd "$work/bundle" && "$FSRUN" spec)
  # the same config for all three: crun 1.8 only knows runtime-spec versions up to 1.0.x/1.1
  jq '.ociVersion = "1.0.2" | .process.terminal = false | .process.args = ["/bin/true"]' \
    "$work/bundle/config.json" >"$work/config.json"
  mv "$work/config.json" "$work/bundle/config.json"
  cc -O2 -o "$work/timeit" "$here/timeit.c"
  export RUN_TRUE_INNER=1 FSRUN WORK=$work TIMEIT=$work/timeit
  exec unshare -m --propagation private "$0" "$rounds"
fi

# inside the private mount namespace
umount /sys/fs/cgroup/unified 2>/dev/null || true
mkdir -p "$WORK/state"
mount -t tmpfs tmpfs "$WORK/state"
cd "$WORK/bundle"

declare -A cmd=(
  [fsrun]="$FSRUN --root $WORK/state/fsrun run"
  [crun]="crun --root $WORK/state/crun run"
  [runc]="runc --root $WORK/state/runc run"
  # not an OCI runtime: the same rootfs and namespaces by hand, for scale (the sandbox's peer)
  [bwrap]="bwrap --unshare-all --die-with-parent --bind $WORK/bundle/rootfs / --proc /proc --dev /dev /bin/true"
)
runtimes=()
for r in fsrun crun runc bwrap; do
  command -v "${cmd[$r]%% *}" >/dev/null && runtimes+=("$r")
done

# one warm-up each, and a check that it really runs the container
for r in "${runtimes[@]}"; do
  if ! ${cmd[$r]} "warm-$r" >"$WORK/$r.log" 2>&1; then
    echo "run-true.sh: $r failed: $(tail -n 3 "$WORK/$r.log")" >&2
    exit 1
  fi
done

# wall time, and CPU time (user + sys of the runtime and everything it waited for: its init, the
# container's process), which a busy machine disturbs much less than the wall time. timeit spawns
# the command itself: a shell's `time` would add the shell's fork to every sample.
# shellcheck source=lib.sh
source "$here/lib.sh"
run_runtime() { "$TIMEIT" ${cmd[$1]} "b-$1-$2"; }
bench_rounds "$rounds" run_runtime "${runtimes[@]}"
echo "run of /bin/true, $rounds rounds, medians (wall, cpu):"
bench_report 6 "${runtimes[@]}"
for r in crun runc bwrap; do
  bench_ratio fsrun "$r"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
