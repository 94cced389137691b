#!/bin/bash
# fusion-modes.sh [ROUNDS]: what one command costs through the Fusion adapter (contrib/fusion), per
# mode, medians in ms of `backend.run("true")` as Fusion's executor sees it (node's spawn, fsrun,
# the JSON or the exec, the audit events):
#   native          NativeBackend: /bin/sh -c true on the host (the floor)
#   one-shot        FsrunBackend, a fresh `fsrun sandbox --json` per command
#   task-container  FsrunBackend, one container per task and an `fsrun exec` per command
# Rounds alternate (the order rotates each round). Also prints the CLI-level medians of the same
# two fsrun commands (timeit, no node). Run it as root and as an ordinary user (e.g. through
# setpriv; the tree and FSRUN must be readable by it); the task-container line says what it really
# ran as. FSRUN=path/to/fsrun (default: the build next to this tree). Not a pass/fail test.
set -eu

rounds=${1:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${here%/tests/bench}
FSRUN=${FSRUN:-$srcdir/build/plain/fsrun}
[ -x "$FSRUN" ] || { echo "fusion-modes.sh: no fsrun at $FSRUN (set FSRUN)" >&2; exit 1; }
FSRUN=$(realpath "$FSRUN")
fusion=$srcdir/contrib/fusion

work=$(mktemp -d /tmp/fsrun-bench-fusion.XXXXXX)
state=$(mktemp -d /run/fsrun-bench-fusion.XXXXXX 2>/dev/null || mktemp -d "$work/state.XXXXXX")
cleanup() {
  "$FSRUN" --root "$state" delete --force bench-fusion-kept >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work" "$state"
}
trap cleanup EXIT

[ -x "$fusion/node_modules/.bin/tsc" ] || (cd "$fusion" && npm ci --no-audit --no-fund --prefer-offline >/dev/null)
"$fusion/node_modules/.bin/tsc" -p "$fusion" --outDir "$work/dist"
wt=$work/repo
git init -q "$wt"
git -C "$wt" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init

cat >"$work/bench.js" <<'JS'
const { FsrunBackend, NativeBackend } = require(process.argv[2]);
const [fsrun, state, wt, rounds] = process.argv.slice(3);
const median = (a) => { const s = [...a].sort((x, y) => x - y); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
(async () => {
  const policy = { allowNetwork: false, allowedPaths: [] };
  const make = {
    native: () => new NativeBackend(),
    "one-shot": () => new FsrunBackend({ fsrunPath: fsrun, stateRoot: state }),
    "task-container": () => new FsrunBackend({ fsrunPath: fsrun, stateRoot: state, mode: "task-container" }),
  };
  const names = Object.keys(make);
  const backends = {};
  for (const n of names) {
    backends[n] = make[n]();
    await backends[n].prepare({ taskId: "bench", runId: n, worktreePath: wt, policy });
  }
  const opts = { cwd: wt, timeoutMs: 0, maxBuffer: 1 << 20 };
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) await backends[n].run("true", opts); // warm-up
  for (let i = 0; i < Number(rounds); i++)
    for (let k = 0; k < names.length; k++) {
      const n = names[(i + k) % names.length];
      const t0 = process.hrtime.bigint();
      const r = await backends[n].run("true", opts);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.exitCode !== 0) throw new Error(`${n}: exit ${r.exitCode} ${r.stderr}`);
      samples[n].push(ms);
    }
  const modes = names.map((n) => `${n}${n === "task-container" ? ` (runs as ${backends[n].effectiveMode})` : ""}`);
  for (const [i, n] of names.entries()) console.log(`  ${modes[i].padEnd(42)} ${median(samples[n]).toFixed(1).padStart(7)} ms per run()`);
  for (const n of names) await backends[n].dispose();
})().catch((e) => { console.error(e); process.exit(1); });
JS

echo "through the adapter (node ${rounds} rounds, $(id -un)):"
node "$work/bench.js" "$work/dist/src/index.js" "$FSRUN" "$state" "$wt" "$rounds"

# the same two commands without node
cc -O2 -o "$work/timeit" "$here/timeit.c"
echo '{}' >"$work/policy.json"
"$FSRUN" --root "$state" bundle --policy "$work/policy.json" --worktree "$wt" --out "$work/kept" -- /bin/sleep 100000 >/dev/null
if "$FSRUN" --root "$state" run --detach --bundle "$work/kept" bench-fusion-kept >/dev/null 2>&1 &&
  "$FSRUN" --root "$state" exec bench-fusion-kept true >/dev/null 2>&1; then
  runners=(sandbox-json exec)
else
  runners=(sandbox-json) # exec cannot join the container (an fsrun before e55b6e3, as a user)
fi
# shellcheck source=lib.sh
source "$here/lib.sh"
run_one() {
  case $1 in
    sandbox-json) "$work/timeit" "$FSRUN" --root "$state" sandbox --json --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c true ;;
    exec) "$work/timeit" "$FSRUN" --root "$state" exec --cwd "$wt" bench-fusion-kept /bin/sh -c true ;;
  esac
}
bench_rounds "$rounds" run_one "${runners[@]}"
echo "the fsrun commands alone (timeit, ${rounds} rounds):"
bench_report 14 "${runners[@]}"
