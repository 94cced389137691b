/* Checkpoint and restore through the criu binary (Debian ships no libcriu). fsrun drives criu's
 * command line, not its `swrk` RPC: the RPC is protobuf, which fsrun would have to encode by hand
 * or link libprotobuf-c for, and every option fsrun needs has a command-line flag. criu writes its
 * log (dump.log, pre-dump.log, restore.log) into the work directory, and a failure is reported as
 * the log's last error line. */
#ifndef FSRUN_CRIU_H
#define FSRUN_CRIU_H

#include <stdbool.h>

#include "context.h"
#include "error.h"

/* The options checkpoint and restore share (runc's names). */
struct criu_opts {
  const char *image_path;          /* NULL = ./checkpoint */
  const char *work_path;           /* NULL = the image path */
  const char *manage_cgroups_mode; /* soft, full, strict, ignore; NULL = criu's default (soft) */
  bool empty_netns;                /* --empty-ns network */
  bool tcp_established, ext_unix_sk, shell_job, file_locks, auto_dedup;
  bool lazy_pages; /* checkpoint: serve the memory from the page server; restore: fault it in */
};

/* checkpoint --page-server ADDRESS:PORT (criu's --address/--port), split */
struct criu_page_server {
  char address[256]; /* without the brackets of an IPv6 address; "" = no page server */
  unsigned port;
};

struct criu_checkpoint_opts {
  struct criu_opts c;
  const char *parent_path; /* previous (pre-dump) images, relative to the image path as in criu */
  struct criu_page_server page_server;
  int status_fd; /* --status-fd: criu writes \0 there when its lazy page server is ready; -1 */
  bool leave_running, pre_dump;
};

struct criu_restore_opts {
  struct criu_opts c;
  const char *id;
  const char *bundle; /* NULL = the current directory */
  const char *pid_file;
  const char *console_socket;
  bool detach, no_subreaper, no_pivot;
};

/* Parses the values of --manage-cgroups-mode and --empty-ns into o (one-line error naming the
 * option for anything criu or fsrun cannot honour). */
int criu_parse_cgroups_mode(const char *arg, struct criu_opts *o, fsrun_error_t *err);
int criu_parse_empty_ns(const char *arg, struct criu_opts *o, fsrun_error_t *err);
/* --page-server ADDRESS:PORT ([IPV6]:PORT), as runc takes it; --status-fd N (a number only: whether
 * it is open and writable is checked by criu_checkpoint) */
int criu_parse_page_server(const char *arg, struct criu_page_server *ps, fsrun_error_t *err);
int criu_parse_status_fd(const char *arg, int *fd, fsrun_error_t *err);

/* The path of a usable criu on PATH (`criu check` passes; root's verdict is cached per boot in
 * /run/fsrun, an ordinary user's in the state root), or NULL, always for an ordinary user (criu
 * needs root): for `fsrun features`. Caller frees. */
char *criu_usable(const char *state_root);
/* For `features` too: whether criu can restore memory lazily here (`criu check --feature
 * uffd-noncoop`, cached as criu_usable's verdict). criu from criu_usable. */
bool criu_lazy_pages_usable(const char *state_root, const char *criu);

int criu_checkpoint(const struct fsrun_context *ctx, const char *id,
                    const struct criu_checkpoint_opts *o, fsrun_error_t *err);
/* Foreground (not detach): waits for the restored process and deletes the container after it, and
 * *exit_status is its status (128+N for signal N). */
int criu_restore(const struct fsrun_context *ctx, const struct criu_restore_opts *o,
                 int *exit_status, fsrun_error_t *err);

#endif
