// Compile-time: both backends are Fusion's SandboxBackend as Fusion's own declaration gives it
// (src/fusion-types.ts). If the adapter drifts from the contract, tsc fails and so does the suite.
import * as assert from "node:assert/strict";
import { test } from "node:test";

import { FsrunBackend, NativeBackend, createSandboxBackend } from "../src/index";
import type { SandboxBackend, SandboxCapabilities, SandboxRunResult } from "../src/index";

const fsrun: SandboxBackend = new FsrunBackend({ fsrunPath: "/nonexistent/fsrun" });
const native: SandboxBackend = new NativeBackend();
const fromSettings: SandboxBackend = createSandboxBackend({ defaults: [{ sandbox: { backend: "native" } }] });
// the richer result is still Fusion's result
const asResult = (r: Awaited<ReturnType<FsrunBackend["run"]>>): SandboxRunResult => r;
const asCaps = (b: FsrunBackend): SandboxCapabilities => b.capabilities();

test("FsrunBackend and NativeBackend are Fusion SandboxBackends (checked by tsc)", () => {
  assert.equal(fsrun.id, "custom");
  assert.equal((fsrun as FsrunBackend).name, "fsrun");
  assert.equal(native.id, "native");
  assert.equal(fromSettings.id, "native");
  assert.equal(typeof asResult, "function");
  assert.equal(asCaps(fsrun as FsrunBackend).supportsLinux, true);
});
