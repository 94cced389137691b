/* A task container's `.git` inventory (sandbox-git-dotgits.c), kept between its execs like its
 * walk's cutoff (git-tamper-since) and pointer digests (git-pointers): a process one exec leaves
 * running may backdate a repository after that exec's walk, so each walk compares with what the
 * last finished walk found, not with the worktree at its own start. Only on a worktree whose file
 * times are not trusted; where the file is missing there (a container made by an older fsrun, or
 * a state dir that could not be written) nothing is known and every `.git` is named once.
 *
 * The file: a first line `fsrun-git-dotgits 1`, then one record an entry, each ending in a NUL
 * (a name may hold a newline): `DEV INO TYPE DIGEST REL`, TYPE octal (st_mode & S_IFMT), DIGEST
 * the content's SHA-256 (64 hex) or `-`, REL the worktree-relative path (to its NUL). */
#include "exec-git.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "utils.h"

#define DOTGITS_FILE  "git-dotgits"
#define DOTGITS_MAGIC "fsrun-git-dotgits 1\n"
/* past this the file is not read (nothing known: every entry named once) */
#define DOTGITS_FILE_MAX (32 * 1024 * 1024)

static void save(const struct sandbox_git_dotgits *inv, int state_dir_fd) {
  cleanup_free char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f == NULL)
    abort();
  fputs(DOTGITS_MAGIC, f);
  for (size_t i = 0; i < inv->n; i++) {
    const struct sandbox_git_dotgit *e = &inv->items[i];
    char hex[65];
    exec_git_digest_format(&e->digest, hex);
    fprintf(f, "%" PRIu64 " %" PRIu64 " %o %s %s", e->dev, e->ino, e->type, hex, e->rel);
    fputc('\0', f);
  }
  fclose(f);
  exec_git_state_write(state_dir_fd, DOTGITS_FILE, text, len,
                       "the next exec names every nested repository of the worktree");
}

/* one record (NUL-terminated) into e; false when it is not one */
static bool parse_record(const char *rec, struct sandbox_git_dotgit *e) {
  int end = -1;
  *e = (struct sandbox_git_dotgit){0};
  if (sscanf(rec, "%" SCNu64 " %" SCNu64 " %o %n", &e->dev, &e->ino, &e->type, &end) != 3 ||
      end < 0 || !exec_git_digest_parse(rec + end, ' ', &e->digest))
    return false;
  rec += end + (e->digest.unknown ? 1 : 2 * sizeof(e->digest.sum)) + 1;
  if (*rec == '\0')
    return false;
  e->rel = xstrdup(rec);
  return true;
}

static int parse(const char *text, size_t len, struct sandbox_git_dotgits *inv) {
  size_t magic = strlen(DOTGITS_MAGIC);
  if (len < magic || memcmp(text, DOTGITS_MAGIC, magic) != 0 ||
      (len > magic && text[len - 1] != '\0'))
    return -1;
  for (size_t at = magic; at < len; at += strlen(text + at) + 1) {
    struct sandbox_git_dotgit e;
    if (!parse_record(text + at, &e))
      return -1;
    sandbox_git_dotgits_push(inv, &e);
  }
  return 0;
}

void exec_git_dotgits_load(struct sandbox_git_run *g, int state_dir_fd) {
  cleanup_free char *text = NULL;
  size_t len = 0;
  sandbox_git_dotgits_free(&g->dotgits_before);
  if (sandbox_git_read_whole(state_dir_fd, DOTGITS_FILE, DOTGITS_FILE_MAX, &text, &len) < 0)
    return; /* none: not taken (ENOENT: a worktree whose times are trusted, or an older fsrun) */
  if (parse(text, len, &g->dotgits_before) < 0) {
    log_warning("exec: git: `%s` of the container is not fsrun's; every nested repository of "
                "the worktree is named",
                DOTGITS_FILE);
    sandbox_git_dotgits_free(&g->dotgits_before);
    return;
  }
  sandbox_git_dotgits_sort(&g->dotgits_before);
  g->dotgits_before.taken = true;
}

void exec_git_dotgits_save(const struct sandbox_git_run *g, int state_dir_fd) {
  if (g->dotgits_after.taken)
    save(&g->dotgits_after, state_dir_fd);
}

void exec_git_dotgits_created(const char *worktree, const struct sandbox_git_layout *l,
                              int state_dir_fd) {
  struct sandbox_git_run g = {.common_dir = l->common_dir};
  sandbox_git_dotgits_before(&g, worktree);
  if (g.dotgits_before.taken)
    save(&g.dotgits_before, state_dir_fd);
  sandbox_git_dotgits_free(&g.dotgits_before);
}
