/* Idmapped bind mounts (mounts[].uidMappings / gidMappings, the "idmap" and "ridmap" options).
 *
 * The kernel lets only a process with CAP_SYS_ADMIN over the source filesystem (the initial user
 * namespace, for host filesystems) attach an idmapping to a mount, so the work is split:
 *  1. the init, in its own mount namespace, clones the source with open_tree(OPEN_TREE_CLONE), so
 *     that the host's mount flags stay locked as for any other bind, and sends the detached tree
 *     to the runtime (SYNC_IDMAP, payload: the mounts[] index, decimal);
 *  2. the runtime makes a user namespace that carries the mount's mappings (or takes the
 *     container's own user namespace for "idmap" without mappings), sets MOUNT_ATTR_IDMAP on the
 *     tree (AT_RECURSIVE for "ridmap") and answers SYNC_GO;
 *  3. the init applies the other options and attaches the tree with move_mount.
 *
 * Mapping direction (runtime-spec config.md, as runc reads it): an entry maps on-disk ids
 * [containerID, containerID + size) to [hostID, hostID + size) as the kernel (the caller's side of
 * the mount) sees them. With a container user namespace those ids are then shown through it: a file
 * owned by 1000 on disk, mounted with {containerID: 1000, hostID: 100000, size: 1} into a container
 * that maps 0 -> 100000, belongs to root inside; without a user namespace, {1000 -> 0} does it. */
#ifndef FSRUN_IDMAP_H
#define FSRUN_IDMAP_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"
#include "sync.h"

/* uid_map / gid_map text for mappings: "CID HID SIZE\n" per entry. Caller frees. */
char *idmap_format_map(const oci_id_mapping *m, size_t n);

/* A name for a filesystem magic number (statfs f_type): "tmpfs", "ext4", ...; "0xMAGIC" in buf
 * (at least 24 bytes) for one not in the table. */
const char *idmap_fs_name(unsigned long magic, char *buf, size_t size);

/* A user namespace fd (CLOEXEC) whose uid_map and gid_map are these mappings: a short-lived child
 * is cloned into a new user namespace, its maps are written through procfs_fd (the runtime's
 * verified procfs handle), its ns/user opened, and the child reaped. */
int idmap_userns_open(const oci_id_mapping *uids, size_t n_uids, const oci_id_mapping *gids,
                      size_t n_gids, int procfs_fd, fsrun_error_t *err);

/* Init side: sends the detached tree of mounts[index] to the runtime and waits for its answer. */
int idmap_request(int sync_fd, int tree_fd, size_t index, fsrun_error_t *err);

/* Runtime side: serves one SYNC_IDMAP message of the init init_pid (the tree in msg->fd). Errors
 * name the mount: "mounts[2]: ...". */
int idmap_serve(const oci_config *config, const struct sync_msg *msg, pid_t init_pid, int procfs_fd,
                fsrun_error_t *err);

#endif
