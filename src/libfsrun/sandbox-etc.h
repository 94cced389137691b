/* The sandbox's /etc (see sandbox-etc.c). */
#ifndef FSRUN_SANDBOX_ETC_H
#define FSRUN_SANDBOX_ETC_H

#include <stdbool.h>

#include "sandbox-internal.h"

/* The mounts of /etc: the host's bound read-only (userns: an ordinary caller), or, for root, the
 * entries programs need: view_bundle's view of them (a directory made or brought up to date here,
 * sandbox-etc-view.h), or where view_bundle is NULL or the view cannot be made, a tmpfs of them;
 * the caller makes /etc read-only with linux.readonlyPaths "/etc". own_resolv_conf: the caller
 * binds its own /etc/resolv.conf, where this returns true (the host has one: the mount point). */
bool sandbox_etc_mounts(bool userns, bool own_resolv_conf, const char *view_bundle,
                        struct mount_list *l);

#endif
