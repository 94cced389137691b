#include "status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cgroup.h"
#include "passwd.h"
#include "procfs.h"
#include "sealed-image.h"
#include "state-root.h"
#include "status-kept.h"
#include "utils.h"

int status_validate_id(const char *id, fsrun_error_t *err) {
  size_t len = id ? strlen(id) : 0;
  /* fsrun_error_take: the message says it all, without strerror(EINVAL) after it */
  if (len == 0)
    return fsrun_error_take(err, EINVAL, xstrdup("container id must not be empty"));
  if (len > 1024)
    return fsrun_error_take(err, EINVAL, xstrdup("container id is longer than 1024 characters"));
  /* the state root's dot-names are fsrun's own (the sandbox's shared bundle); list hides them */
  if (id[0] == '.')
    return fsrun_error_take(
        err, EINVAL,
        xasprintf("invalid container id `%s`: ids starting with '.' are reserved", id));
  for (const char *p = id; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '+' || c == '-' || c == '.'))
      return fsrun_error_take(
          err, EINVAL,
          xasprintf("invalid container id `%s`: only letters, digits and _+.- are allowed", id));
  }
  return 0;
}

/* The state root for one use: the one main checked and holds, or (made since, or another root)
 * opened and checked now, closed by the caller through *own. 0 with *fd (-1: missing), or -1. */
static int root_dir(const struct fsrun_context *ctx, int *fd, int *own, fsrun_error_t *err) {
  *own = -1;
  if (ctx->state_root_held) {
    *fd = ctx->state_root_fd;
    return 0;
  }
  if (state_root_open(ctx->state_root, own, err) < 0)
    return fsrun_error_code(err);
  *fd = *own;
  return 0;
}

int status_dir_root_open(const struct fsrun_context *ctx, fsrun_error_t *err) {
  cleanup_close int own = -1;
  int rootfd = -1, fd;
  if (root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_code(err);
  if (rootfd < 0)
    return fsrun_error_take(err, ENOENT, xasprintf("no state root `%s`", ctx->state_root));
  fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open the state root `%s`", ctx->state_root);
  return fd;
}

int status_dir_create(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  const char *root = ctx->state_root;
  cleanup_close int own = -1;
  int rootfd = -1, fd;
  if (!ctx->state_root_held && state_root_make(root, err) < 0)
    return fsrun_error_code(err);
  if (root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_code(err);
  if (rootfd < 0)
    return fsrun_error_make(err, ENOENT, "open the state root `%s`", root);
  if (mkdirat(rootfd, id, 0700) < 0) {
    if (errno == EEXIST)
      return fsrun_error_take(err, EEXIST, xasprintf("container `%s` already exists", id));
    return fsrun_error_errno(err, "create the state directory `%s/%s`", root, id);
  }
  fd = openat(rootfd, id, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open the state directory `%s/%s`", root, id);
  return fd;
}

int status_dir_open(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  cleanup_close int own = -1;
  int rootfd = -1, fd;
  if (status_validate_id(id, err) < 0 || root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_code(err);
  fd = rootfd < 0 ? -1 : openat(rootfd, id, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (rootfd < 0 || errno == ENOENT)
      return fsrun_error_take(err, ENOENT, xasprintf("container `%s` does not exist", id));
    return fsrun_error_errno(err, "open the state directory `%s/%s`", ctx->state_root, id);
  }
  return fd;
}

/* The last close of a removed directory frees its block on a disk filesystem, and on a mount
 * with `discard` and no journal (ext4) that waits for the device's discard: 0.1 to 30 ms of the
 * caller's wall time. Where the directory is not on a tmpfs a copy of its fd goes to the kernel's
 * collector (sealed_close_mounts_later), whose worker then holds the last reference; the name is
 * gone already. When a caller's own fd of it is closed later, that close may be the last after
 * all (destroy closes the caller's first). */
static void close_removed_dir_later(int dfd) {
  struct statfs fs;
  if (fstatfs(dfd, &fs) == 0 && fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC)
    sealed_close_mounts_later(fcntl(dfd, F_DUPFD_CLOEXEC, 0), -1);
}

/* rootfd's entry name and the files in it removed. guard: a kept dir (status-kept.h) is removed
 * under the state root's lock, so that its run's own release (status_kept_release) never moves it
 * into a slot half-way; one that run moved there since our open (the run is over) is left. */
static int remove_dir_at(int rootfd, const char *root, const char *name, bool guard,
                         fsrun_error_t *err) {
  cleanup_dir DIR *dir = NULL;
  cleanup_close int root_lock = -1;
  struct dirent *de;
  struct stat named, opened;
  int dfd = openat(rootfd, name, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return errno == ENOENT ? 0 : fsrun_error_errno(err, "open the state directory of `%s`", name);
  if (guard && status_kept_dir(dfd)) {
    root_lock = status_kept_lock_root(rootfd);
    if (root_lock < 0) {
      close(dfd);
      return fsrun_error_errno(err, "lock the state root to remove `%s`", name);
    }
    if (fstat(dfd, &opened) < 0 || fstatat(rootfd, name, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
        opened.st_ino != named.st_ino || opened.st_dev != named.st_dev) {
      close(dfd);
      return 0;
    }
  }
  dir = fdopendir(dfd);
  if (dir == NULL) {
    close(dfd);
    return fsrun_error_errno(err, "read the state directory of `%s`", name);
  }
  /* only files live here: the state file, the exec fifo, temporary files; and, from a restore
   * that was killed while criu ran, an empty stage directory (criu-restore-binds.c) */
  while ((de = readdir(dir)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (unlinkat(dfd, de->d_name, 0) == 0 || errno == ENOENT)
      continue;
    if (errno == EISDIR && (unlinkat(dfd, de->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT))
      continue;
    return fsrun_error_errno(err, "remove `%s/%s/%s`", root, name, de->d_name);
  }
  if (unlinkat(rootfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return fsrun_error_errno(err, "remove the state directory `%s/%s`", root, name);
  close_removed_dir_later(dfd);
  return 0;
}

int status_dir_remove(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  cleanup_close int own = -1;
  int rootfd = -1;
  if (root_dir(ctx, &rootfd, &own, err) < 0)
    return fsrun_error_code(err);
  if (rootfd < 0)
    return 0;
  return remove_dir_at(rootfd, ctx->state_root, id, true, err);
}

int status_dir_remove_name(int rootfd, const char *name, fsrun_error_t *err) {
  return remove_dir_at(rootfd, ".", name, false, err);
}

int status_root_dir(const struct fsrun_context *ctx, int *fd, int *own, fsrun_error_t *err) {
  return root_dir(ctx, fd, own, err);
}

/* tmp in name's place. Over an existing name, an exchange and then the old file's unlink: ext4
 * starts writing a file renamed over another to the disk at once (auto_da_alloc), and the unlink
 * of that short-lived state file at delete then waits for the I/O; an exchanged file is dropped
 * unwritten. A first write (ENOENT) and a filesystem without exchanges (EINVAL) rename; a
 * directory at name is put back and refused, as a rename refuses it. */
static int exchange_at(int dirfd, const char *tmp, const char *name) {
  if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
    if (unlinkat(dirfd, tmp, 0) == 0 || errno != EISDIR)
      return 0;
    renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE);
    errno = EISDIR;
    return -1;
  }
  if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
    return -1;
  return renameat(dirfd, tmp, dirfd, name);
}

static int write_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        bool exchange, fsrun_error_t *err) {
  char tmp[PATH_MAX];
  cleanup_close int fd = -1;
  snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid());
  /* a new file: never one left at the temporary name (a hard link, a FIFO) by whoever may write
   * the directory (a --pid-file's); a stale one of a dead fsrun with our pid goes first */
  if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
    return fsrun_error_errno(err, "remove `%s`", tmp);
  fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return fsrun_error_errno(err, "create `%s`", tmp);
  /* no fsync: the state means nothing after a reboot; the exchange or rename alone makes readers
   * see the old or the new file, never a partial one nor none */
  if (safe_write_all(fd, data, len) < 0 ||
      (exchange ? exchange_at(dirfd, tmp, name) : renameat(dirfd, tmp, dirfd, name)) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return fsrun_error_make(err, saved, "write `%s`", name);
  }
  return 0;
}

int status_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                             fsrun_error_t *err) {
  return write_atomic(dirfd, name, data, len, mode, false, err);
}

int status_replace_file(int dirfd, const char *name, const void *data, size_t len,
                        fsrun_error_t *err) {
  return write_atomic(dirfd, name, data, len, 0600, true, err);
}

/* --- the state file ----------------------------------------------------------------------------
 */

static void gen_string(yajl_gen g, const char *s) {
  yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gen_kv_string(yajl_gen g, const char *key, const char *value) {
  gen_string(g, key);
  if (value)
    gen_string(g, value);
  else
    yajl_gen_null(g);
}

static void gen_kv_int(yajl_gen g, const char *key, long long value) {
  gen_string(g, key);
  yajl_gen_integer(g, value);
}

static void gen_strv(yajl_gen g, const oci_strv *v) {
  yajl_gen_array_open(g);
  for (size_t i = 0; i < v->len; i++)
    gen_string(g, v->items[i]);
  yajl_gen_array_close(g);
}

static void gen_hooks(yajl_gen g, const char *key, const oci_hook_list *hooks) {
  gen_string(g, key);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < hooks->len; i++) {
    const oci_hook *h = &hooks->items[i];
    yajl_gen_map_open(g);
    gen_kv_string(g, "path", h->path);
    gen_string(g, "args");
    gen_strv(g, &h->args);
    gen_string(g, "env");
    gen_strv(g, &h->env);
    if (h->has_timeout)
      gen_kv_int(g, "timeout", h->timeout);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

static void gen_annotations(yajl_gen g, const oci_map *m) {
  gen_string(g, "annotations");
  yajl_gen_map_open(g);
  for (size_t i = 0; i < m->len; i++)
    gen_kv_string(g, m->keys[i], m->values[i]);
  yajl_gen_map_close(g);
}

/* The boot st's pids are of: the one it was read with, or this one for a state first written */
static const char *boot_of(const struct container_status *st) {
  return st->boot_id[0] ? st->boot_id : procfs_boot_id();
}

/* The record's target: "xPID START PIDNS BOOT", the numbers in hex and the boot id without its
 * dashes, so that it stays under the 60 bytes ext4 keeps in the inode: a longer symlink gets a
 * block, which a disk state root allocates at create and frees (a synchronous discard on a
 * `discard` mount) at delete. Decimal with the dashes took 60-65 bytes on a host up for a day. */
int status_format_init_record(const struct container_status *st, char *buf, size_t size) {
  char boot[40];
  size_t n = 0;
  for (const char *b = boot_of(st); *b != '\0' && n + 1 < sizeof(boot); b++)
    if (*b != '-')
      boot[n++] = *b;
  boot[n] = '\0';
  return snprintf(buf, size, "x%x %llx %llx %s", (unsigned)st->pid, st->pid_start_time,
                  st->pid_pidns, boot);
}

/* One symlinkat, and a rename when a record is there already: a reader sees the old record or the
 * new one, whole. */
static int write_init_record(int dirfd, const struct container_status *st, fsrun_error_t *err) {
  char target[128], tmp[64];
  status_format_init_record(st, target, sizeof(target));
  /* the first record (create's): a symlink appears whole, no temporary name is needed */
  if (symlinkat(target, dirfd, STATUS_INIT_RECORD) == 0)
    return 0;
  if (errno != EEXIST)
    return fsrun_error_errno(err, "write `%s`", STATUS_INIT_RECORD);
  snprintf(tmp, sizeof(tmp), "%s.tmp.%d", STATUS_INIT_RECORD, (int)getpid());
  if (symlinkat(target, dirfd, tmp) < 0 &&
      (errno != EEXIST || unlinkat(dirfd, tmp, 0) < 0 || symlinkat(target, dirfd, tmp) < 0))
    return fsrun_error_errno(err, "write `%s`", STATUS_INIT_RECORD);
  if (renameat(dirfd, tmp, dirfd, STATUS_INIT_RECORD) < 0) {
    int saved = errno;
    unlinkat(dirfd, tmp, 0);
    return fsrun_error_make(err, saved, "write `%s`", STATUS_INIT_RECORD);
  }
  return 0;
}

/* A boot id written without its dashes gets them back (8-4-4-4-12), as procfs_boot_id has them */
static void boot_id_dashed(const char *in, char *out, size_t size) {
  static const int cuts[] = {8, 12, 16, 20};
  size_t n = 0, k = 0;
  if (strlen(in) != 32) {
    snprintf(out, size, "%s", in);
    return;
  }
  for (size_t i = 0; i < 32 && n + 2 < size; i++) {
    if (k < 4 && (int)i == cuts[k]) {
      out[n++] = '-';
      k++;
    }
    out[n++] = in[i];
  }
  out[n] = '\0';
}

int status_parse_init_record(const char *text, struct container_status *st) {
  char boot[40] = "", extra;
  unsigned hexpid = 0;
  int pid = 0, fields;
  unsigned long long start, pidns;
  if (text[0] == 'x') {
    fields = sscanf(text, "x%x %llx %llx %39s%c", &hexpid, &start, &pidns, boot, &extra);
    pid = hexpid > (unsigned)INT_MAX ? -1 : (int)hexpid;
  } else {
    /* the decimal form of earlier fsrun */
    fields = sscanf(text, "%d %llu %llu %39s%c", &pid, &start, &pidns, boot, &extra);
  }
  if ((fields != 3 && fields != 4) || pid <= 0 || start == 0)
    return -1;
  st->pid = (pid_t)pid;
  st->pid_start_time = start;
  st->pid_pidns = pidns;
  boot_id_dashed(boot, st->boot_id, sizeof(st->boot_id));
  return 0;
}

int status_read_init_record(int dirfd, struct container_status *st, fsrun_error_t *err) {
  char buf[128];
  ssize_t n = readlinkat(dirfd, STATUS_INIT_RECORD, buf, sizeof(buf) - 1);
  if (n < 0 && errno != EINVAL)
    return fsrun_error_errno(err, "read the init's record `%s`", STATUS_INIT_RECORD);
  buf[n > 0 ? n : 0] = '\0';
  if (status_parse_init_record(buf, st) < 0)
    return fsrun_error_take(err, EINVAL,
                            xasprintf("the init's record `%s` is corrupt", STATUS_INIT_RECORD));
  return 0;
}

int status_write(int dirfd, const struct container_status *st, fsrun_error_t *err) {
  yajl_gen g = yajl_gen_alloc(NULL);
  const unsigned char *buf;
  size_t len;
  int ret;

  if (g == NULL)
    return fsrun_error_make(err, ENOMEM, "write the state file");
  yajl_gen_map_open(g);
  gen_kv_string(g, "ociVersion", OCI_VERSION);
  gen_kv_string(g, "id", st->id);
  gen_kv_string(g, "status", st->status);
  gen_kv_int(g, "pid", st->pid);
  gen_kv_string(g, "bundle", st->bundle);
  gen_kv_string(g, "rootfs", st->rootfs);
  gen_kv_string(g, "created", st->created);
  gen_annotations(g, &st->annotations);
  gen_string(g, "fsrun");
  yajl_gen_map_open(g);
  gen_kv_int(g, "pidStartTime", (long long)st->pid_start_time);
  if (st->pid_pidns != 0)
    gen_kv_int(g, "pidNamespace", (long long)st->pid_pidns);
  gen_kv_int(g, "creatorPid", st->creator_pid);
  gen_kv_int(g, "creatorStartTime", (long long)st->creator_start_time);
  if (boot_of(st)[0] != '\0')
    gen_kv_string(g, "bootId", boot_of(st));
  gen_kv_string(g, "cgroup", st->cgroup);
  if (st->cgroup_record != NULL)
    gen_kv_string(g, "cgroupHierarchies", st->cgroup_record);
  gen_string(g, "newPidNamespace");
  yajl_gen_bool(g, st->new_pidns);
  if (st->intel_rdt) {
    gen_string(g, "intelRdt");
    yajl_gen_map_open(g);
    gen_kv_string(g, "closID", st->intel_rdt_clos_id);
    gen_string(g, "enableMonitoring");
    yajl_gen_bool(g, st->intel_rdt_monitoring);
    yajl_gen_map_close(g);
  }
  gen_hooks(g, "poststart", &st->poststart);
  gen_hooks(g, "poststop", &st->poststop);
  if (st->config_json != NULL) {
    gen_string(g, "config");
    yajl_gen_string(g, (const unsigned char *)st->config_json, st->config_len);
  }
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
    yajl_gen_free(g);
    return fsrun_error_make(err, EINVAL, "serialise the state file");
  }
  ret = st->spare ? status_kept_replace(dirfd, buf, len, err)
                  : status_replace_file(dirfd, STATUS_FILE, buf, len, err);
  yajl_gen_free(g);
  if (ret == 0 && st->pid > 0 && !st->spare)
    ret = write_init_record(dirfd, st, err);
  return ret;
}

int status_write_created(int dirfd, const struct container_status *st, fsrun_error_t *err) {
  return write_init_record(dirfd, st, err);
}

int status_write_config(int dirfd, const char *json, size_t len, fsrun_error_t *err) {
  if (status_replace_file(dirfd, STATUS_CONFIG_FILE, json, len, err) < 0)
    return fsrun_error_wrap(err, "keep a copy of config.json in the state directory");
  return 0;
}

/* The config's bytes state.json holds (status_write's "config"), NULL when it holds none */
static char *config_in_state(int dirfd, size_t *len) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_free char *text = NULL;
  const char *path[] = {"fsrun", "config", NULL};
  size_t text_len = 0;
  char *copy = NULL;
  yajl_val root, v;
  if (read_file_at_nofollow(dirfd, STATUS_FILE, &text, &text_len, &ignored) < 0)
    return NULL;
  root = yajl_tree_parse(text, NULL, 0);
  v = root != NULL ? yajl_tree_get(root, path, yajl_t_string) : NULL;
  if (v != NULL) {
    copy = xstrdup(YAJL_GET_STRING(v));
    *len = strlen(copy);
  }
  yajl_tree_free(root);
  return copy;
}

int status_read_config(int dirfd, const char *bundle, oci_config **out, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  char *msg = NULL;
  size_t len = 0;
  *out = NULL;
  if (read_file_at_nofollow(dirfd, STATUS_CONFIG_FILE, &text, &len, err) < 0) {
    if (fsrun_error_code(err) != -ENOENT)
      return fsrun_error_code(err);
    text = config_in_state(dirfd, &len);
    if (text == NULL) {
      cleanup_free char *path = NULL;
      if (bundle == NULL)
        return fsrun_error_code(err);
      path = xasprintf("%s/config.json", bundle);
      if (oci_read_file(path, &text, &len, &msg) < 0)
        return fsrun_error_take(err, ENOENT, msg);
    }
    fsrun_error_release(err);
  }
  if (oci_config_parse(text, len, "config.json", out, &msg) < 0)
    return fsrun_error_take(err, EINVAL, msg);
  return 0;
}

static yajl_val get(yajl_val obj, const char *key) {
  const char *path[] = {key, NULL};
  return yajl_tree_get(obj, path, yajl_t_any);
}

static char *get_string(yajl_val obj, const char *key) {
  yajl_val v = get(obj, key);
  return YAJL_IS_STRING(v) ? xstrdup(YAJL_GET_STRING(v)) : NULL;
}

static long long get_int(yajl_val obj, const char *key) {
  yajl_val v = get(obj, key);
  return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

static void read_strv(yajl_val arr, oci_strv *out) {
  memset(out, 0, sizeof(*out));
  if (!YAJL_IS_ARRAY(arr) || arr->u.array.len == 0)
    return;
  out->items = xmalloc0(sizeof(char *) * (arr->u.array.len + 1));
  for (size_t i = 0; i < arr->u.array.len; i++)
    if (YAJL_IS_STRING(arr->u.array.values[i]))
      out->items[out->len++] = xstrdup(YAJL_GET_STRING(arr->u.array.values[i]));
}

static void read_hooks(yajl_val arr, oci_hook_list *out) {
  memset(out, 0, sizeof(*out));
  if (!YAJL_IS_ARRAY(arr) || arr->u.array.len == 0)
    return;
  out->items = xmalloc0(sizeof(oci_hook) * arr->u.array.len);
  for (size_t i = 0; i < arr->u.array.len; i++) {
    yajl_val h = arr->u.array.values[i];
    oci_hook *hook = &out->items[out->len];
    if (!YAJL_IS_OBJECT(h))
      continue;
    hook->path = get_string(h, "path");
    read_strv(get(h, "args"), &hook->args);
    read_strv(get(h, "env"), &hook->env);
    if (YAJL_IS_INTEGER(get(h, "timeout"))) {
      hook->has_timeout = true;
      hook->timeout = get_int(h, "timeout");
    }
    out->len++;
  }
}

static void free_hooks(oci_hook_list *l) {
  for (size_t i = 0; i < l->len; i++) {
    free(l->items[i].path);
    oci_strv_free(&l->items[i].args);
    oci_strv_free(&l->items[i].env);
  }
  free(l->items);
  memset(l, 0, sizeof(*l));
}

/* The file is ours, its keys unique: filled in one pass, not by oci_map_set's scan for each key
 * (quadratic: 100,000 annotations took a minute) */
static void read_annotations(yajl_val obj, oci_map *out) {
  size_t n = obj->u.object.len;
  if (n == 0)
    return;
  out->keys = xmalloc0(n * sizeof(char *));
  out->values = xmalloc0(n * sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    const char *v = YAJL_GET_STRING(obj->u.object.values[i]);
    out->keys[i] = xstrdup(obj->u.object.keys[i]);
    out->values[i] = xstrdup(v ? v : "");
  }
  out->len = n;
}

static void read_boot_id(yajl_val internal, struct container_status *st) {
  yajl_val v = get(internal, "bootId");
  if (YAJL_IS_STRING(v))
    snprintf(st->boot_id, sizeof(st->boot_id), "%s", YAJL_GET_STRING(v));
}

/* A one-shot create (status_write_created) leaves state.json at `creating` and says `created` by
 * the init's record alone: where the record is there, the container was created, and the record
 * names its init. A create that writes state.json twice never has both (it writes the record with
 * the second), and a record that cannot be read leaves the state as it was. */
static void created_by_record(int dirfd, struct container_status *st) {
  struct container_status init = {0};
  cleanup_error fsrun_error_t ignored = NULL;
  if (strcmp(st->status, "creating") != 0 || st->pid != 0 ||
      status_read_init_record(dirfd, &init, &ignored) < 0)
    return;
  free(st->status);
  st->status = xstrdup("created");
  st->pid = init.pid;
  st->pid_start_time = init.pid_start_time;
  st->pid_pidns = init.pid_pidns;
  memcpy(st->boot_id, init.boot_id, sizeof(st->boot_id));
}

int status_read(int dirfd, struct container_status *st, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  char errbuf[256] = "";
  size_t len = 0;
  yajl_val root, internal, annotations;

  memset(st, 0, sizeof(*st));
  /* a symlink is not followed: it could lead to another container's state */
  if (read_file_at_nofollow(dirfd, STATUS_FILE, &text, &len, err) < 0)
    return fsrun_error_code(err);
  root = yajl_tree_parse(text, errbuf, sizeof(errbuf));
  if (!YAJL_IS_OBJECT(root)) {
    yajl_tree_free(root);
    /* one line: yajl's message goes on to draw where it stopped */
    errbuf[strcspn(errbuf, "\n")] = '\0';
    return fsrun_error_take(err, EINVAL,
                            xasprintf("the state file is corrupt: %s", len == 0 ? "empty"
                                                                       : errbuf[0]
                                                                           ? errbuf
                                                                           : "not a JSON object"));
  }
  st->id = get_string(root, "id");
  st->status = get_string(root, "status");
  st->pid = (pid_t)get_int(root, "pid");
  st->bundle = get_string(root, "bundle");
  st->rootfs = get_string(root, "rootfs");
  st->created = get_string(root, "created");
  annotations = get(root, "annotations");
  if (YAJL_IS_OBJECT(annotations))
    read_annotations(annotations, &st->annotations);
  internal = get(root, "fsrun");
  if (YAJL_IS_OBJECT(internal)) {
    st->pid_start_time = (unsigned long long)get_int(internal, "pidStartTime");
    st->pid_pidns = (unsigned long long)get_int(internal, "pidNamespace");
    st->creator_pid = (pid_t)get_int(internal, "creatorPid");
    st->creator_start_time = (unsigned long long)get_int(internal, "creatorStartTime");
    read_boot_id(internal, st);
    st->cgroup = get_string(internal, "cgroup");
    st->cgroup_record = get_string(internal, "cgroupHierarchies");
    st->new_pidns = YAJL_IS_TRUE(get(internal, "newPidNamespace"));
    if (YAJL_IS_OBJECT(get(internal, "intelRdt"))) {
      yajl_val rdt = get(internal, "intelRdt");
      st->intel_rdt = true;
      st->intel_rdt_clos_id = get_string(rdt, "closID");
      st->intel_rdt_monitoring = YAJL_IS_TRUE(get(rdt, "enableMonitoring"));
    }
    read_hooks(get(internal, "poststart"), &st->poststart);
    read_hooks(get(internal, "poststop"), &st->poststop);
  }
  yajl_tree_free(root);
  if (st->id == NULL || st->status == NULL) {
    status_clear(st);
    return fsrun_error_take(err, EINVAL, xstrdup("the state file is corrupt: no id or status"));
  }
  created_by_record(dirfd, st);
  return 0;
}

void status_clear(struct container_status *st) {
  free(st->id);
  free(st->status);
  free(st->bundle);
  free(st->rootfs);
  free(st->created);
  free(st->cgroup);
  free(st->cgroup_record);
  free(st->intel_rdt_clos_id);
  oci_map_free(&st->annotations);
  free_hooks(&st->poststart);
  free_hooks(&st->poststop);
  memset(st, 0, sizeof(*st));
}

/* path (the state's, not one of the fixed candidates) is where an ordinary user's create put the
 * container's cgroup below its delegated subtree (the parent of its own cgroup:
 * cgroup_rootless_delegated_base), which neither the id nor linux.cgroupsPath names. It is taken
 * when that subtree is delegated to the owner of the state directory (the user who made the
 * container: a forged state file leads to no cgroup that user could not empty or remove itself)
 * and, while the init lives, the init is in it. */
static bool delegated_cgroup_holds(int dirfd, const char *base, const char *path,
                                   const struct container_status *st) {
  struct stat dir;
  if (fstat(dirfd, &dir) < 0 || !cgroup_is_delegated_to(base, dir.st_uid))
    return false;
  return !status_init_alive(st) || cgroup_pid_is_in(st->pid, path);
}

/* The state's cgroup, when the id and linux.cgroupsPath lead to it (cgroup_open_checked: EPERM
 * otherwise). A path of the shape a delegated subtree gives, only that, is checked further, so the
 * usual container costs no more than before. */
static int open_state_cgroup(int dirfd, const char *id, const char *cgroups_path,
                             const struct container_status *st, struct fsrun_cgroup **out,
                             fsrun_error_t *err) {
  const char *colon = strchr(st->cgroup, ':');
  cleanup_free char *base = NULL;
  if (colon != NULL && strncmp(st->cgroup, "unified:", 8) == 0 &&
      (base = cgroup_delegated_base_of(id, cgroups_path, colon + 1)) != NULL &&
      !cgroup_path_is_containers(id, cgroups_path, colon + 1) &&
      delegated_cgroup_holds(dirfd, base, colon + 1, st))
    return cgroup_open(st->cgroup, st->cgroup_record, out, err);
  return cgroup_open_checked(st->cgroup, st->cgroup_record, id, cgroups_path, out, err);
}

int status_open_cgroup_config(int dirfd, const char *id, const struct container_status *st,
                              struct fsrun_cgroup **out, oci_config **config, fsrun_error_t *err) {
  const char *cgroups_path;
  *out = NULL;
  *config = NULL;
  if (st != NULL && st->cgroup == NULL)
    return 0;
  if (status_read_config(dirfd, st ? st->bundle : NULL, config, err) < 0)
    return fsrun_error_wrap(err, "find the cgroup of `%s`", id);
  cgroups_path = (*config)->linux_ ? (*config)->linux_->cgroups_path : NULL;
  if (st == NULL)
    return cgroup_find(id, cgroups_path, out, err);
  return open_state_cgroup(dirfd, id, cgroups_path, st, out, err);
}

int status_open_cgroup(int dirfd, const char *id, const struct container_status *st,
                       struct fsrun_cgroup **out, fsrun_error_t *err) {
  cleanup_oci_config oci_config *config = NULL;
  return status_open_cgroup_config(dirfd, id, st, out, &config, err);
}

/* --- derived status ----------------------------------------------------------------------------
 */

/* A state of another boot (a state root on a disk after a reboot) names no live process: its
 * start times count from that boot */
static bool of_this_boot(const struct container_status *st) {
  return st->boot_id[0] == '\0' || strcmp(st->boot_id, procfs_boot_id()) == 0;
}

bool status_init_alive(const struct container_status *st) {
  bool zombie = false;
  unsigned long long start;
  if (st->pid <= 0 || !of_this_boot(st))
    return false;
  start = procfs_pid_start_time(st->pid, &zombie);
  if (start == 0 || start != st->pid_start_time || zombie)
    return false;
  /* a process that took the pid within the same clock tick has the same start time */
  if (st->pid_pidns != 0) {
    unsigned long long pidns = procfs_pid_pidns(st->pid);
    if (pidns != 0 && pidns != st->pid_pidns)
      return false;
  }
  return true;
}

static bool is_frozen(const struct container_status *st, const struct fsrun_cgroup *open) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  bool frozen = false;
  if (open == NULL && (st->cgroup == NULL ||
                       cgroup_open(st->cgroup, st->cgroup_record, &cg, &err) < 0 || cg == NULL))
    return false;
  if (cgroup_is_frozen(open != NULL ? open : cg, &frozen, &err) < 0)
    return false;
  return frozen;
}

const char *status_derive(int dirfd, const struct container_status *st, pid_t *pid) {
  return status_derive_in(dirfd, st, NULL, pid);
}

const char *status_derive_in(int dirfd, const struct container_status *st,
                             const struct fsrun_cgroup *cg, pid_t *pid) {
  *pid = 0;
  if (strcmp(st->status, "creating") == 0) {
    bool zombie = false;
    unsigned long long start = procfs_pid_start_time(st->creator_pid, &zombie);
    /* a `create` that died half-way left a container that can only be deleted */
    if (start == 0 || zombie || start != st->creator_start_time || !of_this_boot(st))
      return "stopped";
    *pid = st->pid;
    return "creating";
  }
  if (!status_init_alive(st))
    return "stopped";
  *pid = st->pid;
  if (faccessat(dirfd, STATUS_EXEC_FIFO, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return "created";
  if (is_frozen(st, cg))
    return "paused";
  return "running";
}

bool status_init_alive_derived(const char *status) {
  return strcmp(status, "created") == 0 || strcmp(status, "running") == 0 ||
         strcmp(status, "paused") == 0;
}

char *status_state_json(const struct container_status *st, const char *status, pid_t pid,
                        const char *owner, bool pretty, fsrun_error_t *err) {
  oci_state s = {
      .oci_version = (char *)OCI_VERSION,
      .id = st->id,
      .status = (char *)status,
      .pid = pid,
      .bundle = st->bundle,
      .annotations = st->annotations,
      .rootfs = st->rootfs,
      .created = st->created,
      .owner = (char *)(owner ? owner : ""),
  };
  char *msg = NULL;
  char *json = oci_state_serialize(&s, pretty, &msg);
  if (json == NULL)
    fsrun_error_take(err, EINVAL, msg);
  return json;
}

char *status_owner(int dirfd) {
  struct stat st;
  if (fstat(dirfd, &st) < 0)
    return xstrdup("");
  /* `list` only shows the name: a user known to another NSS source shows as #uid */
  char *name = passwd_field_of("/etc/passwd", st.st_uid, PASSWD_NAME);
  return name ? name : xasprintf("#%u", (unsigned)st.st_uid);
}
