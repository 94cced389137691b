/* A path looked up a name at a time as the kernel does (links followed by hand, `..` from where a
 * link led), refusing what the lookup passes through when someone else than the caller or root can
 * change it (ssh's StrictModes): whoever can rename in a directory on the way, or owns a link on
 * it, decides what the path names after any check by path, and so which directory or file fsrun
 * then uses, as root too. The state root (state-root.h) and the files fsrun writes at a path the
 * caller names (caller-output.h) are reached this way. */
#ifndef FSRUN_PATH_WALK_H
#define FSRUN_PATH_WALK_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

struct path_walk;

/* the one-line refusal of w->path, reached through where (a real path) for why */
typedef int path_walk_refuse_fn(const struct path_walk *w, const char *where, const char *why,
                                fsrun_error_t *err);

struct path_walk {
  int dir;            /* the directory the next name is looked up in, -1 before the start */
  struct stat dir_st; /* its stat */
  unsigned links;
  int missing_errno; /* ENOENT or ENOTDIR when the walk stopped at a missing name */
  uid_t euid;
  const char *path; /* as the caller gave it, for messages */
  const char *what; /* whose path (an option's name), for the refusal */
  bool others_dirs; /* another uid's directory passes (not its link, nor a shared directory) */
  path_walk_refuse_fn *refuse;
};

/* A walk of path for what, refused by refuse; end it with path_walk_end. */
void path_walk_begin(struct path_walk *w, const char *path, const char *what,
                     path_walk_refuse_fn *refuse);
void path_walk_end(struct path_walk *w);

/* Walks every directory of w->path but its last name, checking each directory and link passed:
 * 0 with w->dir that name's directory and *last the name ("." for `/`); 1 when a name on the way
 * is missing or not a directory (w->missing_errno); or the refusal or error. */
int path_walk_parent(struct path_walk *w, char **last, fsrun_error_t *err);

/* *last, a link in w->dir (fd, st), followed by the same rules: 0 with w->dir and *last its
 * target's directory and last name, 1 (missing on the way), or the refusal or error. */
int path_walk_follow_last(struct path_walk *w, int fd, const struct stat *st, char **last,
                          fsrun_error_t *err);

/* w->dir is in procfs, whose links (/proc/self/fd/N, /dev/stderr's target) name what a process
 * holds, not a path: the kernel follows them, not their text */
bool path_walk_in_proc(const struct path_walk *w);

/* others than its owner may write w->dir (the walk let it pass: it has the sticky bit) */
bool path_walk_dir_shared(const struct path_walk *w);

/* uid, an owner of something the walk reached, is the caller or root (in a user namespace, an
 * owner outside its map counts as root: nothing there tells the host's root from another) */
bool path_walk_trusted_owner(const struct path_walk *w, uid_t uid);

#endif
