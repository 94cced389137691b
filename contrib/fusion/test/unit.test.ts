// What needs no fsrun: the settings factory, the policy rule, the result parser, NativeBackend.
import * as assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import {
  FsrunBackend,
  FsrunError,
  FsrunPolicyError,
  NativeBackend,
  SandboxSettingsError,
  checkPolicy,
  combinePolicies,
  createSandboxBackend,
  isSandboxOf,
  parseResult,
  promptBackend,
  sandboxIdStem,
  taskContainerId,
} from "../src/index";
import type { SandboxAuditEvent } from "../src/index";
import { firstLines, hostGitArgsFromStderr, tamperFromStderr } from "../src/fsrun-cli";
import { HOST_GIT_CANNOT_DISARM, HOST_GIT_ENV, TAMPER_UNREADABLE, cannotDisarm, hostGitArgsFor, hostGitArgsUntold, hostGitEnvFor } from "../src/backend-base";
import { oneShotEnv, withCarrier } from "../src/one-shot-env";
import { execProcess } from "../src/task-container";
import { assertOneOutcomeEach, tempDir, waitFor } from "./helpers";

let work = "";
before(async () => {
  work = await tempDir("fsrun-fusion-unit-");
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

const field = (name: string) => (e: unknown) => e instanceof SandboxSettingsError && e.field === name;

test("the factory merges defaults, the task override and the prompt line, and returns the backend", () => {
  const global = { sandbox: { backend: "native" as const, failureMode: "fail-hard" as const } };
  const project = { sandbox: { backend: "custom" as const, policy: { allowNetwork: false, allowedPaths: ["/opt"] }, fsrun: { mode: "task-container" as const } } };
  const b = createSandboxBackend({ defaults: [global, project], task: { sandbox: { failureMode: "fallback-native" } } });
  assert.ok(b instanceof FsrunBackend);
  assert.equal(b.id, "custom");
  assert.equal((b as FsrunBackend).failureMode, "fallback-native");
  assert.equal((b as FsrunBackend).runMode, "task-container");
  const allowing = { sandbox: { promptBackends: ["native" as const, "podman" as const] } };
  const n = createSandboxBackend({ defaults: [project, allowing], prompt: "**Sandbox:** native\n\nFix the tests.\n" });
  assert.ok(n instanceof NativeBackend);
  assert.equal(promptBackend("**Sandbox:** podman"), "podman");
  assert.throws(() => createSandboxBackend({ defaults: [project, allowing], prompt: "**Sandbox:** podman" }), field("sandbox.backend"));
  const podman = createSandboxBackend({ defaults: [project, allowing], prompt: "**Sandbox:** podman", backends: { podman: () => new NativeBackend() } });
  assert.equal(podman.id, "native");
});

// review21 L8: a `**Sandbox:** native` line in quoted text (an issue, a log) turned the sandbox
// off over every settings layer. Seen to fail with settings.ts's old promptBackend (the whole
// prompt, no allowlist): the first prompt made a NativeBackend, and no event came.
test("a prompt's **Sandbox:** line chooses only what sandbox.promptBackends allows, from the header only, with an audit event", () => {
  const defaults = [{ sandbox: { backend: "fsrun" as const, failureMode: "fail-hard" as const } }];
  const quoted = "Fix the crash reported in issue #42. The reporter wrote:\n\n1. run the app\n**Sandbox:** native\n2. it crashes\n";
  const header = "# Fix the crash\n**Sandbox:** native\n\nThe reporter wrote: ...\n";
  const seen = (prompt: string, extra: object[] = []) => {
    const events: SandboxAuditEvent[] = [];
    const b = createSandboxBackend({ defaults: [...defaults, ...extra], prompt, onAudit: (e) => events.push(e) });
    return { b, events };
  };
  // the defaults: no prompt picks native, in the header or below it; each refusal is an event
  for (const prompt of [quoted, header, "Fix it.\n**Sandbox:** native"]) {
    const { b, events } = seen(prompt);
    assert.ok(b instanceof FsrunBackend, prompt);
    assert.equal(events.length, 1);
    assert.deepEqual([events[0].event, events[0].backendName, events[0].promptBackend?.requested, events[0].promptBackend?.applied], ["sandbox:prompt-backend", "fsrun", "native", false]);
  }
  assert.match(seen(quoted).events[0].reason ?? "", /not in the prompt's header/);
  assert.equal(seen(quoted).events[0].promptBackend?.line, 4);
  assert.match(seen(header).events[0].reason ?? "", /"native" is not in sandbox\.promptBackends/);
  // allowed: the header's line applies (event), the quoted one still does not
  const allow = [{ sandbox: { promptBackends: ["native" as const] } }];
  const applied = seen(header, allow);
  assert.ok(applied.b instanceof NativeBackend);
  assert.deepEqual([applied.events[0].event, applied.events[0].backend, applied.events[0].promptBackend, applied.events[0].reason], ["sandbox:prompt-backend", "native", { requested: "native", line: 2, applied: true }, undefined]);
  assert.ok(seen(quoted, allow).b instanceof FsrunBackend);
  // configured native: a prompt may ask for a sandbox by default; a prompt without the line: no event
  const nat = [{ sandbox: { backend: "native" as const } }];
  assert.ok(seen("**Sandbox:** fsrun\nDo it.", nat).b instanceof FsrunBackend);
  assert.deepEqual(seen("Do it.").events, []);
  assert.throws(() => createSandboxBackend({ defaults: [...defaults, { sandbox: { promptBackends: ["bwrap"] } } as never] }), field("sandbox.promptBackends[0]"));
  assert.throws(() => createSandboxBackend({ defaults: [...defaults, { sandbox: { promptBackends: "native" } } as never], prompt: "x" }), field("sandbox.promptBackends"));
});

test("the factory names the field of bad input", () => {
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom" }, sandboxx: 1 } as never] }), field("defaults[0].sandboxx"));
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom", polcy: {} } } as never] }), field("defaults[0].sandbox.polcy"));
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "bwrap" } } as never] }), field("sandbox.backend"));
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom", fsrun: { stateRoot: "state" } } }] }), field("sandbox.fsrun.stateRoot"));
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom", fsrun: { path: "bin/fsrun" } } }] }), field("sandbox.fsrun.path"));
  assert.throws(
    () => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom", policy: { allowNetwork: false, allowedPaths: ["relative"] } } }] }),
    (e: unknown) => e instanceof FsrunPolicyError && e.field === "sandbox.policy.allowedPaths[0]",
  );
  assert.throws(() => createSandboxBackend({ defaults: [{ sandbox: { backend: "custom", failureMode: "retry" } } as never] }), field("sandbox.failureMode"));
});

test("prepare names a missing worktree, a relative one, and a missing id, before anything runs", async () => {
  const events: SandboxAuditEvent[] = [];
  const b = new FsrunBackend({ fsrunPath: "/nonexistent", onAudit: (e) => events.push(e) });
  const policy = { allowNetwork: false, allowedPaths: [] };
  await assert.rejects(b.prepare({ taskId: "t", runId: "r", worktreePath: join(work, "nope"), policy }), field("ctx.worktreePath"));
  await assert.rejects(b.prepare({ taskId: "t", runId: "r", worktreePath: "wt", policy }), field("ctx.worktreePath"));
  await assert.rejects(b.prepare({ taskId: "", runId: "r", worktreePath: work, policy }), field("ctx.taskId"));
  assert.deepEqual(events, []);
});

test("hostGitWorktreeArgs: none before prepare() (no worktree to name), never an empty list git would discover from", () => {
  const b = new FsrunBackend({ fsrunPath: "/nonexistent" });
  assert.throws(() => b.hostGitWorktreeArgs, (e: unknown) => e instanceof FsrunError && /before prepare/.test((e as Error).message));
});

test("policy rule: the constructor's policy restricts ctx's, and ctx's restricts the constructor's", () => {
  const ceiling = { allowNetwork: false, allowedPaths: ["/opt", "/srv/a"], writablePaths: ["/cache"], envAllowlist: ["CI", "PATH"], memoryLimitMb: 512, cpuLimit: { maxCores: 4 } };
  const request = { allowNetwork: true, allowedPaths: ["/opt/node", "/etc/x"], writablePaths: ["/cache/pnpm", "/srv/a"], envAllowlist: ["CI", "SECRET"], memoryLimitMb: 2048, cpuLimit: { maxCores: 2, maxMs: 1000 } };
  const both = {
    allowNetwork: false,
    allowedPaths: ["/opt/node", "/srv/a"],
    writablePaths: ["/cache/pnpm"],
    envAllowlist: ["CI"],
    memoryLimitMb: 512,
    cpuLimit: { maxCores: 2, maxMs: 1000 },
  };
  assert.deepEqual(combinePolicies(ceiling, request), both);
  assert.deepEqual(combinePolicies(request, ceiling), both, "the rule is symmetric: neither side can widen the other");
  const net = combinePolicies({ allowNetwork: true, allowedPaths: [], allowedTcpPorts: [443, 80] }, { allowNetwork: true, allowedPaths: [], allowedTcpPorts: [22] });
  assert.equal(net.allowNetwork, false, "no port in common: no network");
});

test("a killed fsrun's tamper lines give its tamper list, each entry once; no other line does; a line cut short is \"cannot tell\"", () => {
  const stderr = [
    "fsrun: warning: sandbox: git: left out what the run wrote outside the task's allowlist: objects/",
    'fsrun: warning: sandbox: the command made nested git repositories (...); tamper: ["nested/.git","config:core.hooksPath=.husky"]',
    'fsrun: warning: exec: the command made nested git repositories (...); tamper: ["nested/.git","a, b/.git","x\\ny"]',
    'fsrun: warning: sandbox: the command made (...); tamper: ["cut',
    'tamper: ["not-fsrun"]',
    'fsrun: warning: sandbox: (...); tamper: {"not":"a list"}',
  ].join("\n");
  assert.deepEqual(tamperFromStderr(stderr), ["nested/.git", "config:core.hooksPath=.husky", "a, b/.git", "x\ny", TAMPER_UNREADABLE]);
  assert.deepEqual(tamperFromStderr(""), []);
  // a process the command left wrote a partial line just before fsrun exec's: still read (review21)
  const joined = 'progress 42%fsrun: warning: exec: the command made nested git repositories (...); tamper: ["late/.git"]\n';
  assert.deepEqual(tamperFromStderr(joined), ["late/.git"]);
});

// review22 F11: the reviewer's payload, fsrun's real lines for a run that made a nested repository
// named `x; tamper: [` (and a driver named `x; hostGitArgs: [`): every entry is read, none dropped
const F11_TAMPER = "fsrun: warning: exec: the command made nested git repositories or changed files the repository's config or its hooks have the host's git run (do not trust the host's git with them); tamper: ";
test("a tamper or hostGitArgs entry that holds the line's own tag changes nothing the adapter reads (review22 F11)", () => {
  const tamper = ["x; tamper: [/.git", "real-nested/.git"];
  for (const ctx of ["exec", "sandbox"])
    assert.deepEqual(tamperFromStderr(F11_TAMPER.replace("exec:", `${ctx}:`) + JSON.stringify(tamper)), tamper);
  const args = ["-c", "filter.x; hostGitArgs: [.clean=", "-c", "filter.y.clean="];
  const line = "fsrun: warning: sandbox: until a person has reviewed the change, run the host's git in this worktree as `git ARGS ...`; hostGitArgs: ";
  assert.deepEqual(hostGitArgsFromStderr(line + JSON.stringify(args)), args);
  // a line that starts as fsrun's and does not parse whole: "cannot tell", never [] or a part
  assert.deepEqual(tamperFromStderr(`${F11_TAMPER}["x; tamper: [/.git","real-nested/.git"`), [TAMPER_UNREADABLE]);
  assert.deepEqual(hostGitArgsFromStderr(`${line}["-c","filter.y.clean="`), ["-c", HOST_GIT_CANNOT_DISARM]);
  assert.deepEqual(hostGitArgsFor([TAMPER_UNREADABLE], undefined), ["-c", HOST_GIT_CANNOT_DISARM]);
});

test("hostGitArgs come from fsrun's JSON (absent when empty) and from fsrun sandbox's own stderr line, never from exec's", () => {
  const base = { stdout: "", stderr: "", exitCode: 0, signal: null, timedOut: false, truncated: false, durationMs: 1, backend: "fsrun", limits: {} };
  const r = (o: object) => parseResult(JSON.stringify({ ...base, ...o }), "r", false)!.result;
  assert.equal(r({}).hostGitArgs, undefined);
  assert.equal(r({ hostGitArgs: [] }).hostGitArgs, undefined);
  assert.deepEqual(r({ hostGitArgs: ["-c", "core.hooksPath=/dev/null"] }).hostGitArgs, ["-c", "core.hooksPath=/dev/null"]);
  const stderr = [
    'fsrun: warning: sandbox: until a person has reviewed the change, run the host\'s git in this worktree as `git ARGS ...`; hostGitArgs: ["-c","filter.x.clean="]',
    // a task container's exec shares its stderr with the command: such a line could be the command's
    'fsrun: warning: exec: until (...); hostGitArgs: ["-c","core.fsmonitor=./evil.sh"]',
    'hostGitArgs: ["-c","core.pager=./evil.sh"]',
  ].join("\n");
  assert.deepEqual(hostGitArgsFromStderr(stderr), ["-c", "filter.x.clean="]);
  assert.deepEqual(hostGitArgsFromStderr(""), []);
});

// review25 C2: fsrun's real stderr of a run that rewrote the driver (fsrun's list disarms
// filter.x) and made `.git/x; hostGitArgs: ["-c","filter.x.process=sh p"]`. An fsrun before the
// JSON left-out line ended that line with the name raw, and git takes the later `-c`: only the
// line that starts with fsrun's sentence counts, once; a second such line is "cannot tell".
// Seen to fail (the forged options read) with the regex of before (`.*?; hostGitArgs: `).
test("hostGitArgs are read from fsrun's own sentence alone, one line; a second is \"cannot tell\" (review25 C2)", () => {
  const own = "fsrun: warning: sandbox: until a person has reviewed the change, run the host's git in this worktree as `git ARGS ...`; hostGitArgs: ";
  const disarm = ["-c", "filter.x.clean=", "-c", "filter.x.smudge=", "-c", "filter.x.process=", "-c", "filter.x.required=false"];
  const forged = 'x; hostGitArgs: ["-c","filter.x.process=sh p"]';
  const raw = `fsrun: warning: sandbox: git: left out what the run wrote outside the task's allowlist: objects/, ${forged}`;
  const json = `fsrun: warning: sandbox: git: left out what the run wrote outside the task's allowlist: ${JSON.stringify([forged])}`;
  for (const leftOut of [raw, json]) assert.deepEqual(hostGitArgsFromStderr([own + JSON.stringify(disarm), leftOut].join("\n")), disarm, leftOut);
  const twice = [own + JSON.stringify(disarm), own + JSON.stringify(["-c", "filter.x.process=sh p"])].join("\n");
  assert.deepEqual(hostGitArgsFromStderr(twice), ["-c", HOST_GIT_CANNOT_DISARM]);
  assert.deepEqual(hostGitArgsUntold(hostGitArgsFromStderr(raw)), ["-c", HOST_GIT_CANNOT_DISARM], "no list of fsrun's: cannot tell");
});

// an error's reason quotes fsrun's first stderr lines; a left-out line of 64 deep names of control
// characters is megabytes of JSON (review25 C1's run): each line is cut, and says so. Seen to fail
// (a reason of 1 MB) with the cut undone.
test("an error's reason keeps at most 2000 characters of each of fsrun's first three lines", () => {
  const long = `fsrun: warning: sandbox: git: left out what the run wrote outside the task's allowlist: ["${"\\u0001".repeat(200_000)}"]`;
  const reason = firstLines(["fsrun: warning: one", long, "three", "four"].join("\n"));
  assert.ok(reason.length < 2100, `${reason.length} characters`);
  assert.match(reason, /^fsrun: warning: one; fsrun: warning: sandbox: git: left out .*\.\.\. \(\d+ characters more\); three$/);
  assert.equal(firstLines(" \n"), "(nothing on stderr)");
});

test("hostGitEnvFor: code-at-start variables empty, search paths without empty, relative or worktree entries (review26 D5)", () => {
  const env = {
    PATH: ":/usr/bin:./node_modules/.bin:.:~/bin:/wt/task/bin:/bin:",
    NODE_PATH: "lib:/opt/node",
    PYTHONPATH: "/wt/task",
    LD_LIBRARY_PATH: "/opt/lib;;x",
    LD_PRELOAD: "libfake.so ./x.so /opt/y.so",
    NODE_OPTIONS: "--require ts-node/register",
    BASH_ENV: "./env.sh",
    HOME: "/home/u",
  };
  const got = hostGitEnvFor(env, "/wt/task/");
  assert.deepEqual([got.NODE_OPTIONS, got.BASH_ENV, got.ENV, got.PYTHONSAFEPATH], ["", "", "", "1"]);
  assert.deepEqual(got, {
    ...HOST_GIT_ENV,
    PATH: "/usr/bin:/bin",
    NODE_PATH: "/opt/node",
    PYTHONPATH: "",
    LD_LIBRARY_PATH: "/opt/lib",
    LD_PRELOAD: "libfake.so /opt/y.so",
  });
  assert.equal(hostGitEnvFor({ PATH: "::." }).PATH, "/usr/local/bin:/usr/bin:/bin", "an empty PATH would be the cwd");
  assert.equal("RUBYLIB" in hostGitEnvFor({}), false, "a variable Fusion's environment does not set is not set");
});

// review27 E6: an absolute entry at or below a writablePaths entry is the run's as much as the
// worktree: by its spelling, by real path (a link on the way, a directory not made yet) and the
// directory that holds a writable entry. LD_AUDIT is cleaned as LD_PRELOAD is (its bare names are
// the loader's), GCONV_PATH and GIT_EXEC_PATH as PATH; Python's and Ruby's code dirs kept whole or
// emptied. Seen to fail with the writable trees not passed (every `w` entry kept).
test("hostGitEnvFor: entries at or below a writablePaths entry, by spelling, real path or the dir holding one, are left out (review27 E6)", async () => {
  const d = join(work, "e6");
  const w = join(d, "npm-global");
  await mkdir(join(w, "bin"), { recursive: true });
  await mkdir(join(d, "tools"), { recursive: true });
  await writeFile(join(d, "tools", "git"), "");
  await symlink(join(w, "bin"), join(d, "linkbin"));
  await symlink(w, join(d, "linkw"));
  const env = {
    PATH: `${w}/bin:${d}/linkbin:${d}/linkw/not-made-yet:${d}/tools:${d}/npm-globalx/bin:/usr/bin`,
    NODE_PATH: `${w}/lib/node_modules:/opt/node`,
    LD_LIBRARY_PATH: `${d}/linkw/lib:/opt/lib`,
    LD_AUDIT: `libaudit.so:./a.so:${w}/a.so:/opt/a.so:`,
    GCONV_PATH: `.:${w}/gconv:/usr/lib/gconv`,
    GIT_EXEC_PATH: `${d}/linkw/git-core`,
    PYTHONHOME: `${w}/py`,
    PYTHONUSERBASE: "/opt/pyuser",
    GEM_HOME: "gems",
  };
  const got = hostGitEnvFor(env, "/wt/task", [w, join(d, "tools", "git")]);
  assert.deepEqual(got, {
    ...HOST_GIT_ENV,
    PATH: `${d}/npm-globalx/bin:/usr/bin`,
    NODE_PATH: "/opt/node",
    LD_LIBRARY_PATH: "/opt/lib",
    LD_AUDIT: "libaudit.so:/opt/a.so",
    GCONV_PATH: "/usr/lib/gconv",
    GIT_EXEC_PATH: "",
    PYTHONHOME: "",
    PYTHONUSERBASE: "/opt/pyuser",
    GEM_HOME: "",
  });
  const worktreeOnly = hostGitEnvFor({ PATH: `${d}/linkbin:/usr/bin` }, w);
  assert.equal(worktreeOnly.PATH, "/usr/bin", "a link into the worktree is the worktree's");
});

// review28 F3: a writablePaths entry spelled `lnk/../wpx` is bound by fsrun where the kernel takes
// it (beside lnk's target), not where a lexical resolve() puts it (beside lnk): a PATH entry into
// the real directory is the run's. Seen to fail with the entry normalised before realpath (kept).
test("hostGitEnvFor: a writablePaths entry with `..` after a link is the directory the kernel resolves (review28 F3)", async () => {
  const d = join(work, "f3");
  await mkdir(join(d, "dd", "sub"), { recursive: true });
  await mkdir(join(d, "dd", "wpx", "bin"), { recursive: true });
  await symlink(join(d, "dd", "sub"), join(d, "lnk"));
  const entry = `${d}/lnk/../wpx`;
  const got = hostGitEnvFor({ PATH: `${d}/dd/wpx/bin:${d}/wpx/bin:/usr/bin` }, "/wt/task", [entry]);
  // the real directory's entry goes; the lexical one too (by its spelling: the safe side)
  assert.equal(got.PATH, "/usr/bin");
  // not made yet: judged where it would be made
  const later = `${d}/lnk/../later`;
  assert.equal(hostGitEnvFor({ PATH: `${d}/dd/later/bin:/usr/bin` }, "/wt/task", [later]).PATH, "/usr/bin");
});

test("hostGitArgs holding fsrun's cannot-disarm option say the host's git must not run there", () => {
  assert.equal(cannotDisarm(["-c", "core.abbrev=fsrun-cannot-disarm", "-c", "core.fsmonitor=false"]), true);
  assert.equal(cannotDisarm(["-c", "core.fsmonitor=false"]), false);
  assert.equal(cannotDisarm([]), false);
  // only as an option of its own, not as a value of another
  assert.equal(cannotDisarm(["-c", "-c", "core.abbrev=fsrun-cannot-disarm"]), false);
});

test("a run naming a config fsrun could not read whole is never disarmed, whatever fsrun's hostGitArgs said", () => {
  const unread = ["config:unread:/r/.gitconfig (larger than fsrun reads)"];
  const cannot = ["-c", "core.abbrev=fsrun-cannot-disarm"];
  // an fsrun before the rule: the options that need no driver's name only; a killed run: none
  assert.deepEqual(hostGitArgsFor(unread, ["-c", "core.fsmonitor=false"]), [...cannot, "-c", "core.fsmonitor=false"]);
  assert.deepEqual(hostGitArgsFor(unread, undefined), cannot);
  const said = [...cannot, "-c", "core.fsmonitor=false"];
  assert.equal(hostGitArgsFor(unread, said), said, "already there: as fsrun said");
  const other = ["-c", "core.hooksPath=/dev/null"];
  assert.equal(hostGitArgsFor(["config:core.hooksPath=.husky"], other), other);
  assert.equal(hostGitArgsFor([], undefined), undefined);
});

test("a run whose fsrun said no hostGitArgs line before it was killed cannot tell: never disarmed", () => {
  const cannot = ["-c", "core.abbrev=fsrun-cannot-disarm"];
  // review22 F7: killed while it read the run's configs again, before either line, or between them
  assert.deepEqual(hostGitArgsUntold(undefined), cannot);
  assert.deepEqual(hostGitArgsUntold([]), cannot);
  assert.equal(cannotDisarm(hostGitArgsUntold([])), true);
  const said = ["-c", "core.fsmonitor=false"];
  assert.equal(hostGitArgsUntold(said), said, "its line said whole: as fsrun said");
});

test("the result's exitCode and signal come from fsrun's fields, never from the number", () => {
  const base = { stdout: "", stderr: "", timedOut: false, truncated: false, durationMs: 1, backend: "fsrun", limits: {} };
  const r = (o: object) => parseResult(JSON.stringify({ ...base, ...o }), "r", false)!.result;
  assert.deepEqual([r({ exitCode: 137, signal: null }).exitCode, r({ exitCode: 137, signal: null }).signal], [137, null]);
  assert.deepEqual([r({ exitCode: 130, signal: null }).exitCode, r({ exitCode: 130, signal: null }).signal], [130, null]);
  assert.deepEqual([r({ exitCode: null, signal: "SIGKILL" }).exitCode, r({ exitCode: null, signal: "SIGKILL" }).signal], [null, "SIGKILL"]);
  const t = r({ exitCode: 124, signal: null, timedOut: true });
  assert.deepEqual([t.exitCode, t.signal, t.timedOut], [null, "SIGKILL", true]);
  const o = r({ exitCode: null, signal: "SIGKILL", oomKilled: true, limitsNotEnforced: [{ limit: "memoryLimitMb", reason: "no cgroup" }] });
  assert.equal(o.oomKilled, true);
  assert.deepEqual(r({ exitCode: 0, signal: null, tamper: ["sub/.git"] }).tamper, ["sub/.git"]);
  assert.deepEqual(r({ exitCode: 0, signal: null }).tamper, []);
  // fsrun's config-named-file and hook-manager-file entries (docs/sandbox.md) pass through as they are, in order
  const cfg = ["config:core.hooksPath=.husky", "sub/.git", "config:include.path=../.gitconfig", "hooks:lefthook.yml"];
  assert.deepEqual(r({ exitCode: 0, signal: null, tamper: cfg }).tamper, cfg);
  assert.deepEqual(o.limitsNotEnforced, [{ limit: "memoryLimitMb", reason: "no cgroup" }]);
  // an ordinary user's allowedPaths entry with a mount below it (its sockets the host's) is one like the others
  const sock = [{ limit: "allowedPaths", reason: "`/home/u` has a mount below it (`/home/u/m`), ..." }];
  assert.deepEqual(r({ exitCode: 0, signal: null, limitsNotEnforced: sock }).limitsNotEnforced, sock);
});

test("NativeBackend runs as exec does and delivers audit events through an EventEmitter", async () => {
  const emitter = new EventEmitter();
  const events: SandboxAuditEvent[] = [];
  emitter.on("audit", (e: SandboxAuditEvent) => events.push(e));
  const b = new NativeBackend({ onAudit: emitter, killGraceMs: 200 });
  await b.prepare({ taskId: "t", runId: "r", worktreePath: work, policy: { allowNetwork: false, allowedPaths: [] } });
  const opts = { cwd: work, timeoutMs: 0, maxBuffer: 1 << 20 };
  const r = await b.run("echo $ONLY; pwd; exit 3", { ...opts, env: { ONLY: "this", PATH: process.env.PATH } });
  assert.deepEqual([r.stdout, r.exitCode, r.signal, r.backend], [`this\n${work}\n`, 3, null, "native"]);
  const t = await b.run("sleep 30 & sleep 30", { ...opts, timeoutMs: 200 });
  assert.deepEqual([t.timedOut, t.exitCode, t.signal], [true, null, "SIGKILL"]);
  const c = new AbortController();
  const run = b.run("trap '' TERM; touch started; sleep 30", { ...opts, signal: c.signal });
  await waitFor("the command", () => readFile(join(work, "started")).then(() => true, () => false));
  c.abort();
  const a = await run;
  assert.deepEqual([a.aborted, a.exitCode, a.signal], [true, null, "SIGKILL"]);
  // the watchdog's abort(): every run in flight ends
  const w = b.run("touch started-w; sleep 30", opts);
  await waitFor("the command", () => readFile(join(work, "started-w")).then(() => true, () => false));
  b.abort();
  assert.deepEqual([(await w).aborted, (await w).signal], [true, "SIGTERM"]);
  await assert.rejects(b.run("touch never", { ...opts, signal: AbortSignal.abort() }), (e: unknown) => e instanceof Error && e.name === "AbortError");
  await assert.rejects(readFile(join(work, "never")));
  const m = await b.run("head -c 5000 /dev/zero", { ...opts, maxBuffer: 100 });
  assert.deepEqual([m.truncated, m.stdout.length], [true, 100]);
  await b.dispose();
  assert.equal(assertOneOutcomeEach(events), null);
  assert.deepEqual(events.slice(0, 4).map((e) => e.event), ["sandbox:prepare", "sandbox:ready", "sandbox:prepare", "sandbox:run"]);
  assert.equal(events[0].backend, "native");
  assert.match(events[0].policyHash, /^[0-9a-f]{64}$/);
});

// the same strings as fsrun's tests/unit/test-sandbox-id.c: the adapter computes fsrun's ids
test("container ids: fsrun's stems, and a whole id of one (task, run) only (review19 #9)", () => {
  assert.equal(sandboxIdStem("a", "b-c-1"), "sandbox-a__b-c-1");
  assert.equal(sandboxIdStem("a-b", "c-1"), "sandbox-a-b__c-1");
  assert.equal(sandboxIdStem("a_", "b"), "sandbox-a_5f__b");
  assert.equal(sandboxIdStem("a", "_5fb"), "sandbox-a___5f5fb");
  assert.equal(sandboxIdStem("t/é", "1"), "sandbox-t_2f_c3_a9__1");
  assert.equal(sandboxIdStem(undefined, "r"), "sandbox-__r");
  const long = "a".repeat(63) + "/" + "a".repeat(136);
  assert.equal(sandboxIdStem(long, "1"), `sandbox-${"a".repeat(63)}_h3ce8ff3e241217f114375116ff73b035`);
  assert.notEqual(sandboxIdStem("a".repeat(200), "1"), sandboxIdStem("a".repeat(201), "1"));
  assert.equal(isSandboxOf("sandbox-a__b-c-1__1234abcd", "a", "b-c-1"), true);
  assert.equal(isSandboxOf("sandbox-a__b-c-1__1234abcd", "a-b", "c-1"), false);
  assert.equal(isSandboxOf("sandbox-a__b-c-1__1234abcd-x", "a", "b-c-1"), false);
  assert.equal(isSandboxOf("sandbox-a__b-c-1__1234abc", "a", "b-c-1"), false);
  assert.equal(taskContainerId("FN-12/x", "0011aabb"), "fusion-FN-12_2fx__0011aabb");
});

test("policy rule: allowLinkLocal only when both allow it, blockPrivateNetworks when either asks (review19 #10)", () => {
  const on = { allowNetwork: true, allowedPaths: [] };
  assert.equal(combinePolicies({ ...on, allowLinkLocal: true }, { ...on }).allowLinkLocal, undefined);
  assert.equal(combinePolicies({ ...on, allowLinkLocal: true }, { ...on, allowLinkLocal: true }).allowLinkLocal, true);
  assert.equal(combinePolicies({ ...on }, { ...on, blockPrivateNetworks: true }).blockPrivateNetworks, true);
  assert.equal(combinePolicies({ ...on, blockPrivateNetworks: true }, { allowNetwork: false, allowedPaths: [] }).blockPrivateNetworks, undefined);
  assert.throws(() => checkPolicy({ allowNetwork: true, allowLinkLocal: "yes" }, "p"), (e: unknown) => e instanceof FsrunPolicyError && e.field === "p.allowLinkLocal");
  assert.throws(() => checkPolicy({ blockPrivateNetworks: true }, "p"), (e: unknown) => e instanceof FsrunPolicyError && e.field === "p.blockPrivateNetworks");
  assert.deepEqual(checkPolicy({ allowNetwork: true, allowLinkLocal: true, blockPrivateNetworks: false }, "p"), { allowNetwork: true, allowedPaths: [], allowLinkLocal: true });
});

// review21 L5: fsrun's environment is the adapter's own; the command's variables come to its shell
// in one carrier variable (not in fsrun's arguments, which any user can read)
test("oneShotEnv: fsrun gets the adapter's environment, git's config entries and the carrier; the shell sets the rest", () => {
  const own = { PATH: "/own/bin", HOME: "/own", XDG_CONFIG_HOME: "/own/.config", XDG_RUNTIME_DIR: "/run/user/7" };
  const command = { PATH: "/cmd/bin", XDG_CONFIG_HOME: "/decoy", LD_PRELOAD: "/decoy/x.so", Q: "it's", GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "a.b", GIT_CONFIG_VALUE_0: "c" };
  const allowlist = ["XDG_CONFIG_HOME", "LD_PRELOAD", "Q", "GIT_CONFIG_COUNT", "XDG_RUNTIME_DIR", "HOME", "UNSET_ELSEWHERE"];
  const { env, prelude } = oneShotEnv(command, allowlist, own);
  const script =
    "unset FUSION_SANDBOX_ENV\nexport PATH='/cmd/bin'\nexport XDG_CONFIG_HOME='/decoy'\nexport LD_PRELOAD='/decoy/x.so'\nexport Q='it'\\''s'\n" +
    // allowlisted, no value of the command's, one in fsrun's: not the adapter's value either
    "unset XDG_RUNTIME_DIR\n";
  assert.deepEqual(env, { ...own, GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "a.b", GIT_CONFIG_VALUE_0: "c", FUSION_SANDBOX_ENV: script });
  assert.equal(prelude, 'eval "$FUSION_SANDBOX_ENV"\n');
  assert.deepEqual(withCarrier({ allowNetwork: false, allowedPaths: [], envAllowlist: ["Q"] }).envAllowlist, ["Q", "FUSION_SANDBOX_ENV"]);
  assert.throws(() => oneShotEnv({ "A.B": "x" }, ["A.B"], own), (e: unknown) => e instanceof SandboxSettingsError && e.field === "opts.env" && /`A\.B`/.test(e.message));
});

test("execProcess: config.json's process with the command, cwd and variables set as fsrun exec's --env sets them (review21 L7)", () => {
  const base = { user: { uid: 0, gid: 0 }, terminal: true, args: ["sleep", "infinity"], cwd: "/w", env: ["PATH=/bin", "HOME=/root", "TOKEN=old"], noNewPrivileges: true };
  const p = execProcess(base, "echo hi", "/w/pkg", { TOKEN: "new", EXTRA: "a=b" });
  assert.deepEqual(p, { user: { uid: 0, gid: 0 }, terminal: false, args: ["/bin/sh", "-c", "echo hi"], cwd: "/w/pkg", env: ["PATH=/bin", "HOME=/root", "TOKEN=new", "EXTRA=a=b"], noNewPrivileges: true });
  assert.deepEqual(base.env, ["PATH=/bin", "HOME=/root", "TOKEN=old"], "the base is not changed");
});
