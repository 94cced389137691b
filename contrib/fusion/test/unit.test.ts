// The adapter against a fake fsrun (test/helpers.ts) that records what it was given.
import * as assert from "node:assert/strict";
import { mkdir, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";

import {
  FsrunBackend,
  FsrunError,
  FsrunPolicyError,
  FsrunSetupError,
  containerIdPrefix,
} from "../src/index";
import type { FsrunBackendOptions, SandboxPolicy, SandboxSettings } from "../src/index";
import { makeFakeFsrun, processExists, tempDir, waitFor } from "./helpers";
import type { FakeFsrun } from "./helpers";

let work: string;
let worktree: string; // real path: what fsrun is given

before(async () => {
  work = await tempDir("fsrun-fusion-unit-");
  await mkdir(join(work, "wt", "sub"), { recursive: true });
  worktree = await realpath(join(work, "wt"));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

const POLICY: SandboxPolicy = {
  allowNetwork: false,
  allowedPaths: ["/opt/tools"],
  writablePaths: ["/var/cache/pnpm"],
  envAllowlist: ["CI", "FUSION_TEST_FROM_HOST"],
  cpuLimit: { maxCores: 2, maxMs: 600000 },
  memoryLimitMb: 2048,
};

/** A fake fsrun and a prepared backend over it; the fake is removed after fn. */
async function withBackend(
  options: Partial<FsrunBackendOptions>,
  fn: (backend: FsrunBackend, fake: FakeFsrun) => Promise<void>,
): Promise<void> {
  const fake = await makeFakeFsrun();
  const backend = new FsrunBackend({ fsrunPath: fake.path, policy: POLICY, ...options });
  try {
    await backend.prepare({ worktreePath: join(work, "wt") });
    await fn(backend, fake);
  } finally {
    await backend.dispose();
    await fake.cleanup();
  }
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  return assert.fail("expected a rejection");
}

// --- prepare -------------------------------------------------------------------------------------

test("prepare checks the binary and has fsrun validate the policy in a temp bundle it then removes", async () => {
  await withBackend({ failureMode: "fallback-native" }, async (backend, fake) => {
    const calls = await fake.calls();
    assert.deepEqual(
      calls.map((c) => c.args[0]),
      ["--version", "features", "bundle"],
    );
    const bundle = calls[2];
    assert.deepEqual(bundle.args.slice(0, 5), ["bundle", "--policy", "-", "--worktree", worktree]);
    assert.equal(bundle.args[5], "--out");
    assert.deepEqual(JSON.parse(bundle.stdin ?? ""), {
      sandbox: { backend: "fsrun", policy: POLICY, failureMode: "fallback-native" },
    });
    // the bundle was written, then removed with its temp dir
    await assert.rejects(readdir(dirname(bundle.args[6])), /ENOENT/);

    const caps = backend.capabilities();
    assert.equal(caps.prepared, true);
    assert.equal(caps.version, "9.9.9-fake");
    assert.equal(caps.tcpPortAllowlist, true);
    assert.equal(caps.seccomp, true);
    assert.equal(caps.networkIsolation, true);
    assert.equal(caps.auditLog, false);
  });
});

test("capabilities before prepare do not claim what the binary was not asked about", () => {
  const caps = new FsrunBackend({ policy: {} }).capabilities();
  assert.equal(caps.prepared, false);
  assert.equal(caps.version, null);
  assert.equal(caps.seccomp, false);
  assert.equal(caps.tcpPortAllowlist, false);
});

test("prepare names a missing fsrun binary", async () => {
  const missing = join(work, "no-such-fsrun");
  const backend = new FsrunBackend({ fsrunPath: missing, policy: {} });
  const err = await rejection(backend.prepare({ worktreePath: worktree }));
  assert.ok(err instanceof FsrunError);
  assert.match(err.message, /not found/);
  assert.ok(err.message.includes(missing), err.message);
});

test("prepare refuses a binary that is not fsrun", async () => {
  const backend = new FsrunBackend({ fsrunPath: "/bin/echo", policy: {} });
  const err = await rejection(backend.prepare({ worktreePath: worktree }));
  assert.match(err.message, /is not fsrun/);
});

test("prepare refuses a worktree that is missing or not a directory", async () => {
  const fake = await makeFakeFsrun();
  try {
    const backend = new FsrunBackend({ fsrunPath: fake.path, policy: {} });
    const file = join(work, "a-file");
    await writeFile(file, "x");
    let err = await rejection(backend.prepare({ worktreePath: file }));
    assert.ok(err instanceof FsrunError);
    assert.match(err.message, /worktreePath `.*a-file`: not a directory/);
    err = await rejection(backend.prepare({ worktreePath: join(work, "nothing-here") }));
    assert.match(err.message, /worktreePath `.*nothing-here`: does not exist/);
    assert.equal((await fake.calls()).filter((c) => c.args[0] === "bundle").length, 0);
  } finally {
    await fake.cleanup();
  }
});

test("prepare turns fsrun's refusal of the policy into FsrunPolicyError naming the field", async () => {
  const fake = await makeFakeFsrun();
  try {
    const policy = { ...POLICY, bogus: 1 } as SandboxPolicy;
    const backend = new FsrunBackend({ fsrunPath: fake.path, policy });
    const err = await rejection(backend.prepare({ worktreePath: worktree }));
    assert.ok(err instanceof FsrunPolicyError, String(err));
    assert.equal(err.field, "bogus");
    assert.match(err.message, /bogus: unknown key/);
    await assert.rejects(backend.run("true"), /prepare\(\) first/);
  } finally {
    await fake.cleanup();
  }
});

test("prepare keeps fsrun's warnings about the policy", async () => {
  await withBackend({ policy: { allowedPaths: ["/nope"] } }, async (backend) => {
    assert.equal(backend.warnings.length, 1);
    assert.match(backend.warnings[0], /`\/nope` does not exist/);
  });
});

test("fromSettings takes Fusion's settings object and refuses another backend", async () => {
  let err: unknown;
  try {
    FsrunBackend.fromSettings({ sandbox: { backend: "docker", policy: {} } } as unknown as SandboxSettings);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof FsrunPolicyError, String(err));
  assert.equal(err.field, "sandbox.backend");

  const fake = await makeFakeFsrun();
  const backend = FsrunBackend.fromSettings(
    { sandbox: { backend: "fsrun", policy: POLICY, failureMode: "fallback-native" } },
    { fsrunPath: fake.path },
  );
  try {
    await backend.prepare({ worktreePath: worktree });
    await backend.run("true");
    const [call] = await fake.sandboxCalls();
    assert.equal(call.args[call.args.indexOf("--failure-mode") + 1], "fallback-native");
    assert.deepEqual(JSON.parse(call.stdin ?? ""), POLICY);
  } finally {
    await backend.dispose();
    await fake.cleanup();
  }
});

// --- run: arguments, stdin, environment, cwd ------------------------------------------------------

test("run builds fsrun's command line from the options", async () => {
  const audit = join(work, "audit.log");
  const root = join(work, "state");
  await withBackend(
    { taskId: "task-7", auditLog: audit, stateRoot: root, failureMode: "fallback-native" },
    async (backend, fake) => {
      const result = await backend.run("pnpm test && pnpm build", { timeoutMs: 1500, maxBuffer: 4096 });
      const [call] = await fake.sandboxCalls();
      assert.deepEqual(call.args, [
        "--root", root,
        "sandbox", "--json", "--policy", "-", "--worktree", worktree,
        "--task-id", "task-7",
        "--run-id", result.runId,
        "--timeout-ms", "1500",
        "--max-buffer", "4096",
        "--audit-log", audit,
        "--failure-mode", "fallback-native",
        "--", "/bin/sh", "-c", "pnpm test && pnpm build",
      ]);
    },
  );
});

test("run without options passes only the required arguments; the task id comes from prepare", async () => {
  const fake = await makeFakeFsrun();
  const backend = new FsrunBackend({ fsrunPath: fake.path, policy: POLICY });
  try {
    await backend.prepare({ worktreePath: worktree, taskId: "from-ctx", runId: "agent-run" });
    const result = await backend.run("ls");
    const [call] = await fake.sandboxCalls();
    assert.match(result.runId, /^agent-run-[0-9a-f]+-1$/);
    assert.deepEqual(call.args, [
      "sandbox", "--json", "--policy", "-", "--worktree", worktree,
      "--task-id", "from-ctx", "--run-id", result.runId,
      "--", "/bin/sh", "-c", "ls",
    ]);
  } finally {
    await backend.dispose();
    await fake.cleanup();
  }
});

test("the policy reaches fsrun on stdin, as it was when the backend was made", async () => {
  const policy: SandboxPolicy = JSON.parse(JSON.stringify(POLICY)) as SandboxPolicy;
  await withBackend({ policy }, async (backend, fake) => {
    policy.allowNetwork = true; // a later change by the caller does not reach the sandbox
    await backend.run("true");
    const [call] = await fake.sandboxCalls();
    assert.deepEqual(JSON.parse(call.stdin ?? ""), POLICY);
  });
});

test("run returns fsrun's JSON result, typed, with its run id", async () => {
  await withBackend({}, async (backend) => {
    const result = await backend.run("echo hi");
    assert.deepEqual(result, {
      stdout: `${result.runId}\n`,
      stderr: "",
      exitCode: 0,
      signal: null,
      timedOut: false,
      truncated: false,
      durationMs: 7,
      backend: "fsrun",
      limits: { pidsLimit: 4096, network: "none" },
      aborted: false,
      runId: result.runId,
    });
  });
});

test("only allowlisted variables reach fsrun's environment, from the host and from opts.env", async () => {
  process.env.FUSION_TEST_FROM_HOST = "host-value";
  process.env.FUSION_TEST_SECRET = "secret";
  try {
    await withBackend({}, async (backend, fake) => {
      await backend.run("env", { env: { CI: "1", NOT_ALLOWED: "x", HOME: "/elsewhere" } });
      const [call] = await fake.sandboxCalls();
      assert.equal(call.env.CI, "1");
      assert.equal(call.env.FUSION_TEST_FROM_HOST, "host-value");
      assert.equal(call.env.NOT_ALLOWED, undefined);
      assert.equal(call.env.FUSION_TEST_SECRET, undefined);
      assert.equal(call.env.HOME, process.env.HOME);
      assert.equal(call.env.PATH, process.env.PATH);
    });
  } finally {
    delete process.env.FUSION_TEST_FROM_HOST;
    delete process.env.FUSION_TEST_SECRET;
  }
});

test("cwd inside the worktree becomes a cd in the shell; outside it is refused", async () => {
  await withBackend({}, async (backend, fake) => {
    await backend.run("ls", { cwd: "sub" });
    await backend.run("ls", { cwd: worktree });
    const [inSub, atTop] = await fake.sandboxCalls();
    assert.equal(inSub.args[inSub.args.length - 1], `cd '${worktree}/sub' || exit 1\nls`);
    assert.equal(atTop.args[atTop.args.length - 1], "ls");

    await assert.rejects(backend.run("ls", { cwd: work }), /outside the worktree/);
    await assert.rejects(backend.run("ls", { cwd: "sub/../.." }), /outside the worktree/);
    await assert.rejects(backend.run("ls", { cwd: "missing" }), /cwd `missing`: does not exist/);
    assert.equal((await fake.sandboxCalls()).length, 2, "nothing ran for a refused cwd");
  });
});

// --- run: errors ---------------------------------------------------------------------------------

test("output that is not fsrun's result is an FsrunError carrying fsrun's stderr", async () => {
  await withBackend({}, async (backend) => {
    const err = await rejection(backend.run("FAKE:garbage"));
    assert.ok(err instanceof FsrunError);
    assert.match(err.message, /without a result/);
    assert.match(err.message, /this is not JSON/);
    assert.match(err.message, /fsrun: something odd/);
  });
});

test("a crash of fsrun is an FsrunError naming the signal, with fsrun's stderr", async () => {
  await withBackend({}, async (backend) => {
    const err = await rejection(backend.run("FAKE:crash"));
    assert.ok(err instanceof FsrunError);
    assert.match(err.message, /killed by SIGSEGV/);
    assert.match(err.message, /about to crash/);
    assert.match((err as FsrunError).stderr, /about to crash/);
  });
});

test("fsrun's refusal of the run (exit 1) is an FsrunError with its message", async () => {
  await withBackend({}, async (backend) => {
    const err = await rejection(backend.run("FAKE:badinput"));
    assert.ok(err instanceof FsrunError && !(err instanceof FsrunPolicyError));
    assert.match(err.message, /exited with status 1/);
    assert.match(err.message, /--timeout-ms: expected a number/);

    const policyErr = await rejection(backend.run("FAKE:policy"));
    assert.ok(policyErr instanceof FsrunPolicyError);
    assert.equal(policyErr.field, "envAllowlist[0]");
  });
});

test("a sandbox that could not be set up is an FsrunSetupError holding fsrun's result", async () => {
  await withBackend({}, async (backend) => {
    const err = await rejection(backend.run("FAKE:setup"));
    assert.ok(err instanceof FsrunSetupError, String(err));
    assert.match(err.message, /cannot mount the worktree/);
    assert.equal(err.result.exitCode, 125);
  });
});

test("an empty command is refused before anything runs", async () => {
  await withBackend({}, async (backend, fake) => {
    await assert.rejects(backend.run("  "), /non-empty shell command/);
    assert.equal((await fake.sandboxCalls()).length, 0);
  });
});

// --- abort, timeout, concurrency, dispose --------------------------------------------------------

test("abort sends SIGTERM to fsrun; when the command ends, fsrun's result comes back marked aborted", async () => {
  await withBackend({ killGraceMs: 30_000 }, async (backend, fake) => {
    const controller = new AbortController();
    const run = backend.run("FAKE:sleep", { signal: controller.signal });
    await waitFor("the fake to start", fake.started);
    controller.abort();
    const result = await run;
    assert.equal(result.aborted, true);
    assert.equal(result.exitCode, 143, "exitCode null and a signal: the shell's 128+N");
    assert.equal(result.signal, "SIGTERM");
    assert.equal(result.stdout, `${result.runId}\n`, "fsrun's own result, not a made-up one");
    const [call] = await fake.sandboxCalls();
    assert.ok(call.child !== null && !processExists(call.child), "the command's process is gone");
  });
});

test("abort kills an fsrun that does not end on SIGTERM after the grace period", async () => {
  await withBackend({ killGraceMs: 100 }, async (backend, fake) => {
    const controller = new AbortController();
    const run = backend.run("FAKE:stubborn", { signal: controller.signal });
    await waitFor("the fake to start", fake.started);
    controller.abort();
    const result = await run;
    assert.equal(result.aborted, true);
    assert.equal(result.signal, "SIGKILL");
    assert.equal(result.exitCode, 137);
    assert.equal(result.timedOut, false);
    const calls = await fake.calls();
    const sandbox = calls.find((c) => c.args.includes("sandbox"));
    assert.ok(sandbox !== undefined && !processExists(sandbox.pid), "fsrun is gone");
    // it then looked for the sandbox that the killed fsrun leaves to its watchdog
    assert.ok(calls.some((c) => c.args[0] === "list" && c.pid !== sandbox.pid));
  });
});

test("a signal aborted before run starts nothing", async () => {
  await withBackend({}, async (backend, fake) => {
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(backend.run("true", { signal: controller.signal }));
    assert.equal(err.name, "AbortError");
    assert.equal((await fake.sandboxCalls()).length, 0);
  });
});

test("the adapter kills an fsrun that outlives its own --timeout-ms", async () => {
  await withBackend({ killGraceMs: 100, timeoutGraceMs: 100 }, async (backend) => {
    const result = await backend.run("FAKE:stubborn", { timeoutMs: 100 });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, 124);
    assert.equal(result.aborted, false);
  });
});

test("concurrent runs each get their own run id and their own result", async () => {
  await withBackend({}, async (backend, fake) => {
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => backend.run(`echo ${i}`)));
    const ids = results.map((r) => r.runId);
    assert.equal(new Set(ids).size, 16);
    for (const r of results) assert.equal(r.stdout, `${r.runId}\n`);
    const calls = await fake.sandboxCalls();
    assert.equal(calls.length, 16);
    const given = calls.map((c) => c.args[c.args.indexOf("--run-id") + 1]).sort();
    assert.deepEqual(given, [...ids].sort());
  });
});

test("dispose ends the runs still going, leaves no process, and refuses further runs", async () => {
  const fake = await makeFakeFsrun();
  const backend = new FsrunBackend({ fsrunPath: fake.path, policy: POLICY, killGraceMs: 100 });
  try {
    await backend.prepare({ worktreePath: worktree });
    const run = backend.run("FAKE:stubborn");
    await waitFor("the fake to start", fake.started);
    await backend.dispose();
    const result = await run;
    assert.equal(result.aborted, true);
    const [call] = await fake.sandboxCalls();
    assert.ok(!processExists(call.pid), "fsrun is gone");
    await assert.rejects(backend.run("true"), /disposed/);
  } finally {
    await fake.cleanup();
  }
});

test("container ids are predicted as fsrun makes them", () => {
  assert.equal(containerIdPrefix("task/7", "r-1"), "sandbox-task_7-r-1-");
  assert.equal(containerIdPrefix(undefined, "r.2"), "sandbox-r.2-");
  assert.equal(containerIdPrefix("é", "x"), "sandbox-__-x-");
});
