// FsrunBackend: Fusion's SandboxBackend over the fsrun binary. Its id is "custom" (Fusion's union
// has no "fsrun"); `name` is "fsrun". Mode "one-shot": each run() is one
// `fsrun sandbox --json --policy - ... -- /bin/sh -c COMMAND`. Mode "task-container": prepare()
// makes one container for the task and each run() is an `fsrun exec` into it (task-container.ts).
import { realpath, rm } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

import type { SandboxAuditEvent, SandboxAuditHook } from "./audit";
import { BackendBase, checkContext, checkCwd, hostGitArgsFor, hostGitArgsUntold } from "./backend-base";
import type { Task } from "./backend-base";
import { FsrunError, FsrunSetupError, FsrunUnavailableError, SandboxSettingsError, withAfterCommand } from "./errors";
import { FsrunCli, firstLines, fsrunOwnEnv, hostGitArgsFromStderr, policyErrorFrom, tamperFromStderr } from "./fsrun-cli";
import type { SandboxBackend, SandboxCapabilities, SandboxPrepareContext } from "./fusion-types";
import { maxBufferOf, runNative } from "./native";
import { oneShotEnv, withCarrier } from "./one-shot-env";
import type { OneShotEnv } from "./one-shot-env";
import { checkPolicy, combinePolicies } from "./policy";
import { runProc } from "./proc";
import { privateDir } from "./private-dir";
import { isSandboxOf } from "./container-id";
import { TaskContainer } from "./task-container";
import type { FsrunPolicy, FsrunRunOptions, FsrunRunResult, LimitNotEnforced, SandboxFailureMode, SandboxLimits } from "./types";

export type FsrunMode = "one-shot" | "task-container";

export interface FsrunBackendOptions {
  /** The fsrun binary: a path, or a name looked up in PATH (default "fsrun"). */
  fsrunPath?: string;
  /** A ceiling for every task's ctx.policy (see combinePolicies); default: ctx.policy alone. */
  policy?: FsrunPolicy;
  /** Default "fail-hard". */
  failureMode?: SandboxFailureMode;
  /** Default "one-shot". */
  mode?: FsrunMode;
  /** Receives every audit event (a callback or an EventEmitter). */
  onAudit?: SandboxAuditHook;
  /** A file fsrun appends its own JSON-lines audit events to (--audit-log; one-shot runs). */
  auditLog?: string;
  /** fsrun's state directory (--root); default fsrun's own. */
  stateRoot?: string;
  /** After an abort's SIGTERM, how long before SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** How long past timeoutMs the adapter waits for fsrun's own timeout before it kills fsrun (default 10000 ms). */
  timeoutGraceMs?: number;
  /**
   * Task-container mode: freeze the container between runs (`fsrun pause`, resumed at the next
   * run) and walk it frozen, so that `hostGitArgs` holds while Fusion's git runs (default true).
   * false: a process a command leaves running (a dev server) keeps running between runs, and
   * while one is there `hostGitDisarmed` is false after every run until dispose() (review22 F2).
   */
  pauseBetweenRuns?: boolean;
  /**
   * One-shot mode: how long dispose()'s last walk (a sandboxed `true`) may take, in ms, before the
   * adapter ends it (after timeoutGraceMs more) and the task "cannot tell" (default 30000).
   */
  lastWalkTimeoutMs?: number;
  /** For tests: the platform to assume (default process.platform). */
  platform?: string;
}

/** fsrun's signal names that Node knows. */
function signalOf(value: unknown): NodeJS.Signals | null {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(osConstants.signals, value) ? (value as NodeJS.Signals) : null;
}

type State = { kind: "fsrun"; version: string; landlockAbi: number | null; probe: SandboxLimits; notEnforced: LimitNotEnforced[] } | { kind: "native"; reason: string };

const GONE_WAIT_MS = 10_000;

export class FsrunBackend extends BackendBase implements SandboxBackend {
  readonly id = "custom" as const;
  readonly name = "fsrun";
  /** fsrun's warnings from prepare(), e.g. an allowedPaths entry that does not exist and is skipped. */
  readonly warnings: string[] = [];
  readonly cli: FsrunCli;
  readonly failureMode: SandboxFailureMode;
  readonly runMode: FsrunMode;
  private readonly ceiling?: FsrunPolicy;
  private readonly auditLog?: string;
  private readonly timeoutGraceMs: number;
  private readonly platform: string;
  private readonly pauseBetweenRuns: boolean;
  private readonly lastWalkTimeoutMs: number;
  /** One-shot runs started: dispose() walks last only after one (no run, nothing of a run's to find). */
  private oneShotRuns = 0;
  private state: State | null = null;
  private container: TaskContainer | null = null;
  /**
   * After dispose(): what its last walk found in the worktree, also in the `sandbox:dispose` event.
   * Task container: fsrun delete's walk (what a process left running planted after the last
   * command's walk). One-shot: a sandboxed `true`'s walk over the worktree and the host's index as
   * the host's git left them (review27 E7). Null before dispose, natively, or when no walk was made.
   */
  finalTamper: string[] | null = null;
  /** Why task-container mode fell back to one-shot, or null. */
  modeFallback: string | null = null;

  constructor(options: FsrunBackendOptions = {}) {
    if (options === null || typeof options !== "object") throw new SandboxSettingsError("options", "expected an object");
    super(options.onAudit, options.killGraceMs ?? 2000);
    const path = options.fsrunPath ?? "fsrun";
    if (typeof path !== "string" || path === "") throw new SandboxSettingsError("fsrunPath", "expected a path or a command name");
    this.cli = new FsrunCli(path.includes("/") ? resolve(path) : path, options.stateRoot !== undefined ? resolve(options.stateRoot) : undefined);
    this.ceiling = options.policy !== undefined ? checkPolicy(options.policy, "policy") : undefined;
    const mode = options.failureMode ?? "fail-hard";
    if (mode !== "fail-hard" && mode !== "fallback-native") throw new SandboxSettingsError("failureMode", `expected "fail-hard" or "fallback-native", got ${JSON.stringify(mode)}`);
    this.failureMode = mode;
    const runMode = options.mode ?? "one-shot";
    if (runMode !== "one-shot" && runMode !== "task-container") throw new SandboxSettingsError("mode", `expected "one-shot" or "task-container", got ${JSON.stringify(runMode)}`);
    this.runMode = runMode;
    if (options.auditLog !== undefined && !isAbsolute(options.auditLog)) throw new SandboxSettingsError("auditLog", "expected an absolute path");
    this.auditLog = options.auditLog;
    this.timeoutGraceMs = options.timeoutGraceMs ?? 10_000;
    this.platform = options.platform ?? process.platform;
    if (options.pauseBetweenRuns !== undefined && typeof options.pauseBetweenRuns !== "boolean") throw new SandboxSettingsError("pauseBetweenRuns", "expected true or false");
    this.pauseBetweenRuns = options.pauseBetweenRuns ?? true;
    const lastWalk = options.lastWalkTimeoutMs ?? 30_000;
    if (typeof lastWalk !== "number" || !(lastWalk > 0)) throw new SandboxSettingsError("lastWalkTimeoutMs", "expected a number of ms above 0");
    this.lastWalkTimeoutMs = lastWalk;
  }

  protected reportHolds(): boolean {
    return super.reportHolds() && (this.container === null || this.container.holds);
  }

  protected mode(): SandboxAuditEvent["mode"] {
    return this.effectiveMode;
  }

  /** How runs go after prepare(): "native" (fallback-native), "one-shot" or "task-container". */
  get effectiveMode(): SandboxAuditEvent["mode"] {
    if (this.state?.kind === "native") return "native";
    return this.modeFallback !== null ? "one-shot" : this.runMode;
  }

  /** The task container's id (task-container mode, after prepare()), else null. */
  get containerId(): string | null {
    return this.container?.id ?? null;
  }

  /** Where runs go after prepare(): "fsrun", or "native" with the reason (fallback-native). */
  get fallback(): string | null {
    return this.state?.kind === "native" ? this.state.reason : null;
  }

  /**
   * Before prepare(): what holds for every caller on Linux (cgroup limits not promised). After it:
   * what prepare() found for this caller (the limits probe, Landlock's ABI), or native's when it
   * fell back.
   */
  capabilities(): SandboxCapabilities {
    const s = this.state;
    const native = s?.kind === "native";
    const advanced = s?.kind === "fsrun" && s.probe.memoryLimitMb !== undefined && s.probe.cpuMaxCores !== undefined;
    return {
      filesystemIsolation: native ? "none" : "strong",
      networkPolicy: native ? "none" : s?.kind === "fsrun" && (s.landlockAbi ?? 0) >= 4 ? "fine" : "coarse",
      resourceLimits: native ? "none" : advanced ? "advanced" : "basic",
      requiresInstall: true,
      supportsMac: false,
      supportsLinux: true,
      supportsWindows: false,
    };
  }

  /** Limits of the probe that this caller does not get (empty when cgroup limits hold). */
  get limitsNotEnforced(): LimitNotEnforced[] {
    return this.state?.kind === "fsrun" ? [...this.state.notEnforced] : [];
  }

  async prepare(ctx: SandboxPrepareContext): Promise<void> {
    this.assertUsable("prepare");
    if (this.task !== null) throw new FsrunError("prepare: this backend was prepared already (one task per backend)");
    await checkContext(ctx);
    const policy = combinePolicies(this.ceiling, checkPolicy(ctx.policy, "ctx.policy"));
    this.task = { taskId: ctx.taskId, runId: ctx.runId, worktree: await realpath(ctx.worktreePath), policy };
    this.emit("task", ctx.runId, { event: "sandbox:prepare" });
    try {
      this.state = await this.checkFsrun(this.task);
      // dispose() while the task container was being made found none to delete
      if (this.disposed) throw new FsrunError("prepare: the backend was disposed");
    } catch (e) {
      this.emit("task", ctx.runId, { event: "sandbox:failure", reason: (e as Error).message });
      this.task = null;
      const made = this.container;
      this.container = null;
      await made?.remove();
      throw e;
    }
    if (this.state.kind === "native") this.emit("task", ctx.runId, { event: "sandbox:fallback", reason: this.state.reason });
    else this.emit("task", ctx.runId, { event: "sandbox:ready", ...(this.modeFallback !== null ? { reason: this.modeFallback } : {}) });
  }

  /** fsrun's state for the task, or native's under fallback-native; throws under fail-hard. */
  private async checkFsrun(task: Task): Promise<State> {
    const fallBack = (reason: string, error: FsrunError): State => {
      if (this.failureMode === "fallback-native") return { kind: "native", reason };
      throw error;
    };
    const found = await this.cli.unavailable(this.platform);
    if ("kind" in found) return fallBack(found.reason, new FsrunUnavailableError(found.kind, `prepare: ${found.reason}`));
    const landlockAbi = await this.cli.landlockAbi();
    // the bundle checks the policy (a refusal throws in both modes: it is bad input, not a missing sandbox)
    // A failure over the worktree or the policy's paths (which an earlier command may have shaped)
    // never falls back: only a host where fsrun can set up no sandbox at all does (the probe below,
    // under fallback-native, is fsrun's own judgement of that: docs/sandbox.md)
    let bundleError: FsrunSetupError | null = null;
    const tmp = await privateDir(task, "fsrun-fusion-");
    try {
      const b = await this.cli.bundle(task.policy, task.worktree, join(tmp, "bundle"));
      this.warnings.push(...b.warnings);
      if (b.code !== 0) bundleError = new FsrunSetupError(`prepare: fsrun cannot build a sandbox over \`${task.worktree}\`: ${firstLines(b.stderr)}`, null, b.stderr);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    if (bundleError !== null && this.failureMode !== "fallback-native") throw bundleError;
    // the limits that hold for this caller: a memory and a CPU limit make the probe ask for cgroups
    const probePolicy: FsrunPolicy = { ...task.policy, memoryLimitMb: task.policy.memoryLimitMb ?? 1024, cpuLimit: { ...task.policy.cpuLimit, maxCores: task.policy.cpuLimit?.maxCores ?? 1 } };
    const p = await this.cli.probe(probePolicy, task.worktree, this.failureMode);
    if (p.backend === "native") return fallBack(`fsrun could not set up the sandbox on this host: ${firstLines(p.stderr)}`, new FsrunSetupError("prepare: fsrun ran the probe natively", null, p.stderr));
    if (bundleError !== null) throw bundleError;
    if (p.code !== 0 || p.error !== null) {
      const why = `fsrun could not set up the sandbox: ${p.error ?? firstLines(p.stderr)}`;
      throw new FsrunSetupError(`prepare: ${why}`, null, p.stderr);
    }
    if (this.runMode === "task-container") {
      try {
        // the probe asked for memory and CPU limits; the container holds only what the task asked for
        const limits: SandboxLimits = { ...p.limits };
        if (task.policy.memoryLimitMb === undefined) delete limits.memoryLimitMb;
        if (task.policy.cpuLimit?.maxCores === undefined) delete limits.cpuMaxCores;
        const asked = (l: LimitNotEnforced) =>
          (l.limit !== "memoryLimitMb" || task.policy.memoryLimitMb !== undefined) &&
          (l.limit !== "cpuLimit.maxCores" || task.policy.cpuLimit?.maxCores !== undefined);
        this.container = await TaskContainer.create(this.cli, task, this.killGraceMs, limits, p.limitsNotEnforced.filter(asked), this.pauseBetweenRuns);
      } catch (e) {
        if (this.failureMode !== "fallback-native") throw e instanceof FsrunError ? e : new FsrunSetupError(`prepare: ${(e as Error).message}`, null);
        // the one-shot sandbox has just run here: this host can sandbox, so the task runs one-shot
        // (the same policy), never natively (what failed may be the worktree's doing)
        this.container = null;
        this.modeFallback = `task-container mode is not usable here, commands run one-shot: the task container could not be made: ${(e as Error).message}`;
        this.warnings.push(this.modeFallback);
      }
      // an exec that cannot join the container (as an ordinary user, fsrun exec may not): the
      // one-shot sandbox enforces the same policy, so the task runs that way and says why
      const why = this.container === null ? null : await this.container.check();
      if (why !== null && this.container !== null) {
        await this.container.remove();
        this.container = null;
        this.modeFallback = `task-container mode is not usable here, commands run one-shot: ${why}`;
        this.warnings.push(this.modeFallback);
      }
    }
    return { kind: "fsrun", version: found.version, landlockAbi, probe: p.limits, notEnforced: p.limitsNotEnforced };
  }

  async run(command: string, opts: FsrunRunOptions): Promise<FsrunRunResult> {
    const { task, runId } = this.startRun(command, opts);
    const state = this.state!;
    if (state.kind === "native") {
      await checkCwd(resolve(opts.cwd));
      return this.episode(runId, opts, async (signal) => ({
        result: { ...(await runNative(command, { ...opts, signal }, runId, this.killGraceMs)), fallbackReason: state.reason },
      }));
    }
    const cwd = await this.sandboxCwd(task, opts.cwd);
    if (this.container !== null) {
      const container = this.container;
      return this.episode(runId, opts, (signal) => container.exec(command, { ...opts, signal }, cwd, runId, this.commandEnv(task, opts)));
    }
    const env = this.oneShotEnv(task, opts);
    this.oneShotRuns++;
    return this.episode(runId, opts, (signal) => this.runOneShot(task, command, { ...opts, signal }, cwd, runId, env));
  }

  /** The command's directory: the worktree or a path the policy binds; a relative cwd is the worktree's. */
  private async sandboxCwd(task: Task, cwd: string): Promise<string> {
    const abs = isAbsolute(cwd) ? cwd : resolve(task.worktree, cwd);
    await checkCwd(abs);
    const dir = await realpath(abs);
    const roots = [task.worktree, ...task.policy.allowedPaths, ...(task.policy.writablePaths ?? [])];
    if (!roots.some((r) => dir === r || dir.startsWith(r.endsWith("/") ? r : r + "/")))
      throw new SandboxSettingsError("opts.cwd", `\`${cwd}\` is outside the worktree \`${task.worktree}\` and the policy's paths (the sandbox holds nothing else)`);
    return dir;
  }

  /** The variables the command gets: the policy's envAllowlist of opts.env (else of process.env), as exec reads env. */
  private commandEnv(task: Task, opts: FsrunRunOptions): Record<string, string> {
    const source = opts.env ?? process.env;
    const env: Record<string, string> = {};
    for (const name of task.policy.envAllowlist ?? []) {
      const value = source[name];
      if (value !== undefined && name !== "HOME") env[name] = String(value);
    }
    return env;
  }

  /** fsrun's environment is the adapter's own; the command's variables are set by its shell (one-shot-env.ts). */
  private oneShotEnv(task: Task, opts: FsrunRunOptions): OneShotEnv {
    const command = this.commandEnv(task, opts);
    const path = (opts.env ?? process.env).PATH;
    if (path !== undefined) command.PATH = path;
    return oneShotEnv(command, task.policy.envAllowlist ?? [], fsrunOwnEnv());
  }

  private async runOneShot(task: Task, command: string, opts: FsrunRunOptions, cwd: string, runId: string, { env, prelude }: OneShotEnv): Promise<{ result: FsrunRunResult; fsrunKilled?: boolean }> {
    const maxBuffer = maxBufferOf(opts);
    // fsrun has no --cwd: the directory is bound at its own path, so the shell goes there
    const script = cwd === task.worktree ? command : `cd '${cwd.replace(/'/g, `'\\''`)}' || exit 1\n${command}`;
    const args = [...this.cli.globalArgs(), "sandbox", "--json", "--policy", "-", "--worktree", task.worktree];
    args.push("--task-id", task.taskId, "--run-id", runId, "--max-buffer", String(maxBuffer), "--max-buffer-kill", "--failure-mode", this.failureMode);
    if (opts.timeoutMs > 0) args.push("--timeout-ms", String(Math.ceil(opts.timeoutMs)));
    if (this.auditLog !== undefined) args.push("--audit-log", this.auditLog);
    args.push("--", "/bin/sh", "-c", prelude + script);
    const raw = await runProc({
      file: this.cli.path,
      args,
      env,
      cwd: "/",
      stdin: JSON.stringify(withCarrier(task.policy)),
      maxBuffer: 12 * maxBuffer + 1024 * 1024, // fsrun's JSON of both streams, escaped
      timeoutMs: opts.timeoutMs > 0 ? opts.timeoutMs + this.timeoutGraceMs : 0,
      signal: opts.signal,
      killGraceMs: this.killGraceMs,
      closeWaitMs: 10_000,
    });
    const what = `run ${runId}`;
    const parsed = parseResult(raw.stdout.toString("utf8"), runId, raw.aborted);
    const stderr = raw.stderr.toString("utf8");
    if (parsed !== null && !raw.truncated) {
      const { result, error } = parsed;
      if (result.backend === "native") return { result: { ...result, fallbackReason: error ?? "fsrun could not set up the sandbox" } };
      // the set-up failed iff fsrun says so: every failure it reports in JSON carries `error`; a
      // command's own exit 125 is the command's, with its tamper and gitDiscarded
      if (error !== null) {
        const policyError = policyErrorFrom(stderr, what);
        const setUp = policyError ?? new FsrunSetupError(`${what}: fsrun could not set up the sandbox: ${error}`, result, stderr);
        throw withAfterCommand(setUp, result.tamper, result.hostGitArgs ?? []);
      }
      return { result };
    }
    const killed = raw.sentSignal === "SIGKILL" || raw.timedOut;
    // an abort's SIGTERM ends fsrun itself once the command is gone (its git sync): ended by us too;
    // so does the SIGTERM of a JSON past the buffer: fsrun's lists of the run's own names can make
    // it so (review25 C1), and the JSON's end (its hostGitArgs) is then lost
    if (killed || raw.truncated || (raw.aborted && raw.signal !== null && raw.signal === raw.sentSignal)) {
      // fsrun had to be killed: its watchdog kills the command's tree and removes the sandbox; the
      // tamper and hostGitArgs lines it wrote before its git sync are all there is of its result,
      // and without the second what the command left is not known to be disarmed
      await this.waitSandboxGone(task.taskId, runId);
      return {
        fsrunKilled: killed,
        result: {
          stdout: "", stderr: "", exitCode: null, signal: killed ? "SIGKILL" : raw.signal, timedOut: raw.timedOut, truncated: raw.truncated, oomKilled: false,
          limits: {}, limitsNotEnforced: [], durationMs: raw.durationMs, ...untold(stderr), backend: "fsrun", aborted: raw.aborted, runId,
        },
      };
    }
    const policyError = policyErrorFrom(stderr, what);
    if (policyError !== null) throw policyError;
    // killed by someone else: its watchdog removes the sandbox; the run fails once that is done
    if (raw.signal !== null) await this.waitSandboxGone(task.taskId, runId);
    const how = raw.signal !== null ? `was killed by ${raw.signal}` : `exited with status ${raw.code}`;
    // the command may have run: what fsrun said of it on stderr, or "cannot tell"
    const { tamper, hostGitArgs } = untold(stderr);
    throw withAfterCommand(new FsrunError(`${what}: fsrun sandbox ${how} without a result: ${firstLines(stderr)}`, stderr), tamper, hostGitArgs);
  }

  /** After fsrun was killed: wait until its watchdog has deleted the container; delete it if not. */
  private async waitSandboxGone(taskId: string, runId: string): Promise<void> {
    const deadline = Date.now() + GONE_WAIT_MS;
    for (;;) {
      const ids = await this.cli.ids((id) => isSandboxOf(id, taskId, runId));
      if (ids.length === 0) return;
      if (Date.now() >= deadline) {
        for (const id of ids) await this.cli.run(["delete", "--force", id]).catch(() => undefined);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * One-shot mode's last walk (review27 E7): a sandboxed `true` whose walk reads the host's index
   * as it is now, after the host's git may have run since the task's last run. A host `add -A`
   * makes a nested repository past the walk's reach a gitlink; this walk then finds its checkout
   * and says cannot disarm, so a second `add` after dispose() is never run with the last run's
   * "disarmed". A walk that gives no whole report is "cannot tell".
   */
  private async oneShotLastWalk(task: Task): Promise<void> {
    const runId = `${task.runId}-last`;
    const opts: FsrunRunOptions = { cwd: task.worktree, timeoutMs: this.lastWalkTimeoutMs, maxBuffer: 1 << 20 };
    let tamper: string[] | null = null;
    let hostGitArgs: string[];
    let reason: string | undefined;
    try {
      const { result } = await this.runOneShot(task, LAST_WALK_COMMAND, opts, task.worktree, runId, this.oneShotEnv(task, opts));
      tamper = result.tamper;
      hostGitArgs = result.exitCode === 0 ? (hostGitArgsFor(result.tamper, result.hostGitArgs) ?? []) : hostGitArgsUntold(undefined);
      if (result.exitCode !== 0) reason = `the last walk's \`${LAST_WALK_COMMAND}\` ended with ${result.signal ?? `status ${result.exitCode}`}: cannot tell`;
    } catch (e) {
      hostGitArgs = hostGitArgsUntold(undefined);
      reason = `fsrun made no last tamper walk: ${(e as Error).message}: cannot tell`;
    }
    this.finalTamper = tamper;
    this.addHostGitArgs(hostGitArgs);
    this.emit("task", task.runId, { event: "sandbox:dispose", tamper: tamper ?? [], ...hostGitArgsOf(hostGitArgs), ...(reason !== undefined ? { reason } : {}) });
  }

  async dispose(): Promise<void> {
    // once: a second call would walk again, a sandbox over a policy whose paths may be gone (fsrun
    // made a missing writablePaths entry again: a leftover directory of every run of the tests)
    if (this.disposed) return;
    this.disposed = true;
    await this.endRuns();
    const container = this.container;
    this.container = null;
    if (this.task === null) return;
    if (container === null) return this.state?.kind === "fsrun" && this.oneShotRuns > 0 ? this.oneShotLastWalk(this.task) : undefined;
    // the container's last tamper walk, after its processes are dead: what a process left by the
    // last command planted in the worktree after that command's walk (no run reports it)
    const walk = await container.remove();
    const tamper = walk?.tamper ?? null;
    this.finalTamper = tamper;
    // no last walk after a process may have run since the one that held (a leftover that filled
    // the disk the walk file is on, review25 C7): cannot tell, never the list of before
    const hostGitArgs = container.holds ? hostGitArgsFor(tamper ?? [], walk?.hostGitArgs) : hostGitArgsUntold(undefined);
    this.addHostGitArgs(hostGitArgs);
    const reason =
      tamper === null
        ? `fsrun delete made no last tamper walk (no --tamper-json, or the delete failed)${container.holds ? "" : " after a process may have run since the last walk: cannot tell"}`
        : undefined;
    this.emit("task", this.task.runId, {
      event: "sandbox:dispose",
      tamper: tamper ?? [],
      ...hostGitArgsOf(hostGitArgs),
      ...(reason !== undefined ? { reason } : {}),
    });
  }
}

/** The command of dispose()'s last walk in one-shot mode. */
const LAST_WALK_COMMAND = "true";

/** A run without fsrun's whole JSON: the tamper and hostGitArgs lines fsrun said on stderr, and
 * "cannot tell" without the second. */
function untold(stderr: string): { tamper: string[]; hostGitArgs: string[] } {
  return { tamper: tamperFromStderr(stderr), hostGitArgs: hostGitArgsUntold(hostGitArgsFromStderr(stderr)) };
}

/** fsrun's one JSON object, typed, and its set-up error if any; null when stdout is not that. */
export function parseResult(stdout: string, runId: string, aborted: boolean): { result: FsrunRunResult; error: string | null } | null {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (o === null || typeof o !== "object" || Array.isArray(o)) return null;
  if (typeof o.stdout !== "string" || typeof o.stderr !== "string") return null;
  if (typeof o.exitCode !== "number" && o.exitCode !== null) return null;
  const timedOut = o.timedOut === true;
  // the signal only from fsrun's `signal` field, never from the number; a timeout is fsrun's SIGKILL
  let signal = signalOf(o.signal);
  if (signal === null && timedOut) signal = "SIGKILL";
  const result: FsrunRunResult = {
    stdout: o.stdout,
    stderr: o.stderr,
    exitCode: signal !== null ? null : (o.exitCode as number | null),
    signal,
    timedOut,
    truncated: o.truncated === true,
    oomKilled: o.oomKilled === true,
    limits: o.limits !== null && typeof o.limits === "object" ? (o.limits as SandboxLimits) : {},
    limitsNotEnforced: Array.isArray(o.limitsNotEnforced) ? (o.limitsNotEnforced as LimitNotEnforced[]) : [],
    durationMs: typeof o.durationMs === "number" ? o.durationMs : 0,
    tamper: Array.isArray(o.tamper) ? o.tamper.filter((p): p is string => typeof p === "string") : [],
    ...hostGitArgsOf(o.hostGitArgs),
    ...gitDiscardedOf(o.discarded),
    backend: o.backend === "native" ? "native" : "fsrun",
    aborted,
    runId,
  };
  return { result, error: typeof o.error === "string" ? o.error : null };
}

/** fsrun's `hostGitArgs` as RunResult.hostGitArgs: absent when none. */
export function hostGitArgsOf(v: unknown): { hostGitArgs?: string[] } {
  const args = Array.isArray(v) ? v.filter((p): p is string => typeof p === "string") : [];
  return args.length > 0 ? { hostGitArgs: args } : {};
}

/** fsrun's `discarded` (what git left out) as RunResult.gitDiscarded: absent when none. */
function gitDiscardedOf(v: unknown): { gitDiscarded?: string[] } {
  const paths = Array.isArray(v) ? v.filter((p): p is string => typeof p === "string") : [];
  return paths.length > 0 ? { gitDiscarded: paths } : {};
}
