/* The sandbox's /etc. The caller's uid is kept inside and capabilities are dropped, so the modes of
 * the host's files decide what the command reads: for an ordinary user the host's /etc is bound
 * read-only as it is. Root owns the root-only files (a mode 0600 /etc/docker/key.json, TLS keys
 * under /etc/ssl/private), and owner permissions need no capability: as root, /etc is a tmpfs
 * holding only what programs need, each entry bound read-only from the host, and within the
 * directories among them, what is not world-readable is covered. */
#include "sandbox-etc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
  return (st->st_mode & S_IROTH) != 0 && (!S_ISDIR(st->st_mode) || (st->st_mode & S_IXOTH) != 0);
}

/* what is not world-readable directly under dir (bound at the same path) is covered */
static void cover_private_entries(const char *dir, struct mount_list *l) {
  static const char *const cover[] = {"bind", "ro", "nosuid", "nodev", "noexec", NULL};
  cleanup_dir DIR *d = opendir(dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    cleanup_free char *path = NULL;
    struct stat st;
    /* a symlink is never covered: no stat for it (/etc/alternatives holds hundreds) */
    if (e->d_type == DT_LNK || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode) ||
        world_readable(&st))
      continue;
    path = xasprintf("%s/%s", dir, e->d_name);
    if (S_ISDIR(st.st_mode))
      add_mount(l, path, "bind", SANDBOX_EMPTY_DIR, cover);
    else if (S_ISREG(st.st_mode))
      add_mount(l, path, "bind", SANDBOX_UNREADABLE_FILE, cover);
  }
}

void sandbox_etc_mounts(bool userns, bool own_resolv_conf, struct mount_list *l) {
  static const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};
  struct stat st;
  if (userns) {
    /* recursive: a bind of /etc with a mount below it fails in a user namespace (sandbox.c) */
    add_mount(l, "/etc", "bind", "/etc",
              (const char *const[]){"rbind", "rro", "rnosuid", "rnodev", NULL});
    return;
  }
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
      cover_private_entries(path, l);
  }
}
