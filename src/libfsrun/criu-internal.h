/* Shared by criu.c, criu-checkpoint.c and criu-restore.c. */
#ifndef FSRUN_CRIU_INTERNAL_H
#define FSRUN_CRIU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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
/* `criu check` (FEATURE NULL) or `criu check --feature FEATURE`: NULL when it passes, else why
 * (caller frees). Slow (seconds; a minute under emulation), so its verdict is kept for this boot
 * and this criu binary in .criu-check[-FEATURE]: root's in /run/fsrun, for every state root; an
 * ordinary user's in the state root. */
char *criu_check_verdict(const char *state_root, const char *criu, const char *feature);
/* criu ACTION --images-dir --work-dir --log-file, plus the shared flags of o. */
void criu_argv_common(struct criu_argv *a, const char *criu, const char *action,
                      const char *image_dir, const char *work_dir, const struct criu_opts *o);
/* Refuses what criu cannot take from this config: joined namespaces. */
int criu_check_config(const oci_config *config, const char *what, fsrun_error_t *err);
/* A dump or restore of a container with its own network namespace needs iptables-restore (criu
 * locks the network with it): else a one-line error. */
int criu_check_network_lock(const oci_config *config, const char *what, fsrun_error_t *err);

/* DIR made (0700, with its parents) when missing, returned absolute; errors name the option. */
char *criu_prepare_dir(const char *what, const char *option, const char *dir, fsrun_error_t *err);

/* What criu's process gets besides its argv */
struct criu_child {
  int (*before_exec)(void *data); /* runs in the child first; a failure there exits 1 */
  void *data;
  int pass_fd; /* open in criu across exec and closed in fsrun once criu runs; -1 for none */
};
/* Runs criu (child may be NULL). A failure is "WHAT: criu ACTION failed: <the log's first error>
 * (log: WORK/ACTION.log)". */
int criu_run(const struct criu_argv *a, const char *what, const char *work_dir, const char *action,
             const struct criu_child *child, fsrun_error_t *err);

/* Lazy pages (criu-lazy-pages.c) */
/* The name of criu's socket in its work dir where the lazy-pages daemon takes restore's uffds */
#define CRIU_LAZY_PAGES_SOCKET "lazy-pages.socket"
/* checkpoint's options that go together: --lazy-pages needs --page-server, --status-fd needs
 * --lazy-pages and a descriptor open for writing, no --lazy-pages with --pre-dump */
int criu_check_lazy_checkpoint_opts(const struct criu_checkpoint_opts *o, fsrun_error_t *err);
/* --page-server --address A --port P, --status-fd N */
void criu_argv_page_server(struct criu_argv *a, const struct criu_checkpoint_opts *o);
/* criu can serve and fault in pages lazily here (`criu check --feature uffd-noncoop`) */
int criu_check_lazy_pages(const char *state_root, const char *criu, const char *what,
                          fsrun_error_t *err);
/* restore --lazy-pages: a lazy-pages daemon listens in WORK_DIR (its socket is there) */
int criu_check_lazy_pages_daemon(const char *work_dir, fsrun_error_t *err);

/* The stdio descriptions the checkpoint saves beside the images (restore re-attaches its own
 * stdio to the process's pipes with criu's --inherit-fd). */
#define CRIU_STDIO_FILE "fsrun-stdio"
/* Its line for a descriptor that was the container's pty slave (declared external to criu) */
#define CRIU_STDIO_TTY_PREFIX "tty["

/* The console's mount (the pty's slave), external to the checkpoint of a container with a terminal
 */
#define CRIU_CONSOLE "/dev/console"

/* restore of a container with process.terminal (criu-terminal.c); fds are -1 when unused */
struct criu_terminal {
  int master, slave, console;
  char slave_path[32]; /* /dev/pts/N */
};
/* Without process.terminal nothing. Else a new pty (process.consoleSize, owned by process.user)
 * and, when console_socket is given, a connection to it (before criu runs: a bad socket leaves
 * nothing behind). */
int criu_terminal_open(const oci_config *config, const char *console_socket,
                       struct criu_terminal *t, fsrun_error_t *err);
/* --inherit-fd fd[SLAVE]:KEY, once per key: the new slave stands for the checkpoint's pty */
void criu_terminal_inherit(struct criu_argv *a, const struct criu_terminal *t, const char *key);
/* --ext-mount-map /dev/console:/dev/pts/N: criu binds the new slave on the console */
void criu_terminal_console(struct criu_argv *a, const struct criu_terminal *t);
/* In criu's child: the slave survives exec. -1 on failure. */
int criu_terminal_for_criu(const struct criu_terminal *t);
/* After criu restored the process: the slave closed, the master sent to the console socket (and
 * closed) when there is one; else it stays in t->master for a foreground restore to relay. */
int criu_terminal_hand_over(struct criu_terminal *t, fsrun_error_t *err);
void criu_terminal_clear(struct criu_terminal *t);

/* Restore and the checks a task container's binds carry (criu-restore-binds.c, bind-identity.h) */
struct criu_restore_bind {
  bool checked; /* the bind carries checks, and they held */
  char *source; /* its source's path */
  dev_t dev;    /* the object the path showed when it was checked */
  ino_t ino;
  bool dir;
  char *stage; /* where criu's child binds that object for criu (in the state dir), or NULL */
};
struct criu_restore_binds {
  size_t n; /* the config's mounts */
  struct criu_restore_bind *b;
};
/* Each bind that carries checks checked as create checks it (one line naming mounts[i]): its
 * source the recorded object, its destination through no link; covers refused */
int criu_restore_binds_check(const oci_config *c, const char *bundle, const char *rootfs,
                             struct criu_restore_binds *out, fsrun_error_t *err);
/* an empty directory or file in state_dir (absolute) for each checked source */
int criu_restore_binds_stage(struct criu_restore_binds *b, const char *state_dir,
                             fsrun_error_t *err);
/* In criu's child, in its own mount namespace: each checked source opened again, refused unless it
 * is the object checked, and bound onto its stage. -1 */
int criu_restore_binds_mount(const struct criu_restore_binds *b);
/* the path criu binds mounts[index] from: its stage, or NULL (the config's source) */
const char *criu_restore_binds_source(const struct criu_restore_binds *b, size_t index);
/* the fds closed, the stages removed */
void criu_restore_binds_clear(struct criu_restore_binds *b);

#endif
