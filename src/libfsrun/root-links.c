#include "root-links.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mounts.h"
#include "utils.h"

#define WHAT "annotations[\"" ROOT_LINKS_ANNOTATION "\"]"

static bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

/* one path component: plain characters, not `.` or `..` */
static bool plain_component(const char *s, size_t n) {
  if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!plain_char(s[i]))
      return false;
  return true;
}

bool root_link_target_ok(const char *target) {
  size_t len = strlen(target);
  if (len == 0 || len >= ROOT_LINK_TARGET_MAX)
    return false;
  for (const char *p = target;;) {
    size_t n = strcspn(p, "/");
    if (!plain_component(p, n))
      return false;
    if (p[n] == '\0')
      return true;
    p += n + 1;
  }
}

/* one `NAME=TARGET` of n bytes at s */
static int parse_link(const char *s, size_t n, const struct root_links *seen, struct root_link *out,
                      fsrun_error_t *err) {
  const char *eq = memchr(s, '=', n);
  size_t name_len = eq ? (size_t)(eq - s) : 0, target_len = eq ? n - name_len - 1 : 0;
  if (eq == NULL || name_len >= ROOT_LINK_NAME_MAX || !plain_component(s, name_len) ||
      target_len >= ROOT_LINK_TARGET_MAX)
    return fsrun_error_make(err, 0, WHAT ": `%.*s` is not NAME=TARGET (NAME one component)", (int)n,
                            s);
  memcpy(out->name, s, name_len);
  out->name[name_len] = '\0';
  memcpy(out->target, eq + 1, target_len);
  out->target[target_len] = '\0';
  if (!root_link_target_ok(out->target))
    return fsrun_error_make(
        err, 0, WHAT ": `%s`: the target must be a relative path of plain components", out->target);
  for (size_t i = 0; i < seen->n; i++)
    if (strcmp(seen->items[i].name, out->name) == 0)
      return fsrun_error_make(err, 0, WHAT ": `%s` is named twice", out->name);
  return 0;
}

static int parse_links(const char *value, struct root_links *out, fsrun_error_t *err) {
  for (const char *p = value;;) {
    size_t n = strcspn(p, ",");
    if (out->n == ROOT_LINKS_MAX)
      return fsrun_error_make(err, 0, WHAT ": more than %d links", ROOT_LINKS_MAX);
    if (parse_link(p, n, out, &out->items[out->n], err) < 0)
      return fsrun_error_code(err);
    out->n++;
    if (p[n] == '\0')
      return 0;
    p += n + 1;
  }
}

static bool is_root_tmpfs(const oci_mount *m, const char *dest) {
  return strcmp(dest, "/") == 0 && m->type != NULL && strcmp(m->type, "tmpfs") == 0 &&
         !mount_entry_is_bind(m);
}

/* The links land in the config's one tmpfs onto "/", and no mount at or below one. */
static int check_mounts(const oci_config *c, const struct root_links *links, fsrun_error_t *err) {
  size_t roots = 0, tmpfs_roots = 0;
  for (size_t i = 0; i < c->n_mounts; i++) {
    cleanup_free char *dest =
        c->mounts[i].destination ? path_clean_abs(c->mounts[i].destination) : NULL;
    if (dest == NULL)
      continue;
    roots += strcmp(dest, "/") == 0;
    tmpfs_roots += is_root_tmpfs(&c->mounts[i], dest);
    for (size_t k = 0; k < links->n; k++) {
      size_t n = strlen(links->items[k].name);
      if (strncmp(dest + 1, links->items[k].name, n) == 0 &&
          (dest[n + 1] == '\0' || dest[n + 1] == '/'))
        return fsrun_error_make(err, 0, WHAT ": mounts[%zu] `%s` is at or below the link `/%s`", i,
                                dest, links->items[k].name);
    }
  }
  if (roots != 1 || tmpfs_roots != 1)
    return fsrun_error_make(err, 0,
                            WHAT ": the links are made only in a tmpfs the config mounts onto `/` "
                                 "(one mounts entry onto `/`, of type tmpfs)");
  return 0;
}

int root_links_from_config(const oci_config *c, struct root_links *out, fsrun_error_t *err) {
  const char *value = oci_map_get(&c->annotations, ROOT_LINKS_ANNOTATION);
  out->n = 0;
  if (value == NULL)
    return 0;
  if (parse_links(value, out, err) < 0)
    return fsrun_error_code(err);
  return check_mounts(c, out, err);
}

int root_links_make(const oci_config *c, int root_fd, fsrun_error_t *err) {
  struct root_links links;
  if (root_links_from_config(c, &links, err) < 0)
    return fsrun_error_code(err);
  for (size_t i = 0; i < links.n; i++)
    if (symlinkat(links.items[i].target, root_fd, links.items[i].name) < 0)
      return fsrun_error_errno(err, WHAT ": make `/%s`", links.items[i].name);
  return 0;
}
