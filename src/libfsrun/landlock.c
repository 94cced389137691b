/* Landlock rule sets: the run.fsrun.landlock annotation and the generic rules the Fusion sandbox
 * fills, applied with the raw landlock_* syscalls (glibc has no wrappers).
 *
 * The uapi header of the build host may be older than the running kernel (Debian 12's stops at ABI
 * 2), so the structures and access bits are declared here, with the ABI that introduced each. */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "log.h"
#include "openat2-compat.h"
#include "utils.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule       445
#define SYS_landlock_restrict_self  446
#endif

/* --- kernel interface (include/uapi/linux/landlock.h) --------------------------------------------
 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH      1
#define LL_RULE_NET_PORT          2

#define LL_FS_EXECUTE     (1ULL << 0)
#define LL_FS_WRITE_FILE  (1ULL << 1)
#define LL_FS_READ_FILE   (1ULL << 2)
#define LL_FS_READ_DIR    (1ULL << 3)
#define LL_FS_REMOVE_DIR  (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR   (1ULL << 6)
#define LL_FS_MAKE_DIR    (1ULL << 7)
#define LL_FS_MAKE_REG    (1ULL << 8)
#define LL_FS_MAKE_SOCK   (1ULL << 9)
#define LL_FS_MAKE_FIFO   (1ULL << 10)
#define LL_FS_MAKE_BLOCK  (1ULL << 11)
#define LL_FS_MAKE_SYM    (1ULL << 12)
#define LL_FS_REFER       (1ULL << 13) /* ABI 2 */
#define LL_FS_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV   (1ULL << 15) /* ABI 5 */

#define LL_NET_BIND_TCP    (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

/* The newest ABI whose rights fsrun knows; a newer kernel is used at this level. */
#define LL_KNOWN_ABI 7
#define LL_NET_ABI   LANDLOCK_TCP_ABI

/* Rights that make sense on a non-directory (the kernel refuses the others on a file rule). */
#define LL_FS_FILE_RIGHTS                                                                          \
  (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ_ONLY (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

static uint64_t fs_rights_for_abi(int abi) {
  uint64_t rights = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
  if (abi >= 2)
    rights |= LL_FS_REFER;
  if (abi >= 3)
    rights |= LL_FS_TRUNCATE;
  if (abi >= 5)
    rights |= LL_FS_IOCTL_DEV;
  return rights;
}

int landlock_abi_version(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

/* --- the rules structure
 * --------------------------------------------------------------------------- */

static const char *origin_of(const struct fsrun_landlock_rules *r) {
  return r->origin != NULL ? r->origin : "landlock";
}

struct fsrun_landlock_rules *landlock_rules_new(const char *origin) {
  struct fsrun_landlock_rules *r = xmalloc0(sizeof(*r));
  r->origin = xstrdup(origin);
  return r;
}

static void *xrealloc_array(void *p, size_t n, size_t size) {
  void *q = reallocarray(p, n, size);
  if (q == NULL)
    abort();
  return q;
}

void landlock_rules_add_path(struct fsrun_landlock_rules *r, const char *path, bool writable) {
  char ***list = writable ? &r->read_write : &r->read_only;
  size_t *n = writable ? &r->n_read_write : &r->n_read_only;
  *list = xrealloc_array(*list, *n + 1, sizeof(char *));
  (*list)[(*n)++] = xstrdup(path);
  r->restrict_fs = true;
}

void landlock_rules_add_port(struct fsrun_landlock_rules *r, uint16_t port, bool bind) {
  uint16_t **list = bind ? &r->tcp_bind : &r->tcp_connect;
  size_t *n = bind ? &r->n_tcp_bind : &r->n_tcp_connect;
  *list = xrealloc_array(*list, *n + 1, sizeof(uint16_t));
  (*list)[(*n)++] = port;
  if (bind)
    r->restrict_tcp_bind = true;
  else
    r->restrict_tcp_connect = true;
}

void landlock_rules_free(struct fsrun_landlock_rules *r) {
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_read_only; i++)
    free(r->read_only[i]);
  for (size_t i = 0; i < r->n_read_write; i++)
    free(r->read_write[i]);
  free(r->read_only);
  free(r->read_write);
  free(r->tcp_connect);
  free(r->tcp_bind);
  free(r->origin);
  free(r);
}

void landlock_rules_freep(struct fsrun_landlock_rules **r) {
  landlock_rules_free(*r);
  *r = NULL;
}

/* --- the annotation
 * ------------------------------------------------------------------------------- */

static void yajl_tree_freep(yajl_val *v) {
  if (*v != NULL)
    yajl_tree_free(*v);
}

static int parse_path_list(struct fsrun_landlock_rules *r, const char *key, yajl_val v,
                           bool writable, fsrun_error_t *err) {
  if (!YAJL_IS_ARRAY(v))
    return fsrun_error_make(err, 0, "%s.%s: expected an array of absolute paths", r->origin, key);
  r->restrict_fs = true;
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val item = v->u.array.values[i];
    const char *path = YAJL_GET_STRING(item);
    if (path == NULL)
      return fsrun_error_make(err, 0, "%s.%s[%zu]: expected a string", r->origin, key, i);
    if (path[0] != '/')
      return fsrun_error_make(err, 0, "%s.%s[%zu]: expected an absolute path, got `%s`", r->origin,
                              key, i, path);
    if (strlen(path) >= PATH_MAX)
      return fsrun_error_make(err, 0, "%s.%s[%zu]: path too long", r->origin, key, i);
    landlock_rules_add_path(r, path, writable);
  }
  return 0;
}

static int parse_port_list(struct fsrun_landlock_rules *r, const char *key, yajl_val v, bool bind,
                           fsrun_error_t *err) {
  if (!YAJL_IS_ARRAY(v))
    return fsrun_error_make(err, 0, "%s.%s: expected an array of TCP ports", r->origin, key);
  if (bind)
    r->restrict_tcp_bind = true;
  else
    r->restrict_tcp_connect = true;
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val item = v->u.array.values[i];
    if (!YAJL_IS_INTEGER(item) || YAJL_GET_INTEGER(item) < 0 || YAJL_GET_INTEGER(item) > 65535)
      return fsrun_error_make(err, 0, "%s.%s[%zu]: expected a TCP port (0-65535)", r->origin, key,
                              i);
    landlock_rules_add_port(r, (uint16_t)YAJL_GET_INTEGER(item), bind);
  }
  return 0;
}

int landlock_parse_annotation(const char *json, struct fsrun_landlock_rules **out,
                              fsrun_error_t *err) {
  char errbuf[256] = "";
  __attribute__((cleanup(yajl_tree_freep))) yajl_val root = NULL;
  cleanup_landlock_rules struct fsrun_landlock_rules *r =
      landlock_rules_new("annotations[\"" LANDLOCK_ANNOTATION "\"]");
  int ret;

  *out = NULL;
  if (json == NULL)
    return fsrun_error_make(err, 0, "%s: missing value", r->origin);
  root = yajl_tree_parse(json, errbuf, sizeof(errbuf));
  if (root == NULL) {
    /* yajl's message spans lines (it quotes the input); the first line says what is wrong */
    errbuf[strcspn(errbuf, "\n")] = '\0';
    return fsrun_error_make(err, 0, "%s: invalid JSON: %s", r->origin,
                            errbuf[0] ? errbuf : "parse error");
  }
  if (!YAJL_IS_OBJECT(root))
    return fsrun_error_make(err, 0, "%s: expected a JSON object", r->origin);

  for (size_t i = 0; i < root->u.object.len; i++) {
    const char *key = root->u.object.keys[i];
    yajl_val v = root->u.object.values[i];
    if (strcmp(key, "readOnly") == 0)
      ret = parse_path_list(r, key, v, false, err);
    else if (strcmp(key, "readWrite") == 0)
      ret = parse_path_list(r, key, v, true, err);
    else if (strcmp(key, "tcpConnect") == 0)
      ret = parse_port_list(r, key, v, false, err);
    else if (strcmp(key, "tcpBind") == 0)
      ret = parse_port_list(r, key, v, true, err);
    else if (strcmp(key, "strict") == 0) {
      if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
        return fsrun_error_make(err, 0, "%s.strict: expected a boolean", r->origin);
      r->strict = YAJL_IS_TRUE(v);
      ret = 0;
    } else
      ret = fsrun_error_make(err, 0,
                             "%s: unknown key `%s` (known: readOnly, readWrite, tcpConnect, "
                             "tcpBind, strict)",
                             r->origin, key);
    if (ret < 0)
      return ret;
  }
  *out = steal_ptr(&r);
  return 0;
}

static bool strv_contains(const oci_strv *v, const char *s) {
  for (size_t i = 0; i < v->len; i++)
    if (strcmp(v->items[i], s) == 0)
      return true;
  return false;
}

int landlock_rules_from_config(const oci_config *c, struct fsrun_landlock_rules **out,
                               fsrun_error_t *err) {
  cleanup_landlock_rules struct fsrun_landlock_rules *r = NULL;
  const char *value = oci_map_get(&c->annotations, LANDLOCK_ANNOTATION);
  const oci_process *p = c->process;
  int ret;

  *out = NULL;
  if (value == NULL)
    return 0;
  ret = landlock_parse_annotation(value, &r, err);
  if (ret < 0)
    return ret;
  if (p != NULL && !p->no_new_privileges &&
      !(p->capabilities != NULL && strv_contains(&p->capabilities->effective, "CAP_SYS_ADMIN")))
    return fsrun_error_make(err, 0,
                            "%s: Landlock can only restrict a process that has no_new_privs or "
                            "CAP_SYS_ADMIN: set process.noNewPrivileges to true",
                            r->origin);
  ret = landlock_check_kernel(r, err);
  if (ret < 0)
    return ret;
  *out = steal_ptr(&r);
  return 0;
}

/* --- kernel support
 * ------------------------------------------------------------------------------- */

/* What these rules would lose on a kernel at `abi`: up to 4 messages in out[], returns how many.
 * Rights that a lower ABI cannot express are rights the kernel cannot restrict, so they are a
 * downgrade. The exception is REFER on ABI 1: there reparenting is always denied, which is
 * stricter. */
static size_t missing_features(const struct fsrun_landlock_rules *r, int abi, const char *out[4]) {
  size_t n = 0;
  if (abi <= 0) {
    out[n++] = "the kernel has no Landlock (not built in, or not in the lsm= boot list): nothing "
               "is restricted";
    return n;
  }
  if ((r->restrict_tcp_connect || r->restrict_tcp_bind) && abi < LL_NET_ABI)
    out[n++] = "TCP rules need Landlock ABI 4 (Linux 6.7): TCP is not restricted";
  if (r->restrict_fs && abi < 3)
    out[n++] = "truncate(2) is not restricted before Landlock ABI 3 (Linux 6.2)";
  if (r->restrict_fs && abi < 5)
    out[n++] = "ioctl(2) on device files is not restricted before Landlock ABI 5 (Linux 6.10)";
  return n;
}

static bool rules_restrict_anything(const struct fsrun_landlock_rules *r) {
  return r->restrict_fs || r->restrict_tcp_connect || r->restrict_tcp_bind;
}

static bool rules_make_domain(const struct fsrun_landlock_rules *r) {
  return rules_restrict_anything(r) || r->isolate;
}

int landlock_check_kernel(const struct fsrun_landlock_rules *r, fsrun_error_t *err) {
  const char *missing[4];
  int abi;
  if (r == NULL || !r->strict || !rules_restrict_anything(r))
    return 0;
  abi = landlock_abi_version();
  if (missing_features(r, abi, missing) > 0)
    return fsrun_error_make(err, 0, "%s: strict: kernel Landlock ABI %d: %s", origin_of(r), abi,
                            missing[0]);
  return 0;
}

/* --- applying
 * -------------------------------------------------------------------------------------- */

static int open_beneath_root(int root_fd, const char *path) {
  struct open_how how = {
      .flags = O_PATH | O_CLOEXEC,
      .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  long fd = openat2_compat(root_fd, path, &how);
  return fd < 0 ? -1 : (int)fd;
}

static int add_path_rules(int ruleset_fd, int root_fd, const struct fsrun_landlock_rules *r,
                          uint64_t handled, bool writable, fsrun_error_t *err) {
  char **paths = writable ? r->read_write : r->read_only;
  size_t n = writable ? r->n_read_write : r->n_read_only;
  const char *key = writable ? "readWrite" : "readOnly";
  uint64_t wanted = writable ? handled : (LL_FS_READ_ONLY & handled);

  for (size_t i = 0; i < n; i++) {
    cleanup_close int fd = open_beneath_root(root_fd, paths[i]);
    struct ll_path_beneath_attr attr;
    struct stat st;
    if (fd < 0) {
      if (errno == ENOENT && !r->strict) {
        log_warning("%s.%s[%zu]: `%s` does not exist in the container: no rule added", origin_of(r),
                    key, i, paths[i]);
        continue;
      }
      return fsrun_error_errno(err, "%s.%s[%zu]: open `%s`", origin_of(r), key, i, paths[i]);
    }
    if (fstat(fd, &st) < 0)
      return fsrun_error_errno(err, "%s.%s[%zu]: stat `%s`", origin_of(r), key, i, paths[i]);
    attr.allowed_access = S_ISDIR(st.st_mode) ? wanted : (wanted & LL_FS_FILE_RIGHTS);
    attr.parent_fd = fd;
    if (attr.allowed_access == 0)
      continue;
    if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_PATH_BENEATH, &attr, 0) < 0)
      return fsrun_error_errno(err, "%s.%s[%zu]: landlock_add_rule `%s`", origin_of(r), key, i,
                               paths[i]);
  }
  return 0;
}

static int add_port_rules(int ruleset_fd, const struct fsrun_landlock_rules *r, bool bind,
                          fsrun_error_t *err) {
  const uint16_t *ports = bind ? r->tcp_bind : r->tcp_connect;
  size_t n = bind ? r->n_tcp_bind : r->n_tcp_connect;
  for (size_t i = 0; i < n; i++) {
    struct ll_net_port_attr attr = {
        .allowed_access = bind ? LL_NET_BIND_TCP : LL_NET_CONNECT_TCP,
        .port = ports[i],
    };
    if (syscall(SYS_landlock_add_rule, ruleset_fd, LL_RULE_NET_PORT, &attr, 0) < 0)
      return fsrun_error_errno(err, "%s.%s[%zu]: landlock_add_rule port %u", origin_of(r),
                               bind ? "tcpBind" : "tcpConnect", i, (unsigned)ports[i]);
  }
  return 0;
}

int landlock_apply(const struct fsrun_landlock_rules *r, fsrun_error_t *err) {
  struct ll_ruleset_attr attr = {0};
  size_t attr_size;
  cleanup_close int ruleset_fd = -1;
  cleanup_close int root_fd = -1;
  const char *missing[4];
  size_t n_missing;
  bool net;
  int abi, ret;

  if (r == NULL || !rules_make_domain(r))
    return 0;

  abi = landlock_abi_version();
  if (abi <= 0 && !rules_restrict_anything(r))
    return 0; /* isolate alone: the caller knows */
  n_missing = missing_features(r, abi, missing);
  if (n_missing > 0 && r->strict)
    return fsrun_error_make(err, 0, "%s: strict: kernel Landlock ABI %d: %s", origin_of(r), abi,
                            missing[0]);
  for (size_t i = 0; i < n_missing; i++)
    log_warning("%s: kernel Landlock ABI %d: %s", origin_of(r), abi, missing[i]);
  if (abi <= 0)
    return 0;
  if (r->restrict_fs && abi == 1)
    log_info("%s: Landlock ABI 1: renaming or linking files across directories is always denied",
             origin_of(r));
  if (abi > LL_KNOWN_ABI)
    abi = LL_KNOWN_ABI;

  net = abi >= LL_NET_ABI && (r->restrict_tcp_connect || r->restrict_tcp_bind);
  if (r->restrict_fs)
    attr.handled_access_fs = fs_rights_for_abi(abi);
  if (net) {
    if (r->restrict_tcp_connect)
      attr.handled_access_net |= LL_NET_CONNECT_TCP;
    if (r->restrict_tcp_bind)
      attr.handled_access_net |= LL_NET_BIND_TCP;
  }
  if (r->isolate && attr.handled_access_fs == 0)
    attr.handled_access_fs = LL_FS_MAKE_BLOCK; /* a domain that denies what no one here may do */
  if (attr.handled_access_fs == 0 && attr.handled_access_net == 0)
    return 0; /* only TCP rules, on a kernel without TCP support: already warned */
  /* A kernel before ABI 4 rejects a bigger struct only when the extra bytes are not zero; sending
   * the short form when there are no network rules keeps ABI 1-3 kernels happy either way. */
  attr_size = net ? sizeof(attr) : sizeof(attr.handled_access_fs);

  ruleset_fd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset_fd < 0)
    return fsrun_error_errno(err, "%s: landlock_create_ruleset", origin_of(r));

  if (r->restrict_fs) {
    root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0)
      return fsrun_error_errno(err, "%s: open `/`", origin_of(r));
    ret = add_path_rules(ruleset_fd, root_fd, r, attr.handled_access_fs, false, err);
    if (ret == 0)
      ret = add_path_rules(ruleset_fd, root_fd, r, attr.handled_access_fs, true, err);
    if (ret < 0)
      return ret;
  }
  if (net) {
    ret = add_port_rules(ruleset_fd, r, false, err);
    if (ret == 0)
      ret = add_port_rules(ruleset_fd, r, true, err);
    if (ret < 0)
      return ret;
  }

  if (r->set_no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return fsrun_error_errno(err, "%s: prctl(PR_SET_NO_NEW_PRIVS)", origin_of(r));
  if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0) {
    if (errno == EPERM)
      return fsrun_error_errno(err,
                               "%s: landlock_restrict_self (the process needs no_new_privs or "
                               "CAP_SYS_ADMIN: set process.noNewPrivileges to true)",
                               origin_of(r));
    return fsrun_error_errno(err, "%s: landlock_restrict_self", origin_of(r));
  }
  return 0;
}
