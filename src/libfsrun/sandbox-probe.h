/* Whether this host can run a sandbox at all, asked after a set-up failed under fallback-native:
 * what the worktree or the policy's paths hold must never make a command run unsandboxed. */
#ifndef FSRUN_SANDBOX_PROBE_H
#define FSRUN_SANDBOX_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "oci.h"

/* Runs `true` in a sandbox of the same binary, state root, network profile and limits, but over a
 * fresh empty directory and without the policy's paths, under fail-hard, bounded by deadline
 * (CLOCK_MONOTONIC ms, 0: none). True when it ran: the sandbox works on this host. Otherwise
 * *why (caller frees) gets the probe's own reason. Leaves nothing behind. */
bool sandbox_probe_host(const struct fsrun_context *ctx, const oci_policy *policy, int64_t deadline,
                        char **why);

#endif
