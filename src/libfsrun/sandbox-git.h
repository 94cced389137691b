/* The git side of the sandbox (docs/sandbox.md, "Git"): where a worktree's git dirs are, the mounts
 * that keep what the host's git would execute out of the sandbox's reach, and for `fsrun sandbox`
 * the overlay over the common dir whose upper dir is applied to the repository afterwards through
 * an allowlist (sandbox-git-sync.c), and the nested repositories a run made (sandbox-git-tamper.c).
 */
#ifndef FSRUN_SANDBOX_GIT_H
#define FSRUN_SANDBOX_GIT_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"
#include "oci.h"
#include "sandbox-git-index-stat.h"
#include "sandbox-git-index.h"
#include "sandbox-internal.h"

/* Where a worktree's `.git` leads (sandbox-git-layout.c): common_dir NULL when there is none (no
 * `.git`, or a link); else the common dir, the worktree's admin dir relative to it ("" for a main
 * checkout) and an O_PATH fd of the common dir taken when it was checked. A `.git` file outside
 * git's linked-worktree layout is an error (one line naming it). */
struct sandbox_git_layout {
  char *common_dir;
  char *admin;
  int common_fd;
};
int sandbox_git_layout_find(const char *worktree, struct sandbox_git_layout *out,
                            fsrun_error_t *err);
/* The same below top, the worktree's top the caller opened and checked (exec: the object its
 * bind names), with no lookup of the worktree's name: a main checkout's common dir is then
 * `<worktree>/.git` by name and that `.git` by fd. */
int sandbox_git_layout_find_at(const char *worktree, int top, struct sandbox_git_layout *out,
                               fsrun_error_t *err);
void sandbox_git_layout_free(struct sandbox_git_layout *l);
/* A run's set-up (sandbox-git-layout-memo.c): from _begin to _end, sandbox_git_layout_find keeps
 * its first walk's answer and hands it out again while the worktree's top, its `.git` and the
 * common dir are the objects that walk judged (the fd: the common dir opened again). _hits: how
 * many lookups it answered (for the tests). _take and _keep: sandbox_git_layout_find's. The
 * first walk's layout is authoritative: a later lookup that finds other objects fails. */
void sandbox_git_layout_memo_begin(void);
void sandbox_git_layout_memo_end(void);
unsigned sandbox_git_layout_memo_hits(void);
/* _take: 1 the kept answer in out, 0 walk, -1 the set-up changed (err); _keep: 0, or -1 the first
 * walk's `.git` changed under it or a later walk differs from the first (err). _changed: whether
 * any lookup of this set-up found that (sandbox_git_prepare refuses then). */
int sandbox_git_layout_memo_take(const char *worktree, int wt_fd, struct sandbox_git_layout *out,
                                 fsrun_error_t *err);
int sandbox_git_layout_memo_keep(const char *worktree, int wt_fd,
                                 const struct sandbox_git_layout *l, fsrun_error_t *err);
bool sandbox_git_layout_memo_changed(void);

/* The git common directory of a worktree whose `.git` is a file in git's linked-worktree layout
 * (worktree_git_dir: always NULL now, its admin dir is inside the common dir). NULL when `.git` is
 * a directory or missing (nothing outside the worktree is needed). Caller frees. */
int sandbox_git_dirs(const char *worktree, char **common_dir, char **worktree_git_dir,
                     fsrun_error_t *err);

/* Read-only mounts over what the host's git would execute: configs, hooks, `.git` files, and the
 * files of each worktree's admin dir that point elsewhere (commondir, gitdir). */
void sandbox_git_protect(const char *worktree, const char *common_dir, const char *wt_git_dir,
                         struct mount_list *l);

/* The same mounts inside a common dir already checked and held by common_fd (an `fsrun exec`'s
 * overlay): listed through that object, never through common_dir's name again, and named by
 * common_dir (destination and source) for the mounts over the overlay at that path. */
void sandbox_git_protect_checked(const char *common_dir, int common_fd, struct mount_list *l);

/* sandbox_git_protect's whole list of a worktree whose top (top_fd) and common dir (common_fd) were
 * checked: listed through those objects, named by worktree and common_dir */
void sandbox_git_protect_all_checked(const char *worktree, int top_fd, const char *common_dir,
                                     int common_fd, struct mount_list *l);

/* a ref the run may move: its value when the run began ("" none) and its reflog's size (-1 none) */
struct sandbox_git_ref {
  char *name;
  char *before;
  int64_t log_size;
};

/* What a pointer's files are (SHA-256 of their identities, change times and contents). unknown:
 * content fsrun would need to read to tell and did not (past the budget, on a filesystem whose
 * times a write may not move): never the same as anything, so the pointer is reported. */
struct sandbox_git_digest {
  uint8_t sum[32];
  bool unknown;
};
bool sandbox_git_digest_same(const struct sandbox_git_digest *a,
                             const struct sandbox_git_digest *b);

/* a file or directory the repository's config has the host's git run or read (core.hooksPath, a
 * filter's script, an included config), and the tamper entry naming it */
struct sandbox_git_pointer {
  char *entry;     /* "config:<key>=<value>" or "hooks:<name>" */
  char *path;      /* absolute, as the host's git would reach it */
  bool below_top;  /* relative to the worktree's top: the directories on the way count too */
  bool global;     /* the user's git config (outside the worktree, its content read all the same) */
  bool python_top; /* a dir Python imports from first (sys.path[0]): what it may import there */
  struct sandbox_git_digest before; /* its digest before the run (sandbox-git-config-paths.c) */
  struct sandbox_git_digest after;  /* and after it, once sandbox_git_config_tamper has looked */
  bool appeared; /* a hook manager's file that came since the container's last exec looked */
  bool standing; /* `config:unread:`: what git reads there fsrun cannot tell, said on every run */
};

/* A `.git` entry the nested-repository walk met (sandbox-git-dotgits.c): where (relative to the
 * worktree's top), what (identity, file type) and, a regular file's, its content */
struct sandbox_git_dotgit {
  char *rel;
  uint64_t dev, ino;
  unsigned type; /* st_mode & S_IFMT */
  struct sandbox_git_digest digest;
};
/* The entries one walk met, on a worktree whose file times are not trusted (taken: a walk made
 * it; else nothing is known, and every entry is the run's) */
struct sandbox_git_dotgits {
  struct sandbox_git_dotgit *items;
  size_t n, cap;
  bool taken;
};
/* dir/.git as e (rel its worktree-relative path; st its lstat) */
void sandbox_git_dotgit_of(struct sandbox_git_dotgit *e, int dir, const char *rel,
                           const struct stat *st);
/* moves e into inv (e is left empty) */
void sandbox_git_dotgits_push(struct sandbox_git_dotgits *inv, struct sandbox_git_dotgit *e);
/* by rel, for sandbox_git_dotgits_has */
void sandbox_git_dotgits_sort(struct sandbox_git_dotgits *inv);
/* whether sorted before holds e as it is: same path, identity, type and content */
bool sandbox_git_dotgits_has(const struct sandbox_git_dotgits *before,
                             const struct sandbox_git_dotgit *e);
void sandbox_git_dotgits_free(struct sandbox_git_dotgits *inv);
/* The worktree's top and the common dir as fsrun checked them, held open (sandbox-git-pins.c): a
 * path below either is reached from its fd, never through that name again, which a rename since
 * the check may have led to another tree (review23 A1). worktree NULL: no top; top -1: it was not
 * the checked object (a path below it reads as ESTALE); common -1: no common dir held. */
struct sandbox_git_pins {
  const char *worktree;
  int top;
  const char *common_dir;
  int common;
};
/* worktree opened, -1 with *err set when it is not the object checked before the run
 * (sandbox_worktree_check), -1 without when it could not be opened (errno) */
int sandbox_git_top_checked(const char *worktree, fsrun_error_t *err);
/* the fd to reach path from and, in *rest, the rest of it ("." the dir itself): a pinned dir's
 * for a path below it, else AT_FDCWD and path; -1 with ESTALE below a top not held */
int sandbox_git_pinned_at(const struct sandbox_git_pins *p, const char *path, const char **rest);
/* stat (follow) or lstat of path, reached from its pinned dir: 0, or -1 with errno */
int sandbox_git_pinned_stat(const struct sandbox_git_pins *p, const char *path, bool follow,
                            struct stat *st);
/* path, a directory, opened for reading (not blocking) from its pinned dir; -1 with errno */
int sandbox_git_pinned_open_dir(const struct sandbox_git_pins *p, const char *path);

/* One run's git state. common_dir NULL: no repository (or a layout the overlay does not cover). */
struct sandbox_git_run {
  char *common_dir;
  int common_fd; /* the common dir as checked before the run: the sync writes only beneath it */
  uint64_t common_dev, common_ino; /* its identity: the overlay's lower layer must be it */
  char *admin;   /* the task worktree's admin dir, relative to common_dir; "" = the common dir */
  char *branch;  /* the checked-out branch ("refs/heads/X"); NULL when HEAD is detached */
  char *run_dir; /* <state root>/.sandbox-git.<id>: the overlay's upper/ and work/ */
  struct sandbox_git_ref refs[2]; /* the branch, refs/stash */
  size_t n_refs;
  struct git_index index_before; /* the host's index when the run began (empty: none, unwalkable) */
  struct git_index_kept index_kept; /* its entries whose stat data the run's index may keep */
  size_t hash_size;                 /* the repository's object id size, 20 or 32 */
  mode_t index_mode;                /* the host's index's permission bits then (0: none) */
  bool index_written;               /* the run wrote an index git can walk (applied or not) */
  char **gitlinks_after;            /* then its gitlinks (NULL-terminated) */
  /* the tamper walk's cutoff: 20 ms before the run began, or earlier for an exec (exec-git.c); a
   * one-shot run's is exact (sandbox_git_tamper_cutoff) */
  struct timespec start;
  /* when the tamper walk began, on the clock of file times (CLOCK_REALTIME_COARSE): a file changed
   * later has a ctime not before it */
  struct timespec walk_began;
  struct sandbox_git_pointer *pointers; /* what the config names, read before the run */
  size_t n_pointers;
  char *worktree; /* the one sandbox_git_config_paths was given (hostGitArgs' reread) */
  /* the policy's writablePaths (borrowed; NULL: none known, as in a task container's exec): a
   * driver's bare command is watched in PATH's entries at or below them (config-paths) */
  const oci_strv *writable;
  /* with top_held: the worktree's top as checked (sandbox_git_top_checked; -1: its name led to
   * another object), which the reads of the config and the digests go through (pins) */
  int top_fd;
  bool top_held;
  bool pointers_dropped; /* it named more than fsrun keeps: said on every run */
  /* the hook managers the installed hooks belong to (sandbox-git-hook-managers.c), their files at
   * the worktree's top before the run (NULL-terminated), pre-commit's --config=<name> */
  unsigned hook_managers;
  char **hook_files_before;
  char *hook_config_name;
  /* after sandbox_git_finish, NULL-terminated, within SANDBOX_GIT_MAX_REPORTED and
   * SANDBOX_GIT_REPORTED_BYTES each (a cut said by a standing entry): */
  char **discarded;     /* the common-dir-relative paths of the run's changes that were left out */
  char **tamper;        /* the worktree-relative gitlinks and nested git dirs the run made, and the
                         * `config:<key>=<value>` and `hooks:<name>` entries whose files the run
                         * changed */
  char **host_git_args; /* sandbox_git_host_args of tamper, once it is known */
  /* the file times of the walked worktree, or of a filesystem mounted below its top that the walk
   * entered, may not show writes (file-time.h: a tmpfs, FUSE, NFS...) */
  bool times_untrusted;
  /* where the worktree's top's times are not trusted: the `.git` entries before the run (sorted;
   * a task container's as its last exec's walk left them) and as the walk after it found them */
  struct sandbox_git_dotgits dotgits_before, dotgits_after;
  /* the walk met a `.git` below the top, new or not: hostGitArgs keep git out of every nested
   * repository, since a write inside an existing one moves no ctime the walk reads (review25 C3) */
  bool nested_seen;
};

/* Before the run: the layout, the refs' values, and the per-run dir (owned by the caller).
 * writable: the policy's writablePaths (kept as g->writable, borrowed; NULL: none known). */
int sandbox_git_prepare(struct sandbox_git_run *g, const char *state_root, const char *id,
                        const char *worktree, const oci_strv *writable, fsrun_error_t *err);
/* The same with the layout l the caller found (taken: l is emptied) below top, the worktree's top
 * it checked, through which the config's paths below the worktree are read. */
int sandbox_git_prepare_at(struct sandbox_git_run *g, const char *state_root, const char *id,
                           const char *worktree, const oci_strv *writable, int top,
                           struct sandbox_git_layout *l, fsrun_error_t *err);
/* The common dir's read-write bind (or, for a main checkout, a new mount at `.git`) becomes the
 * overlay; userns: `userxattr`. */
void sandbox_git_overlay_config(const struct sandbox_git_run *g, oci_config *c, bool userns);
/* A task container of `fsrun bundle`: the common dir read-only in the container's own mount
 * namespace, where each `fsrun exec` mounts its overlay over it. Through `/proc/PID/root` of the
 * init, a process of the container reaches that namespace's view, not its exec's overlay. */
void sandbox_git_read_only_config(const char *worktree, oci_config *c, bool userns);
/* After the run: finds the tamper first (the walk, and the new gitlinks of the run's index as read
 * then) and hands it to said->tamper, then computes hostGitArgs and hands them to
 * said->host_args (said or either NULL: nobody), then applies the allowlist and removes the
 * per-run dir. hostGitArgs read the run's configs again and the sync may take seconds (each new
 * object inflated and hashed): a caller killed during either has said the tamper already
 * (review19 #15, review22 F7). The index the sync applies is read again: its new gitlinks that the
 * first read did not have are added to g->tamper after the sync. */
typedef void sandbox_git_tamper_fn(const struct sandbox_git_run *g, void *arg);
struct sandbox_git_said {
  sandbox_git_tamper_fn *tamper;    /* g->tamper is known, g->host_git_args not yet */
  sandbox_git_tamper_fn *host_args; /* g->host_git_args too */
  void *arg;
};
void sandbox_git_finish(struct sandbox_git_run *g, const char *worktree,
                        const struct sandbox_git_said *said);
/* under the state root: <prefix><container id>, one run's overlay upper and work dirs */
#define SANDBOX_GIT_RUN_DIR_PREFIX ".sandbox-git."
/* An ordinary user's per-run dir when the state root is not a tmpfs (sandbox-git-shm.c): made
 * (mkdir) at sandbox_git_shm_run_dir's path, or NULL (root, a tmpfs state root, too little room in
 * /dev/shm, the name taken: the state root's dir then). Caller frees. */
char *sandbox_git_shm_claim(const char *state_root, const char *id);
/* Whether this caller's per-run dirs may go to SANDBOX_GIT_SHM_DIR: an ordinary user whose state
 * root (or, not made yet, the directory it will be made in) is not a tmpfs. */
bool sandbox_git_shm_may_use(const char *state_root);
#define SANDBOX_GIT_SHM_DIR "/dev/shm"
/* where sandbox_git_shm_claim puts the run id's dir, and the prefix of every such dir of this
 * state root; NULL as root or when the state root is gone. Caller frees. */
char *sandbox_git_shm_run_dir(const char *state_root, const char *id);
char *sandbox_git_shm_prefix(const char *state_root);
/* The per-run dir of a run whose fsrun was killed (the watchdog's clean-up), either place. */
void sandbox_git_remove_leftover(const char *state_root, const char *id);

/* Removes the per-run dir and frees. */
void sandbox_git_run_free(struct sandbox_git_run *g);

#define SANDBOX_GIT_MAX_REPORTED 64
/* what a reported list (tamper, discarded) holds at most as a JSON array besides its standing
 * entries: the names are the run's, a control character costs 6 bytes escaped, and 64 of them
 * (PATH_MAX long, or longer below the walk's top) made megabytes, past the adapter's buffer */
#define SANDBOX_GIT_REPORTED_BYTES (32 * 1024)
/* what is left of a list's bounds; an entry's cost (its JSON string and a comma); whether entry
 * fits in what is left of r (then taken from it) */
struct room_left {
  size_t entries, bytes;
};
size_t sandbox_git_reported_size(const char *entry);
bool sandbox_git_room_take(struct room_left *r, const char *entry);
/* discarded's standing entry, first, when anything was left out of it */
#define SANDBOX_GIT_DISCARDED_MORE "(more left out than fsrun reports)"
/* the standing entry of a list that had more than SANDBOX_GIT_MAX_REPORTED: "cannot disarm", as
 * every `config:unread:` entry is, since what was left out is not in hostGitArgs (review25 C5) */
#define SANDBOX_GIT_TAMPER_MORE "config:unread: (more tamper entries than fsrun reports)"
/* sandbox-git-tamper-cap.c: tamper's config, hook and standing entries first, the nested paths
 * after, cut to SANDBOX_GIT_MAX_REPORTED entries and SANDBOX_GIT_REPORTED_BYTES with
 * SANDBOX_GIT_TAMPER_MORE first when anything was left out (by this cut or by the walk's own) */
void sandbox_git_tamper_settle(char ***tamper);
/* the tamper entry of a walk that could not look: the worktree's name led elsewhere by then */
#define SANDBOX_GIT_TAMPER_UNWALKED "."

/* shared between the sandbox-git*.c files */
bool sandbox_git_refname_ok(const char *ref);
char *sandbox_git_ref_value(int common_fd, const char *ref);
int sandbox_git_open_beneath(int dirfd, const char *path, int flags, mode_t mode);
int sandbox_git_read_nofollow(int dirfd, const char *path, char **out);
/* a regular file beneath dirfd, reached through no link, of at most max bytes, read whole */
int sandbox_git_read_max(int dirfd, const char *path, uint64_t max, char **out);
/* the same with its length (the text may hold a NUL); errno EFBIG when larger than max */
int sandbox_git_read_whole(int dirfd, const char *path, uint64_t max, char **out, size_t *len);
/* data to dir/name (replaced) through a new temporary file of mode; -1 with errno */
int sandbox_git_write_new(int dir, const char *name, const void *data, size_t len, mode_t mode);
int sandbox_git_make_run_dir(struct sandbox_git_run *g, const char *state_root, const char *id,
                             fsrun_error_t *err);
void sandbox_git_remove_run_dir(struct sandbox_git_run *g);
/* sandbox-git-index-sync.c: the object id size of the repository's config; the host's index
 * before the run (and the hash size) into g; the run's index upper_dir/base written to
 * dst_dir/base when git can be handed it (false: left out, the caller reports it) */
size_t sandbox_git_hash_size(int common_fd);
void sandbox_git_index_before(struct sandbox_git_run *g);
bool sandbox_git_index_apply(struct sandbox_git_run *g, int upper_dir, int dst_dir,
                             const char *base);
/* appends a copy of s to *v (NULL-terminated, *n items), a list made only by this function */
void sandbox_git_strv_push(char ***v, size_t *n, const char *s);
void sandbox_git_strv_free(char **v);
char **sandbox_git_tamper(struct sandbox_git_run *g, const char *worktree);
/* Before a run on a worktree whose top's file times are not trusted: its `.git` entries, as the
 * tamper walk finds them, into g->dotgits_before (nothing where they are trusted, or without a
 * repository). */
void sandbox_git_dotgits_before(struct sandbox_git_run *g, const char *worktree);
/* A one-shot run's exact cutoff, for a run none of whose processes exists before its command:
 * began, taken just after every file time set before the run (file_time_after_now: a nested
 * repository the host made just before the run is not the run's), as g's start. Returns it (NULL:
 * no walk) for container_create_opts' exec_not_before: the command is exec'd once file times have
 * reached it (whatever the run changes is named). */
struct timespec *sandbox_git_tamper_cutoff(struct sandbox_git_run *g, const struct timespec *began);
/* one warning line when tamper lists anything, ending in `; tamper: ` and the list as a JSON array
 * (a caller killed afterwards has given the list in a form a program can read: the Fusion adapter
 * takes it from a killed fsrun's stderr) */
#define SANDBOX_GIT_TAMPER_LINE_TAG "; tamper: "
void sandbox_git_warn_tamper(const char *context, char **tamper);
/* "CONTEXT: SAID[...]" (the list as a JSON array) as a warning; nothing for an empty list */
void sandbox_git_warn_json_list(const char *context, const char *said, char **list);
/* the new gitlinks of g->gitlinks_after that g->tamper does not list yet, appended to it */
void sandbox_git_tamper_add_gitlinks(struct sandbox_git_run *g);
/* where fd's object is now (its real path, the kernel's name for it), false when it cannot be told
 */
bool sandbox_git_real_path_of(int fd, char real[PATH_MAX]);
/* a gitlink of g's index lists (before the run, and gitlinks_after) whose checkout below top holds
 * a repository of its own, which the host's `git add` enters (sandbox-git-tamper.c) */
bool sandbox_git_gitlinks_own_repository(const struct sandbox_git_run *g, int top);
/* the `.git` file in dir names a git dir that is a repository of its own: outside g's common dir
 * (or g's is not known), the common dir itself or anything in it but a linked worktree's admin dir
 * that names this `.git` back (git's own layout: a main checkout holding `.worktrees/`) and a
 * submodule's whose configs name no file (sandbox_git_module_names_files) (review27 E1), or a
 * path fsrun does not read as git does (review27 E2); or what is at `.git` when it is opened is
 * no regular file (a FIFO put there since the caller's look: read without waiting, a repository
 * of its own as that look counts one) */
bool sandbox_git_gitfile_elsewhere(int dir, const struct sandbox_git_run *g);
/* sandbox-git-layout.c: the `gitdir` file of a worktree's admin dir (admin_fd, named gitdir)
 * names the `.git` whose stat is dotgit (relative paths: to the admin dir): git's own layout.
 * own: `<worktree>/.git` when the caller checked the worktree's top, which dotgit was opened
 * from: naming it is naming dotgit, whatever the host's name shows by now (else NULL) */
bool sandbox_git_points_back(int admin_fd, const char *gitdir, const struct stat *dotgit,
                             const char *own);
/* sandbox-git-gitfile.c: a `.git` file's text (len bytes, room for one more) as git reads it:
 * PATH (*path, NUL-terminated in text), NONE (git finds no repository through it: no `gitdir: `,
 * no path) or ODD (a path with a control character or NUL in it: not read) */
enum sandbox_git_gitfile {
  SANDBOX_GIT_GITFILE_NONE,
  SANDBOX_GIT_GITFILE_ODD,
  SANDBOX_GIT_GITFILE_PATH
};
enum sandbox_git_gitfile sandbox_git_gitfile_parse(char *text, size_t len, const char **path);
/* sandbox-git-config-paths.c: the configs git reads in checkout (a real path), an absorbed
 * submodule's checkout whose git dir is module (below g's common dir), name a file: its own
 * config (and config.worktree, their includes) any, or what fsrun cannot read; the system's and
 * the user's one relative to the checkout, where git runs its drivers (review27 E1) */
bool sandbox_git_module_names_files(const struct sandbox_git_run *g, const char *module,
                                    const char *checkout);
/* the run's index in upper (the upper dir's fd) read for its gitlinks alone, into gitlinks_after */
void sandbox_git_index_gitlinks(struct sandbox_git_run *g, int upper);
/* sandbox-git-config-paths.c: before the run, what the repository's config names (g->pointers);
 * after it, those the run changed appended to tamper as their entries */
void sandbox_git_config_paths(struct sandbox_git_run *g, const char *worktree);
void sandbox_git_config_tamper(struct sandbox_git_run *g, const char *worktree, char ***tamper);
void sandbox_git_pointers_free(struct sandbox_git_run *g);
/* sandbox-git-pins.c: top becomes g's held top (the one held before closed); dropped: closed,
 * none held. The pins of g for worktree: its held top (-1 none), its common dir's fd. */
void sandbox_git_top_hold(struct sandbox_git_run *g, int top);
void sandbox_git_top_drop(struct sandbox_git_run *g);
struct sandbox_git_pins sandbox_git_pins_of(const struct sandbox_git_run *g, const char *worktree);
/* `section.subsection.name` with that section and name (lower-case), any subsection */
bool sandbox_git_key_is(const char *key, const char *section, const char *name);
/* include.path, includeIf.<condition>.path */
bool sandbox_git_key_includes(const char *key);
/* git's include depth (one more and git dies, running nothing) and the included files read per
 * set-up (a file that includes itself N times is N^depth reads) */
#define SANDBOX_GIT_INCLUDE_MAX_DEPTH 10
#define SANDBOX_GIT_INCLUDE_MAX_READS 64
/* a config's path as git takes it: absolute, `~/` from HOME (NULL without), `~user/` from
 * /etc/passwd, else relative to base (caller frees). NULL with *unread set (why): a path git may
 * reach that fsrun cannot tell (a user /etc/passwd does not name, git's `%(prefix)/`) */
char *sandbox_git_config_resolve(const char *base, const char *path, const char **unread);
/* a regular file, links followed as git follows them, not blocking on a fifo, at most 1 MiB, read
 * whole, *len its length; NULL otherwise, *too_big when it was larger (caller frees) */
char *sandbox_git_config_read_text(const struct sandbox_git_pins *pins, const char *path,
                                   size_t *len, bool *too_big);
/* sandbox-git-config-open.c: a regular config file at path (absolute) for reading, reached as git
 * reaches it: -1 with ELOOP for a magic link on the way (`/proc/self/cwd`, `/dev/stdin`: git's
 * own cwd and fds, not fsrun's), EINVAL for a relative path or what is not a regular file */
int sandbox_git_config_open(const struct sandbox_git_pins *pins, const char *path, struct stat *st);
/* whether path, written below the pinned worktree (where the run may write links), goes through
 * a link to a file that is not in it, or cannot be told (the top not held) */
bool sandbox_git_config_leads_out(const struct sandbox_git_pins *pins, const char *path);
/* sandbox-git-disarm.c: a key whose value git runs (a filter's command, core.fsmonitor, a pager;
 * not core.hooksPath, which names a directory) */
bool sandbox_git_runs_key(const char *key);
/* hostGitArgs: the `-c key=value` options (argv words, "-c" then the option) under which the
 * host's git runs nothing tamper's entries name: an empty list (never NULL) when there are none.
 * g (may be NULL) gives the paths of the included and global configs the entries name. */
char **sandbox_git_host_args(const struct sandbox_git_run *g, char **tamper);
/* sandbox-git-config-paths.c: hostGitArgs' program name (`cat`, `false`, `gpg`) as the path the
 * host's git runs without a PATH lookup: the first in an absolute entry of fsrun's PATH (unset:
 * /usr/bin:/bin) that neither it nor the file's real path is at or below top (NULL: none known) or
 * a writable entry; NULL when there is none (caller frees) */
char *sandbox_git_host_program(const char *top, const oci_strv *writable, const char *name);
/* one warning line when args lists anything, ending in `; hostGitArgs: ` and the JSON array */
#define SANDBOX_GIT_HOST_ARGS_LINE_TAG "; hostGitArgs: "
void sandbox_git_warn_host_args(const char *context, char **args);
/* a pointer whose digest is taken with the config's (entry and path: taken over) */
void sandbox_git_pointer_add(struct sandbox_git_run *g, char *entry, char *path, bool below_top);
/* sandbox-git-hook-managers.c: before the run, the managers whose hooks hooks_dir holds and their
 * files at the worktree's top (pointers `hooks:<name>`); after it, the files that appeared
 * (reported, and added as pointers: their digests are the next exec's "before") */
void sandbox_git_hook_managers(struct sandbox_git_run *g, const struct sandbox_git_pins *pins,
                               const char *hooks_dir);
void sandbox_git_hook_managers_tamper(struct sandbox_git_run *g,
                                      const struct sandbox_git_pins *pins, char ***tamper,
                                      size_t *n);
/* sandbox-git-index-times.c: whether fd's filesystem may change a file through a shared mapping
 * without moving its times (tmpfs, ramfs; true when it cannot tell); the host's index (of the
 * admin dir, beneath common_fd, named common_dir) made racily clean, so that its next `git
 * status` hashes every tracked file (nothing when there is no index) */
bool sandbox_git_times_untrusted(int fd);
void sandbox_git_index_racy(int common_fd, const char *common_dir, const char *admin);
/* sandbox-git-objects.c: the run's new loose objects adopted once checked against their names;
 * packs and the rest of upper/objects reported through discard (common-dir-relative paths). false
 * when an object the run wrote was not adopted (a loose one discarded or not copied, a pack, or
 * anything past the walk's cap): a commit the run made may then lack its tree or parents */
bool sandbox_git_sync_objects(int upper, int common, void (*discard)(void *arg, const char *rel),
                              void *arg);
/* the command's environment: git's automatic gc off and its unpack limits at the maximum
 * (GIT_CONFIG_COUNT), so that a commit's and a fetch's objects stay loose and reach the repository
 */
void sandbox_git_env(oci_strv *env);
/* sandbox-git-stash.c: the run's reflog of refs/stash is the host's (as at the start) with entries
 * appended, the first on top of before ("" none), the last at value */
bool sandbox_git_stash_pushed(const char *host_log, const char *run_log, const char *before,
                              const char *value);
/* an object id, 40 (SHA-1) or 64 (SHA-256) lowercase hex digits, and nothing else */
bool sandbox_git_is_oid(const char *s);
/* the repository has the object id, loose or in one of its packs */
bool sandbox_git_object_present(int common, const char *id);
/* every new id of the reflog text's lines is an object the repository has */
bool sandbox_git_reflog_present(int common, const char *log);

#endif
