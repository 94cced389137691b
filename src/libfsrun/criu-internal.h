/* Shared by criu.c, criu-checkpoint.c and criu-restore.c. */
#ifndef FSRUN_CRIU_INTERNAL_H
#define FSRUN_CRIU_INTERNAL_H

#include <stddef.h>

#include "criu.h"
#include "oci.h"

/* criu's argument vector, NULL-terminated */
struct criu_argv {
  char **v;
  size_t n, cap;
};
void criu_argv_add(struct criu_argv *a, const char *s);
void criu_argv_addf(struct criu_argv *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void criu_argv_free(struct criu_argv *a);

/* The criu binary on PATH, checked with `criu check` (one line naming why it cannot run:
 * "CRIU cannot run on this kernel: ..."). what names the command in messages. */
char *criu_find_usable(const char *state_root, const char *what, fsrun_error_t *err);
/* criu ACTION --images-dir --work-dir --log-file, plus the shared flags of o. */
void criu_argv_common(struct criu_argv *a, const char *criu, const char *action,
                      const char *image_dir, const char *work_dir, const struct criu_opts *o);
/* Refuses what criu cannot take from this config: a terminal, joined namespaces, no root. */
int criu_check_config(const oci_config *config, const char *what, fsrun_error_t *err);
/* A dump or restore of a container with its own network namespace needs iptables-restore (criu
 * locks the network with it): else a one-line error. */
int criu_check_network_lock(const oci_config *config, const char *what, fsrun_error_t *err);

/* DIR made (0700, with its parents) when missing, returned absolute; errors name the option. */
char *criu_prepare_dir(const char *what, const char *option, const char *dir, fsrun_error_t *err);

/* Runs criu (before_exec, when not NULL, runs in the child first; a failure there exits 1). A
 * failure is "WHAT: criu ACTION failed: <the log's last error> (log: WORK/ACTION.log)". */
int criu_run(const struct criu_argv *a, const char *what, const char *work_dir, const char *action,
             int (*before_exec)(void *data), void *data, fsrun_error_t *err);

/* The stdio descriptions the checkpoint saves beside the images (restore re-attaches its own
 * stdio to the process's pipes with criu's --inherit-fd). */
#define CRIU_STDIO_FILE "fsrun-stdio"

#endif
