/* The `.git` entries of a worktree whose file times fsrun does not trust (review24 B1's second
 * part). The nested-repository walk (sandbox-git-tamper.c) decides "made by the run" by ctime; on
 * FUSE whose ctime is the mtime (sshfs) a command backdates a repository it made (`touch -d`), and
 * on a tmpfs it rewrites a `.git` file (a submodule's `gitdir:` pointer) through a shared mapping
 * without moving any time. There the walk also compares what it finds with the entries the same
 * walk found before the run: an entry at a path that had none, of another identity or type, or a
 * file of other content, is the run's. */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "utils.h"

/* a `.git` file is a `gitdir:` line; one this long is read no further (unknown: never the same) */
#define DOTGIT_FILE_MAX (64 * 1024)

/* the content of dir/.git, a regular file of identity st, into e's digest */
static void content_digest(int dir, const struct stat *st, struct sandbox_git_dotgit *e) {
  char buf[4096];
  struct sha256_ctx c;
  struct stat now;
  size_t total = 0;
  ssize_t n;
  cleanup_close int fd = openat(dir, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  e->digest.unknown = true;
  if (fd < 0 || fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
      !S_ISREG(now.st_mode))
    return;
  sha256_init(&c);
  while ((n = read(fd, buf, sizeof(buf))) > 0 && total <= DOTGIT_FILE_MAX) {
    sha256_update(&c, buf, (size_t)n);
    total += (size_t)n;
  }
  if (n < 0 || total > DOTGIT_FILE_MAX)
    return;
  sha256_final(&c, e->digest.sum);
  e->digest.unknown = false;
}

void sandbox_git_dotgit_of(struct sandbox_git_dotgit *e, int dir, const char *rel,
                           const struct stat *st) {
  *e = (struct sandbox_git_dotgit){.rel = xstrdup(rel),
                                   .dev = (uint64_t)st->st_dev,
                                   .ino = (uint64_t)st->st_ino,
                                   .type = (unsigned)(st->st_mode & S_IFMT)};
  if (S_ISREG(st->st_mode))
    content_digest(dir, st, e);
}

void sandbox_git_dotgits_push(struct sandbox_git_dotgits *inv, struct sandbox_git_dotgit *e) {
  if (inv->n == inv->cap) {
    inv->cap = inv->cap ? 2 * inv->cap : 16;
    inv->items = realloc(inv->items, inv->cap * sizeof(*inv->items));
    if (inv->items == NULL)
      abort();
  }
  inv->items[inv->n++] = *e;
  *e = (struct sandbox_git_dotgit){0};
}

static int by_rel(const void *a, const void *b) {
  return strcmp(((const struct sandbox_git_dotgit *)a)->rel,
                ((const struct sandbox_git_dotgit *)b)->rel);
}

void sandbox_git_dotgits_sort(struct sandbox_git_dotgits *inv) {
  if (inv->n > 1)
    qsort(inv->items, inv->n, sizeof(*inv->items), by_rel);
}

bool sandbox_git_dotgits_has(const struct sandbox_git_dotgits *before,
                             const struct sandbox_git_dotgit *e) {
  const struct sandbox_git_dotgit *was;
  if (!before->taken || before->n == 0)
    return false; /* nothing known from before the run: every entry may be the run's */
  was = bsearch(e, before->items, before->n, sizeof(*before->items), by_rel);
  return was != NULL && was->dev == e->dev && was->ino == e->ino && was->type == e->type &&
         sandbox_git_digest_same(&was->digest, &e->digest);
}

void sandbox_git_dotgits_free(struct sandbox_git_dotgits *inv) {
  for (size_t i = 0; i < inv->n; i++)
    free(inv->items[i].rel);
  free(inv->items);
  *inv = (struct sandbox_git_dotgits){0};
}
