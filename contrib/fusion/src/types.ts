// The adapter's own types, on top of Fusion's contract (fusion-types.ts). Everything here extends
// the contract: a FsrunRunResult is a SandboxRunResult, a FsrunRunOptions is a SandboxRunOptions.
import type { SandboxFailureMode, SandboxPolicy, SandboxRunOptions, SandboxRunResult } from "./fusion-types";

/** Fusion's SandboxPolicy with fsrun's own optional keys (docs/sandbox.md). */
export interface FsrunPolicy extends SandboxPolicy {
  /** Outbound TCP ports allowed when allowNetwork is true (Landlock ABI 4 or later); in the egress profile no UDP but DNS then (fsrun's policy rules), with network "host" UDP is a limit not enforced. */
  allowedTcpPorts?: number[];
  /** The most processes the sandbox may hold (cgroup; fsrun's default 4096). */
  pidsLimit?: number;
  /** "default" (fsrun's deny list for agents) or "none". */
  seccomp?: "default" | "none";
  /** With the network on: link-local (169.254.0.0/16) and the cloud services fsrun also blocks by default (Azure 168.63.129.16, Alibaba 100.100.100.200) stay reachable (fsrun's default: unreachable). */
  allowLinkLocal?: boolean;
  /** With the network on: the RFC 1918 ranges, 100.64.0.0/10 (CGNAT: Tailscale) and 198.18.0.0/15 are made unreachable too. */
  blockPrivateNetworks?: boolean;
}

/** Fusion's run options plus an AbortSignal for Fusion's watchdog. */
export interface FsrunRunOptions extends SandboxRunOptions {
  /** Aborting ends the command's whole process tree (SIGTERM, then SIGKILL after killGraceMs). */
  signal?: AbortSignal;
}

/** The limits fsrun enforced for one run (an absent key: not enforced). */
export interface SandboxLimits {
  memoryLimitMb?: number;
  cpuMaxCores?: number;
  pidsLimit?: number;
  cpuMaxMs?: number;
  /** "command": a cgroup budget for the whole command; "process": RLIMIT_CPU per process. */
  cpuMaxMsScope?: "command" | "process";
  timeoutMs?: number;
  network?: "none" | "egress" | "host";
}

/** A limit the policy asked for that fsrun could not enforce for this caller on this host. */
export interface LimitNotEnforced {
  limit: string;
  reason: string;
}

/** Where a command ran: in fsrun's sandbox (one-shot or the task container), or natively. */
export type RunBackend = "fsrun" | "native";

/** Fusion's result plus what fsrun and the adapter know about the run. */
export interface FsrunRunResult extends SandboxRunResult {
  /** timeoutMs ran out and the command's tree was killed. */
  timedOut: boolean;
  /** stdout or stderr went over maxBuffer and was cut. */
  truncated: boolean;
  /** The memory limit killed the command (false when the binary does not say). */
  oomKilled: boolean;
  limits: SandboxLimits;
  limitsNotEnforced: LimitNotEnforced[];
  durationMs: number;
  /** Worktree-relative paths of nested git dirs or gitlinks the run made, and `config:<key>=<value>` for each file the repository's config has the host's git run that the run changed (husky's `.husky/`, an included `.gitconfig`), and `hooks:<name>` for each file an installed hook manager's hooks read that the run changed (`hooks:lefthook.yml`, `hooks:.pre-commit-config.yaml`): fsrun's `tamper`, as it is; empty when none or not reported. Any entry: do not run the host's git in that worktree unreviewed. */
  tamper: string[];
  /** The `-c key=value` options (argv words: `"-c", "filter.nbstripout.clean="`, ...) under which the host's git runs nothing of what this run's `tamper` names: an empty filter, `cat` as a textconv, no hooks, no fsmonitor (fsrun's `hostGitArgs`, docs/sandbox.md "Disarming the host's git"). Absent when none, natively, and from an fsrun that does not give them. "Cannot tell", the cannot-disarm option alone, when the adapter had to end fsrun before it said its hostGitArgs line, or a task-container exec whose command started left no status (its stderr is the command's too: a line there could be the command's). This run's entries only: what an earlier run planted stays planted, so use the backend's `hostGitArgs` (every run's so far) for the host's git. */
  hostGitArgs?: string[];
  /** Common-dir-relative paths of git changes the run made outside the task's allowlist, left out (fsrun's `discarded`, both modes; absent when none). */
  gitDiscarded?: string[];
  backend: RunBackend;
  /** The run was ended through opts.signal, abort() or dispose(). */
  aborted: boolean;
  /** The run id (fsrun's audit log and container id carry it too). */
  runId: string;
  /** Why the command ran natively, when backend is "native" under fallback-native. */
  fallbackReason?: string;
}

export type { SandboxFailureMode };
