// The factory: Fusion's settings (global and project defaults, the task's override, the task
// prompt's `**Sandbox:** NAME` line where the settings let a prompt choose) in, a SandboxBackend
// out. Bad input is a SandboxSettingsError naming the field, before anything runs.
import { isAbsolute } from "node:path";

import type { SandboxAuditHook } from "./audit";
import { deliver, policyHash, policySummary } from "./audit";
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
    /** The backends a prompt's `**Sandbox:** NAME` line may choose (default none but the configured one, or any sandbox when that is native). */
    promptBackends?: (SandboxBackendId | "fsrun")[];
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
  /** The task's prompt: a line `**Sandbox:** NAME` in its header chooses the backend where sandbox.promptBackends allows it. */
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
  /** The prompt's `**Sandbox:**` line, when it has one, and whether it chose the backend. */
  promptChoice?: PromptChoice;
}

export interface PromptChoice {
  /** The backend the line names ("custom" for "fsrun"). */
  requested: string;
  /** The line's number in the prompt, from 1. */
  line: number;
  applied: boolean;
  /** Why it did not apply. */
  refused?: string;
}

const IDS: readonly string[] = ["native", "sandbox-exec", "bubblewrap", "docker", "podman", "custom"];
const SANDBOX_KEYS = new Set(["backend", "policy", "failureMode", "fsrun", "promptBackends"]);
const FSRUN_KEYS = new Set(["path", "mode", "stateRoot", "auditLog", "killGraceMs"]);

function object(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new SandboxSettingsError(field, "expected an object");
  return value as Record<string, unknown>;
}

const SANDBOX_LINE = /^\s*\*\*Sandbox:\*\*\s*`?([A-Za-z-]+)`?\s*$/i;
/** a line of a prompt's header: a `# title` or a `**Field:** value` line */
const HEADER_LINE = /^\s*(#.*|\*\*[^*]+:\*\*.*)$/;

/**
 * The first `**Sandbox:** NAME` line anywhere in a prompt: its name, its number, and whether it is
 * in the header: the prompt's first lines (blank ones before them skipped) while each is a
 * `# title` or a `**Field:** value` line. The first line of text ends the header, so quoted text
 * (an issue, a log, a web page) never is.
 */
export function findPromptBackend(prompt: string): { name: string; line: number; inHeader: boolean } | null {
  const lines = prompt.split(/\r?\n/);
  let inHeader = true;
  let started = false;
  for (let i = 0; i < lines.length; i++) {
    const blank = lines[i].trim() === "";
    if ((blank && started) || (!blank && !HEADER_LINE.test(lines[i]))) inHeader = false;
    started ||= !blank;
    const m = SANDBOX_LINE.exec(lines[i]);
    if (m !== null) return { name: m[1].toLowerCase(), line: i + 1, inHeader };
  }
  return null;
}

/** The `**Sandbox:** NAME` line of a prompt's header, or null: one further down is quoted text (an issue, a log), not the task's author. */
export function promptBackend(prompt: string): string | null {
  const found = findPromptBackend(prompt);
  return found?.inHeader === true ? found.name : null;
}

/** The ids a prompt may choose: sandbox.promptBackends, else none but the configured one (any sandbox when that is native). */
function promptAllowed(value: unknown, configured: unknown): string[] {
  if (value === undefined) return configured === "native" ? IDS.filter((id) => id !== "native") : [String(configured)];
  if (!Array.isArray(value)) throw new SandboxSettingsError("sandbox.promptBackends", "expected an array of backend ids");
  return value.map((id, i) => {
    const v = id === "fsrun" ? "custom" : id;
    if (typeof v !== "string" || !IDS.includes(v)) throw new SandboxSettingsError(`sandbox.promptBackends[${i}]`, `expected one of ${IDS.join(", ")} (or "fsrun"), got ${JSON.stringify(id)}`);
    return v;
  });
}

/** The prompt's line, if any, against the settings: what it asks, and whether that applies. */
function choose(prompt: string, configured: unknown, allowedSetting: unknown): PromptChoice | undefined {
  const allowed = promptAllowed(allowedSetting, configured === "fsrun" ? "custom" : configured);
  const found = findPromptBackend(prompt);
  if (found === null) return undefined;
  const requested = found.name === "fsrun" ? "custom" : found.name;
  const at = { requested, line: found.line };
  if (!found.inHeader) return { ...at, applied: false, refused: "the line is not in the prompt's header (its first lines, each a \`# title\` or \`**Field:** value\` line)" };
  if (!IDS.includes(requested)) throw new SandboxSettingsError("prompt (**Sandbox:** line)", `expected one of ${IDS.join(", ")} (or "fsrun"), got ${JSON.stringify(found.name)}`);
  if (requested !== configured && !allowed.includes(requested)) return { ...at, applied: false, refused: `"${requested}" is not in sandbox.promptBackends` };
  return { ...at, applied: true };
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
  const configured = merged.backend === "fsrun" ? "custom" : merged.backend;
  if (typeof configured !== "string" || !IDS.includes(configured))
    throw new SandboxSettingsError("sandbox.backend", `expected one of ${IDS.join(", ")} (or "fsrun"), got ${JSON.stringify(merged.backend)}`);
  let backend: string = configured;
  let promptChoice: PromptChoice | undefined;
  if (input.prompt !== undefined) {
    if (typeof input.prompt !== "string") throw new SandboxSettingsError("prompt", "expected the task's prompt text");
    promptChoice = choose(input.prompt, backend, merged.promptBackends);
    if (promptChoice?.applied === true) backend = promptChoice.requested;
  } else if (merged.promptBackends !== undefined) {
    promptAllowed(merged.promptBackends, backend);
  }
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
    ...(promptChoice !== undefined ? { promptChoice } : {}),
  };
}

/** `sandbox:prompt-backend`: a prompt's line applied or refused (before prepare: no task or run id yet). */
function auditPromptChoice(s: ResolvedSandboxSettings, hook: SandboxAuditHook | undefined): void {
  const c = s.promptChoice;
  if (c === undefined) return;
  deliver(hook, {
    event: "sandbox:prompt-backend",
    scope: "task",
    taskId: "",
    runId: "",
    backend: s.backend,
    backendName: s.backendName,
    mode: s.backend === "custom" ? (s.fsrun.mode ?? "one-shot") : s.backend === "native" ? "native" : "other",
    policyHash: policyHash(s.policy),
    policySummary: policySummary(s.policy),
    time: new Date().toISOString(),
    promptBackend: { requested: c.requested, line: c.line, applied: c.applied },
    ...(c.refused !== undefined ? { reason: c.refused } : {}),
  });
}

/** The backend Fusion's settings ask for. */
export function createSandboxBackend(input: CreateBackendInput): SandboxBackend {
  const s = resolveSandboxSettings(input);
  auditPromptChoice(s, input.onAudit);
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
