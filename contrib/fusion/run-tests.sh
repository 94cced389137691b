#!/bin/bash
# Builds the Fusion adapter with tsc and runs its tests with node's own test runner.
#
#   contrib/fusion/run-tests.sh [FSRUN]
#
# FSRUN (the argument, else $FSRUN) is the fsrun binary for the integration tests; without it, or
# when not root, they are skipped with the reason. Prints TAP with one line per test: node nests
# subtests (and older nodes wrap each file in one), so the result lines are flattened here and a
# failure's diagnostics become `#` lines. Works with node 18 (Debian 12) and later.
# FSRUN_FUSION_OUT: where tsc writes (default contrib/fusion/dist). Exit status 1 when the build
# or a test failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fsrun=${1:-${FSRUN:-}}
if [ -n "$fsrun" ]; then
  [[ $fsrun == */* ]] || fsrun=$(command -v "$fsrun") || { echo "run-tests.sh: $1: not found" >&2; exit 2; }
  fsrun=$(realpath "$fsrun") # the tests run from elsewhere
fi
out=${FSRUN_FUSION_OUT:-$here/dist}

for tool in node tsc; do
  if ! command -v "$tool" >/dev/null; then
    echo "1..0 # SKIP $tool is not installed (Debian packages nodejs node-typescript)"
    exit 0
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusion-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# --- build: stale output of renamed files must not run ---
rm -rf "$out/src" "$out/test"
if ! tsc -p "$here" --outDir "$out" >"$tmp/tsc.log" 2>&1; then
  echo "not ok 1 - build: tsc -p contrib/fusion"
  head -n 30 "$tmp/tsc.log" | sed 's/^/# /'
  echo "1..1"
  exit 1
fi

# --- run ---
reporter=()
# --test-reporter came with node 18.15/19.6; before it, `node --test` printed TAP anyway
node --help 2>/dev/null | grep -q -- '--test-reporter' && reporter=(--test-reporter=tap)
status=0
FSRUN=$fsrun node --test "${reporter[@]}" "$out"/test/*.test.js >"$tmp/raw.tap" 2>&1 </dev/null || status=$?

# --- flatten: a result line whose predecessor is more indented is a parent (its subtests came
# first); parents count only when they failed without a failing subtest (a hook, a crash) ---
awk -v status="$status" '
  function indent(s) { match(s, /^ */); return RLENGTH }
  function emit(ok, name, ind,   k) {
    n++
    print (ok ? "ok " : "not ok ") n " - " name
    if (!ok) { failed++; for (k = 0; k < ind; k++) failseen[k] = 1 }
    else if (name ~ / # [Ss][Kk][Ii][Pp]/) skipped++
    else passed++
  }
  BEGIN { n = 0; passed = 0; failed = 0; skipped = 0; prev = -1; yaml = 0; show = 0 }
  yaml {
    if ($0 ~ /^ *\.\.\.$/) { yaml = 0; next }
    if (show && $0 ~ /^ *stack:/) show = 0
    if (show && shown < 20 && $0 !~ /^ *(duration_ms|location):/) { line = $0; sub(/^ +/, "", line); print "# " line; shown++ }
    next
  }
  /^ *(not )?ok [0-9]+/ {
    ind = indent($0)
    bad = ($0 ~ /^ *not ok /)
    name = $0
    sub(/^ *(not )?ok [0-9]+( - )?/, "", name)
    parent = (prev > ind)
    prev = ind
    show = 0
    if (!parent) { emit(!bad, name, ind); show = bad }
    else if (bad && !failseen[ind]) { emit(0, name " (outside its subtests)", ind); show = 1 }
    failseen[ind] = 0
    next
  }
  /^ *---$/ { yaml = 1; shown = 0; next }
  END {
    if (n == 0) { n++; failed++; print "not ok " n " - node --test reported no results (status " status ")" }
    else if (status != 0 && failed == 0) { n++; failed++; print "not ok " n " - node --test exited with status " status }
    print "1.." n
    print "# fusion: " passed " passed, " failed " failed, " skipped " skipped"
    exit (failed > 0 ? 1 : 0)
  }
' "$tmp/raw.tap"
result=$?
if [ "$result" != 0 ] && ! grep -qE '^ *(not )?ok ' "$tmp/raw.tap"; then
  tail -n 20 "$tmp/raw.tap" | sed 's/^/# /'
fi
exit "$result"
