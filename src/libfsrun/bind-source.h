/* Bind sources the init cannot reach itself in its user namespace.
 *
 * The init clones bind sources with open_tree() in its own mount namespace, so that the host's
 * mount flags stay locked. In a new user namespace that fails in two cases runc and crun handle:
 *  - EACCES: the mapped root may not search a directory on the way (a 0700 parent, a bats or
 *    podman temporary directory). The init asks the runtime (SYNC_BIND_SOURCE, payload "open
 *    INDEX"); a helper of the runtime joins the init's mount namespace as the host's root, opens
 *    the source there (O_PATH, following symlinks as a bind does) and the init clones that fd:
 *    the tree is still made in the init's mount namespace, with the host's flags locked.
 *  - EINVAL for an idmapped non-recursive bind of a directory with submounts (/tmp): the kernel
 *    refuses to clone a mount without its locked children. The init asks "clone INDEX"; the
 *    runtime clones the source in its own mount namespace (no locked children there), and the
 *    idmapping is then attached as for any idmapped bind.
 * A third request serves linux.devices: in a user namespace the init binds the host's node, and
 * when the host has none it asks "device INDEX". The runtime, in the host's user namespace, makes
 * the node (type, major:minor, fileMode, uid/gid mapped to the host by linux.uid/gidMappings) on
 * a tmpfs that is never attached anywhere (fsopen/fsmount) and sends a nosuid,noexec clone of it,
 * which the init moves onto the target: nothing is left on the host. An ordinary user cannot make
 * a node: that is a one-line error naming linux.devices[INDEX]. */
#ifndef FSRUN_BIND_SOURCE_H
#define FSRUN_BIND_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"
#include "sync.h"

/* Init side: the detached tree of mounts[index] (recursive: AT_RECURSIVE), made with the
 * runtime's help; clone: the runtime's own clone (the EINVAL case), else the init's clone of
 * the source the runtime opened (the EACCES case). */
int bind_source_request(int sync_fd, size_t index, bool recursive, bool clone, fsrun_error_t *err);

/* Init side: a detached mount of the node of linux.devices[index], made by the runtime. */
int device_node_request(int sync_fd, size_t index, fsrun_error_t *err);

/* Runtime side: serves one SYNC_BIND_SOURCE message of the init init_pid; *fd_out is the fd to
 * send back (an O_PATH fd of the source, or a detached tree). bundle: for relative sources. */
int bind_source_serve(const oci_config *config, const char *bundle, const struct sync_msg *msg,
                      pid_t init_pid, int procfs_fd, int *fd_out, fsrun_error_t *err);

#endif
