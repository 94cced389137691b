// Whether the pid in fsrun exec's --pid-file still names the command's process group (review23
// A4). The command leads a group of its own (fsrun exec calls setsid); once it is reaped and its
// group is empty, the number is free, and a host process may take it and lead a group: a kill of
// that number would end someone else's group. fsrun exec --kill-group ends the command's group
// itself when the command ends (docs/fsrun-exec.8), so the adapter kills it only while it can tell
// it is still the command's.
import { readFileSync, readlinkSync } from "node:fs";

/** The parent's pid and the process group of `pid`, as this process's pid namespace sees them. */
function parentAndGroup(pid: number): { ppid: number; pgrp: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command's name may hold spaces and parentheses: the fields follow its last ")"
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return null;
  }
}

/**
 * While fsrun exec (`execPid`) runs: the command is its child until fsrun exec reaps it (a zombie
 * still counts), and leads its own group. A number taken again after that has another parent.
 */
export function commandGroupWhileExec(pid: number, execPid: number | undefined): boolean {
  const s = parentAndGroup(pid);
  return s !== null && execPid !== undefined && s.ppid === execPid && s.pgrp === pid;
}

/**
 * After fsrun exec died without saying how the command ended (it was killed: the command may
 * still run, reparented): the process leads its own group in the task container's pid namespace
 * (`pidNs`, the init's `pid:[N]`; null when it could not be read: never proven).
 */
export function commandGroupInContainer(pid: number, pidNs: string | null): boolean {
  const s = parentAndGroup(pid);
  if (pidNs === null || s === null || s.pgrp !== pid) return false;
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`) === pidNs;
  } catch {
    return false;
  }
}

/** `/proc/PID/ns/pid`'s link, or null. */
export function pidNamespaceOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}
