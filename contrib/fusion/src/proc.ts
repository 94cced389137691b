// One child process with exec-like limits: a timeout, a byte limit per stream and an abort signal,
// each ending the child's whole tree through `killTree` (SIGTERM, then SIGKILL after a grace period).
import { spawn } from "node:child_process";
import type { ChildProcess, StdioOptions } from "node:child_process";

export interface ProcSpec {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin?: string;
  /** Own process group (the child is the leader): killTree then reaches its descendants. */
  detached?: boolean;
  /** Bytes kept of each stream; going over ends the tree, as exec does (Infinity: no limit). */
  maxBuffer: number;
  /** Wall-clock limit; 0 or less: none. */
  timeoutMs: number;
  signal?: AbortSignal;
  killGraceMs: number;
  /** Sends `sig` to everything the command started (default: the child alone). */
  killTree?: (child: ChildProcess, sig: NodeJS.Signals) => void;
  /** Called once the child has exited (before its pipes close). */
  onExit?: (child: ChildProcess) => void;
  /** After the child exited, how long its pipes may stay open (held by a leftover process). */
  closeWaitMs?: number;
}

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  truncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** The signal the adapter sent last (SIGTERM, or SIGKILL after the grace period). */
  sentSignal: NodeJS.Signals | null;
  durationMs: number;
}

export function spawnError(err: NodeJS.ErrnoException): string {
  return err.code ?? err.message;
}

export function runProc(spec: ProcSpec): Promise<ProcResult> {
  return new Promise((resolveRun, rejectRun) => {
    const started = Date.now();
    const stdio: StdioOptions = ["pipe", "pipe", "pipe"];
    const child = spawn(spec.file, spec.args, { env: spec.env, cwd: spec.cwd, stdio, detached: spec.detached === true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const size = { out: 0, err: 0 };
    let truncated = false;
    let timedOut = false;
    let aborted = false;
    let sentSignal: NodeJS.Signals | null = null;
    let exited = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const killTree = (sig: NodeJS.Signals) => {
      sentSignal = sig;
      try {
        if (spec.killTree !== undefined) spec.killTree(child, sig);
        else child.kill(sig);
      } catch {
        /* ESRCH: already gone */
      }
    };
    let terminating = false;
    const terminate = () => {
      if (exited || terminating) return;
      terminating = true;
      killTree("SIGTERM");
      timers.push(setTimeout(() => exited || killTree("SIGKILL"), spec.killGraceMs));
    };
    const onAbort = () => {
      if (exited) return;
      aborted = true;
      terminate();
    };
    const collect = (chunks: Buffer[], which: "out" | "err") => (chunk: Buffer) => {
      const room = spec.maxBuffer - size[which];
      if (room <= 0) return;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size[which] = spec.maxBuffer;
        truncated = true;
        terminate();
        return;
      }
      chunks.push(chunk);
      size[which] += chunk.length;
    };
    const finish = () => {
      settled = true;
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener("abort", onAbort);
    };

    spec.signal?.addEventListener("abort", onAbort, { once: true });
    if (spec.timeoutMs > 0)
      timers.push(
        setTimeout(() => {
          if (exited) return;
          timedOut = true;
          // a timeout kills at once, as fsrun's own does: nothing to wait for
          terminating = true;
          killTree("SIGKILL");
        }, spec.timeoutMs),
      );
    child.stdout!.on("data", collect(out, "out"));
    child.stderr!.on("data", collect(err, "err"));
    child.stdin!.on("error", () => undefined); // EPIPE: the child did not read its stdin
    child.on("error", (e) => {
      if (settled) return;
      finish();
      rejectRun(e);
    });
    child.on("exit", () => {
      exited = true;
      spec.onExit?.(child);
      timers.push(
        setTimeout(() => {
          child.stdout!.destroy();
          child.stderr!.destroy();
        }, spec.closeWaitMs ?? 2000),
      );
    });
    child.on("close", (code, sig) => {
      if (settled) return;
      finish();
      resolveRun({
        code,
        signal: sig,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        truncated,
        timedOut,
        aborted,
        sentSignal,
        durationMs: Date.now() - started,
      });
    });
    child.stdin!.end(spec.stdin ?? "");
    if (spec.signal?.aborted) onAbort();
  });
}
