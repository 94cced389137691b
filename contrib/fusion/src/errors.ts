// Typed errors. Each has a `reason` (one line, what went wrong) so that Fusion can record it.
import type { FsrunRunResult } from "./types";

/** Anything fsrun or the adapter could not do. `stderr` is fsrun's own, when it ran. */
export class FsrunError extends Error {
  readonly reason: string;
  readonly stderr: string;
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

/** The sandbox could not be set up (fsrun's exit 125) under fail-hard; nothing ran. */
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
