// The factory: Fusion's settings (global and project defaults, the task's override, the task
// prompt's `**Sandbox:** NAME` line) in, a SandboxBackend out. Bad input is a SandboxSettingsError
// naming the field, before anything runs.
import { isAbsolute } from "node:path";

import type { SandboxAuditHook } from "./audit";
import { SandboxSettingsError } from "./errors";
import { FsrunBackend } from "./fsrun-backend";
import type { FsrunMode } from "./fsrun-backend";
import type { SandboxBackend, SandboxBackendId, SandboxFailureMode } from "./fusion-types";
import { NativeBackend } from "./native-backend";
import { checkPolicy } from "./policy";
import type { FsrunPolicy } from "./types";

/** The adapter's own settings, under `sandbox.fsrun`. */
export interface FsrunSettings {
  /** The fsrun binary: an absolute path or a command name (default "fsrun"). */
  path?: string;
  /** "one-shot" (default): a fresh sandbox per command; "task-container": one container per task. */
  mode?: FsrunMode;
  /** Absolute. fsrun's state directory. */
  stateRoot?: string;
  /** Absolute. fsrun's own JSON-lines audit log. */
  auditLog?: string;
  killGraceMs?: number;
}

/** Fusion's settings object. `backend: "custom"` (or "fsrun") is this package's FsrunBackend. */
export interface SandboxSettings {
  sandbox: {
    backend: SandboxBackendId | "fsrun";
    policy?: Partial<FsrunPolicy>;
    failureMode?: SandboxFailureMode;
    fsrun?: FsrunSettings;
  };
}

/** A partial override: a task's settings. */
export interface SandboxSettingsOverride {
  sandbox?: Partial<SandboxSettings["sandbox"]>;
}

export interface CreateBackendInput {
  /** Lowest first: e.g. [globalSettings, projectSettings]. */
  defaults: (SandboxSettings | SandboxSettingsOverride)[];
  /** The task's own settings override. */
  task?: SandboxSettingsOverride;
  /** The task's prompt: a line `**Sandbox:** NAME` overrides the backend. */
  prompt?: string;
  onAudit?: SandboxAuditHook;
  /** Backends this package does not provide (docker, podman, ...), by id. */
  backends?: Partial<Record<SandboxBackendId, (settings: ResolvedSandboxSettings) => SandboxBackend>>;
}

export interface ResolvedSandboxSettings {
  backend: SandboxBackendId;
  /** "fsrun" when backend is "custom". */
  backendName: string;
  policy: FsrunPolicy;
  failureMode: SandboxFailureMode;
  fsrun: FsrunSettings;
}

const IDS: readonly string[] = ["native", "sandbox-exec", "bubblewrap", "docker", "podman", "custom"];
const SANDBOX_KEYS = new Set(["backend", "policy", "failureMode", "fsrun"]);
const FSRUN_KEYS = new Set(["path", "mode", "stateRoot", "auditLog", "killGraceMs"]);

function object(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new SandboxSettingsError(field, "expected an object");
  return value as Record<string, unknown>;
}

/** The `**Sandbox:** NAME` line of a prompt, or null. */
export function promptBackend(prompt: string): string | null {
  const m = /^\s*\*\*Sandbox:\*\*\s*`?([A-Za-z-]+)`?\s*$/im.exec(prompt);
  return m === null ? null : m[1].toLowerCase();
}

function layer(value: unknown, field: string): Record<string, unknown> {
  const top = object(value, field);
  for (const key of Object.keys(top)) if (key !== "sandbox") throw new SandboxSettingsError(`${field}.${key}`, "unknown settings key");
  if (top.sandbox === undefined) return {};
  const sandbox = object(top.sandbox, `${field}.sandbox`);
  for (const key of Object.keys(sandbox)) if (!SANDBOX_KEYS.has(key)) throw new SandboxSettingsError(`${field}.sandbox.${key}`, "unknown settings key");
  if (sandbox.policy !== undefined) object(sandbox.policy, `${field}.sandbox.policy`);
  if (sandbox.fsrun !== undefined) {
    const f = object(sandbox.fsrun, `${field}.sandbox.fsrun`);
    for (const key of Object.keys(f)) if (!FSRUN_KEYS.has(key)) throw new SandboxSettingsError(`${field}.sandbox.fsrun.${key}`, "unknown settings key");
  }
  return sandbox;
}

/** Merges the layers (later wins; policy and fsrun key by key) and checks the result. */
export function resolveSandboxSettings(input: Omit<CreateBackendInput, "onAudit" | "backends">): ResolvedSandboxSettings {
  if (!Array.isArray(input.defaults)) throw new SandboxSettingsError("defaults", "expected an array of settings objects");
  const layers = input.defaults.map((d, i) => layer(d, `defaults[${i}]`));
  if (input.task !== undefined) layers.push(layer(input.task, "task"));
  const merged: Record<string, unknown> = {};
  const policy: Record<string, unknown> = {};
  const fsrun: Record<string, unknown> = {};
  for (const l of layers) {
    Object.assign(merged, l);
    Object.assign(policy, l.policy ?? {});
    Object.assign(fsrun, l.fsrun ?? {});
  }
  let backend = merged.backend;
  let field = "sandbox.backend";
  if (input.prompt !== undefined) {
    if (typeof input.prompt !== "string") throw new SandboxSettingsError("prompt", "expected the task's prompt text");
    const fromPrompt = promptBackend(input.prompt);
    if (fromPrompt !== null) {
      backend = fromPrompt;
      field = "prompt (**Sandbox:** line)";
    }
  }
  if (backend === "fsrun") backend = "custom";
  if (typeof backend !== "string" || !IDS.includes(backend))
    throw new SandboxSettingsError(field, `expected one of ${IDS.join(", ")} (or "fsrun"), got ${JSON.stringify(backend)}`);
  const failureMode = merged.failureMode ?? "fail-hard";
  if (failureMode !== "fail-hard" && failureMode !== "fallback-native")
    throw new SandboxSettingsError("sandbox.failureMode", `expected "fail-hard" or "fallback-native", got ${JSON.stringify(failureMode)}`);
  for (const key of ["stateRoot", "auditLog"] as const) {
    const v = fsrun[key];
    if (v !== undefined && (typeof v !== "string" || !isAbsolute(v))) throw new SandboxSettingsError(`sandbox.fsrun.${key}`, `expected an absolute path, got ${JSON.stringify(v)}`);
  }
  const path = fsrun.path;
  if (path !== undefined && (typeof path !== "string" || path === "" || (path.includes("/") && !isAbsolute(path))))
    throw new SandboxSettingsError("sandbox.fsrun.path", `expected an absolute path or a command name, got ${JSON.stringify(path)}`);
  if (fsrun.mode !== undefined && fsrun.mode !== "one-shot" && fsrun.mode !== "task-container")
    throw new SandboxSettingsError("sandbox.fsrun.mode", `expected "one-shot" or "task-container", got ${JSON.stringify(fsrun.mode)}`);
  if (fsrun.killGraceMs !== undefined && (typeof fsrun.killGraceMs !== "number" || !(fsrun.killGraceMs >= 0)))
    throw new SandboxSettingsError("sandbox.fsrun.killGraceMs", "expected a number of milliseconds");
  return {
    backend: backend as SandboxBackendId,
    backendName: backend === "custom" ? "fsrun" : backend,
    policy: checkPolicy(policy, "sandbox.policy"),
    failureMode,
    fsrun: fsrun as FsrunSettings,
  };
}

/** The backend Fusion's settings ask for. */
export function createSandboxBackend(input: CreateBackendInput): SandboxBackend {
  const s = resolveSandboxSettings(input);
  if (s.backend === "native") return new NativeBackend({ onAudit: input.onAudit, killGraceMs: s.fsrun.killGraceMs });
  if (s.backend === "custom")
    return new FsrunBackend({
      fsrunPath: s.fsrun.path,
      mode: s.fsrun.mode,
      stateRoot: s.fsrun.stateRoot,
      auditLog: s.fsrun.auditLog,
      killGraceMs: s.fsrun.killGraceMs,
      policy: s.policy,
      failureMode: s.failureMode,
      onAudit: input.onAudit,
    });
  const make = input.backends?.[s.backend];
  if (make === undefined)
    throw new SandboxSettingsError("sandbox.backend", `"${s.backend}" is not provided by this package (it has "native" and "custom" = fsrun); pass it in \`backends\``);
  return make(s);
}
