/* The nested repositories a run made in the worktree, which the host's git would enter (a gitlink
 * in the index: `git status` recurses into it and runs its core.fsmonitor) or could be made to
 * enter (an embedded `.git` that a host-side `git add -A` registers as a gitlink):
 *  - gitlinks: the index's mode 160000 entries after the run that were not there before (read
 *    from the index file itself, versions 2 to 4; a split index's shared part is not read);
 *  - nested git dirs: a `.git` (file or directory) below the top whose ctime is not before the
 *    run's start, found by a bounded walk (TAMPER_MAX_DEPTH levels, TAMPER_MAX_DIRS directories,
 *    not into `.git` nor `node_modules`). */
#include "sandbox-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#define TAMPER_MAX_DEPTH 6
#define TAMPER_MAX_DIRS  20000
#define INDEX_MAX_BYTES  (256u * 1024 * 1024)
#define GITLINK_MODE     0160000u

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* git's offset varint (index v4's prefix length) */
static bool read_varint(const unsigned char **p, const unsigned char *end, size_t *out) {
  size_t v;
  unsigned char c;
  if (*p >= end)
    return false;
  c = *(*p)++;
  v = c & 127;
  while (c & 128) {
    if (*p >= end || v > (SIZE_MAX >> 8))
      return false;
    c = *(*p)++;
    v = ((v + 1) << 7) | (c & 127);
  }
  *out = v;
  return true;
}

static size_t hash_size(int common_fd) {
  cleanup_free char *config = NULL;
  if (sandbox_git_read_nofollow(common_fd, "config", &config) == 0 &&
      strstr(config, "sha256") != NULL)
    return 32;
  return 20;
}

/* the paths of the index's gitlinks; NULL when there are none or the index is unreadable */
static char **parse_gitlinks(const unsigned char *buf, size_t len, size_t hash) {
  const unsigned char *p = buf + 12, *end = buf + len;
  uint32_t version, count;
  char **links = NULL;
  size_t n_links = 0;
  char path[4096] = "";
  size_t path_len = 0;
  if (len < 12 || memcmp(buf, "DIRC", 4) != 0)
    return NULL;
  version = be32(buf + 4);
  count = be32(buf + 8);
  if (version < 2 || version > 4)
    return NULL;
  for (uint32_t i = 0; i < count; i++) {
    const unsigned char *entry = p;
    size_t fixed = 40 + hash + 2, name_len, strip = 0;
    uint32_t mode;
    if ((size_t)(end - p) < fixed)
      break;
    mode = be32(p + 24);
    if (version >= 3 && (p[40 + hash] & 0x40))
      fixed += 2; /* the extended flags */
    p += fixed;
    if (version == 4 && !read_varint(&p, end, &strip))
      break;
    name_len = strnlen((const char *)p, (size_t)(end - p));
    if (p + name_len >= end)
      break;
    if (version == 4) {
      if (strip > path_len || path_len - strip + name_len >= sizeof(path))
        break;
      path_len -= strip;
    } else {
      if (name_len >= sizeof(path))
        break;
      path_len = 0;
    }
    memcpy(path + path_len, p, name_len);
    path_len += name_len;
    path[path_len] = '\0';
    p += name_len + 1;
    if (version != 4)
      p = entry + ((fixed + name_len + 8) & ~(size_t)7);
    if ((mode & 0170000u) == GITLINK_MODE && n_links < SANDBOX_GIT_MAX_REPORTED)
      sandbox_git_strv_push(&links, &n_links, path);
  }
  return links;
}

char **sandbox_git_index_gitlinks(int common_fd, const char *admin) {
  cleanup_free char *rel = admin[0] ? xasprintf("%s/index", admin) : xstrdup("index");
  cleanup_close int fd = sandbox_git_open_beneath(common_fd, rel, O_RDONLY, 0);
  cleanup_free unsigned char *buf = NULL;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size > INDEX_MAX_BYTES)
    return NULL;
  buf = xmalloc0((size_t)st.st_size + 1);
  if (safe_read_all(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size)
    return NULL;
  return parse_gitlinks(buf, (size_t)st.st_size, hash_size(common_fd));
}

static bool listed(char **v, const char *s) {
  for (; v != NULL && *v != NULL; v++)
    if (strcmp(*v, s) == 0)
      return true;
  return false;
}

struct walk {
  char **found;
  size_t n_found, dirs;
  struct timespec start;
};

static void walk_nested(struct walk *w, int dir, const char *prefix, int depth) {
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  int fd = dup(dir);
  if (fd < 0 || (d = fdopendir(fd)) == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL && w->dirs < TAMPER_MAX_DIRS) {
    cleanup_free char *rel = NULL;
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    rel = prefix[0] ? xasprintf("%s/%s", prefix, e->d_name) : xstrdup(e->d_name);
    if (strcmp(e->d_name, ".git") == 0) {
      if (depth > 0 && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          (st.st_ctim.tv_sec > w->start.tv_sec ||
           (st.st_ctim.tv_sec == w->start.tv_sec && st.st_ctim.tv_nsec >= w->start.tv_nsec)) &&
          w->n_found < SANDBOX_GIT_MAX_REPORTED)
        sandbox_git_strv_push(&w->found, &w->n_found, rel);
      continue;
    }
    if (e->d_type != DT_DIR || strcmp(e->d_name, "node_modules") == 0 ||
        depth + 1 >= TAMPER_MAX_DEPTH)
      continue;
    w->dirs++;
    cleanup_close int sub =
        openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub >= 0)
      walk_nested(w, sub, rel, depth + 1);
  }
}

char **sandbox_git_tamper(const struct sandbox_git_run *g, const char *worktree) {
  int common = g->common_fd;
  cleanup_close int top = open(worktree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char **after = common < 0 ? NULL : sandbox_git_index_gitlinks(common, g->admin);
  struct walk w = {.start = g->start};
  for (char **l = after; l != NULL && *l != NULL; l++)
    if (!listed(g->gitlinks_before, *l) && w.n_found < SANDBOX_GIT_MAX_REPORTED)
      sandbox_git_strv_push(&w.found, &w.n_found, *l);
  sandbox_git_strv_free(after);
  if (top >= 0)
    walk_nested(&w, top, "", 0);
  return w.found;
}
