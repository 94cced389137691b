#include "bind-source.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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
