/* The sandbox's /etc (see sandbox-etc.c). */
#ifndef FSRUN_SANDBOX_ETC_H
#define FSRUN_SANDBOX_ETC_H

#include <stdbool.h>

#include "sandbox-internal.h"

/* The mounts of /etc: the host's bound read-only (userns: an ordinary caller), or, for root, a
 * tmpfs of the entries programs need, which the caller makes read-only with linux.readonlyPaths
 * "/etc". own_resolv_conf: the caller binds its own /etc/resolv.conf. */
void sandbox_etc_mounts(bool userns, bool own_resolv_conf, struct mount_list *l);

#endif
