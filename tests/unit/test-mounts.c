/* Unit tests for mounts.c: every mount option maps to the right mount(2) flags, propagation,
 * recursive attributes or fs data; bind attributes; lexical path cleaning; and root_resolve, which
 * must create missing destinations inside the root whatever symlinks the rootfs holds. TAP output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "mounts.h"
#include "overlay-lower.h"
#include "scratch.h"
#include "tap.h"
#include "utils.h"

/* Parses a NULL-terminated list of options. */
static int parse(struct mount_options *o, fsrun_error_t *err, ...) {
  char *items[32];
  size_t n = 0;
  va_list ap;
  oci_strv v;
  va_start(ap, err);
  for (const char *s; (s = va_arg(ap, const char *)) != NULL && n < 32;)
    items[n++] = (char *)s;
  va_end(ap);
  v.items = items;
  v.len = n;
  return mount_options_parse(&v, o, err);
}

struct flag_case {
  const char *name;
  unsigned long flags;   /* expected MS_* set */
  unsigned long cleared; /* expected MS_* explicitly cleared */
};

static void test_flag_options(void) {
  static const struct flag_case cases[] = {
      {"ro", MS_RDONLY, 0},
      {"rw", 0, MS_RDONLY},
      {"nosuid", MS_NOSUID, 0},
      {"suid", 0, MS_NOSUID},
      {"nodev", MS_NODEV, 0},
      {"dev", 0, MS_NODEV},
      {"noexec", MS_NOEXEC, 0},
      {"exec", 0, MS_NOEXEC},
      {"sync", MS_SYNCHRONOUS, 0},
      {"async", 0, MS_SYNCHRONOUS},
      {"dirsync", MS_DIRSYNC, 0},
      {"remount", MS_REMOUNT, 0},
      {"mand", MS_MANDLOCK, 0},
      {"nomand", 0, MS_MANDLOCK},
      {"atime", 0, MS_NOATIME},
      {"noatime", MS_NOATIME, 0},
      {"relatime", MS_RELATIME, 0},
      {"norelatime", 0, MS_RELATIME},
      {"strictatime", MS_STRICTATIME, 0},
      {"nostrictatime", 0, MS_STRICTATIME},
      {"diratime", 0, MS_NODIRATIME},
      {"nodiratime", MS_NODIRATIME, 0},
      {"nosymfollow", MS_NOSYMFOLLOW, 0},
      {"symfollow", 0, MS_NOSYMFOLLOW},
      {"lazytime", MS_LAZYTIME, 0},
      {"nolazytime", 0, MS_LAZYTIME},
      {"iversion", MS_I_VERSION, 0},
      {"noiversion", 0, MS_I_VERSION},
      {"silent", MS_SILENT, 0},
      {"loud", 0, MS_SILENT},
      {"bind", MS_BIND, 0},
      {"rbind", MS_BIND | MS_REC, 0},
      {"defaults", 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct mount_options o;
    cleanup_error fsrun_error_t err = NULL;
    int r = parse(&o, &err, cases[i].name, NULL);
    tap_ok(r == 0 && o.flags == cases[i].flags && o.cleared == cases[i].cleared && o.data == NULL &&
               o.n_propagation == 0 && o.rec_attr_set == 0 && o.rec_attr_clr == 0,
           "`%s` -> flags 0x%lx cleared 0x%lx (got 0x%lx 0x%lx)", cases[i].name, cases[i].flags,
           cases[i].cleared, o.flags, o.cleared);
    mount_options_free(&o);
  }
}

static void test_propagation_options(void) {
  static const struct {
    const char *name;
    unsigned long value;
  } cases[] = {
      {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
      {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
      {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
      {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct mount_options o;
    cleanup_error fsrun_error_t err = NULL;
    int r = parse(&o, &err, cases[i].name, NULL);
    tap_ok(r == 0 && o.flags == 0 && o.n_propagation == 1 && o.propagation[0] == cases[i].value,
           "`%s` -> propagation 0x%lx and no mount flags", cases[i].name, cases[i].value);
    tap_ok(mount_propagation_from_name(cases[i].name) == cases[i].value,
           "rootfsPropagation `%s` -> 0x%lx", cases[i].name, cases[i].value);
    mount_options_free(&o);
  }
  tap_ok(mount_propagation_from_name("ro") == 0, "`ro` is not a propagation");
  tap_ok(mount_propagation_from_name("bogus") == 0, "an unknown name is not a propagation");
  {
    struct mount_options o;
    cleanup_error fsrun_error_t err = NULL;
    int r = parse(&o, &err, "slave", "shared", NULL);
    tap_ok(r == 0 && o.n_propagation == 2 && o.propagation[0] == MS_SLAVE &&
               o.propagation[1] == MS_SHARED,
           "propagation options are kept in order");
    mount_options_free(&o);
    r = parse(&o, &err, "private", "slave", "shared", "rprivate", "rslave", NULL);
    tap_ok(r < 0 && err != NULL && strstr(err->msg, "too many propagation") != NULL,
           "more than %d propagation options is an error", MOUNT_MAX_PROPAGATION);
  }
}

static void test_recursive_options(void) {
  static const struct {
    const char *name;
    uint64_t set, clr;
  } cases[] = {
      {"rro", MOUNT_ATTR_RDONLY, 0},
      {"rrw", 0, MOUNT_ATTR_RDONLY},
      {"rnosuid", MOUNT_ATTR_NOSUID, 0},
      {"rsuid", 0, MOUNT_ATTR_NOSUID},
      {"rnodev", MOUNT_ATTR_NODEV, 0},
      {"rdev", 0, MOUNT_ATTR_NODEV},
      {"rnoexec", MOUNT_ATTR_NOEXEC, 0},
      {"rexec", 0, MOUNT_ATTR_NOEXEC},
      {"rnodiratime", MOUNT_ATTR_NODIRATIME, 0},
      {"rdiratime", 0, MOUNT_ATTR_NODIRATIME},
      {"rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0},
      {"rsymfollow", 0, MOUNT_ATTR_NOSYMFOLLOW},
      {"rnoatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME},
      {"rstrictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME},
      {"rrelatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME},
      {"ratime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME},
      {"rnorelatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME},
      {"rnostrictatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct mount_options o;
    cleanup_error fsrun_error_t err = NULL;
    int r = parse(&o, &err, cases[i].name, NULL);
    tap_ok(r == 0 && o.flags == 0 && o.cleared == 0 && o.rec_attr_set == cases[i].set &&
               o.rec_attr_clr == cases[i].clr && o.data == NULL,
           "`%s` -> recursive set 0x%llx clear 0x%llx (got 0x%llx 0x%llx)", cases[i].name,
           (unsigned long long)cases[i].set, (unsigned long long)cases[i].clr,
           (unsigned long long)o.rec_attr_set, (unsigned long long)o.rec_attr_clr);
    mount_options_free(&o);
  }
  {
    struct mount_options o;
    cleanup_error fsrun_error_t err = NULL;
    int r = parse(&o, &err, "rro", "rrw", "rnoatime", "rstrictatime", NULL);
    tap_ok(r == 0 && o.rec_attr_set == MOUNT_ATTR_STRICTATIME &&
               o.rec_attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR__ATIME),
           "later recursive options override earlier ones");
    mount_options_free(&o);
  }
}

static void test_order_and_data(void) {
  struct mount_options o;
  cleanup_error fsrun_error_t err = NULL;
  int r;

  r = parse(&o, &err, "ro", "rw", NULL);
  tap_ok(r == 0 && !(o.flags & MS_RDONLY) && (o.cleared & MS_RDONLY), "ro then rw ends read-write");
  mount_options_free(&o);
  r = parse(&o, &err, "rw", "ro", NULL);
  tap_ok(r == 0 && (o.flags & MS_RDONLY) && !(o.cleared & MS_RDONLY), "rw then ro ends read-only");
  mount_options_free(&o);
  r = parse(&o, &err, "noatime", "strictatime", NULL);
  tap_ok(r == 0 && (o.flags & (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)) == MS_STRICTATIME,
         "atime modes replace each other (noatime then strictatime is strictatime)");
  mount_options_free(&o);
  r = parse(&o, &err, "strictatime", "noatime", NULL);
  tap_ok(r == 0 && (o.flags & (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)) == MS_NOATIME,
         "strictatime then noatime is noatime");
  mount_options_free(&o);

  r = parse(&o, &err, "nosuid", "size=65536k", "strictatime", "mode=755", NULL);
  tap_ok(r == 0 && o.data != NULL && strcmp(o.data, "size=65536k,mode=755") == 0 &&
             o.flags == (MS_NOSUID | MS_STRICTATIME),
         "unknown options are fs data in order: `%s`", o.data ? o.data : "(null)");
  mount_options_free(&o);
  r = parse(&o, &err, "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL);
  tap_ok(r == 0 && o.data && strcmp(o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5") == 0,
         "devpts options are data");
  mount_options_free(&o);
  r = parse(&o, &err, "lowerdir=/a:/b", "upperdir=/u", "workdir=/w", NULL);
  tap_ok(r == 0 && o.data && strcmp(o.data, "lowerdir=/a:/b,upperdir=/u,workdir=/w") == 0,
         "overlay options are data");
  mount_options_free(&o);
  r = mount_options_parse(NULL, &o, &err);
  tap_ok(r == 0 && o.flags == 0 && o.data == NULL, "no options at all");
  mount_options_free(&o);

  r = parse(&o, &err, "nosuid", "noexec", "nodev", "relatime", "ro", NULL);
  tap_ok(r == 0 && o.flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY),
         "the default cgroup mount's options");
  mount_options_free(&o);

  r = parse(&o, &err, "rw", "tmpcopyup", NULL);
  tap_ok(r == 0 && o.tmpcopyup && o.data == NULL, "`tmpcopyup` is a runtime option, not fs data");
  mount_options_free(&o);

  r = parse(&o, &err, "bind", "idmap", NULL);
  tap_ok(r == 0 && o.idmap && !o.idmap_recursive && o.data == NULL && o.flags == MS_BIND,
         "idmap: an idmapped bind, not recursive, not fs data");
  mount_options_free(&o);
  r = parse(&o, &err, "rbind", "ridmap", NULL);
  tap_ok(r == 0 && o.idmap && o.idmap_recursive && o.data == NULL, "ridmap: recursive idmap");
  mount_options_free(&o);
  r = parse(&o, &err, "ridmap", "idmap", NULL);
  tap_ok(r == 0 && o.idmap && o.idmap_recursive, "idmap after ridmap keeps it recursive");
  mount_options_free(&o);
  r = parse(&o, &err, "rbind", NULL);
  tap_ok(r == 0 && !o.idmap && !o.idmap_recursive, "no idmap option: not idmapped");
  mount_options_free(&o);
  r = parse(&o, &err, "bind", "idmap=uids=0-1-10;gids=0-1-10", NULL);
  tap_ok(r < 0 && err != NULL && strstr(err->msg, "uidMappings") != NULL && o.data == NULL,
         "idmap=... inline mappings are refused, not passed as data: %s",
         err ? err->msg : "(no error)");
  fsrun_error_release(&err);
}

static void test_bind_attr(void) {
  struct mount_attr a;
  struct mount_options o;
  cleanup_error fsrun_error_t err = NULL;

  parse(&o, &err, "rbind", "ro", "nosuid", "nodev", "noexec", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set ==
                 (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) &&
             a.attr_clr == 0,
         "ro,nosuid,nodev,noexec bind -> set those attributes, clear nothing");
  mount_options_free(&o);

  parse(&o, &err, "bind", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == 0 && a.attr_clr == 0, "a plain bind changes no attribute (source's kept)");
  mount_options_free(&o);

  parse(&o, &err, "bind", "rw", "suid", "dev", "exec", "diratime", "symfollow", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == 0 &&
             a.attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                            MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW),
         "rw,suid,dev,exec,diratime,symfollow clear only what they name");
  mount_options_free(&o);

  parse(&o, &err, "bind", "noatime", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == MOUNT_ATTR_NOATIME && a.attr_clr == MOUNT_ATTR__ATIME, "noatime bind");
  mount_options_free(&o);
  parse(&o, &err, "bind", "strictatime", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == MOUNT_ATTR_STRICTATIME && a.attr_clr == MOUNT_ATTR__ATIME,
         "strictatime bind");
  mount_options_free(&o);
  parse(&o, &err, "bind", "relatime", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == MOUNT_ATTR_RELATIME && a.attr_clr == MOUNT_ATTR__ATIME, "relatime bind");
  mount_options_free(&o);
  parse(&o, &err, "bind", "atime", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == 0 && a.attr_clr == MOUNT_ATTR__ATIME, "atime bind goes back to relatime");
  mount_options_free(&o);
  parse(&o, &err, "bind", "nosymfollow", "nodiratime", NULL);
  mount_flags_to_attr(o.flags, o.cleared, &a);
  tap_ok(a.attr_set == (MOUNT_ATTR_NOSYMFOLLOW | MOUNT_ATTR_NODIRATIME) && a.attr_clr == 0,
         "nosymfollow,nodiratime bind");
  mount_options_free(&o);
}

static void test_is_bind(void) {
  char *bind_opt[] = {"rbind", "ro"};
  char *no_bind[] = {"ro"};
  oci_mount m = {.destination = "/x", .type = "none", .options = {bind_opt, 2}};
  tap_ok(mount_entry_is_bind(&m), "an rbind option makes a bind mount whatever the type");
  m.options = (oci_strv){no_bind, 1};
  tap_ok(!mount_entry_is_bind(&m), "type none without bind is not a bind");
  m.type = "bind";
  tap_ok(mount_entry_is_bind(&m), "type bind is a bind");
}

static void test_path_clean(void) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"/", "/"},
      {"", "/"},
      {"proc", "/proc"},
      {"/proc/", "/proc"},
      {"//dev//pts", "/dev/pts"},
      {"/a/./b", "/a/b"},
      {"/a/b/../c", "/a/c"},
      {"../../..", "/"},
      {"/../../etc/x", "/etc/x"},
      {"a/..", "/"},
      {"/a/b/..", "/a"},
      {"./x/./", "/x"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cleanup_free char *r = path_clean_abs(cases[i].in);
    tap_ok(strcmp(r, cases[i].out) == 0, "clean `%s` -> `%s` (got `%s`)", cases[i].in, cases[i].out,
           r);
  }
}

/* --- root_resolve: escapes through symlinks must stay inside the root ------------------------- */

static char tmpdir[64];
static char escape_name[64];

static bool exists_at(int dirfd, const char *path, mode_t type) {
  struct stat st;
  return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == type;
}

static bool same_file(int fd, int dirfd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && fstatat(dirfd, path, &b, 0) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

static void test_root_resolve(void) {
  cleanup_close int base = -1;
  cleanup_close int root = -1;
  char host_path[256], link[512];
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-mounts.XXXXXX");
  if (mkdtemp(tmpdir) == NULL) {
    tap_ok(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  /* a name that must never appear on the host */
  snprintf(escape_name, sizeof(escape_name), "fsrun-escape-%d", (int)getpid());
  base = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  mkdirat(base, "root", 0755);
  mkdirat(base, "root/etc", 0755);
  mkdirat(base, "root/a", 0755);
  root = openat(base, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);

  /* an absolute symlink to a host directory */
  symlinkat("/etc", root, "mnt");
  /* a relative one that climbs far above the root */
  symlinkat("../../../../../../..", root, "up");
  /* dangling ones, absolute and relative, in the middle and at the end */
  snprintf(link, sizeof(link), "/%s/deep", escape_name);
  symlinkat(link, root, "dangling");
  symlinkat("../c", root, "a/b");
  snprintf(link, sizeof(link), "/tmp/%s-file", escape_name);
  symlinkat(link, root, "etc/hostfile");
  symlinkat("/tmp", root, "proc");
  symlinkat("loop2", root, "loop1");
  symlinkat("loop1", root, "loop2");

  {
    cleanup_error fsrun_error_t err = NULL;
    char path[256];
    cleanup_close int fd = -1;
    snprintf(path, sizeof(path), "/mnt/%s", escape_name);
    fd = root_resolve(root, path, ROOT_CREATE_DIR, false, &err);
    snprintf(host_path, sizeof(host_path), "/etc/%s", escape_name);
    snprintf(path, sizeof(path), "root/etc/%s", escape_name);
    tap_ok(fd >= 0 && exists_at(base, path, S_IFDIR) && same_file(fd, base, path) &&
               access(host_path, F_OK) < 0,
           "mnt -> /etc: the directory is created in root/etc, not the host's /etc (%s)",
           err ? err->msg : "ok");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    char path[256];
    cleanup_close int fd = -1;
    snprintf(path, sizeof(path), "/up/tmp/%s", escape_name);
    fd = root_resolve(root, path, ROOT_CREATE_DIR, false, &err);
    snprintf(host_path, sizeof(host_path), "/tmp/%s", escape_name);
    snprintf(path, sizeof(path), "root/tmp/%s", escape_name);
    tap_ok(fd >= 0 && exists_at(base, path, S_IFDIR) && same_file(fd, base, path) &&
               access(host_path, F_OK) < 0,
           "up -> ../../..: climbing stops at the root (%s)", err ? err->msg : "ok");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    char path[256];
    cleanup_close int fd = root_resolve(root, "/dangling/x", ROOT_CREATE_DIR, false, &err);
    snprintf(path, sizeof(path), "root/%s/deep/x", escape_name);
    snprintf(host_path, sizeof(host_path), "/%s", escape_name);
    tap_ok(fd >= 0 && exists_at(base, path, S_IFDIR) && same_file(fd, base, path) &&
               access(host_path, F_OK) < 0,
           "a dangling absolute symlink is followed inside the root (%s)", err ? err->msg : "ok");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_close int fd = root_resolve(root, "a/b/d", ROOT_CREATE_DIR, false, &err);
    tap_ok(fd >= 0 && exists_at(base, "root/c/d", S_IFDIR) && same_file(fd, base, "root/c/d"),
           "a dangling relative symlink in the middle resolves next to it (%s)",
           err ? err->msg : "ok");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    char path[256];
    cleanup_close int fd = root_resolve(root, "/etc/hostfile", ROOT_CREATE_FILE, false, &err);
    snprintf(path, sizeof(path), "root/tmp/%s-file", escape_name);
    snprintf(host_path, sizeof(host_path), "/tmp/%s-file", escape_name);
    tap_ok(fd >= 0 && exists_at(base, path, S_IFREG) && same_file(fd, base, path) &&
               access(host_path, F_OK) < 0,
           "a file target through a dangling symlink is created inside the root (%s)",
           err ? err->msg : "ok");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_close int fd = root_resolve(root, "/new/dir/file", ROOT_CREATE_FILE, false, &err);
    tap_ok(fd >= 0 && exists_at(base, "root/new/dir", S_IFDIR) &&
               exists_at(base, "root/new/dir/file", S_IFREG),
           "missing parents are directories, the last component a file");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    int fd = root_resolve(root, "/proc", ROOT_CREATE_DIR, true, &err);
    tap_ok(fd == -ELOOP, "no_symlinks refuses a symlink (%s)", err ? err->msg : "no error");
    if (fd >= 0)
      close(fd);
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    int fd = root_resolve(root, "/loop1/x", ROOT_CREATE_DIR, false, &err);
    tap_ok(fd < 0 && err != NULL, "a symlink loop is an error (%s)", err ? err->msg : "no error");
    if (fd >= 0)
      close(fd);
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    int fd = root_resolve(root, "/nothere", ROOT_NO_CREATE, false, &err);
    tap_ok(fd == -ENOENT && !exists_at(base, "root/nothere", S_IFDIR),
           "ROOT_NO_CREATE returns -ENOENT and creates nothing");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_close int fd = root_resolve(root, "/", ROOT_NO_CREATE, false, &err);
    tap_ok(fd >= 0 && same_file(fd, base, "root"), "`/` is the root itself");
  }
  scratch_remove(tmpdir);
}

/* overlay-lower.c: the git overlay's lower layer is the directory checked before, never what its
 * path shows after a swap (a rename, a link) */
static void test_overlay_lower(void) {
  char dir[] = "/tmp/fsrun-overlay-lower-XXXXXX";
  char common[128], moved[128];
  struct stat st;
  if (mkdtemp(dir) == NULL) {
    tap_ok(0, "mkdtemp");
    return;
  }
  snprintf(common, sizeof(common), "%s/common", dir);
  snprintf(moved, sizeof(moved), "%s/moved", dir);
  if (mkdir(common, 0700) < 0 || stat(common, &st) < 0) {
    tap_ok(0, "mkdir %s", common);
    return;
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_close int fd = overlay_lower_open(common, st.st_dev, st.st_ino, &err);
    struct stat got;
    tap_ok(fd >= 0 && fstat(fd, &got) == 0 && got.st_ino == st.st_ino,
           "the checked directory at its path opens");
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    int fd;
    if (rename(common, moved) < 0 || mkdir(common, 0700) < 0)
      tap_ok(0, "swap %s", common);
    fd = overlay_lower_open(common, st.st_dev, st.st_ino, &err);
    tap_ok(fd == -ESTALE && err != NULL && strstr(err->msg, common) != NULL,
           "a directory put at the checked path is refused, naming it (%s)",
           err ? err->msg : "no error");
    if (fd >= 0)
      close(fd);
  }
  {
    cleanup_error fsrun_error_t err = NULL;
    int fd;
    if (rmdir(common) < 0 || symlink("moved", common) < 0)
      tap_ok(0, "link %s", common);
    fd = overlay_lower_open(common, st.st_dev, st.st_ino, &err);
    tap_ok(fd < 0, "a link at the checked path is refused, even to the checked directory (%s)",
           err ? err->msg : "no error");
    if (fd >= 0)
      close(fd);
  }
  {
    cleanup_free char *a =
        overlay_data_set_lower("lowerdir=/r/.git,upperdir=/u,workdir=/w", "/p/7");
    cleanup_free char *b = overlay_data_set_lower("upperdir=/u,lowerdir=/r", "/p/7");
    cleanup_free char *c = overlay_data_set_lower("lowerdir=/a:/b,upperdir=/u", "/p/7");
    cleanup_free char *d = overlay_data_set_lower("lowerdir=/a,lowerdir=/b", "/p/7");
    cleanup_free char *e = overlay_data_lower("upperdir=/u,lowerdir=/r/.git,workdir=/w");
    cleanup_free char *f = overlay_data_lower("lowerdir+=/a,lowerdir=/b");
    tap_ok(a && strcmp(a, "lowerdir=/p/7,upperdir=/u,workdir=/w") == 0 && b &&
               strcmp(b, "upperdir=/u,lowerdir=/p/7") == 0,
           "the one lowerdir is replaced in place (%s, %s)", a ? a : "NULL", b ? b : "NULL");
    tap_ok(c == NULL && d == NULL && f == NULL,
           "several lower layers are not one checked directory");
    tap_ok(e && strcmp(e, "/r/.git") == 0, "the lowerdir's path is read (%s)", e ? e : "NULL");
  }
  scratch_remove(dir);
}

int main(void) {
  test_flag_options();
  test_propagation_options();
  test_recursive_options();
  test_order_and_data();
  test_bind_attr();
  test_is_bind();
  test_path_clean();
  test_root_resolve();
  test_overlay_lower();
  return tap_done();
}
