/* `fsrun exec --status-json FILE`: how the exec'd process ended, machine-readably, for a caller
 * (the Fusion adapter's task container) that must tell `exit 130` from a SIGINT. fsrun's own exit
 * status stays the shell's (128+N), as runc's, for podman and containerd. */
#ifndef FSRUN_EXEC_STATUS_H
#define FSRUN_EXEC_STATUS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

struct fsrun_cgroup;

struct exec_status {
  int fd;              /* the opened FILE; -1: not asked for */
  bool oom_known;      /* the container's memory cgroup counts OOM kills (read before the run) */
  uint64_t oom_before; /* its oom_kill count before the process started */
  char *extra_json;    /* members appended to the object (`,"tamper":[...]`), owned, or NULL */
};

/* Opens (creates, truncates; caller-output.h: no link, FIFO or device) FILE before anything runs,
 * so a bad path fails the exec with "--status-json FILE: ..." and nothing started; reads the OOM
 * counter of cg (may be NULL). */
int exec_status_open(struct exec_status *s, const char *path, const struct fsrun_cgroup *cg,
                     fsrun_error_t *err);

/* The JSON object for a reaped process: {"exitCode":N,"signal":null} or
 * {"exitCode":null,"signal":"SIGNAME"}, then "oomKilled" when known, then extra (members with
 * their leading comma, `,"tamper":[...]`; may be NULL). Caller frees. */
char *exec_status_json(const siginfo_t *info, bool oom_known, bool oom_killed, const char *extra);

/* After the wait: writes exec_status_json into the file in one write (a file left empty means that
 * no status is known: the process could not be reaped, or fsrun was killed). */
int exec_status_write(const struct exec_status *s, const siginfo_t *info,
                      const struct fsrun_cgroup *cg, fsrun_error_t *err);

void exec_status_close(struct exec_status *s);
#define cleanup_exec_status __attribute__((cleanup(exec_status_close)))

#endif
