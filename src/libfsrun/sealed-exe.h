/* The runtime binary as seen from a container: a protected image (as root the binary through a
 * read-only overlay mounted nowhere, else a sealed memory copy), never the file on disk
 * (CVE-2019-5736). See docs/process-model.md. */
#ifndef FSRUN_SEALED_EXE_H
#define FSRUN_SEALED_EXE_H

#include <stdbool.h>

#include "error.h"

/* Returns 0 when this process already runs from a protected image of fsrun. Otherwise re-executes
 * argv from one: as root the binary opened through a read-only overlay that is mounted nowhere,
 * else /proc/self/exe copied into a memfd sealed against write, grow, shrink and further seals.
 * Does not return on success. Only the commands that start processes in a container
 * (create, run, exec, sandbox) call it, so that every clone they make (the init, the exec child)
 * has the copy as its /proc/PID/exe. */
int sealed_exe_ensure(char **argv, fsrun_error_t *err);

/* Whether this process runs from such an image (false when /proc/self/exe cannot be opened). */
bool sealed_exe_running(void);

#endif
