// NativeBackend: Fusion's Phase A passthrough. The command runs on the host as promisify(exec)
// would run it, with the same audit events as the sandboxed backends.
import { resolve } from "node:path";

import type { SandboxAuditEvent, SandboxAuditHook } from "./audit";
import { BackendBase, checkContext, checkCwd } from "./backend-base";
import type { SandboxBackend, SandboxCapabilities, SandboxPrepareContext } from "./fusion-types";
import { runNative } from "./native";
import { checkPolicy } from "./policy";
import type { FsrunRunOptions, FsrunRunResult } from "./types";

export interface NativeBackendOptions {
  onAudit?: SandboxAuditHook;
  /** After an abort's SIGTERM, how long before SIGKILL (default 2000 ms). */
  killGraceMs?: number;
}

export class NativeBackend extends BackendBase implements SandboxBackend {
  readonly id = "native" as const;
  readonly name = "native";

  constructor(options: NativeBackendOptions = {}) {
    super(options.onAudit, options.killGraceMs ?? 2000);
  }

  protected mode(): SandboxAuditEvent["mode"] {
    return "native";
  }

  capabilities(): SandboxCapabilities {
    return {
      filesystemIsolation: "none",
      networkPolicy: "none",
      resourceLimits: "none",
      requiresInstall: false,
      supportsMac: true,
      supportsLinux: true,
      supportsWindows: false,
    };
  }

  async prepare(ctx: SandboxPrepareContext): Promise<void> {
    this.assertUsable("prepare");
    await checkContext(ctx);
    const policy = checkPolicy(ctx.policy, "ctx.policy");
    this.task = { taskId: ctx.taskId, runId: ctx.runId, worktree: ctx.worktreePath, policy };
    this.emit("task", ctx.runId, { event: "sandbox:prepare" });
    this.emit("task", ctx.runId, { event: "sandbox:ready" });
  }

  async run(command: string, opts: FsrunRunOptions): Promise<FsrunRunResult> {
    const { runId } = this.startRun(command, opts);
    await checkCwd(resolve(opts.cwd));
    return this.episode(runId, opts, async (signal) => ({
      result: await runNative(command, { ...opts, signal }, runId, this.killGraceMs),
    }));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.endRuns();
  }
}
