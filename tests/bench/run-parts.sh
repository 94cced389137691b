#!/bin/bash
# run-parts.sh [ROUNDS]: what each part of a container's config costs `run /bin/true`: the same
# binary runs bundles that differ by one part each, all rotating in every round (lib.sh), and
# prints each one's medians and its ratio to the full config. Not a pass/fail test.
#   full      the busybox bundle of bench.sh (`fsrun spec`, /bin/true)
#   nonet     without the network namespace
#   nocgns    without the cgroup namespace and the /sys/fs/cgroup mount
#   nomask    without maskedPaths and readonlyPaths
#   nosys     without the /sys and /sys/fs/cgroup mounts
#   nores     without linux.resources (the device rules)
#   min       pid and mount namespaces, /proc only, none of the above
#   floor     `unshare -fpmuinC /bin/true` (the host's, dynamically linked): namespaces, no runtime
#   crun      crun 1.8 with the full config, when installed
# Every variant still makes the container's cgroup in every mounted hierarchy (docs/cgroups.md).
# Runs in a private mount namespace with the host's /sys/fs/cgroup/unified unmounted, the state
# roots on a tmpfs, as bench.sh does. Needs root. FSRUN=path/to/fsrun (default: the build next
# to this tree); RUN_PARTS_ONLY="full min" picks the variants.
set -eu

rounds=${1:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "run-parts.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run-parts.sh: needs root" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")
# shellcheck source=lib.sh
source "$here/lib.sh"

if [ -z "${RUN_PARTS_INNER:-}" ]; then
  work=$(mktemp -d /tmp/fsrun-run-parts.XXXXXX)
  trap 'rm -rf --one-file-system "$work"' EXIT
  cc -O2 -o "$work/timeit" "$here/timeit.c"
  # shellcheck source=../../contrib/lib.sh
  source "$srcdir/contrib/lib.sh"
  fsrun_make_busybox_rootfs "$work/rootfs" >/dev/null
  mkdir "$work/spec"
  (cd "$work/spec" && "$FSRUN" spec)
  # variant NAME JQ-FILTER: a bundle whose config is the full one passed through the filter
  variant() {
    mkdir "$work/$1"
    ln -s ../rootfs "$work/$1/rootfs"
    jq ".ociVersion = \"1.0.2\" | .process.terminal = false | .process.args = [\"/bin/true\"] | $2" \
      "$work/spec/config.json" >"$work/$1/config.json"
  }
  variant full '.'
  variant nonet '.linux.namespaces |= map(select(.type != "network"))'
  variant nocgns '.linux.namespaces |= map(select(.type != "cgroup"))
    | .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
  variant nomask '.linux.maskedPaths = [] | .linux.readonlyPaths = []'
  variant nosys '.mounts |= map(select(.destination != "/sys" and .destination != "/sys/fs/cgroup"))'
  variant nores 'del(.linux.resources)'
  variant min '.linux.namespaces |= map(select(.type == "pid" or .type == "mount"))
    | .mounts |= map(select(.destination == "/proc")) | .linux.maskedPaths = []
    | .linux.readonlyPaths = [] | del(.linux.resources) | del(.hostname)'
  export RUN_PARTS_INNER=1 FSRUN WORK=$work
  unshare -m --propagation private "$0" "$rounds"
  exit 0
fi

# inside the private mount namespace
umount /sys/fs/cgroup/unified 2>/dev/null || true
mkdir -p "$WORK/state"
mount -t tmpfs tmpfs "$WORK/state"
names=(full nonet nocgns nomask nosys nores min floor)
command -v crun >/dev/null && names+=(crun)
[ -n "${RUN_PARTS_ONLY:-}" ] && read -r -a names <<<"$RUN_PARTS_ONLY"
run_part() {
  case $1 in
    floor) "$WORK/timeit" unshare -fpmuinC /bin/true ;;
    crun) "$WORK/timeit" crun --root "$WORK/state/crun" run --bundle "$WORK/full" "c-$2" ;;
    *) "$WORK/timeit" "$FSRUN" --root "$WORK/state/fsrun" run --bundle "$WORK/$1" "p-$1-$2" ;;
  esac
}
bench_rounds "$rounds" run_part "${names[@]}"
bench_report 6 "${names[@]}"
for n in "${names[@]}"; do
  [ "$n" = "${names[0]}" ] || bench_ratio "$n" "${names[0]}"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
