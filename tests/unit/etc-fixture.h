/* The /etc unit tests' fixture: files and directories made in a scratch `etc`, and a small file of
 * the bundle read back. */
#ifndef FSRUN_ETC_FIXTURE_H
#define FSRUN_ETC_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path under dirfd holding text, with mode (set after the write: a 0400 file is written too) */
__attribute__((unused)) static void fixture_put(int dirfd, const char *path, const char *text,
                                                mode_t mode) {
  int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, mode) < 0)
    perror(path);
  if (fd >= 0)
    close(fd);
}

/* a directory with exactly mode (the umask aside) */
__attribute__((unused)) static void fixture_dir(int dirfd, const char *path, mode_t mode) {
  if (mkdirat(dirfd, path, mode) < 0 || fchmodat(dirfd, path, mode, 0) < 0)
    perror(path);
}

/* up to size - 1 bytes of path under dirfd into buf, "" when it cannot be read; returns buf */
__attribute__((unused)) static const char *fixture_read(int dirfd, const char *path, char *buf,
                                                        size_t size) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? 0 : read(fd, buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  return buf;
}

#endif
