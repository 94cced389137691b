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
  export RUN_TRUE_INNER=1 FSRUN WORK=$work
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
)
runtimes=()
for r in fsrun crun runc; do
  command -v "${cmd[$r]%% *}" >/dev/null && runtimes+=("$r")
done

# one warm-up each, and a check that it really runs the container
for r in "${runtimes[@]}"; do
  if ! ${cmd[$r]} "warm-$r" >"$WORK/$r.log" 2>&1; then
    echo "run-true.sh: $r failed: $(tail -n 3 "$WORK/$r.log")" >&2
    exit 1
  fi
done

declare -A samples=()
for ((i = 0; i < rounds; i++)); do
  n=${#runtimes[@]}
  for ((k = 0; k < n; k++)); do
    r=${runtimes[$(((i + k) % n))]}
    start=$EPOCHREALTIME
    ${cmd[$r]} "b-$r-$i" >/dev/null 2>&1
    end=$EPOCHREALTIME
    samples[$r]+="$(((${end/./} - ${start/./}))) "
  done
done

median_us() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
declare -A med=()
echo "run of /bin/true, $rounds rounds, medians:"
for r in "${runtimes[@]}"; do
  med[$r]=$(median_us <<<"${samples[$r]}")
  printf '  %-6s %8.1f ms\n' "$r" "$(bc -l <<<"${med[$r]} / 1000")"
done
for r in crun runc; do
  [ -n "${med[$r]:-}" ] && printf '  fsrun / %s = %.2f\n' "$r" "$(bc -l <<<"${med[fsrun]} / ${med[$r]}")"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
