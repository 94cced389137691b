// Fusion's sandbox interface, verbatim from Fusion's design document (issue 12 quotes it). Do not
// edit these declarations to fit the adapter: test/contract.test.ts assigns the backends to
// SandboxBackend, so a drift between this contract and the adapter fails the build.

export type SandboxBackendId = "native" | "sandbox-exec" | "bubblewrap" | "docker" | "podman" | "custom";
export type SandboxFailureMode = "fail-hard" | "fallback-native";
export interface SandboxPolicy {
  allowNetwork: boolean;
  allowedPaths: string[]; // absolute host paths mounted/readable in sandbox
  writablePaths?: string[];
  envAllowlist?: string[];
  cpuLimit?: { maxCores?: number; maxMs?: number };
  memoryLimitMb?: number;
}
export interface SandboxRunOptions { cwd: string; timeoutMs: number; maxBuffer: number; env?: NodeJS.ProcessEnv; }
export interface SandboxPrepareContext { taskId: string; runId: string; worktreePath: string; policy: SandboxPolicy; }
export interface SandboxRunResult { stdout: string; stderr: string; exitCode: number | null; signal: NodeJS.Signals | null; }
export interface SandboxCapabilities {
  filesystemIsolation: "none" | "basic" | "strong";
  networkPolicy: "none" | "coarse" | "fine";
  resourceLimits: "none" | "basic" | "advanced";
  requiresInstall: boolean;
  supportsMac: boolean; supportsLinux: boolean; supportsWindows: boolean;
}
export interface SandboxBackend {
  id: SandboxBackendId;
  capabilities(): SandboxCapabilities;
  prepare(ctx: SandboxPrepareContext): Promise<void>;
  run(command: string, opts: SandboxRunOptions): Promise<SandboxRunResult>;
  dispose(): Promise<void>;
}
