#include "passwd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#define PASSWD_MAX_BYTES (16u << 20)

/* the whole file, NUL-terminated, or NULL */
static char *read_regular_file(const char *path) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  cleanup_free char *buf = NULL;
  size_t len = 0, cap = 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return NULL;
  while (len < PASSWD_MAX_BYTES) {
    ssize_t n;
    if (cap - len < 4096) {
      cap = cap ? cap * 2 : 8192;
      buf = realloc(buf, cap + 1);
      if (buf == NULL)
        abort();
    }
    n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  if (buf == NULL)
    return NULL;
  buf[len] = '\0';
  return steal_ptr(&buf);
}

/* line (NUL-terminated, no newline), name:password:uid:gid:gecos:home:shell, split at its colons
 * into fields (at most 7); their number */
static int split_fields(char *line, char *fields[7]) {
  int n = 1;
  fields[0] = line;
  for (char *p = line; *p && n < 7; p++)
    if (*p == ':') {
      *p = '\0';
      fields[n++] = p + 1;
    }
  return n;
}

static char *field_if_uid(char *line, const void *arg, int field) {
  uid_t uid = *(const uid_t *)arg;
  char *fields[7];
  int n = split_fields(line, fields);
  char *end = NULL;
  unsigned long v;
  if (n < 3 || fields[2][0] < '0' || fields[2][0] > '9' || field >= n)
    return NULL;
  errno = 0;
  v = strtoul(fields[2], &end, 10);
  if (errno != 0 || *end != '\0' || v != (unsigned long)uid || fields[0][0] == '\0')
    return NULL;
  return xstrdup(fields[field]);
}

static char *field_if_name(char *line, const void *arg, int field) {
  char *fields[7];
  int n = split_fields(line, fields);
  if (field >= n || strcmp(fields[0], (const char *)arg) != 0)
    return NULL;
  return xstrdup(fields[field]);
}

/* the first value match gives for a line of the passwd file at path */
static char *first_match(const char *path, char *(*match)(char *, const void *, int),
                         const void *arg, int field) {
  cleanup_free char *text = read_regular_file(path);
  char *line = text;
  while (line != NULL && *line != '\0') {
    char *next = strchr(line, '\n');
    char *value;
    if (next != NULL)
      *next++ = '\0';
    value = match(line, arg, field);
    if (value != NULL)
      return value;
    line = next;
  }
  return NULL;
}

char *passwd_field_of(const char *path, uid_t uid, int field) {
  return first_match(path, field_if_uid, &uid, field);
}

char *passwd_field_of_name(const char *path, const char *name, int field) {
  if (name[0] == '\0')
    return NULL;
  return first_match(path, field_if_name, name, field);
}

char *passwd_home_env(const oci_strv *env, uid_t uid) {
  cleanup_free char *home = NULL;
  for (size_t i = 0; env != NULL && i < env->len; i++)
    if (strncmp(env->items[i], "HOME=", 5) == 0)
      return NULL;
  home = passwd_field_of("/etc/passwd", uid, PASSWD_HOME);
  return xasprintf("HOME=%s", home != NULL && home[0] != '\0' ? home : "/");
}
