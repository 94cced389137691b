/* The state directory ROOT/ID (0700) and the internal state file in it. state.json holds the OCI
 * state fields plus what later commands need (the init's start time against pid reuse, the cgroup,
 * the hooks of start and delete); it is always replaced atomically. The status a command reports
 * is derived from the live system, not trusted from the file. */
#ifndef FSRUN_STATUS_H
#define FSRUN_STATUS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"
#include "oci.h"

#define STATUS_FILE      "state.json"
#define STATUS_EXEC_FIFO "exec.fifo"
/* What the init writes into the exec fifo. First, once `start` has opened it: IN_PLACE (the init
 * execs the process itself: EOF means its execve, or its death) or FORKS (run.fsrun.init: it forks
 * the process, and writes FORKED once the fork succeeded, before its own end closes; EOF without it
 * means the process was never started). Then EOF, once the process has exec'd. */
#define EXEC_FIFO_IN_PLACE '0'
#define EXEC_FIFO_FORKS    'f'
#define EXEC_FIFO_FORKED   'F'
/* the bundle's config.json as `create` read it: `exec` and `update` need the container's config,
 * and the bundle may be changed or removed after create (containerd and podman do both) */
#define STATUS_CONFIG_FILE "config.json"
/* the compiled seccomp program of linux.seccomp (seccomp_serialize), for exec */
#define STATUS_SECCOMP_FILE "seccomp.bpf"
/* The init's identity apart from state.json: a symlink whose target is "xPID START_TIME PID_NS
 * BOOT_ID", the numbers in hex and the boot id without its dashes (at most 59 bytes: ext4 keeps it
 * in the inode); earlier fsrun wrote "PID START_TIME PID_NS BOOT_ID" in decimal (BOOT_ID absent in
 * the oldest), which is still read. Written with state.json whenever that names an init. delete
 * --force finds the init with it when state.json is corrupt (the init may have left its cgroup). */
#define STATUS_INIT_RECORD "init"

struct container_status {
  char *id;
  char *status; /* as stored: "creating" or "created" */
  pid_t pid;    /* the init's host pid, 0 before it exists */
  unsigned long long pid_start_time;
  unsigned long long pid_pidns; /* the init's pid namespace inode, 0 when unknown */
  char boot_id[40];             /* the boot the pids and start times are of, "" when unknown */
  pid_t creator_pid;            /* the `create` process while "creating" */
  unsigned long long creator_start_time;
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 */
  oci_map annotations;
  char *cgroup;        /* cgroup_describe(), NULL when there is none */
  char *cgroup_record; /* cgroup_hierarchy_record(), NULL when there is none */
  bool new_pidns;
  bool intel_rdt; /* linux.intelRdt was applied: delete removes its groups */
  char *intel_rdt_clos_id;
  bool intel_rdt_monitoring;
  oci_hook_list poststart, poststop;
  /* written only (borrowed, never read back into it): config.json's bytes kept in state.json
   * instead of a file of their own (a one-shot create without a cgroup: status_read_config reads
   * them there) */
  const char *config_json;
  size_t config_len;
  /* written only: the state dir is a kept one's (status-kept.h): state.json is replaced through
   * its spare, and no init record is written (`created` is a second state.json) */
  bool spare;
};

/* Container ids: 1-1024 characters of [A-Za-z0-9_+.-], not "." or "..". */
int status_validate_id(const char *id, fsrun_error_t *err);

/* ROOT below is ctx's state root: the directory main checked and holds (by fd, never by its path
 * again), or, when it was missing then or ctx names another root, opened and checked now. */

/* Makes ROOT (0700, when missing) and ROOT/ID (0700); "container `ID` already exists" on EEXIST.
 * Returns an O_DIRECTORY fd of ROOT/ID. */
int status_dir_create(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* Opens ROOT/ID; "container `ID` does not exist" (ENOENT) when missing. */
int status_dir_open(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* Removes ROOT/ID and everything in it, never keeping it (status_kept_release is the run's own);
 * a missing directory is not an error. */
int status_dir_remove(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err);
/* rootfd's entry NAME and the files in it removed, never kept (status-kept.c's own). */
int status_dir_remove_name(int rootfd, const char *name, fsrun_error_t *err);
/* ROOT as the functions above reach it: *fd (-1 when missing), *own to close, or -1. */
int status_root_dir(const struct fsrun_context *ctx, int *fd, int *own, fsrun_error_t *err);
/* ROOT itself, readable (O_RDONLY|O_DIRECTORY) to list; ENOENT when missing. */
int status_dir_root_open(const struct fsrun_context *ctx, fsrun_error_t *err);

/* write + rename in dirfd: readers see the old or the new content, never a partial file (the pid
 * files). */
int status_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                             fsrun_error_t *err);
/* The same for a file of the state directory (mode 0600), an existing one replaced by an
 * exchange and an unlink (no writeback of a short-lived file on ext4); no temporary file is left,
 * a directory at name is refused (EISDIR). */
int status_replace_file(int dirfd, const char *name, const void *data, size_t len,
                        fsrun_error_t *err);

/* state.json, and STATUS_INIT_RECORD when st names an init (pid > 0). */
int status_write(int dirfd, const struct container_status *st, fsrun_error_t *err);
/* A one-shot create's `created` (container_create_opts.one_shot): STATUS_INIT_RECORD alone, over a
 * state.json that still says `creating` and names no init. status_read then gives `created` and
 * the record's init: one new file in the state dir instead of a second state.json and the record.
 * Nothing else of state.json may differ from what `creating` wrote. */
int status_write_created(int dirfd, const struct container_status *st, fsrun_error_t *err);
/* Stores config.json's bytes (as read at create, not re-serialised) in the state dir, 0600. */
int status_write_config(int dirfd, const char *json, size_t len, fsrun_error_t *err);
/* The config stored at create: config.json, else the copy state.json holds (config_json above).
 * A state dir written before the copy existed has neither: then the bundle's config.json is read
 * (bundle may be NULL: no fallback). */
int status_read_config(int dirfd, const char *bundle, oci_config **out, fsrun_error_t *err);
/* ENOENT when there is no state file (yet). A state.json at `creating` beside an init record
 * (status_write_created) is read as `created`, with the record's init. */
int status_read(int dirfd, struct container_status *st, fsrun_error_t *err);
/* Fills st's pid, pid_start_time and pid_pidns from STATUS_INIT_RECORD (EINVAL when it is not
 * one). */
int status_read_init_record(int dirfd, struct container_status *st, fsrun_error_t *err);
/* The record's target for st into buf (status_format_init_record's length, as snprintf), and
 * the fields of a target of either form into st (-1 when it is not one). */
int status_format_init_record(const struct container_status *st, char *buf, size_t size);
int status_parse_init_record(const char *text, struct container_status *st);
void status_clear(struct container_status *st);

struct fsrun_cgroup;
/* The container's cgroup, only ever one that its id and the linux.cgroupsPath of its config (the
 * copy in the state dir) lead to. With st, the one the state names (EPERM when the state names
 * another: a forged state must not make fsrun kill in or remove a host cgroup; NULL when the state
 * has none). Without st (the state file is lost), the one of those paths that exists (NULL when
 * none does). */
int status_open_cgroup(int dirfd, const char *id, const struct container_status *st,
                       struct fsrun_cgroup **out, fsrun_error_t *err);
/* status_open_cgroup, handing over the config it read to find the cgroup (*config, the caller's
 * to free; NULL when none was read: st names no cgroup) so that a caller needing it reads it once
 */
int status_open_cgroup_config(int dirfd, const char *id, const struct container_status *st,
                              struct fsrun_cgroup **out, oci_config **config, fsrun_error_t *err);

/* The live status: "creating", "created", "running", "paused" or "stopped", and the init's pid
 * (0 when stopped). A reused pid is never mistaken for the init. */
const char *status_derive(int dirfd, const struct container_status *st, pid_t *pid);
/* The same with the container's cgroup opened already (NULL: opened here when the freezer state is
 * asked): its mount layout is not looked up a second time. */
const char *status_derive_in(int dirfd, const struct container_status *st,
                             const struct fsrun_cgroup *cg, pid_t *pid);
/* Whether the stored init is still the live process (start time matches, not a zombie). */
bool status_init_alive(const struct container_status *st);
/* Whether a status status_derive_in returned came from a positive status_init_alive ("created",
 * "running", "paused"; "creating" checks the creator, "stopped" found no init). */
bool status_init_alive_derived(const char *status);

/* The OCI state JSON (runc's fields included) for a status and pid. owner may be NULL. */
char *status_state_json(const struct container_status *st, const char *status, pid_t pid,
                        const char *owner, bool pretty, fsrun_error_t *err);
/* The owner of ROOT/ID (user name, or the uid as a number). */
char *status_owner(int dirfd);

#endif
