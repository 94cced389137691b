/* A unix stream socket listening at PATH for the test helpers. Bound under a temporary name and
 * renamed to PATH once listening: a test that waits for PATH to exist then never connects between
 * bind and listen (ECONNREFUSED, seen under load). */
#ifndef FSRUN_TESTS_UNIX_LISTEN_H
#define FSRUN_TESTS_UNIX_LISTEN_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* the listening fd, or -1 with errno (ENAMETOOLONG: PATH and its temporary name do not fit) */
static inline int unix_listen_at(const char *path, int type) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  int fd, n = snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.t%d", path, (int)getpid());
  if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  unlink(addr.sun_path);
  unlink(path);
  fd = socket(AF_UNIX, type, 0);
  if (fd < 0)
    return -1;
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 1) < 0 ||
      rename(addr.sun_path, path) < 0) {
    int saved = errno;
    close(fd);
    unlink(addr.sun_path);
    errno = saved;
    return -1;
  }
  return fd;
}

#endif
