// FsrunBackend: Fusion's SandboxBackend over the fsrun binary. Each run() is one
// `fsrun sandbox --json --policy - ... -- /bin/sh -c COMMAND`; the policy goes in on stdin and the
// one JSON object fsrun prints comes back as the result. fsrun does the work (and the validation):
// this file builds arguments and the environment, and handles abort, errors and clean-up.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { constants as osConstants, tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";

import { FsrunAbortError, FsrunError, FsrunPolicyError, FsrunSetupError } from "./errors";
import type {
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

export interface FsrunBackendOptions {
  /** The fsrun binary: a path, or a name looked up in PATH (default "fsrun"). */
  fsrunPath?: string;
  policy: SandboxPolicy;
  /** Default: fsrun's (fail-hard). */
  failureMode?: FailureMode;
  /** A file fsrun appends JSON-lines audit events to (--audit-log). */
  auditLog?: string;
  /** Recorded in the audit log and the container ids (default: prepare's ctx.taskId). */
  taskId?: string;
  /** fsrun's state directory (--root); default fsrun's own (/run/fsrun as root). */
  stateRoot?: string;
  /** After an abort's SIGTERM, how long before SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** How long past timeoutMs the adapter waits for fsrun's own timeout before it kills fsrun (default 10000 ms). */
  timeoutGraceMs?: number;
}

/** What fsrun itself reads from its environment; PATH also reaches the command (fsrun passes it). */
const FSRUN_OWN_ENV = ["PATH", "HOME", "XDG_RUNTIME_DIR", "DBUS_SYSTEM_BUS_ADDRESS"];
const FSRUN_DEFAULT_MAX_BUFFER = 10 * 1024 * 1024;
const SMALL_COMMAND_TIMEOUT_MS = 30_000;
const STDERR_KEEP = 64 * 1024;
/** After fsrun exits, its helpers may hold stdout a moment (a killed fsrun's watchdog cleans up first). */
const CLOSE_WAIT_MS = 10_000;
const GONE_WAIT_MS = 5_000;

interface Prepared {
  worktree: string; /* real path: fsrun binds the worktree at its resolved path */
  taskId?: string;
  runBase: string;
}

interface Exited {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

interface RawRun extends Exited {
  aborted: boolean; /* ended through the abort signal while it was running */
  overflow: boolean; /* fsrun printed more than any result could hold */
  safetyTimeout: boolean; /* fsrun outlived its own --timeout-ms by timeoutGraceMs */
  durationMs: number;
}

interface InFlight {
  controller: AbortController;
  done: Promise<unknown>;
}

export class FsrunBackend implements SandboxBackend {
  readonly id = "fsrun";
  /** fsrun's warnings from prepare(), e.g. an allowedPaths entry that does not exist and is skipped. */
  readonly warnings: string[] = [];

  private readonly fsrunPath: string;
  private readonly policyJson: string;
  private readonly envAllowlist: ReadonlySet<string>;
  private readonly failureMode?: FailureMode;
  private readonly auditLog?: string;
  private readonly taskId?: string;
  private readonly stateRoot?: string;
  private readonly killGraceMs: number;
  private readonly timeoutGraceMs: number;
  private prepared: Prepared | null = null;
  private caps: SandboxCapabilities;
  private seq = 0;
  private disposed = false;
  private readonly inFlight = new Set<InFlight>();

  /** A backend from Fusion's settings object ({sandbox: {backend: "fsrun", policy, failureMode}}). */
  static fromSettings(
    settings: SandboxSettings,
    options: Omit<FsrunBackendOptions, "policy" | "failureMode"> = {},
  ): FsrunBackend {
    const sandbox = settings?.sandbox;
    if (sandbox === null || typeof sandbox !== "object")
      throw new FsrunPolicyError("settings: `sandbox` is missing or not an object", "sandbox");
    if (sandbox.backend !== "fsrun")
      throw new FsrunPolicyError(
        `settings: sandbox.backend is ${JSON.stringify(sandbox.backend)}, not "fsrun"`,
        "sandbox.backend",
      );
    return new FsrunBackend({ ...options, policy: sandbox.policy, failureMode: sandbox.failureMode });
  }

  constructor(options: FsrunBackendOptions) {
    if (options === null || typeof options !== "object")
      throw new FsrunError("FsrunBackend: options are required ({policy, ...})");
    const { policy } = options;
    if (policy === null || typeof policy !== "object" || Array.isArray(policy))
      throw new FsrunPolicyError("policy: expected an object (Fusion's SandboxPolicy)", null);
    let json: string;
    try {
      json = JSON.stringify(policy);
    } catch (e) {
      throw new FsrunPolicyError(`policy: not serialisable as JSON: ${(e as Error).message}`, null);
    }
    // A copy: later changes to the caller's object do not change this backend's sandbox.
    this.policyJson = json;
    const copy = JSON.parse(json) as SandboxPolicy;
    this.envAllowlist = new Set(
      Array.isArray(copy.envAllowlist) ? copy.envAllowlist.filter((n) => typeof n === "string") : [],
    );
    const path = options.fsrunPath ?? "fsrun";
    this.fsrunPath = path.includes("/") ? resolve(path) : path;
    this.failureMode = options.failureMode;
    this.auditLog = options.auditLog !== undefined ? resolve(options.auditLog) : undefined;
    this.taskId = options.taskId;
    this.stateRoot = options.stateRoot !== undefined ? resolve(options.stateRoot) : undefined;
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.timeoutGraceMs = options.timeoutGraceMs ?? 10_000;
    this.caps = this.capabilitiesFor(null, null, null);
  }

  capabilities(): SandboxCapabilities {
    return { ...this.caps };
  }

  /** Checks the binary, the worktree and (through fsrun itself) the policy. Throws an FsrunError. */
  async prepare(ctx: SandboxPrepareContext): Promise<void> {
    this.assertUsable("prepare");
    if (ctx === null || typeof ctx !== "object" || typeof ctx.worktreePath !== "string" || ctx.worktreePath === "")
      throw new FsrunError("prepare: ctx.worktreePath is required (the task's git worktree)");

    const version = await this.checkBinary();
    const features = await this.features();

    let worktree: string;
    try {
      if (!(await stat(ctx.worktreePath)).isDirectory()) throw new Error("not a directory");
      worktree = await realpath(ctx.worktreePath);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (e as Error).message;
      throw new FsrunError(`prepare: worktreePath \`${ctx.worktreePath}\`: ${why}`);
    }

    this.warnings.length = 0;
    await this.validatePolicy(worktree);

    this.caps = this.capabilitiesFor(version, features.landlockAbi, features.seccomp);
    const random = randomBytes(3).toString("hex");
    this.prepared = {
      worktree,
      taskId: this.taskId ?? ctx.taskId,
      runBase: ctx.runId !== undefined && ctx.runId !== "" ? `${ctx.runId}-${random}` : random,
    };
  }

  /** Runs a shell command in a fresh sandbox over the worktree; resolves with fsrun's result. */
  async run(command: string, opts: SandboxRunOptions = {}): Promise<SandboxRunResult> {
    this.assertUsable("run");
    const prepared = this.prepared;
    if (prepared === null) throw new FsrunError("run: call prepare() first");
    if (typeof command !== "string" || command.trim() === "")
      throw new FsrunError("run: command must be a non-empty shell command string");
    if (opts.signal?.aborted) throw new FsrunAbortError("run: aborted before the command started");
    const dir = await this.commandDir(prepared.worktree, opts.cwd);
    if (opts.signal?.aborted) throw new FsrunAbortError("run: aborted before the command started");
    this.assertUsable("run");

    const runId = `${prepared.runBase}-${++this.seq}`;
    // fsrun has no --cwd: the worktree is bound at its own path, so the shell can go there.
    const script = dir === null ? command : `cd ${shellQuote(dir)} || exit 1\n${command}`;
    const args = [...this.globalArgs(), "sandbox", "--json", "--policy", "-", "--worktree", prepared.worktree];
    if (prepared.taskId !== undefined) args.push("--task-id", prepared.taskId);
    args.push("--run-id", runId);
    if (opts.timeoutMs !== undefined) args.push("--timeout-ms", String(opts.timeoutMs));
    if (opts.maxBuffer !== undefined) args.push("--max-buffer", String(opts.maxBuffer));
    if (this.auditLog !== undefined) args.push("--audit-log", this.auditLog);
    if (this.failureMode !== undefined) args.push("--failure-mode", this.failureMode);
    args.push("--", "/bin/sh", "-c", script);

    const controller = new AbortController();
    const forward = () => controller.abort();
    opts.signal?.addEventListener("abort", forward, { once: true });
    const work = this.runSandbox(args, runId, prepared, opts, controller.signal);
    const entry: InFlight = { controller, done: work.catch(() => undefined) };
    this.inFlight.add(entry);
    try {
      return await work;
    } finally {
      opts.signal?.removeEventListener("abort", forward);
      this.inFlight.delete(entry);
    }
  }

  /** Ends the runs still going (as an abort does) and waits for them; the backend is unusable after. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const runs = [...this.inFlight];
    for (const r of runs) r.controller.abort();
    await Promise.all(runs.map((r) => r.done));
    this.prepared = null;
  }

  // --- run -------------------------------------------------------------------------------------

  private async runSandbox(
    args: string[],
    runId: string,
    prepared: Prepared,
    opts: SandboxRunOptions,
    signal: AbortSignal,
  ): Promise<SandboxRunResult> {
    const maxBuffer =
      typeof opts.maxBuffer === "number" && opts.maxBuffer >= 0 ? opts.maxBuffer : FSRUN_DEFAULT_MAX_BUFFER;
    // JSON escapes a byte into at most 6 characters; both streams, plus the rest of the object.
    const maxOut = 2 * 6 * maxBuffer + 1024 * 1024;
    const timeoutMs =
      typeof opts.timeoutMs === "number" && Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0
        ? opts.timeoutMs
        : undefined;
    const raw = await this.spawnSandbox(args, this.commandEnv(opts.env), maxOut, signal, timeoutMs);
    const what = `run ${runId}`;

    if (raw.overflow) throw new FsrunError(`${what}: fsrun printed more than ${maxOut} bytes; it was killed`, raw.stderr);
    const parsed = parseResult(raw.stdout, runId, raw.aborted);
    if (parsed !== null) {
      const { result, error } = parsed;
      if (raw.safetyTimeout) result.timedOut = true;
      if (error !== null)
        throw new FsrunSetupError(`${what}: fsrun could not set up the sandbox: ${error}`, result, raw.stderr);
      return result;
    }
    if (raw.aborted || raw.safetyTimeout) {
      // fsrun had to be killed: no result, and its watchdog removes the sandbox; wait for that.
      await this.waitSandboxGone(containerIdPrefix(prepared.taskId, runId));
      const signalNumber = raw.signal !== null ? osConstants.signals[raw.signal] ?? 0 : 0;
      return {
        stdout: "",
        stderr: "",
        exitCode: raw.safetyTimeout ? 124 : raw.code ?? 128 + signalNumber,
        signal: raw.signal,
        timedOut: raw.safetyTimeout,
        truncated: false,
        durationMs: raw.durationMs,
        backend: "fsrun",
        limits: {},
        aborted: raw.aborted,
        runId,
      };
    }
    const policyError = policyErrorFrom(raw.stderr, what);
    if (policyError !== null) throw policyError;
    const how = raw.signal !== null ? `was killed by ${raw.signal}` : `exited with status ${raw.code}`;
    const printed = raw.stdout.trim() === "" ? "" : ` (it printed: ${raw.stdout.trim().slice(0, 200)})`;
    throw new FsrunError(`${what}: fsrun sandbox ${how} without a result${printed}: ${firstLines(raw.stderr)}`, raw.stderr);
  }

  private spawnSandbox(
    args: string[],
    env: Record<string, string>,
    maxOut: number,
    signal: AbortSignal,
    timeoutMs: number | undefined,
  ): Promise<RawRun> {
    return new Promise((resolveRun, rejectRun) => {
      const started = Date.now();
      const child = spawn(this.fsrunPath, args, { env, cwd: "/", stdio: ["pipe", "pipe", "pipe"] });
      const chunks: Buffer[] = [];
      let outBytes = 0;
      let stderr = "";
      let aborted = false;
      let overflow = false;
      let safetyTimeout = false;
      let settled = false;
      let killTimer: NodeJS.Timeout | undefined;
      let safetyTimer: NodeJS.Timeout | undefined;
      let closeTimer: NodeJS.Timeout | undefined;

      const running = () => child.exitCode === null && child.signalCode === null;
      // SIGTERM first: fsrun forwards it into the sandbox, the command may clean up and fsrun
      // still prints its result. SIGKILL after the grace period: fsrun's watchdog then deletes
      // the sandbox.
      const terminate = () => {
        if (!running()) return;
        child.kill("SIGTERM");
        if (killTimer === undefined)
          killTimer = setTimeout(() => {
            if (running()) child.kill("SIGKILL");
          }, this.killGraceMs);
      };
      const onAbort = () => {
        if (!running()) return;
        aborted = true;
        terminate();
      };
      const finish = () => {
        settled = true;
        clearTimeout(killTimer);
        clearTimeout(safetyTimer);
        clearTimeout(closeTimer);
        signal.removeEventListener("abort", onAbort);
      };

      signal.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined)
        safetyTimer = setTimeout(() => {
          if (!running()) return;
          safetyTimeout = true;
          terminate();
        }, timeoutMs + this.timeoutGraceMs);

      child.stdout.on("data", (chunk) => {
        if (overflow) return;
        outBytes += chunk.length;
        if (outBytes > maxOut) {
          overflow = true;
          terminate();
          return;
        }
        chunks.push(chunk);
      });
      child.stderr.on("data", (chunk) => {
        if (stderr.length < STDERR_KEEP) stderr += chunk.toString("utf8");
      });
      child.stdin.on("error", () => {
        /* EPIPE: fsrun exited before reading the policy; its exit status and stderr say why */
      });
      child.on("error", (err) => {
        if (settled) return;
        finish();
        rejectRun(this.spawnError(err, "run"));
      });
      child.on("exit", () => {
        closeTimer = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, CLOSE_WAIT_MS);
      });
      child.on("close", (code, sig) => {
        if (settled) return;
        finish();
        resolveRun({
          code,
          signal: sig,
          stdout: Buffer.concat(chunks).toString("utf8"),
          stderr,
          aborted,
          overflow,
          safetyTimeout,
          durationMs: Date.now() - started,
        });
      });
      child.stdin.end(this.policyJson);
      if (signal.aborted) onAbort();
    });
  }

  /** After fsrun was killed: wait until its watchdog has deleted the container; delete it if not. */
  private async waitSandboxGone(prefix: string): Promise<void> {
    const deadline = Date.now() + GONE_WAIT_MS;
    for (;;) {
      let ids: string[];
      try {
        const r = await this.exec(["list", "--format", "json"]);
        if (r.code !== 0) return;
        const list = JSON.parse(r.stdout) as { id?: unknown }[];
        ids = list.map((c) => String(c.id)).filter((id) => id.startsWith(prefix));
      } catch {
        return;
      }
      if (ids.length === 0) return;
      if (Date.now() >= deadline) {
        for (const id of ids) await this.exec(["delete", "--force", id]).catch(() => undefined);
        return;
      }
      await sleep(100);
    }
  }

  /** The directory the command starts in: null for the worktree itself. */
  private async commandDir(worktree: string, cwd: string | undefined): Promise<string | null> {
    if (cwd === undefined) return null;
    let dir: string;
    try {
      dir = await realpath(resolve(worktree, cwd));
      if (!(await stat(dir)).isDirectory()) throw new Error("not a directory");
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (e as Error).message;
      throw new FsrunError(`run: cwd \`${cwd}\`: ${why}`);
    }
    if (dir === worktree) return null;
    if (!dir.startsWith(worktree.endsWith(sep) ? worktree : worktree + sep))
      throw new FsrunError(
        `run: cwd \`${cwd}\` is outside the worktree \`${worktree}\` (the sandbox holds only the worktree)`,
      );
    return dir;
  }

  /** fsrun's environment: what fsrun itself needs, and the allowlisted variables (fsrun passes only those on). */
  private commandEnv(extra: Record<string, string | undefined> | undefined): Record<string, string> {
    const env = fsrunOwnEnv();
    for (const name of this.envAllowlist) {
      const value = process.env[name];
      if (value !== undefined && name !== "HOME") env[name] = value;
    }
    for (const [name, value] of Object.entries(extra ?? {})) {
      // HOME inside is the sandbox's own (a tmpfs at fsrun's $HOME), whatever is asked.
      if (!this.envAllowlist.has(name) || name === "HOME") continue;
      if (value === undefined) delete env[name];
      else env[name] = String(value);
    }
    return env;
  }

  // --- prepare ---------------------------------------------------------------------------------

  private async checkBinary(): Promise<string> {
    const r = await this.exec(["--version"]);
    if (r.code !== 0)
      throw new FsrunError(
        `prepare: \`${this.fsrunPath} --version\` ${r.signal ? `was killed by ${r.signal}` : `exited with status ${r.code}`}: ${firstLines(r.stderr)}`,
        r.stderr,
      );
    const m = /^fsrun version (\S+)/m.exec(r.stdout);
    if (m === null)
      throw new FsrunError(
        `prepare: \`${this.fsrunPath}\` is not fsrun (--version printed ${JSON.stringify(r.stdout.slice(0, 80))})`,
      );
    return m[1];
  }

  private async features(): Promise<{ landlockAbi: number | null; seccomp: boolean | null }> {
    try {
      const r = await this.exec(["features"]);
      if (r.code !== 0) return { landlockAbi: null, seccomp: null };
      const f = JSON.parse(r.stdout) as {
        annotations?: Record<string, string>;
        linux?: { seccomp?: { enabled?: boolean } };
      };
      const abi = Number(f.annotations?.["run.fsrun.landlock"]);
      return {
        landlockAbi: Number.isInteger(abi) ? abi : null,
        seccomp: f.linux?.seccomp?.enabled === true,
      };
    } catch {
      return { landlockAbi: null, seccomp: null };
    }
  }

  /** fsrun validates the policy: `fsrun bundle` builds the very bundle `sandbox` would, into a temp dir. */
  private async validatePolicy(worktree: string): Promise<void> {
    const settings = {
      sandbox: {
        backend: "fsrun",
        policy: JSON.parse(this.policyJson) as unknown,
        ...(this.failureMode !== undefined ? { failureMode: this.failureMode } : {}),
      },
    };
    const tmp = await mkdtemp(join(tmpdir(), "fsrun-fusion-"));
    try {
      const r = await this.exec(
        ["bundle", "--policy", "-", "--worktree", worktree, "--out", join(tmp, "bundle")],
        JSON.stringify(settings),
      );
      for (const line of r.stderr.split("\n")) {
        const m = /^fsrun: warning: (?:sandbox: )?(.*)$/.exec(line);
        if (m !== null) this.warnings.push(m[1]);
      }
      if (r.code === 0) return;
      const policyError = policyErrorFrom(r.stderr, "prepare");
      if (policyError !== null) throw policyError;
      throw new FsrunError(
        `prepare: fsrun cannot build a sandbox over \`${worktree}\`: ${firstLines(r.stderr)}`,
        r.stderr,
      );
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  private capabilitiesFor(
    version: string | null,
    landlockAbi: number | null,
    seccomp: boolean | null,
  ): SandboxCapabilities {
    const root = process.getuid?.() === 0;
    return {
      prepared: version !== null,
      version,
      networkIsolation: true,
      tcpPortAllowlist: landlockAbi !== null && landlockAbi >= 4,
      pathRestrictions: true,
      envAllowlist: true,
      cpuTimeLimit: true,
      // cgroup limits: fsrun enforces them as root; as an ordinary user it says none were enforced
      memoryLimit: root,
      cpuCoresLimit: root,
      pidsLimit: root,
      timeouts: true,
      abort: true,
      seccomp: seccomp === true,
      auditLog: this.auditLog !== undefined,
      fallbackNative: true,
    };
  }

  // --- helpers ---------------------------------------------------------------------------------

  private globalArgs(): string[] {
    return this.stateRoot !== undefined ? ["--root", this.stateRoot] : [];
  }

  private assertUsable(what: string): void {
    if (this.disposed) throw new FsrunError(`${what}: the backend was disposed`);
  }

  private spawnError(err: NodeJS.ErrnoException, what: string): FsrunError {
    if (err.code === "ENOENT")
      return new FsrunError(`${what}: the fsrun binary \`${this.fsrunPath}\` was not found (fsrunPath)`);
    if (err.code === "EACCES")
      return new FsrunError(`${what}: the fsrun binary \`${this.fsrunPath}\` is not executable (fsrunPath)`);
    return new FsrunError(`${what}: cannot run \`${this.fsrunPath}\`: ${err.message}`);
  }

  /** A short fsrun command (--version, features, bundle, list, delete). */
  private exec(args: string[], input = ""): Promise<Exited> {
    return new Promise((resolveExec, rejectExec) => {
      const child = spawn(this.fsrunPath, [...this.globalArgs(), ...args], {
        env: fsrunOwnEnv(),
        cwd: "/",
        stdio: ["pipe", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      let stderr = "";
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL");
      }, SMALL_COMMAND_TIMEOUT_MS);
      child.stdout.on("data", (c) => out.push(c));
      child.stderr.on("data", (c) => {
        if (stderr.length < STDERR_KEEP) stderr += c.toString("utf8");
      });
      child.stdin.on("error", () => undefined);
      child.on("error", (err) => {
        clearTimeout(timer);
        rejectExec(this.spawnError(err, args[0] === "--version" ? "prepare" : args[0]));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        if (timedOut)
          rejectExec(new FsrunError(`\`fsrun ${args[0]}\` did not finish in ${SMALL_COMMAND_TIMEOUT_MS} ms`, stderr));
        else resolveExec({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr });
      });
      child.stdin.end(input);
    });
  }
}

function fsrunOwnEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of FSRUN_OWN_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** fsrun's one JSON object, typed, and its set-up error if any; null when stdout is not that. */
function parseResult(
  stdout: string,
  runId: string,
  aborted: boolean,
): { result: SandboxRunResult; error: string | null } | null {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (o === null || typeof o !== "object" || Array.isArray(o)) return null;
  const signal = typeof o.signal === "string" ? o.signal : null;
  // a command a signal ended has exitCode null and the signal's name; Fusion's exitCode stays the
  // shell's number for it (124 on timeout, 128+N for signal N)
  const exited = typeof o.exitCode === "number";
  if (typeof o.stdout !== "string" || typeof o.stderr !== "string" || (!exited && (o.exitCode !== null || signal === null)))
    return null;
  const exitCode =
    typeof o.exitCode === "number"
      ? o.exitCode
      : o.timedOut === true
        ? 124
        : 128 + (signal !== null ? osConstants.signals[signal] ?? 0 : 0);
  const limits = o.limits !== null && typeof o.limits === "object" ? (o.limits as SandboxLimits) : {};
  const result: SandboxRunResult = {
    stdout: o.stdout,
    stderr: o.stderr,
    exitCode,
    signal,
    timedOut: o.timedOut === true,
    truncated: o.truncated === true,
    durationMs: typeof o.durationMs === "number" ? o.durationMs : 0,
    backend: o.backend === "native" ? "native" : "fsrun",
    limits,
    aborted,
    runId,
  };
  return { result, error: typeof o.error === "string" ? o.error : null };
}

/** fsrun's policy complaints: "fsrun: policy (stdin): cpuLimit.maxCores: must be ...". */
function policyErrorFrom(stderr: string, what: string): FsrunPolicyError | null {
  const m = /^fsrun: policy(?: \(stdin\))?: (.*)$/m.exec(stderr);
  if (m === null) return null;
  const text = m[1].replace(/^sandbox\.policy\./, "").replace(/^sandbox\.(failureMode)/, "$1");
  const field = /^([A-Za-z][\w.[\]]*): /.exec(text);
  return new FsrunPolicyError(`${what}: fsrun rejected the sandbox policy: ${text}`, field ? field[1] : null, stderr);
}

/** The start of fsrun's container ids for a run (its make_container_id). */
export function containerIdPrefix(taskId: string | undefined, runId: string): string {
  let id = "sandbox";
  for (const part of [taskId, runId]) {
    if (part === undefined) continue;
    id += "-";
    // byte by byte, as fsrun does: a multi-byte character becomes several "_"
    for (const byte of Buffer.from(part, "utf8")) {
      if (id.length >= 200) break;
      const c = String.fromCharCode(byte);
      id += /^[A-Za-z0-9_.-]$/.test(c) ? c : "_";
    }
  }
  return id + "-";
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function firstLines(s: string): string {
  const text = s.trim();
  return text === "" ? "(nothing on stderr)" : text.split("\n").slice(0, 5).join("\n");
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
