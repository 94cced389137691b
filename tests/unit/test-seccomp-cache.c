/* Unit tests for seccomp-cache.c through seccomp_compile_cached: a program read from the cache is
 * the exact bytes a fresh compile gives, for several profiles; a changed profile is compiled
 * afresh; a corrupt, short, moved, linked, group-writable or foreign-owned entry, and a cache
 * directory that is a link or group-writable, are ignored (compiled again); the cache stays within
 * its bound; FSRUN_NO_SECCOMP_CACHE turns it off. TAP output. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libseccomp.h>

#include "error.h"
#include "json-out.h"
#include "oci.h"
#include "seccomp-cache.h"
#include "seccomp.h"
#include "scratch.h"
#include "tap.h"
#include "utils.h"

static char *allow_list_json(void) {
  struct strbuf b = {0};
  sb_printf(&b, "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_X86_64\","
                "\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],\"syscalls\":[{\"action\":\"SCMP_ACT_ALLOW\","
                "\"names\":[");
  for (int nr = 0, n = 0; nr < 335; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (name != NULL && strcmp(name, "ptrace") != 0 && strcmp(name, "mount") != 0)
      sb_printf(&b, "%s\"%s\"", n++ ? "," : "", name);
    free(name);
  }
  sb_printf(&b, "]},{\"action\":\"SCMP_ACT_ALLOW\",\"names\":[\"clone\"],\"args\":[{\"index\":0,"
                "\"value\":2114060288,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}");
  return b.data;
}

static const char deny_list[] =
    "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
    "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38},{\"names\":[\"personality\"],"
    "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_NE\"}]}]}";
static const char deny_list_changed[] =
    "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
    "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":39},{\"names\":[\"personality\"],"
    "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":8,\"op\":\"SCMP_CMP_NE\"}]}]}";
static const char kill_list[] =
    "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\"],"
    "\"syscalls\":[{\"names\":[\"kexec_load\",\"reboot\",\"bpf\"],\"action\":\"SCMP_ACT_KILL_"
    "PROCESS\"},"
    "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":97,\"args\":[{\"index\":0,"
    "\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]}]}";

static oci_seccomp *profile(const char *json) {
  char *msg = NULL;
  oci_seccomp *s = NULL;
  if (oci_seccomp_parse(json, strlen(json), "test", &s, &msg) < 0) {
    tap_diag("parse: %s", msg);
    exit(1);
  }
  return s;
}

/* the program's bytes as create keeps them (seccomp_serialize), or "" on an error */
static char *compile_bytes(const oci_seccomp *s, int rootfd, bool *from_cache, size_t *len) {
  fsrun_error_t err = NULL;
  struct fsrun_seccomp *f = NULL;
  *len = 0;
  if (seccomp_compile_cached(s, rootfd, &f, &err) < 0) {
    tap_diag("compile: %s", err->msg);
    fsrun_error_release(&err);
    return xstrdup("");
  }
  *from_cache = seccomp_from_cache(f);
  seccomp_keep_compiled(rootfd, f);
  char *bytes = seccomp_serialize(f, len);
  seccomp_free(f);
  return bytes;
}

static int entries(int rootfd, char name[65]) {
  int n = 0, fd = openat(rootfd, SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *de;
  while (d != NULL && (de = readdir(d)) != NULL)
    if (strlen(de->d_name) == 64) {
      n++;
      if (name != NULL)
        memcpy(name, de->d_name, 65);
    }
  if (d != NULL)
    closedir(d);
  return n;
}

static char *roots[16];
static int n_roots;

static int fresh_root(void) {
  char *path = xstrdup("/tmp/fsrun-unit-seccomp-cache.XXXXXX");
  if (mkdtemp(path) == NULL || n_roots == 16)
    exit(1);
  roots[n_roots++] = path;
  return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void remove_roots(void) {
  for (int i = 0; i < n_roots; i++) {
    scratch_remove(roots[i]);
    free(roots[i]);
  }
}

/* a second compile of s after the first stored it: from the cache, the bytes of a fresh one */
static void same_bytes(const char *what, const char *json) {
  cleanup_close int root = fresh_root();
  oci_seccomp *s = profile(json);
  bool hit1 = true, hit2 = false, dummy;
  size_t l0, l1, l2;
  cleanup_free char *fresh = compile_bytes(s, -1, &dummy, &l0);
  cleanup_free char *first = compile_bytes(s, root, &hit1, &l1);
  cleanup_free char *second = compile_bytes(s, root, &hit2, &l2);
  tap_ok(!hit1 && hit2 && entries(root, NULL) == 1, "%s: stored once, then read from the cache",
         what);
  tap_ok(l0 > 0 && l0 == l1 && l0 == l2 && memcmp(fresh, first, l0) == 0 &&
             memcmp(fresh, second, l0) == 0,
         "%s: the cached program is the fresh compile's bytes (%zu)", what, l0);
  oci_seccomp_free(s);
}

/* compiles s in root expecting a miss: true when compiled afresh, to the bytes of a fresh compile
 */
static bool compiled_afresh(int root, const oci_seccomp *s) {
  bool hit = true, dummy;
  size_t l0, l1;
  cleanup_free char *fresh = compile_bytes(s, -1, &dummy, &l0);
  cleanup_free char *got = compile_bytes(s, root, &hit, &l1);
  return !hit && l0 == l1 && memcmp(fresh, got, l0) == 0;
}

static bool hit(int root, const oci_seccomp *s) {
  bool from_cache = false;
  size_t len;
  cleanup_free char *b = compile_bytes(s, root, &from_cache, &len);
  return from_cache;
}

/* the entry of s alone in root's cache, its name in name */
static void store_one(int root, const oci_seccomp *s, char name[65]) {
  char old[65];
  int dir = openat(root, SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (dir >= 0 && entries(root, old) > 0 && unlinkat(dir, old, 0) == 0)
    ;
  if (dir >= 0)
    close(dir);
  if (!compiled_afresh(root, s) || entries(root, name) != 1)
    tap_diag("store_one: no single entry");
}

static int cache_dir(int root) {
  return openat(root, SECCOMP_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void tampered_entries(void) {
  cleanup_close int root = fresh_root();
  oci_seccomp *s = profile(deny_list), *other = profile(kill_list);
  char name[65] = "", other_name[65] = "";
  struct stat st;
  unsigned char c;
  int fd;

  store_one(root, other, other_name);
  char other_path[128];
  snprintf(other_path, sizeof(other_path), "/proc/self/fd/%d/%s/%s", root, SECCOMP_CACHE_DIR,
           other_name);
  cleanup_free char *other_bytes = NULL;
  size_t other_len = 0;
  fsrun_error_t err = NULL;
  if (read_file_at(AT_FDCWD, other_path, &other_bytes, &other_len, &err) < 0)
    fsrun_error_release(&err);

  store_one(root, s, name);
  tap_ok(hit(root, s), "an entry as stored is used");
  cleanup_close int dir = cache_dir(root);

  /* corrupt: one bit of the program flipped */
  fd = openat(dir, name, O_RDWR | O_CLOEXEC);
  if (fd < 0 || pread(fd, &c, 1, 4) != 1 || (c ^= 1, pwrite(fd, &c, 1, 4)) != 1)
    tap_diag("flip failed");
  close(fd);
  tap_ok(compiled_afresh(root, s), "a corrupt entry is ignored");
  tap_ok(hit(root, s), "and replaced: the next compile reads the cache");
  /* short: the last instruction cut off */
  store_one(root, s, name);
  fd = openat(dir, name, O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0 || ftruncate(fd, st.st_size - 8) < 0)
    tap_diag("truncate failed");
  close(fd);
  tap_ok(compiled_afresh(root, s), "a short entry is ignored");
  /* moved: another profile's whole entry under this one's name */
  store_one(root, s, name);
  unlinkat(dir, name, 0);
  if (write_file_atomic_at(dir, name, other_bytes, other_len, 0600, &err) < 0)
    fsrun_error_release(&err);
  tap_ok(fstatat(dir, name, &st, 0) == 0 && st.st_size == (off_t)other_len,
         "another profile's entry put in the place of this one's");
  tap_ok(other_len > 0 && compiled_afresh(root, s),
         "another profile's entry under its name is ignored");
  /* a link to the entry */
  store_one(root, s, name);
  renameat(dir, name, dir, "moved");
  symlinkat("moved", dir, name);
  tap_ok(compiled_afresh(root, s), "a symbolic link in the entry's place is ignored");
  unlinkat(dir, name, 0);
  linkat(dir, "moved", dir, name, 0);
  tap_ok(compiled_afresh(root, s), "an entry with a second hard link is ignored");
  unlinkat(dir, "moved", 0);
  tap_ok(hit(root, s), "an entry of one link again is used");
  fchmodat(dir, name, 0620, 0);
  tap_ok(compiled_afresh(root, s), "a group-writable entry is ignored");
  fchmodat(dir, name, 0600, 0);
  if (geteuid() == 0) {
    fchownat(dir, name, 1, 1, 0);
    tap_ok(compiled_afresh(root, s), "another user's entry is ignored");
    fchownat(dir, name, 0, 0, 0);
    tap_ok(hit(root, s), "an entry of the caller's again is used");
    fchownat(root, SECCOMP_CACHE_DIR, 1, 1, 0);
    tap_ok(compiled_afresh(root, s), "another user's cache directory is ignored");
    fchownat(root, SECCOMP_CACHE_DIR, 0, 0, 0);
  } else {
    tap_skip("another user's entry: needs root to chown");
    tap_skip("another user's entry: needs root to chown");
    tap_skip("another user's cache directory: needs root to chown");
  }
  fchmodat(root, SECCOMP_CACHE_DIR, 0770, 0);
  tap_ok(compiled_afresh(root, s), "a group-writable cache directory is ignored");
  fchmodat(root, SECCOMP_CACHE_DIR, 0700, 0);
  renameat(root, SECCOMP_CACHE_DIR, root, "real-cache");
  symlinkat("real-cache", root, SECCOMP_CACHE_DIR);
  tap_ok(compiled_afresh(root, s), "a cache directory that is a symbolic link is ignored");
  unlinkat(root, SECCOMP_CACHE_DIR, 0);
  renameat(root, "real-cache", root, SECCOMP_CACHE_DIR);
  tap_ok(hit(root, s), "the cache directory itself again is used");
  close(dir);
  oci_seccomp_free(s);
  oci_seccomp_free(other);
}

static void changed_profile(void) {
  cleanup_close int root = fresh_root();
  oci_seccomp *a = profile(deny_list), *b = profile(deny_list_changed);
  compiled_afresh(root, a);
  tap_ok(compiled_afresh(root, b) && entries(root, NULL) == 2,
         "a changed errnoRet is compiled afresh, and stored beside the first");
  tap_ok(hit(root, a) && hit(root, b), "each is then read from the cache");
  oci_seccomp_free(a);
  oci_seccomp_free(b);
}

static void bounded(void) {
  cleanup_close int root = fresh_root();
  int n = 0;
  for (int i = 0; i < SECCOMP_CACHE_MAX_ENTRIES + 3; i++) {
    cleanup_free char *json = xasprintf("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
                                        "{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_ERRNO\","
                                        "\"errnoRet\":%d}]}",
                                        i + 1);
    oci_seccomp *s = profile(json);
    n += compiled_afresh(root, s);
    oci_seccomp_free(s);
  }
  tap_ok(n == SECCOMP_CACHE_MAX_ENTRIES + 3 && entries(root, NULL) == SECCOMP_CACHE_MAX_ENTRIES,
         "%d profiles leave %d entries (the bound)", n, entries(root, NULL));
}

static void turned_off(void) {
  cleanup_close int root = fresh_root();
  oci_seccomp *s = profile(deny_list);
  setenv("FSRUN_NO_SECCOMP_CACHE", "1", 1);
  bool a = compiled_afresh(root, s), b = compiled_afresh(root, s);
  tap_ok(a && b && entries(root, NULL) == 0, "with %s set nothing is stored or read",
         "FSRUN_NO_SECCOMP_CACHE");
  unsetenv("FSRUN_NO_SECCOMP_CACHE");
  oci_seccomp_free(s);
}

int main(void) {
  cleanup_free char *allow = allow_list_json();
  same_bytes("a Docker-like allow list (three architectures, a masked clone)", allow);
  same_bytes("a deny list with errnos and an argument", deny_list);
  same_bytes("kill actions and an argument", kill_list);
  changed_profile();
  tampered_entries();
  bounded();
  turned_off();
  remove_roots();
  return tap_done();
}
