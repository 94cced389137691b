/* What sandbox.c shares with the other sandbox-*.c files that build parts of the config. */
#ifndef FSRUN_SANDBOX_INTERNAL_H
#define FSRUN_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "oci.h"

struct mount_list {
  oci_mount *items;
  size_t len;
};

void add_mount(struct mount_list *l, const char *dest, const char *type, const char *source,
               const char *const *options);
/* is path equal to or below dir (both clean and absolute)? */
bool path_within(const char *path, const char *dir);

#endif
