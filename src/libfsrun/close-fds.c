#include "close-fds.h"

#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool kept(int fd, const int *keep, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (keep[i] == fd)
      return true;
  return false;
}

void close_fds_except(int first, const int *keep, size_t n) {
  int sorted[CLOSE_FDS_KEEP_MAX], ret = 0, from = first;
  if (n > CLOSE_FDS_KEEP_MAX)
    n = CLOSE_FDS_KEEP_MAX;
  memcpy(sorted, keep, n * sizeof(int));
  /* in order, so that each gap between them is one close_range */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  for (size_t i = 0; i < n; i++) {
    if (sorted[i] < from)
      continue;
    if (sorted[i] > from)
      ret |= (int)syscall(SYS_close_range, from, sorted[i] - 1, 0);
    from = sorted[i] + 1;
  }
  ret |= (int)syscall(SYS_close_range, from, ~0U, 0);
  if (ret == 0)
    return;
  for (int fd = first; fd < 65536; fd++)
    if (!kept(fd, keep, n))
      close(fd);
}
