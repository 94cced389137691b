/* The default config.json that `fsrun spec` writes: the same container as `runc spec` (a shell in
 * ./rootfs with a minimal capability set), optionally in its rootless form. */
#ifndef FSRUN_SPEC_H
#define FSRUN_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "oci.h"

/* Builds the default config. With rootless, a new user namespace maps container uid/gid 0 to
 * host_uid/host_gid (size 1), there is no network namespace, /sys is a read-only rbind of the
 * host's, and nothing needs privileges the caller lacks (no devpts gid, no device cgroup rules).
 * Free with oci_config_free. Never fails except by aborting on out-of-memory. */
oci_config *spec_default_config(bool rootless, uint32_t host_uid, uint32_t host_gid);

/* The default linux.maskedPaths and linux.readonlyPaths (NULL-terminated), also the sandbox's. */
extern const char *const spec_masked_paths[];
extern const char *const spec_readonly_paths[];

/* Writes the default config (for the calling user when rootless) as bundle_dir/config.json, pretty
 * printed. Refuses to overwrite an existing file. */
int spec_write_default(const char *bundle_dir, bool rootless, fsrun_error_t *err);

#endif
