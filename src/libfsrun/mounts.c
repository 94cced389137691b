/* Mount options and one `mounts` entry. Bind mounts use the new mount API (open_tree,
 * mount_setattr, move_mount onto an fd), other filesystems mount(2) onto /proc/self/fd/N of a
 * target that was resolved inside the rootfs. Phase 1 runs before pivot_root, so that /proc is the
 * host's. */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind-source.h"
#include "cover-overlay.h"
#include "overlay-spine.h"
#include "idmap.h"
#include "log.h"
#include "mount-fallback.h"
#include "openat2-compat.h"
#include "overlay-lower.h"
#include "proc-mounter.h"
#include "sync.h"
#include "utils.h"

/* --- options ---------------------------------------------------------------------------------- */

typedef enum {
  OPT_IGNORE,      /* "defaults" */
  OPT_SET,         /* sets MS_* bits */
  OPT_CLEAR,       /* clears MS_* bits */
  OPT_ATIME,       /* one of noatime/relatime/strictatime: replaces the other two */
  OPT_PROPAGATION, /* MS_SHARED... [| MS_REC] */
  OPT_REC_SET,     /* recursive MOUNT_ATTR_* set */
  OPT_REC_CLEAR,   /* recursive MOUNT_ATTR_* clear */
  OPT_REC_ATIME,   /* recursive atime mode (value is the MOUNT_ATTR_ atime value) */
  OPT_IDMAP,       /* idmapped bind (value 1: recursive) */
  OPT_REFUSE,      /* known, not supported */
  OPT_TMPCOPYUP,   /* "tmpcopyup": a tmpfs starts with a copy of what it covers */
} option_kind;

struct option_def {
  const char *name;
  option_kind kind;
  unsigned long value;
};

#define ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)

static const struct option_def option_table[] = {
    {"defaults", OPT_IGNORE, 0},
    {"ro", OPT_SET, MS_RDONLY},
    {"rw", OPT_CLEAR, MS_RDONLY},
    {"nosuid", OPT_SET, MS_NOSUID},
    {"suid", OPT_CLEAR, MS_NOSUID},
    {"nodev", OPT_SET, MS_NODEV},
    {"dev", OPT_CLEAR, MS_NODEV},
    {"noexec", OPT_SET, MS_NOEXEC},
    {"exec", OPT_CLEAR, MS_NOEXEC},
    {"sync", OPT_SET, MS_SYNCHRONOUS},
    {"async", OPT_CLEAR, MS_SYNCHRONOUS},
    {"dirsync", OPT_SET, MS_DIRSYNC},
    {"remount", OPT_SET, MS_REMOUNT},
    {"mand", OPT_SET, MS_MANDLOCK},
    {"nomand", OPT_CLEAR, MS_MANDLOCK},
    {"noatime", OPT_ATIME, MS_NOATIME},
    {"atime", OPT_CLEAR, MS_NOATIME},
    {"relatime", OPT_ATIME, MS_RELATIME},
    {"norelatime", OPT_CLEAR, MS_RELATIME},
    {"strictatime", OPT_ATIME, MS_STRICTATIME},
    {"nostrictatime", OPT_CLEAR, MS_STRICTATIME},
    {"nodiratime", OPT_SET, MS_NODIRATIME},
    {"diratime", OPT_CLEAR, MS_NODIRATIME},
    {"nosymfollow", OPT_SET, MS_NOSYMFOLLOW},
    {"symfollow", OPT_CLEAR, MS_NOSYMFOLLOW},
    {"lazytime", OPT_SET, MS_LAZYTIME},
    {"nolazytime", OPT_CLEAR, MS_LAZYTIME},
    {"iversion", OPT_SET, MS_I_VERSION},
    {"noiversion", OPT_CLEAR, MS_I_VERSION},
    {"silent", OPT_SET, MS_SILENT},
    {"loud", OPT_CLEAR, MS_SILENT},
    {"bind", OPT_SET, MS_BIND},
    {"rbind", OPT_SET, MS_BIND | MS_REC},
    {"shared", OPT_PROPAGATION, MS_SHARED},
    {"rshared", OPT_PROPAGATION, MS_SHARED | MS_REC},
    {"slave", OPT_PROPAGATION, MS_SLAVE},
    {"rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC},
    {"private", OPT_PROPAGATION, MS_PRIVATE},
    {"rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC},
    {"unbindable", OPT_PROPAGATION, MS_UNBINDABLE},
    {"runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC},
    {"rro", OPT_REC_SET, MOUNT_ATTR_RDONLY},
    {"rrw", OPT_REC_CLEAR, MOUNT_ATTR_RDONLY},
    {"rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID},
    {"rsuid", OPT_REC_CLEAR, MOUNT_ATTR_NOSUID},
    {"rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV},
    {"rdev", OPT_REC_CLEAR, MOUNT_ATTR_NODEV},
    {"rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC},
    {"rexec", OPT_REC_CLEAR, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME},
    {"rdiratime", OPT_REC_CLEAR, MOUNT_ATTR_NODIRATIME},
    {"rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", OPT_REC_CLEAR, MOUNT_ATTR_NOSYMFOLLOW},
    {"rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME},
    {"rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME},
    {"rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    /* turning one atime mode off falls back to the kernel's default, relatime */
    {"ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"tmpcopyup", OPT_TMPCOPYUP, 0},
    {"idmap", OPT_IDMAP, 0},
    {"ridmap", OPT_IDMAP, 1},
};

static const struct option_def *option_lookup(const char *name) {
  for (size_t i = 0; i < sizeof(option_table) / sizeof(option_table[0]); i++)
    if (strcmp(option_table[i].name, name) == 0)
      return &option_table[i];
  return NULL;
}

unsigned long mount_propagation_from_name(const char *name) {
  const struct option_def *d = name ? option_lookup(name) : NULL;
  return d != NULL && d->kind == OPT_PROPAGATION ? d->value : 0;
}

static void append_data(char **data, const char *opt) {
  char *joined;
  if (*data == NULL) {
    *data = xstrdup(opt);
    return;
  }
  joined = xasprintf("%s,%s", *data, opt);
  free(*data);
  *data = joined;
}

int mount_options_parse(const oci_strv *options, struct mount_options *out, fsrun_error_t *err) {
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; options != NULL && i < options->len; i++) {
    const char *name = options->items[i];
    const struct option_def *d = option_lookup(name);
    if (d == NULL && (strncmp(name, "idmap=", 6) == 0 || strncmp(name, "ridmap=", 7) == 0)) {
      /* crun's inline mappings: never to be dropped silently as fs data of a bind */
      mount_options_free(out);
      return fsrun_error_make(err, 0,
                              "mount option `%s` is not supported: give the mappings in "
                              "uidMappings/gidMappings",
                              name);
    }
    if (d == NULL) {
      append_data(&out->data, name);
      continue;
    }
    switch (d->kind) {
    case OPT_IGNORE:
      break;
    case OPT_SET:
      out->flags |= d->value;
      out->cleared &= ~d->value;
      break;
    case OPT_ATIME:
      out->flags = (out->flags & ~ATIME_FLAGS) | d->value;
      out->cleared &= ~ATIME_FLAGS;
      break;
    case OPT_CLEAR:
      out->flags &= ~d->value;
      out->cleared |= d->value;
      break;
    case OPT_PROPAGATION:
      if (out->n_propagation == MOUNT_MAX_PROPAGATION) {
        mount_options_free(out);
        return fsrun_error_make(err, 0, "too many propagation options (at `%s`)", name);
      }
      out->propagation[out->n_propagation++] = d->value;
      break;
    case OPT_REC_SET:
      out->rec_attr_set |= d->value;
      out->rec_attr_clr &= ~(uint64_t)d->value;
      break;
    case OPT_REC_CLEAR:
      out->rec_attr_clr |= d->value;
      out->rec_attr_set &= ~(uint64_t)d->value;
      break;
    case OPT_REC_ATIME:
      /* mount_setattr changes the atime mode as a whole: clear the field, set the new mode */
      out->rec_attr_clr |= MOUNT_ATTR__ATIME;
      out->rec_attr_set = (out->rec_attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | d->value;
      break;
    case OPT_IDMAP:
      out->idmap = true;
      out->idmap_recursive = out->idmap_recursive || d->value != 0;
      break;
    case OPT_TMPCOPYUP:
      out->tmpcopyup = true;
      break;
    case OPT_REFUSE:
      mount_options_free(out);
      return fsrun_error_make(err, 0, "mount option `%s` is not supported", name);
    }
  }
  return 0;
}

void mount_options_free(struct mount_options *o) {
  free(o->data);
  o->data = NULL;
}

void mount_flags_to_attr(unsigned long flags, unsigned long cleared, struct mount_attr *attr) {
  static const struct {
    unsigned long ms;
    uint64_t attr;
  } map[] = {
      {MS_RDONLY, MOUNT_ATTR_RDONLY},         {MS_NOSUID, MOUNT_ATTR_NOSUID},
      {MS_NODEV, MOUNT_ATTR_NODEV},           {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
      {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME}, {MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW},
  };
  memset(attr, 0, sizeof(*attr));
  for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
    if (flags & map[i].ms)
      attr->attr_set |= map[i].attr;
    else if (cleared & map[i].ms)
      attr->attr_clr |= map[i].attr;
  }
  if (flags & ATIME_FLAGS) {
    attr->attr_clr |= MOUNT_ATTR__ATIME;
    if (flags & MS_NOATIME)
      attr->attr_set |= MOUNT_ATTR_NOATIME;
    else if (flags & MS_STRICTATIME)
      attr->attr_set |= MOUNT_ATTR_STRICTATIME;
    /* MS_RELATIME is MOUNT_ATTR_RELATIME, i.e. 0 */
  } else if (cleared & ATIME_FLAGS) {
    attr->attr_clr |= MOUNT_ATTR__ATIME; /* back to the default, relatime */
  }
}

/* --- paths ------------------------------------------------------------------------------------ */

char *path_clean_abs(const char *path) {
  size_t len = strlen(path);
  char *out = xmalloc0(len + 2);
  size_t o = 0;
  const char *p = path;
  out[o++] = '/';
  while (*p) {
    const char *end = strchrnul(p, '/');
    size_t n = (size_t)(end - p);
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* skip */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (o > 1 && out[o - 1] != '/')
        o--;
      if (o > 1)
        o--; /* drop the separator too */
    } else {
      if (o > 1)
        out[o++] = '/';
      memcpy(out + o, p, n);
      o += n;
    }
    p = *end ? end + 1 : end;
  }
  out[o] = '\0';
  return out;
}

/* "/a/b" -> "a/b", "/" -> "." for *at() calls relative to the root fd */
static const char *rel_path(const char *clean) {
  return clean[1] ? clean + 1 : ".";
}

static int openat2_fd(int dirfd, const char *path, int flags, uint64_t resolve) {
  struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve};
  int fd, tries = 0;
  do
    fd = (int)openat2_compat(dirfd, path, &how);
  while (fd < 0 && errno == EAGAIN && ++tries < 16); /* a concurrent rename; retry */
  return fd;
}

#define MAX_SYMLINK_HOPS 40

/* Creates `name` in dirfd (a directory, or a file for the last component of a file target) without
 * following anything there; -1 with errno EEXIST when something, e.g. a dangling symlink, is. */
static int create_component(int dirfd, const char *name, bool file) {
  if (file)
    return openat(dirfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                  0644);
  if (mkdirat(dirfd, name, 0755) < 0)
    return -1;
  return openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int root_resolve(int root_fd, const char *path, root_create_kind create, bool no_symlinks,
                 fsrun_error_t *err) {
  const uint64_t resolve =
      RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
  cleanup_free char *cur = path_clean_abs(path);
  int fd = openat2_fd(root_fd, rel_path(cur), O_PATH, resolve);

  if (fd >= 0)
    return fd;
  if (errno != ENOENT || create == ROOT_NO_CREATE)
    return fsrun_error_errno(err, "open `%s` in the rootfs", cur);

  /* Usually only the last component is missing: create it in its parent. */
  {
    char *slash = strrchr(cur, '/');
    cleanup_close int parent = -1;
    *slash = '\0';
    parent = openat2_fd(root_fd, cur[0] ? rel_path(cur) : ".", O_PATH | O_DIRECTORY, resolve);
    *slash = '/';
    if (parent >= 0) {
      fd = create_component(parent, slash + 1, create == ROOT_CREATE_FILE);
      if (fd >= 0)
        return fd;
      if (errno != EEXIST) /* EEXIST: a dangling symlink, which the walk below follows */
        return fsrun_error_errno(err, "create `%s` in the rootfs", cur);
    } else if (errno != ENOENT) {
      return fsrun_error_errno(err, "open `%s` in the rootfs", cur);
    }
  }

  /* Walk from the root: open each prefix inside the root, create what is missing. */
  for (int hops = 0; hops < MAX_SYMLINK_HOPS; hops++) {
    cleanup_close int parent = -1;
    char *p = cur + 1;
    char *next_path = NULL;
    while (*p) {
      char *end = strchrnul(p, '/');
      bool last = *end == '\0';
      int dirfd = parent >= 0 ? parent : root_fd;
      *end = '\0';
      fd = openat2_fd(root_fd, rel_path(cur), O_PATH | (last ? 0 : O_DIRECTORY), resolve);
      if (fd < 0 && errno != ENOENT)
        return fsrun_error_errno(err, "open `%s` in the rootfs", cur);
      if (fd < 0)
        fd = create_component(dirfd, p, last && create == ROOT_CREATE_FILE);
      if (fd < 0 && errno == EEXIST) {
        /* not there when followed, there when created: a dangling symlink. Follow it inside
         * the root by rewriting the path, as the kernel would under chroot. */
        char target[4096];
        ssize_t n;
        if (no_symlinks)
          return fsrun_error_make(err, ELOOP, "open `%s` in the rootfs", cur);
        n = readlinkat(dirfd, p, target, sizeof(target) - 1);
        if (n < 0)
          return fsrun_error_make(err, EEXIST, "create `%s` in the rootfs", cur);
        target[n] = '\0';
        p[-1] = '\0'; /* cur is now the parent's path ("" for the root) */
        next_path = xasprintf("%s/%s/%s", target[0] == '/' ? "" : cur, target, last ? "" : end + 1);
        break;
      }
      if (fd < 0)
        return fsrun_error_errno(err, "create `%s` in the rootfs", cur);
      if (parent >= 0)
        close(parent);
      parent = fd;
      if (last)
        return steal_fd(&parent);
      *end = '/';
      p = end + 1;
    }
    if (next_path == NULL) /* only "/" has no component, and "/" always exists */
      return fsrun_error_make(err, ENOENT, "open `%s` in the rootfs", cur);
    free(cur);
    cur = path_clean_abs(next_path);
    free(next_path);
  }
  return fsrun_error_make(err, ELOOP, "open `%s` in the rootfs", path);
}

/* --- performing mounts ------------------------------------------------------------------------ */

static void proc_fd_path(char *buf, size_t len, int fd) {
  snprintf(buf, len, "/proc/self/fd/%d", fd);
}

bool mount_entry_is_bind(const oci_mount *m) {
  if (m->type != NULL && strcmp(m->type, "bind") == 0)
    return true;
  for (size_t i = 0; i < m->options.len; i++)
    if (strcmp(m->options.items[i], "bind") == 0 || strcmp(m->options.items[i], "rbind") == 0)
      return true;
  return false;
}

/* mount_setattr that keeps what a user namespace locks: when clearing a flag is refused (EPERM),
 * the flags the mount already has are left alone and the call is retried once. */
static int set_attr(int fd, unsigned int at_flags, struct mount_attr *attr) {
  struct statfs sfs;
  if (attr->attr_set == 0 && attr->attr_clr == 0 && attr->propagation == 0)
    return 0;
  if (mount_setattr_compat(fd, at_flags, attr) == 0)
    return 0;
  if (errno != EPERM)
    return -1;
  if (fstatfs(fd, &sfs) < 0) {
    errno = EPERM;
    return -1;
  }
  if (sfs.f_flags & ST_RDONLY)
    attr->attr_clr &= ~(uint64_t)MOUNT_ATTR_RDONLY;
  if (sfs.f_flags & ST_NOSUID)
    attr->attr_clr &= ~(uint64_t)MOUNT_ATTR_NOSUID;
  if (sfs.f_flags & ST_NODEV)
    attr->attr_clr &= ~(uint64_t)MOUNT_ATTR_NODEV;
  if (sfs.f_flags & ST_NOEXEC)
    attr->attr_clr &= ~(uint64_t)MOUNT_ATTR_NOEXEC;
  if (sfs.f_flags & (ST_NOATIME | ST_NODIRATIME)) {
    attr->attr_clr &= ~(uint64_t)(MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME);
    attr->attr_set &= ~(uint64_t)MOUNT_ATTR__ATIME;
  }
  return mount_setattr_compat(fd, at_flags, attr);
}

static int apply_propagation(int fd, const struct mount_options *o) {
  for (size_t i = 0; i < o->n_propagation; i++) {
    struct mount_attr attr = {.propagation = o->propagation[i] & ~(unsigned long)MS_REC};
    if (mount_setattr_compat(fd, (o->propagation[i] & MS_REC) ? AT_RECURSIVE : 0, &attr) < 0)
      return -1;
  }
  return 0;
}

int mount_bind_fd(int source_fd, int target_fd, bool recursive, fsrun_error_t *err) {
  cleanup_close int tree = open_tree(source_fd, "",
                                     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                         (recursive ? AT_RECURSIVE : 0));
  if (tree < 0 && errno == ENOSYS) {
    tree = mount_fallback_bind(source_fd, target_fd, recursive);
    return tree < 0 ? fsrun_error_errno(err, "bind (mount(2), no open_tree)") : 0;
  }
  if (tree < 0)
    return fsrun_error_errno(err, "open_tree");
  if (move_mount(tree, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return fsrun_error_errno(err, "move_mount");
  return 0;
}

/* Files lxcfs and the like override inside /proc: the only mounts allowed onto procfs besides
 * /proc itself. */
static bool proc_override_allowed(const char *dest) {
  static const char *const allowed[] = {
      "/proc/cpuinfo", "/proc/diskstats",
      "/proc/meminfo", "/proc/stat",
      "/proc/swaps",   "/proc/uptime",
      "/proc/loadavg", "/proc/slabinfo",
      "/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
  };
  if (strcmp(dest, "/proc") == 0)
    return true;
  for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
    if (strcmp(dest, allowed[i]) == 0)
      return true;
  return false;
}

/* whether a mount onto dest (clean, absolute) covers path: dest is path or above it */
static bool mount_covers(const char *dest, const char *path) {
  size_t n = strlen(dest);
  if (strcmp(dest, "/") == 0)
    return true;
  return strncmp(path, dest, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void mount_dir_cache_drop(struct mount_dir_cache *c, const char *dest) {
  if (c == NULL || c->path == NULL || !mount_covers(dest, c->path))
    return;
  free(c->path);
  c->path = NULL;
  close(c->fd);
  c->fd = -1;
}

/* The cache's directory, (re)opened as `dir` (clean, absolute) when it names another. */
static int cached_dir(const struct mount_env *env, const char *dir) {
  cleanup_error fsrun_error_t err = NULL;
  struct mount_dir_cache *c = env->dirs;
  struct statfs sfs;
  int fd;
  if (c->path != NULL && strcmp(c->path, dir) == 0)
    return c->fd;
  mount_dir_cache_drop(c, "/");
  fd = root_resolve(env->rootfs_fd, dir, ROOT_CREATE_DIR, false, &err);
  if (fd < 0)
    return -1;
  if (fstatfs(fd, &sfs) < 0) {
    close(fd);
    return -1;
  }
  c->path = xstrdup(dir);
  c->fd = fd;
  c->proc = sfs.f_type == PROC_SUPER_MAGIC;
  return fd;
}

/* The target through the cached parent directory: made there when missing (no stat of it then: it
 * is on the parent's filesystem), opened when it is there and no symlink. -1 when this cannot say
 * (a symlink, which resolves in the rootfs, or a parent that cannot be opened): the caller takes
 * the whole path. */
static int target_in_cached_dir(const struct mount_env *env, const char *dest,
                                root_create_kind kind, bool *on_proc) {
  cleanup_free char *dir = xstrdup(dest);
  char *slash = strrchr(dir, '/');
  const char *name = dest + (slash - dir) + 1;
  struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  struct statfs sfs;
  int parent, fd;
  if (env->dirs == NULL || slash == NULL || *name == '\0' || strcmp(name, "..") == 0)
    return -1;
  *(slash == dir ? slash + 1 : slash) = '\0';
  parent = cached_dir(env, dir);
  if (parent < 0)
    return -1;
  fd = create_component(parent, name, kind == ROOT_CREATE_FILE);
  if (fd >= 0) {
    *on_proc = env->dirs->proc;
    return fd;
  }
  if (errno != EEXIST)
    return -1;
  fd = (int)openat2_compat(parent, name, &how);
  if (fd < 0)
    return -1;
  if (fstatfs(fd, &sfs) < 0) {
    close(fd);
    return -1;
  }
  *on_proc = sfs.f_type == PROC_SUPER_MAGIC;
  return fd;
}

/* The target of a mount onto dest inside the rootfs, created as `kind` when missing. With real_dir
 * (/proc, /sys) it must be a directory reached without any symlink; with no_links, anything
 * reached without one. Nothing lands on procfs but the few overrides above: a rootfs symlink to
 * /proc/self/attr/exec, say, would disarm the LSM. */
static int open_mount_target_how(const struct mount_env *env, const char *dest,
                                 root_create_kind kind, bool real_dir, bool no_links, size_t index,
                                 fsrun_error_t *err) {
  bool on_proc = false;
  cleanup_close int target =
      real_dir || no_links ? -1 : target_in_cached_dir(env, dest, kind, &on_proc);
  struct statfs sfs;
  struct stat st;
  if (target >= 0) {
    if (on_proc && !proc_override_allowed(dest))
      return fsrun_error_make(err, 0, "mounts[%zu]: mount destination %s is inside /proc", index,
                              dest);
    return steal_fd(&target);
  }
  target = root_resolve(env->rootfs_fd, dest, kind, real_dir || no_links, err);
  if (target < 0) {
    if (real_dir && (fsrun_error_code(err) == -ELOOP || fsrun_error_code(err) == -ENOTDIR))
      return fsrun_error_make(err, 0, "mounts[%zu]: mount destination %s is not a directory", index,
                              dest);
    return fsrun_error_wrap(err, "mounts[%zu]: destination `%s`", index, dest);
  }
  if (real_dir && (fstat(target, &st) < 0 || !S_ISDIR(st.st_mode)))
    return fsrun_error_make(err, 0, "mounts[%zu]: mount destination %s is not a directory", index,
                            dest);
  if (!proc_override_allowed(dest)) {
    if (fstatfs(target, &sfs) < 0)
      return fsrun_error_errno(err, "mounts[%zu]: statfs `%s`", index, dest);
    if (sfs.f_type == PROC_SUPER_MAGIC)
      return fsrun_error_make(err, 0, "mounts[%zu]: mount destination %s is inside /proc", index,
                              dest);
  }
  return steal_fd(&target);
}

static int open_mount_target(const struct mount_env *env, const char *dest, root_create_kind kind,
                             bool real_dir, size_t index, fsrun_error_t *err) {
  return open_mount_target_how(env, dest, kind, real_dir, false, index, err);
}

/* The options' flags on a bind (tree), then its recursive ones, extra_rec_set on top. */
static int set_bind_attrs(int tree, const struct mount_options *o, uint64_t extra_rec_set,
                          size_t index, const char *source, const char *dest, fsrun_error_t *err) {
  struct mount_attr attr;
  mount_flags_to_attr(o->flags, o->cleared, &attr);
  if (set_attr(tree, 0, &attr) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: set mount flags of bind `%s` onto `%s`", index,
                             source, dest);
  attr = (struct mount_attr){.attr_set = o->rec_attr_set | extra_rec_set,
                             .attr_clr = o->rec_attr_clr & ~extra_rec_set};
  if (set_attr(tree, AT_RECURSIVE, &attr) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: set recursive mount flags of bind `%s` onto `%s`",
                             index, source, dest);
  return 0;
}

/* Is st the object the config's builder saw at the source (oci_mount.has_source_id)? The path
 * may have been swapped (a link to /etc for a directory) since: what was decided from it, a cover
 * over a secret file, would not hold for what the path shows now. checked may be NULL. */
int mount_check_source_id(const oci_mount *checked, const struct stat *st, const char *source,
                          size_t index, fsrun_error_t *err) {
  if (checked != NULL && checked->needs_source_id && !checked->has_source_id)
    return fsrun_error_make(err, ESTALE, "mounts[%zu]: bind source `%s` has no recorded identity",
                            index, source);
  if (checked == NULL || !checked->has_source_id ||
      ((uint64_t)st->st_dev == checked->source_dev && (uint64_t)st->st_ino == checked->source_ino))
    return 0;
  return fsrun_error_make(err, ESTALE,
                          "mounts[%zu]: bind source `%s` was replaced after the config was "
                          "built",
                          index, source);
}

/* The target of a bind of source_fd onto dest: created as a file or a directory like the source,
 * which must be a directory with real_dir, and be the object in checked (NULL: any). */
static int open_bind_target(const struct mount_env *env, int source_fd, const char *source,
                            const char *dest, bool real_dir, const oci_mount *checked, size_t index,
                            fsrun_error_t *err) {
  struct stat st;
  if (fstat(source_fd, &st) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: stat bind source `%s`", index, source);
  if (mount_check_source_id(checked, &st, source, index, err) < 0)
    return fsrun_error_code(err);
  if (real_dir && !S_ISDIR(st.st_mode))
    return fsrun_error_make(err, 0, "mounts[%zu]: bind source `%s` for %s is not a directory",
                            index, source, dest);
  /* a caller's path in a tree the command writes: a link there is the command's (sandbox.c) */
  return open_mount_target_how(env, dest, S_ISDIR(st.st_mode) ? ROOT_CREATE_DIR : ROOT_CREATE_FILE,
                               real_dir, checked != NULL && checked->dest_no_symlinks, index, err);
}

/* The options' flags on the bind mnt, its move onto target when it is a detached tree (target
 * -1: mnt is attached already, mount-fallback.h), then its propagation, which needs it attached. */
static int finish_bind(int mnt, int target, const struct mount_options *o, uint64_t extra_rec_set,
                       size_t index, const char *source, const char *dest, fsrun_error_t *err) {
  if (set_bind_attrs(mnt, o, extra_rec_set, index, source, dest, err) < 0)
    return fsrun_error_code(err);
  if (target >= 0 &&
      move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: bind `%s` onto `%s`", index, source, dest);
  if (apply_propagation(mnt, o) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: set propagation of `%s`", index, dest);
  return 0;
}

/* One of the covers (oci_mount.covers) of the bind whose attached root is bind_root: the cover
 * file bound read-only over `below` (relative, "" for the root itself), resolved beneath the
 * bind and through no link. */
static int attach_cover(const struct mount_env *env, int bind_root, const char *below,
                        const char *cover_source, size_t index, const char *dest,
                        fsrun_error_t *err) {
  const struct mount_options o = {.flags = MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC};
  cleanup_close int bundle_fd = -1, target = -1, src = -1, mnt = -1;
  target = below[0] ? openat2_fd(bind_root, below, O_PATH,
                                 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
                    : fcntl(bind_root, F_DUPFD_CLOEXEC, 0);
  if (target < 0)
    return fsrun_error_errno(err, "mounts[%zu]: cover `%s` in `%s`", index, below, dest);
  bundle_fd = open(env->bundle ? env->bundle : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bundle_fd < 0)
    return fsrun_error_errno(err, "mounts[%zu]: open bundle `%s`", index, env->bundle);
  mnt = open_tree(bundle_fd, cover_source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (mnt >= 0)
    return finish_bind(mnt, target, &o, 0, index, cover_source, dest, err);
  if (errno != ENOSYS ||
      (src = openat(bundle_fd, cover_source, O_PATH | O_CLOEXEC | O_NOFOLLOW)) < 0 ||
      (mnt = mount_fallback_bind(src, target, false)) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: cover `%s` in `%s` with `%s`", index, below, dest,
                             cover_source);
  return finish_bind(mnt, -1, &o, 0, index, cover_source, dest, err);
}

/* A limit this set-up cannot put in place (limit: the policy's key), told to the runtime, which
 * says it and lists it (fsrun sandbox: limitsNotEnforced; under limitsMode "require" it ends the
 * set-up); said here when there is no runtime to tell. The runtime's GO is awaited: under `run`
 * the init execs the command right after its last message, which must not be before the runtime
 * has refused (it kills the init instead of answering). */
static int report_limit_gap(const struct mount_env *env, const char *limit, const char *why,
                            fsrun_error_t *err) {
  size_t a = strlen(limit), b = strlen(why);
  cleanup_free char *payload = xmalloc0(a + b + 2);
  struct sync_msg msg;
  bool go;
  memcpy(payload, limit, a);
  memcpy(payload + a + 1, why, b);
  if (env->runtime_sync_fd < 0) {
    log_warning("limits not enforced: %s (%s)", limit, why);
    return 0;
  }
  if (sync_send(env->runtime_sync_fd, SYNC_LIMIT_GAP, 0, payload, a + b + 1, -1) < 0 ||
      sync_recv(env->runtime_sync_fd, &msg) < 0)
    return fsrun_error_make(err, 0, "limits not enforced: %s: the runtime is gone", limit);
  go = msg.type == SYNC_GO;
  sync_msg_clear(&msg);
  if (!go)
    return fsrun_error_make(err, EPROTO, "limits not enforced: %s: the runtime did not answer",
                            limit);
  return 0;
}

/* An rbind in a user namespace with mounts below its root (EBUSY from cover-overlay.c), without
 * covers: the view of overlays per directory and mount (overlay-spine.h). 1: done; 0: refused,
 * with *why (the caller frees) the limit not enforced. */
static int attach_spine_view(int bind_root, size_t index, const char *dest, char **why) {
  fsrun_error_t err = NULL;
  if (overlay_spine_attach(bind_root, &err) == 0)
    return 1;
  log_debug("mounts[%zu]: `%s`: %s; bound without an overlay", index, dest, err->msg);
  *why = xasprintf("`%s`: %s; its unix sockets and FIFOs are the host's", dest, err->msg);
  fsrun_error_release(&err);
  return 0;
}

/* Why dest stays the plain bind, its overlay refused with errnum (EBUSY: a mount below it) */
static char *overlay_refusal(const char *dest, int errnum) {
  if (errnum == EBUSY)
    return xasprintf("`%s` has a mount below it, which the read-only overlay that hides its unix "
                     "sockets and FIFOs would take away: they are the host's",
                     dest);
  return xasprintf("`%s`: overlayfs refused the read-only overlay that hides its unix sockets and "
                   "FIFOs (%s): they are the host's",
                   dest, strerror(errnum));
}

/* The bind checked (may be NULL) of a directory seen through one overlay over its root, its covers
 * in that overlay's layer (oci_mount.overlay_view). 1: done; 0: not to be done, or overlayfs
 * refused: the bind stays as it is, its sockets and FIFOs with it (docs/sandbox.md). An rbind
 * with a mount below (EBUSY from cover-overlay.c) gets an overlay per directory and mount in a user
 * namespace without covers (attach_spine_view). What stays the plain bind (the view refused, a
 * kernel before 5.11 in a user namespace, a lower overlayfs will not stack on, an rbind with covers
 * or outside a user namespace with a mount below) is reported as a limit not enforced here. Or the
 * error. */
static int attach_overlay_view(const struct mount_env *env, int bind_root, const oci_mount *checked,
                               const char *const *covers, size_t n, bool recursive, size_t index,
                               const char *dest, fsrun_error_t *err) {
  cleanup_free char *why = NULL;
  struct stat st;
  bool refused = false;
  if (checked == NULL || !checked->overlay_view || fstat(bind_root, &st) < 0 ||
      !S_ISDIR(st.st_mode))
    return 0;
  if (cover_overlay_whole(bind_root, covers, n, recursive, &refused, err) == 0)
    return 1;
  if (!refused)
    return fsrun_error_wrap(err, "mounts[%zu]: `%s`", index, dest);
  if ((*err)->status == EBUSY && env->userns && n == 0) {
    fsrun_error_release(err);
    if (attach_spine_view(bind_root, index, dest, &why) == 1)
      return 1;
    return report_limit_gap(env, "allowedPaths", why, err);
  }
  log_debug("mounts[%zu]: `%s`: %s; bound without an overlay", index, dest, (*err)->msg);
  why = overlay_refusal(dest, (*err)->status);
  fsrun_error_release(err);
  return report_limit_gap(env, "allowedPaths", why, err);
}

/* The covers of the bind checked (may be NULL), attached onto bind_root: overlays over the
 * directories that hold them where the bind is read-only (cover-overlay.h: a rename on the host
 * does not take those away), else, and where overlayfs refuses, the cover file bound over each. */
static int attach_covers(const struct mount_env *env, int bind_root, const oci_mount *checked,
                         bool recursive, size_t index, const char *dest, fsrun_error_t *err) {
  const char *covers[OCI_MOUNT_MAX_COVERS];
  struct statvfs sv;
  size_t n = 0, done = 0;
  bool refused = false, read_only;
  int viewed = 0;
  while (checked != NULL && n < OCI_MOUNT_MAX_COVERS && checked->covers[n]) {
    covers[n] = checked->covers[n];
    n++;
  }
  read_only = fstatvfs(bind_root, &sv) == 0 && (sv.f_flag & ST_RDONLY);
  if (read_only && (n == 0 || covers[0][0] != '\0'))
    viewed = attach_overlay_view(env, bind_root, checked, covers, n, recursive, index, dest, err);
  if (viewed != 0)
    return viewed < 0 ? viewed : 0;
  if (n > 0 && covers[0][0] != '\0' && read_only &&
      cover_overlays_attach(bind_root, covers, n, recursive, &done, &refused, err) < 0) {
    if (!refused)
      return fsrun_error_wrap(err, "mounts[%zu]: `%s`", index, dest);
    log_debug("mounts[%zu]: `%s`: %s; the cover file bound over each file instead", index, dest,
              (*err)->msg);
    fsrun_error_release(err);
  }
  for (size_t i = done; i < n; i++)
    if (attach_cover(env, bind_root, covers[i], checked->cover_source, index, dest, err) < 0)
      return fsrun_error_code(err);
  return 0;
}

/* A bind of a secret file itself (its cover ""): the cover file is bound in its place, never the
 * host's file under it, whose dentry a rename on the host would strip of a cover. */
static bool covers_whole_source(const oci_mount *checked) {
  return checked != NULL && checked->covers[0] != NULL && checked->covers[0][0] == '\0';
}

/* bind_tree where open_tree answers ENOSYS (mount-fallback.h): the bind is attached first and its
 * flags are set after, in the container's own mount namespace, before any of its processes runs. */
static int bind_tree_by_mount(const struct mount_env *env, int bundle_fd, const char *source,
                              const char *dest, const struct mount_options *o,
                              uint64_t extra_rec_set, bool real_dir, const oci_mount *checked,
                              size_t index, fsrun_error_t *err) {
  cleanup_close int src = -1, target = -1, mnt = -1;
  if (o->idmap)
    return fsrun_error_take(err, ENOSYS,
                            xasprintf("mounts[%zu]: an idmapped bind of `%s` needs open_tree and "
                                      "mount_setattr, which answer ENOSYS here",
                                      index, source));
  src = openat(bundle_fd >= 0 ? bundle_fd : AT_FDCWD, source, O_PATH | O_CLOEXEC);
  if (src < 0)
    return fsrun_error_errno(err, "mounts[%zu]: bind source `%s`", index, source);
  target = open_bind_target(env, src, source, dest, real_dir, checked, index, err);
  if (target < 0)
    return target;
  if (covers_whole_source(checked))
    return attach_cover(env, target, "", checked->cover_source, index, dest, err);
  mnt = mount_fallback_bind(src, target, (o->flags & MS_REC) != 0);
  if (mnt < 0)
    return fsrun_error_errno(err, "mounts[%zu]: bind `%s` onto `%s`", index, source, dest);
  if (finish_bind(mnt, -1, o, extra_rec_set, index, source, dest, err) < 0)
    return fsrun_error_code(err);
  return attach_covers(env, mnt, checked, (o->flags & MS_REC) != 0, index, dest, err);
}

/* A detached clone of the host tree at source, with the options' attributes, attached onto the
 * destination (created as a file or a directory like the source). extra_rec adds recursive
 * attributes on top of the options'. checked: the entry, when its source's identity was recorded
 * (NULL: none was). */
static int bind_tree(const struct mount_env *env, const char *source, const char *dest,
                     const struct mount_options *o, uint64_t extra_rec_set, bool real_dir,
                     const oci_mount *checked, size_t index, fsrun_error_t *err) {
  cleanup_close int bundle_fd = -1;
  cleanup_close int tree = -1;
  cleanup_close int target = -1;

  if (source == NULL)
    return fsrun_error_make(err, 0, "mounts[%zu]: bind mount onto `%s` has no source", index, dest);
  if (source[0] != '/') {
    bundle_fd = open(env->bundle ? env->bundle : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (bundle_fd < 0)
      return fsrun_error_errno(err, "mounts[%zu]: open bundle `%s`", index, env->bundle);
  }
  tree = open_tree(bundle_fd >= 0 ? bundle_fd : AT_FDCWD, source,
                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | ((o->flags & MS_REC) ? AT_RECURSIVE : 0));
  if (tree < 0 && errno == ENOSYS)
    return bind_tree_by_mount(env, bundle_fd, source, dest, o, extra_rec_set, real_dir, checked,
                              index, err);
  if (tree < 0 && env->userns && (errno == EACCES || (errno == EINVAL && o->idmap))) {
    /* out of the mapped root's reach, or a non-recursive clone of a source with (locked)
     * submounts: the runtime helps (bind-source.h) */
    bool clone = errno == EINVAL;
    tree = bind_source_request(env->runtime_sync_fd, index, (o->flags & MS_REC) != 0, clone, err);
    if (tree < 0)
      return fsrun_error_wrap(err, "mounts[%zu]: bind source `%s`", index, source);
  }
  if (tree < 0)
    return fsrun_error_errno(err, "mounts[%zu]: bind source `%s`", index, source);
  /* cloned here, in the container's mount namespace, so that the host's flags stay locked; only
   * the runtime may attach the idmapping */
  if (o->idmap && idmap_request(env->runtime_sync_fd, tree, index, err) < 0)
    return fsrun_error_code(err);
  target = open_bind_target(env, tree, source, dest, real_dir, checked, index, err);
  if (target < 0)
    return target;
  if (covers_whole_source(checked))
    return attach_cover(env, target, "", checked->cover_source, index, dest, err);
  if (finish_bind(tree, target, o, extra_rec_set, index, source, dest, err) < 0)
    return fsrun_error_code(err);
  return attach_covers(env, tree, checked, (o->flags & MS_REC) != 0, index, dest, err);
}

static int mount_error(fsrun_error_t *err, int errnum, size_t index, const char *what,
                       const char *type, const char *dest) {
  if (errnum == ENODEV)
    return fsrun_error_make(err, errnum,
                            "mounts[%zu]: unknown filesystem type `%s` (mount onto `%s`)", index,
                            type ? type : "", dest);
  return fsrun_error_make(err, errnum, "mounts[%zu]: mount `%s` onto `%s`", index, what, dest);
}

/* After mount(2) onto a target fd, the fd still names the covered directory: reopen the path to
 * reach the new mount for recursive attributes and propagation. */
static int finish_new_mount(const struct mount_env *env, const char *dest,
                            const struct mount_options *o, size_t index, fsrun_error_t *err) {
  cleanup_close int fd = -1;
  struct mount_attr attr = {.attr_set = o->rec_attr_set, .attr_clr = o->rec_attr_clr};
  if (o->n_propagation == 0 && o->rec_attr_set == 0 && o->rec_attr_clr == 0)
    return 0;
  fd = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, err);
  if (fd < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  if (set_attr(fd, AT_RECURSIVE, &attr) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: set recursive mount flags of `%s`", index, dest);
  if (apply_propagation(fd, o) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: set propagation of `%s`", index, dest);
  return 0;
}

/* env->proc_by_mounter: a procfs of our pid namespace, made detached by the first init (or by
 * the runtime: proc_by_runtime), attached onto target */
static int mount_proc_by_mounter(const struct mount_env *env, int target, unsigned long flags,
                                 const char *data, size_t index, const char *dest,
                                 fsrun_error_t *err) {
  struct mount_attr attr;
  cleanup_close int mnt = -1;
  mount_flags_to_attr(flags, 0, &attr);
  mnt = env->proc_by_runtime
            ? proc_runtime_mount(env->runtime_sync_fd, data, (unsigned int)attr.attr_set, err)
            : proc_mounter_mount(env->proc_mounter_fd, data, (unsigned int)attr.attr_set, err);
  if (mnt < 0)
    return fsrun_error_wrap(err, "mounts[%zu]: proc onto `%s`", index, dest);
  if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return mount_error(err, errno, index, "proc", "proc", dest);
  return 0;
}

/* mount(2) of a filesystem onto dest inside the rootfs */
static int mount_fs(const struct mount_env *env, const char *source, const char *type,
                    const char *dest, unsigned long flags, const char *data, bool real_dir,
                    size_t index, fsrun_error_t *err) {
  char target_path[64];
  cleanup_close int target = open_mount_target(env, dest, ROOT_CREATE_DIR, real_dir, index, err);
  if (target < 0)
    return target;
  if (env->proc_by_mounter && strcmp(type, "proc") == 0)
    return mount_proc_by_mounter(env, target, flags, data, index, dest, err);
  if (env->mount_at_cwd) {
    int r = fchdir(target) < 0 ? -1 : mount(source ? source : type, ".", type, flags, data);
    int saved = errno;
    if (chdir("/") < 0 || r < 0)
      return mount_error(err, r < 0 ? saved : errno, index, source ? source : type, type, dest);
    return 0;
  }
  proc_fd_path(target_path, sizeof(target_path), target);
  if (mount(source ? source : type, target_path, type, flags, data) < 0)
    return mount_error(err, errno, index, source ? source : type, type, dest);
  return 0;
}

/* An overlay whose lower dir's identity the config's builder recorded (has_source_id: the git
 * overlay of `fsrun sandbox`): the lower layer is the directory opened and checked here, given to
 * overlayfs by its fd, so that no path component swapped since (a link, a rename) decides it. */
static int mount_overlay_checked(const struct mount_env *env, const oci_mount *m, const char *dest,
                                 const struct mount_options *o, size_t index, fsrun_error_t *err) {
  char lower_path[64];
  cleanup_free char *data = NULL;
  cleanup_free char *lower = overlay_data_lower(o->data);
  cleanup_close int lower_fd = -1;
  if (lower == NULL)
    return fsrun_error_make(err, 0, "mounts[%zu]: overlay onto `%s`: one lowerdir of one layer",
                            index, dest);
  lower_fd = overlay_lower_open(lower, m->source_dev, m->source_ino, err);
  if (lower_fd < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  proc_fd_path(lower_path, sizeof(lower_path), lower_fd);
  data = overlay_data_set_lower(o->data, lower_path);
  return mount_fs(env, m->source, "overlay", dest, o->flags & ~MS_REC, data, false, index, err);
}

/* --- cgroup mounts ---------------------------------------------------------------------------- */

struct host_hierarchy {
  char *controllers; /* "cpu,cpuacct", "name=systemd", "" for cgroup2 */
  char *path;        /* the init's cgroup in that hierarchy */
  char *mountpoint;  /* where the host mounts it */
  char *mnt_root;    /* the root of that mount inside the hierarchy */
  bool v2;
};

static void hierarchies_free(struct host_hierarchy *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(h[i].controllers);
    free(h[i].path);
    free(h[i].mountpoint);
    free(h[i].mnt_root);
  }
  free(h);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape_octal(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
        p[3] <= '7') {
      *o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

/* Whether every controller of the comma list `want` is among the super options `have`. */
static bool controllers_match(const char *want, const char *have) {
  cleanup_free char *w = xstrdup(want);
  char *save = NULL;
  bool any = false;
  for (char *tok = strtok_r(w, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    size_t n = strlen(tok);
    const char *h = have;
    bool found = false;
    while (*h) {
      const char *e = strchrnul(h, ',');
      if ((size_t)(e - h) == n && strncmp(h, tok, n) == 0)
        found = true;
      h = *e ? e + 1 : e;
    }
    if (!found)
      return false;
    any = true;
  }
  return any;
}

/* The init's hierarchies (/proc/self/cgroup) with the host's mount point of each (mountinfo). */
static int read_hierarchies(struct host_hierarchy **out, size_t *n_out, fsrun_error_t *err) {
  cleanup_free char *cgroups = NULL;
  cleanup_free char *mountinfo = NULL;
  struct host_hierarchy *h = NULL;
  size_t n = 0;
  char *save = NULL;

  if (read_file_at(AT_FDCWD, "/proc/self/cgroup", &cgroups, NULL, err) < 0 ||
      read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mountinfo, NULL, err) < 0)
    return fsrun_error_code(err);
  for (char *line = strtok_r(cgroups, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    struct host_hierarchy *grown;
    if (c2 == NULL)
      continue;
    *c1 = *c2 = '\0';
    grown = realloc(h, sizeof(*h) * (n + 1));
    if (grown == NULL)
      abort();
    h = grown;
    h[n] = (struct host_hierarchy){.controllers = xstrdup(c1 + 1),
                                   .path = xstrdup(c2 + 1),
                                   .v2 = strcmp(line, "0") == 0 && c1[1] == '\0'};
    n++;
  }

  for (char *line = mountinfo, *next; line && *line; line = next) {
    char *fields[12];
    size_t nf = 0;
    char *sep, *fstype, *superopts, *p = line;
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    while (nf < 12 && p) {
      fields[nf++] = p;
      p = strchr(p, ' ');
      if (p)
        *p++ = '\0';
      if (nf >= 7 && strcmp(fields[nf - 1], "-") == 0)
        break;
    }
    /* fields: 0 id, 1 parent, 2 dev, 3 root, 4 mountpoint, 5 opts, [optional...], "-" */
    if (nf < 7 || strcmp(fields[nf - 1], "-") != 0 || p == NULL)
      continue;
    sep = strchr(p, ' ');
    if (sep == NULL)
      continue;
    *sep = '\0';
    fstype = p;
    superopts = strchr(sep + 1, ' ');
    if (superopts == NULL)
      continue;
    superopts++;
    for (size_t i = 0; i < n; i++) {
      bool match;
      if (h[i].mountpoint != NULL)
        continue;
      if (h[i].v2)
        match = strcmp(fstype, "cgroup2") == 0;
      else
        match = strcmp(fstype, "cgroup") == 0 && controllers_match(h[i].controllers, superopts);
      if (match) {
        unescape_octal(fields[3]);
        unescape_octal(fields[4]);
        h[i].mnt_root = xstrdup(fields[3]);
        h[i].mountpoint = xstrdup(fields[4]);
        break;
      }
    }
  }
  *out = h;
  *n_out = n;
  return 0;
}

/* The hierarchies the runtime found before the clone (mount_env.cgroup_hierarchies), without the
 * init's own cgroup paths: enough to mount each one afresh in a cgroup namespace of our own, and
 * it spares the init reading /proc/self/cgroup and the host's whole mountinfo. */
static void hierarchies_from_runtime(const struct mount_env *env, struct host_hierarchy **out,
                                     size_t *n_out) {
  struct host_hierarchy *h = xmalloc0(sizeof(*h) * env->n_cgroup_hierarchies);
  for (size_t i = 0; i < env->n_cgroup_hierarchies; i++) {
    const struct mount_cgroup_hierarchy *k = &env->cgroup_hierarchies[i];
    h[i].controllers = xstrdup(k->controllers);
    h[i].mountpoint = xstrdup(k->mountpoint);
    h[i].v2 = k->controllers[0] == '\0';
  }
  *out = h;
  *n_out = env->n_cgroup_hierarchies;
}

/* Binds the init's own cgroup of the hierarchy mounted at `mountpoint` onto `name` in target_dir
 * (see bind_own_cgroup), reading the init's hierarchies when `known` lacks its path. */
static int bind_own_cgroup_of(const struct host_hierarchy *known, struct host_hierarchy **read,
                              size_t *n_read, int target_dir, const char *name,
                              struct mount_attr *attr, fsrun_error_t *err);

/* The host directory of the init's own cgroup in a hierarchy. NULL when the mount's root lies
 * above our cgroup namespace ("/../.."): paths are then relative to a root we cannot name. */
static char *hierarchy_host_dir(const struct host_hierarchy *h) {
  const char *rel = h->path;
  size_t root_len = strlen(h->mnt_root);
  if (strncmp(h->mnt_root, "/..", 3) == 0)
    return NULL;
  if (strcmp(h->mnt_root, "/") != 0 && strncmp(rel, h->mnt_root, root_len) == 0)
    rel += root_len;
  return xasprintf("%s/%s", h->mountpoint, rel[0] == '/' ? rel + 1 : rel);
}

/* bind_own_cgroup where open_tree answers ENOSYS: the bind, then its flags (mount-fallback.h) */
static int bind_own_cgroup_by_mount(const char *src, int target_dir, const char *name,
                                    const struct mount_attr *attr, fsrun_error_t *err) {
  struct mount_attr copy = *attr; /* set_attr rewrites it on EPERM; the caller's serves again */
  cleanup_close int source = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int target =
      name ? openat(target_dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  cleanup_close int mnt = -1;
  if (source < 0 || (name != NULL && target < 0))
    return fsrun_error_errno(err, "bind `%s`", src);
  mnt = mount_fallback_bind(source, name ? target : target_dir, false);
  if (mnt < 0)
    return fsrun_error_errno(err, "bind `%s`", src);
  if (set_attr(mnt, 0, &copy) < 0)
    return fsrun_error_errno(err, "set mount flags of `%s`", src);
  return 0;
}

/* Binds the host directory of the init's own cgroup onto `name` in target_dir (target_dir itself
 * when name is NULL). */
static int bind_own_cgroup(const struct host_hierarchy *h, int target_dir, const char *name,
                           struct mount_attr *attr, fsrun_error_t *err) {
  cleanup_free char *src = hierarchy_host_dir(h);
  cleanup_close int tree = -1;
  struct mount_attr copy = *attr;
  if (src == NULL)
    return fsrun_error_make(
        err, ENOENT, "the init's cgroup in `%s` is outside its namespace's view", h->mountpoint);
  tree = open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0 && errno == ENOSYS)
    return bind_own_cgroup_by_mount(src, target_dir, name, attr, err);
  if (tree < 0)
    return fsrun_error_errno(err, "bind `%s`", src);
  if (set_attr(tree, 0, &copy) < 0)
    return fsrun_error_errno(err, "set mount flags of `%s`", src);
  if (move_mount(tree, "", target_dir, name ? name : "",
                 MOVE_MOUNT_F_EMPTY_PATH | (name ? 0 : MOVE_MOUNT_T_EMPTY_PATH)) < 0)
    return fsrun_error_errno(err, "bind `%s`", src);
  return 0;
}

static int bind_own_cgroup_of(const struct host_hierarchy *known, struct host_hierarchy **read,
                              size_t *n_read, int target_dir, const char *name,
                              struct mount_attr *attr, fsrun_error_t *err) {
  if (known->path != NULL)
    return bind_own_cgroup(known, target_dir, name, attr, err);
  if (*read == NULL && read_hierarchies(read, n_read, err) < 0)
    return fsrun_error_code(err);
  for (size_t i = 0; i < *n_read; i++)
    if ((*read)[i].mountpoint != NULL && strcmp((*read)[i].mountpoint, known->mountpoint) == 0)
      return bind_own_cgroup(&(*read)[i], target_dir, name, attr, err);
  return fsrun_error_make(err, ENOENT, "the init is in no cgroup of the hierarchy at `%s`",
                          known->mountpoint);
}

/* A cgroup2 instance of the init's cgroup namespace made with fsopen/fsmount and attached with
 * move_mount onto dest. */
static int mount_cgroup2_detached(const struct mount_env *env, const char *dest,
                                  const struct mount_options *o, size_t index, fsrun_error_t *err) {
  cleanup_close int fs = fsopen("cgroup2", FSOPEN_CLOEXEC);
  cleanup_close int mnt = -1;
  cleanup_close int target = -1;
  struct mount_attr attr;
  mount_flags_to_attr(o->flags, o->cleared, &attr);
  if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: create a cgroup2 instance for `%s`", index, dest);
  mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned int)attr.attr_set);
  if (mnt < 0)
    return fsrun_error_errno(err, "mounts[%zu]: mount cgroup2 for `%s`", index, dest);
  target = open_mount_target(env, dest, ROOT_CREATE_DIR, false, index, err);
  if (target < 0)
    return target;
  if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: mount `cgroup2` onto `%s`", index, dest);
  return 0;
}

static int mount_cgroup(const struct mount_env *env, const char *type, const char *dest,
                        const struct mount_options *o, size_t index, fsrun_error_t *err) {
  struct statfs sfs;
  struct host_hierarchy *h = NULL, *v2 = NULL, *read = NULL;
  size_t n = 0, n_read = 0;
  int ret = 0;
  /* the hierarchies are read-only unless the mount asks for rw explicitly */
  bool ro = (o->flags & MS_RDONLY) || !(o->cleared & MS_RDONLY);
  unsigned long sub_flags =
      (o->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | ATIME_FLAGS)) | (ro ? MS_RDONLY : 0);
  struct mount_attr sub_attr;
  cleanup_close int dir = -1;

  if (statfs("/sys/fs/cgroup", &sfs) < 0)
    return fsrun_error_errno(err, "mounts[%zu]: statfs `/sys/fs/cgroup`", index);
  mount_flags_to_attr(sub_flags, o->cleared, &sub_attr);

  if (sfs.f_type == CGROUP2_SUPER_MAGIC || strcmp(type, "cgroup2") == 0) {
    /* unified host (or cgroup2 asked for by name): the namespace's own view, or a bind of the
     * init's cgroup */
    if (env->new_cgroupns) {
      ret =
          mount_fs(env, "cgroup2", "cgroup2", dest, o->flags & ~MS_REC, o->data, false, index, err);
      if (ret == -EBUSY) {
        /* mount(2) refuses a filesystem on a mount point that already shows it: the host's
         * cgroup2 came along with a bind of the host's /sys. move_mount does not. */
        fsrun_error_release(err);
        ret = mount_cgroup2_detached(env, dest, o, index, err);
      }
      return ret < 0 ? ret : finish_new_mount(env, dest, o, index, err);
    }
    if (read_hierarchies(&h, &n, err) < 0)
      return fsrun_error_wrap(err, "mounts[%zu]", index);
    for (size_t i = 0; i < n && v2 == NULL; i++)
      if (h[i].v2 && h[i].mountpoint != NULL)
        v2 = &h[i];
    if (v2 == NULL)
      ret = fsrun_error_make(err, ENOENT, "mounts[%zu]: the init has no cgroup2 hierarchy", index);
    else if ((dir = open_mount_target(env, dest, ROOT_CREATE_DIR, false, index, err)) < 0)
      ret = dir;
    else if ((ret = bind_own_cgroup(v2, dir, NULL, &sub_attr, err)) < 0)
      fsrun_error_wrap(err, "mounts[%zu]: cgroup onto `%s`", index, dest);
    hierarchies_free(h, n);
    return ret < 0 ? ret : finish_new_mount(env, dest, o, index, err);
  }

  /* v1 or hybrid host: a tmpfs holding one directory per hierarchy the host has */
  ret = mount_fs(env, "tmpfs", "tmpfs", dest, (o->flags & ~(MS_RDONLY | MS_REC)), "mode=755", false,
                 index, err);
  if (ret < 0)
    return ret;
  dir = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, err);
  if (dir < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  if (env->new_cgroupns && env->n_cgroup_hierarchies > 0)
    hierarchies_from_runtime(env, &h, &n);
  else if (read_hierarchies(&h, &n, err) < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  for (size_t i = 0; i < n && ret == 0; i++) {
    const char *name;
    char sub_path[320];
    bool mounted = false;
    if (h[i].mountpoint == NULL || h[i].controllers == NULL)
      continue; /* a hierarchy the host does not mount (e.g. an unused named one) */
    name = strrchr(h[i].mountpoint, '/');
    name = name ? name + 1 : h[i].mountpoint;
    if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
        (size_t)snprintf(sub_path, sizeof(sub_path), "/proc/self/fd/%d/%s", dir, name) >=
            sizeof(sub_path))
      continue;
    /* the directory is in the tmpfs just mounted, which nothing else can have changed */
    if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST) {
      ret = fsrun_error_errno(err, "mounts[%zu]: mkdir `%s/%s`", index, dest, name);
      break;
    }
    if (env->new_cgroupns) {
      if (h[i].v2)
        mounted = mount("cgroup2", sub_path, "cgroup2", sub_flags, NULL) == 0;
      else
        mounted = mount("cgroup", sub_path, "cgroup", sub_flags, h[i].controllers) == 0;
      if (!mounted && errno != EPERM && errno != EBUSY) {
        ret = fsrun_error_errno(err, "mounts[%zu]: mount cgroup `%s` onto `%s/%s`", index,
                                h[i].controllers[0] ? h[i].controllers : "cgroup2", dest, name);
        break;
      }
      /* EPERM: v1 hierarchies cannot be mounted in a user namespace; EBUSY: the host mounted the
       * hierarchy with other options. Bind the init's own cgroup instead. */
    }
    if (!mounted && bind_own_cgroup_of(&h[i], &read, &n_read, dir, name, &sub_attr, err) < 0) {
      ret = fsrun_error_wrap(err, "mounts[%zu]: cgroup onto `%s/%s`", index, dest, name);
      break;
    }
    /* co-mounted controllers ("cpu,cpuacct") get one symlink per controller, as on the host */
    if (!h[i].v2 && strchr(name, ',') != NULL) {
      cleanup_free char *list = xstrdup(name);
      char *save = NULL;
      for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save))
        if (strcmp(c, name) != 0 && symlinkat(name, dir, c) < 0 && errno != EEXIST) {
          ret = fsrun_error_errno(err, "mounts[%zu]: symlink `%s/%s`", index, dest, c);
          break;
        }
    }
  }
  hierarchies_free(h, n);
  hierarchies_free(read, n_read);
  if (ret < 0)
    return ret;
  if (o->flags & MS_RDONLY) {
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr_compat(dir, 0, &attr) < 0)
      return fsrun_error_errno(err, "mounts[%zu]: make `%s` read-only", index, dest);
  }
  return finish_new_mount(env, dest, o, index, err);
}

/* --- tmpcopyup ------------------------------------------------------------------------------- */

/* "tmpcopyup" (runc's and crun's extension, which podman puts on the tmpfs mounts of --read-only
 * and --tmpfs): the new tmpfs starts with a copy of the directory it covers, so an image's /run or
 * /tmp content stays visible. Everything is reached through fds: the covered directory is opened
 * before the mount (an fd keeps reaching it underneath), no symlink in the copied tree is
 * followed, and the copy only writes inside the fresh tmpfs. */

#define COPYUP_MAX_DEPTH 128

/* Owner, then mode (chown clears set-id bits), then times, of the copy `name` in dst_dir (fd >= 0:
 * the copy itself, open). Symlinks keep their own mode. */
static int copyup_attrs(int dst_dir, const char *name, int fd, const struct stat *st) {
  const struct timespec times[2] = {st->st_atim, st->st_mtim};
  if (fd >= 0)
    return fchown(fd, st->st_uid, st->st_gid) < 0 || fchmod(fd, st->st_mode & 07777) < 0 ||
                   futimens(fd, times) < 0
               ? -1
               : 0;
  if (fchownat(dst_dir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (!S_ISLNK(st->st_mode) && fchmodat(dst_dir, name, st->st_mode & 07777, 0) < 0)
    return -1;
  return utimensat(dst_dir, name, times, AT_SYMLINK_NOFOLLOW);
}

static int copyup_file(int src_dir, int dst_dir, const char *name, const struct stat *st) {
  /* O_NONBLOCK and the check after: a file swapped for a fifo since the stat must not hang us */
  cleanup_close int in =
      openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int out = -1;
  struct stat now;
  if (in < 0)
    return -1;
  if (fstat(in, &now) < 0 || !S_ISREG(now.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return -1;
  for (;;) {
    ssize_t n = sendfile(out, in, NULL, 1 << 30);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
  }
  return copyup_attrs(dst_dir, NULL, out, st);
}

/* Copies the entries of src_dir (an fd on the covered directory) into dst_dir. `path` names
 * src_dir in errors. */
static int copyup_tree(int src_dir, int dst_dir, const char *path, unsigned depth,
                       fsrun_error_t *err) {
  cleanup_dir DIR *dir = NULL;
  struct dirent *de;
  int fd;
  if (depth > COPYUP_MAX_DEPTH)
    return fsrun_error_make(err, ELOOP, "`%s` is nested too deep", path);
  fd = openat(src_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s`", path);
  dir = fdopendir(fd);
  if (dir == NULL) {
    close(fd);
    return fsrun_error_errno(err, "read `%s`", path);
  }
  while ((errno = 0, de = readdir(dir)) != NULL) {
    const char *name = de->d_name;
    cleanup_free char *sub = NULL;
    struct stat st;
    int r = 0;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
      continue;
    sub = xasprintf("%s/%s", strcmp(path, "/") == 0 ? "" : path, name);
    if (fstatat(src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return fsrun_error_errno(err, "stat `%s`", sub);
    if (S_ISDIR(st.st_mode)) {
      cleanup_close int src_sub = -1;
      cleanup_close int dst_sub = -1;
      if (mkdirat(dst_dir, name, 0700) < 0)
        return fsrun_error_errno(err, "mkdir `%s`", sub);
      src_sub = openat(src_dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      dst_sub = openat(dst_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (src_sub < 0 || dst_sub < 0)
        return fsrun_error_errno(err, "open `%s`", sub);
      if (copyup_tree(src_sub, dst_sub, sub, depth + 1, err) < 0)
        return fsrun_error_code(err);
      /* times last: filling the directory changed them */
      r = copyup_attrs(dst_dir, NULL, dst_sub, &st);
    } else if (S_ISREG(st.st_mode)) {
      r = copyup_file(src_dir, dst_dir, name, &st);
    } else if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      ssize_t len = readlinkat(src_dir, name, target, sizeof(target) - 1);
      if (len < 0)
        return fsrun_error_errno(err, "readlink `%s`", sub);
      target[len] = '\0';
      r = symlinkat(target, dst_dir, name) < 0 ? -1 : copyup_attrs(dst_dir, name, -1, &st);
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      r = mknodat(dst_dir, name, st.st_mode, st.st_rdev) < 0 ? -1
                                                             : copyup_attrs(dst_dir, name, -1, &st);
    }
    /* a socket is only a name without its listener: not copied */
    if (r < 0)
      return fsrun_error_errno(err, "copy `%s`", sub);
  }
  if (errno != 0)
    return fsrun_error_errno(err, "read `%s`", path);
  return 0;
}

/* A tmpfs onto dest holding a copy of the directory it covers (mounted read-write for the copy,
 * then made read-only when the options say "ro"). */
static int mount_tmpfs_copyup(const struct mount_env *env, const char *source, const char *type,
                              const char *dest, const struct mount_options *o, size_t index,
                              fsrun_error_t *err) {
  cleanup_close int covered = -1;
  cleanup_close int fresh = -1;
  struct stat st;
  if (strcmp(type, "tmpfs") != 0)
    return fsrun_error_make(err, 0, "mounts[%zu]: tmpcopyup is for tmpfs mounts, not `%s`", index,
                            type);
  covered = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, err);
  if (covered < 0 && fsrun_error_code(err) != -ENOENT)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  fsrun_error_release(err); /* a missing destination: nothing to copy */
  if (covered >= 0 && (fstat(covered, &st) < 0 || !S_ISDIR(st.st_mode))) {
    close(covered);
    covered = -1;
  }
  if (mount_fs(env, source, type, dest, o->flags & ~(MS_REC | MS_RDONLY), o->data, false, index,
               err) < 0)
    return fsrun_error_code(err);
  fresh = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, err);
  if (fresh < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);
  if (covered >= 0 && copyup_tree(covered, fresh, dest, 0, err) < 0)
    return fsrun_error_wrap(err, "mounts[%zu]: tmpcopyup onto `%s`", index, dest);
  if (o->flags & MS_RDONLY) {
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr_compat(fresh, 0, &attr) < 0)
      return fsrun_error_errno(err, "mounts[%zu]: make `%s` read-only", index, dest);
  }
  return finish_new_mount(env, dest, o, index, err);
}

/* --- one entry -------------------------------------------------------------------------------- */

static bool data_has_mode(const char *data) {
  for (const char *p = data; p != NULL && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, "mode=", 5) == 0)
      return true;
  return false;
}

/* A tmpfs without mode= over an existing directory gets that directory's mode, as runc keeps it
 * (tmpfs's own default is 1777). NULL: data as it is. */
static char *tmpfs_data_with_mode(const struct mount_env *env, const char *dest, const char *data) {
  cleanup_error fsrun_error_t ignored = NULL;
  cleanup_close int covered = -1;
  struct stat st;
  if (data_has_mode(data))
    return NULL;
  covered = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, &ignored);
  if (covered < 0 || fstat(covered, &st) < 0 || !S_ISDIR(st.st_mode))
    return NULL;
  return xasprintf("%s%smode=%04o", data ? data : "", data && *data ? "," : "",
                   (unsigned)(st.st_mode & 07777));
}

int mount_entry(const struct mount_env *env, const oci_mount *m, size_t index, fsrun_error_t *err) {
  struct mount_options o __attribute__((cleanup(mount_options_free))) = {0};
  cleanup_free char *dest = NULL;
  const char *type = m->type;
  bool is_proc, is_sysfs, real_dir;

  if (m->destination == NULL || m->destination[0] == '\0')
    return fsrun_error_make(err, 0, "mounts[%zu]: destination is missing", index);
  dest = path_clean_abs(m->destination);
  if (mount_options_parse(&m->options, &o, err) < 0)
    return fsrun_error_wrap(err, "mounts[%zu]", index);

  if (o.flags & MS_REMOUNT) {
    /* changes an existing mount at the destination */
    char target_path[64];
    cleanup_close int target = root_resolve(env->rootfs_fd, dest, ROOT_NO_CREATE, false, err);
    if (target < 0)
      return fsrun_error_wrap(err, "mounts[%zu]: destination `%s`", index, dest);
    proc_fd_path(target_path, sizeof(target_path), target);
    if (mount(m->source, target_path, type, o.flags, o.data) < 0)
      return mount_error(err, errno, index, m->source ? m->source : dest, type, dest);
    return finish_new_mount(env, dest, &o, index, err);
  }

  real_dir = strcmp(dest, "/proc") == 0 || strcmp(dest, "/sys") == 0;
  /* mappings without an option still idmap (the option is only there for older runtimes) */
  if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0)
    o.idmap = true;
  if (o.idmap && !mount_entry_is_bind(m))
    return fsrun_error_make(err, 0, "mounts[%zu]: only a bind mount can be idmapped (type `%s`)",
                            index, type ? type : "");
  if (mount_entry_is_bind(m)) {
    o.flags |= MS_BIND;
    return bind_tree(env, m->source, dest, &o, 0, real_dir, m, index, err);
  }
  if (type == NULL || type[0] == '\0')
    return fsrun_error_make(err, 0, "mounts[%zu]: mount onto `%s` has no type", index, dest);

  is_proc = strcmp(type, "proc") == 0;
  is_sysfs = strcmp(type, "sysfs") == 0;
  if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0)
    return mount_cgroup(env, type, dest, &o, index, err);
  if (o.tmpcopyup)
    return mount_tmpfs_copyup(env, m->source, type, dest, &o, index, err);
  if (strcmp(type, "overlay") == 0 && m->has_source_id)
    return mount_overlay_checked(env, m, dest, &o, index, err) < 0
               ? fsrun_error_code(err)
               : finish_new_mount(env, dest, &o, index, err);
  if (is_sysfs && !env->own_netns) {
    /* without a netns of its own, sysfs would show the host's network devices: read-only; in a
     * user namespace the kernel refuses the mount, so bind the host's /sys, read-only throughout */
    o.flags |= MS_RDONLY;
    if (env->userns) {
      o.flags |= MS_BIND | MS_REC;
      return bind_tree(env, "/sys", dest, &o, MOUNT_ATTR_RDONLY, true, NULL, index, err);
    }
  }
  if (strcmp(type, "tmpfs") == 0) {
    char *data = tmpfs_data_with_mode(env, dest, o.data);
    if (data != NULL) {
      free(o.data);
      o.data = data;
    }
  }
  if (mount_fs(env, m->source, type, dest, o.flags & ~MS_REC, o.data,
               is_proc || is_sysfs || real_dir, index, err) < 0) {
    if (fsrun_error_code(err) == -EPERM && env->userns && is_sysfs) {
      /* a joined network namespace that this user namespace does not own: the kernel refuses
       * sysfs, so bind the host's /sys, read-only (as without a network namespace of its own) */
      fsrun_error_release(err);
      o.flags |= MS_BIND | MS_REC | MS_RDONLY;
      return bind_tree(env, "/sys", dest, &o, MOUNT_ATTR_RDONLY, true, NULL, index, err);
    }
    if (fsrun_error_code(err) == -EPERM && env->userns && strcmp(type, "mqueue") == 0) {
      /* mqueue of the host's ipc namespace cannot be mounted from a user namespace: bind it */
      fsrun_error_release(err);
      o.flags |= MS_BIND | MS_REC;
      return bind_tree(env, "/dev/mqueue", dest, &o, 0, false, NULL, index, err);
    }
    return fsrun_error_code(err);
  }
  return finish_new_mount(env, dest, &o, index, err);
}
