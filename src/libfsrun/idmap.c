/* Idmapped bind mounts: the runtime's half (a user namespace carrying the mapping, MOUNT_ATTR_IDMAP
 * on the tree the init cloned) and the init's request. See idmap.h for the split. */
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mounts.h"
#include "procfs.h"
#include "utils.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

char *idmap_format_map(const oci_id_mapping *m, size_t n) {
  /* three 10-digit numbers, two spaces and a newline per line */
  char *buf = xmalloc0(n * 34 + 1);
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(buf + len, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n", m[i].container_id,
                           m[i].host_id, m[i].size);
  return buf;
}

const char *idmap_fs_name(unsigned long magic, char *buf, size_t size) {
  static const struct {
    unsigned long magic;
    const char *name;
  } names[] = {
      {TMPFS_MAGIC, "tmpfs"},
      {EXT4_SUPER_MAGIC, "ext4"}, /* ext2 and ext3 share it */
      {XFS_SUPER_MAGIC, "xfs"},
      {BTRFS_SUPER_MAGIC, "btrfs"},
      {OVERLAYFS_SUPER_MAGIC, "overlay"},
      {PROC_SUPER_MAGIC, "proc"},
      {SYSFS_MAGIC, "sysfs"},
      {CGROUP_SUPER_MAGIC, "cgroup"},
      {CGROUP2_SUPER_MAGIC, "cgroup2"},
      {DEVPTS_SUPER_MAGIC, "devpts"},
      {NFS_SUPER_MAGIC, "nfs"},
      {RAMFS_MAGIC, "ramfs"},
      {SQUASHFS_MAGIC, "squashfs"},
      {FUSE_SUPER_MAGIC, "fuse"},
      {F2FS_SUPER_MAGIC, "f2fs"},
      {MSDOS_SUPER_MAGIC, "vfat"},
      {PSTOREFS_MAGIC, "pstore"},
      {SECURITYFS_MAGIC, "securityfs"},
      {DEBUGFS_MAGIC, "debugfs"},
      {TRACEFS_MAGIC, "tracefs"},
      {0x19800202UL, "mqueue"},
      {0x2fc12fc1UL, "zfs"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].magic == magic)
      return names[i].name;
  snprintf(buf, size, "0x%lx", magic);
  return buf;
}

/* Opens the user namespace of pid through the runtime's procfs handle and checks that it is one. */
static int open_pid_userns(int procfs_fd, pid_t pid, fsrun_error_t *err) {
  char path[64];
  cleanup_close int fd = -1;
  struct statfs sfs;
  snprintf(path, sizeof(path), "%d/ns/user", (int)pid);
  /* ns/user is a magic link into nsfs: openat follows it, procfs_openat would refuse it */
  fd = openat(procfs_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return fsrun_error_errno(err, "open `/proc/%s`", path);
  if (fstatfs(fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC ||
      ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWUSER)
    return fsrun_error_make(err, EINVAL, "`/proc/%s` is not a user namespace", path);
  return steal_fd(&fd);
}

int idmap_userns_open(const oci_id_mapping *uids, size_t n_uids, const oci_id_mapping *gids,
                      size_t n_gids, int procfs_fd, fsrun_error_t *err) {
  cleanup_free char *uid_map = idmap_format_map(uids, n_uids);
  cleanup_free char *gid_map = idmap_format_map(gids, n_gids);
  int hold[2];
  int fd = -1, status;
  char path[64];
  long child;

  if (pipe2(hold, O_CLOEXEC) < 0)
    return fsrun_error_errno(err, "pipe");
  /* fork-like (no new stack) into a new user namespace; no exit signal, so that a caller waiting
   * for SIGCHLD from the container never sees this child */
  child = syscall(SYS_clone, (unsigned long)CLONE_NEWUSER, NULL, NULL, NULL, NULL);
  if (child == 0) {
    char c;
    /* keeps the namespace alive until the runtime has opened it: EOF on the pipe */
    close(hold[1]);
    while (read(hold[0], &c, 1) < 0 && errno == EINTR)
      ;
    _exit(0);
  }
  close(hold[0]);
  if (child < 0) {
    fd = fsrun_error_errno(err, "clone a process into a new user namespace");
    close(hold[1]);
    return fd;
  }

  snprintf(path, sizeof(path), "%ld/gid_map", child);
  if (procfs_write(procfs_fd, path, gid_map, strlen(gid_map), err) < 0) {
    fsrun_error_wrap(err, "gidMappings");
  } else {
    snprintf(path, sizeof(path), "%ld/uid_map", child);
    if (procfs_write(procfs_fd, path, uid_map, strlen(uid_map), err) < 0)
      fsrun_error_wrap(err, "uidMappings");
    else
      fd = open_pid_userns(procfs_fd, (pid_t)child, err);
  }
  close(hold[1]);
  while (waitpid((pid_t)child, &status, __WALL) < 0 && errno == EINTR)
    ;
  return fd;
}

int idmap_request(int sync_fd, int tree_fd, size_t index, fsrun_error_t *err) {
  struct sync_msg msg;
  char payload[32];
  int len = snprintf(payload, sizeof(payload), "%zu", index);
  if (sync_fd < 0)
    return fsrun_error_make(err, 0, "mounts[%zu]: idmapped mounts need the runtime", index);
  if (sync_send(sync_fd, SYNC_IDMAP, 0, payload, (size_t)len, tree_fd) < 0 ||
      sync_recv(sync_fd, &msg) < 0)
    return fsrun_error_make(err, 0, "mounts[%zu]: the runtime is gone", index);
  if (msg.type != SYNC_GO) {
    sync_msg_clear(&msg);
    return fsrun_error_make(err, 0, "mounts[%zu]: the runtime did not idmap the mount", index);
  }
  sync_msg_clear(&msg);
  return 0;
}

/* Why mount_setattr(MOUNT_ATTR_IDMAP) failed, in the words of mounts[index]. */
static int idmap_error(int errnum, int tree_fd, const oci_mount *m, size_t index, bool recursive,
                       fsrun_error_t *err) {
  const char *source = m->source ? m->source : "";
  struct statfs sfs;
  char buf[24];
  const char *fs = fstatfs(tree_fd, &sfs) == 0
                       ? idmap_fs_name((unsigned long)sfs.f_type, buf, sizeof(buf))
                       : "unknown";
  if (errnum == EINVAL)
    return fsrun_error_make(err, EINVAL,
                            "mounts[%zu]: `%s` is on a filesystem (%s)%s that does not support "
                            "idmapped mounts",
                            index, source, fs, recursive ? ", or has a submount," : "");
  if (errnum == EPERM)
    return fsrun_error_make(err, EPERM,
                            "mounts[%zu]: idmapping `%s` (%s) was refused: it needs CAP_SYS_ADMIN "
                            "in the initial user namespace, and a source that is not idmapped "
                            "already",
                            index, source, fs);
  if (errnum == ENOSYS)
    return fsrun_error_make(err, ENOSYS,
                            "mounts[%zu]: idmapped mounts need Linux 5.12 or newer (mount_setattr)",
                            index);
  return fsrun_error_make(err, errnum, "mounts[%zu]: idmap `%s` (%s)", index, source, fs);
}

int idmap_serve(const oci_config *config, const struct sync_msg *msg, pid_t init_pid, int procfs_fd,
                fsrun_error_t *err) {
  struct mount_options o __attribute__((cleanup(mount_options_free))) = {0};
  cleanup_close int userns_fd = -1;
  struct mount_attr attr;
  const oci_mount *m;
  unsigned long index;
  char *end = NULL;

  if (msg->fd < 0 || msg->data == NULL)
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed idmap request");
  errno = 0;
  index = strtoul(msg->data, &end, 10);
  if (errno != 0 || end == msg->data || *end != '\0' || index >= config->n_mounts)
    return fsrun_error_make(err, EINVAL, "the container init sent a malformed idmap request");
  m = &config->mounts[index];
  if (mount_options_parse(&m->options, &o, err) < 0)
    return fsrun_error_wrap(err, "mounts[%lu]", index);
  if (geteuid() != 0)
    return fsrun_error_make(err, EPERM,
                            "mounts[%lu]: idmapped mounts need CAP_SYS_ADMIN in the initial user "
                            "namespace: not available to a rootless fsrun",
                            index);

  if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0)
    userns_fd = idmap_userns_open(m->uid_mappings, m->n_uid_mappings, m->gid_mappings,
                                  m->n_gid_mappings, procfs_fd, err);
  else /* "idmap" without mappings: the container's own user namespace */
    userns_fd = open_pid_userns(procfs_fd, init_pid, err);
  if (userns_fd < 0)
    return fsrun_error_wrap(err, "mounts[%lu]", index);

  memset(&attr, 0, sizeof(attr));
  attr.attr_set = MOUNT_ATTR_IDMAP;
  attr.userns_fd = (uint64_t)userns_fd;
  if (mount_setattr(msg->fd, "", AT_EMPTY_PATH | (o.idmap_recursive ? AT_RECURSIVE : 0), &attr,
                    sizeof(attr)) < 0)
    return idmap_error(errno, msg->fd, m, (size_t)index, o.idmap_recursive, err);
  return 0;
}
