/* The git protection of `fsrun exec` into a task container made by `fsrun bundle`
 * (docs/sandbox.md, "Git in a task container"): the same overlay over the git common dir, allowlist
 * sync and tamper report as one `fsrun sandbox` run, per exec. */
#ifndef FSRUN_EXEC_GIT_H
#define FSRUN_EXEC_GIT_H

#include <stdbool.h>

#include "context.h"
#include "error.h"
#include "oci.h"
#include "pidfd-compat.h"
#include "sandbox-git.h"
#include "sandbox-internal.h"
#include "status.h"

/* the annotation `fsrun bundle` writes: the worktree whose git dirs each exec protects */
#define EXEC_GIT_ANNOTATION "run.fsrun.sandbox.worktree"

/* exec-git-accept.c. create, restore, validate (after bind_checks_from_annotations): without
 * marked (the bundle's record, bundle-mark.h) the annotation is ignored, a warning starting with
 * what; with it, refused (one line naming it) unless the config binds the worktree writable and its
 * git dirs read-only, each onto itself with a sourceId, as `fsrun bundle` does (what the host's
 * path shows now). */
int exec_git_accept(const oci_config *c, bool marked, const char *what, fsrun_error_t *err);
/* exec: the annotation's worktree (*worktree, NULL when the config has none or the state dir no
 * bundle mark: a warning then) and in *top its top, opened once and checked to be the object the
 * config's bind of it names (pinned for sandbox_worktree_check); -1 with err (one line naming the
 * annotation) when it is not, or cannot be opened. */
int exec_git_worktree_open(oci_config *c, int state_dir_fd, const char **worktree, int *top,
                           fsrun_error_t *err);
/* delete, pause: the annotation's worktree when the state dir holds the bundle's mark and the
 * config create kept still binds it writable with the identity its host path shows now (c gets its
 * run.fsrun.mounts.N checks); NULL (a warning starting with what) otherwise */
const char *exec_git_worktree(oci_config *c, int state_dir_fd, const char *what);
/* The trees a task container's command writes on the host besides the worktree: each writable
 * bind of a host path onto itself with a sourceId in c (`fsrun bundle`'s writablePaths binds), the
 * last mount onto its path, appended to *out. create, each exec and delete take it from the config
 * create kept, so that the PATH entries each watches in them are the same (their digests are
 * compared with one another's). */
void exec_git_writable(const oci_config *c, const char *worktree, oci_strv *out);
/* create of a task container (the mark taken): the config's and hook managers' pointer digests
 * and the tamper walk's cutoff, now, so that the first exec compares with the state at creation
 * (config: the container's, for exec_git_writable) */
void exec_git_created(const oci_config *config, const char *worktree, int state_dir_fd);

struct exec_git {
  struct sandbox_git_run run; /* run.run_dir NULL: nothing to do for this exec */
  char *worktree;
  oci_strv writable;         /* the container's writable binds (exec_git_writable), run.writable */
  struct mount_list protect; /* the read-only binds to remake over the overlay (host paths) */
  int run_dir_fd;            /* the per-run dir (upper/, work/), for the child; -1 */
  int state_dir_fd;          /* the container's state dir (the tamper walk's cutoff); -1 */
  bool userns;               /* the container has a user namespace: `userxattr` */
  bool left_running;         /* a process of the exec was left before the walk (exec-leftovers.h) */
};

/* Host side, before the clone: nothing to do (g->run_dir_fd -1) unless config carries the
 * annotation (with the bundle's mark) and the worktree is a repository. Refused (-1, one line):
 * a worktree that is no longer the object create accepted, or whose git layout, found below the
 * top just checked, is not git's. Removes the leftover per-run dirs of execs into container `id`
 * whose fsrun died. */
int exec_git_prepare(struct exec_git *g, const struct fsrun_context *ctx, const char *id,
                     oci_config *config, fsrun_error_t *err);
/* In the exec child, before it joins the container's namespaces (join_user: its user namespace is
 * joined here): a detached mount of the per-run dir, and in *proc_fds our /proc/self/fd of the
 * host's procfs. Returns the tree's fd, or -1 with err set. */
int exec_git_child_grab(const struct exec_git *g, const struct init_ns *init, bool join_user,
                        int *proc_fds, fsrun_error_t *err);
/* Then, inside the container's namespaces with CAP_SYS_ADMIN there: a mount namespace of its own
 * with the overlay over the common dir (the object checked on the host, refused with ESTALE when
 * the path shows another; upper/ and work/ in tree_fd) and the protection binds. */
int exec_git_child_mount(const struct exec_git *g, int tree_fd, int proc_fds, fsrun_error_t *err);
/* Whether this exec has a sync and a walk to do (exec_git_finish). */
bool exec_git_active(const struct exec_git *g);
/* After the exec'd process was reaped: the allowlist sync and the tamper walk, warnings on stderr.
 * Returns the JSON members `,"tamper":[...],"hostGitArgs":[...],"discarded":[...],
 * "leftRunning":BOOL` for --status-json (caller frees). */
char *exec_git_finish(struct exec_git *g);
/* The time the last finished tamper walk of an exec into the container began (its state dir's
 * record); false when none is recorded (no exec finished) or the record is not a time. */
bool exec_git_tamper_since(int state_dir_fd, struct timespec *since);
/* text into the container's state dir as name (atomically, mode 0600); a failure is a warning
 * ending in if_not (what the next exec does without it) */
void exec_git_state_write(int state_dir_fd, const char *name, const char *text, size_t len,
                          const char *if_not);
/* `fsrun delete` of a task container (exec-git-final.c), once its processes are dead and before its
 * state goes: the nested repositories made in the worktree since the last exec's walk began (or
 * since the container was created), which no exec's walk will name any more. Warns on stderr.
 * NULL-terminated (caller frees: sandbox_git_strv_free); NULL when st has no annotation. */
char **exec_git_final_walk(int state_dir_fd, const struct container_status *st, char ***host_args);
/* `fsrun pause --tamper-json` (exec-git-final.c): the same walk of a frozen container, whose
 * processes cannot write until it is resumed, so the list holds while it stays paused. */
char **exec_git_paused_walk(int state_dir_fd, const struct container_status *st, char ***host_args);
/* {"walked":BOOL,"tamper":[...],"hostGitArgs":[...]} to fd in one write (walked: tamper not NULL);
 * errors name `--tamper-json PATH` */
int exec_git_walk_json_write(int fd, const char *path, char **tamper, char **host_args,
                             fsrun_error_t *err);
/* "exec: WHAT: [\"a\",\"b\"]" on stderr (JSON: the names may be a run's); none when empty */
void exec_git_warn_list(const char *what, char **v);
/* The watchdog of an exec (exec-git.c) is armed with the per-run dir's id after this mark: a
 * dot-led id, which no container has. exec_git_watch_cleanup: false when watch_id is not such an
 * id; else that per-run dir is removed (the watchdog's clean-up after the exec's fsrun died). */
#define EXEC_GIT_WATCH_MARK ".exec-git:"
bool exec_git_watch_cleanup(const char *state_root, const char *watch_id);
/* `fsrun delete`: the per-run dirs of execs into `id` that were killed */
void exec_git_remove_leftovers(const char *state_root, const char *id, bool all);
void exec_git_free(struct exec_git *g);
/* exec-git-pointers.c: the container's stored pointer digests become g's "before" (a hook
 * manager's file without one: appeared); after the check, g's "after" are stored */
void exec_git_pointers_load(struct sandbox_git_run *g, int state_dir_fd);
void exec_git_pointers_save(const struct sandbox_git_run *g, int state_dir_fd);
/* create: the digests of worktree's pointers now, as the "before" of the first exec (l: its
 * layout, a repository's, found once for this and exec_git_dotgits_created) */
void exec_git_pointers_created(const char *worktree, const oci_strv *writable,
                               const struct sandbox_git_layout *l, int state_dir_fd);
/* a digest as text: 64 hex digits, or `-` when unknown; and back, the text ending in end */
void exec_git_digest_format(const struct sandbox_git_digest *d, char out[65]);
bool exec_git_digest_parse(const char *text, char end, struct sandbox_git_digest *d);
/* exec-git-dotgits.c: the `.git` entries the last walk found on a worktree whose file times are
 * not trusted, kept in the state dir: loaded as g's "before", saved from its "after"; create's
 * (the first exec's "before") taken from the worktree */
void exec_git_dotgits_load(struct sandbox_git_run *g, int state_dir_fd);
void exec_git_dotgits_save(const struct sandbox_git_run *g, int state_dir_fd);
void exec_git_dotgits_created(const char *worktree, const struct sandbox_git_layout *l,
                              int state_dir_fd);
/* `fsrun delete`: the `config:`/`hooks:` entries of worktree's repository whose files changed since
 * the container's last exec looked, appended to *found (none when no exec looked); *host_args:
 * sandbox_git_host_args of *found with the repository's pointers. Read through top, the worktree's
 * top the walk checked (-1: its name led elsewhere), and the common dir the layout checked.
 * nested_seen: the walk met a nested `.git` dir, whose repository's options they then hold.
 * writable: the container's writable binds (exec_git_writable), as create and each exec had them.
 */
void exec_git_pointers_final(const char *worktree, const oci_strv *writable, int top,
                             int state_dir_fd, bool nested_seen, char ***found, char ***host_args);
#define cleanup_exec_git __attribute__((cleanup(exec_git_free)))

#endif
