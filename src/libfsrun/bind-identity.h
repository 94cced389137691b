/* A bind's checks carried in config.json: the identity of the object its source showed when the
 * config was built, the rule that its destination is reached through no symbolic link, and the
 * secret-file covers that go onto the bind itself (oci_mount's in-memory fields, mounts.c).
 * `fsrun sandbox` hands them to the runtime in memory; a `fsrun bundle` task container is created
 * later, by another process, from the JSON, so they are written as annotations:
 *
 *   "run.fsrun.mounts.N": "{\"destination\": \"/w/x\", \"sourceId\": \"DEV:INO\",
 *                           \"destinationNoSymlinks\": true, \"covers\": [\"shadow\"],
 *                           \"overlayView\": true}"
 *
 * N is the index of the mount in `mounts`, whose destination must be the one named (a config
 * edited since is refused, not checked against another mount). Each key can only make a create
 * stricter (docs/sandbox.md, "Paths the command can re-point"), so any config may carry them: a
 * bind whose source shows another object is refused (ESTALE), a destination through a link is
 * refused (ELOOP), a cover hides a secret file with the bundle's empty mode-0 file, an overlay view
 * shows a read-only bind of a directory through an overlay (its sockets and FIFOs closed), as far
 * as the kernel lets it (otherwise the bind as it is: cover-overlay.h). Nothing in them turns a
 * check off: `destinationNoSymlinks` is only `true`, and an identity that differs from one the
 * mount carries already is refused. A malformed annotation is one line naming it. */
#ifndef FSRUN_BIND_IDENTITY_H
#define FSRUN_BIND_IDENTITY_H

#include "error.h"
#include "oci.h"

#define BIND_CHECKS_ANNOTATION_PREFIX "run.fsrun.mounts."

/* `fsrun bundle`: an annotation for each mount that carries checks in memory (call it once the
 * mounts are in their final order). */
int bind_checks_to_annotations(oci_config *c, fsrun_error_t *err);

/* create: the checks of the annotations onto their mounts (adding to what they carry). */
int bind_checks_from_annotations(oci_config *c, fsrun_error_t *err);

#endif
