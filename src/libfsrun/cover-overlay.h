/* Secret-file covers that a rename on the host does not take away (docs/sandbox.md, "What stays
 * open"). A bind over a file sits on its dentry: when the host renames a new file over it (useradd
 * and passwd replace /etc/shadow so), the kernel detaches that bind in every other mount namespace
 * and the new file shows. An overlay looks each name up in its layers when it is asked: a layer
 * that holds an empty mode-0 file under the secret's name hides whatever the host puts there. */
#ifndef FSRUN_COVER_OVERLAY_H
#define FSRUN_COVER_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Over the directories below bind_root (the root of an attached read-only bind) that hold
 * covers[0..n) (places relative to bind_root, none of them ""), read-only overlays of two layers:
 * a tmpfs holding an empty mode-0 file under each covered name, over the directory itself. One
 * overlay over the shallowest such directory covers those below it too (/etc's /etc/security).
 * covers is put in the order they are made in. recursive: the bind is an rbind, whose submounts
 * below such a directory an overlay would take away (and so uncover what they hide): refused then.
 * 0; or a negative errno with err set, and *refused true where overlayfs refused (a kernel before
 * 5.11 in a user namespace, a directory with mounts below it): nothing of that directory's is left
 * mounted, covers[0..*done) are covered and the others are not. */
int cover_overlays_attach(int bind_root, const char **covers, size_t n, bool recursive,
                          size_t *done, bool *refused, fsrun_error_t *err);

/* One read-only overlay over bind_root itself, its layer holding covers[0..n) (n may be 0): the
 * whole bind seen through overlayfs, whose sockets and FIFOs are its own inodes, not the host's
 * (connect() is refused, a FIFO opened there is a pipe no host process shares). 0; or a negative
 * errno with err set, *refused as above (then nothing is left mounted and the bind is as it was).
 */
int cover_overlay_whole(int bind_root, const char *const *covers, size_t n, bool recursive,
                        bool *refused, fsrun_error_t *err);

/* Does a mount sit below dir (a directory fd) on dir's own mount? An overlay shows only the
 * lower directory's own entries, so over such a directory it would uncover what the mount hides
 * (an rbind's submount masking a key directory: review20 G). *point (may be NULL; caller frees):
 * the first such mount point, NULL when it cannot tell (and then: true). */
bool cover_submount_below(int dir, char **point);

/* The mount(2) flags of the bind at bind_root that an overlay over part of it keeps: MS_RDONLY
 * always, and the bind's MS_NOSUID, MS_NODEV and MS_NOEXEC. */
unsigned long cover_bind_flags(int bind_root);

#endif
