/* Helpers of oci.h shared by the model and its users: strv, map, reading a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "oci.h"

void oci_strv_free(oci_strv *v) {
  if (v == NULL)
    return;
  for (size_t i = 0; v->items && i < v->len; i++)
    free(v->items[i]);
  free(v->items);
  v->items = NULL;
  v->len = 0;
}

void oci_strv_push(oci_strv *v, const char *s) {
  char **items = realloc(v->items, sizeof(char *) * (v->len + 2));
  char *copy = strdup(s);
  if (items == NULL || copy == NULL)
    abort();
  items[v->len++] = copy;
  items[v->len] = NULL;
  v->items = items;
}

const char *oci_map_get(const oci_map *m, const char *key) {
  if (m == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < m->len; i++)
    if (strcmp(m->keys[i], key) == 0)
      return m->values[i];
  return NULL;
}

int oci_map_set(oci_map *m, const char *key, const char *value) {
  if (m == NULL || key == NULL || value == NULL)
    return -EINVAL;
  char *v = strdup(value);
  if (v == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < m->len; i++)
    if (strcmp(m->keys[i], key) == 0) {
      free(m->values[i]);
      m->values[i] = v;
      return 0;
    }
  char *k = strdup(key);
  char **keys = k ? realloc(m->keys, (m->len + 1) * sizeof(char *)) : NULL;
  if (keys != NULL)
    m->keys = keys;
  char **values = keys ? realloc(m->values, (m->len + 1) * sizeof(char *)) : NULL;
  if (values == NULL) {
    free(k);
    free(v);
    return -ENOMEM;
  }
  m->values = values;
  m->keys[m->len] = k;
  m->values[m->len] = v;
  m->len++;
  return 0;
}

int oci_map_copy(oci_map *dst, const oci_map *src) {
  oci_map copy = {0};
  bool ok;
  if (dst == NULL || src == NULL || dst->len != 0)
    return -EINVAL;
  if (src->len == 0)
    return 0;
  copy.keys = calloc(src->len, sizeof(char *));
  copy.values = calloc(src->len, sizeof(char *));
  ok = copy.keys != NULL && copy.values != NULL;
  for (size_t i = 0; ok && i < src->len; i++) {
    copy.keys[i] = strdup(src->keys[i]);
    copy.values[i] = strdup(src->values[i]);
    copy.len = i + 1; /* counted first, so that free releases a half-made pair */
    ok = copy.keys[i] != NULL && copy.values[i] != NULL;
  }
  if (!ok) {
    oci_map_free(&copy);
    return -ENOMEM;
  }
  *dst = copy;
  return 0;
}

void oci_map_free(oci_map *m) {
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->len; i++) {
    free(m->keys[i]);
    free(m->values[i]);
  }
  free(m->keys);
  free(m->values);
  m->keys = m->values = NULL;
  m->len = 0;
}

static int read_fail(char **err, const char *path, int errnum, const char *what) {
  if (asprintf(err, "%s: %s%s%s", path, what ? what : "", what ? ": " : "", strerror(errnum)) < 0)
    *err = NULL;
  return -1;
}

int oci_read_file(const char *path, char **out, size_t *len, char **err) {
  *out = NULL;
  *len = 0;
  *err = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return read_fail(err, path, errno, "open");
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int e = errno;
    close(fd);
    return read_fail(err, path, e, "stat");
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return read_fail(err, path, EISDIR, NULL);
  }
  /* pipes and /dev/stdin have no size: read until EOF, up to the limit */
  size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= JSON_MAX_SIZE
                   ? (size_t)st.st_size + 2
                   : 65536;
  char *buf = malloc(cap);
  size_t n = 0;
  while (buf != NULL) {
    if (n + 1 >= cap) {
      if (n > JSON_MAX_SIZE) {
        free(buf);
        close(fd);
        if (asprintf(err, "%s: file larger than %u bytes", path, JSON_MAX_SIZE) < 0)
          *err = NULL;
        return -1;
      }
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      close(fd);
      return read_fail(err, path, e, "read");
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  if (buf == NULL)
    return read_fail(err, path, ENOMEM, "read");
  if (n > JSON_MAX_SIZE) {
    free(buf);
    if (asprintf(err, "%s: file larger than %u bytes", path, JSON_MAX_SIZE) < 0)
      *err = NULL;
    return -1;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}
