// How a one-shot run's variables reach its command without becoming fsrun's own (review21 L5).
// `fsrun sandbox` hands the command the envAllowlisted variables of its own environment, and that
// environment also decides what fsrun does on the host: the names fsrun reads (its state root,
// where the user's global git config is, the slirp4netns it runs) and those the dynamic loader and
// the tools fsrun starts read (LD_PRELOAD, LD_LIBRARY_PATH). So fsrun gets the adapter's own
// environment, and the command's shell sets the command's variables from one carrier variable
// before the command runs (in fsrun's environment, not its arguments: those are any user's to read).
import { SandboxSettingsError } from "./errors";
import type { FsrunPolicy } from "./types";

/** The carrier: read by nothing but the command's shell, which unsets it first. */
export const COMMAND_ENV_CARRIER = "FUSION_SANDBOX_ENV";

export interface OneShotEnv {
  /** fsrun's whole environment. */
  env: Record<string, string>;
  /** What the command's shell runs first. */
  prelude: string;
}

const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** git's command-line config entries: fsrun appends its own after the command's (docs/sandbox.md),
 * so it must see them; neither fsrun nor anything it runs on the host is git. */
const MERGED_BY_FSRUN = /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/;

const quoted = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * command: the command's variables (the allowlisted ones it has, and PATH); allowlist: the
 * policy's envAllowlist; own: fsrunOwnEnv(). An allowlisted name the command has no value for
 * that fsrun's environment holds is unset, so that the command does not get the adapter's.
 */
export function oneShotEnv(command: Record<string, string>, allowlist: readonly string[], own: Record<string, string>): OneShotEnv {
  const env: Record<string, string> = { ...own };
  let script = `unset ${COMMAND_ENV_CARRIER}\n`;
  for (const [name, value] of Object.entries(command)) {
    if (MERGED_BY_FSRUN.test(name)) env[name] = value;
    else if (SHELL_NAME.test(name)) script += `export ${name}=${quoted(value)}\n`;
    else throw new SandboxSettingsError("opts.env", `\`${name}\`: a one-shot command's variables are set by its shell, and this is not a name the shell can set`);
  }
  for (const name of allowlist)
    if (command[name] === undefined && own[name] !== undefined && name !== "PATH" && name !== "HOME") script += `unset ${name}\n`;
  env[COMMAND_ENV_CARRIER] = script;
  return { env, prelude: `eval "$${COMMAND_ENV_CARRIER}"\n` };
}

/** The policy fsrun gets: the task's, with the carrier let through to the command's shell. */
export function withCarrier(policy: FsrunPolicy): FsrunPolicy {
  return { ...policy, envAllowlist: [...(policy.envAllowlist ?? []), COMMAND_ENV_CARRIER] };
}
