/* The git side of the sandbox: where a worktree's git dirs are, and the mounts that keep what the
 * host's git would execute out of the sandbox's reach. */
#include "sandbox-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "state-root.h"
#include "utils.h"

/* --- git ------------------------------------------------------------------------------------- */

int sandbox_git_dirs(const char *worktree, char **common_dir, char **worktree_git_dir,
                     fsrun_error_t *err) {
  struct sandbox_git_layout l;
  *common_dir = *worktree_git_dir = NULL;
  if (sandbox_git_layout_find(worktree, &l, err) < 0)
    return fsrun_error_code(err);
  /* a main checkout's git dir is inside the worktree: nothing outside it is needed */
  if (l.common_dir != NULL && l.admin[0] != '\0')
    *common_dir = xstrdup(l.common_dir);
  sandbox_git_layout_free(&l);
  return 0;
}

/* The host's git runs what the repository's config and hooks name (core.fsmonitor, core.pager,
 * hooks/pre-commit, ...) the next time someone uses it outside the sandbox. Commits need the common
 * dir writable, so what git would execute is laid over read-only: the config, the hooks directory
 * (an empty one where the repository has none, or the sandbox could create it), and the worktree's
 * `.git` file, which could otherwise be pointed at a git dir of the sandbox's making. Submodules
 * have git dirs of their own (modules/NAME under the common dir, and under a linked worktree's git
 * dir) and `.git` files in their checkouts: they get the same, as deep as they nest. */
#define GIT_PROTECT_MAX_DEPTH  8
#define GIT_PROTECT_MAX_MOUNTS 512

static void protect_file(const char *path, struct mount_list *l) {
  static const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};
  struct stat st;
  if (l->len < GIT_PROTECT_MAX_MOUNTS && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
    add_mount(l, path, "bind", path, ro_bind);
}

static void protect_modules(const char *modules, struct mount_list *l, int depth);

/* a git dir's config and hooks, then the git dirs of its submodules */
static void protect_git_dir(const char *git_dir, struct mount_list *l, int depth) {
  static const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};
  cleanup_free char *config = xasprintf("%s/config", git_dir);
  cleanup_free char *hooks = xasprintf("%s/hooks", git_dir);
  cleanup_free char *modules = xasprintf("%s/modules", git_dir);
  struct stat st;
  cleanup_free char *worktree_config = xasprintf("%s/config.worktree", git_dir);
  protect_file(config, l);
  protect_file(worktree_config, l);
  if (l->len < GIT_PROTECT_MAX_MOUNTS) {
    if (lstat(hooks, &st) == 0 && S_ISDIR(st.st_mode))
      add_mount(l, hooks, "bind", hooks, ro_bind);
    else if (lstat(hooks, &st) < 0 && errno == ENOENT)
      add_mount(l, hooks, "bind", SANDBOX_EMPTY_DIR, ro_bind);
  }
  protect_modules(modules, l, depth + 1);
}

/* modules/ holds a git dir per submodule, under the submodule's name, which may contain
 * slashes: a directory with a HEAD file is a git dir, any other is walked into */
static void protect_modules(const char *modules, struct mount_list *l, int depth) {
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  if (depth > GIT_PROTECT_MAX_DEPTH || (d = opendir(modules)) == NULL)
    return;
  while ((e = readdir(d)) != NULL) {
    cleanup_free char *path = NULL;
    cleanup_free char *head = NULL;
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    path = xasprintf("%s/%s", modules, e->d_name);
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
      continue;
    head = xasprintf("%s/HEAD", path);
    if (lstat(head, &st) == 0)
      protect_git_dir(path, l, depth);
    else
      protect_modules(path, l, depth + 1);
  }
}

/* git's own .gitmodules stays far below this; a bigger one is not read */
#define GITMODULES_MAX (1024 * 1024)

/* "path = SUB" of one .gitmodules line: SUB inside the checkout, else NULL */
static const char *submodule_path(char *line) {
  char *v = line + strspn(line, " \t");
  size_t n;
  if (strncmp(v, "path", 4) != 0)
    return NULL;
  v += 4 + strspn(v + 4, " \t");
  if (*v != '=')
    return NULL;
  v += 1 + strspn(v + 1, " \t");
  n = strcspn(v, "\r\n");
  while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    n--;
  v[n] = '\0';
  if (n == 0 || v[0] == '/' || strstr(v, "..") != NULL)
    return NULL;
  return v;
}

/* the `.git` file of each submodule checkout that DIR's .gitmodules lists, and theirs in turn.
 * The command wrote .gitmodules: read beneath DIR's fd, through no link, a regular file of bounded
 * size (a fifo there made every later set-up wait forever, a link to /dev/zero grew without end) */
static void protect_submodule_git_files(int dir_fd, const char *dir, struct mount_list *l,
                                        int depth) {
  cleanup_free char *text = NULL;
  char *rest, *line;
  if (depth > GIT_PROTECT_MAX_DEPTH ||
      sandbox_git_read_max(dir_fd, ".gitmodules", GITMODULES_MAX, &text) < 0)
    return;
  rest = text;
  while ((line = strsep(&rest, "\n")) != NULL) {
    cleanup_free char *sub = NULL;
    cleanup_free char *dot_git = NULL;
    cleanup_close int sub_fd = -1;
    const char *v = submodule_path(line);
    if (v == NULL)
      continue;
    sub = xasprintf("%s/%s", dir, v);
    dot_git = xasprintf("%s/.git", sub);
    protect_file(dot_git, l);
    sub_fd = sandbox_git_open_beneath(dir_fd, v, O_PATH | O_DIRECTORY, 0);
    if (sub_fd >= 0)
      protect_submodule_git_files(sub_fd, sub, l, depth + 1);
  }
}

/* a linked worktree's own git dir: its config (read with extensions.worktreeConfig) and the git
 * dirs of its submodules */
static void protect_worktree_git_dir(const char *git_dir, struct mount_list *l) {
  cleanup_free char *worktree_config = xasprintf("%s/config.worktree", git_dir);
  cleanup_free char *modules = xasprintf("%s/modules", git_dir);
  cleanup_free char *commondir = xasprintf("%s/commondir", git_dir);
  cleanup_free char *gitdir = xasprintf("%s/gitdir", git_dir);
  protect_file(worktree_config, l);
  /* where git takes the common dir (and so the config) from, and the way back to the checkout */
  protect_file(commondir, l);
  protect_file(gitdir, l);
  protect_modules(modules, l, 1);
}

/* every linked worktree's git dir under the common dir's worktrees/, this one's and the others' */
static void protect_worktrees(const char *common_dir, struct mount_list *l) {
  cleanup_free char *dir = xasprintf("%s/worktrees", common_dir);
  cleanup_dir DIR *d = opendir(dir);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    cleanup_free char *path = NULL;
    struct stat st;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    path = xasprintf("%s/%s", dir, e->d_name);
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      protect_worktree_git_dir(path, l);
  }
}

void sandbox_git_protect(const char *worktree, const char *common_dir, const char *wt_git_dir,
                         struct mount_list *l) {
  cleanup_free char *dot_git = xasprintf("%s/.git", worktree);
  cleanup_close int wt_fd = -1;
  struct stat st;
  protect_file(dot_git, l);
  /* a main checkout: its git dir is inside the worktree, and writable with it */
  if (common_dir == NULL && lstat(dot_git, &st) == 0 && S_ISDIR(st.st_mode)) {
    protect_git_dir(dot_git, l, 0);
    protect_worktrees(dot_git, l);
  }
  if (common_dir != NULL) {
    protect_git_dir(common_dir, l, 0);
    protect_worktrees(common_dir, l);
  }
  /* a worktree git dir outside the common dir (bound on its own) */
  if (wt_git_dir != NULL)
    protect_worktree_git_dir(wt_git_dir, l);
  wt_fd = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (wt_fd >= 0)
    protect_submodule_git_files(wt_fd, worktree, l, 0);
}

/* *path, when it begins with the directory from, begins with to instead */
static void replace_top(char **path, const char *from, const char *to) {
  size_t n = strlen(from);
  char *replaced;
  if (strncmp(*path, from, n) != 0 || ((*path)[n] != '/' && (*path)[n] != '\0'))
    return;
  replaced = xasprintf("%s%s", to, *path + n);
  free(*path);
  *path = replaced;
}

/* the items of l from first on named by from (our fd's name) are named by to instead */
static void rename_items(struct mount_list *l, size_t first, const char *from, const char *to) {
  for (size_t i = first; i < l->len; i++) {
    replace_top(&l->items[i].destination, from, to);
    replace_top(&l->items[i].source, from, to);
  }
}

void sandbox_git_protect_checked(const char *common_dir, int common_fd, struct mount_list *l) {
  char by_fd[32];
  size_t first = l->len;
  /* our fd's name in the host's procfs leads to that object whatever its path shows now */
  snprintf(by_fd, sizeof(by_fd), "/proc/self/fd/%d", common_fd);
  protect_git_dir(by_fd, l, 0);
  protect_worktrees(by_fd, l);
  rename_items(l, first, by_fd, common_dir);
}

void sandbox_git_protect_all_checked(const char *worktree, int top_fd, const char *common_dir,
                                     int common_fd, struct mount_list *l) {
  char top[32], common[32];
  size_t first = l->len;
  snprintf(top, sizeof(top), "/proc/self/fd/%d", top_fd);
  snprintf(common, sizeof(common), "/proc/self/fd/%d", common_fd);
  /* a main checkout's common dir is its `.git`: listed once, as the common dir */
  sandbox_git_protect(top, common, NULL, l);
  rename_items(l, first, top, worktree);
  rename_items(l, first, common, common_dir);
}

/* --- the overlay over the common dir (a `fsrun sandbox` run) --------------------------------- */

/* a refname of ours to touch: refs/..., no "..", no empty or dot-led component, no odd bytes */
bool sandbox_git_refname_ok(const char *ref) {
  if (strncmp(ref, "refs/", 5) != 0 || strstr(ref, "..") != NULL || strstr(ref, "//") != NULL ||
      strstr(ref, "/.") != NULL || strstr(ref, ".lock") != NULL)
    return false;
  for (const char *p = ref; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == '\\' || *p == ':' || *p == '~' || *p == '^' ||
        *p == '?' || *p == '*' || *p == '[' || *p == 0x7f)
      return false;
  return ref[strlen(ref) - 1] != '/';
}

/* where the repository is, checked (sandbox-git-layout.c); false: no overlay (no repository, or
 * a `.git` file outside git's layout, which sandbox_git_dirs refused already) */
static bool git_layout(const char *worktree, struct sandbox_git_layout *l) {
  cleanup_error fsrun_error_t err = NULL;
  if (sandbox_git_layout_find(worktree, l, &err) < 0 || l->common_dir == NULL) {
    sandbox_git_layout_free(l);
    return false;
  }
  return true;
}

/* the ref's value on the host: the loose file, else its line in packed-refs; "" when it has none */
char *sandbox_git_ref_value(int common_fd, const char *ref) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *packed = NULL;
  char *text = NULL;
  size_t n = strlen(ref);
  if (sandbox_git_read_nofollow(common_fd, ref, &text) == 0) {
    text[strcspn(text, "\r\n")] = '\0';
    return text;
  }
  if (sandbox_git_read_nofollow(common_fd, "packed-refs", &packed) < 0)
    return xstrdup("");
  for (char *l = packed; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    char *sp = strchr(l, ' ');
    size_t len = strcspn(l, "\n");
    if (sp != NULL && sp < l + len && (size_t)(l + len - sp - 1) == n &&
        strncmp(sp + 1, ref, n) == 0)
      return strndup(l, (size_t)(sp - l));
  }
  return xstrdup("");
}

static void ref_watch(struct sandbox_git_run *g, int common_fd, const char *ref) {
  struct sandbox_git_ref *r = &g->refs[g->n_refs++];
  cleanup_free char *log = xasprintf("logs/%s", ref);
  struct stat st;
  r->name = xstrdup(ref);
  r->before = sandbox_git_ref_value(common_fd, ref);
  r->log_size = fstatat(common_fd, log, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
                    ? (int64_t)st.st_size
                    : -1;
}

static bool overlay_path_ok(const char *path) {
  return strpbrk(path, ",:\\") == NULL;
}

int sandbox_git_prepare(struct sandbox_git_run *g, const char *state_root, const char *id,
                        const char *worktree, const oci_strv *writable, fsrun_error_t *err) {
  struct sandbox_git_layout l;
  bool found = git_layout(worktree, &l);
  /* a lookup of this set-up found other objects than its first (review29 G6): the config's binds
   * may be of another repository than this overlay would cover */
  if (sandbox_git_layout_memo_changed()) {
    if (found)
      sandbox_git_layout_free(&l);
    found = false;
  }
  if (!found) {
    memset(g, 0, sizeof(*g));
    g->common_fd = -1;
    if (sandbox_git_layout_memo_changed())
      return fsrun_error_make(err, EAGAIN,
                              "worktree `%s`: its `.git` or git common dir changed while the "
                              "sandbox was set up; run it again",
                              worktree);
    return 0;
  }
  return sandbox_git_prepare_at(g, state_root, id, worktree, writable, -1, &l, err);
}

/* the refs and the config's pointers now, through the checked common dir and top (-1: a top
 * checked now, sandbox_git_config_paths) */
static void record_before(struct sandbox_git_run *g, const char *worktree, int top) {
  cleanup_free char *head = NULL;
  cleanup_free char *head_path = g->admin[0] ? xasprintf("%s/HEAD", g->admin) : xstrdup("HEAD");
  if (sandbox_git_read_nofollow(g->common_fd, head_path, &head) == 0 &&
      strncmp(head, "ref: refs/heads/", 16) == 0) {
    head[strcspn(head, "\r\n")] = '\0';
    if (sandbox_git_refname_ok(head + 5))
      g->branch = xstrdup(head + 5);
  }
  if (g->branch != NULL)
    ref_watch(g, g->common_fd, g->branch);
  ref_watch(g, g->common_fd, "refs/stash");
  sandbox_git_index_before(g);
  /* held for the reads alone, not through the run: an fd of the host's tree */
  if (top >= 0)
    sandbox_git_top_hold(g, fcntl(top, F_DUPFD_CLOEXEC, 0));
  sandbox_git_config_paths(g, worktree);
  sandbox_git_top_drop(g);
}

int sandbox_git_prepare_at(struct sandbox_git_run *g, const char *state_root, const char *id,
                           const char *worktree, const oci_strv *writable, int top,
                           struct sandbox_git_layout *l, fsrun_error_t *err) {
  struct stat st;

  memset(g, 0, sizeof(*g));
  g->writable = writable;
  g->common_dir = steal_ptr(&l->common_dir);
  g->admin = steal_ptr(&l->admin);
  g->common_fd = steal_fd(&l->common_fd);
  sandbox_git_layout_free(l);
  if (fstat(g->common_fd, &st) < 0) {
    fsrun_error_errno(err, "sandbox: git: stat the common dir `%s`", g->common_dir);
    sandbox_git_run_free(g);
    return fsrun_error_code(err);
  }
  g->common_dev = (uint64_t)st.st_dev;
  g->common_ino = (uint64_t)st.st_ino;
  if (!overlay_path_ok(g->common_dir) || !overlay_path_ok(state_root)) {
    sandbox_git_run_free(g);
    return fsrun_error_make(err, 0,
                            "sandbox: git: `%s`: a `,`, `:` or `\\` in the path of the "
                            "git dir or the state root cannot be given to overlayfs",
                            g->common_dir ? g->common_dir : state_root);
  }
  record_before(g, worktree, top);
  clock_gettime(CLOCK_REALTIME, &g->start);
  /* file times come from a coarse clock, up to a tick behind this one */
  if (g->start.tv_nsec >= 20000000)
    g->start.tv_nsec -= 20000000;
  else
    g->start.tv_sec -= 1, g->start.tv_nsec += 1000000000 - 20000000;
  if (state_root_make(state_root, err) < 0 ||
      sandbox_git_make_run_dir(g, state_root, id, err) < 0) {
    sandbox_git_run_free(g);
    return fsrun_error_code(err);
  }
  return 0;
}

static void set_overlay(oci_mount *m, const struct sandbox_git_run *g, bool userns) {
  cleanup_free char *lower = xasprintf("lowerdir=%s", g->common_dir);
  cleanup_free char *upper = xasprintf("upperdir=%s/upper", g->run_dir);
  cleanup_free char *work = xasprintf("workdir=%s/work", g->run_dir);
  free(m->type);
  free(m->source);
  oci_strv_free(&m->options);
  memset(&m->options, 0, sizeof(m->options));
  m->type = xstrdup("overlay");
  m->source = xstrdup("overlay");
  m->options.items = xmalloc0(sizeof(char *));
  /* the lower layer is mounted by the checked object, not by this path (mounts.c) */
  m->has_source_id = true;
  m->source_dev = g->common_dev;
  m->source_ino = g->common_ino;
  oci_strv_push(&m->options, lower);
  oci_strv_push(&m->options, upper);
  oci_strv_push(&m->options, work);
  if (userns)
    oci_strv_push(&m->options, "userxattr");
  /* the upper dir is read once the run has ended, then removed: it need not reach the disk (the
   * sync at unmount; an overlay mount, one write and the unmount took 3-7 ms less with it, on ext4)
   */
  oci_strv_push(&m->options, "volatile");
  oci_strv_push(&m->options, "nosuid");
  oci_strv_push(&m->options, "nodev");
}

/* The mount at the common dir: the linked worktree's read-write bind of it, else (a main checkout)
 * a new entry, after the worktree's bind and before what is mounted inside the git dir. */
static oci_mount *common_dir_mount(oci_config *c, const char *common_dir) {
  size_t i, at = c->n_mounts;
  oci_mount *items;
  for (i = 0; i < c->n_mounts; i++) {
    oci_mount *m = &c->mounts[i];
    if (strcmp(m->destination, common_dir) == 0 && strcmp(m->type, "bind") == 0)
      return m;
    if (at == c->n_mounts && path_within(m->destination, common_dir))
      at = i;
  }
  items = realloc(c->mounts, sizeof(oci_mount) * (c->n_mounts + 1));
  if (items == NULL)
    abort();
  c->mounts = items;
  memmove(&items[at + 1], &items[at], sizeof(oci_mount) * (c->n_mounts - at));
  memset(&items[at], 0, sizeof(oci_mount));
  items[at].destination = xstrdup(common_dir);
  items[at].type = xstrdup("bind");
  items[at].source = xstrdup(common_dir);
  c->n_mounts++;
  return &items[at];
}

void sandbox_git_overlay_config(const struct sandbox_git_run *g, oci_config *c, bool userns) {
  if (g->run_dir != NULL)
    set_overlay(common_dir_mount(c, g->common_dir), g, userns);
}

void sandbox_git_read_only_config(const char *worktree, oci_config *c, bool userns) {
  static const char *const ro_rbind[] = {"rbind", "rro", "rnosuid", "rnodev", NULL};
  static const char *const ro_plain[] = {"bind", "ro", "nosuid", "nodev", NULL};
  struct sandbox_git_layout l;
  oci_mount *m;
  if (!git_layout(worktree, &l))
    return; /* no repository */
  if (!overlay_path_ok(l.common_dir)) {
    sandbox_git_layout_free(&l);
    return; /* exec-git.c covers no other layout: the read-write bind stays */
  }
  m = common_dir_mount(c, l.common_dir);
  sandbox_git_layout_free(&l);
  oci_strv_free(&m->options);
  memset(&m->options, 0, sizeof(m->options));
  m->options.items = xmalloc0(sizeof(char *));
  for (const char *const *o = userns ? ro_rbind : ro_plain; *o != NULL; o++)
    oci_strv_push(&m->options, *o);
}

void sandbox_git_run_free(struct sandbox_git_run *g) {
  if (g->run_dir != NULL)
    sandbox_git_remove_run_dir(g);
  if (g->common_dir != NULL && g->common_fd >= 0)
    close(g->common_fd);
  free(g->common_dir);
  free(g->admin);
  free(g->branch);
  free(g->run_dir);
  for (size_t i = 0; i < g->n_refs; i++) {
    free(g->refs[i].name);
    free(g->refs[i].before);
  }
  git_index_free(&g->index_before);
  git_index_kept_free(&g->index_kept);
  sandbox_git_strv_free(g->gitlinks_after);
  sandbox_git_strv_free(g->discarded);
  sandbox_git_strv_free(g->tamper);
  sandbox_git_strv_free(g->host_git_args);
  sandbox_git_pointers_free(g);
  sandbox_git_dotgits_free(&g->dotgits_before);
  sandbox_git_dotgits_free(&g->dotgits_after);
  memset(g, 0, sizeof(*g));
  g->common_fd = -1;
}
