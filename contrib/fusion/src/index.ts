export type {
  SandboxBackend,
  SandboxBackendId,
  SandboxCapabilities,
  SandboxFailureMode,
  SandboxPolicy,
  SandboxPrepareContext,
  SandboxRunOptions,
  SandboxRunResult,
} from "./fusion-types";
export type { FsrunPolicy, FsrunRunOptions, FsrunRunResult, LimitNotEnforced, RunBackend, SandboxLimits } from "./types";
export type { SandboxAuditEvent, SandboxAuditEventName, SandboxAuditHook } from "./audit";
export { policyHash, policySummary } from "./audit";
export { combinePolicies, checkPolicy } from "./policy";
export { FsrunBackend, parseResult } from "./fsrun-backend";
export { HOST_GIT_CANNOT_DISARM, HOST_GIT_ENV, HOST_GIT_SAFE_ARGS, TAMPER_UNREADABLE, cannotDisarm, hostGitArgsFor, hostGitArgsUntold, hostGitEnvFor } from "./backend-base";
export { encodeIdPart, isSandboxOf, sandboxIdStem, taskContainerId } from "./container-id";
export type { FsrunBackendOptions, FsrunMode } from "./fsrun-backend";
export { NativeBackend } from "./native-backend";
export type { NativeBackendOptions } from "./native-backend";
export { createSandboxBackend, findPromptBackend, promptBackend, resolveSandboxSettings } from "./settings";
export type { CreateBackendInput, FsrunSettings, PromptChoice, ResolvedSandboxSettings, SandboxSettings, SandboxSettingsOverride } from "./settings";
export {
  FsrunAbortError,
  FsrunError,
  FsrunPolicyError,
  FsrunSetupError,
  FsrunUnavailableError,
  SandboxSettingsError,
} from "./errors";
export type { AfterCommand, UnavailableReason } from "./errors";
