// The adapter against the real fsrun ($FSRUN) over a linked git worktree. run-tests.sh runs this
// file as root and again as an ordinary user it makes (FUSION_TEST_AS names which).
import * as assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import type { SpawnOptions } from "node:child_process";
import { constants as fsConstants, createWriteStream, rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, open, readFile, readdir, readlink, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createDeflate } from "node:zlib";
import { constants as osConstants, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, before, test } from "node:test";

import { FsrunBackend, FsrunError, FsrunPolicyError, FsrunSetupError, FsrunUnavailableError, HOST_GIT_CANNOT_DISARM, HOST_GIT_SAFE_ARGS, isSandboxOf, sandboxIdStem } from "../src/index";
import type { FsrunBackendOptions, FsrunRunOptions, SandboxAuditEvent, SandboxPolicy } from "../src/index";
import { privateDir } from "../src/private-dir";
import { assertOneOutcomeEach, runCommand, tempDir, makeWorktree, processExists, waitFor, git, WAIT_MAX_MS } from "./helpers";

const FSRUN = process.env.FSRUN ?? "";
const WHO = process.env.FUSION_TEST_AS ?? (process.getuid?.() === 0 ? "root" : "user");
const root = process.getuid?.() === 0;
if (FSRUN === "") throw new Error("FSRUN is not set: the fsrun binary to test against (run-tests.sh FSRUN)");

let work = "";
let worktree = "";
let stateRoot = "";
let readOnly = "";
let events: SandboxAuditEvent[] = [];
const backends: FsrunBackend[] = [];
let seq = 0;

const basePolicy = (): SandboxPolicy => ({ allowNetwork: false, allowedPaths: [readOnly], envAllowlist: ["VISIBLE"] });
const opts = (extra: Partial<FsrunRunOptions> = {}): FsrunRunOptions => ({ cwd: worktree, timeoutMs: 0, maxBuffer: 1 << 20, ...extra });

async function backend(options: FsrunBackendOptions = {}, policy: SandboxPolicy = basePolicy(), ids = { taskId: `it-${WHO}`, runId: `r${++seq}` }): Promise<FsrunBackend> {
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), ...options });
  backends.push(b);
  await b.prepare({ ...ids, worktreePath: worktree, policy });
  return b;
}

async function containers(wanted: (id: string) => boolean = () => true): Promise<string[]> {
  const r = await runCommand(FSRUN, ["--root", stateRoot, "list", "--quiet"]);
  return r.stdout.split("\n").filter((id) => id !== "" && wanted(id));
}

/** the containers of fsrun sandbox --task-id it-$WHO --run-id runId */
const sandboxesOf = (runId: string, taskId = `it-${WHO}`) => containers((id) => isSandboxOf(id, taskId, runId));

/** The pid of the `fsrun sandbox` of a run (this process's own descendant), found by its --run-id. */
async function fsrunPidOf(runId: string): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0");
    const i = args.indexOf("--run-id");
    if (args.includes("sandbox") && i > 0 && args[i + 1] === runId && Number(await ppidOf(Number(entry))) === process.pid) return Number(entry);
  }
  throw new Error(`no fsrun sandbox with --run-id ${runId}`);
}

/** A loose object of `mib` MiB of zeros (its zlib: a thousandth of that) for a name it does not
 * hash to: fsrun's git sync inflates and hashes all of it, seconds, before it finds that out. */
async function writeBomb(path: string, mib: number): Promise<void> {
  async function* data() {
    yield Buffer.from(`blob ${mib << 20}\0`);
    const zeros = Buffer.alloc(1 << 20);
    for (let i = 0; i < mib; i++) yield zeros;
  }
  await pipeline(Readable.from(data()), createDeflate({ level: 9 }), createWriteStream(path));
}

/** pid has a file open whose path ends in suffix (false when pid or its fds cannot be read). */
async function hasOpen(pid: number, suffix: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")).endsWith(suffix)) return true;
  return false;
}

/** The per-run git dirs of a run's sandbox: in the state root, or an ordinary user's in /dev/shm. */
async function runDirsOf(runId: string): Promise<string[]> {
  const id = `${sandboxIdStem(`it-${WHO}`, runId)}__`; // the container id up to its random part
  const here = (await readdir(stateRoot).catch(() => [] as string[])).filter((n) => n.startsWith(`.sandbox-git.${id}`));
  const shm = (await readdir("/dev/shm").catch(() => [] as string[])).filter((n) => n.startsWith("fsrun-git.") && n.includes(`.${id}`));
  return [...here, ...shm];
}

async function ppidOf(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return /^PPid:\s+(\d+)/m.exec(status)?.[1] ?? "";
}

/** Does this binary report a signal death as exitCode null (json-contract.md)? */
async function binaryHasNullExitCode(): Promise<boolean> {
  const r = await runCommand("/bin/sh", ["-c", `echo '{}' | "$0" --root "$1" sandbox --json --policy - --worktree "$2" -- sh -c 'kill -KILL $$'`, FSRUN, stateRoot, worktree]);
  return (JSON.parse(r.stdout) as { exitCode: unknown }).exitCode === null;
}

before(async () => {
  work = await tempDir("fsrun-fusion-it-");
  worktree = await makeWorktree(work, "task-1");
  stateRoot = join(work, "state");
  readOnly = join(work, "read-only");
  await mkdir(readOnly);
  await writeFile(join(readOnly, "file"), "ro-content");
});

/**
 * Deletes the containers left in the state root (thawed first) and a task container's own
 * directory (its bundle's parent): what a failed test or an interrupted run would leave running
 * once `work` is gone. Synchronous, for a signal's handler too. Returns their ids.
 */
function sweepContainers(): string[] {
  if (stateRoot === "") return [];
  const fsrun = (...args: string[]) => spawnSync(FSRUN, ["--root", stateRoot, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const ids = (fsrun("list", "--quiet").stdout ?? "").split("\n").filter((id) => id !== "");
  for (const id of ids) {
    let bundle = "";
    try {
      bundle = (JSON.parse(fsrun("state", id).stdout ?? "") as { bundle?: string }).bundle ?? "";
    } catch {
      /* no state to read: delete it all the same */
    }
    fsrun("resume", id);
    fsrun("delete", "--force", id);
    if (basename(dirname(bundle)).startsWith("fsrun-fusion-task-")) rmSync(dirname(bundle), { recursive: true, force: true });
  }
  return ids;
}

// a run stopped by its time limit or by hand (SIGTERM, SIGINT) runs no after(): what it made goes here
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.prependListener(sig, () => {
    sweepContainers();
    if (work !== "") rmSync(work, { recursive: true, force: true });
    process.exit(128 + osConstants.signals[sig]);
  });
}

after(async () => {
  const failed: string[] = [];
  for (const b of backends) await b.dispose().catch((e: unknown) => failed.push((e as Error).message));
  const left = sweepContainers();
  await rm(work, { recursive: true, force: true });
  assert.deepEqual(left, [], "containers left in the state root");
  assert.deepEqual(failed, [], "dispose() failed");
});

test(`[${WHO}] capabilities are the seed's shape and truthful for this caller`, async () => {
  const b = await backend({}, { ...basePolicy(), memoryLimitMb: 256 });
  const caps = b.capabilities();
  assert.equal(caps.filesystemIsolation, "strong");
  assert.equal(caps.supportsLinux, true);
  assert.equal(caps.requiresInstall, true);
  const r = await b.run("true", opts());
  // "advanced" exactly when the memory limit is really enforced for this caller
  assert.equal(caps.resourceLimits === "advanced", r.limits.memoryLimitMb === 256, JSON.stringify({ caps, limits: r.limits }));
  if (root) assert.equal(caps.resourceLimits, "advanced");
  if (!root && r.limits.memoryLimitMb === undefined) assert.equal(caps.resourceLimits, "basic");
});

test(`[${WHO}] one-shot: output, a file in the worktree, exec-like env and cwd`, async () => {
  const b = await backend();
  process.env.VISIBLE = "from-process";
  try {
    const r = await b.run('echo "v=$VISIBLE h=$HIDDEN" > out.txt; cat out.txt; cat ' + join(readOnly, "file"), opts({ env: { VISIBLE: "yes", HIDDEN: "no" } }));
    assert.equal(r.stdout, "v=yes h=\nro-content");
    assert.equal(r.exitCode, 0);
    assert.equal(r.signal, null);
    assert.equal(await readFile(join(worktree, "out.txt"), "utf8"), "v=yes h=\n");
    // without opts.env the process's environment is the source, as exec does
    assert.equal((await b.run('echo "v=$VISIBLE"', opts())).stdout, "v=from-process\n");
  } finally {
    delete process.env.VISIBLE;
  }
  await mkdir(join(worktree, "pkg"), { recursive: true });
  assert.equal((await b.run("pwd", opts({ cwd: join(worktree, "pkg") }))).stdout, `${worktree}/pkg\n`);
  const w = await b.run(`echo x > ${readOnly}/f; echo $?`, opts());
  assert.notEqual(w.stdout, "0\n");
});

// review19 #14: fsrun sandbox gives the command the allowlisted variables of its own environment,
// which also choose fsrun's state root (XDG_RUNTIME_DIR), the tools it runs (PATH) and its buses
test(`[${WHO}] one-shot: the command's allowlisted XDG_RUNTIME_DIR, PATH and DBUS_* reach the command, never fsrun`, async () => {
  const own = join(work, "xdg-own");
  const theirs = join(work, "xdg-cmd");
  await mkdir(own, { mode: 0o700 });
  await mkdir(theirs, { mode: 0o700 });
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = own;
  try {
    const policy = { ...basePolicy(), envAllowlist: ["VISIBLE", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"] };
    const b = await backend({ stateRoot: undefined }, policy);
    const env = { VISIBLE: "v'q", XDG_RUNTIME_DIR: theirs, DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent", PATH: `/cmd-first:${process.env.PATH}` };
    const r = await b.run('printf "%s\\n" "$VISIBLE" "$XDG_RUNTIME_DIR" "$DBUS_SESSION_BUS_ADDRESS" "${PATH%%:*}"', opts({ env }));
    assert.equal(r.stdout, `v'q\n${theirs}\nunix:path=/nonexistent\n/cmd-first\n`, r.stderr);
    // fsrun's state root is its own environment's: the command's XDG_RUNTIME_DIR held none
    assert.deepEqual(await readdir(theirs), []);
    if (!root) assert.ok((await readdir(own)).includes("fsrun"), "the ordinary user's state root is $XDG_RUNTIME_DIR/fsrun of fsrun's own environment");
    // allowlisted but not in opts.env: the command has none, not fsrun's
    const unset = await b.run('echo "x=${XDG_RUNTIME_DIR-unset}"', opts({ env: { VISIBLE: "v" } }));
    assert.equal(unset.stdout, "x=unset\n");
  } finally {
    if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = saved;
  }
});

// review21 L5: an allowlisted variable fsrun also reads (XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: where
// the user's global git config is, which fsrun watches for tamper) or that the loader reads
// (LD_LIBRARY_PATH) reaches the command only; fsrun's own environment is the adapter's. Seen to
// fail with fsrun-cli.ts's FSRUN_OWN_ENV without XDG_CONFIG_HOME and one-shot-env.ts passing the
// other names to fsrun as before: fsrun's environ held the decoys, and no `config:global:` tamper.
test(`[${WHO}] one-shot: the command's allowlisted XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL and LD_LIBRARY_PATH reach the command, never fsrun`, async () => {
  const own = join(work, "config-own");
  const decoy = join(work, "config-decoy");
  await mkdir(join(own, "git"), { recursive: true });
  await mkdir(decoy);
  const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL };
  process.env.XDG_CONFIG_HOME = own;
  process.env.GIT_CONFIG_GLOBAL = join(own, "global");
  const go = join(worktree, "env-go");
  try {
    const names = ["VISIBLE", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "LD_LIBRARY_PATH"];
    const b = await backend({}, { ...basePolicy(), writablePaths: [own], envAllowlist: names });
    const runId = `r${seq}-1`; // the backend's first run
    spawnSync("mkfifo", [go]);
    const env = { VISIBLE: "v", XDG_CONFIG_HOME: decoy, GIT_CONFIG_GLOBAL: join(decoy, "global"), LD_LIBRARY_PATH: decoy };
    const script = `printf '%s\\n' "$XDG_CONFIG_HOME" "$GIT_CONFIG_GLOBAL" "$LD_LIBRARY_PATH" "\${FUSION_SANDBOX_ENV-gone}"; printf '[core]\\n\\tfsmonitor = x\\n' >'${own}/git/config'; : >env-started; read x <env-go`;
    const run = b.run(script, opts({ env }));
    await waitFor("the command to start", () => readFile(join(worktree, "env-started")).then(() => true, () => false));
    const pid = await fsrunPidOf(runId);
    const environ = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
    await writeFile(go, "go\n");
    const r = await run;
    assert.equal(r.stdout, `${decoy}\n${decoy}/global\n${decoy}\ngone\n`, r.stderr);
    // fsrun watched the user's real global config, the one the command wrote
    assert.ok(r.tamper.includes(`config:global:${own}/git/config`), JSON.stringify(r.tamper));
    assert.ok(environ.includes(`XDG_CONFIG_HOME=${own}`) && environ.includes(`GIT_CONFIG_GLOBAL=${own}/global`), environ.join(" "));
    // the command's values only in the carrier, which nothing but the command's shell reads
    assert.deepEqual(environ.filter((e) => /^(VISIBLE|LD_LIBRARY_PATH)=/.test(e) || (e.includes(decoy) && !e.startsWith("FUSION_SANDBOX_ENV="))), []);
    assert.equal(cmdline.includes(decoy), false, "the values are not in fsrun's arguments, which any user can read");
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(go, { force: true });
    await rm(join(worktree, "env-started"), { force: true });
  }
});

test(`[${WHO}] one-shot: exit status and signal come from fsrun's fields`, async () => {
  const b = await backend();
  const e3 = await b.run("exit 3", opts());
  assert.deepEqual([e3.exitCode, e3.signal], [3, null]);
  const k = await b.run("kill -KILL $$", opts());
  assert.deepEqual([k.exitCode, k.signal], [null, "SIGKILL"]);
});

test(`[${WHO}] one-shot: a plain exit 137 is not a signal`, async (t) => {
  if (!(await binaryHasNullExitCode())) return t.skip("this fsrun still infers the signal from the status (json-contract.md: helper `run`)");
  const b = await backend();
  const r = await b.run("exit 137", opts());
  assert.deepEqual([r.exitCode, r.signal], [137, null]);
});

test(`[${WHO}] one-shot: timeoutMs kills the whole sandbox`, async () => {
  const b = await backend();
  const r = await b.run("sleep 60 & sleep 60", opts({ timeoutMs: 300 }));
  assert.equal(r.timedOut, true);
  assert.deepEqual([r.exitCode, r.signal], [null, "SIGKILL"]);
  assert.deepEqual(await sandboxesOf(r.runId), []);
});

test(`[${WHO}] one-shot: abort of a command that ignores SIGTERM kills it, with one outcome event`, async () => {
  const b = await backend();
  const c = new AbortController();
  const run = b.run("trap '' TERM; touch started; sleep 60; echo survived > survived", opts({ signal: c.signal }));
  await waitFor("the command to start", () => readFile(join(worktree, "started")).then(() => true, () => false));
  c.abort();
  const r = await run;
  assert.equal(r.aborted, true);
  assert.equal(r.exitCode, null);
  assert.notEqual(r.signal, null);
  await assert.rejects(readFile(join(worktree, "survived")));
  assert.deepEqual(await sandboxesOf(r.runId), []);
  const mine = events.filter((e) => e.runId === r.runId).map((e) => `${e.event}:${e.aborted ?? ""}:${e.fsrunKilled ?? ""}`);
  assert.deepEqual(mine, ["sandbox:prepare::", "sandbox:run:true:true"]);
  await rm(join(worktree, "started"));
});

test(`[${WHO}] one-shot: maxBuffer cuts a stream and kills the command, as exec does`, async () => {
  const b = await backend();
  const r = await b.run("head -c 1000000 /dev/zero | tr '\\0' a; touch ran-on; sleep 30", opts({ maxBuffer: 1000 }));
  assert.equal(r.truncated, true);
  assert.equal(r.stdout, "a".repeat(1000));
  assert.deepEqual([r.exitCode, r.signal], [null, "SIGKILL"]);
  await assert.rejects(readFile(join(worktree, "ran-on")));
});

test(`[${WHO}] the policy: the constructor's network off wins over ctx's on`, async () => {
  const b = await backend({ policy: { allowNetwork: false, allowedPaths: [readOnly] } }, { ...basePolicy(), allowNetwork: true });
  const r = await b.run("ls /sys/class/net", opts());
  assert.equal(r.stdout, "lo\n");
  assert.equal(r.limits.network, "none");
});

test(`[${WHO}] the policy: ctx's network off wins over the constructor's on; paths are the intersection`, async () => {
  const other = join(work, "other");
  await mkdir(other, { recursive: true });
  await writeFile(join(other, "secret"), "s");
  const b = await backend({ policy: { allowNetwork: true, allowedPaths: [other, readOnly] } }, { allowNetwork: false, allowedPaths: [readOnly] });
  const r = await b.run(`ls /sys/class/net; cat ${readOnly}/file; echo; cat ${other}/secret || echo hidden`, opts());
  assert.match(r.stdout, /^lo\nro-content\n/);
  assert.match(r.stdout, /hidden\n$/);
});

test(`[${WHO}] a bad policy is an FsrunPolicyError naming the field`, async () => {
  await assert.rejects(backend({}, { ...basePolicy(), cpuLimit: { maxCores: -1 } }), (e: unknown) => e instanceof FsrunPolicyError && e.field === "ctx.policy.cpuLimit.maxCores");
  await assert.rejects(backend({}, { ...basePolicy(), bogus: 1 } as SandboxPolicy), (e: unknown) => e instanceof FsrunPolicyError && e.field === "ctx.policy.bogus");
});

for (const [what, setup] of [
  ["missing", async () => join(work, "no-such-fsrun")],
  ["not executable", async () => {
    const p = join(work, "fsrun-not-exec");
    await writeFile(p, "#!/bin/sh\n");
    await chmod(p, 0o644);
    return p;
  }],
] as const) {
  test(`[${WHO}] fsrun ${what}: fallback-native runs natively and records why; fail-hard throws and runs nothing`, async () => {
    const path = await setup();
    events = [];
    const b = await backend({ fsrunPath: path, failureMode: "fallback-native" });
    assert.equal(b.capabilities().filesystemIsolation, "none");
    const r = await b.run("echo native > native-ran; cat native-ran", opts());
    assert.equal(r.backend, "native");
    assert.equal(r.stdout, "native\n");
    assert.match(r.fallbackReason ?? "", what === "missing" ? /not found/ : /not executable/);
    const kinds = events.map((e) => `${e.scope}:${e.event}`);
    assert.deepEqual(kinds, ["task:sandbox:prepare", "task:sandbox:fallback", "command:sandbox:prepare", "command:sandbox:fallback"]);
    assert.match(events[1].reason ?? "", /fsrun/);
    await rm(join(worktree, "native-ran"));
    await assert.rejects(backend({ fsrunPath: path }), (e: unknown) => e instanceof FsrunUnavailableError && e.kind === (what === "missing" ? "missing" : "not-executable"));
    assert.equal(events.at(-1)?.event, "sandbox:failure");
  });
}

test(`[${WHO}] not Linux: fallback-native runs natively; fail-hard throws`, async () => {
  const b = await backend({ platform: "darwin", failureMode: "fallback-native" });
  assert.equal((await b.run("echo ok", opts())).backend, "native");
  await assert.rejects(backend({ platform: "darwin" }), (e: unknown) => e instanceof FsrunUnavailableError && e.kind === "not-linux");
});

/** An fsrun that, once the file `when` exists, runs where pivot_root answers ENOSYS (tests/noclone3):
 * a host where no sandbox can be set up, fsrun's own host probe included (a state root below a
 * file no longer is one: the probe has a state root of its own). */
async function hostWithoutSandbox(when: string): Promise<string> {
  const noclone3 = join(dirname(FSRUN), "tests", "noclone3");
  await stat(noclone3);
  const path = join(work, `nopivot-${++seq}.sh`);
  await writeFile(path, `#!/bin/sh\n[ -e '${when}' ] && exec '${noclone3}' --enosys pivot_root '${FSRUN}' "$@"\nexec '${FSRUN}' "$@"\n`);
  await chmod(path, 0o755);
  return path;
}

test(`[${WHO}] fsrun's set-up failure (exit 125): fallback-native runs natively; fail-hard throws FsrunSetupError`, async () => {
  const fsrunPath = await hostWithoutSandbox(work); // from the start
  const b = await backend({ fsrunPath, failureMode: "fallback-native" });
  const r = await b.run("echo ran", opts());
  assert.equal(r.backend, "native");
  assert.match(r.fallbackReason ?? "", /set up|pivot_root/);
  await assert.rejects(backend({ fsrunPath }), (e: unknown) => e instanceof FsrunSetupError);
});

test(`[${WHO}] fallback-native is no off switch: a worktree that breaks the set-up is FsrunSetupError, never a native run`, async () => {
  const plain = join(work, `plain-${seq}`);
  const marker = join(work, `host-marker-${seq}`);
  await mkdir(plain);
  const worktreePath = plain;
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, failureMode: "fallback-native", onAudit: (e) => events.push(e) });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath, policy: basePolicy() });
  // a command writes what makes the next set-up fail; the next command must not run on the host
  const first = await b.run(`echo "gitdir: /nonexistent" > .git`, opts({ cwd: plain }));
  assert.deepEqual([first.backend, first.exitCode], ["fsrun", 0]);
  await assert.rejects(b.run(`touch '${marker}'`, opts({ cwd: plain })), (e: unknown) => e instanceof FsrunSetupError && e.result?.exitCode === 125 && /works on this host/.test(e.message));
  await assert.rejects(readFile(marker));
  // a task prepared over such a worktree: refused, not a task that runs natively
  const again = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, failureMode: "fallback-native", onAudit: (e) => events.push(e) });
  backends.push(again);
  await assert.rejects(again.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath, policy: basePolicy() }), (e: unknown) => e instanceof FsrunSetupError);
  await rm(plain, { recursive: true, force: true });
});

test(`[${WHO}] fallback-native at prepare: a full disk under the state root is FsrunSetupError, never a task that runs natively`, async (t) => {
  // (a private mount namespace for the small tmpfs: an ordinary user cannot mount one; sandbox-run.bats covers the user)
  if (!root) return t.skip("mounting the small full tmpfs needs root");
  const full = join(work, `full-state-${++seq}`);
  const marker = join(work, `host-marker-full-${seq}`);
  await mkdir(full);
  // fsrun with its state root on a filled 1 MB tmpfs, standing for a state root on the disk the
  // agent's worktree shares (an ordinary user's /tmp/fsrun-UID on Debian's /tmp on /)
  const fsrunPath = join(work, `full-disk-${seq}.sh`);
  await writeFile(fsrunPath, `#!/bin/sh\nexec unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs -o size=1m,mode=0700 tmpfs "$0" && { dd if=/dev/zero of="$0/fill" bs=4k 2>/dev/null; exec "$@"; }' '${full}' '${FSRUN}' "$@"\n`);
  await chmod(fsrunPath, 0o755);
  const b = new FsrunBackend({ fsrunPath, stateRoot: full, killGraceMs: 300, failureMode: "fallback-native", onAudit: (e) => events.push(e) });
  backends.push(b);
  // fsrun bundle's mark in the state root fails (ENOSPC), and the probe's own set-up too: no proof
  // that this host cannot sandbox, so the bundle's error stands
  await assert.rejects(b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: worktree, policy: basePolicy() }), (e: unknown) => e instanceof FsrunSetupError && /fsrun cannot build a sandbox over .*the bundle's mark/.test(e.message) && /No space left on device/.test(e.message));
  await assert.rejects(b.run(`touch '${marker}'`, opts()));
  await assert.rejects(readFile(marker));
  assert.deepEqual(await readdir(full), [], "nothing written under the state root outside the namespace");
});

test(`[${WHO}] fallback-native is no off switch in task-container mode either: a command that breaks the next exec never gets a native run`, async () => {
  const plain = join(work, `plain-tc-${seq}`);
  const marker = join(work, `host-marker-tc-${seq}`);
  await mkdir(plain);
  // pauseBetweenRuns false: the daemon must run between the two runs (frozen, it holds nothing yet)
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, mode: "task-container", failureMode: "fallback-native", onAudit: (e) => events.push(e), pauseBetweenRuns: false });
  backends.push(b);
  const policy = { ...basePolicy(), pidsLimit: 16 };
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: plain, policy });
  // a daemon that, once this command is gone (the fifo's writer closed), takes every pid the
  // container's limit leaves and keeps them: the next fsrun exec cannot start its command
  // (the inner shell forks until a fork fails, which ends it; the outer one takes its pid back)
  const fill = `mkfifo /tmp/gone; setsid sh -c 'read x </tmp/gone; sh -c "while :; do sleep 1000 & done"; sleep 1000 & : >full; exec sleep 1000' </dev/null >/dev/null 2>&1 & exec 3>/tmp/gone`;
  const first = await b.run(fill, opts({ cwd: plain }));
  assert.deepEqual([first.backend, first.exitCode], ["fsrun", 0]);
  if (b.effectiveMode === "task-container") await waitFor("the daemon to hold every pid", async () => (await stat(join(plain, "full")).catch(() => null)) !== null);
  // refused, or run in the sandbox (where the host's path is not the host's): never on the host
  const second = await b.run(`touch '${marker}'`, opts({ cwd: plain })).catch((e: unknown) => {
    assert.ok(e instanceof FsrunSetupError, String(e));
    return null;
  });
  assert.notEqual(second?.backend, "native");
  await assert.rejects(readFile(marker));
  await b.dispose();
  await rm(plain, { recursive: true, force: true });
});

/** A task-container backend, or null (and the downgrade checked) where fsrun exec cannot join it. */
async function taskBackend(options: FsrunBackendOptions = {}): Promise<FsrunBackend | null> {
  const b = await backend({ mode: "task-container", ...options });
  if (b.effectiveMode === "one-shot") {
    assert.ok(!root, "as root the task container works");
    assert.match(b.modeFallback ?? "", /fsrun exec/);
    assert.equal(events.at(-1)?.event, "sandbox:ready");
    assert.match(events.at(-1)?.reason ?? "", /one-shot/);
    assert.equal((await b.run("echo still-sandboxed; ls /sys/class/net", opts())).stdout, "still-sandboxed\nlo\n");
    assert.deepEqual(await containers((id) => id.startsWith(`fusion-it-${WHO}__`)), [], "the container that exec could not join is gone");
    return null;
  }
  assert.equal(b.effectiveMode, "task-container");
  return b;
}

test(`[${WHO}] one-shot: an fsrun SIGKILLed by someone else is an FsrunError and a sandbox:failure, and no sandbox is left`, async () => {
  const b = await backend();
  const runId = `r${seq}-1`; // the backend's first run
  const run = b.run("touch killed-started; sleep 60", opts());
  await waitFor("the command to start", () => readFile(join(worktree, "killed-started")).then(() => true, () => false));
  const pid = await fsrunPidOf(runId);
  process.kill(pid, "SIGKILL");
  await assert.rejects(run, (e: unknown) => e instanceof FsrunError && /killed by SIGKILL/.test(e.message));
  assert.deepEqual(await sandboxesOf(runId), []);
  const mine = events.filter((e) => e.runId === runId);
  assert.deepEqual(mine.map((e) => e.event), ["sandbox:prepare", "sandbox:failure"]);
  assert.match(mine[1].reason ?? "", /SIGKILL/);
  // the command ran and fsrun said no list: "cannot tell", never the list of before (review25)
  assert.deepEqual([b.hostGitDisarmed, mine[1].hostGitArgs], [false, ["-c", HOST_GIT_CANNOT_DISARM]]);
  await rm(join(worktree, "killed-started"));
});

test(`[${WHO}] one-shot: an abort during fsrun's slow git sync still reports the tamper; no per-run dir or mount is left`, async () => {
  const b = await backend();
  const runId = `r${seq}-1`; // the backend's first run
  const bomb = `objects/ab/${"0".repeat(38)}`;
  await writeBomb(join(worktree, ".bomb"), 448);
  const c = new AbortController();
  const run = b.run(`mkdir -p nested && echo gitdir: /nonexistent >nested/.git && o=$(git rev-parse --git-common-dir) && mkdir -p $o/objects/ab && cp .bomb $o/${bomb}`, opts({ signal: c.signal }));
  // held there by the bomb's size: fsrun has it open only in its sync, after its tamper line
  let pid = 0;
  await waitFor("fsrun to be in its git sync", async () => {
    pid = pid || (await fsrunPidOf(runId).catch(() => 0));
    return pid > 0 && hasOpen(pid, `/upper/${bomb}`);
  }, 60_000);
  c.abort();
  const r = await run;
  assert.equal(r.aborted, true);
  assert.deepEqual(r.tamper, ["nested/.git"]);
  const outcome = events.filter((e) => e.runId === runId).at(-1);
  assert.deepEqual([outcome?.event, outcome?.tamper], ["sandbox:run", ["nested/.git"]]);
  // its watchdog unmounts and removes the per-run dir once fsrun is gone
  await waitFor("the per-run git dir to go", async () => (await runDirsOf(runId)).length === 0, 60_000);
  assert.equal((await readFile("/proc/self/mountinfo", "utf8")).includes(stateRoot), false);
  assert.deepEqual(await sandboxesOf(runId), []);
  await rm(join(worktree, "nested"), { recursive: true, force: true });
  await rm(join(worktree, ".bomb"));
});

/**
 * A wrapper of $FSRUN whose `sandbox` of a run (not prepare's probe) runs the real one to its end,
 * then hangs as a fsrun whose work after the command ran long (review22 F7: seconds of
 * hostGitArgs), having said of fsrun's stderr only the lines `keep` names; SIGTERM does not end
 * it (ignored before WRAPPER.done appears: an abort right after it once ended the shell in
 * between, fsrunKilled false), so the adapter's abort ends in its SIGKILL.
 * Its `exec` (a task container's) runs the real one, then removes the status file when `keep` is
 * "nothing": an exec killed before it wrote one. WRAPPER.done says that the real fsrun has ended.
 */
async function hangingFsrun(keep: "nothing" | "tamper" | "both"): Promise<string> {
  const wrapper = join(work, `fsrun-hanging-${keep}`);
  const lines = { nothing: "^$", tamper: "; tamper: \\[", both: "; (tamper|hostGitArgs): \\[" }[keep];
  const script =
    `#!/bin/sh\nstatus=\nprev=\nfor a in "$@"; do\n  [ "$prev" = --status-json ] && status=$a\n  prev=$a\ndone\n` +
    `case " $* " in\n*" sandbox "*" --run-id "*)\n  "$0.real" "$@" >/dev/null 2>"$0.err"\n  grep -E '${lines}' "$0.err" >&2\n` +
    `  trap '' TERM\n  touch "$0.done"\n  exec sleep 600 ;;\n` +
    `*" exec "*)\n  "$0.real" "$@"\n  code=$?\n  [ ${keep} != nothing ] || [ -z "$status" ] || rm -f "$status"\n  exit $code ;;\n` +
    `esac\nexec "$0.real" "$@"\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  await runCommand("ln", ["-sf", FSRUN, `${wrapper}.real`]);
  await rm(`${wrapper}.done`, { force: true });
  return wrapper;
}

// review22 F7 (c): a run whose fsrun the adapter had to kill after the command ended, before fsrun
// said its hostGitArgs line (with no tamper line at all, or the tamper line alone), cannot tell:
// hostGitArgs hold the cannot-disarm option and hostGitDisarmed is false. With both lines said,
// fsrun's list (the control: the test can tell).
test(`[${WHO}] one-shot: a fsrun killed before its hostGitArgs line leaves a run that cannot tell, never disarmed`, async () => {
  const cannot = ["-c", "core.abbrev=fsrun-cannot-disarm"];
  const nested = ["-c", "core.fsmonitor=false", "-c", "submodule.recurse=false", "-c", "diff.ignoreSubmodules=all", "-c", "status.submoduleSummary=false"];
  const want = { nothing: [[], cannot, false], tamper: [["hang-nested/.git"], cannot, false], both: [["hang-nested/.git"], nested, true] };
  for (const keep of ["nothing", "tamper", "both"] as const) {
    const wrapper = await hangingFsrun(keep);
    const b = await backend({ fsrunPath: wrapper, lastWalkTimeoutMs: 100, timeoutGraceMs: 200 });
    const c = new AbortController();
    const run = b.run("mkdir -p hang-nested && echo gitdir: /nonexistent >hang-nested/.git", opts({ signal: c.signal }));
    await waitFor("the real fsrun to end", () => stat(`${wrapper}.done`).then(() => true, () => false), 60_000);
    c.abort();
    const r = await run;
    assert.equal(r.aborted, true, keep);
    assert.deepEqual([r.tamper, r.hostGitArgs, b.hostGitDisarmed], want[keep], `${keep}: ${JSON.stringify(r)}`);
    const outcome = events.filter((e) => e.runId === r.runId).at(-1);
    assert.deepEqual([outcome?.event, outcome?.fsrunKilled, outcome?.hostGitArgs], ["sandbox:run", true, want[keep][1]], keep);
    await b.dispose();
    assert.deepEqual([b.hostGitDisarmed, b.finalTamper], [false, []], `${keep}: dispose()'s last walk, killed as well, cannot tell`);
    await rm(join(worktree, "hang-nested"), { recursive: true, force: true });
  }
});

// review22 F7 (c), a task container: an exec whose command started and that left no status (fsrun
// exec killed) cannot tell; with its status, fsrun's list (the control)
test(`[${WHO}] task container: an exec that left no status after its command cannot tell, never disarmed`, async (t) => {
  for (const keep of ["nothing", "both"] as const) {
    const b = await backend({ mode: "task-container", fsrunPath: await hangingFsrun(keep) });
    if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
    const r = await b.run("mkdir -p hang-nested && echo gitdir: /nonexistent >hang-nested/.git", opts());
    assert.equal(r.exitCode, 0, r.stderr);
    const want = keep === "nothing" ? ["-c", "core.abbrev=fsrun-cannot-disarm"] : ["-c", "core.fsmonitor=false", "-c", "submodule.recurse=false", "-c", "diff.ignoreSubmodules=all", "-c", "status.submoduleSummary=false"];
    // the frozen container's walk after the run may name the repository again (made in the tick
    // its walk began: a repeat) and add its options after these; not frozen (no cgroup to freeze
    // for this user): the status says no process was left (leftRunning false), so the exec's walk
    // holds; with no status it cannot tell (review22 F2)
    assert.deepEqual([r.hostGitArgs?.slice(0, want.length), b.hostGitDisarmed], [want, keep !== "nothing"], `${keep}: ${JSON.stringify(r)}`);
    await b.dispose();
    await rm(join(worktree, "hang-nested"), { recursive: true, force: true });
  }
});

// fsrun's tamper line is whole however long (fsrun_log_whole; it was cut at 2 KiB and read as
// "cannot tell"): 24 nested repositories of 120-byte names, about 3 KiB of list, read from the
// exec's stderr line when it left no status.
test(`[${WHO}] task container: a tamper line over 2 KiB is read whole from stderr when the exec left no status`, async (t) => {
  const b = await backend({ mode: "task-container", fsrunPath: await hangingFsrun("nothing") });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const names = Array.from({ length: 24 }, (_, i) => `long-${String(i).padStart(2, "0")}-${"n".repeat(112)}`);
  assert.ok(JSON.stringify(names.map((n) => `${n}/.git`)).length > 2048);
  const r = await b.run(names.map((n) => `mkdir -p ${n} && echo gitdir: /nonexistent >${n}/.git`).join(" && "), opts());
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual([...r.tamper].sort(), names.map((n) => `${n}/.git`).sort(), r.stderr);
  await b.dispose();
  for (const n of names) await rm(join(worktree, n), { recursive: true, force: true });
});

// review19 #9: the ids of task T run b-c-1 and task T-b run c-1 (the adapter's runId is
// `${ctx.runId}-N`) began with the same `sandbox-T-b-c-1-`, and after killing T's fsrun the adapter
// deleted every container of that prefix: the other task's live sandbox too (it waited 10 s for
// the watchdog, then `delete --force`d the other; its command never read `go`).
test(`[${WHO}] one-shot: a killed fsrun's clean-up leaves another task's sandbox whose ids share its text`, async () => {
  const task = `it-${WHO}-ids`;
  const killed = await backend({}, basePolicy(), { taskId: task, runId: "b-c" });
  const other = await backend({}, basePolicy(), { taskId: `${task}-b`, runId: "c" });
  assert.notEqual(sandboxIdStem(task, "b-c-1"), sandboxIdStem(`${task}-b`, "c-1"));
  const go = join(worktree, "ids-go");
  spawnSync("mkfifo", ["-m", "666", go]);
  const survivor = other.run("touch ids-other-started; read x < ids-go; echo other-finished", opts());
  const victim = killed.run("touch ids-killed-started; sleep 60", opts());
  for (const f of ["ids-other-started", "ids-killed-started"])
    await waitFor(f, () => readFile(join(worktree, f)).then(() => true, () => false));
  process.kill(await fsrunPidOf("b-c-1"), "SIGKILL");
  await assert.rejects(victim, (e: unknown) => e instanceof FsrunError && /killed by SIGKILL/.test(e.message));
  assert.deepEqual(await sandboxesOf("b-c-1", task), []);
  assert.equal((await sandboxesOf("c-1", `${task}-b`)).length, 1, "the other task's sandbox is still there");
  // O_RDWR: never blocks, even when no sandbox reads any more
  const fifo = await open(go, fsConstants.O_RDWR);
  await fifo.write("go\n");
  const r = await survivor;
  await fifo.close();
  assert.deepEqual([r.exitCode, r.signal, r.stdout], [0, null, "other-finished\n"]);
  for (const f of ["ids-go", "ids-other-started", "ids-killed-started"]) await rm(join(worktree, f));
});

test(`[${WHO}] a run's set-up failure (exit 125): fail-hard throws FsrunSetupError; fallback-native runs natively`, async () => {
  for (const failureMode of ["fail-hard", "fallback-native"] as const) {
    const own = join(work, `broken-${failureMode}`);
    const b = await backend({ fsrunPath: await hostWithoutSandbox(own), failureMode });
    // the host loses its sandbox after prepare: fsrun can set nothing up
    await writeFile(own, "");
    const runId = `r${seq}-1`;
    if (failureMode === "fail-hard") {
      await assert.rejects(b.run("echo ran > hard-ran", opts()), (e: unknown) => e instanceof FsrunSetupError && e.result?.exitCode === 125);
      await assert.rejects(readFile(join(worktree, "hard-ran")));
      assert.deepEqual(events.filter((e) => e.runId === runId).map((e) => e.event), ["sandbox:prepare", "sandbox:failure"]);
    } else {
      const r = await b.run("echo ran", opts());
      assert.deepEqual([r.backend, r.stdout], ["native", "ran\n"]);
      assert.ok((r.fallbackReason ?? "") !== "");
      assert.deepEqual(events.filter((e) => e.runId === runId).map((e) => e.event), ["sandbox:prepare", "sandbox:fallback"]);
    }
    await rm(own, { force: true });
  }
});

test(`[${WHO}] fsrun's own --audit-log file is still written`, async () => {
  const auditLog = join(work, "audit.jsonl");
  const b = await backend({ auditLog });
  const r = await b.run("true", opts());
  const mine = (await readFile(auditLog, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.runId === r.runId);
  assert.deepEqual(mine.map((e) => e.event), ["sandbox:prepare", "sandbox:run"]);
  assert.equal(mine[1].taskId, `it-${WHO}`);
});

test(`[${WHO}] oomKilled: the memory limit's kill is reported`, async (t) => {
  const b = await backend({}, { ...basePolicy(), memoryLimitMb: 32 });
  if (b.capabilities().resourceLimits !== "advanced") return t.skip("no cgroup memory limit for this caller here");
  const raw = await runCommand("/bin/sh", ["-c", `echo '{"memoryLimitMb": 32}' | "$0" --root "$1" sandbox --json --policy - --worktree "$2" -- true`, FSRUN, stateRoot, worktree]);
  if (!/"oomKilled"/.test(raw.stdout)) return t.skip("this fsrun does not report oomKilled yet (json-contract.md: helper `limits`)");
  const r = await b.run("head -c 400000000 /dev/zero | tail -c 300000000 > /dev/null", opts());
  assert.equal(r.oomKilled, true, JSON.stringify(r));
});

test(`[${WHO}] one-shot: a nested git repository the run made comes back in tamper`, async (t) => {
  const raw = await runCommand("/bin/sh", ["-c", `echo '{}' | "$0" --root "$1" sandbox --json --policy - --worktree "$2" -- true`, FSRUN, stateRoot, worktree]);
  if (!/"tamper"/.test(raw.stdout)) return t.skip("this fsrun does not report tamper yet (json-contract.md: helper `git`)");
  const b = await backend();
  const r = await b.run("mkdir -p nested-repo && echo gitdir: /nonexistent >nested-repo/.git && echo made", opts());
  await rm(join(worktree, "nested-repo"), { recursive: true, force: true });
  assert.equal(r.stdout, "made\n", r.stderr);
  assert.deepEqual(r.tamper, ["nested-repo/.git"]);
  assert.deepEqual(events.find((e) => e.runId === r.runId && e.event === "sandbox:run")?.tamper, ["nested-repo/.git"]);
});

test(`[${WHO}] one-shot: a command's own exit 125 is its result, not a set-up failure: tamper and the run event are kept`, async (t) => {
  const raw = await runCommand("/bin/sh", ["-c", `echo '{}' | "$0" --root "$1" sandbox --json --policy - --worktree "$2" -- true`, FSRUN, stateRoot, worktree]);
  if (!/"tamper"/.test(raw.stdout)) return t.skip("this fsrun does not report tamper yet (json-contract.md: helper `git`)");
  const b = await backend();
  const r = await b.run("mkdir -p nested-125 && echo gitdir: /nonexistent >nested-125/.git && echo made && exit 125", opts());
  await rm(join(worktree, "nested-125"), { recursive: true, force: true });
  assert.equal(r.stdout, "made\n", r.stderr);
  assert.equal(r.exitCode, 125);
  assert.equal(r.backend, "fsrun");
  assert.deepEqual(r.tamper, ["nested-125/.git"]);
  assert.deepEqual(events.find((e) => e.runId === r.runId && e.event === "sandbox:run")?.tamper, ["nested-125/.git"]);
  assert.equal(events.find((e) => e.runId === r.runId && e.event === "sandbox:failure"), undefined);
});

test(`[${WHO}] one-shot: what git left out (a write outside the allowlist) comes back in gitDiscarded; absent on a clean run`, async () => {
  const b = await backend();
  const clean = await b.run("echo clean", opts());
  assert.equal(clean.stdout, "clean\n", clean.stderr);
  assert.equal(clean.gitDiscarded, undefined);
  const r = await b.run('echo "*.bin binary" >"$(git rev-parse --git-common-dir)/info/attributes" && echo wrote', opts());
  assert.equal(r.stdout, "wrote\n", r.stderr);
  assert.deepEqual(r.gitDiscarded, ["info/attributes"]);
  assert.deepEqual(events.find((e) => e.runId === r.runId && e.event === "sandbox:run")?.gitDiscarded, ["info/attributes"]);
  assert.equal(events.find((e) => e.runId === clean.runId && e.event === "sandbox:run")?.gitDiscarded, undefined);
});

test(`[${WHO}] task container: git as in one-shot: the task's commit lands, main does not move, tamper and gitDiscarded are reported`, async (t) => {
  const b = await taskBackend();
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user: checked that it runs one-shot instead");
  const repo = join(work, "repo");
  const main0 = await git(repo, ["rev-parse", "HEAD"]);
  const r = await b.run(
    "git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m in-task && " +
      "git update-ref refs/heads/master HEAD && git update-ref refs/heads/main HEAD; mkdir -p nested-task-repo && echo gitdir: /nonexistent >nested-task-repo/.git && echo made",
    opts(),
  );
  await rm(join(worktree, "nested-task-repo"), { recursive: true, force: true });
  assert.equal(r.stdout, "made\n", r.stderr);
  assert.deepEqual(r.tamper, ["nested-task-repo/.git"]);
  assert.ok((r.gitDiscarded ?? []).some((p) => /^refs\/heads\/(master|main)$/.test(p)), JSON.stringify(r.gitDiscarded));
  assert.equal(await git(repo, ["rev-parse", "HEAD"]), main0, "the main checkout's branch did not move");
  assert.equal(await git(worktree, ["log", "-1", "--format=%s"]), "in-task\n");
  const ev = events.find((e) => e.runId === r.runId && e.event === "sandbox:run");
  assert.deepEqual(ev?.tamper, ["nested-task-repo/.git"]);
  assert.deepEqual(ev?.gitDiscarded, r.gitDiscarded);
  await b.dispose();
});

// review20 B, the host side: nbstripout's own filter (`"/usr/bin/python3" -m nbstripout`) and a run
// that plants nbstripout.py: the run's hostGitArgs (result and run event) and the backend's (every
// run's so far, after a later run that reported nothing) are the options under which the host's
// `git add -A` runs nothing and succeeds; a plain one runs the planted module (the control). A run
// that changes nothing such has none. Both modes (a user whose exec cannot join runs one-shot).
test(`[${WHO}] both modes: a run planting nbstripout.py gets hostGitArgs; the host's git add -A runs nothing with them or with hostGitEnv, the planted module without`, async (t) => {
  if (!(await stat("/usr/bin/python3").then(() => true, () => false))) return t.skip("needs /usr/bin/python3");
  const want = ["-c", "filter.nbstripout.clean=", "-c", "filter.nbstripout.smudge=", "-c", "filter.nbstripout.process=", "-c", "filter.nbstripout.required=false"];
  for (const mode of ["one-shot", "task-container"] as const) {
    const dir = join(work, `nb-${mode}`);
    await mkdir(dir);
    const wt = await makeWorktree(dir, "task-nb");
    const marker = join(dir, "marker");
    await git(join(dir, "repo"), ["config", "filter.nbstripout.clean", '"/usr/bin/python3" -m nbstripout']);
    await writeFile(join(wt, ".gitattributes"), "*.ipynb filter=nbstripout\n");
    await writeFile(join(wt, "a.ipynb"), "{}\n");
    const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode });
    backends.push(b);
    await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
    const nothing = await b.run("echo two >unrelated.txt", opts({ cwd: wt }));
    assert.deepEqual([nothing.exitCode, nothing.hostGitArgs], [0, undefined], nothing.stderr);
    const module = `import sys\\nopen("${marker}", "a").write("ran\\\\n")\\nsys.stdout.write(sys.stdin.read())\\n`;
    const planted = await b.run(`printf '${module}' >nbstripout.py && echo '{ }' >a.ipynb`, opts({ cwd: wt }));
    assert.deepEqual([planted.exitCode, planted.hostGitArgs], [0, want], `${mode}: ${planted.stderr}`);
    assert.deepEqual(events.find((e) => e.runId === planted.runId && e.event === "sandbox:run")?.hostGitArgs, want);
    const later = await b.run("echo three >unrelated.txt", opts({ cwd: wt }));
    assert.deepEqual([later.exitCode, later.hostGitArgs], [0, undefined], later.stderr);
    await b.dispose();
    assert.deepEqual(b.hostGitArgs, want, "every run's so far");
    const disarmed = await runCommand("git", [...b.hostGitArgs, "add", "-A"], wt);
    assert.equal(disarmed.code, 0, disarmed.stderr);
    assert.equal(await stat(marker).then(() => true, () => false), false, `${mode}: the host's git ran the planted module under hostGitArgs`);
    await writeFile(join(wt, "a.ipynb"), "{   }\n");
    const safe = await runCommand("git", ["add", "-A"], wt, { ...process.env, ...b.hostGitEnv });
    assert.equal(safe.code, 0, safe.stderr);
    assert.equal(await stat(marker).then(() => true, () => false), false, `${mode}: the host's git ran the planted module under hostGitEnv alone`);
    await writeFile(join(wt, "a.ipynb"), "{  }\n");
    const plain = await runCommand("git", ["add", "-A"], wt);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(await readFile(marker, "utf8"), "ran\n", "the control: a plain git add -A runs it");
  }
});

// review26 D5: Fusion's own environment may hold what has git, or a driver it runs, load code from
// the worktree by a relative name: an empty PATH entry (the top's `git` and a bare `myfilt`),
// NODE_OPTIONS=--require=./x.js, BASH_ENV=./env.sh. None of them is a file a driver's config names,
// so fsrun's report is clean (hostGitDisarmed true) after a run that plants all four; Fusion's git
// with hostGitArgs, HOST_GIT_SAFE_ARGS and that environment ran the run's `git` (and, the real git,
// every planted payload). With hostGitEnv over that environment: the real git, no payload.
test(`[${WHO}] hostGitEnv: a relative PATH entry, NODE_OPTIONS and BASH_ENV of Fusion's environment load nothing a run planted (review26 D5)`, async () => {
  const dir = join(work, "d5");
  await mkdir(dir);
  const wt = await makeWorktree(dir, "task-d5");
  const marker = join(dir, "marker");
  const repo = join(dir, "repo");
  await git(repo, ["config", "filter.x.clean", "myfilt"]);
  await git(repo, ["config", "filter.y.clean", "node f.js"]);
  await git(repo, ["config", "filter.z.clean", "bash tools/z.sh"]);
  await mkdir(join(wt, "tools"));
  await writeFile(join(wt, "tools", "z.sh"), "cat\n");
  await writeFile(join(wt, "f.js"), "process.stdin.pipe(process.stdout)\n");
  await writeFile(join(wt, ".gitattributes"), "a.txt filter=x\nb.txt filter=y\nc.txt filter=z\n");
  const stage = join(readOnly, `d5-${WHO}`);
  await mkdir(stage);
  await writeFile(join(stage, "git"), `#!/bin/sh\necho git >>${marker}\n`, { mode: 0o755 });
  await writeFile(join(stage, "myfilt"), `#!/bin/sh\necho myfilt >>${marker}\ncat\n`, { mode: 0o755 });
  await writeFile(join(stage, "x.js"), `require("fs").appendFileSync(${JSON.stringify(marker)}, "node\\n");\n`);
  await writeFile(join(stage, "env.sh"), `echo bash >>${marker}\n`);
  const b2 = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e) });
  backends.push(b2);
  await b2.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  const r = await b2.run(`cp -p ${stage}/* . && for f in a b c; do echo one >$f.txt; done`, opts({ cwd: wt }));
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual([r.tamper, b2.hostGitDisarmed, b2.hostGitArgs], [[], true, []], "fsrun's report is clean");
  const fusionEnv = { ...process.env, PATH: `:${process.env.PATH}`, NODE_OPTIONS: "--require=./x.js", BASH_ENV: "./env.sh" };
  const safe = await runCommand("git", [...b2.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "add", "-A"], wt, { ...fusionEnv, ...b2.hostGitEnvFor(fusionEnv) });
  assert.equal(safe.code, 0, safe.stderr);
  assert.equal(await stat(marker).then(() => true, () => false), false, "the host's git (or git itself) ran what the run planted under hostGitEnv");
  assert.match(await git(wt, ["ls-files", "--", "a.txt"]), /a\.txt/, "the real git staged the files");
  assert.deepEqual(b2.hostGitEnv, b2.hostGitEnvFor(process.env));
  // the controls: Fusion's environment alone runs the run's `git`; the real git under it, each payload
  const planted = await runCommand("git", [...HOST_GIT_SAFE_ARGS, "add", "-A"], wt, fusionEnv);
  assert.equal(await readFile(marker, "utf8"), "git\n", planted.stderr);
  await rm(marker);
  for (const f of ["a", "b", "c"]) await writeFile(join(wt, `${f}.txt`), "two\n");
  const realGit = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  const drivers = await runCommand(realGit, [...HOST_GIT_SAFE_ARGS, "add", "-A"], wt, fusionEnv);
  assert.equal(drivers.code, 0, drivers.stderr);
  assert.deepEqual((await readFile(marker, "utf8")).split("\n").filter((l) => l !== "").sort(), ["bash", "myfilt", "node"]);
});

// review27 E6: a PATH entry that leads (here through a link) into a writablePaths entry is the
// run's as much as the worktree is (`~/.npm-global/bin` first on PATH, `~/.npm-global` writable):
// the run plants `git` there, and LD_AUDIT=./audit.so names a library it plants at the top; fsrun's
// report is clean. Fusion's git under its own environment ran the planted `git` (PATH) and the
// planted library (LD_AUDIT, the real git); with hostGitEnv over it (the task's writablePaths
// known to the backend), neither. Seen to fail with the writablePaths not passed to hostGitEnvFor
// (the planted `git` ran) and with LD_AUDIT off the cleaned list (the library ran).
test(`[${WHO}] hostGitEnv: a PATH entry into a writablePaths entry and a relative LD_AUDIT load nothing a run planted (review27 E6)`, async (t) => {
  const cc = spawnSync("sh", ["-c", "command -v cc"], { encoding: "utf8" }).stdout.trim();
  if (cc === "") return t.skip("needs a C compiler for the audit library");
  const dir = join(work, "e6");
  await mkdir(dir);
  const wt = await makeWorktree(dir, "task-e6");
  const marker = join(dir, "marker");
  const npmGlobal = join(dir, "npm-global");
  await mkdir(npmGlobal);
  await symlink(join(npmGlobal, "bin"), join(dir, "linkbin")); // bin/ is made by the run
  const stage = join(readOnly, `e6-${WHO}`);
  await mkdir(stage);
  await writeFile(join(stage, "git"), `#!/bin/sh\necho git >>${marker}\n`, { mode: 0o755 });
  const audit = `#include <stdio.h>\n__attribute__((constructor)) static void mark(void) { FILE *f = fopen(${JSON.stringify(marker)}, "a"); if (f) { fputs("audit\\n", f); fclose(f); } }\nunsigned la_version(unsigned v) { return v; }\n`;
  await writeFile(join(stage, "audit.c"), audit);
  const built = await runCommand(cc, ["-shared", "-fPIC", "-o", join(stage, "audit.so"), join(stage, "audit.c")]);
  assert.equal(built.code, 0, built.stderr);
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e) });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: { ...basePolicy(), writablePaths: [npmGlobal] } });
  const r = await b.run(`mkdir -p ${npmGlobal}/bin && cp -p ${stage}/git ${npmGlobal}/bin/ && cp ${stage}/audit.so .`, opts({ cwd: wt }));
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual([r.tamper, b.hostGitDisarmed], [[], true], "fsrun's report is clean");
  const fusionEnv = { ...process.env, PATH: `${join(dir, "linkbin")}:${process.env.PATH}`, LD_AUDIT: "./audit.so" };
  const hostGit = (env: NodeJS.ProcessEnv, command = "git") =>
    runCommand(command, [...b.hostGitWorktreeArgs, ...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "status", "--porcelain"], wt, env);
  const safe = await hostGit({ ...fusionEnv, ...b.hostGitEnvFor(fusionEnv) });
  assert.equal(safe.code, 0, safe.stderr);
  assert.match(safe.stdout, /audit\.so/, "the real git ran");
  assert.equal(await stat(marker).then(() => true, () => false), false, "the host's git (or git itself) loaded what the run planted under hostGitEnv");
  // the controls: Fusion's PATH alone runs the planted `git`; its LD_AUDIT alone, the planted library
  await hostGit({ ...process.env, PATH: fusionEnv.PATH });
  assert.equal(await readFile(marker, "utf8"), "git\n");
  await rm(marker);
  const realGit = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  await hostGit({ ...process.env, LD_AUDIT: fusionEnv.LD_AUDIT }, realGit);
  assert.match(await readFile(marker, "utf8"), /^audit\n/);
});

// review24 B0: on a tmpfs worktree (/dev/shm) a committed 70 KB filter driver rewritten through a
// shared mapping after a read keeps its size, inode, mtime and ctime; fsrun hashes such a file's
// content whole, so the run names the filter and hostGitArgs disarm it: the host's `git add -A`
// with them and HOST_GIT_SAFE_ARGS runs nothing of the payload, a plain one runs it (the control).
// Both modes (a user whose exec cannot join runs one-shot).
test(`[${WHO}] both modes: a 70 KB driver rewritten through a mapping on a tmpfs worktree is named, and the host's git add -A runs nothing with hostGitArgs`, async (t) => {
  if (!(await stat("/usr/bin/python3").then(() => true, () => false))) return t.skip("needs /usr/bin/python3");
  const want = ["-c", "filter.x.clean=", "-c", "filter.x.smudge=", "-c", "filter.x.process=", "-c", "filter.x.required=false"];
  const mmapWrite = "import mmap, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nm = mmap.mmap(fd, 0)\nnew = sys.argv[2].encode()\n_ = m[0:len(new)]\nm[0:len(new)] = new\nm.close()\n";
  for (const mode of ["one-shot", "task-container"] as const) {
    const dir = await realpath(await mkdtemp("/dev/shm/fsrun-fusion-tm-"));
    try {
      const wt = await makeWorktree(dir, "task-tm");
      const marker = join(dir, "marker");
      await git(join(dir, "repo"), ["config", "filter.x.clean", "./tools/clean"]);
      await mkdir(join(wt, "tools"));
      await writeFile(join(wt, "tools", "clean"), `#!/bin/sh\ncat\nexit 0\n${"#".repeat(70_000)}\n`, { mode: 0o755 });
      await writeFile(join(wt, ".mm.py"), mmapWrite);
      await writeFile(join(wt, ".gitattributes"), "*.txt filter=x\n");
      await writeFile(join(wt, "a.txt"), "one\n");
      await git(wt, ["add", "-A"]);
      await git(wt, ["commit", "-qm", "driver"]);
      const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode });
      backends.push(b);
      await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
      const payload = `#!/bin/sh\necho ran >>${marker}\ncat\nexit 0\n`;
      const r = await b.run(`python3 .mm.py tools/clean '${payload}' && echo two >>a.txt`, opts({ cwd: wt }));
      assert.deepEqual([r.exitCode, r.tamper, r.hostGitArgs], [0, ["config:filter.x.clean=./tools/clean"], want], `${mode}: ${r.stderr}`);
      assert.equal((await readFile(join(wt, "tools", "clean"), "utf8")).startsWith(payload), true, "the run rewrote the driver");
      await b.dispose();
      assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, want], mode);
      const disarmed = await runCommand("git", [...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "add", "-A"], wt, { ...process.env, ...b.hostGitEnv });
      assert.equal(disarmed.code, 0, disarmed.stderr);
      assert.equal(await stat(marker).then(() => true, () => false), false, `${mode}: the host's git ran the rewritten driver under hostGitArgs`);
      await writeFile(join(wt, "a.txt"), "three\n");
      const plain = await runCommand("git", ["add", "-A"], wt);
      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(await readFile(marker, "utf8"), "ran\n", "the control: a plain git add -A runs it");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
});

/** A repository at DIR/repo whose linked worktree DIR/NAME has a committed filter driver
 * `filter.x.clean = ./tools/clean` for *.txt (content-hashed by fsrun: a rewrite is named). */
async function driverWorktree(dir: string, name: string): Promise<string> {
  const wt = await makeWorktree(dir, name);
  await git(join(dir, "repo"), ["config", "filter.x.clean", "./tools/clean"]);
  await mkdir(join(wt, "tools"));
  await writeFile(join(wt, "tools", "clean"), "#!/bin/sh\ncat\n", { mode: 0o755 });
  await writeFile(join(wt, ".gitattributes"), "*.txt filter=x\n");
  await writeFile(join(wt, "a.txt"), "one\n");
  await git(wt, ["add", "-A"]);
  await git(wt, ["commit", "-qm", "driver"]);
  return wt;
}

const FILTER_X_DISARMED = ["-c", "filter.x.clean=", "-c", "filter.x.smudge=", "-c", "filter.x.process=", "-c", "filter.x.required=false"];

/**
 * Fusion's git between runs, as README says (`git ...hostGitArgs ...HOST_GIT_SAFE_ARGS add -A`
 * with hostGitEnv), exits `code` and runs no driver that writes `marker`; then, the backend
 * disposed, a plain `git add -A` runs it (the control: the test can tell).
 */
async function fusionGitAddRunsNothing(b: FsrunBackend, wt: string, marker: string, code: number): Promise<void> {
  const add = await runCommand("git", [...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "add", "-A"], wt, { ...process.env, ...b.hostGitEnv });
  assert.equal(add.code, code, add.stderr);
  assert.equal(await stat(marker).then(() => true, () => false), false, "the host's git ran the driver the run planted");
  await b.dispose();
  await writeFile(join(wt, "a.txt"), "three\n");
  assert.equal((await runCommand("git", ["add", "-A"], wt)).code, 0);
  assert.equal(await readFile(marker, "utf8"), "ran\n", "the control: a plain git add -A runs it");
}

/** $FSRUN with 1.2 MB of blanks after what it prints on stdout: a result past the adapter's buffer
 * (fsrun bounds its own lists at 32 KiB since 72595c7, so a run can no longer make it that long;
 * an older fsrun's could) */
async function paddedFsrun(): Promise<string> {
  const wrapper = join(work, "fsrun-padded");
  // the run only (its command rewrites tools/clean): the probes' output stays as it is
  const pad = `case "$*" in *tools/clean*) head -c 1200000 /dev/zero | tr '\\0' ' ' ;; esac`;
  await writeFile(wrapper, `#!/bin/sh\n'${FSRUN}' "$@"\nrc=$?\n${pad}\nexit $rc\n`, { mode: 0o755 });
  return wrapper;
}

// review25 C1: a run that rewrites the driver and whose fsrun JSON is longer than the adapter's
// buffer (12 x maxBuffer + 1 MiB; then 64 left-out paths of control characters, about 1.4 MB; now
// fsrun's output padded, paddedFsrun) had its JSON cut, was rejected as "without a result" and its
// tamper dropped: the backend stayed "disarmed" with the list of before and the host's git add -A
// ran the rewritten driver. The cut run now takes the route of a killed fsrun: fsrun's tamper and
// hostGitArgs lines on stderr, or "cannot tell". Seen to fail (rejected, marker written) with
// runOneShot's `raw.truncated` route undone.
test(`[${WHO}] one-shot: a run whose fsrun JSON overflows the adapter's buffer keeps its tamper; the host's git add -A runs nothing with hostGitArgs`, async () => {
  const dir = join(work, "overflow");
  await mkdir(dir);
  const wt = await driverWorktree(dir, "task-overflow");
  const marker = join(dir, "marker");
  const b = new FsrunBackend({ fsrunPath: await paddedFsrun(), stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e) });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  const r = await b.run(`printf '#!/bin/sh\\necho ran >>${marker}\\ncat\\n' >tools/clean && echo two >>a.txt`, opts({ cwd: wt, maxBuffer: 4096 }));
  assert.deepEqual([r.truncated, r.tamper, r.hostGitArgs], [true, ["config:filter.x.clean=./tools/clean"], FILTER_X_DISARMED], JSON.stringify(r));
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, FILTER_X_DISARMED]);
  await fusionGitAddRunsNothing(b, wt, marker, 0);
  await rm(dir, { recursive: true, force: true });
});

/** A wrapper of $FSRUN whose `exec` of a run (`--process`) fails as an exec that cannot start its
 * command does (no pid file; review25 C4: a full pids limit) once WRAPPER.fail exists, after the
 * fifo `planted` in wt says that a leftover the resume thawed has planted. */
async function failingExecFsrun(wt: string): Promise<string> {
  const wrapper = join(work, `fsrun-failing-exec-${seq}`);
  const script =
    `#!/bin/sh\ncase " $* " in\n*" exec "*" --process "*)\n  if [ -e "$0.fail" ]; then\n    cat '${join(wt, "planted")}' >/dev/null\n` +
    `    echo "fsrun: exec: clone the exec process into the container's pid namespace: Resource temporarily unavailable" >&2\n    exit 1\n  fi ;;\nesac\nexec "$0.real" "$@"\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  await runCommand("ln", ["-sf", FSRUN, `${wrapper}.real`]);
  return wrapper;
}

// review25 C4: in a task container a run whose exec cannot start its command (a leftover holds the
// pids limit) rejects after the resume: the leftover, thawed, rewrote the driver, and the pause
// walk that followed named it, but exec's finally dropped that walk while the walk made the list
// "hold": Fusion's git between runs ran the driver. The walk now goes with the error into the
// backend's list; with no walk (no freezer) "cannot tell". Fifos say when (no wait on time).
// Seen to fail (hostGitArgs [], marker written) with exec's `afterFailedExec` undone.
test(`[${WHO}] task container: an exec that cannot start after the resume keeps the pause walk's tamper; the host's git add -A runs nothing`, async (t) => {
  const dir = join(work, "failing-exec");
  await mkdir(dir);
  const wt = await driverWorktree(dir, "task-failing-exec");
  const marker = join(dir, "marker");
  const wrapper = await failingExecFsrun(wt);
  const b = new FsrunBackend({ fsrunPath: wrapper, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "task-container" });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const plant = `printf '"'"'#!/bin/sh\\necho ran >>${marker}\\ncat\\n'"'"' >tools/clean; echo x >>a.txt`;
  const leave = `mkfifo go planted ready && setsid -w sh -c '(exec 3<>go; echo >ready; read x <&3; ${plant}; echo >planted; read x <&3) </dev/null >/dev/null 2>&1 &' && cat ready >/dev/null`;
  const r1 = await b.run(leave, opts({ cwd: wt }));
  assert.deepEqual([r1.exitCode, r1.tamper], [0, []], r1.stderr);
  const frozen = (await containerStatus(b)) === "paused";
  if (root) assert.equal(frozen, true, "as root the container is frozen between runs");
  assert.equal((await runCommand("sh", ["-c", 'echo go >"$1"', "sh", join(wt, "go")])).code, 0);
  await writeFile(`${wrapper}.fail`, "");
  await assert.rejects(b.run("true", opts({ cwd: wt })), (e: unknown) => e instanceof FsrunSetupError && /could not start|failed/.test(e.message));
  const failure = events.filter((e) => e.event === "sandbox:failure").at(-1);
  if (frozen) {
    assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, FILTER_X_DISARMED], "the pause walk after the failed exec holds");
    assert.deepEqual([failure?.tamper, failure?.hostGitArgs], [["config:filter.x.clean=./tools/clean"], FILTER_X_DISARMED]);
  } else assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs.slice(0, 2)], [false, ["-c", HOST_GIT_CANNOT_DISARM]], "no walk: cannot tell");
  await fusionGitAddRunsNothing(b, wt, marker, frozen ? 0 : 128);
  await rm(dir, { recursive: true, force: true });
});

// review25 C5: a run that makes 64 nested repositories (the walk's entries used to fill fsrun's
// 64-entry list first) and rewrites the filter driver: the driver is still named, the list says it
// was cut (a `config:unread:` entry), and the run's and the backend's hostGitArgs start with the
// cannot-disarm option (hostGitDisarmed false); with them the host's `git add` exits 128 and runs
// nothing, a plain one runs the driver (the control). Both modes.
test(`[${WHO}] both modes: 64 nested repositories and a rewritten driver: still named, and the host's git with hostGitArgs runs nothing`, async () => {
  for (const mode of ["one-shot", "task-container"] as const) {
    const dir = join(work, `many-nested-${mode}`);
    await mkdir(dir);
    const wt = await driverWorktree(dir, "task-many");
    const marker = join(dir, "marker");
    const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode });
    backends.push(b);
    await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
    const plant = `for i in $(seq 1 64); do mkdir -p n$i/.git; done; printf '#!/bin/sh\\necho ran >>${marker}\\ncat\\n' >tools/clean`;
    const r = await b.run(`${plant} && echo two >>a.txt`, opts({ cwd: wt }));
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual([r.tamper.length, r.tamper[0], r.tamper[1]], [64, "config:unread: (more tamper entries than fsrun reports)", "config:filter.x.clean=./tools/clean"], `${mode}: ${JSON.stringify(r.tamper)}`);
    assert.deepEqual(r.hostGitArgs?.slice(0, 2), ["-c", "core.abbrev=fsrun-cannot-disarm"], `${mode}: ${JSON.stringify(r)}`);
    assert.equal(b.hostGitDisarmed, false);
    await b.dispose();
    assert.equal(b.hostGitDisarmed, false);
    const disarmed = await runCommand("git", [...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "add", "a.txt"], wt, { ...process.env, ...b.hostGitEnv });
    assert.equal(disarmed.code, 128, disarmed.stderr);
    assert.equal(await stat(marker).then(() => true, () => false), false, `${mode}: the host's git ran the rewritten driver under hostGitArgs`);
    await runCommand("git", ["add", "a.txt"], wt);
    assert.match(await readFile(marker, "utf8"), /^ran\n/, "the control: a plain git add runs it");
  }
});

/** A wrapper of $FSRUN whose `delete --tamper-json FILE` deletes and walks, then fails as fsrun
 * does when it cannot write FILE (review25 C7: a disk full): FILE empty, exit 1, one line. */
async function fullWalkFsrun(): Promise<string> {
  const wrapper = join(work, "fsrun-full-walk");
  const script =
    `#!/bin/sh\nfile= prev=\nfor a; do [ "$prev" = --tamper-json ] && file=$a; prev=$a; done\n` +
    `case " $* " in\n*" delete "*)\n  if [ -n "$file" ]; then\n    "$0.real" "$@" || exit\n    : >"$file"\n` +
    `    echo "fsrun: --tamper-json $file: write: No space left on device" >&2\n    exit 1\n  fi ;;\nesac\nexec "$0.real" "$@"\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  await runCommand("ln", ["-sf", FSRUN, `${wrapper}.real`]);
  return wrapper;
}

/** The final-walk tests' command: it leaves a process waiting on the fifo `go`, which then rewrites
 * the driver (tools/clean, which appends to `marker` when it runs) and says so through `planted`. */
function leftPlanter(marker: string): string {
  const plant = `printf '"'"'#!/bin/sh\\necho ran >>${marker}\\ncat\\n'"'"' >tools/clean; echo x >>a.txt`;
  return `mkfifo go planted && setsid -w sh -c '(read x <go; ${plant}; echo >planted) </dev/null >/dev/null 2>&1 &'`;
}

/** After such a dispose(): its audit event said "cannot tell", and the host's `add -A` with the
 * backend's list runs nothing of the rewritten driver (git exits 128). */
async function cannotTellAtDispose(b: FsrunBackend, wt: string, marker: string, dir: string): Promise<void> {
  const ev = events.filter((e) => e.event === "sandbox:dispose").at(-1);
  assert.deepEqual(ev?.hostGitArgs, ["-c", HOST_GIT_CANNOT_DISARM]);
  assert.match(String(ev?.reason), /cannot tell/);
  for (const f of ["go", "planted"]) await rm(join(wt, f), { force: true });
  await fusionGitAddRunsNothing(b, wt, marker, 128);
  await rm(dir, { recursive: true, force: true });
}

// review25 C7: a process the last command left (setsid, no freeze) rewrites the driver after that
// command's walk; dispose()'s fsrun delete kills it and walks, but cannot write its walk (ENOSPC:
// a leftover that fills the disk the adapter's dir is on). dispose() then ended "disarmed" with the
// list of before, and Fusion's git add -A ran the driver. A missing last walk after a process may
// have run since the last walk that held is now "cannot tell". Fifos say when (no wait on time).
// Seen to fail (hostGitDisarmed true, hostGitArgs []) with dispose()'s `container.holds` test undone.
test(`[${WHO}] task container: dispose whose fsrun delete cannot write its last walk after a leftover ran cannot tell, never disarmed`, async (t) => {
  const dir = join(work, "final-enospc");
  await mkdir(dir);
  const wt = await driverWorktree(dir, "task-final-enospc");
  const marker = join(dir, "marker");
  const b = new FsrunBackend({ fsrunPath: await fullWalkFsrun(), stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "task-container", pauseBetweenRuns: false });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const r1 = await b.run(leftPlanter(marker), opts({ cwd: wt }));
  assert.deepEqual([r1.exitCode, r1.tamper, b.hostGitDisarmed], [0, [], false], r1.stderr);
  const planted = await runCommand("timeout", ["-s", "KILL", "60", "sh", "-c", 'echo go >"$1" && cat "$2"', "sh", join(wt, "go"), join(wt, "planted")]);
  assert.equal(planted.code, 0, planted.stderr);
  await b.dispose();
  assert.deepEqual([b.finalTamper, b.hostGitDisarmed, b.hostGitArgs], [null, false, ["-c", HOST_GIT_CANNOT_DISARM]], "no last walk after the leftover ran: cannot tell");
  await cannotTellAtDispose(b, wt, marker, dir);
});

/** fullWalkFsrun's wrapper whose `delete` first lets a process of the container go (a line into the
 * fifo `go`, held open until the process said it is done through the fifo `planted`), so that the
 * process runs after dispose()'s thaw and before delete kills it. */
async function thawedLeftoverFsrun(wt: string): Promise<string> {
  const wrapper = join(work, "fsrun-thawed-leftover");
  const [go, planted] = [join(wt, "go"), join(wt, "planted")];
  const script =
    `#!/bin/sh\ncase " $* " in\n*" delete "*)\n  if [ -p '${go}' ]; then\n` +
    `    exec 3<>'${go}' && echo go >&3 && timeout -s KILL 60 cat '${planted}' >/dev/null || exit 1\n` +
    `    exec 3>&-\n  fi ;;\nesac\nexec '${await fullWalkFsrun()}' "$@"\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  return wrapper;
}

// review25 C7's frozen case: the container frozen between runs with its walk taken (the list holds),
// a process the last command left waiting in it; dispose() thaws it before fsrun delete, the process
// rewrites the driver, and delete's last walk, which would name it, is lost (ENOSPC, as above).
// dispose() cannot tell, never "disarmed": the walk that held was of the frozen state, and a process
// ran since. Fifos say when (no wait on time). Seen to fail with remove()'s `quiet` taking a paused
// container as quiet (`this.holds` alone): [null, true, []].
test(`[${WHO}] task container: dispose whose fsrun delete cannot write its last walk after a frozen leftover was thawed cannot tell, never disarmed`, async (t) => {
  const dir = join(work, "final-frozen");
  await mkdir(dir);
  const wt = await driverWorktree(dir, "task-final-frozen");
  const marker = join(dir, "marker");
  const b = new FsrunBackend({ fsrunPath: await thawedLeftoverFsrun(wt), stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "task-container" });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const r1 = await b.run(leftPlanter(marker), opts({ cwd: wt }));
  assert.deepEqual([r1.exitCode, r1.tamper], [0, []], r1.stderr);
  // frozen and walked: the list holds (without a freezer for this user it cannot, and there is no
  // frozen case to try)
  if (!b.hostGitDisarmed) return t.skip("the container was not frozen between runs (no freezer for this user)");
  await b.dispose();
  assert.deepEqual([b.finalTamper, b.hostGitDisarmed, b.hostGitArgs], [null, false, ["-c", HOST_GIT_CANNOT_DISARM]], "no last walk after the thawed leftover ran: cannot tell");
  assert.match(await readFile(join(wt, "tools", "clean"), "utf8"), /echo ran/, "the leftover rewrote the driver");
  await cannotTellAtDispose(b, wt, marker, dir);
});

// gitunread: a run that makes a config the repository includes one fsrun cannot read whole (over
// 1 MiB, a filter at its end that README's attribute names): the run's hostGitArgs (result, run
// event) and the backend's start with fsrun's cannot-disarm option and hostGitDisarmed is false;
// with them the host's `git status` exits 128 and runs nothing, a plain one runs the filter (the
// control). Both modes (a user whose exec cannot join runs one-shot).
test(`[${WHO}] both modes: a run making an included config over 1 MiB is not disarmed; the host's git with hostGitArgs runs nothing`, async () => {
  for (const mode of ["one-shot", "task-container"] as const) {
    const dir = join(work, `unread-${mode}`);
    await mkdir(dir);
    const wt = await makeWorktree(dir, "task-unread");
    const [marker, evil] = [join(dir, "marker"), join(dir, "evil.sh")];
    await writeFile(evil, `#!/bin/sh\necho ran >>${marker}\ncat\n`, { mode: 0o755 });
    await git(join(dir, "repo"), ["config", "include.path", join(wt, ".gitconfig")]);
    await writeFile(join(wt, "README"), "one\n");
    await git(wt, ["add", "README"]);
    await git(wt, ["commit", "-qm", "README"]);
    const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode });
    backends.push(b);
    await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
    const plant = `{ head -c 1100000 /dev/zero | tr '\\0' '#'; printf '\\n[filter "x"]\\n\\tclean = ${evil}\\n'; } >.gitconfig`;
    const r = await b.run(`${plant} && echo 'README filter=x' >.gitattributes && echo ONE >README`, opts({ cwd: wt }));
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual(r.hostGitArgs?.slice(0, 2), ["-c", "core.abbrev=fsrun-cannot-disarm"], `${mode}: ${JSON.stringify(r)}`);
    assert.deepEqual(events.find((e) => e.runId === r.runId && e.event === "sandbox:run")?.hostGitArgs, r.hostGitArgs);
    assert.equal(b.hostGitDisarmed, false);
    await b.dispose();
    assert.equal(b.hostGitDisarmed, false);
    const disarmed = await runCommand("git", [...b.hostGitArgs, "status"], wt);
    assert.equal(disarmed.code, 128, disarmed.stderr);
    assert.equal(await stat(marker).then(() => true, () => false), false, `${mode}: the host's git ran the planted filter under hostGitArgs`);
    await runCommand("git", ["status"], wt);
    assert.match(await readFile(marker, "utf8"), /^ran\n/, "the control: a plain git status runs it");
  }
});

// review19 #4's tail: a process the last command left (setsid) plants a nested repository after that
// command's tamper walk; no run names it. dispose()'s fsrun delete --tamper-json walks once the
// container is dead: sandbox:dispose and finalTamper name it (fifos say when, no wait on time).
// With pauseBetweenRuns false (the leftover runs on between runs), the runs' reports cannot hold
// once a command ran: hostGitDisarmed false and the cannot-disarm option first (review22 F2).
test(`[${WHO}] task container: dispose names a nested repository a process left after the last command made`, async (t) => {
  const b = await taskBackend({ pauseBetweenRuns: false });
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user: checked that it runs one-shot instead");
  assert.equal(b.hostGitDisarmed, true, "no command ran yet");
  const r = await b.run("mkfifo late-go late-planted && setsid -w sh -c '(read x <late-go; mkdir -p late-nested && echo gitdir: /nonexistent >late-nested/.git; echo >late-planted) </dev/null >/dev/null 2>&1 &'", opts());
  assert.deepEqual([r.exitCode, r.tamper], [0, []], r.stderr);
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [false, ["-c", HOST_GIT_CANNOT_DISARM]], "not frozen: cannot tell");
  const plant = await runCommand("timeout", ["-s", "KILL", "60", "sh", "-c", 'echo go >"$1" && cat "$2"', "sh", join(worktree, "late-go"), join(worktree, "late-planted")]);
  assert.equal(plant.code, 0, plant.stderr);
  await b.dispose();
  for (const f of ["late-go", "late-planted", "late-nested"]) await rm(join(worktree, f), { recursive: true, force: true });
  assert.deepEqual(b.finalTamper, ["late-nested/.git"]);
  const ev = events.filter((e) => e.event === "sandbox:dispose").at(-1);
  assert.deepEqual([ev?.scope, ev?.tamper, ev?.reason], ["task", ["late-nested/.git"], undefined]);
});

// Without a freeze (pauseBetweenRuns false here; an ordinary user without a delegated cgroup has
// none): a run after which nothing of any run is left in the container but its init and `sleep`
// (fsrun exec's leftRunning false) has a final walk, so the host's git is disarmed as with a
// freezer; a run that leaves a `setsid` process (held on a fifo: no wait on time) is not, nor is
// the next run while that process is there, until dispose().
test(`[${WHO}] task container without a freeze: a run that leaves no process is disarmed, a setsid leftover is not`, async (t) => {
  const b = await taskBackend({ pauseBetweenRuns: false });
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user: checked that it runs one-shot instead");
  const r1 = await b.run("true", opts());
  assert.deepEqual([r1.exitCode, b.hostGitDisarmed, b.hostGitArgs], [0, true, []], "nothing is left: the run's walk is final");
  const r2 = await b.run("mkfifo left-hold && setsid -w sh -c '(exec 3<>left-hold; read x <&3) </dev/null >/dev/null 2>&1 &'", opts());
  assert.deepEqual([r2.exitCode, b.hostGitDisarmed, b.hostGitArgs], [0, false, ["-c", HOST_GIT_CANNOT_DISARM]], "a leftover: cannot tell");
  const r3 = await b.run("true", opts());
  assert.deepEqual([r3.exitCode, b.hostGitDisarmed], [0, false], "the leftover is still there");
  await b.dispose();
  await rm(join(worktree, "left-hold"), { force: true });
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, []], "dispose's last walk holds");
});

/** An fsrun that logs its arguments (a line a call) to LOG, then runs the real one. */
async function loggingFsrun(name: string): Promise<{ path: string; calls: (cmd: string) => Promise<number> }> {
  const log = join(work, `${name}.log`);
  const path = join(work, name);
  await writeFile(path, `#!/bin/sh\nprintf '%s\\n' "$*" >>'${log}'\nexec '${FSRUN}' "$@"\n`, { mode: 0o755 });
  const calls = async (cmd: string) => (await readFile(log, "utf8").catch(() => "")).split("\n").filter((l) => l.split(" ").includes(cmd) && !l.includes("--help")).length;
  return { path, calls };
}

const containerStatus = async (b: FsrunBackend) => (JSON.parse((await runCommand(FSRUN, ["--root", stateRoot, "state", b.containerId ?? ""])).stdout) as { status: string }).status;

// pauseskip24: after a run that leaves nothing of any run in the container (fsrun exec's
// leftRunning false, counted before its walk), that walk is final and there is nothing to freeze:
// the adapter neither pauses nor resumes (a wrapper logs fsrun's arguments; the container stays
// running) and the run holds as it did frozen, with the exec's own list. Seen to fail with no
// leftRunning test in settle(): the pauses were there.
test(`[${WHO}] task container: a run that leaves nothing is not paused and holds with its own walk`, async (t) => {
  const fsrun = await loggingFsrun("fsrun-no-pause");
  const b = await backend({ mode: "task-container", fsrunPath: fsrun.path });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const nested = ["-c", "core.fsmonitor=false", "-c", "submodule.recurse=false", "-c", "diff.ignoreSubmodules=all", "-c", "status.submoduleSummary=false"];
  const r1 = await b.run("mkdir -p skip-nested && echo gitdir: /nonexistent >skip-nested/.git", opts());
  assert.deepEqual([r1.exitCode, r1.tamper, r1.hostGitArgs], [0, ["skip-nested/.git"], nested], r1.stderr);
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, nested], "nothing is left: the run's walk is final");
  assert.equal(await containerStatus(b), "running");
  // the next walk starts where the last one began: it may name the repository again (made in
  // the tick that walk began: a repeat), nothing else
  const r2 = await b.run("true", opts());
  assert.deepEqual([r2.exitCode, r2.tamper.filter((p) => p !== "skip-nested/.git"), b.hostGitDisarmed], [0, [], true], r2.stderr);
  assert.deepEqual([await fsrun.calls("pause"), await fsrun.calls("resume")], [0, 0], "no pause, no resume");
  await b.dispose();
  await rm(join(worktree, "skip-nested"), { recursive: true, force: true });
});

// pauseskip24, the other side: a run that leaves a process is paused as before (where a freezer
// exists: root here; an ordinary user without a delegated cgroup has none, the pause is tried and
// fails, and the run cannot hold), and so is the next run while it is there. Three leftovers that
// fsrun exec's --kill-group does not end: a background job in a process group of its own, a
// double-forked daemon (fork, setsid, fork), a process setsid'd into a new session. Each says it
// runs through a fifo the command reads before it ends (no wait on time). A plain `sleep &` is
// not here: --kill-group SIGKILLs it, and whether its zombie is reaped before the count decides
// whether a pause follows (either is safe). Seen to fail with settle() skipping the pause always.
test(`[${WHO}] task container: a run that leaves a process is paused as before`, async (t) => {
  if (!(await stat("/usr/bin/python3").then(() => true, () => false))) return t.skip("needs /usr/bin/python3");
  const leave = {
    "own group": `mkfifo k-ready && { python3 -c 'import os; os.setpgid(0, 0); open("k-ready", "w").write("x\\n"); os.execvp("sleep", ["sleep", "1000"])' </dev/null >/dev/null 2>&1 & } && read x <k-ready`,
    daemon: `mkfifo k-ready && sh -c 'setsid sh -c "(echo >k-ready; exec sleep 1000) &" &' </dev/null >/dev/null 2>&1 && read x <k-ready`,
    setsid: `mkfifo k-ready && setsid -f sh -c 'echo >k-ready; exec sleep 1000' </dev/null >/dev/null 2>&1 && read x <k-ready`,
  };
  for (const [kind, command] of Object.entries(leave)) {
    const fsrun = await loggingFsrun(`fsrun-pause-${kind.replace(" ", "-")}`);
    const b = await backend({ mode: "task-container", fsrunPath: fsrun.path });
    if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
    const r = await b.run(command, opts());
    assert.equal(r.exitCode, 0, `${kind}: ${r.stderr}`);
    const frozen = (await containerStatus(b)) === "paused";
    assert.equal(await fsrun.calls("pause"), 1, `${kind}: a pause after the run`);
    if (root) assert.equal(frozen, true, `${kind}: as root the container is frozen`);
    assert.equal(b.hostGitDisarmed, frozen, `${kind}: frozen, the walk holds; not, cannot tell`);
    const again = await b.run("true", opts());
    assert.equal(again.exitCode, 0, again.stderr);
    assert.deepEqual([await fsrun.calls("pause"), await fsrun.calls("resume")], frozen ? [2, 1] : [2, 0], `${kind}: the leftover is still there`);
    await b.dispose();
    await rm(join(worktree, "k-ready"), { force: true });
  }
});

/**
 * review23 A2's injection (x86_64): writes an execve of `sh -c CMD` over the `syscall` instruction
 * that pid PID is stopped at (read from /proc/PID/syscall), through /proc/PID/mem, then stops and
 * continues PID so that the restarted call runs it, and waits (spinning) until PID runs sh. Prints
 * `refused: ERRNO` and exits 0 when /proc/PID/mem cannot be opened for writing.
 */
const INJECT_PY = [
  "import errno, os, signal, struct, sys",
  "pid, cmd = int(sys.argv[1]), sys.argv[2].encode()",
  "try:",
  "    mem = open(f'/proc/{pid}/mem', 'r+b', buffering=0)",
  "except OSError as e:",
  "    print('refused:', errno.errorcode[e.errno]); sys.exit(0)",
  "a = int(open(f'/proc/{pid}/syscall').read().split()[-1], 16) - 2",
  "code_len = 29; data_off = (code_len + 7) & ~7",
  "strs = b'/bin/sh\\0-c\\0' + cmd + b'\\0'",
  "p_sh = a + data_off; p_c = p_sh + 8; p_cmd = p_c + 3",
  "argv_off = (data_off + len(strs) + 7) & ~7",
  "code = b'\\x48\\xbf' + struct.pack('<Q', p_sh) + b'\\x48\\xbe' + struct.pack('<Q', a + argv_off) + b'\\x31\\xd2\\xb8\\x3b\\x00\\x00\\x00\\x0f\\x05'",
  "blob = (code.ljust(data_off, b'\\x90') + strs).ljust(argv_off, b'\\0') + struct.pack('<4Q', p_sh, p_c, p_cmd, 0)",
  "mem.seek(a); mem.write(blob)",
  "os.kill(pid, signal.SIGSTOP); os.kill(pid, signal.SIGCONT)",
  "while not open(f'/proc/{pid}/cmdline', 'rb').read().startswith(b'/bin/sh'): pass",
  "print('injected')",
].join("\n");

// review23 A2 through the adapter: without a freezer the no-leftover count leaves out the
// container's own processes (the init and config.json's `sleep`); a command that writes code into
// `sleep` through /proc/PID/mem would leave a planter there, after the walk, in a run said disarmed.
// The exec's Landlock domain refuses the open (EACCES), so no planter exists after the run: a
// non-blocking open of its fifo for writing finds no reader (ENXIO). The fix broken, the sleep waits
// on that fifo to plant while the run is disarmed, and the open finds it.
test(`[${WHO}] task container without a freeze: a command cannot hide a planter in the container's sleep`, async (t) => {
  if (process.arch !== "x64") return t.skip("the injected code is x86_64's");
  if (!(await stat("/usr/bin/python3").then(() => true, () => false))) return t.skip("needs /usr/bin/python3");
  const b = await taskBackend({ pauseBetweenRuns: false });
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user: checked that it runs one-shot instead");
  const go = join(worktree, "a2-go");
  await writeFile(join(worktree, "a2-inject.py"), INJECT_PY);
  await runCommand("mkfifo", ["-m", "666", go]);
  // the container's `sleep` by its command line, not by a pid number: `start` returns once the
  // tiny init has replaced fsrun's init, before it forks the process, so root's first exec may
  // join first and take pid 2 (a run under load once found /proc/2 gone: ENOENT)
  const sleeper = "p=; for i in $(seq 200); do p=$(pgrep -xf 'sleep infinity') && break; sleep 0.05; done";
  const r = await b.run(`${sleeper}; python3 a2-inject.py "$p" "read x < ${go}; touch ${worktree}/a2-planted"`, opts());
  const planter = await open(go, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK).then(
    async (f) => {
      await f.write("go\n");
      await f.close();
      return "a planter waits";
    },
    (e: NodeJS.ErrnoException) => e.code,
  );
  assert.deepEqual([r.exitCode, r.stdout, planter], [0, "refused: EACCES\n", "ENXIO"], `hostGitDisarmed ${b.hostGitDisarmed}: ${r.stderr}`);
  assert.equal(b.hostGitDisarmed, true, "nothing could plant: the run's walk is final");
  await b.dispose();
  for (const f of ["a2-go", "a2-inject.py", "a2-planted"]) await rm(join(worktree, f), { force: true });
});

// review22 F2, nb.sh through the adapter: nbstripout's own filter, and a command that leaves a
// process (setsid) which plants nbstripout.py once the host releases it (fifo `go`) after the run
// returned. The run freezes the container and walks it (fsrun pause --tamper-json): the leftover
// cannot plant before Fusion's git, and the host's `git add -A` with hostGitArgs and the safe line
// runs nothing. Where the container is not frozen (the fix broken), the host waits for the plant
// (fifo `planted`) and the same add runs the planted module: the witness tells. The next run
// resumes it, the plant lands, that run names it with the filter's options: with them the add runs
// nothing; a plain add runs it (the control). An ordinary user without a cgroup cannot freeze: the
// list then starts with the cannot-disarm option (the add exits 128 and runs nothing) until dispose.
test(`[${WHO}] task container: a process a command left cannot plant between the run and the host's git; what it plants later is named before the host's git runs`, async (t) => {
  if (!(await stat("/usr/bin/python3").then(() => true, () => false))) return t.skip("needs /usr/bin/python3");
  const dir = join(work, "window");
  await mkdir(dir);
  const wt = await makeWorktree(dir, "task-window");
  const witness = join(dir, "witness");
  await git(join(dir, "repo"), ["config", "filter.nbstripout.clean", '"/usr/bin/python3" -m nbstripout']);
  await writeFile(join(wt, ".gitattributes"), "*.ipynb filter=nbstripout\n");
  await writeFile(join(wt, "a.ipynb"), "{}\n");
  await git(wt, ["add", "-A"]);
  await git(wt, ["commit", "-qm", "nb"]);
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "task-container" });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const module = `import sys\\nopen("${witness}", "a").write("ran\\\\n")\\nsys.stdout.write(sys.stdin.read())\\n`;
  // the leftover holds `go` open (read-write: no wait for a writer) before the run ends, so the
  // host's write never waits, frozen or not; after the plant it waits on `go` again (it is still
  // there at the next run: that run cannot hold either, whenever it ends)
  const leave = `mkfifo go planted ready && setsid -w sh -c '(exec 3<>go; echo >ready; read x <&3; printf '"'"'${module}'"'"' >nbstripout.py; echo x >>a.ipynb; echo >planted; read x <&3) </dev/null >/dev/null 2>&1 &' && cat ready >/dev/null`;
  const r1 = await b.run(leave, opts({ cwd: wt }));
  assert.deepEqual([r1.exitCode, r1.tamper], [0, []], r1.stderr);
  const git2 = (args: string[]) => runCommand("git", [...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, ...args], wt);
  // release the leftover
  assert.equal((await runCommand("sh", ["-c", 'echo go >"$1"', "sh", join(wt, "go")])).code, 0);
  const state = await runCommand(FSRUN, ["--root", stateRoot, "state", b.containerId ?? ""]);
  const frozen = (JSON.parse(state.stdout) as { status: string }).status === "paused";
  if (root) assert.equal(frozen, true, "as root the container is frozen between runs");
  if (!frozen) await runCommand("cat", [join(wt, "planted")]); // nb.sh's wait: the plant is done
  const want = ["-c", "filter.nbstripout.clean=", "-c", "filter.nbstripout.smudge=", "-c", "filter.nbstripout.process=", "-c", "filter.nbstripout.required=false"];
  const cannot = ["-c", HOST_GIT_CANNOT_DISARM];
  // frozen: nothing planted yet, and nothing can plant; not (no cgroup to freeze): cannot tell
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], frozen ? [true, []] : [false, cannot]);
  const add1 = await git2(["add", "-A"]);
  assert.equal(add1.code, frozen ? 0 : 128, add1.stderr);
  assert.equal(await stat(witness).then(() => true, () => false), false, "the host's git ran what the leftover planted after the run's walk");
  // the next run thaws it; its command waits for the plant (inside the container)
  const r2 = await b.run(frozen ? "cat planted >/dev/null" : "true", opts({ cwd: wt }));
  assert.deepEqual([r2.exitCode, r2.tamper, r2.hostGitArgs], [0, ['config:filter.nbstripout.clean="/usr/bin/python3" -m nbstripout'], want], r2.stderr);
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], frozen ? [true, want] : [false, [...cannot, ...want]]);
  const add2 = await git2(["add", "-A"]);
  assert.equal(add2.code, frozen ? 0 : 128, add2.stderr);
  assert.equal(await stat(witness).then(() => true, () => false), false, "the host's git ran the planted module under hostGitArgs");
  await b.dispose();
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, want], "dispose's last walk holds: every process is dead");
  await writeFile(join(wt, "a.ipynb"), "{  }\n");
  assert.equal((await runCommand("git", ["add", "-A"], wt)).code, 0);
  assert.equal(await readFile(witness, "utf8"), "ran\n", "the control: a plain git add -A runs it");
});

// review22 F2, one-shot: while a run of the task is in flight, what it plants after another run's
// walk is in no report yet: hostGitDisarmed false, the cannot-disarm option first (fifos hold the
// run; no wait on time).
test(`[${WHO}] one-shot: while a run is in flight the host's git is not disarmed`, async () => {
  const b = await backend();
  assert.equal(b.hostGitDisarmed, true);
  await runCommand("mkfifo", [join(worktree, "hold-1"), join(worktree, "hold-2")]);
  await runCommand("chmod", ["666", join(worktree, "hold-1"), join(worktree, "hold-2")]);
  const run = b.run("cat hold-1 >/dev/null; cat hold-2 >/dev/null", opts());
  assert.equal((await runCommand("sh", ["-c", 'echo >"$1"', "sh", join(worktree, "hold-1")])).code, 0);
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [false, ["-c", HOST_GIT_CANNOT_DISARM]], "a run is in flight");
  assert.equal((await runCommand("sh", ["-c", 'echo >"$1"', "sh", join(worktree, "hold-2")])).code, 0);
  assert.equal((await run).exitCode, 0);
  assert.deepEqual([b.hostGitDisarmed, b.hostGitArgs], [true, []], "none is");
  await rm(join(worktree, "hold-1"));
  await rm(join(worktree, "hold-2"));
});

/** The README's host git line: the worktree's explicit git dir and work tree, hostGitArgs, the safe line, hostGitEnv. */
const hostGit = (b: FsrunBackend, cwd: string, args: string[]) =>
  runCommand("git", [...b.hostGitWorktreeArgs, ...b.hostGitArgs, ...HOST_GIT_SAFE_ARGS, "-c", "user.name=fusion", "-c", "user.email=fusion@example.com", ...args], cwd, { ...process.env, ...b.hostGitEnv });

// review27 E7: a repository 8 levels down (past the walk's 6) with a filter in its own config; the
// run's walk cannot see it (no gitlink yet), so the run is "disarmed". The README's host cycle:
// `add -A` makes it a gitlink (runs nothing), `commit` fails (the safe line sees a gitlink-only
// change as nothing to commit). dispose()'s last walk (one-shot: a sandboxed `true`) reads the
// host's index, finds the gitlink's repository and says cannot disarm: the second `add -A` a
// Fusion would run fails at once. The control: the same `add -A` without hostGitArgs runs the filter.
test(`[${WHO}] one-shot: after the host's add -A made a deep repository a gitlink, dispose()'s last walk cannot disarm; a second add runs nothing`, async () => {
  const dir = join(work, "deep-gitlink");
  await mkdir(dir);
  const wt = await makeWorktree(dir, "task-deep");
  const marker = join(dir, "marker");
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "one-shot" });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  const deep = [
    "set -e; d=a/b/c/d/e/f/g/deep; mkdir -p $d && cd $d && git init -q && git config user.name a && git config user.email a@x",
    "echo a >f && git add f && git commit -qm s",
    `printf '[filter "x"]\\n\\tclean = "touch ${marker}; cat"\\n' >>.git/config`,
    "echo 'f filter=x' >.git/info/attributes && touch -d 2001-01-01 f",
  ].join("\n");
  const r = await b.run(deep, opts({ cwd: wt }));
  assert.deepEqual([r.exitCode, r.tamper, b.hostGitDisarmed], [0, [], true], `past the walk's reach, no gitlink yet: ${r.stderr}`);
  assert.equal((await hostGit(b, wt, ["status", "--porcelain", "--ignore-submodules=all"])).code, 0);
  const add = await hostGit(b, wt, ["add", "-A"]);
  assert.equal(add.code, 0, add.stderr);
  const commit = await hostGit(b, wt, ["commit", "-q", "-m", "task"]);
  assert.equal(commit.code, 1, `the safe line sees a gitlink-only change as nothing to commit: ${commit.stdout}`);
  assert.equal(await stat(marker).then(() => true, () => false), false, "the first add ran the deep repository's filter");
  await b.dispose();
  assert.equal(b.hostGitDisarmed, false, "dispose()'s last walk after the host's add");
  assert.deepEqual(b.hostGitArgs.slice(0, 2), ["-c", HOST_GIT_CANNOT_DISARM]);
  assert.deepEqual(b.finalTamper, []);
  const ev = events.filter((e) => e.event === "sandbox:dispose").at(-1);
  assert.deepEqual(ev?.hostGitArgs?.slice(0, 2), ["-c", HOST_GIT_CANNOT_DISARM], "the sandbox:dispose event");
  const second = await hostGit(b, wt, ["add", "-A"]);
  assert.notEqual(second.code, 0, "the cannot-disarm option makes git fail at once");
  assert.equal(await stat(marker).then(() => true, () => false), false, "the second add ran the deep repository's filter");
  const plain = await runCommand("git", [...b.hostGitWorktreeArgs, ...HOST_GIT_SAFE_ARGS, "add", "-A"], wt);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(await stat(marker).then(() => true, () => false), true, "the control: a second add without hostGitArgs runs it");
});

// review27 E4: the run makes `packages/foo` a git dir of its own (`git init --bare .`, core.bare
// false, core.worktree = the top; no `.git` entry for fsrun's walk to look at), with a filter and a
// stat-dirty file in its index. The host's git run from `packages/foo` with the worktree's explicit
// --git-dir/--work-tree (hostGitWorktreeArgs) discovers nothing and runs nothing of it; the control:
// the same line without them, from there, discovers `packages/foo` and runs the filter.
test(`[${WHO}] one-shot: a subdirectory the run made a git dir is not the host's repository with hostGitWorktreeArgs, whatever git's cwd`, async () => {
  const dir = join(work, "bare-subdir");
  await mkdir(dir);
  const wt = await makeWorktree(dir, "task-bare");
  const marker = join(dir, "marker");
  await writeFile(join(wt, "a.txt"), "a\n");
  const b = new FsrunBackend({ fsrunPath: FSRUN, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "one-shot" });
  backends.push(b);
  await b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: wt, policy: basePolicy() });
  const bare = [
    'set -e; top=$(pwd); mkdir -p packages/foo && cd packages/foo && git init -q --bare .',
    'git config core.bare false && git config core.worktree "$top"',
    `printf '[filter "y"]\\n\\tclean = "touch ${marker}; cat"\\n' >>config && echo '*.txt filter=y' >info/attributes`,
    'cd "$top" && git --git-dir=packages/foo --work-tree="$top" add a.txt && touch -d 2001-01-01 a.txt',
  ].join("\n");
  const r = await b.run(bare, opts({ cwd: wt }));
  assert.equal(r.exitCode, 0, r.stderr);
  const sub = join(wt, "packages", "foo");
  for (const args of [["status", "--porcelain", "--ignore-submodules=all"], ["add", "-A"]]) {
    const g = await hostGit(b, sub, args);
    if (b.hostGitDisarmed) assert.equal(g.code, 0, g.stderr);
    assert.equal(await stat(marker).then(() => true, () => false), false, `git ${args[0]} from packages/foo ran the run's filter`);
  }
  assert.deepEqual(b.hostGitWorktreeArgs, [`--git-dir=${wt}/.git`, `--work-tree=${wt}`]);
  const plain = await runCommand("git", [...HOST_GIT_SAFE_ARGS, "status", "--porcelain", "--ignore-submodules=all"], sub);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(await stat(marker).then(() => true, () => false), true, "the control: git's discovery from packages/foo runs it");
});

test(`[${WHO}] task container: runs exec into one container; dispose deletes it`, async (t) => {
  const b = await taskBackend();
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user: checked that it runs one-shot instead");
  const id = b.containerId ?? "";
  assert.deepEqual(await containers((c) => c === id), [id]);
  const r = await b.run('echo "v=$VISIBLE h=$HIDDEN"; pwd', opts({ cwd: join(worktree, "pkg"), env: { VISIBLE: "yes", HIDDEN: "no" } }));
  assert.equal(r.stdout, `v=yes h=\n${worktree}/pkg\n`);
  assert.deepEqual([r.exitCode, r.signal], [0, null]);
  assert.deepEqual([(await b.run("exit 3", opts())).exitCode], [3]);
  await b.dispose();
  assert.deepEqual(await containers((c) => c === id), []);
});

// review21 L7: the command's variables (tokens) and its text are in no argument of fsrun exec,
// which any local user reads in /proc/PID/cmdline; the command still gets them. Seen to fail with
// task-container.ts passing them as `--env NAME=VALUE` again: the recorded argv held the token.
test(`[${WHO}] task container: the command's variables are in no fsrun argument; the command gets them`, async (t) => {
  const argvLog = join(work, "exec-argv.log");
  const wrapper = join(work, "fsrun-argv");
  await writeFile(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >>'${argvLog}'\nexec '${FSRUN}' "$@"\n`, { mode: 0o755 });
  const b = await backend({ mode: "task-container", fsrunPath: wrapper }, { ...basePolicy(), envAllowlist: ["VISIBLE", "NPM_TOKEN"] });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user (one-shot: its own test covers argv)");
  const token = "npm_SECRET_l7";
  const r = await b.run('printf "%s %s\\n" "$NPM_TOKEN" "$VISIBLE"; pwd', opts({ cwd: join(worktree, "pkg"), env: { NPM_TOKEN: token, VISIBLE: "v w", HIDDEN: "no" } }));
  assert.equal(r.stdout, `${token} v w\n${worktree}/pkg\n`, r.stderr);
  await b.dispose();
  const argv = await readFile(argvLog, "utf8");
  assert.match(argv, / exec .*--process /, argv);
  assert.equal(argv.includes(token), false, argv);
  assert.equal(argv.includes("VISIBLE"), false, argv);
});

test(`[${WHO}] a policy whose writablePaths reach fsrun's state root is refused at prepare in both modes (FsrunPolicyError naming the entry); nothing is left`, async () => {
  // the parent of the state root, which also holds the worktree: the command could rewrite every container's state.json
  const policy = { ...basePolicy(), writablePaths: [dirname(stateRoot)] };
  const before = await containers();
  for (const mode of ["one-shot", "task-container"] as const) {
    await assert.rejects(
      backend({ mode }, policy),
      (e: unknown) => e instanceof FsrunPolicyError && /writablePaths\[0\]: `[^`]+` reaches fsrun's state root `[^`]+`/.test(e.message),
    );
  }
  assert.deepEqual(await containers(), before);
});

test(`[${WHO}] a policy that lets the command write TMPDIR: one-shot and task container prepare and run; no bundle is in TMPDIR`, async () => {
  // a private TMPDIR of this process (os.tmpdir() reads it on each call), never the host's /tmp
  const privateTmp = await tempDir("fsrun-fusion-tmpdir-");
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = privateTmp;
  try {
    assert.equal(await realpath(tmpdir()), privateTmp);
    const policy = { ...basePolicy(), writablePaths: [tmpdir()] };
    const one = await backend({}, policy);
    assert.equal((await one.run(`echo w > "${privateTmp}/w" && cat "${privateTmp}/w"`, opts())).stdout, "w\n");
    await one.dispose();
    const task = await backend({ mode: "task-container" }, policy);
    assert.equal((await task.run("echo in-task", opts())).stdout, "in-task\n");
    // while the task container lives, its bundle, pid files and logs are out of the command's reach
    assert.deepEqual(await readdir(privateTmp), ["w"]);
    await task.dispose();
    await assert.rejects(backend({}, { ...basePolicy(), writablePaths: ["/"] }), (e: unknown) => e instanceof FsrunSetupError && /^prepare: ctx\.policy\.writablePaths /.test(e.message));
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await rm(privateTmp, { recursive: true, force: true });
  }
});

test(`[${WHO}] TMPDIR a bind mount of a writablePaths entry: the task container's bundle is made elsewhere (review19 #6)`, async (t) => {
  if (process.getuid?.() !== 0) return t.skip("a bind mount needs root; the ordinary user's own TMPDIR case is the test above");
  const writable = await tempDir("fsrun-fusion-writable-");
  const alias = await tempDir("fsrun-fusion-alias-");
  assert.equal(spawnSync("mount", ["--bind", writable, alias]).status, 0);
  // root's first choice is XDG_RUNTIME_DIR (fsrun's own state root stays /run/fsrun for root)
  const saved = { TMPDIR: process.env.TMPDIR, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  process.env.TMPDIR = alias;
  process.env.XDG_RUNTIME_DIR = alias;
  try {
    const task = { taskId: `it-${WHO}`, runId: "alias", worktree, policy: { ...basePolicy(), writablePaths: [writable] } };
    const dir = await privateDir(task, "fsrun-fusion-task-");
    try {
      // nothing of the adapter's is in the directory the command writes, under either name
      assert.deepEqual(await readdir(writable), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // and fsrun refuses a writablePaths entry that is the caller's runtime dir (its sockets),
    // before it writes anything (review20 F)
    await assert.rejects(backend({ mode: "task-container" }, task.policy), /writablePaths\[0\]: .* is or holds .*runtime dir/);
    assert.deepEqual(await readdir(writable), []);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    spawnSync("umount", [alias]);
    await rm(alias, { recursive: true, force: true });
    await rm(writable, { recursive: true, force: true });
  }
});

// dispose() once more (after() disposes every backend of the file again) walked again: a sandbox
// over a policy whose writablePaths entry the test had removed, which fsrun made again (an empty
// fsrun-fusion-tmpdir-* in /tmp from every run of this file). Seen to fail without the early
// return in FsrunBackend.dispose: two sandbox:dispose events, and the directory back.
test(`[${WHO}] one-shot: a second dispose() walks nothing and says nothing`, async () => {
  const gone = await tempDir("fsrun-fusion-gone-");
  const runId = `r${++seq}`;
  const b = await backend({}, { ...basePolicy(), writablePaths: [gone] }, { taskId: `it-${WHO}`, runId });
  assert.equal((await b.run("true", opts())).exitCode, 0);
  const disposals = () => events.filter((e) => e.event === "sandbox:dispose" && e.runId === runId).length;
  await b.dispose();
  assert.equal(disposals(), 1);
  await rm(gone, { recursive: true, force: true });
  await b.dispose();
  assert.equal(disposals(), 1);
  await assert.rejects(stat(gone), { code: "ENOENT" });
});

// A task container made while dispose() ran (prepare's `fsrun start` held until dispose returned)
// is deleted with its directory, and prepare fails: before, dispose found no container yet and
// both were left (the adapter's 0700 directory under XDG_RUNTIME_DIR, /run for root, and the
// container). Seen to fail without the disposed check in FsrunBackend.prepare.
test(`[${WHO}] task container: dispose() during prepare leaves no container and no directory`, async () => {
  const runtime = await tempDir("fsrun-fusion-runtime-");
  const wrapper = join(work, `fsrun-held-start-${++seq}`);
  await writeFile(wrapper, `#!/bin/sh\nif [ "$3" = start ]; then\n  : >"$0.started"\n  while [ ! -e "$0.go" ]; do sleep 0.05; done\nfi\nexec '${FSRUN}' "$@"\n`, { mode: 0o755 });
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runtime;
  try {
    const b = new FsrunBackend({ fsrunPath: wrapper, stateRoot, killGraceMs: 300, onAudit: (e) => events.push(e), mode: "task-container" });
    backends.push(b);
    const before = await containers();
    const prepared = b.prepare({ taskId: `it-${WHO}`, runId: `r${++seq}`, worktreePath: worktree, policy: basePolicy() });
    const failed = assert.rejects(prepared, /prepare: the backend was disposed/);
    await waitFor("prepare's fsrun start", () => stat(`${wrapper}.started`).then(() => true, () => false));
    await b.dispose();
    await writeFile(`${wrapper}.go`, "");
    await failed;
    assert.deepEqual(await containers(), before);
    assert.deepEqual((await readdir(runtime)).filter((n) => n.startsWith("fsrun-fusion-")), []);
  } finally {
    if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = saved;
    await writeFile(`${wrapper}.go`, "");
    await rm(runtime, { recursive: true, force: true });
  }
});

test(`[${WHO}] task container: exit 130 is an exit, kill -INT $$ a signal, as in one-shot mode`, async (t) => {
  const tb = await taskBackend();
  if (tb === null) return t.skip("fsrun exec cannot join the task container as this user");
  const one = await backend();
  for (const b of [tb, one]) {
    const e = await b.run("exit 130", opts());
    assert.deepEqual([e.exitCode, e.signal], [130, null], `${b.effectiveMode}: ${JSON.stringify(e)}`);
    const k = await b.run("kill -INT $$", opts());
    assert.deepEqual([k.exitCode, k.signal], [null, "SIGINT"], `${b.effectiveMode}: ${JSON.stringify(k)}`);
    const x = await b.run("exit 137", opts());
    assert.deepEqual([x.exitCode, x.signal, x.oomKilled], [137, null, false], `${b.effectiveMode}: ${JSON.stringify(x)}`);
  }
});

test(`[${WHO}] task container: the memory limit's kill is oomKilled where the caller has a memory cgroup`, async (t) => {
  const b = await backend({ mode: "task-container" }, { ...basePolicy(), memoryLimitMb: 32 });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  // tail grows its line buffer without end: an address-space limit bounds it where nothing else
  // does (once, with no memory cgroup, it reached 13.7 GB)
  if (b.capabilities().resourceLimits !== "advanced") {
    // no memory cgroup for this caller: the hog runs out of its 64 MB and fails on its own, and
    // there is nothing the sandbox could report, so false
    const u = await b.run("ulimit -v 65536; exec tail /dev/zero", opts());
    assert.equal(u.oomKilled, false, JSON.stringify(u));
    assert.deepEqual([u.exitCode !== 0, u.signal], [true, null], JSON.stringify(u));
    return;
  }
  // the 32 MB limit's kill comes long before the 1 GB guard
  const r = await b.run("ulimit -v 1048576; exec tail /dev/zero", opts());
  assert.deepEqual([r.exitCode, r.signal, r.oomKilled], [null, "SIGKILL", true], JSON.stringify(r));
  // the next command was not killed
  const n = await b.run("exit 0", opts());
  assert.deepEqual([n.exitCode, n.oomKilled], [0, false]);
});

test(`[${WHO}] task container: a timeout and an abort kill their own command's tree and nothing else`, async (t) => {
  const b = await taskBackend();
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user");
  const other = b.run("touch other-started; while [ ! -e other-go ]; do sleep 0.05; done; echo other-done", opts({ timeoutMs: 60_000 }));
  await waitFor("the other command to start", () => readFile(join(worktree, "other-started")).then(() => true, () => false));
  const tr = await b.run("sleep 60 & echo $! > bg.pid; sleep 60", opts({ timeoutMs: 300 }));
  assert.equal(tr.timedOut, true);
  assert.deepEqual([tr.exitCode, tr.signal], [null, "SIGKILL"]);
  const c = new AbortController();
  const a = b.run("trap '' TERM; touch started; sleep 60", opts({ signal: c.signal }));
  await waitFor("the command to start", () => readFile(join(worktree, "started")).then(() => true, () => false));
  c.abort();
  const ar = await a;
  assert.equal(ar.aborted, true);
  assert.equal(ar.signal, "SIGKILL");
  // the other command lived through both
  await writeFile(join(worktree, "other-go"), "");
  const o = await other;
  assert.equal(o.stdout, "other-done\n");
  for (const f of ["other-started", "other-go", "started", "bg.pid"]) await rm(join(worktree, f), { force: true });
});

// The module object proc.ts calls spawn() on (CommonJS: looked up at each call)
const childProcess = require("node:child_process") as { spawn: unknown };

/** fn, with each `fsrun exec --pid-file` the adapter spawns held inside spawn() (the event loop
 * waits, so no timer fires) until that fsrun is held writing its pid file: the wrapper of
 * stallingFsrun() has strace stop it at the rename onto the pid file, which strace's log
 * (WRAPPER.hold.PID) then says. `held` says, per exec, whether it got there. */
async function withExecHeldAtPidFile<T>(fn: () => Promise<T>): Promise<{ value: T; held: string[] }> {
  const real = childProcess.spawn as (file: string, args: readonly string[], options: SpawnOptions) => { pid?: number };
  const held: string[] = [];
  const logs: string[] = [];
  const wait = 'while :; do grep -q "stopped by SIGSTOP" "$1" 2>/dev/null && exit 0; grep -q "^State:.*Z" /proc/$0/status && exit 1; sleep 0.01; done';
  childProcess.spawn = (file: string, args: readonly string[], options: SpawnOptions) => {
    const child = real(file, args, options);
    if (args.includes("exec") && args.includes("--pid-file")) {
      logs.push(`${file}.hold.${child.pid}`);
      const r = spawnSync("timeout", ["20", "sh", "-c", wait, String(child.pid), logs[logs.length - 1]]);
      held.push(r.status === 0 ? "held" : `not held (status ${r.status})`);
    }
    return child;
  };
  try {
    return { value: await fn(), held };
  } finally {
    childProcess.spawn = real;
    for (const log of logs) await rm(log, { force: true });
  }
}

/** Whether strace runs here (stallingFsrun's hold needs it). */
function straceRuns(): boolean {
  return spawnSync("strace", ["-V"]).status === 0;
}

/** A wrapper of $FSRUN whose `exec --pid-file F` stops when it renames its written temporary file
 * onto F: strace (-D: fsrun keeps the wrapper's pid, strace is no parent of it) fails that rename
 * with a restart and a SIGSTOP, logged to WRAPPER.hold.PID. Nothing resumes it: the adapter's
 * SIGKILL ends it, and strace, with nothing left to trace, ends too. (A fifo at the temporary name
 * held fsrun before; fsrun now makes that file new, O_EXCL, so nothing left there is written.) */
async function stallingFsrun(): Promise<string> {
  const wrapper = join(work, "fsrun-stalling-pid-file");
  const script =
    `#!/bin/sh\nprev=\npf=\nfor a in "$@"; do\n  if [ "$prev" = --pid-file ]; then pf=$a; fi\n  prev=$a\ndone\n` +
    `[ -n "$pf" ] || exec "$0.real" "$@"\n` +
    `exec strace -D -qq -o "$0.hold.$$" -P "$pf" -e trace=rename,renameat,renameat2 ` +
    `-e inject=rename,renameat,renameat2:error=ERESTARTNOINTR:signal=SIGSTOP "$0.real" "$@"\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  await runCommand("ln", ["-sf", FSRUN, `${wrapper}.real`]);
  return wrapper;
}

/** The host pids of the processes in the pid namespace of the container's init. */
async function containerPids(id: string): Promise<number[]> {
  const state = await runCommand(FSRUN, ["--root", stateRoot, "state", id]);
  const init = (JSON.parse(state.stdout) as { pid: number }).pid;
  const ns = (await stat(`/proc/${init}/ns/pid`)).ino;
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = await stat(`/proc/${entry}/ns/pid`).catch(() => null);
    if (s !== null && s.ino === ns) pids.push(Number(entry));
  }
  return pids.sort((x, y) => x - y);
}

test(`[${WHO}] task container: a timeout while fsrun exec writes the pid file leaves no command running`, async (t) => {
  if (!straceRuns()) return t.skip("no strace here: fsrun exec cannot be held at its pid file");
  const b = await backend({ mode: "task-container", fsrunPath: await stallingFsrun() });
  if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
  const gate = join(worktree, "stall-gate");
  await runCommand("mkfifo", [gate]);
  const id = b.containerId ?? "";
  const before = (await containerPids(id)).join(" "); // fsrun's init and `sleep infinity`
  // the timer (1 ms) is armed once spawn() returns: it fires with fsrun exec blocked in the pid file
  const { value: r, held } = await withExecHeldAtPidFile(() => b.run("touch stall-started; read x < stall-gate; touch stall-late", opts({ timeoutMs: 1 })));
  assert.deepEqual(held, ["held"]);
  assert.equal(r.timedOut, true);
  assert.deepEqual([r.exitCode, r.signal], [null, "SIGKILL"]);
  // the command never ran and never will: the container holds what it held before
  let left: number[] = [];
  await waitFor("the container to hold what it held before", async () => (left = await containerPids(id)).join(" ") === before).catch(async () => {
    const what = await Promise.all(left.map((p) => readFile(`/proc/${p}/cmdline`, "utf8").then((c) => `${p}: ${c.replace(/\0/g, " ")}`, () => `${p}`)));
    assert.fail(`processes left in the container after the timeout: ${what.join("; ")}`);
  });
  await assert.rejects(readFile(join(worktree, "stall-started")), "the command ran after the adapter reported the timeout");
  // a command left behind (the bug) is let go, so that it ends
  const g = await open(gate, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK).catch(() => null);
  await g?.close();
  for (const f of ["stall-gate", "stall-started", "stall-late"]) await rm(join(worktree, f), { force: true });
  await b.dispose();
});

test(`[${WHO}] task container: a command's background job ends with it; a setsid daemon lives until dispose`, async (t) => {
  const b = await taskBackend();
  if (b === null) return t.skip("fsrun exec cannot join the task container as this user");
  const r = await b.run("sleep 60 & echo $!", opts());
  assert.equal(r.exitCode, 0);
  const job = r.stdout.trim();
  assert.match(job, /^[0-9]+$/);
  const d = await b.run("setsid -w sh -c 'sleep 60 > /dev/null 2>&1 < /dev/null &'; echo started", opts());
  assert.equal(d.stdout, "started\n");
  // the background job is gone, the daemon is there: one `sleep 60`, not the job. Polled (bounded,
  // failure only): the job was SIGKILLed but may not have run its exit yet, and the daemon's fork
  // may not have exec'd `sleep` yet (its command line is the shell's until then)
  const sleeps = `sleeps() { for p in /proc/[0-9]*; do [ "$(tr '\\0' ' ' 2>/dev/null < $p/cmdline)" = "sleep 60 " ] && echo \${p#/proc/}; done; }`;
  const ps = await b.run(`${sleeps}; i=0; while [ "$(sleeps | grep -cvx ${job})" != 1 ] || sleeps | grep -qx ${job}; do [ $i -lt ${WAIT_MAX_MS / 100} ] || break; sleep 0.1; i=$((i+1)); done; sleeps`, opts());
  const pids = ps.stdout.split("\n").filter((l) => l !== "");
  assert.equal(pids.length, 1, ps.stdout);
  assert.notEqual(pids[0], job, ps.stdout);
  const id = b.containerId ?? "";
  await b.dispose();
  assert.deepEqual(await containers((c) => c === id), []);
});

/**
 * A wrapper of $FSRUN whose `exec --pid-file F` runs the real one, then writes `decoy` into F: the
 * command's number, free once fsrun exec reaped it, taken by a host process that leads a group of
 * its own (review23 A4). With `die`, it then removes the status file and SIGKILLs itself: an fsrun
 * exec killed before it said how the command ended.
 */
async function reusingFsrun(decoy: number, die: boolean): Promise<string> {
  const wrapper = join(work, `fsrun-reusing-${die ? "dies" : "exits"}`);
  const script =
    `#!/bin/sh\npf=\nstatus=\nprev=\nfor a in "$@"; do\n  [ "$prev" = --pid-file ] && pf=$a\n` +
    `  [ "$prev" = --status-json ] && status=$a\n  prev=$a\ndone\n[ -n "$pf" ] || exec "$0.real" "$@"\n` +
    `"$0.real" "$@"\ncode=$?\necho ${decoy} >"$pf"\n` +
    (die ? `rm -f "$status"\nkill -KILL $$\n` : "") +
    `exit $code\n`;
  await writeFile(wrapper, script, { mode: 0o755 });
  await runCommand("ln", ["-sf", FSRUN, `${wrapper}.real`]);
  return wrapper;
}

// review23 A4: after fsrun exec said how the command ended, the adapter kills no group by the pid
// file's number (fsrun exec ended the command's group itself); after an fsrun exec that died
// without saying, only a group it can tell is the command's (in the container's pid namespace).
// The decoy, a host process leading its own group, stands for a host group that took the number:
// it must be alive after each run (our own SIGTERM, not the adapter's SIGKILL, ends it).
test(`[${WHO}] task container: no group is killed by a pid file's number another process may hold`, async (t) => {
  for (const die of [false, true]) {
    const decoy = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
    const ended = new Promise<NodeJS.Signals | null>((done) => decoy.on("exit", (_code: number | null, sig: NodeJS.Signals | null) => done(sig)));
    // a failed assertion must not leave the decoy holding the test file's process for 600 s
    try {
      const b = await backend({ mode: "task-container", fsrunPath: await reusingFsrun(decoy.pid ?? 0, die) });
      if (b.effectiveMode !== "task-container") return t.skip("fsrun exec cannot join the task container as this user");
      const r = await b.run("echo ran", opts());
      assert.equal(r.stdout, "ran\n", JSON.stringify(r));
      assert.equal(r.signal, die ? "SIGKILL" : null, JSON.stringify(r));
      decoy.kill("SIGTERM");
      assert.equal(await ended, "SIGTERM", die ? "a died fsrun exec's pid file" : "a reported exec's pid file");
      await b.dispose();
    } finally {
      if (decoy.exitCode === null && decoy.signalCode === null) decoy.kill("SIGKILL");
    }
  }
});

test(`[${WHO}] every prepare had exactly one outcome event`, () => {
  assert.equal(assertOneOutcomeEach(events), null);
  void processExists;
});
