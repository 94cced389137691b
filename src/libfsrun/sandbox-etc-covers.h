/* Root's /etc view: which entries of its directories may need a cover, kept between runs. */
#ifndef FSRUN_SANDBOX_ETC_COVERS_H
#define FSRUN_SANDBOX_ETC_COVERS_H

#include <sys/stat.h>

#include "json-out.h"

/* the record in the shared bundle, beside the view's */
#define ETC_COVERS_RECORD "etc.covers"

struct etc_covers {
  char *old;          /* the record as read (NULL: none) */
  struct strbuf next; /* what this run found, written at the end when it differs */
};

/* reads bundle_fd's record */
void etc_covers_begin(int bundle_fd, struct etc_covers *c);

/* Calls visit(dir_fd, entry, arg) for each entry of etc_fd's directory name (st: its stat, links
 * followed, taken before) that is not a symbolic link: the names the record keeps for it when its
 * device, inode and ctime are st's (a name added, removed or replaced changes the directory's
 * ctime), else those read from the directory, recorded unless its ctime is within a second of now
 * (a change in the same tick of the coarse clock would leave it as it was). */
void etc_covers_each(struct etc_covers *c, int etc_fd, const char *name, const struct stat *st,
                     void (*visit)(int dir_fd, const char *entry, void *arg), void *arg);

/* writes the record when it differs from what was read (a new file renamed over it), and frees */
void etc_covers_end(int bundle_fd, struct etc_covers *c);

#endif
