/* What the container's init hands the tiny init (src/tiny-init/tiny-init.c) that it becomes: one
 * block in a memfd, read by the tiny init with a single mmap. Shared by both programs, so it uses
 * fixed-size fields only (the tiny init has no C library). */
#ifndef FSRUN_TINY_INIT_PARAMS_H
#define FSRUN_TINY_INIT_PARAMS_H

#include <stdint.h>

#define TINY_INIT_MAGIC   0x49525346u /* "FSRI" */
#define TINY_INIT_VERSION 1u

/* The block: this header, then argc + 1 + envc + 1 offsets (uint64_t, from the start of the
 * block; 0 ends each list), then the NUL-terminated strings they point to. The tiny init turns
 * the offsets into pointers in place (a private mapping of the block). */
struct tiny_init_params {
  uint32_t magic;
  uint32_t version;
  int32_t status_fd;        /* where the process's wait status goes as the init exits, or -1 */
  uint32_t status_msg_type; /* the sync message that carries it (SYNC_EXIT_STATUS) */
  uint32_t terminal;        /* 1: make the process the terminal's foreground group */
  uint32_t argc;
  uint32_t envc;
  uint32_t reserved;
  uint64_t child_mask; /* the process's signal mask (signal N is bit N-1) */
  uint64_t exe;        /* offset of the executable's path */
  uint64_t ptrs[];     /* argv offsets, 0, envp offsets, 0 */
};

#endif
