/* fsrun checkpoint: criu dump (or pre-dump) of a running container's process tree. */
#include "criu-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "mounts.h"
#include "status.h"
#include "utils.h"

static void cleanup_statusp(struct container_status *st) {
  status_clear(st);
}
/* DIR made (0700, with its parents, as runc does) when missing and returned absolute (criu
 * resolves relative paths from its work dir, the caller's are from the current directory). */
char *criu_prepare_dir(const char *what, const char *option, const char *dir, fsrun_error_t *err) {
  cleanup_free char *path = xstrdup(dir);
  char *abs;
  for (char *p = path + 1; *p != '\0'; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
      fsrun_error_errno(err, "%s: %s `%s`", what, option, dir);
      return NULL;
    }
    *p = '/';
  }
  if (mkdir(path, 0700) < 0 && errno != EEXIST) {
    fsrun_error_errno(err, "%s: %s `%s`", what, option, dir);
    return NULL;
  }
  abs = realpath(dir, NULL);
  if (abs == NULL)
    fsrun_error_errno(err, "%s: %s `%s`", what, option, dir);
  return abs;
}

/* Whether the mount MNT_ID is one of PID's mount namespace (a line of its mountinfo). */
static bool mount_in_ns_of(pid_t pid, unsigned long long mnt_id) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *path = xasprintf("/proc/%d/mountinfo", pid);
  cleanup_free char *info = NULL;
  if (read_file_at(AT_FDCWD, path, &info, NULL, &ignored) < 0)
    return true; /* let criu say what it finds */
  for (char *line = info; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
    unsigned long long id;
    if (*line == '\n')
      line++;
    if (sscanf(line, "%llu ", &id) == 1 && id == mnt_id)
      return true;
  }
  return false;
}

/* A pty slave among the process's stdio (process.terminal): its master lives outside the
 * container (the console socket's receiver), so criu dumps it as external, keyed by the slave's
 * "tty[RDEV:DEV]" as criu names it; restore gives the process a new pty under that key. */
static bool stdio_tty_key(const char *link, char *key, size_t size) {
  struct stat st;
  if (stat(link, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < 136 ||
      major(st.st_rdev) > 143) /* Unix98 pty slaves */
    return false;
  snprintf(key, size, "tty[%llx:%llx]", (unsigned long long)st.st_rdev,
           (unsigned long long)st.st_dev);
  return true;
}

/* fd FD of PID as the checkpoint records it: "pipe:[N]", "socket:[N]" or a path; a file on a mount
 * outside the container's mount namespace (conmon gives the container the host's /dev/null as
 * stdin) as criu's external file "file[MNT:INO]" (hex), which the dump must declare (--external,
 * else `Can't lookup mount`) and restore replaces with its own fd; the container's pty as
 * "tty[RDEV:DEV]", external too (restore gives it a new pty). Empty when closed. */
static void describe_stdio(pid_t pid, int fd, bool terminal, char *out, size_t size,
                           bool *external) {
  char link[64];
  struct statx stx;
  ssize_t n;
  *external = false;
  snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
  if (terminal && stdio_tty_key(link, out, size)) {
    *external = true;
    return;
  }
  n = readlink(link, out, size - 1);
  out[n < 0 ? 0 : n] = '\0';
  if (n <= 0 || out[0] != '/')
    return;
  if (statx(AT_FDCWD, link, 0, STATX_MNT_ID | STATX_INO, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID) || mount_in_ns_of(pid, stx.stx_mnt_id))
    return;
  snprintf(out, size, "file[%llx:%llx]", (unsigned long long)stx.stx_mnt_id,
           (unsigned long long)stx.stx_ino);
  *external = true;
}

/* What the process's fds 0-2 are, one a line, beside the images (restore connects its own stdio
 * where these were pipes or external files); the external ones declared to criu. */
static int save_stdio(struct criu_argv *a, pid_t pid, const char *image_dir, bool terminal,
                      fsrun_error_t *err) {
  char text[3 * (PATH_MAX + 1)];
  size_t len = 0;
  cleanup_close int dirfd = open(image_dir, O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return fsrun_error_errno(err, "checkpoint: open `%s`", image_dir);
  for (int fd = 0; fd < 3; fd++) {
    char *line = text + len;
    bool external;
    describe_stdio(pid, fd, terminal, line, PATH_MAX + 1, &external);
    /* once per file: stdin, stdout and stderr are often the same /dev/null */
    if (external && strstr(text, line) == line) {
      criu_argv_add(a, "--external");
      criu_argv_add(a, line);
    }
    len += strlen(line);
    text[len++] = '\n';
  }
  return write_file_atomic_at(dirfd, CRIU_STDIO_FILE, text, len, 0600, err);
}

static void add_bind_mounts(struct criu_argv *a, const oci_config *config) {
  /* the pty's slave bound on /dev/console: criu 3.17 refuses a devpts bind whose pty master it
   * does not dump ("Unable to find a master for /0"); restore binds the new slave there */
  if (config->process != NULL && config->process->terminal) {
    criu_argv_add(a, "--ext-mount-map");
    criu_argv_add(a, CRIU_CONSOLE ":" CRIU_CONSOLE);
  }
  for (size_t i = 0; i < config->n_mounts; i++)
    if (mount_entry_is_bind(&config->mounts[i])) {
      /* external to the container: criu records the destination as the key */
      criu_argv_add(a, "--ext-mount-map");
      criu_argv_addf(a, "%s:%s", config->mounts[i].destination, config->mounts[i].destination);
    }
}

/* A paused container (containerd's client pauses a task before it checkpoints it): criu seizes
 * the frozen tasks through the freezer (--freeze-cgroup) and leaves the cgroup frozen after a
 * --leave-running dump. Only cgroup v2's cgroup.freeze, where criu runs here. */
static int add_freeze_cgroup(struct criu_argv *a, int dirfd, const char *id,
                             const struct container_status *st, const char *what,
                             fsrun_error_t *err) {
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  char link[64], dir[PATH_MAX];
  ssize_t n;
  int fd;

  if (status_open_cgroup(dirfd, id, st, &cg, err) < 0)
    return fsrun_error_code(err);
  fd = cgroup_unified_fd(cg);
  if (fd < 0)
    return fsrun_error_make(err, 0,
                            "%s: container `%s` is paused and has no cgroup v2 directory: "
                            "resume it first",
                            what, id);
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  n = readlink(link, dir, sizeof(dir) - 1);
  if (n < 0)
    return fsrun_error_make(err, errno, "%s: readlink %s", what, link);
  dir[n] = '\0';
  criu_argv_add(a, "--freeze-cgroup");
  criu_argv_add(a, dir);
  return 0;
}

int criu_checkpoint(const struct fsrun_context *ctx, const char *id,
                    const struct criu_checkpoint_opts *o, fsrun_error_t *err) {
  const char *what = o->pre_dump ? "checkpoint --pre-dump" : "checkpoint";
  __attribute__((cleanup(cleanup_statusp))) struct container_status st = {0};
  cleanup_oci_config oci_config *config = NULL;
  __attribute__((cleanup(criu_argv_free))) struct criu_argv a = {0};
  const struct criu_child child = {.pass_fd = o->status_fd};
  cleanup_close int dirfd = -1;
  cleanup_free char *criu = NULL;
  cleanup_free char *image_dir = NULL;
  cleanup_free char *work_dir = NULL;
  const char *status;
  bool paused;
  pid_t pid;

  if (criu_check_lazy_checkpoint_opts(o, err) < 0)
    return fsrun_error_code(err);
  dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0)
    return dirfd;
  if (status_read(dirfd, &st, err) < 0)
    return fsrun_error_code(err);
  status = status_derive(dirfd, &st, &pid);
  paused = strcmp(status, "paused") == 0;
  if (strcmp(status, "running") != 0 && !paused)
    return fsrun_error_make(err, 0, "%s: container `%s` is %s, not running", what, id, status);
  if (geteuid() != 0)
    return fsrun_error_make(err, 0,
                            "%s: criu needs root: an ordinary user's container cannot "
                            "be checkpointed",
                            what);
  if (status_read_config(dirfd, st.bundle, &config, err) < 0)
    return fsrun_error_code(err);
  if (criu_check_config(config, what, err) < 0)
    return fsrun_error_code(err);
  criu = criu_find_usable(ctx->state_root, what, err);
  if (criu == NULL ||
      (o->c.lazy_pages && criu_check_lazy_pages(ctx->state_root, criu, what, err) < 0))
    return fsrun_error_code(err);
  if (!o->pre_dump && criu_check_network_lock(config, what, err) < 0)
    return fsrun_error_code(err);
  image_dir =
      criu_prepare_dir(what, "--image-path", o->c.image_path ? o->c.image_path : "checkpoint", err);
  if (image_dir == NULL)
    return fsrun_error_code(err);
  work_dir = o->c.work_path ? criu_prepare_dir(what, "--work-path", o->c.work_path, err)
                            : xstrdup(image_dir);
  if (work_dir == NULL)
    return fsrun_error_code(err);

  criu_argv_common(&a, criu, o->pre_dump ? "pre-dump" : "dump", image_dir, work_dir, &o->c);
  criu_argv_add(&a, "--tree");
  criu_argv_addf(&a, "%d", pid);
  if (o->leave_running && !o->pre_dump)
    criu_argv_add(&a, "--leave-running");
  if (o->pre_dump || o->parent_path != NULL)
    criu_argv_add(&a, "--track-mem");
  if (o->parent_path != NULL) {
    criu_argv_add(&a, "--prev-images-dir");
    criu_argv_add(&a, o->parent_path);
  }
  criu_argv_page_server(&a, o);
  add_bind_mounts(&a, config);
  if (paused && add_freeze_cgroup(&a, dirfd, id, &st, what, err) < 0)
    return fsrun_error_code(err);
  if (save_stdio(&a, pid, image_dir, config->process != NULL && config->process->terminal, err) < 0)
    return fsrun_error_code(err);
  /* a lazy dump returns once the restore side has pulled every page */
  if (criu_run(&a, what, work_dir, o->pre_dump ? "pre-dump" : "dump", &child, err) < 0)
    return fsrun_error_code(err);
  if (o->pre_dump || o->leave_running)
    return 0;
  /* criu killed the processes: the container is gone, as after runc's checkpoint */
  return container_delete(ctx, id, true, err);
}
