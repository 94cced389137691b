#!/bin/bash
# pid-join.sh [ROUNDS]: the cost of entering a joined pid namespace only after pivot_root
# (docs/process-model.md, "Joining another container's pid namespace"): `create` + `delete
# --force` of a container that joins a running container A's pid namespace, as root, without a
# user namespace (`plain`) and joining A's user namespace too (`userns`, A in one of its own);
# `userns-own-pid` is the last one with a pid namespace of its own instead (no late clone, no
# procfs mounter; its init comes from a double clone). `newuser` joins A-plain's pid namespace
# with a new user namespace and no proc mount (the first init enters the pid namespace before it
# makes the user namespace; its late init's procfs comes from the runtime). FSRUN_BASE=path/to/fsrun
# adds `plain` and `newuser` with that binary (`plain-base`, `newuser-base`; before the late entry
# a joined user namespace failed on a cgroup v1 host). Rounds alternate. FSRUN=path/to/fsrun (default: the build next to this tree). Not a pass/fail test.
set -eu

rounds=${1:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "pid-join.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")

work=$(mktemp -d /tmp/fsrun-bench-pidjoin.XXXXXX)
state=$(mktemp -d /run/fsrun-bench-pidjoin.XXXXXX)
cleanup() {
  local id
  for id in a-plain a-userns j; do "$FSRUN" --root "$state" delete --force "$id" >/dev/null 2>&1 || true; done
  rm -rf --one-file-system "$work" "$state"
}
trap cleanup EXIT

# shellcheck source=../../contrib/lib.sh
source "$srcdir/contrib/lib.sh"
cc -O2 -o "$work/timeit" "$here/timeit.c"
mkdir -p "$work/a-plain"
fsrun_make_busybox_rootfs "$work/a-plain/rootfs"
(cd "$work/a-plain" && "$FSRUN" spec)
jq '.process.terminal = false | .process.args = ["sleep", "100000"]' "$work/a-plain/config.json" >"$work/c"
mv "$work/c" "$work/a-plain/config.json"
cp -a "$work/a-plain" "$work/a-userns"
jq '.linux.namespaces += [{"type": "user"}]
  | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
  | .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]' \
  "$work/a-plain/config.json" >"$work/a-userns/config.json"
for a in plain userns; do
  "$FSRUN" --root "$state" run --detach --bundle "$work/a-$a" "a-$a" </dev/null >/dev/null
  pid=$("$FSRUN" --root "$state" state "a-$a" | jq -r .pid)
  cp -a "$work/a-$a" "$work/j-$a"
  jq '.linux.namespaces |= map(if .type == "pid" or (.type == "user" and $a == "userns")
      then .path = "/proc/\($p)/ns/\(.type)" else . end)
    | if $a == "userns" then del(.linux.uidMappings, .linux.gidMappings) else . end
    | .process.args = ["true"]' --arg p "$pid" --arg a "$a" \
    "$work/a-$a/config.json" >"$work/j-$a/config.json"
done
cp -a "$work/j-plain" "$work/j-newuser"
jq '.linux.namespaces += [{"type": "user"}] | .mounts |= map(select(.type != "proc"))
  | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
  | .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]' \
  "$work/j-plain/config.json" >"$work/j-newuser/config.json"
cp -a "$work/j-userns" "$work/j-userns-own-pid"
jq '.linux.namespaces |= map(if .type == "pid" then del(.path) else . end)' \
  "$work/j-userns/config.json" >"$work/j-userns-own-pid/config.json"

# shellcheck source=lib.sh
source "$here/lib.sh"
create_delete() {
  "$work/timeit" /bin/sh -c '"$0" --root "$1" create --bundle "$2" j </dev/null >/dev/null &&
    "$0" --root "$1" delete --force j' "$1" "$state" "$work/j-$2"
}
run_one() {
  case $1 in
    plain | userns | userns-own-pid | newuser) create_delete "$FSRUN" "$1" ;;
    *-base) create_delete "$FSRUN_BASE" "${1%-base}" ;;
  esac
}
runners=(plain userns userns-own-pid newuser)
[ -z "${FSRUN_BASE:-}" ] || runners+=(plain-base newuser-base)
bench_rounds "$rounds" run_one "${runners[@]}"
echo "create + delete joining a pid namespace (${rounds} rounds, load $(cut -d' ' -f1 /proc/loadavg)):"
bench_report 14 "${runners[@]}"
bench_ratio plain plain-base
bench_ratio newuser newuser-base
bench_ratio userns userns-own-pid
