// The adapter against the real fsrun binary ($FSRUN), as root, over a git worktree in a temp dir.
import * as assert from "node:assert/strict";
import { mkdir, readFile, realpath, rm, writeFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { FsrunBackend, FsrunPolicyError, containerIdPrefix } from "../src/index";
import type { SandboxPolicy } from "../src/index";
import { runCommand, tempDir, waitFor } from "./helpers";

const FSRUN = process.env.FSRUN ?? "";
const skip: string | false =
  FSRUN === ""
    ? "FSRUN is not set (the fsrun binary to test against)"
    : process.getuid?.() !== 0
    ? "not root (fsrun's sandbox tests run as root)"
    : false;

const TASK = "fusion-it";
let work = "";
let worktree = ""; // real path
let writable = "";
let readOnly = "";
let outside = "";
let auditLog = "";
let stateRoot = "";
let backend: FsrunBackend;

async function git(args: string[]): Promise<string> {
  const r = await runCommand("git", ["-c", "user.name=fusion", "-c", "user.email=fusion@example.com", ...args], worktree);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

async function containersOf(runId: string): Promise<string[]> {
  const r = await runCommand(FSRUN, ["--root", stateRoot, "list", "--quiet"]);
  const prefix = containerIdPrefix(TASK, runId);
  return r.stdout.split("\n").filter((id) => id.startsWith(prefix));
}

before(async () => {
  if (skip) return;
  work = await tempDir("fsrun-fusion-it-");
  worktree = join(work, "wt");
  writable = join(work, "writable");
  readOnly = join(work, "read-only");
  outside = join(work, "outside");
  for (const d of [worktree, writable, readOnly, outside]) await mkdir(d);
  worktree = await realpath(worktree);
  await writeFile(join(readOnly, "file"), "ro-content");
  await git(["init", "-q"]);
  await git(["commit", "-q", "--allow-empty", "-m", "init"]);
  auditLog = join(work, "audit.log");
  stateRoot = join(work, "state");
  const policy: SandboxPolicy = {
    allowNetwork: false,
    allowedPaths: [readOnly],
    writablePaths: [writable],
    envAllowlist: ["VISIBLE"],
    memoryLimitMb: 512,
    pidsLimit: 256,
  };
  backend = new FsrunBackend({ fsrunPath: FSRUN, policy, auditLog, taskId: TASK, stateRoot, killGraceMs: 500 });
  await backend.prepare({ worktreePath: worktree });
});

after(async () => {
  if (skip) return;
  await backend.dispose();
  await rm(work, { recursive: true, force: true });
});

test("prepare reads the binary's version and features", { skip }, () => {
  const caps = backend.capabilities();
  assert.equal(caps.prepared, true);
  assert.match(caps.version ?? "", /^\d+\.\d+/);
  assert.equal(caps.seccomp, true);
  assert.equal(caps.memoryLimit, true, "root: cgroup limits");
});

test("fsrun itself refuses a bad policy in prepare, naming the field", { skip }, async () => {
  const bad = new FsrunBackend({ fsrunPath: FSRUN, policy: { cpuLimit: { maxCores: -1 } } });
  await assert.rejects(
    bad.prepare({ worktreePath: worktree }),
    (e: unknown) => e instanceof FsrunPolicyError && e.field === "cpuLimit.maxCores",
  );
});

test("a command's file appears in the worktree and its stdout comes back", { skip }, async () => {
  const r = await backend.run("echo hi > out.txt && cat out.txt");
  assert.equal(r.stdout, "hi\n");
  assert.equal(r.exitCode, 0);
  assert.equal(r.backend, "fsrun");
  assert.equal(await readFile(join(worktree, "out.txt"), "utf8"), "hi\n");
});

test("without allowNetwork the sandbox has only lo", { skip }, async () => {
  const r = await backend.run("ls /sys/class/net");
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, "lo\n");
  assert.equal(r.limits.network, "none");
});

test("writes outside the worktree and writablePaths fail; inside them they work", { skip }, async () => {
  const r = await backend.run(
    [
      `echo x > ${outside}/f; echo outside=$?`,
      `echo x > ${readOnly}/f; echo read-only=$?`,
      `cat ${readOnly}/file; echo`,
      `touch /usr/fsrun-fusion-probe; echo usr=$?`,
      `echo y > ${writable}/f; echo writable=$?`,
    ].join("\n"),
  );
  assert.match(r.stdout, /^outside=[1-9]/m);
  assert.match(r.stdout, /^read-only=[1-9]/m);
  assert.match(r.stdout, /^ro-content$/m);
  assert.match(r.stdout, /^usr=[1-9]/m);
  assert.match(r.stdout, /^writable=0$/m);
  assert.deepEqual(await readdir(outside), []);
  assert.deepEqual(await readdir(readOnly), ["file"]);
  assert.equal(await readFile(join(writable, "f"), "utf8"), "y\n");
  await assert.rejects(readFile("/usr/fsrun-fusion-probe"), /ENOENT/);
});

test("envAllowlist hides the variables it does not list", { skip }, async () => {
  process.env.FUSION_IT_HIDDEN = "host-secret";
  try {
    const r = await backend.run('echo "v=$VISIBLE h=$HIDDEN hh=$FUSION_IT_HIDDEN"', {
      env: { VISIBLE: "yes", HIDDEN: "no" },
    });
    assert.equal(r.stdout, "v=yes h= hh=\n");
  } finally {
    delete process.env.FUSION_IT_HIDDEN;
  }
});

test("cwd runs the command in a subdirectory of the worktree", { skip }, async () => {
  await mkdir(join(worktree, "pkg"));
  const r = await backend.run("pwd", { cwd: "pkg" });
  assert.equal(r.stdout, `${worktree}/pkg\n`);
});

test("git commits made in the sandbox land in the repository", { skip }, async () => {
  const r = await backend.run(
    "git -c user.name=agent -c user.email=agent@example.com commit -q --allow-empty -m from-sandbox",
  );
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(await git(["log", "-1", "--format=%s"]), "from-sandbox\n");
});

test("a timeout kills the command and says so", { skip }, async () => {
  const r = await backend.run("sleep 30", { timeoutMs: 500 });
  assert.equal(r.timedOut, true);
  assert.equal(r.exitCode, 124);
  assert.equal(r.aborted, false);
  assert.equal(r.limits.timeoutMs, 500);
  assert.deepEqual(await containersOf(r.runId), []);
});

test("abort during sleep 30 ends the run and leaves no sandbox", { skip }, async () => {
  const controller = new AbortController();
  const run = backend.run("touch started-1 && sleep 30", { signal: controller.signal });
  await waitFor("the command to start", () => readFile(join(worktree, "started-1")).then(() => true, () => false));
  controller.abort();
  const r = await run;
  assert.equal(r.aborted, true);
  assert.notEqual(r.exitCode, 0);
  assert.deepEqual(await containersOf(r.runId), []);
});

test("abort of a command that ignores SIGTERM kills it after the grace period", { skip }, async () => {
  const controller = new AbortController();
  const run = backend.run("trap '' TERM; touch started-2; sleep 30; echo survived", { signal: controller.signal });
  await waitFor("the command to start", () => readFile(join(worktree, "started-2")).then(() => true, () => false));
  controller.abort();
  const r = await run;
  assert.equal(r.aborted, true);
  assert.notEqual(r.exitCode, 0);
  assert.doesNotMatch(r.stdout, /survived/);
  assert.deepEqual(await containersOf(r.runId), []);
});

test("maxBuffer cuts a stream and the result says so", { skip }, async () => {
  const r = await backend.run("head -c 100000 /dev/zero | tr '\\0' a", { maxBuffer: 1000 });
  assert.equal(r.truncated, true);
  assert.equal(r.stdout, "a".repeat(1000));
});

test("concurrent runs each get their own sandbox and result", { skip }, async () => {
  const results = await Promise.all([1, 2, 3, 4].map((i) => backend.run(`echo run-${i}`)));
  assert.deepEqual(
    results.map((r) => r.stdout),
    ["run-1\n", "run-2\n", "run-3\n", "run-4\n"],
  );
  assert.equal(new Set(results.map((r) => r.runId)).size, 4);
});

test("the result says which limits were enforced", { skip }, async () => {
  const r = await backend.run("true");
  assert.equal(r.limits.memoryLimitMb, 512);
  assert.equal(r.limits.pidsLimit, 256);
});

test("the audit log has a prepare and a run event for each run", { skip }, async () => {
  const r = await backend.run("true");
  const events = (await readFile(auditLog, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.runId === r.runId);
  assert.deepEqual(
    events.map((e) => e.event),
    ["sandbox:prepare", "sandbox:run"],
  );
  assert.equal(events[1].taskId, TASK);
  assert.equal(events[1].exitCode, 0);
  assert.match(String(events[1].policyHash), /^[0-9a-f]{64}$/);
});

test("nothing is left behind after dispose: no container, no bundle", { skip }, async () => {
  await backend.dispose();
  const list = await runCommand(FSRUN, ["--root", stateRoot, "list", "--quiet"]);
  assert.equal(list.stdout.trim(), "");
  const sandboxes = await readdir(join(stateRoot, ".sandbox")).catch(() => []);
  assert.deepEqual(sandboxes, []);
  await assert.rejects(backend.run("true"), /disposed/);
});
