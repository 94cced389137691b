/* sandbox-git.c, sandbox_git_protect_checked (an `fsrun exec`'s read-only binds over its overlay):
 * the binds are those of the common dir held by the fd, named by the path given. Here the path
 * names another directory (as a name swapped after the check would): its hooks and submodules must
 * not decide the binds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-git.h"
#include "sandbox-internal.h"
#include "sandbox.h"
#include "tap.h"
#include "scratch.h"

static void make_file(const char *dir, const char *name) {
  char *path = scratch_join(dir, name);
  FILE *f = fopen(path, "w");
  if (f != NULL)
    fclose(f);
  free(path);
}

static void make_dir(const char *dir, const char *name) {
  char *path = scratch_join(dir, name);
  mkdir(path, 0755);
  free(path);
}

/* the bind whose destination is dir/name, or NULL */
static const oci_mount *bind_at(const struct mount_list *l, const char *dir, const char *name) {
  char *path = scratch_join(dir, name);
  const oci_mount *found = NULL;
  for (size_t i = 0; i < l->len; i++)
    if (strcmp(l->items[i].destination, path) == 0)
      found = &l->items[i];
  free(path);
  return found;
}

static void free_list(struct mount_list *l) {
  for (size_t i = 0; i < l->len; i++) {
    free(l->items[i].destination);
    free(l->items[i].type);
    free(l->items[i].source);
    oci_strv_free(&l->items[i].options);
  }
  free(l->items);
}

int main(void) {
  char tmpl[] = "/tmp/fsrun-test-git-protect-XXXXXX";
  char *base = mkdtemp(tmpl), *checked, *named;
  struct mount_list l = {0};
  const oci_mount *hooks;
  int fd;
  if (base == NULL) {
    tap_ok(false, "mkdtemp");
    return tap_done();
  }
  /* checked: config and hooks/; named: config, no hooks/, a submodule's git dir */
  checked = scratch_join(base, "checked");
  named = scratch_join(base, "named");
  mkdir(checked, 0755);
  mkdir(named, 0755);
  make_file(checked, "config");
  make_dir(checked, "hooks");
  make_file(named, "config");
  make_dir(named, "modules");
  make_dir(named, "modules/sub");
  make_file(named, "modules/sub/HEAD");
  make_file(named, "modules/sub/config");
  fd = open(checked, O_PATH | O_DIRECTORY | O_CLOEXEC);
  sandbox_git_protect_checked(named, fd, &l);
  hooks = bind_at(&l, named, "hooks");
  tap_ok(bind_at(&l, named, "config") != NULL, "the config bound, named by the path given");
  tap_ok(hooks != NULL && strcmp(hooks->source, SANDBOX_EMPTY_DIR) != 0 &&
             strcmp(hooks->source, hooks->destination) == 0,
         "hooks/: the checked dir's (a bind of itself), not the empty one the name's lacks (%s)",
         hooks != NULL ? hooks->source : "no bind");
  tap_ok(bind_at(&l, named, "modules/sub/config") == NULL,
         "no bind of a submodule only the name's directory has");
  tap_ok(l.len == 2, "two binds (%zu)", l.len);
  for (size_t i = 0; i < l.len; i++)
    tap_ok(strncmp(l.items[i].destination, "/proc/", 6) != 0 &&
               strncmp(l.items[i].source, "/proc/", 6) != 0,
           "bind %zu named by the path, not the fd (%s)", i, l.items[i].destination);
  free_list(&l);
  close(fd);
  scratch_remove(base);
  free(checked);
  free(named);
  return tap_done();
}
