/* `fsrun exec` into a task container of `fsrun bundle`: each exec gets what one `fsrun sandbox`
 * run gets (docs/sandbox.md, "Git in a task container"). The host side makes the per-run dir and
 * records the refs (sandbox_git_prepare); the exec child, inside the container's namespaces, takes
 * a mount namespace of its own with the overlay over the common dir (the container's read-write
 * bind of it is the lower layer) and the read-only binds over what the host's git executes on top;
 * after the reap the host side applies the allowlist and looks for nested repositories: those made
 * since the last walk of an exec into the container began (a process an exec left running may make
 * one after that exec's walk), or since this exec began when it is the first. */
#include "exec-git.h"

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "file-time.h"
#include "json-out.h"
#include "log.h"
#include "overlay-lower.h"
#include "sandbox-watchdog.h"
#include "sandbox.h"
#include "status.h"
#include "utils.h"

#define EXEC_RUN_SUFFIX ".exec-"
/* in the container's state dir, which no process of the container reaches: when the last finished
 * tamper walk of an exec into it began, "SECONDS NANOSECONDS\n" (CLOCK_REALTIME) */
#define TAMPER_SINCE_FILE "git-tamper-since"

/* the entries `<dir>/<run prefix><id>.exec-<pid>` whose fsrun is gone (all: every): the per-run
 * dirs of execs, removed in either place (sandbox_git_remove_leftover) */
static void remove_dead_runs(const char *dir, const char *run_prefix, const char *state_root,
                             const char *id, bool all) {
  cleanup_free char *prefix = xasprintf("%s%s" EXEC_RUN_SUFFIX, run_prefix, id);
  cleanup_dir DIR *d = opendir(dir);
  struct dirent *e;
  size_t n = strlen(prefix);
  while (d != NULL && (e = readdir(d)) != NULL) {
    char *end = NULL;
    long pid;
    if (strncmp(e->d_name, prefix, n) != 0)
      continue;
    pid = strtol(e->d_name + n, &end, 10);
    if (end == NULL || *end != '\0' || pid <= 0)
      continue;
    if (all || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
      sandbox_git_remove_leftover(state_root, e->d_name + strlen(run_prefix));
  }
}

/* the per-run dirs of `<id>.exec-<pid>` whose fsrun is gone (all: every): under the state root
 * and, an ordinary user's, in /dev/shm (sandbox-git-shm.c) */
void exec_git_remove_leftovers(const char *state_root, const char *id, bool all) {
  cleanup_free char *shm = sandbox_git_shm_prefix(state_root);
  remove_dead_runs(state_root, SANDBOX_GIT_RUN_DIR_PREFIX, state_root, id, all);
  if (shm != NULL) {
    char *name = strrchr(shm, '/');
    *name++ = '\0';
    remove_dead_runs(shm, name, state_root, id, all);
  }
}

/* after the walk that began at since (or, for the first exec, at its start): the next exec's
 * cutoff (a file changed in the same tick before the walk began is named by both walks: a false
 * alarm, not a miss) */
static void tamper_since_write(int state_dir_fd, const struct timespec *since) {
  char text[FILE_TIME_TEXT_MAX + 1];
  file_time_format(text, FILE_TIME_TEXT_MAX, since);
  strcat(text, "\n");
  exec_git_state_write(state_dir_fd, TAMPER_SINCE_FILE, text, strlen(text),
                       "the next exec's tamper walk starts at its own start");
}

void exec_git_state_write(int state_dir_fd, const char *name, const char *text, size_t len,
                          const char *if_not) {
  cleanup_error fsrun_error_t err = NULL;
  if (status_write_file_atomic(state_dir_fd, name, text, len, 0600, &err) < 0)
    log_warning("exec: git: %s: %s", err->msg, if_not);
}

bool exec_git_tamper_since(int state_dir_fd, struct timespec *since) {
  cleanup_free char *text = NULL;
  char *newline;
  if (sandbox_git_read_max(state_dir_fd, TAMPER_SINCE_FILE, 64, &text) < 0)
    return false; /* errno says why: ENOENT before the first exec */
  newline = strchr(text, '\n');
  if (newline != NULL && newline[1] == '\0')
    *newline = '\0'; /* the file ends in one */
  if (!file_time_parse(text, since)) {
    log_warning("git: `%s` of the container is not a time; the walk starts later",
                TAMPER_SINCE_FILE);
    errno = EINVAL;
    return false;
  }
  return true;
}

/* The walk's cutoff (g->run.start): the time the last finished walk began when that is earlier
 * (review19 #4: a repository planted after exec 1's walk has a ctime before exec 2's start). The
 * times read are only ever ones an earlier walk began at, so every time since the container's first
 * exec is some walk's to look at. */
static void tamper_since_read(struct exec_git *g) {
  struct timespec *start = &g->run.start, since;
  if (!exec_git_tamper_since(g->state_dir_fd, &since)) {
    /* the first exec: its own start, recorded now, so that the next exec's walk covers this one's
     * when this one is killed before its walk is done (review19 #15) */
    if (errno == ENOENT)
      tamper_since_write(g->state_dir_fd, start);
    return;
  }
  if (file_time_before(&since, start))
    *start = since;
}

/* The sandbox's watchdog, for the clean-up alone (no deadline, nothing killed), from before the
 * per-run dir is made: an exec SIGKILLed from here on has its per-run dir (as root a tmpfs mounted
 * on the host) unmounted and removed at once, not at the next exec or delete. The id it is given,
 * dot-led, is no container's (status_validate_id), so the clean-up deletes none. Best effort: no
 * watchdog leaves it to the next exec, as before. */
static void watch_run_dir(const struct fsrun_context *ctx, const char *run_id) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *watch_id = xasprintf(EXEC_GIT_WATCH_MARK "%s", run_id);
  sandbox_watchdog_fork(ctx);
  if (sandbox_watchdog_arm_container(watch_id, 0, &err) < 0)
    log_debug("exec: git: %s: a killed exec's per-run dir stays until the next exec", err->msg);
}

bool exec_git_watch_cleanup(const char *state_root, const char *watch_id) {
  size_t n = strlen(EXEC_GIT_WATCH_MARK);
  if (strncmp(watch_id, EXEC_GIT_WATCH_MARK, n) != 0)
    return false;
  sandbox_git_remove_leftover(state_root, watch_id + n);
  return true;
}

/* The container's process runs from its start on: what it plants in the worktree or rewrites in
 * the git config before the first exec is compared with the state at creation, not at that exec's
 * start (where it would already be the "before"). */
void exec_git_created(const oci_config *config, const char *worktree, int state_dir_fd) {
  cleanup_error fsrun_error_t err = NULL;
  struct sandbox_git_layout l;
  struct timespec now;
  oci_strv writable = {0};
  /* the clock file times come from, as a walk's start (sandbox_git_tamper) */
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  tamper_since_write(state_dir_fd, &now);
  /* one lookup of the layout for both records: each is of the same common dir */
  if (sandbox_git_layout_find(worktree, &l, &err) == 0 && l.common_dir != NULL) {
    exec_git_writable(config, worktree, &writable);
    exec_git_pointers_created(worktree, &writable, &l, state_dir_fd);
    exec_git_dotgits_created(worktree, &l, state_dir_fd);
  }
  oci_strv_free(&writable);
  sandbox_git_layout_free(&l);
}

/* An exec into a task container whose worktree is not the one create accepted, or whose git
 * layout cannot be found now, is refused, not run without the overlay, sync and walk and without
 * a word in --status-json (review25 C11): one line, exit 1, nothing started. */
static int refuse_unprotected(fsrun_error_t *err) {
  cleanup_free char *why = xstrdup((*err)->msg);
  return fsrun_error_make(err, 0,
                          "exec: git: %s; the command is not run without the git overlay, sync "
                          "and walk",
                          why);
}

int exec_git_prepare(struct exec_git *g, const struct fsrun_context *ctx, const char *id,
                     oci_config *config, fsrun_error_t *err) {
  const char *worktree;
  cleanup_free char *run_id = NULL;
  cleanup_close int top = -1;
  struct sandbox_git_layout layout;
  int r;

  memset(g, 0, sizeof(*g));
  g->run_dir_fd = -1;
  g->state_dir_fd = -1;
  if (oci_map_get(&config->annotations, EXEC_GIT_ANNOTATION) == NULL)
    return 0;
  g->state_dir_fd = status_dir_open(ctx, id, err);
  if (g->state_dir_fd < 0)
    return fsrun_error_wrap(err, "exec: git");
  if (exec_git_worktree_open(config, g->state_dir_fd, &worktree, &top, err) < 0)
    return refuse_unprotected(err);
  if (worktree == NULL)
    return 0; /* not a task container */
  /* below the top just checked, not by the worktree's name again, which others may swap in
   * between (review23 A1) */
  if (sandbox_git_layout_find_at(worktree, top, &layout, err) < 0) {
    sandbox_git_layout_free(&layout);
    return refuse_unprotected(err);
  }
  if (layout.common_dir == NULL)
    return 0; /* not a repository: the bundle's binds */
  exec_git_remove_leftovers(ctx->state_root, id, false);
  run_id = xasprintf("%s" EXEC_RUN_SUFFIX "%d", id, (int)getpid());
  watch_run_dir(ctx, run_id);
  /* the PATH entries in the container's writable binds are watched as in its worktree */
  exec_git_writable(config, worktree, &g->writable);
  r = sandbox_git_prepare_at(&g->run, ctx->state_root, run_id, worktree, &g->writable, top, &layout,
                             err);
  if (r < 0)
    return fsrun_error_code(err);
  g->worktree = xstrdup(worktree);
  /* only what the overlay hides (the binds outside the common dir are the container's already),
   * listed in the common dir sandbox_git_prepare checked, by its fd: a second lookup of the layout
   * or the dir's name could reach another repository's (review23 A1) */
  sandbox_git_protect_checked(g->run.common_dir, g->run.common_fd, &g->protect);
  g->userns = false;
  if (config->linux_ != NULL)
    for (size_t i = 0; i < config->linux_->n_namespaces; i++)
      if (strcmp(config->linux_->namespaces[i].type, "user") == 0)
        g->userns = true;
  g->run_dir_fd = open(g->run.run_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (g->run_dir_fd < 0)
    return fsrun_error_errno(err, "exec: git: open `%s`", g->run.run_dir);
  tamper_since_read(g);
  exec_git_pointers_load(&g->run, g->state_dir_fd);
  exec_git_dotgits_load(&g->run, g->state_dir_fd);
  return 0;
}

/* a bind of path onto itself, then read-only (nosuid, nodev: locked in a user namespace) */
static int bind_read_only(const char *path, fsrun_error_t *err) {
  if (mount(path, path, NULL, MS_BIND, NULL) < 0 ||
      mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
    return fsrun_error_errno(err, "exec: git: bind `%s` read-only", path);
  return 0;
}

/* a git dir without hooks/: an empty read-only one, so that the command cannot make it */
static int empty_read_only_dir(const char *path, fsrun_error_t *err) {
  if (mkdir(path, 0755) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "exec: git: mkdir `%s`", path);
  if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k") < 0)
    return fsrun_error_errno(err, "exec: git: an empty read-only `%s`", path);
  return 0;
}

int exec_git_child_grab(const struct exec_git *g, const struct init_ns *init, bool join_user,
                        int *proc_fds, fsrun_error_t *err) {
  int fd;
  /* our fds by name in the host's procfs: in the container, /proc has no self of ours */
  *proc_fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (*proc_fds < 0)
    return fsrun_error_errno(err, "exec: git: open /proc/self/fd");
  /* overlayfs takes an upper dir only from the mounter's mount namespace or from the root of a
   * detached mount: a copy of the per-run dir, made from a mount namespace of the container's user
   * namespace (the caps an ordinary user has there), that the container's setns does not drop */
  if (join_user && init_ns_join(init, CLONE_NEWUSER) < 0)
    return fsrun_error_errno(err, "exec: git: join the container's user namespace");
  if (join_user && unshare(CLONE_NEWNS) < 0)
    return fsrun_error_errno(err, "exec: git: unshare the mount namespace");
  /* by path: the fd would name the mount of the caller's namespace, not this one's copy */
  fd = (int)syscall(SYS_open_tree, AT_FDCWD, g->run.run_dir, OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW);
  if (fd < 0)
    return fsrun_error_errno(err, "exec: git: a detached copy of `%s`", g->run.run_dir);
  return fd;
}

/* The overlay over the checked common dir (lower): the lower layer and the mount point are that
 * object, upper/ and work/ are in the per-run dir (host paths the container cannot name), all by
 * fd, named in our fd dir of the host's procfs (the current directory). */
static int mount_overlay(const struct exec_git *g, int lower, int tree_fd) {
  cleanup_free char *opts = NULL;
  char target[16];
  int r;
  snprintf(target, sizeof(target), "%d", lower);
  opts = xasprintf("lowerdir=%d,upperdir=%d/upper,workdir=%d/work%s,volatile", lower, tree_fd,
                   tree_fd, g->userns ? ",userxattr" : "");
  r = mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts);
  if (r == 0 || errno != EINVAL)
    return r;
  /* older overlayfs (Linux 6.1) takes no layer from a detached mount (EINVAL): the per-run dir is
   * attached in our namespace first, at the common dir, where the overlay then goes over it (the
   * lower layer is the fd's directory, under both) */
  if (syscall(SYS_move_mount, tree_fd, "", lower, "",
              MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return -1;
  return mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts);
}

int exec_git_child_mount(const struct exec_git *g, int tree_fd, int proc_fds, fsrun_error_t *err) {
  cleanup_close int lower = -1;
  if (g->run_dir_fd < 0)
    return 0;
  if (unshare(CLONE_NEWNS) < 0)
    return fsrun_error_errno(err, "exec: git: unshare the mount namespace");
  /* nothing mounted here may reach the container's other processes (or the host) */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return fsrun_error_errno(err, "exec: git: make the mounts slaves");
  /* the common dir checked on the host, or none: here a path component that the container's
   * processes write may lead elsewhere by now */
  lower = overlay_lower_open(g->run.common_dir, g->run.common_dev, g->run.common_ino, err);
  if (lower < 0)
    return fsrun_error_wrap(err, "exec: git");
  if (fchdir(proc_fds) < 0)
    return fsrun_error_errno(err, "exec: git: enter /proc/self/fd");
  if (mount_overlay(g, lower, tree_fd) < 0)
    return fsrun_error_errno(err, "exec: git: mount the overlay over `%s`", g->run.common_dir);
  if (chdir("/") < 0)
    return fsrun_error_errno(err, "exec: git: chdir /");
  for (size_t i = 0; i < g->protect.len; i++) {
    const oci_mount *m = &g->protect.items[i];
    int r = strcmp(m->source, SANDBOX_EMPTY_DIR) == 0 ? empty_read_only_dir(m->destination, err)
                                                      : bind_read_only(m->destination, err);
    if (r < 0)
      return r;
  }
  return 0;
}

void exec_git_warn_list(const char *what, char **v) {
  cleanup_free char *said = xasprintf("%s: ", what);
  sandbox_git_warn_json_list("exec", said, v);
}

/* sandbox_git_finish's said: before hostGitArgs and the sync, which a command can make take
 * seconds (an exec killed during either has said the tamper) */
static void tamper_found(const struct sandbox_git_run *run, void *arg) {
  (void)arg;
  sandbox_git_warn_tamper("exec", run->tamper);
}

static void host_args_found(const struct sandbox_git_run *run, void *arg) {
  (void)arg;
  sandbox_git_warn_host_args("exec", run->host_git_args);
}

static const struct sandbox_git_said say_git = {.tamper = tamper_found,
                                                .host_args = host_args_found};

bool exec_git_active(const struct exec_git *g) {
  return g->run.run_dir != NULL;
}

char *exec_git_finish(struct exec_git *g) {
  struct strbuf json = {0};
  if (g->run.run_dir == NULL)
    return NULL;
  sandbox_git_finish(&g->run, g->worktree, &say_git);
  /* only once the sync is done: an exec killed during it leaves the cutoff where it was, and the
   * next exec's walk names again what this one found */
  tamper_since_write(g->state_dir_fd, &g->run.walk_began);
  exec_git_pointers_save(&g->run, g->state_dir_fd);
  exec_git_dotgits_save(&g->run, g->state_dir_fd);
  exec_git_warn_list("git: left out what the command wrote outside the task's allowlist",
                     g->run.discarded);
  sb_json_string_array(&json, "tamper", g->run.tamper);
  sb_json_string_array(&json, "hostGitArgs", g->run.host_git_args);
  sb_json_string_array(&json, "discarded", g->run.discarded);
  sb_puts(&json, g->left_running ? ",\"leftRunning\":true" : ",\"leftRunning\":false");
  return json.data;
}

void exec_git_free(struct exec_git *g) {
  if (g->run_dir_fd >= 0)
    close(g->run_dir_fd);
  if (g->state_dir_fd >= 0)
    close(g->state_dir_fd);
  g->run_dir_fd = -1;
  sandbox_git_run_free(&g->run); /* removes the per-run dir when finish did not */
  sandbox_watchdog_end();        /* only now: a kill before the removal is still cleaned up */
  for (size_t i = 0; i < g->protect.len; i++) {
    free(g->protect.items[i].destination);
    free(g->protect.items[i].type);
    free(g->protect.items[i].source);
    oci_strv_free(&g->protect.items[i].options);
  }
  free(g->protect.items);
  free(g->worktree);
  oci_strv_free(&g->writable);
  memset(g, 0, sizeof(*g));
  g->run_dir_fd = -1;
  g->state_dir_fd = -1;
}
