/* The tiny init (src/tiny-init/tiny-init.c) that a container's pid 1 becomes when fsrun's init is
 * asked for (reaper.h): a program without a C library, embedded in fsrun and exec'd from a sealed
 * memfd, so that pid 1 holds neither the runtime's memory (the caller's environment, the config)
 * nor the runtime's executable for the process's lifetime. docs/process-model.md. */
#ifndef FSRUN_TINY_INIT_H
#define FSRUN_TINY_INIT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The image (generated at build time from src/tiny-init; absent on other architectures). */
extern const unsigned char tiny_init_image[];
extern const size_t tiny_init_image_size;

/* A memfd holding the image, sealed against writes, growth, shrinking and further seals, and
 * CLOEXEC; made once per process and kept. -1 when this build or host cannot run it (another
 * architecture, memfds that may not be executed, valgrind), or FSRUN_NO_TINY is set (the tests of
 * that path). */
int tiny_init_image_fd(void);

/* Replaces the calling init with the tiny init from image_fd, which forks the process (`exe` with
 * argv and envp, in its own process group, the terminal's foreground group when `terminal`, with
 * child_mask as its signal mask), forwards signals to it, reaps, and exits with its status after
 * sending its wait status on status_fd (>= 0) as a SYNC_EXIT_STATUS message. With child > 0 the
 * process was forked already (reaper.c: it holds the exec fifo and waits for a SIGCONT): the tiny
 * init sends it that once it is dumpable, instead of forking. Every signal must be blocked.
 * Returns only when the exec failed (errno set). */
void tiny_init_exec(int image_fd, const char *exe, char *const argv[], char *const envp[],
                    const sigset_t *child_mask, bool terminal, int status_fd, pid_t child);

#endif
