// The adapter's own 0700 directory for a bundle (and the task container's pid files and logs):
// `fsrun bundle --out` refuses a directory the sandboxed command can write (the worktree, a
// writablePaths entry), since that command could rewrite its own config.json. TMPDIR may be
// such a place (a policy that lets the command write /tmp), so the base is chosen by realpath.
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import type { Task } from "./backend-base";
import { FsrunSetupError } from "./errors";
import { under } from "./policy";

/** The real path, or the path itself where it does not exist (yet). */
async function real(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/** Where the adapter may make its directory, best first: per-user runtime dirs before shared /tmp. */
function bases(): string[] {
  const runtime = process.env.XDG_RUNTIME_DIR;
  const own = [...(runtime !== undefined && runtime !== "" ? [runtime] : []), ...(process.getuid?.() === 0 ? ["/run"] : [])];
  return [...new Set([...own, tmpdir(), "/tmp", "/var/tmp"])];
}

/** A new 0700 directory (mkdtemp) that neither the worktree nor a writablePaths entry reaches. */
export async function privateDir(task: Task, prefix: string): Promise<string> {
  const reached = await Promise.all([task.worktree, ...(task.policy.writablePaths ?? [])].map(real));
  const tried = bases();
  for (const base of tried) {
    const dir = await realpath(base).catch(() => null);
    if (dir === null || reached.some((r) => under(dir, r))) continue;
    const made = await mkdtemp(join(dir, prefix)).catch(() => null);
    if (made !== null) return made;
  }
  throw new FsrunSetupError(`prepare: ctx.policy.writablePaths lets the command write every place for fsrun's bundle (${tried.join(", ")}): no private directory outside it`, null);
}
