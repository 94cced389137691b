/* A file the caller names for fsrun to write a result to (exec --status-json, delete
 * --tamper-json). fsrun may run as root and the directory may be one a container's command can
 * write (docs/fsrun-exec.8, "--status-json"): a symbolic link or a second hard link left at the
 * name would send fsrun's write into another file, a FIFO would block it, a device would act. */
#ifndef FSRUN_CALLER_OUTPUT_H
#define FSRUN_CALLER_OUTPUT_H

#include "error.h"

/* Opens path for writing: a new file (0644 less the umask), or an existing regular file with no
 * other hard link, truncated. A symbolic link at its last component, a FIFO, a device, a directory
 * or a file with more links is refused, untouched: "OPTION PATH: ..." in err. Returns the fd. */
int caller_output_open(const char *option, const char *path, fsrun_error_t *err);

#endif
