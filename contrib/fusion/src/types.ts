// The shape fsrun's adapter expects of Fusion's sandbox types. We do not have Fusion's source:
// these are the field names of Fusion's SandboxPolicy and settings as the design records them,
// plus fsrun's own optional keys. A Fusion build passes its objects in as they are.

/** Fusion's SandboxPolicy (fsrun reads the same JSON; see docs/sandbox.md). */
export interface SandboxPolicy {
  /** false (the default): a network namespace with only `lo`; true: the host's network. */
  allowNetwork?: boolean;
  /** Absolute host paths bound read-only at the same path. */
  allowedPaths?: string[];
  /** Absolute host paths bound read-write at the same path. */
  writablePaths?: string[];
  /** Names of the environment variables that reach the command (PATH and TERM always do). */
  envAllowlist?: string[];
  cpuLimit?: {
    /** CPU quota in cores (cgroup). */
    maxCores?: number;
    /** CPU time in ms (RLIMIT_CPU, rounded up to whole seconds). Not a wall-clock timeout. */
    maxMs?: number;
  };
  /** Memory limit in MiB (cgroup). */
  memoryLimitMb?: number;
  /** fsrun: outbound TCP ports allowed when allowNetwork is true (Landlock). */
  allowedTcpPorts?: number[];
  /** fsrun: the most processes the sandbox may hold (cgroup; default 4096). */
  pidsLimit?: number;
  /** fsrun: "default" (a deny list for agents) or "none". A profile path is not supported yet. */
  seccomp?: string;
}

/** What happens when the sandbox cannot be set up: fail (the default), or run the command natively. */
export type FailureMode = "fail-hard" | "fallback-native";

/** Fusion's settings object. */
export interface SandboxSettings {
  sandbox: {
    backend: "fsrun";
    policy: SandboxPolicy;
    failureMode?: FailureMode;
  };
}

/** What Fusion hands to prepare(): the task's git worktree, and ids for the audit log. */
export interface SandboxPrepareContext {
  worktreePath: string;
  taskId?: string;
  runId?: string;
}

export interface SandboxRunOptions {
  /** A directory inside the worktree (default: the worktree). */
  cwd?: string;
  /** Variables for the command; only the names in the policy's envAllowlist reach it. */
  env?: Record<string, string | undefined>;
  /** Wall-clock limit: fsrun kills the whole sandbox after it (timedOut: true, exitCode 124). */
  timeoutMs?: number;
  /** At most this many bytes of each of stdout and stderr are kept (default 10 MiB). */
  maxBuffer?: number;
  /** Aborting ends the command (SIGTERM, then SIGKILL); the result has aborted: true. */
  signal?: AbortSignal;
}

/** The limits fsrun enforced for one run (absent: not enforced). */
export interface SandboxLimits {
  memoryLimitMb?: number;
  cpuMaxCores?: number;
  pidsLimit?: number;
  cpuMaxMs?: number;
  timeoutMs?: number;
  /** "none": own network namespace; "host": the host's network. */
  network?: "none" | "host";
}

export interface SandboxRunResult {
  stdout: string;
  stderr: string;
  /** The command's status; 128+N when signal N ended it; 124 on timeout. */
  exitCode: number;
  /** "SIGKILL" and the like when a signal ended the command, else null. */
  signal: string | null;
  timedOut: boolean;
  /** stdout or stderr went over maxBuffer and was cut. */
  truncated: boolean;
  durationMs: number;
  /** "native": the sandbox could not be set up and failureMode is fallback-native. */
  backend: "fsrun" | "native";
  limits: SandboxLimits;
  /** The run was ended through the AbortSignal (or dispose()). */
  aborted: boolean;
  /** The run id given to fsrun (in its audit log and container id). */
  runId: string;
}

/** What the backend enforces. The limits also depend on cgroups: each result's limits say what was enforced. */
export interface SandboxCapabilities {
  /** false until prepare() has checked the binary; the values below are then the binary's. */
  prepared: boolean;
  /** `fsrun --version`, e.g. "0.1.0" */
  version: string | null;
  networkIsolation: boolean;
  /** allowedTcpPorts is enforced (needs Landlock ABI 4 or later). */
  tcpPortAllowlist: boolean;
  pathRestrictions: boolean;
  envAllowlist: boolean;
  /** cpuLimit.maxMs as RLIMIT_CPU. */
  cpuTimeLimit: boolean;
  /** memoryLimitMb, cpuLimit.maxCores, pidsLimit: cgroup limits, enforced when fsrun runs as root. */
  memoryLimit: boolean;
  cpuCoresLimit: boolean;
  pidsLimit: boolean;
  timeouts: boolean;
  abort: boolean;
  /** A seccomp deny list (mount, ptrace, bpf, keyrings, new user namespaces, ...). */
  seccomp: boolean;
  /** JSON-lines audit log (when the backend was given auditLog). */
  auditLog: boolean;
  fallbackNative: boolean;
}

/** Fusion's sandbox backend interface. */
export interface SandboxBackend {
  readonly id: string;
  capabilities(): SandboxCapabilities;
  prepare(ctx: SandboxPrepareContext): Promise<void>;
  run(command: string, opts?: SandboxRunOptions): Promise<SandboxRunResult>;
  dispose(): Promise<void>;
}
