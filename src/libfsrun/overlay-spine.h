/* The read-only overlay view (cover-overlay.h) of an ordinary user's recursive bind that has mounts
 * below its root. In a user namespace every mount the bind copied from the caller's is locked, and
 * overlayfs refuses a lower directory with a locked mount below it (the overlay would show what the
 * mount hides): the bind's root cannot be one overlay. So the view is built of pieces:
 *  - each directory with no mount below it, and each mount with none below its root: one
 *    read-only overlay of its own (its sockets and FIFOs the overlay's inodes), as for the whole;
 *  - each directory that holds a mount point (the "spine": the bind's root, the directories on the
 *    way to each mount, and a mount's root with mounts below it): a directory on a tmpfs that is
 *    attached over the bind, with one entry per host entry: a directory (recursed into as above), a
 *    read-only bind of each file or device node, a copy of each symbolic link, and in place of
 *    each socket or FIFO one of the tmpfs's own (connect() is refused; a FIFO no host process
 *    shares). Modes, owners (where mapped) and times are the host's.
 * The kernel decides whether a directory may be an overlay's lower as it makes the overlay (Linux
 * 5.14 and later refuse one with a locked mount below it): each directory is tried as one overlay
 * first, and only where that is refused and a mount is below it is it a spine directory. A mount
 * that appears meanwhile is so either refused (then walked) or not in the view at all, never shown
 * with its sockets; anything refused otherwise takes the whole view away again. The spine's
 * entries are read once: a file the host adds there later is not shown, and one it replaces by a
 * rename keeps showing the old file, which its bind holds (docs/sandbox.md). */
#ifndef FSRUN_OVERLAY_SPINE_H
#define FSRUN_OVERLAY_SPINE_H

#include <stdbool.h>

#include "error.h"

/* The view over bind_root (an attached read-only recursive bind's root, in a user namespace).
 * 0; or a negative errno with err set (naming the place, relative to bind_root), and nothing
 * left mounted: the bind is as it was. */
int overlay_spine_attach(int bind_root, fsrun_error_t *err);

#endif
