#!/bin/bash
# exec-git.sh [ROUNDS]: what the git protection of a task container (docs/sandbox.md, "Git in a task
# container") adds to one `fsrun exec ... true`: two containers of the same `fsrun bundle`, one
# with the run.fsrun.sandbox.worktree annotation (the per-exec overlay, the allowlist sync after
# the command) and one without it; rounds alternate. FSRUN_BASE=path/to/fsrun adds `git-base`,
# the annotated container exec'd by that binary, and `git-base-aa`, the same again (an A/A pair:
# the noise). EXEC_STATUS_JSON=1: each exec with --status-json, as the Fusion adapter runs it (it
# also counts what the exec left, leftRunning). FSRUN=path/to/fsrun (default: the build next to
# this tree). Root or an ordinary user (the tree and FSRUN readable by it). Not a pass/fail test.
set -eu

rounds=${1:-21}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "exec-git.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")

work=$(mktemp -d /tmp/fsrun-bench-execgit.XXXXXX)
state=$(mktemp -d /run/fsrun-bench-execgit.XXXXXX 2>/dev/null || mktemp -d "$work/state.XXXXXX")
cleanup() {
  "$FSRUN" --root "$state" delete --force bench-git >/dev/null 2>&1 || true
  "$FSRUN" --root "$state" delete --force bench-nogit >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work" "$state"
}
trap cleanup EXIT

wt=$work/repo
git init -q "$wt"
git -C "$wt" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
cc -O2 -o "$work/timeit" "$here/timeit.c"
echo '{}' >"$work/policy.json"
# two bundles, not a copy: an ordinary user's holds a file of mode 0 (`unreadable`) cp cannot read
for b in git nogit; do
  "$FSRUN" --root "$state" bundle --policy "$work/policy.json" --worktree "$wt" --out "$work/$b" -- /bin/sleep 100000 >/dev/null
done
jq 'del(.annotations["run.fsrun.sandbox.worktree"])' "$work/git/config.json" >"$work/nogit/config.json.new"
mv "$work/nogit/config.json.new" "$work/nogit/config.json"
"$FSRUN" --root "$state" run --detach --bundle "$work/git" bench-git >/dev/null
"$FSRUN" --root "$state" run --detach --bundle "$work/nogit" bench-nogit >/dev/null

# shellcheck source=lib.sh
source "$here/lib.sh"
status_args=()
[ -z "${EXEC_STATUS_JSON:-}" ] || status_args=(--status-json "$work/status.json")
run_one() {
  case $1 in
    git) "$work/timeit" "$FSRUN" --root "$state" exec "${status_args[@]}" --cwd "$wt" bench-git true ;;
    nogit) "$work/timeit" "$FSRUN" --root "$state" exec "${status_args[@]}" --cwd "$wt" bench-nogit true ;;
    git-base*) "$work/timeit" "$FSRUN_BASE" --root "$state" exec "${status_args[@]}" --cwd "$wt" bench-git true ;;
  esac
}
runners=(git nogit)
[ -z "${FSRUN_BASE:-}" ] || runners+=(git-base git-base-aa)
bench_rounds "$rounds" run_one "${runners[@]}"
echo "exec ${status_args[0]:-} true ($(id -un), ${rounds} rounds, load $(cut -d' ' -f1 /proc/loadavg), $(find /proc -maxdepth 1 -name "[0-9]*" 2>/dev/null | wc -l) processes):"
bench_report 11 "${runners[@]}"
bench_ratio git nogit
bench_ratio git git-base
bench_ratio git-base-aa git-base
