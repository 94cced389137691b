#ifndef FSRUN_SANDBOX_CHECKOUTS_H
#define FSRUN_SANDBOX_CHECKOUTS_H

#include "error.h"
#include "oci.h"

/* 0, or the one-line refusal naming the first writablePaths entry that is or holds (by identity and
 * spelling, as the state root) the main checkout or a linked worktree of the worktree's repository
 * other than the worktree itself (worktree: resolved) */
int sandbox_check_other_checkouts(const oci_policy *p, const char *worktree, fsrun_error_t *err);

#endif
