// The adapter's own 0700 directory for a bundle (and the task container's pid files and logs):
// `fsrun bundle --out` refuses a directory the sandboxed command can write (the worktree, a
// writablePaths entry), since that command could rewrite its own config.json. TMPDIR may be
// such a place (a policy that lets the command write /tmp), so the base is chosen by realpath and
// by device and inode (a bind mount of a writable tree under another path).
import { mkdtemp, realpath, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

import type { Task } from "./backend-base";
import { FsrunSetupError } from "./errors";
import { under } from "./policy";

/** The real path, or the path itself where it does not exist (yet). */
async function real(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/** The device and inode of a path (followed), or null where it cannot be looked at. */
async function identity(path: string): Promise<string | null> {
  const st = await stat(path, { bigint: true }).catch(() => null);
  return st === null ? null : `${st.dev}:${st.ino}`;
}

/** Whether dir (real) or one of its ancestors is one of the trees by identity: a bind mount of a
 * tree's parent names it under a path that no string comparison relates to it. */
async function reachedByIdentity(dir: string, trees: string[]): Promise<boolean> {
  const ids = new Set((await Promise.all(trees.map(identity))).filter((id) => id !== null));
  for (let up = dir; ; up = dirname(up)) {
    const id = await identity(up);
    if (id !== null && ids.has(id)) return true;
    if (up === dirname(up)) return false;
  }
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
    if (dir === null || reached.some((r) => under(dir, r)) || (await reachedByIdentity(dir, reached))) continue;
    const made = await mkdtemp(join(dir, prefix)).catch(() => null);
    if (made !== null) return made;
  }
  throw new FsrunSetupError(`prepare: ctx.policy.writablePaths lets the command write every place for fsrun's bundle (${tried.join(", ")}): no private directory outside it`, null);
}
