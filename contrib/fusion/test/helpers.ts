// Test helpers: temp dirs, host commands, bounded polling, a real git repository with a linked worktree.
import { spawn } from "node:child_process";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { SandboxAuditEvent } from "../src/index";

export async function tempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

/** The bound of a wait for an event: it only ends a failure, so it is far from what a loaded 2-core machine takes. */
export const WAIT_MAX_MS = 60_000;

/** Polls until check() is true (a synchronisation point with a bound, not a timing assertion). */
export async function waitFor(what: string, check: () => Promise<boolean>, limitMs = WAIT_MAX_MS): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${limitMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function runCommand(command: string, args: string[], cwd = "/", env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c) => (stderr += c.toString("utf8")));
    child.on("error", rejectRun);
    child.on("close", (code) => resolveRun({ code, stdout, stderr }));
  });
}

export async function git(cwd: string, args: string[]): Promise<string> {
  const r = await runCommand("git", ["-c", "user.name=fusion", "-c", "user.email=fusion@example.com", ...args], cwd);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A repository at DIR/repo with one commit and a linked worktree DIR/NAME made by `git worktree add`. */
export async function makeWorktree(dir: string, name: string): Promise<string> {
  const repo = join(dir, "repo");
  await runCommand("mkdir", ["-p", repo]);
  await git(repo, ["init", "-q"]);
  await git(repo, ["commit", "-q", "--allow-empty", "-m", "init"]);
  await git(repo, ["worktree", "add", "-q", "-b", name, join(dir, name)]);
  return realpath(join(dir, name));
}

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Each prepare (per scope and run id) has exactly one outcome event after it. */
export function assertOneOutcomeEach(events: SandboxAuditEvent[]): string | null {
  const open = new Map<string, number>();
  for (const e of events) {
    const key = `${e.scope}:${e.runId}`;
    if (e.event === "sandbox:dispose" || e.event === "sandbox:prompt-backend") continue; // no episode: dispose()'s report, the factory's choice
    if (e.event === "sandbox:prepare") {
      if (open.has(key)) return `a second sandbox:prepare for ${key}`;
      open.set(key, 0);
    } else {
      const n = open.get(key);
      if (n === undefined) return `${e.event} for ${key} without a sandbox:prepare`;
      if (n > 0) return `a second outcome (${e.event}) for ${key}`;
      open.set(key, 1);
    }
  }
  for (const [key, n] of open) if (n === 0) return `no outcome for ${key}`;
  return null;
}
