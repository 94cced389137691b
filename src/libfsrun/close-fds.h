/* Closing every fd of a runtime process above the ones it keeps, before execve: CLOEXEC is not
 * enough, since execve resolves its path before it closes them. */
#ifndef FSRUN_CLOSE_FDS_H
#define FSRUN_CLOSE_FDS_H

#include <stddef.h>

#define CLOSE_FDS_KEEP_MAX 16

/* Closes every fd from first on but those of keep[0..n) (n <= CLOSE_FDS_KEEP_MAX, any order, -1:
 * none). No allocation, nothing that needs /proc; close(2) one by one where close_range is
 * missing or refused (a seccomp profile). */
void close_fds_except(int first, const int *keep, size_t n);

#endif
