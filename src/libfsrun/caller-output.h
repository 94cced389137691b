/* A file the caller names for fsrun to write a result to (exec --status-json, delete
 * --tamper-json) or its log to (--log). fsrun may run as root and the directory may be one a
 * container's command can write (docs/fsrun-exec.8, "--status-json"): a symbolic link or a second
 * hard link left at the name would send fsrun's write into another file, a FIFO would block it, a
 * device would act. The directories and links on the way are walked by fd with the state root's
 * rule (path-walk.h): nobody but the caller and root may change them. */
#ifndef FSRUN_CALLER_OUTPUT_H
#define FSRUN_CALLER_OUTPUT_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* Opens path for writing: a new file (0644 less the umask), or an existing regular file with no
 * other hard link, truncated. A symbolic link at its last component, a FIFO, a device, a directory
 * or a file with more links is refused, untouched, as are parents another user could change and
 * another user's file in a directory others may write: "OPTION PATH: ..." in err. Returns the fd.
 */
int caller_output_open(const char *option, const char *path, fsrun_error_t *err);

/* caller_output_open, but an existing file is kept as it is (the caller truncates it once it has
 * something to write), and *created says whether this open made the file. */
int caller_output_open_kept(const char *option, const char *path, bool *created,
                            fsrun_error_t *err);

/* Removes the file caller_output_open_kept made at path (fd) when nothing was written to it: by
 * the same walk, and only while the last name is still that file (never through a link). */
void caller_output_remove_created(const char *option, const char *path, int fd);

/* caller_output_open, but appended to (a record kept across runs: sandbox --audit-log), and a
 * new file made with mode (less the umask). */
int caller_output_append(const char *option, const char *path, mode_t mode, fsrun_error_t *err);

/* path's directories and the links on the way by the same rule, for a file fsrun writes later by
 * path (--pid-file: a temporary file renamed over the name, runc's shape, so a link at the name
 * is replaced): once nobody but the caller and root can change them, the path keeps naming what
 * was checked. 0 (also when a directory is missing: the write says so), or the one-line refusal
 * "OPTION PATH: reached through ...". */
int caller_output_check_parents(const char *option, const char *path, fsrun_error_t *err);

/* Opens path for appending fsrun's log (--log): a new file (0644 less the umask), an existing
 * regular file with no other hard link, a FIFO or a character device (/dev/null, /dev/stderr). A
 * link is followed when the caller or root owns it (in procfs: by the kernel, the caller's own
 * fds). A directory or a link on the way that another user could change, a file of another user
 * in a directory others may write, anything else at the path: refused, "--log PATH: ...". */
int caller_log_open(const char *path, fsrun_error_t *err);

#endif
