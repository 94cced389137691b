/* Global options every command receives (from the CLI's global flags). */
#ifndef FSRUN_CONTEXT_H
#define FSRUN_CONTEXT_H

#include <stdbool.h>

typedef enum { ROOTLESS_AUTO = 0, ROOTLESS_TRUE, ROOTLESS_FALSE } fsrun_rootless_mode;

struct fsrun_context {
  const char *state_root; /* --root, or /run/fsrun (root) / $XDG_RUNTIME_DIR/fsrun (not root) */
  const char *log_path;   /* --log, may be NULL */
  const char *log_format; /* "text" | "json" */
  bool debug;
  bool systemd_cgroup;
  fsrun_rootless_mode rootless;
};

#endif
