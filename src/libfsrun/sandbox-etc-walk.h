/* Root's /etc: the covers of what is not world-readable below a bound directory (see
 * sandbox-etc-walk.c). */
#ifndef FSRUN_SANDBOX_ETC_WALK_H
#define FSRUN_SANDBOX_ETC_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sandbox-etc-covers.h"
#include "sandbox-internal.h"

/* directories below a bound one are walked down to this depth (its own entries: depth 1); one
 * deeper is covered whole */
#define ETC_WALK_DEPTH_MAX 8
/* the names (symbolic links aside) a view's walk looks at, all its directories together; a
 * directory that would go past it is covered whole */
#define ETC_WALK_NAMES_MAX 4096

struct etc_walk {
  struct etc_covers *covers; /* NULL: nothing kept between runs (a bundle's /etc) */
  struct mount_list *l;
  size_t names_left; /* start: ETC_WALK_NAMES_MAX */
};

/* a mode that lets everyone read (a directory: and search) */
bool etc_world_readable(mode_t mode);

/* Covers of etc_fd's directory name (bound at /etc/NAME) added to w->l: over each entry at any
 * depth below it that is not world-readable (a directory: an empty one, anything else: an
 * unreadable file; a symbolic link never), over each directory past the walk's limits or that
 * cannot be read (an empty one: never left open), and a read-only bind of the host's over each
 * mount point met (a bind of the directory does not carry the mounts below it: this shows what the
 * host shows there, and walks it). */
void etc_walk_covers(struct etc_walk *w, int etc_fd, const char *name);

#endif
