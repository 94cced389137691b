/* A policy path names an object, not a string: one that reaches a tree the sandboxed command
 * writes under another spelling (a link or bind mount above the worktree) is given that tree's
 * spelling, so the checks and protections placed by the tree's path apply to it
 * (docs/sandbox.md, "Paths the command can re-point"). */
#ifndef FSRUN_SANDBOX_SPELLING_H
#define FSRUN_SANDBOX_SPELLING_H

#include "error.h"
#include "oci.h"

/* Respells p's allowedPaths and writablePaths (clean, absolute) against the trees of worktree
 * (resolved): a path whose way from `/` meets a tree (by device and inode) becomes the tree's path
 * plus the rest as written; a writablePaths one that holds a tree becomes its resolved path, or is
 * refused where that does not spell the tree (a bind mount); any other stays as written. 0, or the
 * one-line refusal naming the field. */
int sandbox_policy_respell(oci_policy *p, const char *worktree, fsrun_error_t *err);

#endif
