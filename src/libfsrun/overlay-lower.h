/* An overlay's lower layer by the object checked before, not by its path again: the git overlay
 * of `fsrun sandbox` and of `fsrun exec` into a task container (docs/sandbox.md, "Git"). The
 * common dir is checked on the host; the overlay is mounted later, in another mount namespace,
 * where a path component the sandboxed command can write may lead elsewhere by then. */
#ifndef FSRUN_OVERLAY_LOWER_H
#define FSRUN_OVERLAY_LOWER_H

#include <stdint.h>

#include "error.h"

/* Opens dir (absolute) in the current mount namespace through no symbolic link and checks that it
 * is the object dev/ino: an O_PATH fd on it, or a negative errno with err set (-ESTALE: another
 * object, -ELOOP: a link on the way). */
int overlay_lower_open(const char *dir, uint64_t dev, uint64_t ino, fsrun_error_t *err);

/* The path of overlayfs mount data's one `lowerdir=PATH` of one layer, or NULL. Caller frees. */
char *overlay_data_lower(const char *data);
/* Overlayfs mount data with its one `lowerdir=PATH` replaced by `lowerdir=lower`; NULL when data
 * has no lowerdir, more than one, or a lowerdir of several layers. Caller frees. */
char *overlay_data_set_lower(const char *data, const char *lower);

#endif
