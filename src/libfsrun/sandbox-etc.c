/* The sandbox's /etc. The caller's uid is kept inside and capabilities are dropped, so the modes of
 * the host's files decide what the command reads: for an ordinary user the host's /etc is bound
 * read-only as it is. Root owns the root-only files (a mode 0600 /etc/docker/key.json, TLS keys
 * under /etc/ssl/private), and owner permissions need no capability: as root, /etc holds only what
 * programs need, and within the directories among them, only what is world-readable.
 * `fsrun sandbox` binds the shared bundle's view of those entries (sandbox-etc-view.c: the
 * regular files copied, the directories copies of what in them is world-readable,
 * sandbox-etc-tree.c; the rest, and a directory past a copy's bounds, bound over its mount point,
 * the directory's entries that are not world-readable covered at any depth, sandbox-etc-walk.c); a
 * bundle (`fsrun bundle`), or a run whose view cannot be made, gets a tmpfs with each entry bound
 * read-only from the host and its directories covered so. */
#include "sandbox-etc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "sandbox-etc-covers.h"
#include "sandbox-etc-view.h"
#include "sandbox-etc-walk.h"
#include "sandbox.h"
#include "utils.h"

/* users and groups, name resolution, the dynamic linker, certificates, time, locale, shells and
 * the configuration git, npm and pnpm read */
static const char *const etc_entries[] = {"passwd",
                                          "group",
                                          "hosts",
                                          "hostname",
                                          "resolv.conf",
                                          "nsswitch.conf",
                                          "host.conf",
                                          "gai.conf",
                                          "networks",
                                          "protocols",
                                          "services",
                                          "rpc",
                                          "ethertypes",
                                          "ld.so.cache",
                                          "ld.so.conf",
                                          "ld.so.conf.d",
                                          "ssl",
                                          "ca-certificates",
                                          "ca-certificates.conf",
                                          "pki",
                                          "alternatives",
                                          "localtime",
                                          "timezone",
                                          "locale.alias",
                                          "locale.conf",
                                          "default",
                                          "os-release",
                                          "debian_version",
                                          "lsb-release",
                                          "shells",
                                          "environment",
                                          "profile",
                                          "profile.d",
                                          "bash.bashrc",
                                          "inputrc",
                                          "terminfo",
                                          "mime.types",
                                          "magic",
                                          "magic.mime",
                                          "mailcap",
                                          "gitconfig",
                                          "npmrc",
                                          "login.defs",
                                          "xdg",
                                          "fonts",
                                          NULL};

static bool world_readable(const struct stat *st) {
  return etc_world_readable(st->st_mode);
}

static const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};

#define N_ETC_ENTRIES (sizeof(etc_entries) / sizeof(etc_entries[0]) - 1)

/* What the view holds for an entry whose stat (links followed) is st, found or not. resolv.conf
 * is always bound over a mount point: an egress run binds its own there (the view is shared). */
static enum etc_view_kind view_kind(const char *name, bool found, const struct stat *st) {
  if (strcmp(name, "resolv.conf") == 0)
    return found ? ETC_VIEW_FILE : ETC_VIEW_ABSENT;
  if (!found || !world_readable(st))
    return ETC_VIEW_ABSENT;
  if (S_ISDIR(st->st_mode))
    return ETC_VIEW_TREE;
  if (S_ISREG(st->st_mode) && st->st_size <= ETC_VIEW_COPY_MAX)
    return ETC_VIEW_COPY;
  return ETC_VIEW_FILE;
}

/* root's /etc as the view in the bundle (one read-only bind), each entry that is not a copy bound
 * over its mount point; -1 when the view cannot be made */
static int etc_view_mounts(const char *bundle, bool own_resolv_conf, struct mount_list *l,
                           bool *has_resolv_conf) {
  struct etc_view_entry e[N_ETC_ENTRIES];
  cleanup_close int bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int etc_fd = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (bundle_fd < 0 || etc_fd < 0)
    return -1;
  for (size_t i = 0; i < N_ETC_ENTRIES; i++) {
    e[i].name = etc_entries[i];
    /* what a symlink leads to is what is there; a dangling one is left out */
    bool found = fstatat(etc_fd, e[i].name, &e[i].st, 0) == 0;
    e[i].kind = view_kind(e[i].name, found, &e[i].st);
    e[i].bound = false;
  }
  if (etc_view_sync(bundle_fd, etc_fd, e, N_ETC_ENTRIES) < 0)
    return -1;
  add_mount(l, "/etc", "bind", ETC_VIEW_NAME, ro_bind);
  struct etc_covers covers;
  etc_covers_begin(bundle_fd, &covers);
  struct etc_walk walk = {.covers = &covers, .l = l, .names_left = ETC_WALK_NAMES_MAX};
  for (size_t i = 0; i < N_ETC_ENTRIES; i++) {
    cleanup_free char *path = xasprintf("/etc/%s", e[i].name);
    /* a directory copied needs no bind */
    bool dir = e[i].kind == ETC_VIEW_DIR || (e[i].kind == ETC_VIEW_TREE && e[i].bound);
    if (!dir && e[i].kind != ETC_VIEW_FILE)
      continue;
    /* the mount point of resolv.conf stays as it is (empty, mode 0) where the host's is not
     * world-readable */
    bool resolv_conf = strcmp(e[i].name, "resolv.conf") == 0;
    *has_resolv_conf = *has_resolv_conf || resolv_conf;
    if (resolv_conf && (own_resolv_conf || !world_readable(&e[i].st)))
      continue;
    add_mount(l, path, "bind", path, ro_bind);
    if (dir)
      etc_walk_covers(&walk, etc_fd, e[i].name);
  }
  etc_covers_end(bundle_fd, &covers);
  return 0;
}

bool sandbox_etc_mounts(bool userns, bool own_resolv_conf, const char *view_bundle,
                        struct mount_list *l) {
  struct stat st;
  bool has_resolv_conf = false;
  if (userns) {
    /* recursive: a bind of /etc with a mount below it fails in a user namespace (sandbox.c) */
    add_mount(l, "/etc", "bind", "/etc",
              (const char *const[]){"rbind", "rro", "rnosuid", "rnodev", NULL});
    return stat("/etc/resolv.conf", &st) == 0;
  }
  if (view_bundle != NULL) {
    if (etc_view_mounts(view_bundle, own_resolv_conf, l, &has_resolv_conf) == 0)
      return has_resolv_conf;
    log_debug("sandbox: /etc: the view in `%s` cannot be made (%s): a tmpfs instead", view_bundle,
              strerror(errno));
  }
  cleanup_close int etc_fd = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct etc_walk walk = {.covers = NULL, .l = l, .names_left = ETC_WALK_NAMES_MAX};
  /* read-only once its entries are bound (linux.readonlyPaths, sandbox_etc_readonly) */
  add_mount(l, "/etc", "tmpfs", "tmpfs",
            (const char *const[]){"nosuid", "nodev", "noexec", "mode=755", "size=64k", NULL});
  for (const char *const *e = etc_entries; *e; e++) {
    cleanup_free char *path = xasprintf("/etc/%s", *e);
    if (own_resolv_conf && strcmp(*e, "resolv.conf") == 0)
      continue;
    /* what a symlink leads to is what is bound; a dangling one is left out */
    if (stat(path, &st) < 0 || !world_readable(&st))
      continue;
    add_mount(l, path, "bind", path, ro_bind);
    if (S_ISDIR(st.st_mode))
      etc_walk_covers(&walk, etc_fd, *e);
  }
  return stat("/etc/resolv.conf", &st) == 0;
}
