/* The protected image of the runtime binary, made with system calls alone, also before the C
 * library has started (sealed-image.c; docs/process-model.md "The binary"). sealed-exe.h is the
 * interface the commands use. */
#ifndef FSRUN_SEALED_IMAGE_H
#define FSRUN_SEALED_IMAGE_H

#include <stdbool.h>

/* Whether the command line names a command whose clones a container can see while they run the
 * runtime's code: create, run, exec, and sandbox when with_sandbox. */
bool sealed_exe_wanted(int argc, char **argv, bool with_sandbox);

enum sealed_image_kind {
  SEALED_NONE,
  SEALED_MEMFD,   /* a memfd sealed against writing, growing, shrinking and further sealing */
  SEALED_OVERLAY, /* a file on a read-only overlayfs: protected only if mounted nowhere */
};
enum sealed_image_kind sealed_image_kind(int fd);

/* Re-executes argv and envp from a protected image of exe_fd (the running binary): as root the
 * file through a read-only overlay that is mounted nowhere, else (or when that fails) a sealed
 * memfd copy. Returns only on failure: -errno, *step naming what failed. */
int sealed_exe_exec(int exe_fd, char **argv, char **envp, const char **step);

/* fsrun_entry's, before the C library starts: sealed_exe_exec for a command sealed_exe_wanted
 * (sandbox only in a build without the tiny init),
 * unless the binary is a protected image already. Returns when it did nothing or failed
 * (sealed_exe_ensure does it again then, and reports). sp: the initial stack (argc, argv, NULL,
 * envp, NULL, auxv). */
void sealed_exe_early(long *sp);

/* Closes a and b (-1: none), fds of mounts that are attached nowhere (fsmount), handing them to the
 * kernel's collector of unix-socket cycles: the mounts are dissolved by a kernel worker, whose
 * expedited RCU grace period the caller then does not wait for. Falls back to close(2). System
 * calls only: callable before and after libc starts. */
void sealed_close_mounts_later(int a, int b);

#endif
