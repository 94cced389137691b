#ifndef FSRUN_REAPER_H
#define FSRUN_REAPER_H

#include <signal.h>
#include <stdbool.h>

#include "error.h"
#include "oci.h"

/* With the annotation run.fsrun.init = "true", the container's pid 1 is a small init of fsrun's
 * and process.args runs as its child (what `docker run --init` does with tini). Pid 1 of a pid
 * namespace ignores every signal it has no handler for, so a shell or node that sets none never
 * ends on SIGTERM, and orphans are pid 1's to reap. The sandbox always asks for it. */
#define REAPER_ANNOTATION "run.fsrun.init"

/* Whether the config asks for the init; a value other than "true" or "false" is an error naming
 * the annotation. */
int reaper_wanted(const oci_config *config, bool *wanted, fsrun_error_t *err);

/* Notes where the runtime's environment strings lie (the kernel puts them one after the other
 * from envp[0]); main calls it first, before anything changes `environ`. reaper_exec wipes them
 * before pid 1 becomes dumpable: /proc/1/environ would otherwise show the container every variable
 * of the runtime's caller, the ones a sandbox policy's envAllowlist kept out too. */
void reaper_note_env_block(char *const envp[]);

/* The container init's last step in place of execve: blocks every signal and starts the process
 * as its child (in a process group of its own, the terminal's foreground group when it has one,
 * with `child_mask` back), which execs `exe`. The init then forwards each signal it receives to
 * the child's process group, reaps every process that ends, and exits with the child's status
 * (128+N when signal N ended it) once the child is gone, after sending the child's wait status
 * (SYNC_EXIT_STATUS) on status_fd when it is >= 0 (CLOEXEC: the child never holds it). A failed
 * exec is reported on stderr (127 for a missing file, 126 otherwise). The init first becomes the
 * tiny init from image_fd (tiny-init.h); only when that exec fails does it stay a clone of the
 * runtime to do the same. `exec_fifo` (CLOEXEC, or -1) closes once the init can be joined by
 * `exec` and the process has exec'd (or died): `start` returns then. Never returns. */
_Noreturn void reaper_exec(const char *exe, char *const argv[], char *const envp[],
                           const sigset_t *child_mask, bool terminal, int status_fd, int image_fd,
                           int exec_fifo);

#endif
