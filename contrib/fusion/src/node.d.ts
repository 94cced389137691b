// The few parts of Node's API that the adapter and its tests use, declared here because Debian's
// tsc (node-typescript) comes without @types/node when node itself is not Debian's nodejs package
// (and npm packages are not a dependency we take). Only what is used; each as Node 18/20 have it.
// Never emitted: declarations only, and the published .d.ts files do not reference it.

interface AbortSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}
declare var AbortSignal: { prototype: AbortSignal };
declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

declare namespace NodeJS {
  interface ErrnoException extends Error {
    code?: string;
    errno?: number;
    syscall?: string;
    path?: string;
  }
  interface Timeout {
    unref(): Timeout;
  }
  type Signals = string;
}

interface Buffer extends Uint8Array {
  toString(encoding?: string, start?: number, end?: number): string;
}
declare var Buffer: {
  concat(list: readonly Uint8Array[], totalLength?: number): Buffer;
  from(data: string, encoding?: string): Buffer;
  byteLength(data: string, encoding?: string): number;
};

declare var process: {
  env: Record<string, string | undefined>;
  pid: number;
  execPath: string;
  exitCode?: number;
  getuid?: () => number;
  kill(pid: number, signal?: string | number): true;
};

declare function setTimeout(callback: () => void, ms?: number): NodeJS.Timeout;
declare function clearTimeout(timeout: NodeJS.Timeout | undefined): void;

declare module "node:child_process" {
  interface Readable {
    on(event: "data", listener: (chunk: Buffer) => void): this;
    on(event: "end" | "close", listener: () => void): this;
    on(event: "error", listener: (err: Error) => void): this;
    destroy(): void;
  }
  interface Writable {
    on(event: "error", listener: (err: Error) => void): this;
    end(chunk?: string | Uint8Array): void;
  }
  interface ChildProcess {
    readonly pid?: number;
    readonly stdin: Writable;
    readonly stdout: Readable;
    readonly stderr: Readable;
    readonly exitCode: number | null;
    readonly signalCode: string | null;
    kill(signal?: string | number): boolean;
    on(event: "error", listener: (err: NodeJS.ErrnoException) => void): this;
    on(event: "exit" | "close", listener: (code: number | null, signal: string | null) => void): this;
  }
  interface SpawnOptions {
    cwd?: string;
    env?: Record<string, string | undefined>;
    stdio?: ("pipe" | "ignore" | "inherit")[];
    detached?: boolean;
  }
  function spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
}

declare module "node:crypto" {
  function randomBytes(size: number): Buffer;
}

declare module "node:fs/promises" {
  interface Stats {
    isDirectory(): boolean;
    isFile(): boolean;
  }
  function stat(path: string): Promise<Stats>;
  function realpath(path: string): Promise<string>;
  function mkdtemp(prefix: string): Promise<string>;
  function mkdir(path: string, options?: { recursive?: boolean; mode?: number }): Promise<string | undefined>;
  function rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void>;
  function readFile(path: string, encoding: "utf8"): Promise<string>;
  function readFile(path: string): Promise<Buffer>;
  function writeFile(path: string, data: string, options?: { mode?: number }): Promise<void>;
  function readdir(path: string): Promise<string[]>;
  function chmod(path: string, mode: number): Promise<void>;
  function access(path: string, mode?: number): Promise<void>;
}

declare module "node:os" {
  function tmpdir(): string;
  const constants: { signals: Record<string, number> };
}

declare module "node:path" {
  function resolve(...paths: string[]): string;
  function join(...paths: string[]): string;
  function dirname(path: string): string;
  function basename(path: string): string;
  const sep: string;
}

declare module "node:test" {
  interface TestOptions {
    skip?: boolean | string;
    timeout?: number;
    concurrency?: boolean | number;
  }
  type TestFn = () => void | Promise<void>;
  function test(name: string, fn: TestFn): Promise<void>;
  function test(name: string, options: TestOptions, fn: TestFn): Promise<void>;
  function before(fn: TestFn): void;
  function after(fn: TestFn): void;
}

declare module "node:assert/strict" {
  function ok(value: unknown, message?: string): asserts value;
  function equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  function notEqual(actual: unknown, expected: unknown, message?: string): void;
  function deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  function match(value: string, regexp: RegExp, message?: string): void;
  function doesNotMatch(value: string, regexp: RegExp, message?: string): void;
  function rejects(
    block: Promise<unknown> | (() => Promise<unknown>),
    error?: RegExp | (new (...args: never[]) => Error) | ((err: unknown) => boolean) | object,
    message?: string,
  ): Promise<void>;
  function fail(message?: string): never;
}
