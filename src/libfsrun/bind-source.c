#include "bind-source.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mounts.h"
#include "utils.h"

int bind_source_request(int sync_fd, size_t index, bool recursive, bool clone, fsrun_error_t *err) {
  struct sync_msg msg;
  char payload[48];
  int len = snprintf(payload, sizeof(payload), "%s %zu", clone ? "clone" : "open", index);
  int tree;
  if (sync_fd < 0)
    return fsrun_error_make(err, EACCES, "mounts[%zu]: no runtime to open the bind source", index);
  if (sync_send(sync_fd, SYNC_BIND_SOURCE, 0, payload, (size_t)len, -1) < 0 ||
      sync_recv(sync_fd, &msg) < 0)
    return fsrun_error_make(err, 0, "mounts[%zu]: the runtime is gone", index);
  if (msg.type != SYNC_GO || msg.fd < 0) {
    sync_msg_clear(&msg);
    return fsrun_error_make(err, 0, "mounts[%zu]: the runtime did not open the bind source", index);
  }
  if (clone)
    return steal_fd(&msg.fd);
  tree = open_tree(msg.fd, "",
                   AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                       (recursive ? AT_RECURSIVE : 0));
  if (tree < 0)
    fsrun_error_errno(err, "mounts[%zu]: clone the bind source the runtime opened", index);
  sync_msg_clear(&msg);
  return tree;
}

int device_node_request(int sync_fd, size_t index, fsrun_error_t *err) {
  struct sync_msg msg;
  char payload[48];
  int len = snprintf(payload, sizeof(payload), "device %zu", index);
  if (sync_fd < 0)
    return fsrun_error_make(err, ENOENT, "linux.devices[%zu]: not on the host", index);
  if (sync_send(sync_fd, SYNC_BIND_SOURCE, 0, payload, (size_t)len, -1) < 0 ||
      sync_recv(sync_fd, &msg) < 0)
    return fsrun_error_make(err, 0, "linux.devices[%zu]: the runtime is gone", index);
  if (msg.type != SYNC_GO || msg.fd < 0) {
    sync_msg_clear(&msg);
    return fsrun_error_make(err, 0, "linux.devices[%zu]: the runtime did not make the node", index);
  }
  return steal_fd(&msg.fd);
}

/* the host's id of container id `id` (linux.uidMappings/gidMappings); no mappings: the same */
static int map_to_host(const oci_id_mapping *m, size_t n, uint32_t id, uint32_t *out) {
  if (n == 0) {
    *out = id;
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && id - m[i].container_id < m[i].size) {
      *out = m[i].host_id + (id - m[i].container_id);
      return 0;
    }
  return -1;
}

static int device_node_attrs(const oci_linux *l, unsigned long index, mode_t *type, uid_t *uid,
                             gid_t *gid, fsrun_error_t *err) {
  const oci_device *d = &l->devices[index];
  const char *t = d->type ? d->type : "";
  uint32_t u, g;
  if (strcmp(t, "c") == 0 || strcmp(t, "u") == 0)
    *type = S_IFCHR;
  else if (strcmp(t, "b") == 0)
    *type = S_IFBLK;
  else
    return fsrun_error_make(err, EINVAL, "linux.devices[%lu]: not a device the runtime makes",
                            index);
  if (map_to_host(l->uid_mappings, l->n_uid_mappings, d->has_uid ? d->uid : 0, &u) < 0 ||
      map_to_host(l->gid_mappings, l->n_gid_mappings, d->has_gid ? d->gid : 0, &g) < 0)
    return fsrun_error_make(
        err, EINVAL, "linux.devices[%lu]: uid or gid is not mapped in the user namespace", index);
  *uid = u;
  *gid = g;
  return 0;
}

static int device_node_denied(const oci_device *d, unsigned long index, fsrun_error_t *err) {
  return fsrun_error_make(err, EPERM,
                          "linux.devices[%lu]: `%s` is not on the host, and only root can create "
                          "a device node",
                          index, d->path);
}

/* The node of linux.devices[index] on a tmpfs that is never attached: the returned clone of the
 * node holds it, and it is gone with the container's mount. */
static int device_node_make(const oci_config *config, unsigned long index, fsrun_error_t *err) {
  const oci_linux *l = config->linux_;
  const oci_device *d;
  cleanup_close int fs = -1;
  cleanup_close int mnt = -1;
  mode_t type = 0, mode;
  uid_t uid = 0;
  gid_t gid = 0;
  int tree;

  if (l == NULL || index >= l->n_devices)
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed device request");
  d = &l->devices[index];
  mode = d->has_file_mode ? (mode_t)(d->file_mode & 07777) : 0666;
  if (device_node_attrs(l, index, &type, &uid, &gid, err) < 0)
    return fsrun_error_code(err);
  fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 && errno == EPERM)
    return device_node_denied(d, index, err);
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
      fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
      (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
    return fsrun_error_errno(err, "linux.devices[%lu]: a tmpfs for `%s`", index, d->path);
  if (mknodat(mnt, "node", type | mode, makedev(d->major, d->minor)) < 0)
    return errno == EPERM
               ? device_node_denied(d, index, err)
               : fsrun_error_errno(err, "linux.devices[%lu]: mknod `%s`", index, d->path);
  /* the runtime's umask must not narrow fileMode */
  if (fchmodat(mnt, "node", mode, 0) < 0 || fchownat(mnt, "node", uid, gid, 0) < 0)
    return fsrun_error_errno(err, "linux.devices[%lu]: mode and owner of `%s`", index, d->path);
  tree = open_tree(mnt, "node", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return fsrun_error_errno(err, "linux.devices[%lu]: clone the node `%s`", index, d->path);
  return tree;
}

static int device_node_serve(const oci_config *config, const char *arg, int *fd_out,
                             fsrun_error_t *err) {
  char *end = NULL;
  unsigned long index;
  errno = 0;
  index = strtoul(arg, &end, 10);
  if (errno != 0 || *end != '\0' || end == arg)
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed device request");
  *fd_out = device_node_make(config, index, err);
  return *fd_out < 0 ? fsrun_error_code(err) : 0;
}

/* A helper joins the mount namespace of init_pid and opens path there as O_PATH; the fd comes
 * back over a socketpair. setns() needs a single-threaded process: hence the fork. */
static int open_in_mntns(pid_t init_pid, int procfs_fd, const char *path, fsrun_error_t *err) {
  char ns_path[64];
  cleanup_close int mntns = -1;
  int fds[2], status = 0, result;
  struct sync_msg msg = {.fd = -1};
  pid_t child;

  snprintf(ns_path, sizeof(ns_path), "%d/ns/mnt", (int)init_pid);
  mntns = openat(procfs_fd, ns_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (mntns < 0)
    return fsrun_error_errno(err, "open `/proc/%s`", ns_path);
  if (sync_socketpair(fds, err) < 0)
    return fsrun_error_code(err);
  child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return fsrun_error_errno(err, "fork");
  }
  if (child == 0) {
    int fd;
    close(fds[0]);
    if (setns(mntns, CLONE_NEWNS) < 0)
      _exit(errno);
    fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
      _exit(errno);
    _exit(sync_send(fds[1], SYNC_GO, 0, NULL, 0, fd) < 0 ? EPIPE : 0);
  }
  close(fds[1]);
  result = sync_recv(fds[0], &msg);
  close(fds[0]);
  while (waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  if (result == 0 && msg.fd >= 0)
    return steal_fd(&msg.fd);
  sync_msg_clear(&msg);
  return fsrun_error_make(err, WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : EIO,
                          "open `%s` in the container's mount namespace", path);
}

int bind_source_serve(const oci_config *config, const char *bundle, const struct sync_msg *msg,
                      pid_t init_pid, int procfs_fd, int *fd_out, fsrun_error_t *err) {
  struct mount_options o __attribute__((cleanup(mount_options_free))) = {0};
  cleanup_free char *path = NULL;
  const oci_mount *m;
  unsigned long index;
  char *end = NULL;
  bool clone;

  *fd_out = -1;
  if (msg->data != NULL && strncmp(msg->data, "device ", 7) == 0)
    return device_node_serve(config, msg->data + 7, fd_out, err);
  if (msg->data == NULL || (strncmp(msg->data, "open ", 5) != 0 && strncmp(msg->data, "clone ", 6)))
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed bind request");
  clone = msg->data[0] == 'c';
  errno = 0;
  index = strtoul(msg->data + (clone ? 6 : 5), &end, 10);
  if (errno != 0 || *end != '\0' || index >= config->n_mounts)
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed bind request");
  m = &config->mounts[index];
  if (m->source == NULL || !mount_entry_is_bind(m))
    return fsrun_error_make(err, EINVAL, "mounts[%lu]: not a bind mount", index);
  if (mount_options_parse(&m->options, &o, err) < 0)
    return fsrun_error_wrap(err, "mounts[%lu]", index);
  /* only an idmapped bind is cloned out here: its flags are the runtime's to set anyway */
  if (clone && !o.idmap && m->n_uid_mappings == 0 && m->n_gid_mappings == 0)
    return fsrun_error_make(err, EPERM,
                            "mounts[%lu]: only an idmapped bind is cloned by the "
                            "runtime",
                            index);
  path = m->source[0] == '/' ? xstrdup(m->source) : xasprintf("%s/%s", bundle, m->source);
  if (!clone) {
    *fd_out = open_in_mntns(init_pid, procfs_fd, path, err);
    return *fd_out < 0 ? fsrun_error_wrap(err, "mounts[%lu]: bind source", index) : 0;
  }
  *fd_out =
      open_tree(AT_FDCWD, path,
                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | ((o.flags & MS_REC) ? AT_RECURSIVE : 0));
  if (*fd_out < 0)
    return fsrun_error_errno(err, "mounts[%lu]: bind source `%s`", index, path);
  return 0;
}
