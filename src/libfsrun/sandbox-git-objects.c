/* The objects a sandbox run wrote (docs/sandbox.md, "Git"): git trusts an object's name, never
 * hashing what it reads again, so nothing the run named is adopted on its word.
 *  - a new loose object is copied into the repository, and kept only when its content hashes to its
 *    name: the run's file is read once and the bytes copied are the bytes checked (a process that
 *    outlives the run could still change the file), the copy stopping at the first error; a
 *    mismatch, a sparse file, one too large or no regular file is discarded and reported;
 *  - a pack is never adopted: its index maps ids to bytes and could give an existing id other
 *    content. Packs (and everything else under objects/ that is not a loose object) are reported.
 * And for the refs: a ref is moved only to an object the repository has, loose or in one of the
 * host's own packs, so that a run whose objects were packed inside does not leave a ref to
 * nothing. */
#include "sandbox-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git-object.h"
#include "oci.h"
#include "log.h"
#include "utils.h"

#define OBJECTS_MAX_ENTRIES 200000
/* a loose object's file: git's zlib of the largest data accepted, with room for its overhead */
#define OBJECT_MAX_BYTES (GIT_OBJECT_MAX_SIZE + (GIT_OBJECT_MAX_SIZE >> 8))
/* The sync runs after the command, outside its --timeout-ms, and a caller kills a fsrun that
 * overruns its grace (the Fusion adapter: 10 s): so it is bounded in time, by what a run of an
 * honest agent never reaches (its commits are a few MiB, a fetch of a few hundred MiB gets near).
 * The object data one sync inflates and hashes at most: a zlib bomb of 1 GiB (1 MiB of zeros' zlib)
 * cost fsrun 9 s of wall time on the 2-core test machine, so this is about 4.5 s; the 16 GiB before
 * it were about 150 s (review19 #15). An object larger than what is left is not adopted. */
#define SYNC_INFLATE_BUDGET (512ull << 20)
/* And the CPU time (user and system) the objects' walk may take: what is not reached by then is not
 * adopted (200,000 tiny wrong objects took 29 s). CPU time, not wall time: the work is the same on
 * a loaded machine, where waiting for a core made an honest fetch of 450 objects (0.2 s of CPU,
 * nearly all of it the kernel making the files) pass 4 s of wall time; the caller's own kill
 * (Fusion's grace) bounds the wall time. Checked between objects: one object takes at most the
 * inflate budget's time on top. */
#define SYNC_OBJECTS_MAX_CPU_MS 4000

static bool is_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

bool sandbox_git_is_oid(const char *s) {
  size_t n = strlen(s);
  return (n == 40 || n == 64) && is_hex(s, n);
}

static bool is_loose_name(const char *name) {
  return (strlen(name) == 38 || strlen(name) == 62) && is_hex(name, strlen(name));
}

/* A file that has fewer blocks than its size is sparse: holes cost the run nothing (a tmpfs upper
 * dir) and would be written out in full into the repository. 64 KiB: blocks are at least a page on
 * tmpfs, but a small file may live in its inode on a disk (ext4's inline data). */
static const char *not_an_object_file(const struct stat *st) {
  if (!S_ISREG(st->st_mode))
    return "not a regular file";
  if ((uint64_t)st->st_size > OBJECT_MAX_BYTES)
    return "a larger file than an object may be";
  if (st->st_size > 65536 && (uint64_t)st->st_blocks * 512 < (uint64_t)st->st_size)
    return "a sparse file";
  return NULL;
}

/* the run's `from/name` into `to/name` through a temporary file of ours, checked while it is copied
 * (the run's file is read once; a process that outlives the run may still change it): 1 adopted, 0
 * already there, -1 failed (errno), -2 not the object its name says (*why). O_NONBLOCK: readdir's
 * type is the run's word, and a fifo swapped in since would block the open for ever */
static int adopt_loose(int from, int to, const char *name, const char *id, uint64_t *budget,
                       const char **why) {
  cleanup_close int in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int out = -1;
  cleanup_free char *tmp = xasprintf(".fsrun-sync.%d.%s", (int)getpid(), name);
  struct stat st;
  int rc = 1;
  if (in < 0 || fstat(in, &st) < 0)
    return -1;
  if ((*why = not_an_object_file(&st)) != NULL)
    return -2;
  if (faccessat(to, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  /* read-only like git's own objects */
  out = openat(to, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (out < 0)
    return -1;
  if (git_loose_object_copy(in, out, OBJECT_MAX_BYTES, budget, id, why) < 0)
    rc = -2;
  else if (renameat2(to, tmp, to, name, RENAME_NOREPLACE) < 0)
    rc = errno == EEXIST ? 0 : -1;
  if (rc != 1) {
    int saved = errno;
    unlinkat(to, tmp, 0);
    errno = saved;
  }
  return rc;
}

struct objects_sync {
  int upper, common;
  size_t entries;
  bool capped;          /* the walk stopped at OBJECTS_MAX_ENTRIES or past its CPU time */
  bool late;            /* ... past its CPU time */
  int64_t cpu_deadline; /* process_cpu_ms(): SYNC_OBJECTS_MAX_CPU_MS after the walk began */
  bool incomplete;      /* an object the run wrote was not adopted */
  size_t reported;      /* files report_files reported */
  uint64_t inflate_left;
  void (*discard)(void *arg, const char *rel);
  void *arg;
};

/* one more entry of upper/objects walked; false (and s->capped) past OBJECTS_MAX_ENTRIES or the
 * CPU time */
static bool count_entry(struct objects_sync *s) {
  if (!s->capped && process_cpu_ms() >= s->cpu_deadline)
    s->capped = s->late = true;
  if (s->entries >= OBJECTS_MAX_ENTRIES)
    s->capped = true;
  else
    s->entries++;
  return !s->capped;
}

/* upper/objects/XX: each loose object the host lacks, checked */
static void sync_loose_dir(struct objects_sync *s, const char *sub) {
  cleanup_free char *rel = xasprintf("objects/%s", sub);
  cleanup_close int from = sandbox_git_open_beneath(s->upper, rel, O_RDONLY | O_DIRECTORY, 0);
  cleanup_close int to = -1;
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  if (from < 0 || (d = fdopendir(from)) == NULL)
    return;
  from = -1;
  while ((e = readdir(d)) != NULL && count_entry(s)) {
    cleanup_free char *id = NULL;
    cleanup_free char *file = NULL;
    const char *why = NULL;
    int rc;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (e->d_type == DT_CHR)
      continue; /* a whiteout: git pruned a loose object inside; the host's stays */
    file = xasprintf("%s/%s", rel, e->d_name);
    if (!is_loose_name(e->d_name)) {
      s->discard(s->arg, file);
      continue;
    }
    if (to < 0 && (mkdirat(s->common, rel, 0755) < 0 && errno != EEXIST))
      return;
    if (to < 0 && (to = sandbox_git_open_beneath(s->common, rel, O_PATH | O_DIRECTORY, 0)) < 0)
      return;
    id = xasprintf("%s%s", sub, e->d_name);
    rc = adopt_loose(dirfd(d), to, e->d_name, id, &s->inflate_left, &why);
    s->incomplete |= rc < 0;
    if (rc == -2) {
      log_warning("sandbox: git: the object `%s` is not what its name says (%s): discarded", file,
                  why);
      s->discard(s->arg, file);
    } else if (rc < 0) {
      log_warning("sandbox: git: copy the new object `%s`: %s", file, strerror(errno));
    }
  }
}

/* every regular file beneath dir (relative path rel): reported, never adopted */
static void report_files(struct objects_sync *s, int dir, const char *rel, int depth) {
  cleanup_dir DIR *d = opendir_at(dir);
  struct dirent *e;
  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL && count_entry(s)) {
    cleanup_free char *path = xasprintf("%s/%s", rel, e->d_name);
    if (e->d_type == DT_REG) {
      s->discard(s->arg, path);
      s->reported++;
    } else if (e->d_type == DT_DIR && depth < 4 && strcmp(e->d_name, ".") != 0 &&
               strcmp(e->d_name, "..") != 0) {
      cleanup_close int sub =
          openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        report_files(s, sub, path, depth + 1);
    }
  }
}

bool sandbox_git_sync_objects(int upper, int common, void (*discard)(void *, const char *),
                              void *arg) {
  struct objects_sync s = {.upper = upper,
                           .common = common,
                           .inflate_left = SYNC_INFLATE_BUDGET,
                           .cpu_deadline = process_cpu_ms() + SYNC_OBJECTS_MAX_CPU_MS,
                           .discard = discard,
                           .arg = arg};
  cleanup_close int fd = sandbox_git_open_beneath(upper, "objects", O_RDONLY | O_DIRECTORY, 0);
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  if (fd < 0 || (d = fdopendir(fd)) == NULL)
    return errno == ENOENT; /* no objects/: the run wrote none */
  fd = -1;
  while ((e = readdir(d)) != NULL && !s.capped) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (e->d_type == DT_DIR && strlen(e->d_name) == 2 && is_hex(e->d_name, 2)) {
      sync_loose_dir(&s, e->d_name);
    } else if (e->d_type == DT_DIR) {
      cleanup_free char *rel = xasprintf("objects/%s", e->d_name);
      cleanup_close int sub =
          openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      size_t before = s.reported;
      if (sub >= 0)
        report_files(&s, sub, rel, 0);
      /* a pack is never adopted: a loose commit made on top of its objects would lack them */
      s.incomplete |= strcmp(e->d_name, "pack") == 0 && s.reported > before;
    } else if (e->d_type == DT_REG) {
      cleanup_free char *rel = xasprintf("objects/%s", e->d_name);
      discard(arg, rel);
    }
  }
  if (s.late)
    log_warning(
        "sandbox: git: the run's objects took more than %d ms of CPU time to check: the rest "
        "were not applied",
        SYNC_OBJECTS_MAX_CPU_MS);
  else if (s.capped)
    log_warning("sandbox: git: the run wrote more than %d entries under objects/: the rest were "
                "not applied",
                OBJECTS_MAX_ENTRIES);
  return !s.capped && !s.incomplete;
}

/* --- is an object in the repository ---------------------------------------------------------- */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void hex_to_bytes(const char *hex, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char pair[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
    out[i] = (unsigned char)strtoul(pair, NULL, 16);
  }
}

/* a binary search of one of the host's pack indexes (gitformat-pack(5): version 2, or version 1
 * without its magic); names of hash_len bytes, sorted */
static bool idx_has(int fd, const unsigned char *want, size_t hash_len) {
  unsigned char head[8], fan[4], name[32];
  off_t base = 0, stride = (off_t)hash_len, name_at = 0;
  uint32_t lo = 0, hi;
  if (pread(fd, head, 8, 0) != 8)
    return false;
  if (memcmp(head, "\377tOc", 4) == 0) {
    if (be32(head + 4) != 2)
      return false;
    base = 8;
  } else {
    stride = 4 + (off_t)hash_len, name_at = 4; /* version 1: a 4-byte offset before each name */
  }
  if (want[0] > 0 && pread(fd, fan, 4, base + 4 * (want[0] - 1)) == 4)
    lo = be32(fan);
  if (pread(fd, fan, 4, base + 4 * want[0]) != 4)
    return false;
  hi = be32(fan);
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int cmp;
    if (pread(fd, name, hash_len, base + 1024 + (off_t)mid * stride + name_at) != (ssize_t)hash_len)
      return false;
    cmp = memcmp(name, want, hash_len);
    if (cmp == 0)
      return true;
    if (cmp < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return false;
}

bool sandbox_git_object_present(int common, const char *id) {
  size_t hash_len = strlen(id) / 2;
  cleanup_free char *loose = xasprintf("objects/%.2s/%s", id, id + 2);
  cleanup_close int packs = -1;
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  unsigned char want[32];
  struct stat st;
  if (fstatat(common, loose, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
    return true;
  packs = sandbox_git_open_beneath(common, "objects/pack", O_RDONLY | O_DIRECTORY, 0);
  if (packs < 0 || (d = fdopendir(packs)) == NULL)
    return false;
  packs = -1;
  hex_to_bytes(id, want, hash_len);
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    cleanup_close int fd = -1;
    if (n < 4 || strcmp(e->d_name + n - 4, ".idx") != 0)
      continue;
    fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && idx_has(fd, want, hash_len))
      return true;
  }
  return false;
}

/* a reflog line's new id ("<old> <new> <who>\t<message>") into want; false when it has none, or
 * zeros (the ref deleted) */
static bool reflog_new_id(const char *line, size_t len, char want[65]) {
  const char *id = memchr(line, ' ', len);
  size_t n;
  if (id == NULL)
    return false;
  id++;
  n = strcspn(id, " \n");
  if ((n != 40 && n != 64) || id + n > line + len || strspn(id, "0") >= n)
    return false;
  memcpy(want, id, n);
  want[n] = '\0';
  return true;
}

bool sandbox_git_reflog_present(int common, const char *log) {
  const char *line = log;
  char want[65];
  while (*line != '\0') {
    size_t len = strcspn(line, "\n");
    if (reflog_new_id(line, len, want) && !sandbox_git_object_present(common, want))
      return false;
    line += len + (line[len] == '\n');
  }
  return true;
}

/* --- keeping a run's objects loose ------------------------------------------------------------ */

/* What the command's git is told through GIT_CONFIG_COUNT (the command-line scope, above every
 * config file; only `git -c` outranks it): nothing it makes may end up in a pack, which is never
 * adopted. gc.auto=0: git's automatic `gc --auto` after a commit, past 6700 loose objects (more
 * likely here: the repository gets only loose objects from runs), would pack the run's new
 * commits. The unpack limits: a fetch (or a push received) of 100 objects or more would be kept as
 * a pack. All three, as the docs say fetch.* and receive.* outrank transfer.* (git 2.39's fetch
 * reads transfer.* first: a `git -c fetch.unpackLimit=1` inside is unpacked all the same). INT_MAX
 * is the largest value git's int parser takes; `git fetch --keep` still keeps a pack. */
static const char *const loose_config[][2] = {
    {"gc.auto", "0"},
    {"transfer.unpackLimit", "2147483647"},
    {"fetch.unpackLimit", "2147483647"},
    {"receive.unpackLimit", "2147483647"},
};

/* env's GIT_CONFIG_COUNT and its GIT_CONFIG_KEY_<k>/GIT_CONFIG_VALUE_<k> with k >= from removed:
 * entries past the caller's count, which git ignores, would otherwise shadow the ones added under
 * the same names (getenv takes the first) */
static void drop_git_config_env(oci_strv *env, unsigned long from) {
  size_t kept = 0;
  if (env->items == NULL)
    return;
  for (size_t i = 0; i < env->len; i++) {
    const char *e = env->items[i];
    const char *num = NULL;
    char *end = NULL;
    if (strncmp(e, "GIT_CONFIG_COUNT=", 17) == 0) {
      free(env->items[i]);
      continue;
    }
    if (strncmp(e, "GIT_CONFIG_KEY_", 15) == 0)
      num = e + 15;
    else if (strncmp(e, "GIT_CONFIG_VALUE_", 17) == 0)
      num = e + 17;
    if (num != NULL && *num >= '0' && *num <= '9' && strtoul(num, &end, 10) >= from &&
        *end == '=') {
      free(env->items[i]);
      continue;
    }
    env->items[kept++] = env->items[i];
  }
  env->len = kept;
  env->items[kept] = NULL;
}

static bool env_has(const oci_strv *env, const char *entry) {
  for (size_t i = 0; i < env->len; i++)
    if (strcmp(env->items[i], entry) == 0)
      return true;
  return false;
}

/* the last `added` of env's n GIT_CONFIG_COUNT entries are loose_config already (an exec's env
 * that kept the bundle's): merged again, they would only be repeated */
static bool has_loose_config(const oci_strv *env, unsigned long n, size_t added) {
  for (size_t k = 0; n >= added && k < added; k++) {
    cleanup_free char *key = xasprintf("GIT_CONFIG_KEY_%lu=%s", n - added + k, loose_config[k][0]);
    cleanup_free char *value =
        xasprintf("GIT_CONFIG_VALUE_%lu=%s", n - added + k, loose_config[k][1]);
    if (!env_has(env, key) || !env_has(env, value))
      return false;
  }
  return n >= added;
}

/* loose_config appended after the caller's own GIT_CONFIG_COUNT entries when env has them (its
 * count raised), so that the caller's settings are kept and these win over them */
void sandbox_git_env(oci_strv *env) {
  const size_t added = sizeof(loose_config) / sizeof(loose_config[0]);
  unsigned long n = 0;
  cleanup_free char *count = NULL;
  for (size_t i = 0; i < env->len; i++)
    if (strncmp(env->items[i], "GIT_CONFIG_COUNT=", 17) == 0) {
      char *end = NULL;
      n = strtoul(env->items[i] + 17, &end, 10);
      if (end == env->items[i] + 17 || *end != '\0' || n > 1000)
        return; /* git refuses it anyway */
    }
  if (has_loose_config(env, n, added))
    return;
  drop_git_config_env(env, n);
  count = xasprintf("GIT_CONFIG_COUNT=%lu", n + added);
  oci_strv_push(env, count);
  for (size_t k = 0; k < added; k++) {
    cleanup_free char *key = xasprintf("GIT_CONFIG_KEY_%lu=%s", n + k, loose_config[k][0]);
    cleanup_free char *value = xasprintf("GIT_CONFIG_VALUE_%lu=%s", n + k, loose_config[k][1]);
    oci_strv_push(env, key);
    oci_strv_push(env, value);
  }
}
