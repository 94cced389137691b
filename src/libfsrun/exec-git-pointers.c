/* The config's and hook managers' pointer digests of a task container, kept between its execs
 * (review20 A): a process one exec leaves running may rewrite `.husky/pre-commit` or `lefthook.yml`
 * after that exec looked; the next exec's own "before" would already hold the change, and no exec
 * would ever name it. So each exec compares its "after" with the digests the last exec that looked
 * left in the container's state dir (fsrun's, beside git-tamper-since, out of the command's reach),
 * and leaves its own "after" there. A hook manager's file that is there now and was not when the
 * last exec looked (the same managers installed) came in between: reported.
 *
 * The file: a first line `fsrun-git-pointers 2 MANAGERS`, then one `KEY DIGEST` line a pointer,
 * KEY a hash of its entry and path (hex), DIGEST its SHA-256 digest (64 hex) or `-` (unknown: never
 * the same). A pointer the config names only now (the host changed the config) has no line and
 * starts from its own exec's digest. Version 1's digests (64-bit, not collision resistant: review24
 * B0) are not compared: each pointer they name counts as changed once. The create of the container
 * writes the first file (the state at creation), so that what the container's process rewrites
 * before the first exec is that exec's to report. */
#include "exec-git.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "utils.h"

#define POINTERS_FILE     "git-pointers"
#define POINTERS_MAGIC    "fsrun-git-pointers"
#define POINTERS_VERSION  2u
#define POINTERS_FILE_MAX (64 * 1024)

static uint64_t pointer_key(const struct sandbox_git_pointer *p) {
  uint64_t h = 14695981039346656037ULL;
  const char *parts[2] = {p->entry, p->path};
  for (size_t i = 0; i < 2; i++)
    for (const unsigned char *c = (const unsigned char *)parts[i];; c++) {
      h = (h ^ *c) * 1099511628211ULL;
      if (*c == '\0')
        break;
    }
  return h;
}

void exec_git_digest_format(const struct sandbox_git_digest *d, char out[65]) {
  if (d->unknown) {
    strcpy(out, "-");
    return;
  }
  for (size_t i = 0; i < sizeof(d->sum); i++)
    snprintf(out + 2 * i, 3, "%02x", d->sum[i]);
}

bool exec_git_digest_parse(const char *text, char end, struct sandbox_git_digest *d) {
  *d = (struct sandbox_git_digest){.unknown = true};
  if (text[0] == '-')
    return text[1] == end;
  for (size_t i = 0; i < sizeof(d->sum); i++) {
    unsigned byte;
    if (sscanf(text + 2 * i, "%2x", &byte) != 1 || !isxdigit((unsigned char)text[2 * i]) ||
        !isxdigit((unsigned char)text[2 * i + 1]))
      return false;
    d->sum[i] = (uint8_t)byte;
  }
  d->unknown = false;
  return text[2 * sizeof(d->sum)] == end;
}

/* the digest stored for key in text (past its first line); false when there is none. Version 1's
 * line is there but its digest is unknown. */
static bool stored_digest(const char *text, unsigned version, uint64_t key,
                          struct sandbox_git_digest *digest) {
  for (const char *line = strchr(text, '\n'); line != NULL; line = strchr(line, '\n')) {
    uint64_t k;
    int end = -1;
    line++;
    if (sscanf(line, "%16" SCNx64 " %n", &k, &end) != 1 || end <= 0 || k != key)
      continue;
    if (version == 1) {
      *digest = (struct sandbox_git_digest){.unknown = true};
      return true;
    }
    if (exec_git_digest_parse(line + end, '\n', digest))
      return true;
  }
  return false;
}

/* each pointer's digest, its "before" or its "after", into the container's state dir */
static void save_digests(const struct sandbox_git_run *g, int state_dir_fd, bool before) {
  cleanup_free char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f == NULL)
    abort();
  fprintf(f, POINTERS_MAGIC " %u %u\n", POINTERS_VERSION, g->hook_managers);
  for (size_t i = 0; i < g->n_pointers; i++) {
    char hex[65];
    exec_git_digest_format(before ? &g->pointers[i].before : &g->pointers[i].after, hex);
    fprintf(f, "%016" PRIx64 " %s\n", pointer_key(&g->pointers[i]), hex);
  }
  fclose(f);
  exec_git_state_write(state_dir_fd, POINTERS_FILE, text, len,
                       "the next exec compares the config's and hook managers' files with their "
                       "state at its own start");
}

/* the stored digests become g's "before"; -1 with errno when none are (ENOENT: no exec looked) */
static int apply_stored(struct sandbox_git_run *g, int state_dir_fd) {
  cleanup_free char *text = NULL;
  unsigned managers, version;
  int end = -1;
  if (sandbox_git_read_max(state_dir_fd, POINTERS_FILE, POINTERS_FILE_MAX, &text) < 0)
    return -1;
  if (sscanf(text, POINTERS_MAGIC " %u %u%n", &version, &managers, &end) != 2 || end < 0 ||
      text[end] != '\n' || version < 1 || version > POINTERS_VERSION) {
    log_warning("exec: git: `%s` of the container is not fsrun's; its config and hook files are "
                "compared with their state at this exec's or delete's start",
                POINTERS_FILE);
    errno = EINVAL;
    return -1;
  }
  for (size_t i = 0; i < g->n_pointers; i++) {
    struct sandbox_git_pointer *p = &g->pointers[i];
    struct sandbox_git_digest digest;
    if (stored_digest(text, version, pointer_key(p), &digest))
      p->before = digest;
    else if (strncmp(p->entry, "hooks:", 6) == 0 && managers == g->hook_managers)
      p->appeared = true;
  }
  return 0;
}

void exec_git_pointers_load(struct sandbox_git_run *g, int state_dir_fd) {
  /* the container's first exec to look: its own "before", kept now, so that the next exec
   * compares with it when this one is killed before it saves its "after" (review19 #15) */
  if (apply_stored(g, state_dir_fd) < 0 && errno == ENOENT)
    save_digests(g, state_dir_fd, true);
}

void exec_git_pointers_final(const char *worktree, const oci_strv *writable, int top,
                             int state_dir_fd, bool nested_seen, char ***found, char ***host_args) {
  cleanup_error fsrun_error_t err = NULL;
  struct sandbox_git_layout l;
  struct sandbox_git_run g = {.nested_seen = nested_seen, .writable = writable};
  sandbox_git_tamper_settle(found); /* the walk's own cut said, whatever follows */
  if (sandbox_git_layout_find(worktree, &l, &err) < 0 || l.common_dir == NULL) {
    sandbox_git_layout_free(&l);
    *host_args = sandbox_git_host_args(NULL, *found);
    return; /* no repository any more: nothing the host's git runs from it */
  }
  g.common_dir = l.common_dir;
  g.common_fd = l.common_fd;
  g.admin = l.admin;
  /* the host's index: a gitlink whose checkout is a repository of its own past the walk's reach
   * is entered by the host's `git add` (review26 D1) */
  g.hash_size = sandbox_git_hash_size(g.common_fd);
  sandbox_git_index_gitlinks(&g, g.common_fd);
  g.nested_seen = nested_seen || sandbox_git_gitlinks_own_repository(&g, top);
  /* the walk's top: one object for the config's reads, the digests and hostGitArgs' reread */
  sandbox_git_top_hold(&g, top >= 0 ? fcntl(top, F_DUPFD_CLOEXEC, 0) : -1);
  sandbox_git_config_paths(&g, worktree);
  /* no exec looked (none ran): no digest from before to compare with */
  if (apply_stored(&g, state_dir_fd) == 0)
    sandbox_git_config_tamper(&g, worktree, found);
  /* with the pointers: an include's or global config's file read as it is now (review21 P3) */
  *host_args = sandbox_git_host_args(&g, *found);
  sandbox_git_pointers_free(&g);
  sandbox_git_strv_free(g.gitlinks_after);
  sandbox_git_layout_free(&l);
}

void exec_git_pointers_save(const struct sandbox_git_run *g, int state_dir_fd) {
  save_digests(g, state_dir_fd, false);
}

void exec_git_pointers_created(const char *worktree, const oci_strv *writable,
                               const struct sandbox_git_layout *l, int state_dir_fd) {
  struct sandbox_git_run g = {.common_dir = l->common_dir,
                              .common_fd = l->common_fd,
                              .admin = l->admin,
                              .writable = writable};
  sandbox_git_config_paths(&g, worktree);
  save_digests(&g, state_dir_fd, true);
  sandbox_git_pointers_free(&g);
}
