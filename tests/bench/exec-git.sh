#!/bin/bash
# exec-git.sh [ROUNDS]: what the git protection of a task container (docs/sandbox.md, "Git in a task
# container") adds to one `fsrun exec ... true`: two containers of the same `fsrun bundle`, one
# with the run.fsrun.sandbox.worktree annotation (the per-exec overlay, the allowlist sync after
# the command) and one without it; rounds alternate. FSRUN_BASE=path/to/fsrun adds `git-base`,
# the annotated container exec'd by that binary. FSRUN=path/to/fsrun (default: the build next to
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
"$FSRUN" --root "$state" bundle --policy "$work/policy.json" --worktree "$wt" --out "$work/git" -- /bin/sleep 100000 >/dev/null
cp -a "$work/git" "$work/nogit"
jq 'del(.annotations["run.fsrun.sandbox.worktree"])' "$work/git/config.json" >"$work/nogit/config.json"
"$FSRUN" --root "$state" run --detach --bundle "$work/git" bench-git >/dev/null
"$FSRUN" --root "$state" run --detach --bundle "$work/nogit" bench-nogit >/dev/null

# shellcheck source=lib.sh
source "$here/lib.sh"
run_one() {
  case $1 in
    git) "$work/timeit" "$FSRUN" --root "$state" exec --cwd "$wt" bench-git true ;;
    nogit) "$work/timeit" "$FSRUN" --root "$state" exec --cwd "$wt" bench-nogit true ;;
    git-base) "$work/timeit" "$FSRUN_BASE" --root "$state" exec --cwd "$wt" bench-git true ;;
  esac
}
runners=(git nogit)
[ -z "${FSRUN_BASE:-}" ] || runners+=(git-base)
bench_rounds "$rounds" run_one "${runners[@]}"
echo "exec true ($(id -un), ${rounds} rounds, load $(cut -d' ' -f1 /proc/loadavg)):"
bench_report 10 "${runners[@]}"
bench_ratio git nogit
bench_ratio git git-base
