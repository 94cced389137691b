/* The host's system directories in the sandbox (see sandbox-system-dirs.c). */
#ifndef FSRUN_SANDBOX_SYSTEM_DIRS_H
#define FSRUN_SANDBOX_SYSTEM_DIRS_H

#include "root-links.h"
#include "sandbox-internal.h"

/* /usr, /bin, /sbin, /lib* bound read-only with ro_bind's options, but for each that is a
 * merged-/usr link on the host (`bin -> usr/bin`): that one goes into links, the same link made in
 * the sandbox's root. */
void sandbox_system_dirs(struct mount_list *l, const char *const *ro_bind,
                         struct root_links *links);

/* Once every mount is listed: a link with a mount at or below it is bound as before instead (the
 * runtime places no mount through a link). */
void sandbox_system_links_settle(struct mount_list *l, const char *const *ro_bind,
                                 struct root_links *links);

/* The links as the runtime's annotation (root-links.h); nothing without links. */
int sandbox_system_links_annotate(const struct root_links *links, oci_map *annotations);

#endif
