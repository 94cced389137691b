// `npm pack` gives a tarball that installs into an empty project, offline, and works there.
import * as assert from "node:assert/strict";
import { readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { runCommand, tempDir } from "./helpers";

const PACKAGE_DIR = process.env.FUSION_PACKAGE_DIR ?? "";

test("npm pack's tarball installs offline into an empty project and runs a command there", { skip: PACKAGE_DIR === "" ? "FUSION_PACKAGE_DIR is not set (run-tests.sh sets it)" : false }, async () => {
  const dir = await tempDir("fsrun-fusion-pack-");
  try {
    const pack = await runCommand("npm", ["pack", "--silent", "--pack-destination", dir], PACKAGE_DIR);
    assert.equal(pack.code, 0, pack.stderr);
    const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote no tarball");
    const project = join(dir, "project");
    await runCommand("mkdir", [project]);
    await writeFile(join(project, "package.json"), '{"name": "empty-project", "version": "1.0.0", "private": true}\n');
    const install = await runCommand("npm", ["install", "--offline", "--no-audit", "--no-fund", join(dir, tarball)], project);
    assert.equal(install.code, 0, install.stderr);
    // the native backend, and fsrun's when the suite has the binary, each from Fusion's settings
    const script = `
      const { createSandboxBackend } = require("@fsrun/fusion-sandbox");
      const [fsrun, state] = process.argv.slice(1);
      const run = async (sandbox) => {
        const b = createSandboxBackend({ defaults: [{ sandbox }] });
        await b.prepare({ taskId: "t", runId: "r", worktreePath: process.cwd(), policy: { allowNetwork: false, allowedPaths: [] } });
        const r = await b.run("echo packed; ls /sys/class/net", { cwd: process.cwd(), timeoutMs: 0, maxBuffer: 1024 });
        await b.dispose();
        return b.id + ":" + r.stdout.split("\\n")[0] + ":" + (r.stdout === "packed\\nlo\\n" ? "only-lo" : "host-net");
      };
      (async () => {
        const out = [await run({ backend: "native" })];
        if (fsrun) out.push(await run({ backend: "fsrun", fsrun: { path: fsrun, stateRoot: state } }));
        console.log(out.join(" "));
      })();`;
    const fsrun = process.env.FSRUN ?? "";
    const r = await runCommand("node", ["-e", script, fsrun, join(dir, "state")], project);
    const [native, sandboxed] = r.stdout.trim().split(" ");
    assert.match(native ?? "", /^native:packed:/, r.stderr);
    if (fsrun !== "") assert.equal(sandboxed, "custom:packed:only-lo", r.stderr);
    const types = await runCommand("ls", [join(project, "node_modules/@fsrun/fusion-sandbox/dist/src/index.d.ts")]);
    assert.equal(types.code, 0, "the tarball has the type declarations");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
