#!/bin/bash
# Builds the Fusion adapter and runs its tests with node's own test runner.
#
#   contrib/fusion/run-tests.sh FSRUN
#
# FSRUN (the argument, else $FSRUN) is the fsrun binary the integration tests run. `npm ci` installs
# TypeScript and @types/node from package-lock.json, tsc builds, and node --test runs the tests:
# as root, the integration tests run twice, as root and as an ordinary user made here (useradd,
# removed at the end; setpriv runs node as it); otherwise once, as the caller. There is no skip:
# a missing tool, a failed install or build, or a missing FSRUN is a failure. Prints TAP with one
# line per test (node's nested results flattened; a failure's diagnostics become `#` lines).
# FSRUN_FUSION_OUT: where tsc writes (default contrib/fusion/dist). Exit status 1 when anything failed.
# Each node run has a TMPDIR and an XDG_RUNTIME_DIR of its own in this script's temporary directory,
# where the tests and the adapter make everything (work dirs, bundles, task containers' dirs): what
# is left there when the tests end is one failure naming it. A TERM or INT is passed to node, whose
# handlers delete what the tests made; what they could not is deleted here on the way out.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"
out=${FSRUN_FUSION_OUT:-$here/dist}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusion-tests.XXXXXX") || exit 1
chmod 755 "$tmp"
user=""
fsrun=""
# the runs' own TMPDIRs and XDG_RUNTIME_DIRs (root's and the ordinary user's)
scopes=("$tmp/root-tmp" "$tmp/root-run" "$tmp/user-tmp" "$tmp/run")

# state_roots: the tests' state roots (WORK/state) and fsrun's default one in an XDG_RUNTIME_DIR
# (DIR/fsrun: fsrun makes it for the ordinary user whatever --root says, and keeps its own files
# there, so only a container in it is a leftover)
state_roots() {
  find "${scopes[@]}" -mindepth 2 -maxdepth 2 -name state -type d 2>/dev/null
  find "$tmp/run" "$tmp/root-run" -mindepth 1 -maxdepth 1 -name fsrun -type d 2>/dev/null
}

# sweep: what the tests left in the scopes deleted: the containers of a state root there (thawed
# first), then the mounts under $tmp; the user's processes are killed with the user
sweep() {
  local root id mnt
  if [ -n "$fsrun" ]; then
    for root in $(state_roots); do
      for id in $("$fsrun" --root "$root" list --quiet 2>/dev/null); do
        "$fsrun" --root "$root" resume "$id" >/dev/null 2>&1
        "$fsrun" --root "$root" delete --force "$id" >/dev/null 2>&1
      done
    done
  fi
  for mnt in $(awk -v dir="$tmp/" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$mnt" 2>/dev/null
  done
}

cleanup() {
  if [ -n "$user" ] && id "$user" >/dev/null 2>&1; then
    left=$(pgrep -u "$user" 2>/dev/null | tr '\n' ' ')
    [ -n "$left" ] && kill -KILL $left 2>/dev/null
  fi
  sweep
  if [ -n "$user" ] && id "$user" >/dev/null 2>&1; then
    userdel -r "$user" >/dev/null 2>&1
    sed -i "/^$user:/d" /etc/subuid /etc/subgid 2>/dev/null
  fi
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# node runs in the background and is waited for (lib.sh's fsrun_wait_child): a TERM or INT to this
# script reaches it at once (as TERM: an asynchronous command ignores INT) and its handlers run
# before this script goes on
FSRUN_CHILD="" stopped=""
stop() {
  stopped=$1
  [ -z "$FSRUN_CHILD" ] || kill -TERM "$FSRUN_CHILD" 2>/dev/null
}
trap 'stop TERM' TERM
trap 'stop INT' INT
wait_node() { # wait_node PID: node's exit status, once it has ended; a stopped run ends here
  local rc=0
  fsrun_wait_child "$1" || rc=$?
  [ -z "$stopped" ] || exit 1
  return "$rc"
}

die() { # die NAME LOG: one failed result, the log's end as diagnostics
  echo "not ok 1 - $1"
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 30 "$2" | sed 's/^/# /'
  echo "1..1"
  exit 1
}

fsrun=${1:-${FSRUN:-}}
[ -n "$fsrun" ] || die "FSRUN: the fsrun binary to test against is not given (run-tests.sh FSRUN)"
[[ $fsrun == */* ]] || fsrun=$(command -v "$fsrun") || die "FSRUN: $1 not found"
fsrun=$(realpath "$fsrun")
[ -x "$fsrun" ] || die "FSRUN: $fsrun is not executable"
for tool in node npm git; do
  command -v "$tool" >/dev/null || die "$tool is not installed (Debian packages nodejs npm git)"
done

# --- install (from the lockfile) and build: stale output of renamed files must not run ---
(cd "$here" && npm ci --no-audit --no-fund --prefer-offline) >"$tmp/npm.log" 2>&1 || die "npm ci in contrib/fusion" "$tmp/npm.log"
rm -rf "$out/src" "$out/test"
"$here/node_modules/.bin/tsc" -p "$here" --outDir "$out" >"$tmp/tsc.log" 2>&1 || die "build: tsc -p contrib/fusion" "$tmp/tsc.log"

reporter=(--test-reporter=tap)
status=0
mkdir -m 700 "$tmp/root-tmp" "$tmp/root-run"
FSRUN=$fsrun FUSION_PACKAGE_DIR=$here TMPDIR=$tmp/root-tmp XDG_RUNTIME_DIR=$tmp/root-run \
  node --test "${reporter[@]}" "$out"/test/*.test.js >"$tmp/raw.tap" 2>&1 </dev/null &
wait_node $! || status=$?

# --- the integration tests again as an ordinary user ---
if [ "$(id -u)" = 0 ]; then
  user=fusiont$$
  if ! useradd -m "$user" >"$tmp/useradd.log" 2>&1; then
    echo "not ok - useradd $user" >>"$tmp/raw.tap"
    status=1
  else
    # the user's copy of the build (the tests run from where it can read)
    cp -r "$out" "$tmp/dist" && chmod -R a+rX "$tmp/dist"
    mkdir -m 700 "$tmp/run" "$tmp/user-tmp" && chown "$user:" "$tmp/run" "$tmp/user-tmp"
    setpriv --reuid="$user" --regid="$user" --init-groups \
      env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="/home/$user" XDG_RUNTIME_DIR="$tmp/run" \
      TMPDIR="$tmp/user-tmp" FSRUN="$fsrun" FUSION_TEST_AS=user node --test "${reporter[@]}" \
      "$tmp/dist/test/integration.test.js" >>"$tmp/raw.tap" 2>&1 </dev/null &
    wait_node $! || status=$?
  fi
fi

# --- what the tests left: each entry of the runs' TMPDIRs and XDG_RUNTIME_DIRs (fsrun's own
# state root aside) and each container in fsrun's own state root is a failure that names it; then
# deleted ---
n_left=0
while read -r entry; do
  [ -n "$entry" ] || continue
  n_left=$((n_left + 1))
  echo "not ok $((900 + n_left)) - fusion: $entry was left behind by the tests" >>"$tmp/raw.tap"
done < <(
  find "${scopes[@]}" -mindepth 1 -maxdepth 1 ! \( -name fsrun -type d \) 2>/dev/null | sed "s|^$tmp/||"
  for root in $(find "$tmp/run" "$tmp/root-run" -mindepth 1 -maxdepth 1 -name fsrun -type d 2>/dev/null); do
    "$fsrun" --root "$root" list --quiet 2>/dev/null | sed "s|^|container |; s|\$| (in ${root#"$tmp"/})|"
  done
)
sweep

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
