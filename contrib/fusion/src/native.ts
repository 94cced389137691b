// Running a command natively, as Fusion's Phase A does with promisify(exec): `/bin/sh -c COMMAND`
// with the caller's cwd and env. Used by NativeBackend and by fallback-native. The command gets
// its own process group, so that a timeout, an abort or maxBuffer end the whole tree.
import { isAbsolute, resolve } from "node:path";

import { runProc } from "./proc";
import type { FsrunRunOptions, FsrunRunResult } from "./types";

/** Node's exec default: 1 MiB per stream. */
export const EXEC_DEFAULT_MAX_BUFFER = 1024 * 1024;

export function maxBufferOf(opts: { maxBuffer?: number }): number {
  const m = opts.maxBuffer;
  return typeof m === "number" && m > 0 ? m : EXEC_DEFAULT_MAX_BUFFER;
}

export async function runNative(
  command: string,
  opts: FsrunRunOptions,
  runId: string,
  killGraceMs: number,
): Promise<FsrunRunResult> {
  const cwd = isAbsolute(opts.cwd) ? opts.cwd : resolve(opts.cwd);
  const r = await runProc({
    file: "/bin/sh",
    args: ["-c", command],
    env: opts.env ?? process.env,
    cwd,
    detached: true,
    maxBuffer: maxBufferOf(opts),
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    killGraceMs,
    killTree: (child, sig) => {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    },
    onExit: (child) => {
      // the group's leftovers (a `cmd &`) would hold the pipes open: they end with the command
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        /* ESRCH: none left */
      }
    },
  });
  return {
    stdout: r.stdout.toString("utf8"),
    stderr: r.stderr.toString("utf8"),
    exitCode: r.signal !== null ? null : r.code,
    signal: r.signal,
    timedOut: r.timedOut,
    truncated: r.truncated,
    oomKilled: false,
    limits: r.timedOut || opts.timeoutMs > 0 ? { timeoutMs: opts.timeoutMs } : {},
    limitsNotEnforced: [],
    durationMs: r.durationMs,
    tamper: [],
    backend: "native",
    aborted: r.aborted,
    runId,
  };
}
