/* Global options every command receives (from the CLI's global flags). */
#ifndef FSRUN_CONTEXT_H
#define FSRUN_CONTEXT_H

#include <stdbool.h>
#include <time.h>

typedef enum { ROOTLESS_AUTO = 0, ROOTLESS_TRUE, ROOTLESS_FALSE } fsrun_rootless_mode;

struct fsrun_context {
  const char *state_root; /* --root, or /run/fsrun (root) / $XDG_RUNTIME_DIR/fsrun (not root) */
  /* state_root as main checked it (state-root.h), held so that status.c reaches it by fd: a
   * parent renamed since cannot swap another in. Not held: missing at the start, or a copy of
   * the context for another root (the probe's). */
  bool state_root_held;
  int state_root_fd;
  const char *log_path;   /* --log, may be NULL */
  const char *log_format; /* "text" | "json" */
  bool debug;
  bool systemd_cgroup;
  fsrun_rootless_mode rootless;
  /* CLOCK_REALTIME just after this process began (fsrun_entry's read, else main's first): every
   * file time the caller set before it ran us is earlier. `fsrun sandbox`'s tamper cutoff. */
  struct timespec started;
};

#endif
