/* Places below the policy's binds that a read-only bind does not protect: a unix socket there
 * still answers connect() and a FIFO still opens, so fsrun's state root (a created container's
 * exec.fifo starts it) and the caller's runtime dir (the user's systemd bus, ssh and gpg agents)
 * get an empty read-only tmpfs over their place in every bind that shows them
 * (docs/sandbox.md, "fsrun's state root"). */
#ifndef FSRUN_SANDBOX_RUNMASK_H
#define FSRUN_SANDBOX_RUNMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandbox-internal.h"

struct runmask_places {
  const char *state_root;  /* NULL: none */
  const char *runtime_dir; /* the caller's $XDG_RUNTIME_DIR; NULL: unset */
  uid_t uid;               /* /run/user/UID */
};

/* Adds a mask for each place that the binds l->items[first..end) (their recorded source
 * identity) hold strictly, at the place's path below the bind's destination. recursive: the binds
 * show their submounts; otherwise only a place on the bind's own mount shows, and gets one. */
void sandbox_mask_private_places(struct mount_list *l, size_t first, size_t end,
                                 const struct runmask_places *places, bool recursive);

#endif
