// Test helpers: temp dirs, and a fake fsrun (a shell script) that records each call and answers
// the way fsrun does.
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls until check() is true (a synchronisation point, not a timing assertion). */
export async function waitFor(what: string, check: () => Promise<boolean>, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${limitMs} ms for ${what}`);
    await sleep(20);
  }
}

/** Runs a host command (git, fsrun list) and collects its output. */
export function runCommand(
  command: string,
  args: string[],
  cwd = "/",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(command, args, { cwd, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c) => (stderr += c.toString("utf8")));
    child.on("error", rejectRun);
    child.on("close", (code) => resolveRun({ code, stdout, stderr }));
  });
}

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

export interface FakeCall {
  pid: number;
  args: string[];
  env: Record<string, string>;
  stdin: string | null;
  /** the pid of the background sleep of FAKE:sleep */
  child: number | null;
}

export interface FakeFsrun {
  dir: string;
  path: string;
  calls(): Promise<FakeCall[]>;
  sandboxCalls(): Promise<FakeCall[]>;
  /** true once a sandbox call has read its stdin and reached its command */
  started(): Promise<boolean>;
  cleanup(): Promise<void>;
}

// The command (the last argument) steers a sandbox call: FAKE:garbage, FAKE:crash, FAKE:badinput,
// FAKE:policy, FAKE:setup, FAKE:sleep (SIGTERM ends it with a result, as fsrun does when the
// command dies of it), FAKE:stubborn (ignores SIGTERM). Otherwise it prints a result whose
// stdout is the run id.
const FAKE_SCRIPT = `#!/bin/sh
dir=__DIR__
call="$dir/calls/$$"
printf '%s\\0' "$@" > "$call.args"
env -0 > "$call.env"
while [ "$1" = --root ]; do shift 2; done
case $1 in
  --version) printf 'fsrun version 9.9.9-fake\\ncommit: fake\\n'; exit 0 ;;
  features) echo '{"linux":{"seccomp":{"enabled":true}},"annotations":{"run.fsrun.landlock":"4"}}'; exit 0 ;;
  list) echo '[]'; exit 0 ;;
  delete) exit 0 ;;
  bundle)
    cat > "$call.stdin"
    out=
    while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
    if grep -q bogus "$call.stdin"; then
      echo 'fsrun: policy (stdin): sandbox.policy.bogus: unknown key' >&2
      exit 1
    fi
    grep -q /nope "$call.stdin" && echo 'fsrun: warning: sandbox: allowedPaths[0]: \`/nope\` does not exist, skipped' >&2
    mkdir -p "$out/rootfs" && echo '{}' > "$out/config.json"
    exit 0 ;;
  sandbox) ;;
  *) echo "fake fsrun: unknown command $1" >&2; exit 1 ;;
esac
cat > "$call.stdin"
run_id=none prev=
for a in "$@"; do
  [ "$prev" = --run-id ] && run_id=$a
  prev=$a last=$a
done
: > "$call.started"
result() { # EXIT SIGNAL
  printf '{"stdout":"%s\\\\n","stderr":"","exitCode":%s,"signal":%s,"timedOut":false,"truncated":false,"durationMs":7,"backend":"fsrun","limits":{"pidsLimit":4096,"network":"none"}}\\n' "$run_id" "$1" "$2"
}
case $last in
  *FAKE:garbage*) echo 'this is not JSON'; echo 'fsrun: something odd' >&2; exit 0 ;;
  *FAKE:crash*) echo 'fsrun: about to crash' >&2; kill -SEGV $$ ;;
  *FAKE:badinput*) echo 'fsrun: sandbox: --timeout-ms: expected a number, got \`x\`' >&2; exit 1 ;;
  *FAKE:policy*) echo 'fsrun: policy (stdin): envAllowlist[0]: not a variable name' >&2; exit 1 ;;
  *FAKE:setup*)
    echo '{"stdout":"","stderr":"","exitCode":125,"signal":null,"timedOut":false,"truncated":false,"durationMs":1,"backend":"fsrun","limits":{},"error":"cannot mount the worktree"}'
    exit 125 ;;
  *FAKE:sleep*)
    trap 'kill $child; wait $child; result null "\\"SIGTERM\\""; exit 143' TERM
    sleep 30 &
    child=$!
    echo $child > "$call.child"
    wait $child
    exit 0 ;;
  *FAKE:stubborn*) trap '' TERM; exec sleep 30 ;;
esac
result 0 null
`;

export async function makeFakeFsrun(): Promise<FakeFsrun> {
  const dir = await tempDir("fsrun-fusion-fake-");
  await mkdir(join(dir, "calls"));
  const path = join(dir, "fsrun");
  await writeFile(path, FAKE_SCRIPT.replace("__DIR__", `'${dir}'`));
  await chmod(path, 0o755);

  const calls = async (): Promise<FakeCall[]> => {
    const files = await readdir(join(dir, "calls"));
    const pids = [...new Set(files.filter((f) => f.endsWith(".args")).map((f) => Number(f.split(".")[0])))];
    const out: FakeCall[] = [];
    for (const pid of pids.sort((a, b) => a - b)) {
      const base = join(dir, "calls", String(pid));
      const read = (ext: string) => readFile(`${base}.${ext}`, "utf8").catch(() => null);
      const args = ((await read("args")) ?? "").split("\0").slice(0, -1);
      const env: Record<string, string> = {};
      for (const entry of ((await read("env")) ?? "").split("\0")) {
        const eq = entry.indexOf("=");
        if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
      }
      const child = await read("child");
      out.push({ pid, args, env, stdin: await read("stdin"), child: child === null ? null : Number(child) });
    }
    return out;
  };
  return {
    dir,
    path,
    calls,
    sandboxCalls: async () => (await calls()).filter((c) => c.args.includes("sandbox")),
    started: async () => (await readdir(join(dir, "calls"))).some((f) => f.endsWith(".started")),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
