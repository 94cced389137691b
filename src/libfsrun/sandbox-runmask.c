#include "sandbox-runmask.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"
#include "utils.h"

#define MAX_PLACES 3

/* one per place per bind that holds it */
struct masks {
  char **dest;
  size_t len;
};

/* the mount id of fd, or 0 where the kernel does not say (then every step counts as a crossing) */
static uint64_t mount_id(int fd) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID))
    return 0;
  return stx.stx_mnt_id;
}

static void masks_add(struct masks *ms, const char *bind_dest, const char *below) {
  char **grown = realloc(ms->dest, (ms->len + 1) * sizeof(*ms->dest));
  if (grown == NULL)
    abort();
  ms->dest = grown;
  ms->dest[ms->len++] =
      strcmp(bind_dest, "/") == 0 ? xstrdup(below) : xasprintf("%s%s", bind_dest, below);
}

/* the binds that are the directory st, the place `below` them */
static void masks_for_level(struct mount_list *l, size_t first, size_t end, const struct stat *st,
                            const char *below, struct masks *ms) {
  for (size_t i = first; i < end; i++) {
    const oci_mount *m = &l->items[i];
    if (m->has_source_id && m->source_dev == (uint64_t)st->st_dev &&
        m->source_ino == (uint64_t)st->st_ino)
      masks_add(ms, m->destination, below);
  }
}

/* realpath of path's (absolute) longest existing part, cut at a '/', and *len that part's length
 * in path: realpath looks `..` up as the kernel does (after a link: the link target's parent).
 * NULL when not even `/` resolves. */
static char *real_prefix(char *path, size_t *len) {
  size_t n = strlen(path);
  for (;;) {
    char saved = path[n];
    char *real;
    path[n] = '\0';
    real = realpath(n > 0 ? path : "/", NULL);
    path[n] = saved;
    if (real != NULL || n == 0) {
      *len = n;
      return real;
    }
    n = (size_t)((char *)memrchr(path, '/', n) - path);
  }
}

/* path with its longest existing part resolved (real_prefix) and the rest as spelled */
static char *resolved_spelling(char *path) {
  size_t len;
  cleanup_free char *real = real_prefix(path, &len);
  return real != NULL ? xasprintf("%s%s", real, path + len) : NULL;
}

/* The place's real path: with may_be_made, its nearest existing ancestor's (a state root fsrun
 * makes at create is not there yet when a bundle is written) and the rest as spelled; *fd that
 * ancestor, *have the length of its part. NULL: not there (nothing to show), or not to be looked
 * at. The existing part is resolved before the `..` of the rest are cleaned by text: cleaned
 * first, `lnk/../sr` would name another place than the kernel's (review21 L3). */
static char *real_place(const char *place, bool may_be_made, int *fd, size_t *have) {
  cleanup_free char *cwd = place[0] == '/' ? NULL : getcwd(NULL, 0);
  cleanup_free char *joined = cwd != NULL ? xasprintf("%s/%s", cwd, place) : xstrdup(place);
  cleanup_free char *resolved = resolved_spelling(joined);
  cleanup_free char *clean = resolved != NULL ? path_clean_abs(resolved) : NULL;
  size_t len = 0;
  cleanup_free char *real = clean != NULL ? real_prefix(clean, &len) : NULL;
  if (real == NULL || (clean[len] != '\0' && !may_be_made))
    return NULL;
  *fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  *have = strcmp(real, "/") == 0 ? 0 : strlen(real);
  return *fd < 0 ? NULL : xasprintf("%.*s%s", (int)*have, real, clean + len);
}

/* Walks up from the place by `..` (as the kernel looks a path up, across mount points), so a bind
 * of any directory on the way is met by identity, whatever it was named; the place's real path
 * gives what lies below each. */
static void masks_for_place(struct mount_list *l, size_t first, size_t end, const char *place,
                            bool may_be_made, bool recursive, struct masks *ms) {
  cleanup_close int cur = -1;
  size_t cut = 0;
  cleanup_free char *real = place != NULL ? real_place(place, may_be_made, &cur, &cut) : NULL;
  uint64_t mnt = real != NULL ? mount_id(cur) : 0;
  bool crossed = mnt == 0;
  struct stat st;
  if (real == NULL || real[0] == '\0' || fstat(cur, &st) < 0)
    return;
  /* the place itself is not there yet: its ancestor holds it */
  if (real[cut] != '\0' && (recursive || !crossed))
    masks_for_level(l, first, end, &st, real + cut, ms);
  while (cut > 0) {
    int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    cut = (size_t)((char *)memrchr(real, '/', cut) - real);
    if (up < 0)
      return;
    close(cur);
    cur = up;
    if (fstat(cur, &st) < 0)
      return;
    crossed = crossed || mount_id(cur) != mnt;
    if (recursive || !crossed)
      masks_for_level(l, first, end, &st, real + cut, ms);
  }
}

/* a mask inside another would need a mount point in that one's empty read-only tmpfs */
static bool held_by_other(const struct masks *ms, size_t i) {
  for (size_t j = 0; j < ms->len; j++)
    if (j != i && path_within(ms->dest[i], ms->dest[j]) &&
        (strcmp(ms->dest[i], ms->dest[j]) != 0 || j < i))
      return true;
  return false;
}

void sandbox_mask_private_places(struct mount_list *l, size_t first, size_t end,
                                 const struct runmask_places *places, bool recursive) {
  static const char *const mask_options[] = {"ro",       "nosuid",  "nodev", "noexec",
                                             "mode=000", "size=4k", NULL};
  char user_run[64];
  /* the state root first: the one fsrun makes at create */
  const char *const where[MAX_PLACES] = {places->state_root, places->runtime_dir, user_run};
  struct masks ms = {0};
  if (first == end)
    return; /* a policy without paths pays nothing */
  snprintf(user_run, sizeof(user_run), "/run/user/%u", (unsigned)places->uid);
  for (size_t i = 0; i < MAX_PLACES; i++)
    masks_for_place(l, first, end, where[i], i == 0, recursive, &ms);
  for (size_t i = 0; i < ms.len; i++)
    if (!held_by_other(&ms, i))
      add_mount(l, ms.dest[i], "tmpfs", "tmpfs", mask_options);
  for (size_t i = 0; i < ms.len; i++)
    free(ms.dest[i]);
  free(ms.dest);
}
