// The short fsrun commands the backend uses: --version, features, bundle, the limits probe,
// create/start/delete/list. Each returns what fsrun said; the backend decides what it means.
import { access, constants as fsConstants } from "node:fs/promises";
import { delimiter, join } from "node:path";

import { HOST_GIT_CANNOT_DISARM, TAMPER_UNREADABLE } from "./backend-base";
import { FsrunPolicyError } from "./errors";
import type { UnavailableReason } from "./errors";
import { runProc } from "./proc";
import type { FsrunPolicy, LimitNotEnforced, SandboxFailureMode, SandboxLimits } from "./types";

/**
 * What fsrun itself reads from its environment, passed with the adapter's own values, never a
 * command's: its state root, the tools it runs, the buses its systemd cgroup driver asks, where
 * the user's global and the system's git config are (the `config:global:` tamper watch, the
 * drivers they name), the slirp4netns it runs,
 * tiny-init off, the cache of compiled seccomp programs off. With FSRUN_ENV_UNSET, every name src/ reads (harness.bats compares them).
 */
export const FSRUN_OWN_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "XDG_RUNTIME_DIR",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "DBUS_SESSION_BUS_ADDRESS",
  "XDG_CONFIG_HOME",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "FSRUN_SLIRP4NETNS",
  "FSRUN_NO_TINY",
  "FSRUN_NO_SECCOMP_CACHE",
];
/** What fsrun also reads but no fsrun the adapter starts gets: systemd's socket-activation count is
 * the adapter's process's (fsrun inherits none of those fds), podman's rootless marker is podman's. */
export const FSRUN_ENV_UNSET: readonly string[] = ["LISTEN_FDS", "_CONTAINERS_ROOTLESS_UID"];
const SMALL_COMMAND_TIMEOUT_MS = 60_000;

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function fsrunOwnEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of FSRUN_OWN_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** How much of one stderr line an error's one-line reason keeps: fsrun's lists of the run's own
 * names (the left-out line) can be megabytes long. */
const FIRST_LINE_MAX = 2000;

export function firstLines(s: string): string {
  const text = s.trim();
  if (text === "") return "(nothing on stderr)";
  const cut = (line: string) => (line.length <= FIRST_LINE_MAX ? line : `${line.slice(0, FIRST_LINE_MAX)}... (${line.length - FIRST_LINE_MAX} characters more)`);
  return text.split("\n").slice(0, 3).map(cut).join("; ");
}

/**
 * The tamper list of fsrun's own tamper lines on stderr (`fsrun: warning: sandbox: ...; tamper:
 * ["nested/.git"]`, `exec:` for fsrun exec), each entry once: fsrun writes that line before its git
 * sync, so a fsrun the adapter had to end during the sync has said it (review19 #15). In a task
 * container the command's stderr is on the same stream and could add a line of its own: an entry
 * more to review, never one less. So fsrun's line is also found after a partial line of the
 * command's (a process it left writing when fsrun exec said it), not only at a line's start. The
 * list is what follows the line's first `; tamper: ` (fsrun's text before it names no entry),
 * parsed whole: an entry that holds `; tamper: [` stays an entry (review22 F11); a line that does
 * not parse whole gives TAMPER_UNREADABLE ("cannot tell").
 */
export function tamperFromStderr(stderr: string): string[] {
  return [...new Set(listsOnStderr(stderr, /fsrun: warning: (?:sandbox|exec): .*?; tamper: (.*)$/gm, [TAMPER_UNREADABLE]))];
}

/** The strings of the JSON arrays re's first group captures on stderr's lines, in order; a capture
 * that is not an array of strings gives `unreadable`. */
function listsOnStderr(stderr: string, re: RegExp, unreadable: readonly string[]): string[] {
  const found: string[] = [];
  for (const m of stderr.matchAll(re)) found.push(...(stringList(m[1]) ?? unreadable));
  return found;
}

/** text as a JSON array of strings, or null when it is not one, whole. */
function stringList(text: string): string[] | null {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return null;
  }
  return Array.isArray(list) && list.every((p): p is string => typeof p === "string") ? list : null;
}

/** fsrun sandbox's own hostGitArgs line up to its list (src/libfsrun/sandbox-git-disarm.c). */
export const HOST_GIT_ARGS_LINE = "fsrun: warning: sandbox: until a person has reviewed the change, run the host's git in this worktree as `git ARGS ...`; hostGitArgs: ";

/**
 * The hostGitArgs of fsrun sandbox's own line on stderr (HOST_GIT_ARGS_LINE and a JSON list),
 * said with the tamper line before the git sync. One-shot mode only: there the command's streams
 * go to fsrun's JSON, and stderr is fsrun's alone. A task container's exec shares its stderr with
 * the command, which could write such a line: options the host's git would take are never read
 * from there. Only a line that starts with fsrun's whole sentence counts: another of fsrun's lines
 * may end in names the run chose (review25 C2: a file `.git/x; hostGitArgs: [...]` in the "left
 * out" line, whose later `-c` would win). fsrun says one such line: a second, or a line that does
 * not parse whole, gives the cannot-disarm option ("cannot tell").
 */
export function hostGitArgsFromStderr(stderr: string): string[] {
  const lines = stderr.split("\n").filter((line) => line.startsWith(HOST_GIT_ARGS_LINE));
  if (lines.length === 0) return [];
  const list = lines.length === 1 ? stringList(lines[0].slice(HOST_GIT_ARGS_LINE.length)) : null;
  return list ?? ["-c", HOST_GIT_CANNOT_DISARM];
}

/** fsrun's policy complaints ("fsrun: policy (stdin): cpuLimit.maxCores: must be ..."), or null. */
export function policyErrorFrom(stderr: string, what: string): FsrunPolicyError | null {
  const m = /^fsrun: (?:sandbox: )?policy(?: \(stdin\))?: (.*)$/m.exec(stderr);
  if (m === null) return null;
  const text = m[1].replace(/^sandbox\.policy\./, "");
  const field = /^([A-Za-z][\w.[\]]*): /.exec(text);
  return new FsrunPolicyError(`${what}: fsrun rejected the sandbox policy: ${text}`, field ? field[1] : null, stderr);
}

export interface Probe {
  limits: SandboxLimits;
  limitsNotEnforced: LimitNotEnforced[];
  /** fsrun's set-up error (exit 125), or null. */
  error: string | null;
  code: number | null;
  stderr: string;
  /** "native" when fsrun found that no sandbox can be set up on this host (fallback-native only). */
  backend: string;
}

export class FsrunCli {
  constructor(
    readonly path: string,
    private readonly stateRoot: string | undefined,
  ) {}

  globalArgs(): string[] {
    return this.stateRoot !== undefined ? ["--root", this.stateRoot] : [];
  }

  async run(args: string[], input = ""): Promise<Exited> {
    const r = await runProc({
      file: this.path,
      args: [...this.globalArgs(), ...args],
      env: fsrunOwnEnv(),
      cwd: "/",
      stdin: input,
      maxBuffer: 16 * 1024 * 1024,
      timeoutMs: SMALL_COMMAND_TIMEOUT_MS,
      killGraceMs: 0,
    });
    return { code: r.code, signal: r.signal, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") };
  }

  /** null when fsrun can run here, else why not (checked without running the command). */
  async unavailable(platform: string): Promise<{ kind: UnavailableReason; reason: string } | { version: string }> {
    if (platform !== "linux") return { kind: "not-linux", reason: `fsrun needs Linux; this platform is ${platform}` };
    const found = await this.locate();
    if (found !== null) return found;
    let r: Exited;
    try {
      r = await this.run(["--version"]);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "missing", reason: `the fsrun binary \`${this.path}\` was not found` };
      if (code === "EACCES") return { kind: "not-executable", reason: `the fsrun binary \`${this.path}\` is not executable` };
      return { kind: "not-fsrun", reason: `cannot run \`${this.path}\`: ${(e as Error).message}` };
    }
    const m = /^fsrun version (\S+)/m.exec(r.stdout);
    if (r.code !== 0 || m === null)
      return { kind: "not-fsrun", reason: `\`${this.path} --version\` did not answer as fsrun does: ${firstLines(r.stderr || r.stdout)}` };
    return { version: m[1] };
  }

  private async locate(): Promise<{ kind: UnavailableReason; reason: string } | null> {
    const candidates = this.path.includes("/")
      ? [this.path]
      : (process.env.PATH ?? "").split(delimiter).filter((d) => d !== "").map((d) => join(d, this.path));
    let exists = false;
    for (const c of candidates) {
      if (await access(c, fsConstants.X_OK).then(() => true, () => false)) return null;
      if (await access(c, fsConstants.F_OK).then(() => true, () => false)) exists = true;
    }
    if (exists) return { kind: "not-executable", reason: `the fsrun binary \`${this.path}\` is not executable` };
    return { kind: "missing", reason: `the fsrun binary \`${this.path}\` was not found${this.path.includes("/") ? "" : " in PATH"}` };
  }

  async landlockAbi(): Promise<number | null> {
    const r = await this.run(["features"]).catch(() => null);
    if (r === null || r.code !== 0) return null;
    try {
      const f = JSON.parse(r.stdout) as { annotations?: Record<string, string> };
      const abi = Number(f.annotations?.["run.fsrun.landlock"]);
      return Number.isInteger(abi) ? abi : null;
    } catch {
      return null;
    }
  }

  /** `fsrun bundle`: a policy refusal throws FsrunPolicyError; other failures come back as code/stderr. */
  async bundle(policy: FsrunPolicy, worktree: string, out: string, command: string[] = []): Promise<Exited & { warnings: string[] }> {
    const args = ["bundle", "--policy", "-", "--worktree", worktree, "--out", out];
    if (command.length > 0) args.push("--", ...command);
    const r = await this.run(args, JSON.stringify(policy));
    const warnings: string[] = [];
    for (const line of r.stderr.split("\n")) {
      const m = /^fsrun: warning: (?:sandbox: )?(.*)$/.exec(line);
      if (m !== null) warnings.push(m[1]);
    }
    if (r.code !== 0) {
      const policyError = policyErrorFrom(r.stderr, "prepare");
      if (policyError !== null) throw policyError;
    }
    return { ...r, warnings };
  }

  /** One `fsrun sandbox --json -- true` under the policy: which limits hold for this caller here. */
  /** `true` in the sandbox; under fallback-native fsrun itself tells a host that cannot sandbox
   * (backend "native") from a failure of this request (125), which must not end in a native run. */
  async probe(policy: FsrunPolicy, worktree: string, failureMode: SandboxFailureMode): Promise<Probe> {
    const r = await this.run(["sandbox", "--json", "--policy", "-", "--worktree", worktree, "--failure-mode", failureMode, "--", "true"], JSON.stringify(policy));
    if (r.code !== 0) {
      const policyError = policyErrorFrom(r.stderr, "prepare");
      if (policyError !== null) throw policyError;
    }
    try {
      const o = JSON.parse(r.stdout) as { limits?: SandboxLimits; limitsNotEnforced?: LimitNotEnforced[]; error?: string; backend?: string };
      return {
        limits: o.limits ?? {},
        limitsNotEnforced: Array.isArray(o.limitsNotEnforced) ? o.limitsNotEnforced : [],
        error: typeof o.error === "string" ? o.error : r.code === 0 ? null : firstLines(r.stderr),
        code: r.code,
        stderr: r.stderr,
        backend: typeof o.backend === "string" ? o.backend : "fsrun",
      };
    } catch {
      return { limits: {}, limitsNotEnforced: [], error: firstLines(r.stderr), code: r.code, stderr: r.stderr, backend: "fsrun" };
    }
  }

  /** The ids of `fsrun list` that `wanted` takes: whole ids, never a prefix (review19 #9). */
  async ids(wanted: (id: string) => boolean): Promise<string[]> {
    const r = await this.run(["list", "--quiet"]).catch(() => null);
    if (r === null || r.code !== 0) return [];
    return r.stdout.split("\n").filter((id) => id !== "" && wanted(id));
  }
}
