/* Symbolic links at the top of a container's root, made by the runtime (the annotation below). A
 * merged-/usr host's /bin, /sbin, /lib* are links into /usr; the sandbox binds /usr and asks for
 * those links instead of binding each one (bwrap's --symlink): a mount fewer each. OCI has no way
 * to ask for a link, so an annotation does. It grants nothing: the links are made only in a fresh
 * tmpfs the config itself mounts onto "/" (the container's own, gone with its mount namespace),
 * their targets are relative and lead nowhere but into that root, and no mount may land at or
 * below one (a later mount would otherwise be placed through it). */
#ifndef FSRUN_ROOT_LINKS_H
#define FSRUN_ROOT_LINKS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci.h"

/* `NAME=TARGET[,NAME=TARGET...]`: "/NAME" a link to TARGET (`bin=usr/bin`) */
#define ROOT_LINKS_ANNOTATION "run.fsrun.rootfs.symlinks"
#define ROOT_LINKS_MAX        8
#define ROOT_LINK_NAME_MAX    32
#define ROOT_LINK_TARGET_MAX  64

struct root_link {
  char name[ROOT_LINK_NAME_MAX];
  char target[ROOT_LINK_TARGET_MAX];
};

struct root_links {
  size_t n;
  struct root_link items[ROOT_LINKS_MAX];
};

/* The annotation's links (none without it), checked against the config: an error names the
 * annotation and what is wrong. */
int root_links_from_config(const oci_config *c, struct root_links *out, fsrun_error_t *err);

/* Whether target is a link the annotation may carry: relative, plain components, none `.`/`..`. */
bool root_link_target_ok(const char *target);

/* The init, right after the config's tmpfs is mounted onto "/" (root_fd: that new root): the
 * config's links made in it. */
int root_links_make(const oci_config *c, int root_fd, fsrun_error_t *err);

#endif
