/* writablePaths against the host's device nodes (review27 E9). */
#ifndef FSRUN_SANDBOX_DEVICE_PATHS_H
#define FSRUN_SANDBOX_DEVICE_PATHS_H

#include "error.h"
#include "oci.h"

/* 0, or the one-line refusal naming the first writablePaths entry that is a device node, lies on
 * the host /dev's filesystem or on a devpts, or holds /dev */
int sandbox_check_device_paths(const oci_policy *p, fsrun_error_t *err);

#endif
