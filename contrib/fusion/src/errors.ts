// Typed errors. Each has a `reason` (one line, what went wrong) so that Fusion can record it.
import type { FsrunRunResult } from "./types";

/**
 * What a run that rejects after its command may have run left for the host's git (review25 C1,
 * C4): fsrun's tamper list and hostGitArgs when it said them whole, else the cannot-disarm option
 * ("cannot tell"). The backend adds `hostGitArgs` to its own before the error reaches the caller.
 */
export interface AfterCommand {
  tamper: string[];
  hostGitArgs: string[];
}

/** Anything fsrun or the adapter could not do. `stderr` is fsrun's own, when it ran. */
export class FsrunError extends Error {
  readonly reason: string;
  readonly stderr: string;
  /** Set when the command may have run before this error; absent when nothing ran. */
  afterCommand?: AfterCommand;
  constructor(message: string, stderr = "") {
    super(message);
    this.name = new.target.name;
    this.reason = message;
    this.stderr = stderr;
  }
}

/** The policy was refused (by fsrun, or by the adapter's checks). `field` names the key, e.g. "cpuLimit.maxCores". */
export class FsrunPolicyError extends FsrunError {
  readonly field: string | null;
  constructor(message: string, field: string | null, stderr = "") {
    super(message, stderr);
    this.field = field;
  }
}

/** Bad input to the settings factory, prepare() or run(); `field` names it ("sandbox.backend", "ctx.worktreePath"). */
export class SandboxSettingsError extends FsrunError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/** Why fsrun cannot be used at all on this host, found before it runs. */
export type UnavailableReason = "missing" | "not-executable" | "not-fsrun" | "not-linux";

/** fsrun is missing, not executable, not fsrun, or the platform is not Linux (fail-hard). Nothing ran. */
export class FsrunUnavailableError extends FsrunError {
  readonly kind: UnavailableReason;
  constructor(kind: UnavailableReason, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** The sandbox could not be set up (fsrun's exit 125) under fail-hard; nothing ran (a task
 * container's exec that could not start: what a leftover the resume thawed did is `afterCommand`). */
export class FsrunSetupError extends FsrunError {
  readonly result: FsrunRunResult | null;
  constructor(message: string, result: FsrunRunResult | null, stderr = "") {
    super(message, stderr);
    this.result = result;
  }
}

/** run() was called with a signal that was already aborted: nothing was started. */
export class FsrunAbortError extends FsrunError {
  constructor(message: string) {
    super(message);
    this.name = "AbortError";
  }
}

/** `e` with what the command may have left (`afterCommand`), for the backend to add. */
export function withAfterCommand<E extends FsrunError>(e: E, tamper: string[], hostGitArgs: string[]): E {
  e.afterCommand = { tamper, hostGitArgs };
  return e;
}
