// The in-process audit hook: every event the adapter records reaches Fusion's run-audit here.
// Per run: one `sandbox:prepare`, then exactly one outcome (`sandbox:run`, `sandbox:failure` or
// `sandbox:fallback`). prepare() is its own episode (scope "task") whose outcome is
// `sandbox:ready`, `sandbox:failure` or `sandbox:fallback`. In task-container mode, dispose() adds
// one `sandbox:dispose` (scope "task", outside the episodes) with the container's last tamper walk.
import { createHash } from "node:crypto";
import type { EventEmitter } from "node:events";

import type { SandboxBackendId } from "./fusion-types";
import type { FsrunPolicy, LimitNotEnforced } from "./types";

export type SandboxAuditEventName =
  | "sandbox:prepare"
  | "sandbox:ready"
  | "sandbox:run"
  | "sandbox:failure"
  | "sandbox:fallback"
  /** task-container mode: dispose() deleted the container; its `tamper` is the last walk's */
  | "sandbox:dispose"
  /** createSandboxBackend: a prompt's `**Sandbox:**` line chose the backend, or was refused (`reason`) */
  | "sandbox:prompt-backend";

export interface SandboxAuditEvent {
  event: SandboxAuditEventName;
  /** "task": prepare()'s episode; "command": one run(). */
  scope: "task" | "command";
  taskId: string;
  runId: string;
  /** The SandboxBackendId ("custom" for fsrun). */
  backend: SandboxBackendId;
  /** "fsrun" or "native": what the id "custom" stands for. */
  backendName: string;
  /** "other": a backend from createSandboxBackend's `backends` */
  mode: "one-shot" | "task-container" | "native" | "other";
  /** sha256 (hex) of the effective policy as canonical JSON (keys sorted). */
  policyHash: string;
  /** e.g. "network=off ro=1 rw=1 env=2 memoryLimitMb=512". */
  policySummary: string;
  /** RFC 3339. */
  time: string;
  /** failure / fallback: why; run: set when the run was aborted or fsrun had to be killed. */
  reason?: string;
  exitCode?: number | null;
  signal?: string | null;
  timedOut?: boolean;
  aborted?: boolean;
  /** The adapter had to SIGKILL fsrun (its SIGTERM was not enough, or fsrun outlived its timeout). */
  fsrunKilled?: boolean;
  oomKilled?: boolean;
  limitsNotEnforced?: LimitNotEnforced[];
  /** Nested git dirs / gitlinks the run made `config:<key>=<value>` and `hooks:<name>` entries (fsrun's sandbox:tamper, folded into the run's outcome). */
  tamper?: string[];
  /** The `-c` options under which the host's git runs nothing of what `tamper` names (RunResult.hostGitArgs); absent when none. */
  hostGitArgs?: string[];
  /** Git changes the run made outside the task's allowlist, left out (RunResult.gitDiscarded). */
  gitDiscarded?: string[];
  durationMs?: number;
  /** sandbox:prompt-backend: the backend the prompt's line names, its line number, and whether it applied. */
  promptBackend?: { requested: string; line: number; applied: boolean };
}

/** A callback, or an EventEmitter that gets emit("audit", e) and emit(e.event, e). */
export type SandboxAuditHook = ((event: SandboxAuditEvent) => void) | EventEmitter;

export function deliver(hook: SandboxAuditHook | undefined, event: SandboxAuditEvent): void {
  if (hook === undefined) return;
  try {
    if (typeof hook === "function") hook(event);
    else {
      hook.emit("audit", event);
      hook.emit(event.event, event);
    }
  } catch (e) {
    // the audit consumer's bug must not change the command's outcome; it is still reported
    process.emitWarning(`fusion-sandbox: the audit hook threw on ${event.event}: ${(e as Error).message}`);
  }
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonical(v);
    }
    return out;
  }
  return value;
}

export function policyHash(policy: FsrunPolicy): string {
  return createHash("sha256").update(JSON.stringify(canonical(policy))).digest("hex");
}

export function policySummary(policy: FsrunPolicy): string {
  const parts = [
    `network=${policy.allowNetwork ? "on" : "off"}`,
    `ro=${policy.allowedPaths.length}`,
    `rw=${policy.writablePaths?.length ?? 0}`,
    `env=${policy.envAllowlist?.length ?? 0}`,
  ];
  if (policy.memoryLimitMb !== undefined) parts.push(`memoryLimitMb=${policy.memoryLimitMb}`);
  if (policy.cpuLimit?.maxCores !== undefined) parts.push(`maxCores=${policy.cpuLimit.maxCores}`);
  if (policy.cpuLimit?.maxMs !== undefined) parts.push(`maxMs=${policy.cpuLimit.maxMs}`);
  if (policy.pidsLimit !== undefined) parts.push(`pidsLimit=${policy.pidsLimit}`);
  if (policy.allowedTcpPorts !== undefined) parts.push(`tcpPorts=${policy.allowedTcpPorts.join(",")}`);
  if (policy.seccomp === "none") parts.push("seccomp=none");
  return parts.join(" ");
}
