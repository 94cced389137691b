/* Landlock: unprivileged, path- and port-based access control for the container process.
 *
 * Two ways in:
 *  - the annotation `run.fsrun.landlock` of config.json, whose value is JSON
 *      {"readOnly": [paths], "readWrite": [paths], "tcpConnect": [ports], "tcpBind": [ports],
 *       "strict": bool}
 *    (paths inside the container, see docs/landlock.md);
 *  - a struct fsrun_landlock_rules filled by code (the Fusion sandbox), without the annotation.
 *
 * Where it goes, in the container init and in `exec` (whose process is not a child of the init and
 * so does not inherit the init's Landlock domain):
 *  1. runtime, before clone: landlock_rules_from_config(): parse, validate, strict kernel check;
 *  2. child, late: landlock_apply(), after user+caps and no_new_privs AND after every open(2) the
 *     init still makes (the exec fifo, /proc/self/fd, log files): right before seccomp and execve.
 *
 * After landlock_apply() the process can only open what the rules grant, so anything the init opens
 * by path afterwards fails with EACCES: for example reopening the exec fifo through
 * /proc/self/fd/N, which Landlock checks against the fifo's real path in the state directory.
 * File descriptors that are already open keep working.
 *
 * landlock_restrict_self(2) needs no_new_privs or CAP_SYS_ADMIN in the caller's user namespace.
 * fsrun does NOT silently turn no_new_privs on for the annotation (that would change what setuid
 * programs do in the container): landlock_rules_from_config() refuses a config whose process has
 * neither `noNewPrivileges: true` nor CAP_SYS_ADMIN in its effective set. Code that wants
 * no_new_privs set for it (the Fusion sandbox) sets rules->set_no_new_privs. */
#ifndef FSRUN_LANDLOCK_H
#define FSRUN_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "oci.h"

#define LANDLOCK_ANNOTATION "run.fsrun.landlock"

struct fsrun_landlock_rules {
  /* Filesystem. With restrict_fs, every filesystem access the kernel's Landlock ABI can control is
   * denied except: read + execute (+ list for directories) beneath read_only paths, and everything
   * beneath read_write paths. Without restrict_fs the filesystem is not restricted at all. */
  bool restrict_fs;
  char **read_only;
  size_t n_read_only;
  char **read_write;
  size_t n_read_write;

  /* TCP (Landlock ABI >= 4). With restrict_tcp_connect, connect(2) on TCP sockets is denied except
   * to the listed ports (an empty list denies every TCP connect); same for bind(2) with
   * restrict_tcp_bind. UDP and other protocols are not affected. */
  bool restrict_tcp_connect;
  uint16_t *tcp_connect;
  size_t n_tcp_connect;
  bool restrict_tcp_bind;
  uint16_t *tcp_bind;
  size_t n_tcp_bind;

  /* false: a kernel without Landlock, or without a right these rules need, is a logged downgrade
   * (log_warning) and whatever the kernel supports is still enforced. true: an error. A listed path
   * that does not exist is a warning (skipped) or, with strict, an error. */
  bool strict;

  /* Set PR_SET_NO_NEW_PRIVS before restricting (the Fusion sandbox wants it anyway). */
  bool set_no_new_privs;

  /* A domain of its own even when nothing above is restricted (it then handles only the making of
   * block devices, which a process without CAP_MKNOD cannot do anyway): a process in it cannot
   * ptrace, or open /proc/PID/mem of, a process outside it, such as the container's init (a task
   * container's exec: exec-leftovers.h). Nothing on a kernel without Landlock, without a warning:
   * the caller asks landlock_abi_version(). */
  bool isolate;

  /* Prefix for messages: `annotations["run.fsrun.landlock"]` for the annotation; owned. */
  char *origin;
};

/* The Landlock ABI version of the running kernel (1, 2, ...), or 0 when Landlock is not compiled in
 * or disabled at boot. */
int landlock_abi_version(void);
/* The first ABI that restricts TCP connect and bind (Linux 6.7; Debian 12's 6.1 has ABI 2). */
#define LANDLOCK_TCP_ABI 4

/* An empty rule set (nothing restricted) with the given origin for messages (copied; may be NULL).
 */
struct fsrun_landlock_rules *landlock_rules_new(const char *origin);
/* Appends a path (absolute, copied) to read_only or read_write and sets restrict_fs. */
void landlock_rules_add_path(struct fsrun_landlock_rules *r, const char *path, bool writable);
/* Appends a TCP port to tcp_connect (bind=false) or tcp_bind and sets the matching restrict_ flag.
 */
void landlock_rules_add_port(struct fsrun_landlock_rules *r, uint16_t port, bool bind);
void landlock_rules_free(struct fsrun_landlock_rules *r);
#define cleanup_landlock_rules __attribute__((cleanup(landlock_rules_freep)))
void landlock_rules_freep(struct fsrun_landlock_rules **r);

/* Parses the annotation's JSON value. Errors name the field:
 * `annotations["run.fsrun.landlock"].readOnly[1]: expected an absolute path`. Unknown keys are
 * errors (a misspelt "readwrite" must never silently allow or deny something else). A key that is
 * present turns on its restriction: "tcpConnect": [] denies every TCP connect; "readOnly": [] alone
 * denies every filesystem access. */
int landlock_parse_annotation(const char *json, struct fsrun_landlock_rules **out,
                              fsrun_error_t *err);

/* Runtime side, before clone: *out = the parsed annotation of c, or NULL when c has none. Also
 * checks that the process may restrict itself (process.noNewPrivileges or CAP_SYS_ADMIN in
 * process.capabilities.effective) and, for strict rules, that the kernel supports everything the
 * rules need, so that such errors come before anything is created. */
int landlock_rules_from_config(const oci_config *c, struct fsrun_landlock_rules **out,
                               fsrun_error_t *err);

/* Strict check only: an error when the rules are strict and this kernel cannot enforce all of them;
 * 0 otherwise (non-strict rules always pass; their downgrades are logged by landlock_apply). */
int landlock_check_kernel(const struct fsrun_landlock_rules *r, fsrun_error_t *err);

/* Child side: builds the ruleset for the running kernel's ABI, opens each path (O_PATH, resolved
 * under the current root without following magic links), adds the rules and restricts the calling
 * thread (and everything it later execs or forks). r may be NULL (nothing to do). Allocates nothing
 * on success. */
int landlock_apply(const struct fsrun_landlock_rules *r, fsrun_error_t *err);

#endif
