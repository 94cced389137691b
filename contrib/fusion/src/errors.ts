import type { SandboxRunResult } from "./types";

/** Anything fsrun or the adapter could not do. `stderr` is fsrun's own, when it ran. */
export class FsrunError extends Error {
  readonly stderr: string;
  constructor(message: string, stderr = "") {
    super(message);
    this.name = new.target.name;
    this.stderr = stderr;
  }
}

/** fsrun refused the policy (or the failure mode). `field` names the key, e.g. "cpuLimit.maxCores". */
export class FsrunPolicyError extends FsrunError {
  readonly field: string | null;
  constructor(message: string, field: string | null, stderr = "") {
    super(message, stderr);
    this.field = field;
  }
}

/** The sandbox could not be set up (fsrun's exit 125) under fail-hard; nothing ran. */
export class FsrunSetupError extends FsrunError {
  readonly result: SandboxRunResult;
  constructor(message: string, result: SandboxRunResult, stderr = "") {
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
