/* A cache of compiled seccomp programs: what a key covers and when an entry is trusted are in
 * seccomp-cache.h. */
#include "seccomp-cache.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libseccomp.h> /* the system <seccomp.h>: ours shadows it on the include path */
#include <link.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "log.h"
#include "openat2-compat.h"
#include "seccomp-compact.h"
#include "sha256.h"
#include "utils.h"

/* the key's own layout: a change of what goes into it changes every key */
#define KEY_FORMAT  "fsrun seccomp cache 1"
#define DIGEST_SIZE 32
#define MAX_PROGRAM (BPF_MAXINSNS * sizeof(struct sock_filter))

/* --- the key -------------------------------------------------------------------------------- */

static void put_u64(struct sha256_ctx *c, uint64_t v) {
  sha256_update(c, &v, sizeof(v));
}

/* a string with its length; NULL (absent) apart from "" */
static void put_str(struct sha256_ctx *c, const char *s) {
  put_u64(c, s == NULL ? UINT64_MAX : strlen(s));
  if (s != NULL)
    sha256_update(c, s, strlen(s));
}

static void put_strv(struct sha256_ctx *c, const oci_strv *v) {
  put_u64(c, v->len);
  for (size_t i = 0; i < v->len; i++)
    put_str(c, v->items[i]);
}

static void put_syscall(struct sha256_ctx *c, const oci_seccomp_syscall *sc) {
  put_strv(c, &sc->names);
  put_str(c, sc->action);
  put_u64(c, sc->has_errno_ret);
  put_u64(c, sc->errno_ret);
  put_u64(c, sc->n_args);
  for (size_t k = 0; k < sc->n_args; k++) {
    put_u64(c, sc->args[k].index);
    put_u64(c, sc->args[k].value);
    put_u64(c, sc->args[k].value_two);
    put_str(c, sc->args[k].op);
  }
}

/* every field of the profile, in the order of the runtime-spec */
static void put_profile(struct sha256_ctx *c, const oci_seccomp *s) {
  put_str(c, s->default_action);
  put_u64(c, s->has_default_errno_ret);
  put_u64(c, s->default_errno_ret);
  put_strv(c, &s->architectures);
  put_strv(c, &s->flags);
  put_str(c, s->listener_path);
  put_str(c, s->listener_metadata);
  put_u64(c, s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++)
    put_syscall(c, &s->syscalls[i]);
}

struct build_id {
  const uint8_t *bytes;
  size_t len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  struct build_id *id = data;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE)
      continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
      const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
          memcmp(p + sizeof(*n), "GNU", 4) == 0 && desc + n->n_descsz <= end) {
        id->bytes = (const uint8_t *)desc;
        id->len = n->n_descsz;
        return 1;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return 1; /* the first object is the program itself */
}

/* what the kernel accepts, as libseccomp and seccomp(2) say: the program libseccomp builds, and
 * whether it builds one, follow from it */
static void put_kernel(struct sha256_ctx *c) {
  static const uint32_t actions[] = {SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, SCMP_ACT_TRAP,
                                     SCMP_ACT_ERRNO(0),     SCMP_ACT_TRACE(0),    SCMP_ACT_LOG,
                                     SCMP_ACT_ALLOW,        SCMP_ACT_NOTIFY};
  struct utsname u;
  for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
    uint32_t a = actions[i];
    put_u64(c, syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &a) == 0);
  }
  put_u64(c, seccomp_api_get());
  if (uname(&u) == 0) {
    put_str(c, u.release);
    put_str(c, u.machine);
  }
}

bool seccomp_cache_key(const oci_seccomp *s, unsigned int flags, bool has_notify, uint8_t key[32]) {
  const struct scmp_version *v = seccomp_version();
  struct build_id id = {0};
  struct sha256_ctx c;

  dl_iterate_phdr(find_build_id, &id);
  if (id.len == 0 || v == NULL)
    return false;
  sha256_init(&c);
  put_str(&c, KEY_FORMAT);
  put_str(&c, PACKAGE_VERSION);
  put_u64(&c, id.len);
  sha256_update(&c, id.bytes, id.len);
  put_u64(&c, SECCOMP_COMPACT_VERSION);
  put_u64(&c, v->major);
  put_u64(&c, v->minor);
  put_u64(&c, v->micro);
  put_kernel(&c);
  put_u64(&c, flags);
  put_u64(&c, has_notify);
  put_profile(&c, s);
  sha256_final(&c, key);
  return true;
}

/* --- the directory and its entries ---------------------------------------------------------- */

static void entry_name(const uint8_t key[32], char name[65]) {
  for (int i = 0; i < 32; i++)
    snprintf(name + 2 * i, 3, "%02x", key[i]);
}

/* the digest an entry ends with: over the key, so that an entry moved to another name is no
 * entry there */
static void entry_digest(const uint8_t key[32], const void *prog, size_t len,
                         uint8_t out[DIGEST_SIZE]) {
  struct sha256_ctx c;
  sha256_init(&c);
  sha256_update(&c, key, 32);
  sha256_update(&c, prog, len);
  sha256_final(&c, out);
}

/* whether st may hold what only the caller wrote */
static const char *untrusted_why(const struct stat *st, mode_t type) {
  if ((st->st_mode & S_IFMT) != type)
    return type == S_IFDIR ? "not a directory" : "not a regular file";
  if (st->st_uid != geteuid())
    return "another user's";
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return "writable by group or others";
  return NULL;
}

/* the cache directory, open and checked; -1 when missing (and not made) or refused */
static int open_cache_dir(int rootfd, bool make) {
  struct stat st;
  const char *why;
  if (make && mkdirat(rootfd, SECCOMP_CACHE_DIR, 0700) < 0 && errno != EEXIST) {
    log_debug("seccomp cache: make %s: %s", SECCOMP_CACHE_DIR, strerror(errno));
    return -1;
  }
  int fd = openat(rootfd, SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      log_debug("seccomp cache: open %s: %s", SECCOMP_CACHE_DIR, strerror(errno));
    return -1;
  }
  why = fstat(fd, &st) < 0 ? "cannot be checked" : untrusted_why(&st, S_IFDIR);
  if (why != NULL) {
    log_debug("seccomp cache: %s ignored: %s", SECCOMP_CACHE_DIR, why);
    close(fd);
    return -1;
  }
  return fd;
}

/* The entry's bytes once they pass every check: a malloc'd buffer of *len bytes, or NULL */
static uint8_t *read_entry(int dirfd, const char *name, size_t *len) {
  struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  cleanup_close int fd = openat2_compat(dirfd, name, &how);
  struct stat st;
  const char *why;
  if (fd < 0) {
    if (errno != ENOENT)
      log_debug("seccomp cache: entry %s ignored: %s", name, strerror(errno));
    return NULL;
  }
  why = fstat(fd, &st) < 0 ? "cannot be checked" : untrusted_why(&st, S_IFREG);
  if (why == NULL && st.st_nlink != 1)
    why = "linked elsewhere";
  if (why == NULL && (st.st_size < (off_t)(sizeof(struct sock_filter) + DIGEST_SIZE) ||
                      st.st_size > (off_t)(MAX_PROGRAM + DIGEST_SIZE) ||
                      st.st_size % sizeof(struct sock_filter) != 0))
    why = "no program's size";
  if (why != NULL) {
    log_debug("seccomp cache: entry %s ignored: %s", name, why);
    return NULL;
  }
  cleanup_free uint8_t *buf = xmalloc0((size_t)st.st_size);
  if (safe_read_all(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size) {
    log_debug("seccomp cache: entry %s ignored: short read", name);
    return NULL;
  }
  *len = (size_t)st.st_size;
  return steal_ptr(&buf);
}

bool seccomp_cache_load(int rootfd, const uint8_t key[32], struct sock_fprog *prog) {
  cleanup_close int dirfd = open_cache_dir(rootfd, false);
  uint8_t digest[DIGEST_SIZE];
  char name[65];
  size_t len = 0;
  if (dirfd < 0)
    return false;
  entry_name(key, name);
  cleanup_free uint8_t *buf = read_entry(dirfd, name, &len);
  if (buf == NULL)
    return false;
  len -= DIGEST_SIZE;
  entry_digest(key, buf, len, digest);
  if (memcmp(digest, buf + len, DIGEST_SIZE) != 0) {
    log_debug("seccomp cache: entry %s ignored: its digest does not match", name);
    return false;
  }
  prog->len = (unsigned short)(len / sizeof(struct sock_filter));
  prog->filter = (struct sock_filter *)steal_ptr(&buf);
  return true;
}

static bool is_entry_name(const char *s) {
  size_t n = strspn(s, "0123456789abcdef");
  return n == 64 && s[n] == '\0';
}

/* At the bound, the entry written longest ago goes (a hit does not write). */
static void make_room(int dirfd) {
  int fd = dup(dirfd);
  DIR *dir = fd < 0 ? NULL : fdopendir(fd);
  struct timespec oldest = {0};
  char victim[65] = "";
  size_t n = 0;
  struct dirent *de;
  if (dir == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((de = readdir(dir)) != NULL) {
    struct stat st;
    if (!is_entry_name(de->d_name) || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    n++;
    if (victim[0] == '\0' || st.st_mtim.tv_sec < oldest.tv_sec ||
        (st.st_mtim.tv_sec == oldest.tv_sec && st.st_mtim.tv_nsec < oldest.tv_nsec)) {
      oldest = st.st_mtim;
      memcpy(victim, de->d_name, sizeof(victim));
    }
  }
  closedir(dir);
  if (n >= SECCOMP_CACHE_MAX_ENTRIES && unlinkat(dirfd, victim, 0) < 0)
    log_debug("seccomp cache: remove %s: %s", victim, strerror(errno));
}

void seccomp_cache_store(int rootfd, const uint8_t key[32], const struct sock_fprog *prog) {
  cleanup_close int dirfd = open_cache_dir(rootfd, true);
  size_t len = prog->len * sizeof(struct sock_filter);
  uint8_t digest[DIGEST_SIZE];
  char name[65], path[64];
  if (dirfd < 0)
    return;
  make_room(dirfd);
  cleanup_close int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    log_debug("seccomp cache: a new entry: %s", strerror(errno));
    return;
  }
  entry_digest(key, prog->filter, len, digest);
  if (safe_write_all(fd, prog->filter, len) < 0 || safe_write_all(fd, digest, sizeof(digest)) < 0) {
    log_debug("seccomp cache: write an entry: %s", strerror(errno));
    return;
  }
  entry_name(key, name);
  /* linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the fd's /proc link does not */
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int r = linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
  /* what is there was ignored (a hit stores nothing): replaced, so that it is not compiled again */
  if (r < 0 && errno == EEXIST && unlinkat(dirfd, name, 0) == 0)
    r = linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
  if (r < 0 && errno != EEXIST)
    log_debug("seccomp cache: keep entry %s: %s", name, strerror(errno));
}
