/* The host's system directories, bound read-only. On a merged-/usr host /bin, /sbin and /lib* are
 * links into /usr: the sandbox makes the same links in its root (a mount fewer each, as bwrap's
 * --symlink) rather than binding the directory each leads to there. */
#include "sandbox-system-dirs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

static const char *const bound_system_dirs[] = {"/usr",   "/bin",   "/sbin",   "/lib",
                                                "/lib32", "/lib64", "/libx32", NULL};

/* dir's link into the bound /usr (`usr/bin`), into target; false where dir is no such link */
static bool usr_link(const char *dir, char target[ROOT_LINK_TARGET_MAX]) {
  struct stat st;
  ssize_t n = readlink(dir, target, ROOT_LINK_TARGET_MAX - 1);
  if (n <= 0)
    return false;
  target[n] = '\0';
  /* the link must lead to a directory of /usr's, which the sandbox binds whole */
  return strncmp(target, "usr/", 4) == 0 && root_link_target_ok(target) && stat(dir, &st) == 0 &&
         S_ISDIR(st.st_mode);
}

static void push_link(struct root_links *links, const char *name, const char *target) {
  struct root_link *k = &links->items[links->n++];
  snprintf(k->name, sizeof(k->name), "%s", name);
  snprintf(k->target, sizeof(k->target), "%s", target);
}

void sandbox_system_dirs(struct mount_list *l, const char *const *ro_bind,
                         struct root_links *links) {
  struct stat st;
  bool have_usr = false;
  links->n = 0;
  for (const char *const *d = bound_system_dirs; *d; d++) {
    char target[ROOT_LINK_TARGET_MAX];
    if (have_usr && links->n < ROOT_LINKS_MAX && usr_link(*d, target)) {
      push_link(links, *d + 1, target);
      continue;
    }
    if (stat(*d, &st) < 0)
      continue;
    add_mount(l, *d, "bind", *d, ro_bind);
    have_usr = have_usr || strcmp(*d, "/usr") == 0;
  }
}

static bool mount_at_or_below(const struct mount_list *l, const char *dir) {
  for (size_t i = 0; i < l->len; i++)
    if (path_within(l->items[i].destination, dir))
      return true;
  return false;
}

/* a policy path `/` is bound over the root tmpfs the links would be made in */
static bool root_rebound(const struct mount_list *l) {
  size_t roots = 0;
  for (size_t i = 0; i < l->len; i++)
    roots += strcmp(l->items[i].destination, "/") == 0;
  return roots > 1;
}

void sandbox_system_links_settle(struct mount_list *l, const char *const *ro_bind,
                                 struct root_links *links) {
  bool rebound = root_rebound(l);
  size_t kept = 0;
  for (size_t i = 0; i < links->n; i++) {
    char dir[ROOT_LINK_NAME_MAX + 1];
    snprintf(dir, sizeof(dir), "/%s", links->items[i].name);
    if (rebound || mount_at_or_below(l, dir))
      add_mount(l, dir, "bind", dir, ro_bind);
    else
      links->items[kept++] = links->items[i];
  }
  links->n = kept;
}

int sandbox_system_links_annotate(const struct root_links *links, oci_map *annotations) {
  char value[ROOT_LINKS_MAX * (ROOT_LINK_NAME_MAX + ROOT_LINK_TARGET_MAX + 1)];
  size_t len = 0;
  if (links->n == 0)
    return 0;
  for (size_t i = 0; i < links->n; i++)
    len += (size_t)snprintf(value + len, sizeof(value) - len, "%s%s=%s", i ? "," : "",
                            links->items[i].name, links->items[i].target);
  return oci_map_set(annotations, ROOT_LINKS_ANNOTATION, value);
}
