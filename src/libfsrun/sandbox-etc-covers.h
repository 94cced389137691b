/* Root's /etc view: which entries of its directories may need a cover, kept between runs. */
#ifndef FSRUN_SANDBOX_ETC_COVERS_H
#define FSRUN_SANDBOX_ETC_COVERS_H

#include <stddef.h>

#include "json-out.h"

/* the record in the shared bundle, beside the view's */
#define ETC_COVERS_RECORD "etc.covers"

struct etc_covers {
  char *old;          /* the record as read (NULL: none) */
  struct strbuf next; /* what this run found, written at the end when it differs */
};

/* one directory's names that are not symbolic links, each followed by a NUL */
struct etc_names {
  struct strbuf text;
  size_t n;
};

/* reads bundle_fd's record */
void etc_covers_begin(int bundle_fd, struct etc_covers *c);

/* The names of dir_fd's directory (path: where it is under /etc, "ssl" or "ssl/certs") that are
 * not symbolic links, into out: the names the record keeps for path when its device, inode and
 * ctime are dir_fd's now (a name added, removed or replaced changes the directory's ctime), else
 * those read from the directory, recorded unless its ctime is within a second of now (a change in
 * the same tick of the coarse clock would leave it as it was). c NULL: read, nothing recorded.
 * 0; -1 with errno: E2BIG when it has more than max such names (neither used nor recorded), or
 * the directory could not be read. */
int etc_covers_names(struct etc_covers *c, int dir_fd, const char *path, size_t max,
                     struct etc_names *out);

/* the next name after name (NULL: the first), NULL after the last */
const char *etc_names_next(const struct etc_names *names, const char *name);
void etc_names_free(struct etc_names *names);

/* writes the record when it differs from what was read (a new file renamed over it), and frees */
void etc_covers_end(int bundle_fd, struct etc_covers *c);

#endif
