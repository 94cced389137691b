/* sandbox-git-own-repos.c: a nested `.git` file is read without waiting, whatever a process the
 * run left has put at its name since the walk's look saw a regular file (a FIFO there: an open
 * without O_NONBLOCK waited for a writer for ever, and the walk with it). What is there when it
 * is read decides: a FIFO, a directory or a link counts as a repository of its own (as the walk's
 * look counts one), a regular file by the git dir it names. As root and, in a child, as an
 * ordinary user (65534). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-git.h"
#include "scratch.h"
#include "tap.h"

/* a failure's bound only: an open that waits is interrupted (no SA_RESTART: EINTR) */
#define WAIT_MAX_S 30

struct fixture {
  char top[64];
  struct sandbox_git_run g;
};

static void on_alarm(int sig) {
  (void)sig;
}

/* top/rel made as a directory, a FIFO, or a regular file holding text */
static bool make(const struct fixture *f, const char *rel, mode_t type, const char *text) {
  char path[256];
  int fd;
  snprintf(path, sizeof(path), "%s/%s", f->top, rel);
  if (S_ISDIR(type))
    return mkdir(path, 0755) == 0;
  if (S_ISFIFO(type))
    return mkfifo(path, 0644) == 0;
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  return close(fd) == 0 && ok;
}

/* the `.git` of top/dir names a git dir outside the common dir, read with SIGALRM's bound */
static bool elsewhere(const struct fixture *f, const char *dir) {
  char path[256];
  struct sigaction sa = {.sa_handler = on_alarm};
  bool r;
  snprintf(path, sizeof(path), "%s/%s", f->top, dir);
  int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return false;
  sigaction(SIGALRM, &sa, NULL);
  alarm(WAIT_MAX_S);
  r = sandbox_git_gitfile_elsewhere(fd, &f->g);
  alarm(0);
  close(fd);
  return r;
}

/* every case once; its results as bits (bit i: case i answered as expected) */
static unsigned run_cases(const struct fixture *f) {
  unsigned ok = 0;
  ok |= (unsigned)elsewhere(f, "fifo") << 0;    /* a FIFO where a regular file was */
  ok |= (unsigned)elsewhere(f, "dir") << 1;     /* a directory */
  ok |= (unsigned)elsewhere(f, "link") << 2;    /* a link */
  ok |= (unsigned)elsewhere(f, "other") << 3;   /* names a git dir in the worktree */
  ok |= (unsigned)elsewhere(f, "common") << 4;  /* names the common dir itself (review27 E1) */
  ok |= (unsigned)!elsewhere(f, "text") << 5;   /* no gitdir: line */
  ok |= (unsigned)!elsewhere(f, "gone") << 6;   /* nothing there */
  ok |= (unsigned)!elsewhere(f, "module") << 7; /* names a submodule's git dir in the common dir */
  return ok;
}

static const char *const case_names[] = {
    "a FIFO put at a `.git` a look saw as a regular file: read without waiting, a repository of "
    "its own",
    "a directory there now: a repository of its own",
    "a link there now: a repository of its own",
    "a `.git` file naming a git dir in the worktree: elsewhere",
    "a `.git` file naming the common dir itself: a repository of its own (review27 E1)",
    "a `.git` file without a gitdir line: none",
    "no `.git` there now: none",
    "a `.git` file naming a submodule's git dir whose config names nothing: not a repository of "
    "its own"};

static void report(unsigned ok, const char *who) {
  for (size_t i = 0; i < sizeof(case_names) / sizeof(case_names[0]); i++)
    tap_ok(ok & (1u << i), "%s: %s", who, case_names[i]);
}

/* the cases in a child that runs as 65534 (no supplementary groups); its exit status the bits
 * (eight: all of them), a failure to become 65534 a signal */
static void as_ordinary_user(const struct fixture *f) {
  int status;
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
        setresuid(65534, 65534, 65534) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
      abort(); /* dumpable: its /proc/self/fd is its own again, as an ordinary fsrun's is */
    _exit((int)run_cases(f));
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    tap_ok(false, "ordinary user: the child ran the cases (status %d)", status);
    return;
  }
  report((unsigned)WEXITSTATUS(status), "ordinary user");
}

/* top: gitcommon (the common dir, with a submodule's git dir modules/m), gd (a git dir
 * elsewhere), and a directory per case with the `.git` the case finds */
static bool setup(struct fixture *f) {
  static const char *const dirs[] = {"gitcommon",
                                     "gitcommon/modules",
                                     "gitcommon/modules/m",
                                     "gd",
                                     "fifo",
                                     "dir",
                                     "link",
                                     "other",
                                     "common",
                                     "text",
                                     "gone",
                                     "module"};
  char names_common[160], link[160];
  bool made = chmod(f->top, 0755) == 0;
  snprintf(names_common, sizeof(names_common), "gitdir: %s/gitcommon\n", f->top);
  snprintf(link, sizeof(link), "%s/link/.git", f->top);
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
    made = made && make(f, dirs[i], S_IFDIR, NULL);
  return made && make(f, "fifo/.git", S_IFIFO, NULL) && make(f, "dir/.git", S_IFDIR, NULL) &&
         symlink("../gd", link) == 0 && make(f, "other/.git", S_IFREG, "gitdir: ../gd\n") &&
         make(f, "common/.git", S_IFREG, names_common) && make(f, "text/.git", S_IFREG, "x\n") &&
         make(f, "module/.git", S_IFREG, "gitdir: ../gitcommon/modules/m\n");
}

int main(void) {
  struct fixture f = {.top = "/tmp/fsrun-test-git-own-repos.XXXXXX"};
  char common[128];
  if (mkdtemp(f.top) == NULL) {
    tap_ok(false, "mkdtemp: %m");
    return tap_done();
  }
  snprintf(common, sizeof(common), "%s/gitcommon", f.top);
  if (!setup(&f) || (f.g.common_fd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
    tap_ok(false, "the fixture: %m");
  } else {
    f.g.common_dir = common;
    report(run_cases(&f), geteuid() == 0 ? "root" : "caller");
    if (geteuid() == 0)
      as_ordinary_user(&f);
    else
      tap_skip("the ordinary user's run needs root to become 65534");
    close(f.g.common_fd);
  }
  scratch_remove(f.top);
  return tap_done();
}
