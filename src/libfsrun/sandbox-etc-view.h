/* Root's /etc as one directory kept in the shared bundle (see sandbox-etc-view.c). */
#ifndef FSRUN_SANDBOX_ETC_VIEW_H
#define FSRUN_SANDBOX_ETC_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* the view's directory in the bundle, and the record of what it was made from */
#define ETC_VIEW_NAME   "etc"
#define ETC_VIEW_STAMPS "etc.stamps"
/* a larger regular file is bound, not copied */
#define ETC_VIEW_COPY_MAX (1024 * 1024)

enum etc_view_kind {
  ETC_VIEW_ABSENT, /* not in the view */
  ETC_VIEW_COPY,   /* a copy of the host's regular file */
  ETC_VIEW_DIR,    /* an empty directory, a bind's mount point */
  ETC_VIEW_FILE,   /* an empty file, a bind's mount point */
  ETC_VIEW_TREE,   /* a copy of the host's directory (sandbox-etc-tree.h), or where it cannot
                    * be one (bound set), an empty directory as ETC_VIEW_DIR */
};

struct etc_view_entry {
  const char *name;
  enum etc_view_kind kind;
  struct stat st; /* the host's entry, links followed (ETC_VIEW_COPY: what the copy is of) */
  bool bound;     /* set by the sync: an ETC_VIEW_TREE entry the view could not copy */
};

/* Brings bundle_fd's ETC_VIEW_NAME to entries[0..n): nothing is written when ETC_VIEW_STAMPS says
 * it already is (the steady state: one read, and a stat of each directory and file a copied
 * directory's record names); otherwise, under a lock on the view, each entry whose record differs
 * is made again (a copy from etc_fd's entry of that name) and every other name is removed. Sets
 * each ETC_VIEW_TREE entry's bound. 0, or -1 with errno. */
int etc_view_sync(int bundle_fd, int etc_fd, struct etc_view_entry *entries, size_t n);

#endif
