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
#include <unistd.h>

#include "sandbox.h"
#include "utils.h"

/* --- git ------------------------------------------------------------------------------------- */

static char *read_first_line(const char *path) {
  cleanup_error fsrun_error_t err = NULL;
  char *text = NULL;
  if (read_file_at(AT_FDCWD, path, &text, NULL, &err) < 0)
    return NULL;
  text[strcspn(text, "\r\n")] = '\0';
  return text;
}

/* path, relative to base when it is not absolute, resolved */
static char *resolve_against(const char *base, const char *path) {
  cleanup_free char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base, path);
  return realpath(joined, NULL);
}

int sandbox_git_dirs(const char *worktree, char **common_dir, char **worktree_git_dir,
                     fsrun_error_t *err) {
  cleanup_free char *dotgit = xasprintf("%s/.git", worktree);
  cleanup_free char *line = NULL;
  cleanup_free char *gitdir = NULL;
  cleanup_free char *commondir_file = NULL;
  cleanup_free char *commondir = NULL;
  struct stat st;

  *common_dir = *worktree_git_dir = NULL;
  if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode))
    return 0; /* a plain directory, or a repository whose .git is inside the worktree */
  line = read_first_line(dotgit);
  if (line == NULL || strncmp(line, "gitdir:", 7) != 0)
    return fsrun_error_make(err, 0, "worktree `%s`: .git is a file but not `gitdir: PATH`",
                            worktree);
  {
    const char *p = line + 7;
    while (*p == ' ' || *p == '\t')
      p++;
    gitdir = resolve_against(worktree, p);
    if (gitdir == NULL)
      return fsrun_error_errno(err, "worktree `%s`: git dir `%s`", worktree, p);
  }
  commondir_file = xasprintf("%s/commondir", gitdir);
  commondir = read_first_line(commondir_file);
  if (commondir != NULL && commondir[0] != '\0') {
    char *common = resolve_against(gitdir, commondir);
    if (common == NULL)
      return fsrun_error_errno(err, "worktree `%s`: git common dir `%s`", worktree, commondir);
    *common_dir = common;
    if (!path_within(gitdir, common))
      *worktree_git_dir = steal_ptr(&gitdir);
  } else {
    /* a separate git dir (`git init --separate-git-dir`): it is the common dir */
    *common_dir = steal_ptr(&gitdir);
  }
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

/* the `.git` file of each submodule checkout that DIR's .gitmodules lists, and theirs in turn */
static void protect_submodule_git_files(const char *dir, struct mount_list *l, int depth) {
  cleanup_free char *gitmodules = xasprintf("%s/.gitmodules", dir);
  cleanup_file FILE *f = NULL;
  cleanup_free char *line = NULL;
  size_t cap = 0;
  if (depth > GIT_PROTECT_MAX_DEPTH || (f = fopen(gitmodules, "re")) == NULL)
    return;
  while (getline(&line, &cap, f) > 0) {
    cleanup_free char *sub = NULL;
    cleanup_free char *dot_git = NULL;
    char *v = line + strspn(line, " \t");
    size_t n;
    /* path = SUB */
    if (strncmp(v, "path", 4) != 0)
      continue;
    v += 4 + strspn(v + 4, " \t");
    if (*v != '=')
      continue;
    v += 1 + strspn(v + 1, " \t");
    n = strcspn(v, "\r\n");
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
      n--;
    v[n] = '\0';
    /* inside the checkout only */
    if (n == 0 || v[0] == '/' || strstr(v, "..") != NULL)
      continue;
    sub = xasprintf("%s/%s", dir, v);
    dot_git = xasprintf("%s/.git", sub);
    protect_file(dot_git, l);
    protect_submodule_git_files(sub, l, depth + 1);
  }
}

/* a linked worktree's own git dir: its config (read with extensions.worktreeConfig) and the git
 * dirs of its submodules */
static void protect_worktree_git_dir(const char *git_dir, struct mount_list *l) {
  cleanup_free char *worktree_config = xasprintf("%s/config.worktree", git_dir);
  cleanup_free char *modules = xasprintf("%s/modules", git_dir);
  protect_file(worktree_config, l);
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
  protect_submodule_git_files(worktree, l, 0);
}
