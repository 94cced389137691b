/* Which git dirs a worktree's `.git` leads to, decided on the host before the run. A command in a
 * plain-directory worktree can write any `.git` file for the next run, so a `.git` file is trusted
 * only in git's linked-worktree layout, whose back-pointer lives where the command cannot write:
 * `gitdir: <common>/worktrees/<name>`, that dir's `commondir` leading back to `<common>`, its
 * `gitdir` file naming this very `.git` (the same inode), and `<common>` holding HEAD, objects/ and
 * refs/. Every step after the `.git` file's own text is checked through fds. */
#include "sandbox-git.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-paths.h"
#include "utils.h"

#define GIT_FILE_MAX 4096

static bool same_inode(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* the path a `.git` file at fd names, read as git reads it (sandbox_git_gitfile_parse); NULL when
 * it is no short regular file or no path git and fsrun both read the same (review27 E2) */
static char *gitfile_path_fd(int fd) {
  struct stat st;
  cleanup_free char *text = NULL;
  const char *path;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > GIT_FILE_MAX)
    return NULL;
  text = xmalloc0((size_t)st.st_size + 1);
  if (safe_read_all(fd, text, (size_t)st.st_size) != (ssize_t)st.st_size ||
      sandbox_git_gitfile_parse(text, (size_t)st.st_size, &path) != SANDBOX_GIT_GITFILE_PATH)
    return NULL;
  return xstrdup(path);
}

/* path, relative to base when it is not absolute, resolved */
static char *resolve_against(const char *base, const char *path) {
  cleanup_free char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base, path);
  return realpath(joined, NULL);
}

static int not_linked_layout(const char *worktree, const char *gitdir, const char *why,
                             fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "worktree `%s`: .git names git dir `%s`, which %s: only git's "
                          "linked-worktree layout is trusted (docs/sandbox.md, \"Git\")",
                          worktree, gitdir, why);
}

/* <common>/worktrees/<name>: the common dir's path, or NULL */
static char *common_of_admin(const char *gitdir) {
  cleanup_free char *parent = xstrdup(gitdir);
  char *slash = strrchr(parent, '/');
  if (slash == NULL || slash == parent)
    return NULL;
  *slash = '\0';
  slash = strrchr(parent, '/');
  if (slash == NULL || slash == parent || strcmp(slash + 1, "worktrees") != 0)
    return NULL;
  *slash = '\0';
  return xstrdup(parent);
}

static bool holds_repository(int common_fd) {
  struct stat st;
  return fstatat(common_fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         fstatat(common_fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
         fstatat(common_fd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* an admin file's path as git reads it (commondir: trailing LF and CR stripped, the rest is the
 * path); false when what is left holds a line break or other control character (review27 E2) */
static bool git_line(char *text) {
  size_t n = strlen(text);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
    text[--n] = '\0';
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
      return false;
  return true;
}

bool sandbox_git_points_back(int admin_fd, const char *gitdir, const struct stat *dotgit,
                             const char *own) {
  cleanup_free char *back = NULL;
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;
  struct stat st;
  if (sandbox_git_read_nofollow(admin_fd, "gitdir", &back) < 0)
    return false;
  if (!git_line(back))
    return false;
  if (own != NULL && strcmp(back, own) == 0)
    return true;
  path = back[0] == '/' ? xstrdup(back) : xasprintf("%s/%s", gitdir, back);
  fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  return fd >= 0 && fstat(fd, &st) == 0 && same_inode(&st, dotgit);
}

/* a `.git` file: its gitdir must be git's admin dir of this worktree (checked: the caller's fd of
 * the worktree's top, which dotgit_fd was opened from) */
static int linked_layout(const char *worktree, int dotgit_fd, bool checked,
                         struct sandbox_git_layout *out, fsrun_error_t *err) {
  cleanup_free char *own = checked ? xasprintf("%s/.git", worktree) : NULL;
  cleanup_free char *named = gitfile_path_fd(dotgit_fd);
  cleanup_free char *gitdir = NULL;
  cleanup_free char *common = NULL;
  cleanup_free char *commondir = NULL;
  cleanup_free char *via_commondir = NULL;
  cleanup_close int admin_fd = -1;
  cleanup_close int common_fd = -1;
  cleanup_close int beneath_fd = -1;
  struct stat dotgit, admin, beneath;

  if (named == NULL || fstat(dotgit_fd, &dotgit) < 0)
    return fsrun_error_make(err, 0, "worktree `%s`: .git is a file but not `gitdir: PATH`",
                            worktree);
  if ((gitdir = resolve_against(worktree, named)) == NULL)
    return fsrun_error_errno(err, "worktree `%s`: git dir `%s`", worktree, named);
  if (path_within(gitdir, worktree))
    return not_linked_layout(worktree, gitdir, "is inside the worktree", err);
  if ((common = common_of_admin(gitdir)) == NULL)
    return not_linked_layout(worktree, gitdir, "is not COMMON/worktrees/NAME", err);
  admin_fd = open(gitdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  common_fd = open(common, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (admin_fd < 0 || common_fd < 0 || fstat(admin_fd, &admin) < 0)
    return fsrun_error_errno(err, "worktree `%s`: git dir `%s`", worktree, gitdir);
  /* the admin dir is the common dir's, by fd: no link in between */
  beneath_fd =
      sandbox_git_open_beneath(common_fd, gitdir + strlen(common) + 1, O_PATH | O_DIRECTORY, 0);
  if (beneath_fd < 0 || fstat(beneath_fd, &beneath) < 0 || !same_inode(&admin, &beneath))
    return not_linked_layout(worktree, gitdir, "is not COMMON/worktrees/NAME", err);
  if (sandbox_git_read_nofollow(admin_fd, "commondir", &commondir) < 0)
    return not_linked_layout(worktree, gitdir, "has no commondir file", err);
  via_commondir = git_line(commondir) && commondir[0] ? resolve_against(gitdir, commondir) : NULL;
  if (via_commondir == NULL || strcmp(via_commondir, common) != 0)
    return not_linked_layout(worktree, gitdir, "has a commondir that does not lead to `..`/`..`",
                             err);
  if (!holds_repository(common_fd))
    return not_linked_layout(worktree, gitdir, "is not in a repository (HEAD, objects/, refs/)",
                             err);
  if (!sandbox_git_points_back(admin_fd, gitdir, &dotgit, own))
    return not_linked_layout(worktree, gitdir, "has no gitdir file naming this worktree's .git",
                             err);
  out->common_dir = steal_ptr(&common);
  out->admin = xstrdup(gitdir + strlen(out->common_dir) + 1);
  out->common_fd = steal_fd(&common_fd);
  return 0;
}

/* a `.git` directory: the main checkout, its own common dir; its path checked to name that object,
 * unless the caller checked wt_fd (exec: the path is then the one the container binds, where the
 * overlay's lower layer is looked up and checked again; on the host, reads go through the fd) */
static int main_layout(const char *worktree, int wt_fd, bool checked,
                       struct sandbox_git_layout *out, fsrun_error_t *err) {
  cleanup_free char *path = xasprintf("%s/.git", worktree);
  cleanup_close int fd = openat(wt_fd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat by_fd, by_path;
  char *real = checked ? steal_ptr(&path) : realpath(path, NULL);
  bool named = checked || (real != NULL && fd >= 0 && fstat(fd, &by_fd) == 0 &&
                           stat(real, &by_path) == 0 && same_inode(&by_fd, &by_path));
  if (fd < 0 || real == NULL || !named) {
    free(real);
    return fsrun_error_make(err, 0, "worktree `%s`: .git changed while it was looked at", worktree);
  }
  out->common_dir = real;
  out->admin = xstrdup("");
  out->common_fd = steal_fd(&fd);
  return 0;
}

/* the layout below wt_fd, the worktree's top (checked: by the caller) */
static int layout_at(const char *worktree, int wt_fd, bool checked, struct sandbox_git_layout *out,
                     fsrun_error_t *err) {
  cleanup_close int dotgit_fd = -1;
  struct stat st;

  memset(out, 0, sizeof(*out));
  out->common_fd = -1;
  dotgit_fd = openat(wt_fd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (dotgit_fd < 0 && (errno == ENOENT || errno == ELOOP))
    return 0; /* a plain directory (a `.git` link is no repository either) */
  if (dotgit_fd < 0)
    return fsrun_error_errno(err, "worktree `%s`: open .git", worktree);
  if (fstat(dotgit_fd, &st) < 0)
    return fsrun_error_errno(err, "worktree `%s`: .git", worktree);
  if (S_ISDIR(st.st_mode))
    return main_layout(worktree, wt_fd, checked, out, err);
  if (!S_ISREG(st.st_mode))
    return 0;
  return linked_layout(worktree, dotgit_fd, checked, out, err);
}

int sandbox_git_layout_find(const char *worktree, struct sandbox_git_layout *out,
                            fsrun_error_t *err) {
  cleanup_close int wt_fd = -1;
  int r;

  memset(out, 0, sizeof(*out));
  out->common_fd = -1;
  wt_fd = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (wt_fd < 0)
    return fsrun_error_errno(err, "worktree `%s`", worktree);
  if (sandbox_worktree_check(worktree, wt_fd, err) < 0)
    return fsrun_error_code(err);
  r = sandbox_git_layout_memo_take(worktree, wt_fd, out, err);
  if (r != 0)
    return r > 0 ? 0 : r; /* the set-up's first walk, its objects unchanged; or they changed */
  if (layout_at(worktree, wt_fd, false, out, err) < 0)
    return fsrun_error_code(err);
  if (sandbox_git_layout_memo_keep(worktree, wt_fd, out, err) < 0) {
    sandbox_git_layout_free(out);
    return fsrun_error_code(err);
  }
  return 0;
}

int sandbox_git_layout_find_at(const char *worktree, int top, struct sandbox_git_layout *out,
                               fsrun_error_t *err) {
  memset(out, 0, sizeof(*out));
  out->common_fd = -1;
  if (sandbox_worktree_check(worktree, top, err) < 0)
    return fsrun_error_code(err);
  return layout_at(worktree, top, true, out, err);
}

void sandbox_git_layout_free(struct sandbox_git_layout *l) {
  free(l->common_dir);
  free(l->admin);
  if (l->common_dir != NULL && l->common_fd >= 0)
    close(l->common_fd);
  memset(l, 0, sizeof(*l));
  l->common_fd = -1;
}
