// The task container: one container per task from `fsrun bundle` (create + start of a
// long-lived `sleep infinity` under fsrun's init), each command an `fsrun exec` into it,
// delete at dispose(). fsrun exec makes each command the leader of its own session and process
// group, and writes its pid (--pid-file): a timeout or an abort signals that group from the host,
// so it reaches the command's whole tree and no other command's. fsrun exec --status-json says how
// the command ended (exitCode or signal, oomKilled): fsrun's own exit status is the shell's 128+N.
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";

import { hostGitArgsUntold } from "./backend-base";
import type { Task } from "./backend-base";
import { taskContainerId } from "./container-id";
import { FsrunError, FsrunSetupError, withAfterCommand } from "./errors";
import { commandGroupInContainer, commandGroupWhileExec, pidNamespaceOf } from "./exec-group";
import type { FsrunCli } from "./fsrun-cli";
import { firstLines, fsrunOwnEnv, tamperFromStderr } from "./fsrun-cli";
import { maxBufferOf } from "./native";
import { privateDir } from "./private-dir";
import { runProc } from "./proc";
import type { FsrunRunOptions, FsrunRunResult, LimitNotEnforced, SandboxLimits } from "./types";

interface ExecStatus {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  oomKilled?: boolean;
  /** the git side of the exec (docs/sandbox.md, "Git in a task container") */
  tamper?: string[];
  hostGitArgs?: string[];
  discarded?: string[];
  /** false: nothing of any exec was left in the container before the exec's walk, which then holds */
  leftRunning?: boolean;
}

/** fsrun delete --tamper-json's last walk */
export interface FinalWalk {
  tamper: string[];
  hostGitArgs: string[];
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((p): p is string => typeof p === "string") : undefined;
}

/** fsrun exec --status-json's object; null when the file is empty, missing or not one (nothing known). */
async function readStatus(file: string): Promise<ExecStatus | null> {
  const text = await readFile(file, "utf8").catch(() => "");
  let v: Partial<ExecStatus>;
  try {
    v = JSON.parse(text) as Partial<ExecStatus>;
  } catch {
    return null;
  }
  const exitCode = typeof v.exitCode === "number" ? v.exitCode : null;
  const signal = typeof v.signal === "string" ? (v.signal as NodeJS.Signals) : null;
  if ((exitCode === null) === (signal === null)) return null;
  const tamper = strings(v.tamper);
  const hostGitArgs = strings(v.hostGitArgs);
  const discarded = strings(v.discarded);
  return {
    exitCode,
    signal,
    ...(typeof v.oomKilled === "boolean" ? { oomKilled: v.oomKilled } : {}),
    ...(tamper !== undefined ? { tamper } : {}),
    ...(hostGitArgs !== undefined ? { hostGitArgs } : {}),
    ...(discarded !== undefined ? { discarded } : {}),
    ...(typeof v.leftRunning === "boolean" ? { leftRunning: v.leftRunning } : {}),
  };
}

export class TaskContainer {
  private constructor(
    private readonly cli: FsrunCli,
    readonly id: string,
    private readonly dir: string,
    private readonly killGraceMs: number,
    private readonly limits: SandboxLimits,
    private readonly notEnforced: LimitNotEnforced[],
    /** this fsrun's exec has --status-json (an older one reports a signal only as 128+N) */
    private readonly statusJson: boolean,
    /** this fsrun's delete has --tamper-json (the last tamper walk, once the container is dead) */
    private readonly tamperJson: boolean,
    /** this fsrun's pause has --tamper-json and the backend freezes the container between runs */
    private readonly pauseWalk: boolean,
    /** this fsrun's exec has --kill-group (it ends what the command left in its group) */
    private readonly killGroup: boolean,
    /** config.json's process, read before the container ran anything: each exec's base */
    private baseProcess: Record<string, unknown> = {},
  ) {}

  /** execs started and not yet ended */
  private active = 0;
  /** execs started so far: an exec's number tells whether another started after it */
  private started = 0;
  /** frozen by `fsrun pause` after the last exec ended; resumed before the next */
  private paused = false;
  /**
   * Whether the last walk still holds (review22 F2): true before any command ran, and while the
   * container is frozen with the walk of its frozen state taken, or after an exec that found
   * nothing of any exec left before its walk (`leftRunning` false: that walk is final); false
   * otherwise once a command ran (no freezer, an fsrun whose pause has no --tamper-json, pauses
   * off, an exec in flight): a process a command left running (`setsid`) may plant after any walk.
   */
  holds = true;
  /** pause/resume and an exec's start, one at a time */
  private gate: Promise<unknown> = Promise.resolve();

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.gate.then(fn, fn);
    this.gate = next.catch(() => undefined);
    return next;
  }

  static async create(cli: FsrunCli, task: Task, killGraceMs: number, limits: SandboxLimits, notEnforced: LimitNotEnforced[], pauseBetweenRuns = true): Promise<TaskContainer> {
    const dir = await privateDir(task, "fsrun-fusion-task-");
    const id = taskContainerId(task.taskId, randomBytes(4).toString("hex"));
    let container: TaskContainer;
    try {
      const help = await cli.run(["exec", "--help"]);
      const deleteHelp = await cli.run(["delete", "--help"]);
      const pauseHelp = await cli.run(["pause", "--help"]);
      const tamperJson = (h: string) => /^\s*--tamper-json\b/m.test(h);
      const pauseWalk = pauseBetweenRuns && tamperJson(pauseHelp.stdout);
      container = new TaskContainer(cli, id, dir, killGraceMs, limits, notEnforced, /^\s*--status-json\b/m.test(help.stdout), tamperJson(deleteHelp.stdout), pauseWalk, /^\s*--kill-group\b/m.test(help.stdout));
    } catch (e) {
      // fsrun did not start: no container, but the directory is ours to remove
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
    try {
      const b = await cli.bundle(task.policy, task.worktree, join(dir, "bundle"), ["sleep", "infinity"]);
      if (b.code !== 0) throw new FsrunSetupError(`fsrun bundle: ${firstLines(b.stderr)}`, null, b.stderr);
      container.baseProcess = await readBaseProcess(join(dir, "bundle", "config.json"));
      await container.lifecycle(["create", "--bundle", join(dir, "bundle"), id]);
      await container.lifecycle(["start", id]);
    } catch (e) {
      await container.remove();
      throw e;
    }
    return container;
  }

  /** create/start: the container's init inherits fsrun's stdio, so it gets /dev/null and a file. */
  private async lifecycle(args: string[]): Promise<void> {
    const log = join(this.dir, `${args[0]}.log`);
    const fd = openSync(log, "w");
    const code = await new Promise<number | null>((resolveRun, rejectRun) => {
      const child = spawn(this.cli.path, [...this.cli.globalArgs(), ...args], { env: fsrunOwnEnv(), cwd: "/", stdio: ["ignore", "ignore", fd] });
      child.on("error", rejectRun);
      child.on("exit", (c) => resolveRun(c));
    }).finally(() => closeSync(fd));
    if (code !== 0) {
      const stderr = await readFile(log, "utf8").catch(() => "");
      throw new FsrunSetupError(`fsrun ${args[0]} ${this.id}: ${firstLines(stderr)}`, null, stderr);
    }
  }

  /**
   * One command (execOnce), then, when no other exec is in flight: when the exec left nothing
   * running (fsrun exec's `leftRunning` false, counted before its walk) and no exec started after
   * it, that walk is final and the list holds with no pause (nothing is there to freeze);
   * otherwise the container frozen and its frozen state walked (`fsrun pause --tamper-json`): what
   * a process the command left running planted after the exec's own walk is in this run's `tamper`
   * and `hostGitArgs`, and nothing plants more until the next exec resumes it, so the list holds
   * when the host's git runs between runs (review22 F2). Neither: "cannot tell".
   */
  async exec(
    command: string,
    opts: FsrunRunOptions,
    cwd: string,
    runId: string,
    env: Record<string, string>,
  ): Promise<{ result: FsrunRunResult }> {
    let number = 0;
    await this.serial(async () => {
      this.active++;
      number = ++this.started;
      this.holds = false;
      if (this.paused) await this.resume();
    });
    let out: { result: FsrunRunResult; leftRunning: boolean } | undefined;
    let failure: unknown;
    try {
      out = await this.execOnce(command, opts, cwd, runId, env);
    } catch (e) {
      failure = e;
    }
    this.active--;
    // the exec's own walk is final when nothing of any exec was left before it and no exec
    // started since (one that did may have left a process after that count)
    const final = out?.leftRunning === false && number === this.started;
    const walk = await this.serial(() => this.settle(final));
    if (out === undefined) throw afterFailedExec(failure, walk);
    if (walk !== null) mergeWalk(out.result, walk);
    return { result: out.result };
  }

  /**
   * When no exec is in flight: the last exec's own walk when it is final (`final`: fsrun exec's
   * `leftRunning` false and no exec started since), with no pause, since nothing is left that could
   * plant before the next exec; else the container frozen and walked, the walk or null. Without
   * that walk (no freezer, pauses off, a failed pause) the list does not hold ("cannot tell").
   */
  private async settle(final: boolean): Promise<FinalWalk | null> {
    if (this.active > 0 || this.paused) return null;
    if (final) {
      this.holds = true;
      return null;
    }
    const walk = this.pauseWalk ? await this.pauseAndWalk() : null;
    if (walk === null) this.holds = false;
    return walk;
  }

  /** `fsrun pause --tamper-json`: the frozen container's walk, or null (not paused, or no walk). */
  private async pauseAndWalk(): Promise<FinalWalk | null> {
    const file = join(this.dir, "paused-tamper.json");
    await rm(file, { force: true });
    const r = await this.cli.run(["pause", "--tamper-json", file, this.id]).catch(() => null);
    if (r === null || r.code !== 0) return null;
    this.paused = true;
    const walk = await readFinalTamper(file);
    await rm(file, { force: true });
    this.holds = walk !== null;
    return walk;
  }

  /** Thaws a container settle() froze; a container that is no longer paused is not an error here
   * (the exec or delete that follows says what is wrong with it). */
  private async resume(): Promise<void> {
    await this.cli.run(["resume", this.id]).catch(() => null);
    this.paused = false;
  }

  private async execOnce(
    command: string,
    opts: FsrunRunOptions,
    cwd: string,
    runId: string,
    env: Record<string, string>,
  ): Promise<{ result: FsrunRunResult; leftRunning: boolean }> {
    const pidFile = join(this.dir, `${runId.replace(/[^A-Za-z0-9_.-]/g, "_")}.pid`);
    const leader = (): number | null => {
      try {
        const pid = Number(readFileSync(pidFile, "utf8").trim());
        return Number.isInteger(pid) && pid > 1 ? pid : null;
      } catch {
        return null;
      }
    };
    const statusFile = join(this.dir, `${runId.replace(/[^A-Za-z0-9_.-]/g, "_")}.status.json`);
    const processFile = join(this.dir, `${runId.replace(/[^A-Za-z0-9_.-]/g, "_")}.process.json`);
    // the variables (tokens) and the command go in a 0600 file of the adapter's 0700 dir: any
    // local user reads an argument from /proc/PID/cmdline (review21 L7)
    await writeFile(processFile, JSON.stringify(execProcess(this.baseProcess, command, cwd, env)), { mode: 0o600, flag: "wx" });
    const args = [...this.cli.globalArgs(), "exec", "--pid-file", pidFile];
    if (this.statusJson) args.push("--status-json", statusFile);
    if (this.killGroup) args.push("--kill-group");
    args.push("--process", processFile, this.id);
    const r = await runProc({
      file: this.cli.path,
      args,
      env: fsrunOwnEnv(),
      cwd: "/",
      maxBuffer: maxBufferOf(opts),
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      killGraceMs: this.killGraceMs,
      // the command's group (its pid is the group's id) while it is still fsrun exec's child;
      // before the pid file, fsrun exec forwards (a SIGKILL ends fsrun exec, and the command, which
      // runs only once the pid file is written, never runs: docs/process-model.md, "The pid file
      // of a foreground exec"). Once fsrun exec reaped the command it ended the group itself, and
      // the number may be another's (review23 A4): nothing is sent then.
      killTree: (child, sig) => {
        const pid = leader();
        if (pid === null) child.kill(sig);
        else if (commandGroupWhileExec(pid, child.pid)) process.kill(-pid, sig);
      },
    });
    const started = leader() !== null;
    const status = this.statusJson ? await readStatus(statusFile) : null;
    // what the command left in its group (`cmd &`) fsrun exec ended with it (--kill-group; an
    // older fsrun leaves it until dispose); fsrun exec killed before it said how the command
    // ended (a command whose pid file appeared as it was being killed) left it to us
    if (r.signal !== null && status === null) await this.endOrphanedGroup(leader());
    await rm(pidFile, { force: true });
    await rm(statusFile, { force: true });
    await rm(processFile, { force: true });
    const stderr = r.stderr.toString("utf8");
    if (!started && !r.aborted && !r.timedOut) {
      // fsrun exec could not start the command: the container is gone or broken. Never a native
      // run, even under fallback-native: this host made the container, so what broke it is the
      // task's doing (its commands run in it: a pids limit held by a daemon, a .git pointing
      // nowhere), and running natively would let a command switch its sandbox off
      const why = `fsrun exec into ${this.id} failed: ${firstLines(stderr)}`;
      throw new FsrunSetupError(`run ${runId}: ${why}`, null, stderr);
    }
    let signal: NodeJS.Signals | null = r.signal;
    let exitCode: number | null = r.code;
    if (status !== null) {
      [exitCode, signal] = [status.exitCode, status.signal];
    } else {
      // no status (an fsrun without --status-json, or fsrun itself killed): fsrun exec reports a
      // signal as 128+N, so only a signal the adapter sent is reported as one
      const sent = r.timedOut ? "SIGKILL" : r.sentSignal;
      if (signal === null && sent !== null && r.code === 128 + osConstants.signals[sent]) signal = sent;
    }
    // as in one-shot mode: a timed-out command was ended by the adapter's kill
    if (r.timedOut) signal = "SIGKILL";
    return {
      result: {
        stdout: r.stdout.toString("utf8"),
        stderr,
        exitCode: signal !== null ? null : exitCode,
        signal,
        timedOut: r.timedOut,
        truncated: r.truncated,
        oomKilled: status?.oomKilled === true,
        limits: { ...this.limits, ...(opts.timeoutMs > 0 ? { timeoutMs: opts.timeoutMs } : {}) },
        limitsNotEnforced: [...this.notEnforced],
        durationMs: r.durationMs,
        // no status: fsrun exec was killed, and its tamper line (said before its git sync) is all
        tamper: status?.tamper ?? tamperFromStderr(stderr),
        // from the status only: the command writes to the same stderr. A command that started with
        // no status after it (fsrun exec killed) left what is not known to be disarmed
        ...(status?.hostGitArgs !== undefined && status.hostGitArgs.length > 0
          ? { hostGitArgs: status.hostGitArgs }
          : status === null && this.statusJson && started
            ? { hostGitArgs: hostGitArgsUntold(undefined) }
            : {}),
        ...(status?.discarded !== undefined && status.discarded.length > 0 ? { gitDiscarded: status.discarded } : {}),
        backend: "fsrun",
        aborted: r.aborted,
        runId,
      },
      // a killed fsrun exec, or an older one, says nothing: as if something were left
      leftRunning: status?.leftRunning !== false,
    };
  }

  /** SIGKILLs the group of a command whose fsrun exec died, if it is still the command's. */
  private async endOrphanedGroup(pid: number | null): Promise<void> {
    if (pid === null) return;
    const r = await this.cli.run(["state", this.id]).catch(() => null);
    let init: unknown;
    try {
      init = r !== null && r.code === 0 ? (JSON.parse(r.stdout) as { pid?: unknown }).pid : undefined;
    } catch {
      return;
    }
    if (typeof init !== "number" || !commandGroupInContainer(pid, pidNamespaceOf(init))) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* ESRCH: it ended since */
    }
  }

  /** null when an exec into the container works, else fsrun's reason. */
  async check(): Promise<string | null> {
    const r = await this.cli.run(["exec", this.id, "true"]);
    return r.code === 0 ? null : `fsrun exec: ${firstLines(r.stderr)}`;
  }

  /**
   * Deletes the container and its directory. The tamper list of fsrun delete's last walk (what a
   * process left by the last command planted after that command's walk: docs/sandbox.md, "Git in a
   * task container") and its hostGitArgs (empty from an fsrun that gives none), or null when there
   * was no walk (an fsrun without --tamper-json, a failed delete, a walk file it could not write).
   * `holds` after it: whether the runs' reports hold with that walk, or without it when nothing
   * could run since the last walk that held (review25 C7: "cannot tell" is never "disarmed").
   */
  async remove(): Promise<FinalWalk | null> {
    // running unfrozen since a walk that holds: nothing of any command was left after it
    const quiet = this.holds && !this.paused;
    // thawed first: a v1 freezer holds a SIGKILLed process until then; delete's walk comes after
    // every process is dead, so what one plants in between is still named
    if (this.paused) await this.serial(() => this.resume());
    const file = join(this.dir, "final-tamper.json");
    const args = ["delete", "--force", ...(this.tamperJson ? ["--tamper-json", file] : []), this.id];
    await this.cli.run(args).catch(() => undefined);
    const tamper = this.tamperJson ? await readFinalTamper(file) : null;
    this.holds = tamper !== null || quiet;
    await rm(this.dir, { recursive: true, force: true });
    return tamper;
  }
}

/** The `process` of the bundle's config.json (fsrun exec's base without --process: docs/fsrun-exec.8). */
async function readBaseProcess(configPath: string): Promise<Record<string, unknown>> {
  const config = JSON.parse(await readFile(configPath, "utf8")) as { process?: unknown };
  const p = config.process;
  if (p === null || typeof p !== "object" || Array.isArray(p)) throw new FsrunSetupError(`fsrun bundle: ${configPath} has no process object`, null);
  return p as Record<string, unknown>;
}

/** What `fsrun exec --cwd CWD --env K=V... ID /bin/sh -c COMMAND` runs, as a process object. */
export function execProcess(base: Record<string, unknown>, command: string, cwd: string, env: Record<string, string>): Record<string, unknown> {
  const vars = new Map<string, string>();
  for (const entry of Array.isArray(base.env) ? (base.env as unknown[]) : []) {
    if (typeof entry !== "string") continue;
    const eq = entry.indexOf("=");
    if (eq > 0) vars.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  for (const [name, value] of Object.entries(env)) vars.set(name, value);
  // the container's terminal is its init's, as fsrun exec does without --process
  return { ...base, terminal: false, args: ["/bin/sh", "-c", command], cwd, env: [...vars].map(([k, v]) => `${k}=${v}`) };
}

/** fsrun delete --tamper-json's walk; null when the file is not `{"walked":true,"tamper":[...],...}`. */
async function readFinalTamper(file: string): Promise<FinalWalk | null> {
  try {
    const o = JSON.parse(await readFile(file, "utf8")) as { walked?: unknown; tamper?: unknown; hostGitArgs?: unknown };
    const tamper = strings(o.tamper);
    return o.walked === true && tamper !== undefined ? { tamper, hostGitArgs: strings(o.hostGitArgs) ?? [] } : null;
  } catch {
    return null;
  }
}

/**
 * The error of an exec that failed after the resume (review25 C4: a leftover that keeps the pids
 * limit full and plants once thawed): what it planted is in the frozen container's walk, which
 * goes with the error to the backend's list (the walk holds); with no walk, "cannot tell". An
 * error that is not the adapter's own is "cannot tell" in the backend's episode.
 */
function afterFailedExec(failure: unknown, walk: FinalWalk | null): unknown {
  if (!(failure instanceof FsrunError)) return failure;
  if (walk !== null) return withAfterCommand(failure, walk.tamper, walk.hostGitArgs);
  return withAfterCommand(failure, tamperFromStderr(failure.stderr), hostGitArgsUntold(undefined));
}

/** A frozen container's walk added to the run that ended before it: its entries and options, each once. */
function mergeWalk(r: FsrunRunResult, walk: FinalWalk): void {
  r.tamper = [...new Set([...r.tamper, ...walk.tamper])];
  const args = [...(r.hostGitArgs ?? [])];
  for (let i = 0; i + 1 < walk.hostGitArgs.length; i += 2) {
    let known = false;
    for (let j = 1; j < args.length; j += 2) known ||= args[j] === walk.hostGitArgs[i + 1];
    if (!known) args.push(walk.hostGitArgs[i], walk.hostGitArgs[i + 1]);
  }
  if (args.length > 0) r.hostGitArgs = args;
}
