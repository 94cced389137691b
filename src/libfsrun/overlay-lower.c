/* An overlay's lower layer by the object checked before (overlay-lower.h). */
#include "overlay-lower.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "openat2-compat.h"
#include "utils.h"

int overlay_lower_open(const char *dir, uint64_t dev, uint64_t ino, fsrun_error_t *err) {
  /* the checked path was resolved (realpath): a link on it now is someone's swap */
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  cleanup_close int root = -1;
  cleanup_close int fd = -1;
  struct stat st;
  if (dir[0] != '/')
    return fsrun_error_make(err, EINVAL, "overlay lowerdir `%s` is not absolute", dir);
  root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return fsrun_error_errno(err, "overlay lowerdir `%s`: open /", dir);
  fd = (int)openat2_compat(root, dir[1] ? dir + 1 : ".", &how);
  if (fd < 0 || fstat(fd, &st) < 0)
    return fsrun_error_errno(err, "overlay lowerdir `%s`", dir);
  if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
    return fsrun_error_make(err, ESTALE,
                            "overlay lowerdir `%s` is no longer the directory checked before "
                            "(a path component was re-pointed)",
                            dir);
  return steal_fd(&fd);
}

/* the start of the value of data's only `lowerdir=` option, or NULL */
static const char *only_lower(const char *data) {
  const char *found = NULL;
  for (const char *p = data; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    if (strncmp(p, "lowerdir+", 9) == 0)
      return NULL; /* layers of the new mount API's kind: more than one */
    if (strncmp(p, "lowerdir=", 9) == 0) {
      if (found != NULL)
        return NULL;
      found = p + 9;
    }
  }
  return found;
}

/* the length of that value when it names one layer, else 0 */
static size_t one_layer(const char *value) {
  size_t len;
  if (value == NULL)
    return 0;
  len = strcspn(value, ",");
  return memchr(value, ':', len) == NULL ? len : 0;
}

char *overlay_data_lower(const char *data) {
  const char *value = data != NULL ? only_lower(data) : NULL;
  size_t len = one_layer(value);
  return len > 0 ? strndup(value, len) : NULL;
}

char *overlay_data_set_lower(const char *data, const char *lower) {
  const char *value = data != NULL ? only_lower(data) : NULL;
  size_t len = one_layer(value);
  if (len == 0)
    return NULL;
  return xasprintf("%.*s%s%s", (int)(value - data), data, lower, value + len);
}
