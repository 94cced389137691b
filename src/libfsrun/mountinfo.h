/* A mount table (/proc/PID/mountinfo) for the mount(2) fallback (mount-fallback.h): which mounts
 * lie below a mount, and which one a mount(2) just made. */
#ifndef FSRUN_MOUNTINFO_H
#define FSRUN_MOUNTINFO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mountinfo_line {
  uint64_t id, parent;
  char *point; /* the mount point, octal escapes decoded */
};

struct mountinfo {
  struct mountinfo_line *lines;
  size_t n;
};

/* The table in f (mountinfo's format; lines that do not parse are skipped). -1 with errno. */
int mountinfo_parse(FILE *f, struct mountinfo *out);

/* The caller's own table, from a verified procfs (procfs.h). -1 with errno. */
int mountinfo_read_self(struct mountinfo *out);

void mountinfo_free(struct mountinfo *mi);
#define cleanup_mountinfo __attribute__((cleanup(mountinfo_free)))

/* below[i] = whether line i's parent chain reaches the mount top (not top itself). Each line's
 * chain is walked once (O(n log n)): a cycle or a parent not in the table ends a chain. -1 with
 * errno (ENOMEM). */
int mountinfo_below(const struct mountinfo *mi, uint64_t top, bool *below);

/* The id of the one mount in `after` that is not in `before` and whose parent is `parent`: the
 * mount a mount(2) onto a directory of mount `parent` made. None, or more than one, fails with
 * EXDEV. -1 with errno. */
int mountinfo_new_child(const struct mountinfo *before, const struct mountinfo *after,
                        uint64_t parent, uint64_t *id);
#endif
