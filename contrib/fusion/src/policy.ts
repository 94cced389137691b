// Checking a policy's shape and combining two of them. The combination never grants more than
// either policy allows: see combinePolicies. fsrun validates the values itself as well.
import { isAbsolute, normalize } from "node:path";

import { FsrunPolicyError } from "./errors";
import type { FsrunPolicy } from "./types";

const KEYS = new Set([
  "allowNetwork",
  "allowedPaths",
  "writablePaths",
  "envAllowlist",
  "cpuLimit",
  "memoryLimitMb",
  "allowedTcpPorts",
  "pidsLimit",
  "seccomp",
  "allowLinkLocal",
  "blockPrivateNetworks",
]);

function bad(field: string, what: string): never {
  throw new FsrunPolicyError(`${field}: ${what}`, field);
}

function checkPaths(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) bad(field, "expected an array of absolute paths");
  return value.map((p, i) => {
    if (typeof p !== "string" || !isAbsolute(p)) bad(`${field}[${i}]`, `expected an absolute path, got ${JSON.stringify(p)}`);
    return normalize(p).replace(/(.)\/+$/, "$1");
  });
}

function checkNumber(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) bad(field, "expected a positive number");
  return value;
}

/** A typed, normalised copy of `value` (a SandboxPolicy from Fusion), or FsrunPolicyError naming the field. */
export function checkPolicy(value: unknown, where: string): FsrunPolicy {
  if (value === null || typeof value !== "object" || Array.isArray(value)) bad(where, "expected an object (a SandboxPolicy)");
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) bad(`${where}.${key}`, "unknown key");
  // absent: fsrun's default, no network
  if (o.allowNetwork !== undefined && typeof o.allowNetwork !== "boolean") bad(`${where}.allowNetwork`, "expected true or false");
  const policy: FsrunPolicy = {
    allowNetwork: o.allowNetwork === true,
    allowedPaths: checkPaths(o.allowedPaths ?? [], `${where}.allowedPaths`) ?? [],
  };
  const writable = checkPaths(o.writablePaths, `${where}.writablePaths`);
  if (writable !== undefined) policy.writablePaths = writable;
  if (o.envAllowlist !== undefined) {
    if (!Array.isArray(o.envAllowlist) || o.envAllowlist.some((n) => typeof n !== "string"))
      bad(`${where}.envAllowlist`, "expected an array of variable names");
    policy.envAllowlist = [...(o.envAllowlist as string[])];
  }
  if (o.cpuLimit !== undefined) {
    if (o.cpuLimit === null || typeof o.cpuLimit !== "object") bad(`${where}.cpuLimit`, "expected an object");
    const c = o.cpuLimit as Record<string, unknown>;
    for (const key of Object.keys(c))
      if (key !== "maxCores" && key !== "maxMs") bad(`${where}.cpuLimit.${key}`, "unknown key");
    policy.cpuLimit = {};
    const cores = checkNumber(c.maxCores, `${where}.cpuLimit.maxCores`);
    const ms = checkNumber(c.maxMs, `${where}.cpuLimit.maxMs`);
    if (cores !== undefined) policy.cpuLimit.maxCores = cores;
    if (ms !== undefined) policy.cpuLimit.maxMs = ms;
  }
  const memory = checkNumber(o.memoryLimitMb, `${where}.memoryLimitMb`);
  if (memory !== undefined) policy.memoryLimitMb = memory;
  const pids = checkNumber(o.pidsLimit, `${where}.pidsLimit`);
  if (pids !== undefined) policy.pidsLimit = pids;
  if (o.allowedTcpPorts !== undefined) {
    if (!Array.isArray(o.allowedTcpPorts) || o.allowedTcpPorts.some((p) => !Number.isInteger(p)))
      bad(`${where}.allowedTcpPorts`, "expected an array of port numbers");
    policy.allowedTcpPorts = [...(o.allowedTcpPorts as number[])];
  }
  if (o.seccomp !== undefined) {
    if (o.seccomp !== "default" && o.seccomp !== "none") bad(`${where}.seccomp`, 'expected "default" or "none"');
    policy.seccomp = o.seccomp;
  }
  // fsrun refuses them with the network off: only a `true` with it on is kept
  for (const key of ["allowLinkLocal", "blockPrivateNetworks"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") bad(`${where}.${key}`, "expected true or false");
    if (o[key] === true && !policy.allowNetwork) bad(`${where}.${key}`, 'only applies with "allowNetwork": true');
    if (o[key] === true) policy[key] = true;
  }
  return policy;
}

/** Is PATH at or under DIR (both absolute, normalised)? */
export function under(path: string, dir: string): boolean {
  return path === dir || dir === "/" || path.startsWith(dir + "/");
}

/** The paths both sets reach: each path of one set that lies at or under a path of the other. */
function meet(a: string[], b: string[]): string[] {
  const out = new Set<string>();
  for (const p of a) if (b.some((q) => under(p, q))) out.add(p);
  for (const q of b) if (a.some((p) => under(q, p))) out.add(q);
  return [...out].sort();
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * The policy a run gets from the constructor's policy (the ceiling) and prepare's ctx.policy (the
 * request). Each is read as fsrun reads it (an absent key is fsrun's default: no paths, no
 * variables, no limit), and the result is the tighter of the two, key by key:
 * - allowNetwork only when both allow it; allowedTcpPorts the ports both allow (an empty
 *   intersection of two port lists turns the network off);
 * - writablePaths: the paths writable in both (a path at or under a path of the other);
 *   allowedPaths: the paths readable in both, less those that end up writable;
 * - envAllowlist: the names in both;
 * - memoryLimitMb, cpuLimit.maxCores, cpuLimit.maxMs, pidsLimit: the smaller where both set one,
 *   else the one that is set;
 * - seccomp "none" only when both say "none";
 * - allowLinkLocal only when both allow it; blockPrivateNetworks when either asks (network on).
 */
export function combinePolicies(ceiling: FsrunPolicy | undefined, request: FsrunPolicy): FsrunPolicy {
  if (ceiling === undefined) return request;
  const readable = (p: FsrunPolicy) => [...p.allowedPaths, ...(p.writablePaths ?? [])];
  const writable = meet(ceiling.writablePaths ?? [], request.writablePaths ?? []);
  const out: FsrunPolicy = {
    allowNetwork: ceiling.allowNetwork && request.allowNetwork,
    allowedPaths: meet(readable(ceiling), readable(request)).filter((p) => !writable.includes(p)),
  };
  if (writable.length > 0) out.writablePaths = writable;
  const env = (ceiling.envAllowlist ?? []).filter((n) => (request.envAllowlist ?? []).includes(n));
  if (env.length > 0) out.envAllowlist = [...new Set(env)];
  const cores = minimum(ceiling.cpuLimit?.maxCores, request.cpuLimit?.maxCores);
  const ms = minimum(ceiling.cpuLimit?.maxMs, request.cpuLimit?.maxMs);
  if (cores !== undefined || ms !== undefined) {
    out.cpuLimit = {};
    if (cores !== undefined) out.cpuLimit.maxCores = cores;
    if (ms !== undefined) out.cpuLimit.maxMs = ms;
  }
  const memory = minimum(ceiling.memoryLimitMb, request.memoryLimitMb);
  if (memory !== undefined) out.memoryLimitMb = memory;
  const pids = minimum(ceiling.pidsLimit, request.pidsLimit);
  if (pids !== undefined) out.pidsLimit = pids;
  if (out.allowNetwork) {
    const a = ceiling.allowedTcpPorts;
    const b = request.allowedTcpPorts;
    const ports = a === undefined ? b : b === undefined ? a : a.filter((p) => b.includes(p));
    if (ports !== undefined && ports.length === 0) out.allowNetwork = false;
    else if (ports !== undefined) out.allowedTcpPorts = ports;
  }
  // the network's reach: link-local only when both allow it, RFC 1918 kept out when either says so
  if (out.allowNetwork && ceiling.allowLinkLocal === true && request.allowLinkLocal === true) out.allowLinkLocal = true;
  if (out.allowNetwork && (ceiling.blockPrivateNetworks === true || request.blockPrivateNetworks === true)) out.blockPrivateNetworks = true;
  if (ceiling.seccomp !== undefined || request.seccomp !== undefined)
    out.seccomp = ceiling.seccomp === "none" && request.seccomp === "none" ? "none" : "default";
  return out;
}
