#include "sandbox-path-owners.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path-walk.h"
#include "utils.h"

struct policy_entry {
  struct path_walk walk; /* first: the refusal gets the walk */
  const char *field;
  size_t index;
};

static int refuse_policy_path(const struct path_walk *w, const char *where, const char *why,
                              fsrun_error_t *err) {
  const struct policy_entry *e = (const struct policy_entry *)w;
  return fsrun_error_make(err, 0,
                          "policy: %s[%zu]: `%s` is reached through `%s`, %s: whoever can change "
                          "it decides what the sandbox binds; name a path whose directories and "
                          "links only this user and root own",
                          e->field, e->index, w->path, where, why);
}

/* the walk at its last name: a link there is followed (and checked) until a name that is none */
static int follow_last_links(struct path_walk *w, char **last, fsrun_error_t *err) {
  for (;;) {
    cleanup_close int fd = -1;
    struct stat st;
    int r;
    if (path_walk_in_proc(w))
      return 0; /* the kernel's objects, not paths anyone can re-point */
    fd = openat(w->dir, *last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
      return 0;
    if (fd < 0 || fstat(fd, &st) < 0)
      return fsrun_error_errno(err, "look up `%s`", w->path);
    if (!S_ISLNK(st.st_mode))
      return 0;
    r = path_walk_follow_last(w, fd, &st, last, err);
    if (r != 0)
      return r < 0 ? r : 0;
  }
}

int check_policy_path_owners(const char *field, size_t i, const char *path, fsrun_error_t *err) {
  struct policy_entry e = {.field = field, .index = i};
  cleanup_free char *last = NULL;
  int r;
  path_walk_begin(&e.walk, path, field, refuse_policy_path);
  /* a root caller may name a user's directory (their worktree): what the user can swap in there
   * is a link of theirs, which is refused, or a directory of their own */
  e.walk.others_dirs = true;
  r = path_walk_parent(&e.walk, &last, err);
  if (r == 0)
    r = follow_last_links(&e.walk, &last, err);
  path_walk_end(&e.walk);
  return r < 0 ? r : 0;
}
