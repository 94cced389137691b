/* A mount table for the mount(2) fallback. See mountinfo.h. */
#include "mountinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"
#include "utils.h"

/* mountinfo's octal escapes (\040 for a space, ...) decoded in place */
static void unescape(char *s) {
  char *out = s;
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
        s[3] <= '7') {
      *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *out++ = *s;
    }
  }
  *out = '\0';
}

void mountinfo_free(struct mountinfo *mi) {
  for (size_t i = 0; i < mi->n; i++)
    free(mi->lines[i].point);
  free(mi->lines);
  *mi = (struct mountinfo){0};
}

static int append(struct mountinfo *mi, size_t *cap, uint64_t id, uint64_t parent, char *point) {
  if (mi->n == *cap) {
    size_t more_cap = *cap ? *cap * 2 : 64;
    struct mountinfo_line *more = realloc(mi->lines, more_cap * sizeof(*more));
    if (more == NULL) {
      errno = ENOMEM;
      return -1;
    }
    mi->lines = more;
    *cap = more_cap;
  }
  unescape(point);
  mi->lines[mi->n++] = (struct mountinfo_line){.id = id, .parent = parent, .point = xstrdup(point)};
  return 0;
}

int mountinfo_parse(FILE *f, struct mountinfo *out) {
  cleanup_free char *line = NULL;
  size_t len = 0, cap = 0;
  *out = (struct mountinfo){0};
  while (getline(&line, &len, f) > 0) {
    unsigned long long id, parent;
    char point[PATH_MAX];
    if (sscanf(line, "%llu %llu %*s %*s %4095s", &id, &parent, point) != 3)
      continue;
    if (append(out, &cap, id, parent, point) < 0) {
      mountinfo_free(out);
      return -1;
    }
  }
  return 0;
}

int mountinfo_read_self(struct mountinfo *out) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int proc = procfs_open(&err);
  cleanup_close int fd = -1;
  cleanup_file FILE *f = NULL;
  char rel[64];
  if (proc < 0) {
    errno = -fsrun_error_code(&err);
    return -1;
  }
  snprintf(rel, sizeof(rel), "%d/mountinfo", (int)procfs_self_pid(proc));
  fd = procfs_openat(proc, rel, O_RDONLY | O_CLOEXEC, &err);
  if (fd < 0) {
    errno = -fsrun_error_code(&err);
    return -1;
  }
  f = fdopen(fd, "r");
  if (f == NULL)
    return -1;
  fd = -1; /* f owns it */
  return mountinfo_parse(f, out);
}

/* --- lookups by id ---------------------------------------------------------------------------- */

/* the table's mount ids with their line indexes, sorted by id, for bsearch */
struct id_index {
  uint64_t id;
  size_t line;
};

struct by_id {
  const struct mountinfo_line *lines;
  struct id_index *order;
  size_t n;
};

static int cmp_id(const void *a, const void *b) {
  uint64_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
  return x < y ? -1 : x > y;
}

static int by_id_make(const struct mountinfo *mi, struct by_id *ix) {
  ix->lines = mi->lines;
  ix->n = mi->n;
  ix->order = malloc((mi->n ? mi->n : 1) * sizeof(*ix->order));
  if (ix->order == NULL) {
    errno = ENOMEM;
    return -1;
  }
  for (size_t i = 0; i < mi->n; i++)
    ix->order[i] = (struct id_index){.id = mi->lines[i].id, .line = i};
  qsort(ix->order, mi->n, sizeof(*ix->order), cmp_id);
  return 0;
}

/* the index of the line with mount id, or SIZE_MAX */
static size_t by_id_find(const struct by_id *ix, uint64_t id) {
  struct id_index key = {.id = id};
  const struct id_index *hit = ix->n ? bsearch(&key, ix->order, ix->n, sizeof(key), cmp_id) : NULL;
  return hit ? hit->line : SIZE_MAX;
}

/* --- below ------------------------------------------------------------------------------------ */

enum chain_state { CHAIN_UNKNOWN, CHAIN_BELOW, CHAIN_NOT, CHAIN_WALKING };

/* Walks line i's parent chain until a line already known, top, a root or a cycle, and gives every
 * line of the walk that answer. path has room for every line. */
static void resolve_chain(const struct by_id *ix, uint64_t top, size_t i, unsigned char *state,
                          size_t *path) {
  size_t depth = 0;
  unsigned char answer = CHAIN_NOT;
  for (;;) {
    const struct mountinfo_line *l = &ix->lines[i];
    size_t up;
    if (state[i] == CHAIN_BELOW || state[i] == CHAIN_NOT) {
      answer = state[i];
      break;
    }
    if (state[i] == CHAIN_WALKING) /* a cycle: no real table has one */
      break;
    path[depth++] = i;
    state[i] = CHAIN_WALKING;
    if (l->parent == top) {
      answer = CHAIN_BELOW;
      break;
    }
    up = l->parent == l->id ? SIZE_MAX : by_id_find(ix, l->parent);
    if (up == SIZE_MAX)
      break;
    i = up;
  }
  while (depth > 0)
    state[path[--depth]] = answer;
}

int mountinfo_below(const struct mountinfo *mi, uint64_t top, bool *below) {
  struct by_id ix;
  cleanup_free unsigned char *state = calloc(mi->n ? mi->n : 1, 1);
  cleanup_free size_t *path = malloc((mi->n ? mi->n : 1) * sizeof(*path));
  if (state == NULL || path == NULL) {
    errno = ENOMEM;
    return -1;
  }
  if (by_id_make(mi, &ix) < 0)
    return -1;
  for (size_t i = 0; i < mi->n; i++) {
    if (state[i] == CHAIN_UNKNOWN)
      resolve_chain(&ix, top, i, state, path);
    below[i] = state[i] == CHAIN_BELOW;
  }
  free(ix.order);
  return 0;
}

/* --- the mount a mount(2) made ---------------------------------------------------------------- */

int mountinfo_new_child(const struct mountinfo *before, const struct mountinfo *after,
                        uint64_t parent, uint64_t *id) {
  struct by_id ix;
  size_t found = 0;
  if (by_id_make(before, &ix) < 0)
    return -1;
  for (size_t i = 0; i < after->n; i++) {
    const struct mountinfo_line *l = &after->lines[i];
    if (l->parent != parent || l->id == parent || by_id_find(&ix, l->id) != SIZE_MAX)
      continue;
    *id = l->id;
    found++;
  }
  free(ix.order);
  if (found != 1) {
    errno = EXDEV;
    return -1;
  }
  return 0;
}
