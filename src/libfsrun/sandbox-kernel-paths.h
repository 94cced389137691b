/* writablePaths against the host's device nodes and kernel interfaces (review27 E9, E10). */
#ifndef FSRUN_SANDBOX_KERNEL_PATHS_H
#define FSRUN_SANDBOX_KERNEL_PATHS_H

#include "error.h"
#include "oci.h"

/* 0, or the one-line refusal naming the first writablePaths entry that is a device node, lies on
 * the host /dev's filesystem or on a kernel interface filesystem (sysfs, procfs, cgroupfs,
 * debugfs, devpts, ...), or holds /dev, /sys or /proc */
int sandbox_check_kernel_paths(const oci_policy *p, fsrun_error_t *err);

#endif
