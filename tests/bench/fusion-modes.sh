#!/bin/bash
# fusion-modes.sh [ROUNDS]: what one command costs through the Fusion adapter (contrib/fusion), per
# mode, medians in ms of `backend.run("true")` as Fusion's executor sees it (node's spawn, fsrun,
# the JSON or the exec, the audit events):
#   native          NativeBackend: /bin/sh -c true on the host (the floor)
#   one-shot        FsrunBackend, a fresh `fsrun sandbox --json` per command
#   task-container  FsrunBackend, one container per task and an `fsrun exec` per command
#   task-container, one left   the same, in a container where a process was left in a session of
#                   its own (`setsid -w`, a `sleep`): each run is followed by a pause and a resume
# Each with the median wall time and the mean CPU time (node's and the fsrun processes it reaped).
# Rounds alternate (the order rotates each round). Also prints the CLI-level medians (timeit, no
# node) of `sandbox --json`, `exec`, `exec --status-json` (the adapter's: it also counts what the
# exec left, for leftRunning) and `pause --tamper-json` + `resume` added (what the adapter runs
# after a run that left a process; only where the container can be frozen). Run it as root and as
# an ordinary user (e.g. through setpriv; the tree and FSRUN must be readable by it); the
# task-container line says what it really ran as. FSRUN=path/to/fsrun (default: the build next to
# this tree). Not a pass/fail test.
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
const { readFileSync } = require("node:fs");
const { execSync } = require("node:child_process");
const [fsrun, state, wt, rounds] = process.argv.slice(3);
const median = (a) => { const s = [...a].sort((x, y) => x - y); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
(async () => {
  const policy = { allowNetwork: false, allowedPaths: [] };
  const make = {
    native: () => new NativeBackend(),
    "one-shot": () => new FsrunBackend({ fsrunPath: fsrun, stateRoot: state }),
    "task-container": () => new FsrunBackend({ fsrunPath: fsrun, stateRoot: state, mode: "task-container" }),
    "task-container, one left": () => new FsrunBackend({ fsrunPath: fsrun, stateRoot: state, mode: "task-container" }),
  };
  const names = Object.keys(make);
  const backends = {};
  const opts = { cwd: wt, timeoutMs: 0, maxBuffer: 1 << 20 };
  for (const n of names) {
    backends[n] = make[n]();
    await backends[n].prepare({ taskId: "bench", runId: n.replace(/\W+/g, "-"), worktreePath: wt, policy });
  }
  // a process in a session of its own stays (a dev server): every run of that task is followed by
  // a pause (fsrun exec says leftRunning true) and the next one by a resume
  const left = backends["task-container, one left"];
  await left.run("setsid -w sh -c 'sleep 100000 </dev/null >/dev/null 2>&1 &'", opts);
  const comms = await left.run("cat /proc/[0-9]*/comm", opts);
  if (comms.stdout.split("\n").filter((c) => c === "sleep").length < 2) throw new Error(`no process was left: ${comms.stdout}`);
  // CPU: node's own and its reaped children's (fsrun and what it waited for), in clock ticks
  const cpuTicks = () => readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ").slice(11, 15).reduce((a, t) => a + Number(t), 0);
  const tick = 1000 / Number(execSync("getconf CLK_TCK").toString().trim());
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, 0]));
  for (const n of names) await backends[n].run("true", opts); // warm-up
  for (let i = 0; i < Number(rounds); i++)
    for (let k = 0; k < names.length; k++) {
      const n = names[(i + k) % names.length];
      const [t0, c0] = [process.hrtime.bigint(), cpuTicks()];
      const r = await backends[n].run("true", opts);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      cpu[n] += cpuTicks() - c0;
      if (r.exitCode !== 0) throw new Error(`${n}: exit ${r.exitCode} ${r.stderr}`);
      samples[n].push(ms);
    }
  const modes = names.map((n) => `${n}${n.startsWith("task-container") ? ` (runs as ${backends[n].effectiveMode})` : ""}`);
  for (const [i, n] of names.entries())
    console.log(`  ${modes[i].padEnd(50)} ${median(samples[n]).toFixed(1).padStart(7)} ms per run()  ${((cpu[n] * tick) / Number(rounds)).toFixed(1).padStart(6)} ms cpu (mean)`);
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
  runners=(sandbox-json exec exec-status)
  # what the adapter adds after a run that left a process (a freezer: root, a delegated cgroup)
  if "$FSRUN" --root "$state" pause bench-fusion-kept >/dev/null 2>&1 &&
    "$FSRUN" --root "$state" resume bench-fusion-kept >/dev/null 2>&1; then
    runners+=(pause-resume)
  fi
else
  runners=(sandbox-json) # exec cannot join the container (an fsrun before e55b6e3, as a user)
fi
# shellcheck source=lib.sh
source "$here/lib.sh"
run_one() {
  case $1 in
    sandbox-json) "$work/timeit" "$FSRUN" --root "$state" sandbox --json --policy "$work/policy.json" --worktree "$wt" -- /bin/sh -c true ;;
    exec) "$work/timeit" "$FSRUN" --root "$state" exec --cwd "$wt" bench-fusion-kept /bin/sh -c true ;;
    exec-status) "$work/timeit" "$FSRUN" --root "$state" exec --status-json "$work/status.json" --cwd "$wt" bench-fusion-kept /bin/sh -c true ;;
    pause-resume) # the two commands' times added
      {
        "$work/timeit" "$FSRUN" --root "$state" pause --tamper-json "$work/paused.json" bench-fusion-kept
        "$work/timeit" "$FSRUN" --root "$state" resume bench-fusion-kept
      } | awk '{ w += $1; c += $2; s += $3 } END { print w, c, s }' ;;
  esac
}
bench_rounds "$rounds" run_one "${runners[@]}"
echo "the fsrun commands alone (timeit, ${rounds} rounds):"
bench_report 14 "${runners[@]}"
