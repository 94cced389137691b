/* /dev inside the container: the default devices (null, zero, full, random, urandom, tty), the
 * config's linux.devices, the /dev/fd, stdio, core and ptmx symlinks, /dev/pts and /dev/shm. */
#ifndef FSRUN_DEVICES_H
#define FSRUN_DEVICES_H

#include <stdbool.h>

#include "error.h"
#include "oci.h"

/* Populates /dev of the tree at rootfs_fd (before pivot_root; host paths are still reachable for
 * binds). Nodes are made with mknodat relative to directory fds, never following a symlink; an
 * entry already there is kept only when it is the same device, else replaced. In a user namespace
 * (userns), where mknod is impossible, the host's device is bound onto an empty file instead; a
 * linux.devices node the host lacks is made by the runtime over sync_fd (bind-source.h). A
 * /dev that is a symlink is refused. */
int devices_setup(int rootfs_fd, const oci_config *config, bool userns, int sync_fd,
                  fsrun_error_t *err);

#endif
