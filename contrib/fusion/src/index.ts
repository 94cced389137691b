export { FsrunBackend, containerIdPrefix } from "./fsrun-backend";
export type { FsrunBackendOptions } from "./fsrun-backend";
export { FsrunAbortError, FsrunError, FsrunPolicyError, FsrunSetupError } from "./errors";
export type {
  FailureMode,
  SandboxBackend,
  SandboxCapabilities,
  SandboxLimits,
  SandboxPolicy,
  SandboxPrepareContext,
  SandboxRunOptions,
  SandboxRunResult,
  SandboxSettings,
} from "./types";
