#include "proc-mounter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sync.h"
#include "utils.h"

__attribute__((noreturn)) void proc_mounter_serve(int mntns_fd, int sock) {
  int entered = setns(mntns_fd, CLONE_NEWNS) < 0 ? -errno : 0;
  close(mntns_fd);
  for (;;) {
    struct sync_msg msg = {.fd = -1};
    int mnt = -1;
    if (sync_recv(sock, &msg) < 0)
      _exit(0);
    if (entered == 0 && msg.fd >= 0)
      mnt = (int)syscall(SYS_fsmount, msg.fd, FSMOUNT_CLOEXEC,
                         (unsigned int)strtoul(msg.data ? msg.data : "0", NULL, 10));
    if (mnt < 0)
      (void)sync_send(sock, SYNC_ERROR, entered < 0 ? -entered : errno, NULL, 0, -1);
    else
      (void)sync_send(sock, SYNC_GO, 0, NULL, 0, mnt);
    if (mnt >= 0)
      close(mnt);
    sync_msg_clear(&msg);
  }
}

/* The options of a proc entry (hidepid=2,subset=pid) onto the context: key=value or a flag. */
static int set_options(int fs, const char *data, fsrun_error_t *err) {
  cleanup_free char *copy = data != NULL ? xstrdup(data) : NULL;
  char *save = NULL;
  for (char *opt = copy ? strtok_r(copy, ",", &save) : NULL; opt;
       opt = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(opt, '=');
    long r;
    if (eq != NULL)
      *eq = '\0';
    r = eq != NULL ? syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, opt, eq + 1, 0)
                   : syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, opt, NULL, 0);
    if (r < 0)
      return fsrun_error_errno(err, "procfs option `%s`", opt);
  }
  return 0;
}

int proc_mounter_mount(int sock, const char *data, unsigned int attrs, fsrun_error_t *err) {
  cleanup_close int fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
  struct sync_msg reply = {.fd = -1};
  char payload[16];
  int len;
  if (fs < 0)
    return fsrun_error_errno(err, "fsopen proc");
  if (set_options(fs, data, err) < 0)
    return fsrun_error_code(err);
  if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fsrun_error_errno(err, "create the procfs");
  len = snprintf(payload, sizeof(payload), "%u", attrs);
  if (sync_send(sock, SYNC_GO, 0, payload, (size_t)len, fs) < 0 || sync_recv(sock, &reply) < 0)
    return fsrun_error_make(err, EPIPE, "the procfs mounter is gone");
  if (reply.type != SYNC_GO || reply.fd < 0) {
    int e = reply.errno_value ? reply.errno_value : EIO;
    sync_msg_clear(&reply);
    return fsrun_error_make(err, e, "mount the procfs (in the first init's mount namespace)");
  }
  return reply.fd; /* the message's data is NULL: nothing else to clear */
}

/* One SYNC_PROCFS request on sync_fd: the fd of the runtime's answer. */
static int runtime_request(int sync_fd, const char *payload, fsrun_error_t *err) {
  struct sync_msg reply = {.fd = -1};
  if (sync_send(sync_fd, SYNC_PROCFS, 0, payload, strlen(payload), -1) < 0 ||
      sync_recv(sync_fd, &reply) < 0)
    return fsrun_error_make(err, EPIPE, "the runtime is gone");
  if (reply.type != SYNC_GO || reply.fd < 0) {
    int e = reply.errno_value ? reply.errno_value : EIO;
    if (reply.type == SYNC_ERROR && reply.data != NULL)
      fsrun_error_take(err, e, steal_ptr(&reply.data));
    else
      fsrun_error_make(err, e, "the runtime made no procfs");
    sync_msg_clear(&reply);
    return fsrun_error_code(err);
  }
  free(reply.data);
  return reply.fd;
}

int proc_runtime_mount(int sync_fd, const char *data, unsigned int attrs, fsrun_error_t *err) {
  cleanup_close int fs = runtime_request(sync_fd, "context", err);
  char payload[32];
  if (fs < 0)
    return fsrun_error_wrap(err, "a procfs of the joined pid namespace");
  if (set_options(fs, data, err) < 0)
    return fsrun_error_code(err);
  snprintf(payload, sizeof(payload), "mount %u", attrs);
  return runtime_request(sync_fd, payload, err);
}

#define PROC_ATTRS                                                                                 \
  (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |                  \
   MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME)

int proc_runtime_serve(int pidns_fd, int *context, const char *request, int *fd_out,
                       fsrun_error_t *err) {
  unsigned int attrs;
  *fd_out = -1;
  if (request != NULL && strcmp(request, "context") == 0) {
    if (*context >= 0)
      close(*context);
    *context = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
    if (*context < 0 ||
        syscall(SYS_fsconfig, *context, FSCONFIG_SET_FD, "pidns", NULL, pidns_fd) < 0 ||
        (*fd_out = fcntl(*context, F_DUPFD_CLOEXEC, 0)) < 0)
      return fsrun_error_errno(err, "a procfs context for the joined pid namespace");
    return 0;
  }
  if (request == NULL || sscanf(request, "mount %u", &attrs) != 1 || *context < 0)
    return fsrun_error_make(err, EINVAL, "the init asked for a procfs out of order");
  /* the options are the init's (it set them on our context); the type and pid namespace ours */
  if (syscall(SYS_fsconfig, *context, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
      (*fd_out = (int)syscall(SYS_fsmount, *context, FSMOUNT_CLOEXEC, attrs & PROC_ATTRS)) < 0) {
    int saved = errno;
    close(*context);
    *context = -1;
    return fsrun_error_make(err, saved, "make a procfs of the joined pid namespace");
  }
  close(*context);
  *context = -1;
  return 0;
}
