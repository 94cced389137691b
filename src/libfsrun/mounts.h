/* Mount options and performing one `mounts` entry inside the rootfs, plus the fd-based path helpers
 * the rest of the rootfs code uses: every path inside the container is resolved against a rootfs fd
 * with RESOLVE_IN_ROOT, so a symlink in the (untrusted) rootfs can never lead out of it. */
#ifndef FSRUN_MOUNTS_H
#define FSRUN_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "error.h"
#include "oci.h"

#define MOUNT_MAX_PROPAGATION 4

/* One `mounts[].options` list, parsed. Options apply in order: ["ro", "rw"] ends read-write. */
struct mount_options {
  unsigned long flags;   /* MS_* for mount(2) (MS_BIND, MS_REC for rbind, MS_RDONLY, ...) */
  unsigned long cleared; /* MS_* attributes an option explicitly turned off ("rw", "suid", ...) */
  unsigned long
      propagation[MOUNT_MAX_PROPAGATION]; /* MS_SHARED/SLAVE/PRIVATE/UNBINDABLE [|MS_REC] */
  size_t n_propagation;
  uint64_t rec_attr_set; /* MOUNT_ATTR_* for mount_setattr(AT_RECURSIVE): "rro", "rnosuid", ... */
  uint64_t rec_attr_clr;
  char *data; /* options the runtime does not interpret, comma-separated, for the fs; or NULL */
  bool idmap; /* "idmap" or "ridmap": an idmapped bind (see idmap.h) */
  bool idmap_recursive; /* "ridmap": the submounts of an rbind are idmapped too */
  bool tmpcopyup;       /* "tmpcopyup" (podman --read-only, --tmpfs): see mount_entry */
};

/* Parses options (NULL or empty = none). Unknown options become fs data. */
int mount_options_parse(const oci_strv *options, struct mount_options *out, fsrun_error_t *err);
void mount_options_free(struct mount_options *o);
/* The propagation value of a rootfsPropagation / option name ("rslave" -> MS_SLAVE|MS_REC), 0 if
 * the name is not a propagation option. */
unsigned long mount_propagation_from_name(const char *name);

/* The per-mount attributes (for mount_setattr without AT_RECURSIVE) that the options ask to change
 * on a bind mount: only what an option names is set or cleared, so flags the source mount already
 * has (locked ones in a user namespace among them) are kept. */
void mount_flags_to_attr(unsigned long flags, unsigned long cleared, struct mount_attr *attr);

/* "a//b/../c/" -> "/a/c": a lexically clean absolute path (relative paths are relative to "/").
 * ".." never climbs above "/". Caller frees. */
char *path_clean_abs(const char *path);

/* What root_resolve creates when the path is missing. */
typedef enum {
  ROOT_NO_CREATE = 0,
  ROOT_CREATE_DIR,
  ROOT_CREATE_FILE,
} root_create_kind;

/* Opens path (a container path) inside the tree of root_fd with RESOLVE_IN_ROOT: symlinks resolve
 * as if root_fd were "/". Missing components are created (directories 0755; the last one as
 * `create` says, a file 0644) with mkdirat/openat(O_EXCL|O_NOFOLLOW) step by step, and a dangling
 * symlink on the way is followed inside the root. no_symlinks refuses any symlink on the path
 * (ELOOP). Returns an fd (O_PATH, or O_RDONLY for a file just created) or a negative errno with
 * *err set (-ENOENT for a missing path with ROOT_NO_CREATE). */
int root_resolve(int root_fd, const char *path, root_create_kind create, bool no_symlinks,
                 fsrun_error_t *err);

/* The environment a `mounts` entry is performed in (phase 1: before pivot_root). */
/* A cgroup hierarchy of the host as the runtime found it before the clone. */
struct mount_cgroup_hierarchy {
  const char *controllers; /* "cpu,cpuacct", "name=systemd"; "" for cgroup2 */
  const char *mountpoint;  /* the host's mount point */
};

/* The directory the last mount target was made in, kept open while the mounts of a config are
 * made: most go into a few directories (/, /etc, /dev), each then reached once instead of once per
 * mount. rootfs.c drops it once a mount covers that directory or one above it. */
struct mount_dir_cache {
  char *path; /* clean and absolute; NULL: none */
  int fd;     /* O_PATH, reached inside the rootfs */
  bool proc;  /* it is on procfs */
};

/* Closes the cached directory when a mount onto dest (clean, absolute) covers it. */
void mount_dir_cache_drop(struct mount_dir_cache *c, const char *dest);

struct mount_env {
  int rootfs_fd;                /* O_PATH fd on the rootfs (already bound onto itself) */
  struct mount_dir_cache *dirs; /* NULL: no cache */
  const char *bundle;           /* relative bind sources resolve against it */
  bool userns;                  /* in a new user namespace */
  bool own_netns;               /* sysfs read-write only with a netns that is not the runtime's */
  bool new_cgroupns;
  int runtime_sync_fd; /* the sync socket to the runtime, which idmaps bind trees; -1: none */
  /* the host's hierarchies on a v1 or hybrid host, when the runtime knows them; else read */
  const struct mount_cgroup_hierarchy *cgroup_hierarchies;
  size_t n_cgroup_hierarchies;
  /* no procfs at /proc (the deferred proc mounts, after pivot_root): a new filesystem is mounted
   * onto its target as the current directory rather than through /proc/self/fd */
  bool mount_at_cwd;
  /* a user namespace's late-joined pid namespace: procfs is mounted through the first init
   * (proc-mounter.h) on proc_mounter_fd */
  bool proc_by_mounter;
  int proc_mounter_fd;
  bool proc_by_runtime; /* ...or by the runtime, on runtime_sync_fd (proc_runtime_mount) */
};

/* True when the entry is a bind mount (type "bind", or a "bind"/"rbind" option). */
bool mount_entry_is_bind(const oci_mount *m);
/* st (the bind source `source` of mounts[index], opened) is the object checked records, when it
 * records one (bind-identity.h); ESTALE otherwise. checked may be NULL. */
int mount_check_source_id(const oci_mount *checked, const struct stat *st, const char *source,
                          size_t index, fsrun_error_t *err);
/* Performs mounts[index] inside the rootfs. Errors start with "mounts[INDEX]: ". */
int mount_entry(const struct mount_env *env, const oci_mount *m, size_t index, fsrun_error_t *err);

/* Mounts a clone of the mount tree at source_fd (an fd on a file or directory; AT_RECURSIVE with
 * recursive) onto target_fd. */
int mount_bind_fd(int source_fd, int target_fd, bool recursive, fsrun_error_t *err);

#endif
