// What NativeBackend and FsrunBackend share: the task's ids, the audit hook, input checks, the
// runs in flight (abort(), dispose()).
import { realpathSync, statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

import { deliver, policyHash, policySummary } from "./audit";
import type { SandboxAuditEvent, SandboxAuditHook } from "./audit";
import { FsrunAbortError, FsrunError, SandboxSettingsError } from "./errors";
import type { SandboxBackendId, SandboxPrepareContext } from "./fusion-types";
import type { FsrunPolicy, FsrunRunOptions, FsrunRunResult } from "./types";

export interface Task {
  taskId: string;
  runId: string;
  worktree: string;
  policy: FsrunPolicy;
}

export type AuditFields = Omit<
  SandboxAuditEvent,
  "scope" | "taskId" | "runId" | "backend" | "backendName" | "mode" | "policyHash" | "policySummary" | "time"
>;

/** fsrun's "cannot disarm" option (docs/sandbox.md, "Disarming the host's git"). */
export const HOST_GIT_CANNOT_DISARM = "core.abbrev=fsrun-cannot-disarm";

/**
 * What `hostGitEnv` sets in the host git's environment whatever Fusion's own holds: Python 3.11's
 * "no cwd on sys.path", and, empty (each reader takes an empty value as unset), the variables
 * through which the interpreters a driver runs take code or options at start from a name Fusion's
 * environment chose, resolved from git's cwd, the worktree's top (review26 D5: `NODE_OPTIONS=
 * --require ts-node/register` loads the worktree's `node_modules/ts-node`, `BASH_ENV=./x.sh`).
 */
export const HOST_GIT_ENV: Readonly<Record<string, string>> = Object.freeze({
  PYTHONSAFEPATH: "1",
  NODE_OPTIONS: "",
  BASH_ENV: "",
  ENV: "",
  PYTHONSTARTUP: "",
  RUBYOPT: "",
  PERL5OPT: "",
  LUA_INIT: "",
});

/** Search paths of Fusion's environment and the separators of their entries: an empty, `.` or
 * relative entry is taken from the cwd (the worktree's top for the host's git and its drivers;
 * `PATH=:/usr/bin` has `git` itself and a driver's bare command found there), and an entry at or
 * below the worktree or a writablePaths entry holds what the run wrote (review27 E6: `git` planted
 * in a writable `~/.npm-global/bin`), so `hostGitEnv` keeps only their absolute entries outside
 * those trees. GIT_EXEC_PATH: git puts it first on the PATH of everything it runs; GCONV_PATH: the
 * iconv modules git loads for a `working-tree-encoding` attribute; LD_AUDIT: libraries the loader
 * runs in every process. */
const HOST_GIT_SEARCH_PATHS: Readonly<Record<string, RegExp>> = Object.freeze({
  PATH: /:/,
  NODE_PATH: /:/,
  PYTHONPATH: /:/,
  RUBYLIB: /:/,
  PERL5LIB: /:/,
  PERLLIB: /:/,
  GEM_PATH: /:/,
  LD_LIBRARY_PATH: /[:;]/,
  LD_PRELOAD: /[: ]/,
  LD_AUDIT: /:/,
  GCONV_PATH: /:/,
  GIT_EXEC_PATH: /:/,
});

/** Libraries the loader takes by a bare name too, searched in its own directories (not the cwd). */
const HOST_GIT_LIBRARY_LISTS = new Set(["LD_PRELOAD", "LD_AUDIT"]);

/** Directories whose one value names where an interpreter takes code (its standard library, the
 * user's site-packages and their .pth files, cached .pyc, gems): kept whole or emptied (an empty
 * value is unset for each reader). */
const HOST_GIT_CODE_DIRS: readonly string[] = ["PYTHONHOME", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX", "GEM_HOME"];

/** PATH when none of Fusion's entries is kept: glibc's default search path (an empty PATH would be the cwd). */
const HOST_GIT_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** The real path of p, or that of its nearest existing ancestor with the rest of p after it: a
 * directory the run may still make is judged by where it would be made. p as spelled, not
 * normalised first, and realpath(3) (node's own realpathSync resolves `..` by spelling):
 * `lnk/../x` is where the kernel (and fsrun's bind) takes it, beside the link's target, not
 * beside `lnk` (review28 F3). */
function nearestRealPath(p: string): string {
  const rest: string[] = [];
  for (let at = isAbsolute(p) ? p : `${process.cwd()}/${p}`; ; at = dirname(at)) {
    try {
      return join(realpathSync.native(at), ...rest.reverse());
    } catch {
      if (at === dirname(at)) return resolve(p);
      rest.push(basename(at));
    }
  }
}

function identityOf(p: string): string | null {
  try {
    const st = statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** Whether p is at or under dir (both absolute and normalised). */
function atOrUnder(p: string, dir: string): boolean {
  return p === dir || dir === "/" || p.startsWith(`${dir}/`);
}

/**
 * A test of whether an absolute path is the run's: at or below one of `trees` (the worktree, the
 * policy's writablePaths) by its spelling, by real path (a link on the way counts) or by identity
 * (an ancestor that is one of the trees under another name: a bind mount), or the directory that
 * holds a writable entry itself (`~/bin/git` named writable makes `~/bin` the run's for PATH).
 */
function runsTrees(worktree: string | undefined, writable: readonly string[]): (p: string) => boolean {
  const spelled = [...(worktree !== undefined ? [worktree] : []), ...writable];
  const trees = spelled.map((t) => resolve(t));
  const reals = spelled.map(nearestRealPath);
  const ids = new Set(trees.map(identityOf).filter((id) => id !== null));
  const parents = new Set(writable.flatMap((w) => [dirname(resolve(w)), dirname(nearestRealPath(w))]));
  return (p: string) => {
    const real = nearestRealPath(p);
    if (trees.some((t) => atOrUnder(resolve(p), t)) || reals.some((t) => atOrUnder(real, t))) return true;
    if (parents.has(resolve(p)) || parents.has(real)) return true;
    for (let up = real; ids.size > 0; up = dirname(up)) {
      const id = identityOf(up);
      if (id !== null && ids.has(id)) return true;
      if (up === dirname(up)) return false;
    }
    return false;
  };
}

/**
 * The variables to set over `env` (Fusion's environment for the host's git) so that neither git
 * nor the drivers it runs load code from the worktree by a relative name (review26 D5) or from a
 * tree the run could write (review27 E6): HOST_GIT_ENV; each search path of HOST_GIT_SEARCH_PATHS
 * that `env` sets with its empty, relative entries and those of the run's trees (runsTrees: the
 * worktree, `writablePaths`) left out (LD_PRELOAD and LD_AUDIT keep a bare library name: the
 * loader searches it in its own directories); each of HOST_GIT_CODE_DIRS emptied when it is
 * relative or the run's.
 */
export function hostGitEnvFor(env: NodeJS.ProcessEnv, worktree?: string, writablePaths: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = { ...HOST_GIT_ENV };
  const theRuns = runsTrees(worktree, writablePaths);
  const kept = (e: string) => isAbsolute(e) && !theRuns(e);
  for (const [name, separator] of Object.entries(HOST_GIT_SEARCH_PATHS)) {
    const value = env[name];
    if (value === undefined) continue;
    const bareName = (e: string) => HOST_GIT_LIBRARY_LISTS.has(name) && e !== "" && !e.includes("/");
    const entries = value.split(separator).filter((e) => bareName(e) || kept(e));
    out[name] = entries.join(name === "LD_PRELOAD" ? " " : ":");
    if (name === "PATH" && entries.length === 0) out[name] = HOST_GIT_DEFAULT_PATH;
  }
  for (const name of HOST_GIT_CODE_DIRS) {
    const value = env[name];
    if (value !== undefined) out[name] = value.split(":").every(kept) ? value : "";
  }
  return out;
}

/**
 * The line docs/sandbox.md ("Git on the host after a run") says the host's git needs in that
 * worktree whatever the runs reported: no fsmonitor, no hooks, no submodule recursion or summary.
 * Every git the host runs there: `git ...hostGitArgs ...HOST_GIT_SAFE_ARGS COMMAND`, and
 * `--ignore-submodules=all` for status and diff, `--no-ext-diff --no-textconv` for diff, log, show.
 */
export const HOST_GIT_SAFE_ARGS: readonly string[] = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "submodule.recurse=false",
  "-c",
  "diff.ignoreSubmodules=all",
  "-c",
  "status.submoduleSummary=false",
];

/** The tamper entry for a tamper line of fsrun's on stderr that does not parse whole (review22
 * F11): what the run made is not known, so nothing disarms it. */
export const TAMPER_UNREADABLE = "unread:fsrun's tamper line";

/** Whether argv words `args` (hostGitArgs) hold fsrun's "cannot disarm" option. */
export function cannotDisarm(args: readonly string[]): boolean {
  for (let i = 0; i + 1 < args.length; i += 2) if (args[i] === "-c" && args[i + 1] === HOST_GIT_CANNOT_DISARM) return true;
  return false;
}

/**
 * A run's hostGitArgs as they must be for its `tamper`: with fsrun's "cannot disarm" option first
 * when `tamper` names a config fsrun could not read whole (`config:unread:...`: what it sets is not
 * known, so no option disarms it) or TAMPER_UNREADABLE, and `args` lack it (an fsrun older than that rule gave only
 * core.hooksPath and core.fsmonitor; a killed run may have said no list). "Cannot tell" is never
 * "disarmed". `args` as they are otherwise.
 */
export function hostGitArgsFor(tamper: readonly string[], args: string[] | undefined): string[] | undefined {
  if (!tamper.some((e) => e.startsWith("config:unread:") || e === TAMPER_UNREADABLE) || cannotDisarm(args ?? [])) return args;
  return ["-c", HOST_GIT_CANNOT_DISARM, ...(args ?? [])];
}

/**
 * The hostGitArgs of a run whose fsrun did not give its whole report (one-shot: the adapter had to
 * kill fsrun; a task container: its exec left no status): fsrun's list when it said one (fsrun
 * says it whole on a line of its own, after the tamper line, before its git sync), else "cannot
 * tell", which is never "disarmed": the cannot-disarm option. A fsrun killed while it read the
 * run's configs again has said no list, perhaps no tamper line either (review22 F7).
 */
export function hostGitArgsUntold(said: string[] | undefined): string[] {
  return said !== undefined && said.length > 0 ? said : ["-c", HOST_GIT_CANNOT_DISARM];
}

/** Checks prepare()'s ctx; the policy is checked by the caller. */
export async function checkContext(ctx: SandboxPrepareContext): Promise<void> {
  if (ctx === null || typeof ctx !== "object") throw new SandboxSettingsError("ctx", "expected {taskId, runId, worktreePath, policy}");
  for (const key of ["taskId", "runId"] as const)
    if (typeof ctx[key] !== "string" || ctx[key] === "") throw new SandboxSettingsError(`ctx.${key}`, "expected a non-empty string");
  const w = ctx.worktreePath;
  if (typeof w !== "string" || !isAbsolute(w)) throw new SandboxSettingsError("ctx.worktreePath", `expected an absolute path, got ${JSON.stringify(w)}`);
  const isDir = await stat(w).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new SandboxSettingsError("ctx.worktreePath", `\`${w}\` is not a directory`);
}

export abstract class BackendBase {
  abstract readonly id: SandboxBackendId;
  /** What "custom" stands for in the audit events. */
  abstract readonly name: string;
  protected task: Task | null = null;
  protected disposed = false;
  private seq = 0;
  private readonly disarm: string[] = [];
  private readonly inFlight = new Set<AbortController>();

  constructor(
    protected readonly onAudit: SandboxAuditHook | undefined,
    protected readonly killGraceMs: number,
  ) {}

  protected abstract mode(): SandboxAuditEvent["mode"];

  /**
   * The `-c key=value` options (argv words) of every run of this task so far and of dispose()'s last
   * walk, each option once: prepend them to every git the host runs in this worktree (`git
   * ...hostGitArgs status`, `add`, `commit`, `diff`, `merge`) until a person has reviewed what the
   * runs changed (docs/sandbox.md, "Disarming the host's git"). Empty when no run reported anything
   * they cover; no substitute for that review: a run's `tamper` without options (an older fsrun, a
   * killed exec) still means "do not run the host's git unreviewed".
   */
  get hostGitArgs(): string[] {
    if (this.reportHolds() || cannotDisarm(this.disarm)) return [...this.disarm];
    return ["-c", HOST_GIT_CANNOT_DISARM, ...this.disarm];
  }

  /**
   * Whether the runs' reports still hold now (review22 F2): false while a run of this task is in
   * flight (what it plants after another run's walk is in no report yet: one-shot and task
   * container alike), and in a task container after a command that left no walk of its frozen
   * state (a process it left running may plant at any time). Then `hostGitArgs` starts with the
   * cannot-disarm option and `hostGitDisarmed` is false: "cannot tell".
   */
  protected reportHolds(): boolean {
    return this.inFlight.size === 0;
  }

  /**
   * `["--git-dir=<top>/.git", "--work-tree=<top>"]` (the task's worktree, real path): put them
   * before every other word of every git the host runs in this worktree, and run it with cwd = the
   * top. Git then discovers nothing: a directory a run made into a git dir of its own (`git init
   * --bare .` with core.bare=false and core.worktree, no `.git` entry that fsrun's walk looks at) is
   * never taken for the repository, whatever git's cwd (review27 E4). Throws before prepare().
   */
  get hostGitWorktreeArgs(): string[] {
    if (this.task === null) throw new FsrunError("hostGitWorktreeArgs: the backend has no worktree before prepare()");
    return [`--git-dir=${join(this.task.worktree, ".git")}`, `--work-tree=${this.task.worktree}`];
  }

  /**
   * The environment to add over this process's to every git the host runs in this worktree, with
   * `hostGitArgs` (`{ ...process.env, ...backend.hostGitEnv }`): `PYTHONSAFEPATH=1` keeps the
   * worktree's top off a Python driver's `sys.path` (Python 3.11+), so what a run planted there
   * (`nbstripout.pyc`, an `argparse.py` that `-m json.tool` imports) is never imported by the
   * user's drivers, reported or not (docs/sandbox.md, review22 F8); `NODE_OPTIONS`, `BASH_ENV` and
   * the like empty, and `PATH`, `NODE_PATH`, `PYTHONPATH`... without their empty, relative and
   * worktree entries, so that neither git itself nor a driver loads code a run planted by a
   * relative name (review26 D5). `hostGitEnvFor(env)` for an environment other than this process's.
   */
  get hostGitEnv(): Record<string, string> {
    return this.hostGitEnvFor(process.env);
  }

  /** `hostGitEnv` over `env`, Fusion's environment for the host's git: with the task's worktree
   * and its policy's writablePaths as the run's trees. */
  hostGitEnvFor(env: NodeJS.ProcessEnv): Record<string, string> {
    return hostGitEnvFor(env, this.task?.worktree, this.task?.policy.writablePaths ?? []);
  }

  /**
   * False when a run set what no `-c` option disarms (a config key whose subsection holds `=`,
   * core.gitProxy, a config fsrun could not read whole: a `config:unread:` entry, or an included
   * config the run made over 1 MiB, 65 files, an unknown `~user/`; a key there off fsrun's inert
   * list, such as trailer.<t>.command or url.<u>.insteadOf), or when the adapter cannot tell (it
   * had to kill fsrun before fsrun said its list; an exec left no status; a run in flight; a task
   * container not frozen since its last command: reportHolds): `hostGitArgs` then holds fsrun's
   * `core.abbrev=fsrun-cannot-disarm`, which makes every git command fail. Fusion must not run the
   * host's git in that worktree then (until a person has reviewed the change, or, for a run in
   * flight, until no run is).
   */
  get hostGitDisarmed(): boolean {
    return !cannotDisarm(this.hostGitArgs);
  }

  protected addHostGitArgs(args: string[] | undefined): void {
    for (let i = 0; i + 1 < (args ?? []).length; i += 2) {
      const [flag, option] = [args![i], args![i + 1]];
      if (flag !== "-c") continue;
      let known = false;
      for (let j = 1; j < this.disarm.length; j += 2) known ||= this.disarm[j] === option;
      if (!known) this.disarm.push(flag, option);
    }
  }

  protected emit(scope: SandboxAuditEvent["scope"], runId: string, fields: AuditFields): void {
    const task = this.task;
    const policy = task?.policy ?? { allowNetwork: false, allowedPaths: [] };
    deliver(this.onAudit, {
      taskId: task?.taskId ?? "",
      runId,
      backend: this.id,
      backendName: this.name,
      mode: this.mode(),
      policyHash: policyHash(policy),
      policySummary: policySummary(policy),
      time: new Date().toISOString(),
      ...fields,
      scope,
    });
  }

  protected assertUsable(what: string): void {
    if (this.disposed) throw new FsrunError(`${what}: the backend was disposed`);
  }

  /** The prepared task, the run's id, and the checked options; throws before anything runs. */
  protected startRun(command: string, opts: FsrunRunOptions): { task: Task; runId: string } {
    this.assertUsable("run");
    const task = this.task;
    if (task === null) throw new FsrunError("run: call prepare() first");
    if (typeof command !== "string" || command.trim() === "") throw new SandboxSettingsError("command", "expected a non-empty shell command");
    if (opts === null || typeof opts !== "object") throw new SandboxSettingsError("opts", "expected {cwd, timeoutMs, maxBuffer}");
    if (typeof opts.cwd !== "string" || opts.cwd === "") throw new SandboxSettingsError("opts.cwd", "expected a directory");
    for (const key of ["timeoutMs", "maxBuffer"] as const)
      if (typeof opts[key] !== "number" || Number.isNaN(opts[key])) throw new SandboxSettingsError(`opts.${key}`, "expected a number");
    if (opts.env !== undefined && (opts.env === null || typeof opts.env !== "object"))
      throw new SandboxSettingsError("opts.env", "expected an object of variables");
    if (opts.signal?.aborted) throw new FsrunAbortError("run: aborted before the command started");
    return { task, runId: `${task.runId}-${++this.seq}` };
  }

  /** Runs fn with a signal that opts.signal, abort() and dispose() all end. */
  protected async tracked<T>(opts: FsrunRunOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const forward = () => controller.abort();
    opts.signal?.addEventListener("abort", forward, { once: true });
    this.inFlight.add(controller);
    try {
      return await fn(controller.signal);
    } finally {
      opts.signal?.removeEventListener("abort", forward);
      this.inFlight.delete(controller);
    }
  }

  /** One run's audit episode: sandbox:prepare, then exactly one outcome (a throw is sandbox:failure). */
  protected episode(
    runId: string,
    opts: FsrunRunOptions,
    fn: (signal: AbortSignal) => Promise<{ result: FsrunRunResult; fsrunKilled?: boolean }>,
  ): Promise<FsrunRunResult> {
    return this.tracked(opts, async (signal) => {
      this.emit("command", runId, { event: "sandbox:prepare" });
      let out: { result: FsrunRunResult; fsrunKilled?: boolean };
      try {
        out = await fn(signal);
      } catch (e) {
        const after = this.afterFailure(e);
        this.emit("command", runId, { event: "sandbox:failure", reason: (e as Error).message, ...after });
        throw e;
      }
      this.outcome(runId, out.result, out.fsrunKilled === true);
      return out.result;
    });
  }

  /**
   * A run that rejected (review25 C1, C4): once its command may have run, no way of ending leaves
   * the list of before "disarmed". What fsrun said of the run is added (`afterCommand`, through
   * hostGitArgsFor), and an error the adapter did not expect (its own bug, an fs error) is "cannot
   * tell". An FsrunError without `afterCommand` was thrown before anything ran: nothing is added.
   * Returns the fields for the failure event.
   */
  private afterFailure(e: unknown): { tamper?: string[]; hostGitArgs?: string[] } {
    const after = e instanceof FsrunError ? e.afterCommand : { tamper: [], hostGitArgs: ["-c", HOST_GIT_CANNOT_DISARM] };
    if (after === undefined) return {};
    const hostGitArgs = hostGitArgsFor(after.tamper, after.hostGitArgs) ?? [];
    this.addHostGitArgs(hostGitArgs);
    return { tamper: after.tamper, hostGitArgs };
  }

  /** Ends every run in flight, as an abort of its signal would (Fusion's watchdog). */
  abort(): void {
    for (const c of this.inFlight) c.abort();
  }

  protected async endRuns(): Promise<void> {
    this.abort();
    const deadline = Date.now() + 60_000;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  protected outcome(runId: string, r: FsrunRunResult, fsrunKilled = false): void {
    const hostGitArgs = hostGitArgsFor(r.tamper, r.hostGitArgs);
    if (hostGitArgs !== undefined) r.hostGitArgs = hostGitArgs; // the result and the event alike
    this.addHostGitArgs(r.hostGitArgs);
    const why = r.aborted ? (fsrunKilled ? "aborted; fsrun did not end on SIGTERM and was killed" : "aborted") : undefined;
    this.emit("command", runId, {
      event: r.backend === "native" && r.fallbackReason !== undefined ? "sandbox:fallback" : "sandbox:run",
      ...(r.fallbackReason !== undefined ? { reason: r.fallbackReason } : why !== undefined ? { reason: why } : {}),
      exitCode: r.exitCode,
      signal: r.signal,
      timedOut: r.timedOut,
      aborted: r.aborted,
      fsrunKilled,
      oomKilled: r.oomKilled,
      limitsNotEnforced: r.limitsNotEnforced,
      tamper: r.tamper,
      ...(r.hostGitArgs !== undefined ? { hostGitArgs: r.hostGitArgs } : {}),
      ...(r.gitDiscarded !== undefined ? { gitDiscarded: r.gitDiscarded } : {}),
      durationMs: r.durationMs,
    });
  }
}

/** A cwd that is a directory, or SandboxSettingsError("opts.cwd"). */
export async function checkCwd(cwd: string): Promise<void> {
  const isDir = await stat(cwd).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new SandboxSettingsError("opts.cwd", `\`${cwd}\` is not a directory`);
}
