// Container ids that name their (task, run) and no other (review19 #9: `sandbox-<task>-<run>-` kept
// `-` in both parts, so task `a` run `b-c-1` and task `a-b` run `c-1` shared a prefix, and a killed
// fsrun made the adapter delete the other task's live sandbox). fsrun's own scheme
// (src/libfsrun/sandbox-id.h, fsrun-sandbox(8) --task-id): each byte outside [A-Za-z0-9.-] is
// `_HH`, so `__` only separates parts; past 160 encoded bytes a digest of the pair stands in.
import { createHash } from "node:crypto";

const PARTS_MAX = 160; // fsrun's SANDBOX_ID_PARTS_MAX
const DIGEST_TASK = 64; // fsrun's SANDBOX_ID_DIGEST_TASK

/** An id part as fsrun writes it: [A-Za-z0-9.-] kept, every other byte `_HH`. */
export function encodeIdPart(part: string): string {
  let out = "";
  for (const byte of Buffer.from(part, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /^[A-Za-z0-9.-]$/.test(c) ? c : `_${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

/** The longest start within max bytes that splits no `_HH` (a trailing `_` would read as `__`). */
function tokenCut(encoded: string, max: number): string {
  let at = 0;
  while (at < encoded.length) {
    const token = encoded[at] === "_" ? 3 : 1;
    if (at + token > max) break;
    at += token;
  }
  return encoded.slice(0, at);
}

function stemOf(kind: string, parts: string[]): string {
  const encoded = parts.map(encodeIdPart);
  if (encoded.reduce((n, p) => n + p.length, 0) <= PARTS_MAX) return `${kind}-${encoded.join("__")}`;
  const digest = createHash("sha256").update(parts.join("\0"), "utf8").digest("hex").slice(0, 32);
  return `${kind}-${tokenCut(encoded[0], DIGEST_TASK)}_h${digest}`;
}

/** fsrun sandbox's id of a run without its random part (`sandbox-TASK__RUN`). */
export function sandboxIdStem(taskId: string | undefined, runId: string): string {
  return stemOf("sandbox", [taskId ?? "", runId]);
}

/** Is `id` the container of fsrun sandbox --task-id taskId --run-id runId? The whole id, never a prefix. */
export function isSandboxOf(id: string, taskId: string | undefined, runId: string): boolean {
  const stem = sandboxIdStem(taskId, runId);
  return id.length === stem.length + 10 && id.startsWith(stem) && /^__[0-9a-f]{8}$/.test(id.slice(stem.length));
}

/** A task container's id: `fusion-TASK__RANDOM` (8 hex digits), TASK encoded as fsrun's parts. */
export function taskContainerId(taskId: string, random: string): string {
  return `${stemOf("fusion", [taskId])}__${random}`;
}
