/* Unit tests for openat2-compat.c: the walk that stands in for openat2 where it answers ENOSYS
 * must answer what the kernel's openat2 answers on a tree made to trip it (symlink loops and
 * chains, absolute and `..` symlinks, `..` at the root, dangling symlinks with O_CREAT, magic links
 * under /proc, mount crossings), or refuse more, never less. Each case runs both and compares the
 * file reached (device and inode) or the errno; the cases that matter also name what is expected,
 * so that a walk and a kernel wrong the same way still fail. TAP output. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "openat2-compat.h"
#include "scratch.h"
#include "tap.h"

#define IN_ROOT    (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define BENEATH    (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
#define NO_LINKS   (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define PROC_STYLE (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

/* what one open reached: -errno, or the file's identity */
struct reached {
  int code;
  dev_t dev;
  ino_t ino;
  bool link; /* an O_PATH fd of a symlink itself */
};

static struct reached outcome(int fd) {
  struct reached r = {.code = fd < 0 ? -errno : 0};
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0) {
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    r.link = S_ISLNK(st.st_mode);
  }
  if (fd >= 0)
    close(fd);
  return r;
}

/* the kernel's answer; its EAGAIN to a `..` while another process mounts or renames anywhere is
 * spurious (openat2(2)), so asked again as openat2_compat does (which would walk on ENOSYS) */
static struct reached kernel_open(int dirfd, const char *path, const struct open_how *how) {
  int fd, tries = 0;
  do
    fd = (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
  while (fd < 0 && errno == EAGAIN && ++tries < 64);
  return outcome(fd);
}

static struct reached identity_of(int dirfd, const char *path) {
  struct stat st;
  struct reached r = {0};
  if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return (struct reached){.code = -errno};
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  r.link = S_ISLNK(st.st_mode);
  return r;
}

static bool same(struct reached a, struct reached b) {
  return a.code == b.code &&
         (a.code != 0 || (a.dev == b.dev && a.ino == b.ino && a.link == b.link));
}

static void show(const char *who, struct reached r) {
  if (r.code)
    tap_diag("  %s: %s", who, strerror(-r.code));
  else
    tap_diag("  %s: dev %lu ino %lu%s", who, (unsigned long)r.dev, (unsigned long)r.ino,
             r.link ? " (symlink)" : "");
}

/* The walk and the kernel agree, and reach `want` (a path under want_dir, or -errno). */
static void check(int dirfd, const char *path, int flags, unsigned long long resolve,
                  struct reached want, const char *what) {
  struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = resolve};
  struct reached kernel = kernel_open(dirfd, path, &how);
  struct reached walk = outcome(openat2_walk(dirfd, path, &how));
  if (!tap_ok(same(walk, kernel) && same(walk, want), "%s: `%.64s`", what, path)) {
    show("walk", walk);
    show("openat2", kernel);
    show("expected", want);
  }
}

static struct reached err(int code) {
  return (struct reached){.code = -code};
}

static int root_fd, outside_fd;

static void make_tree(char *base) {
  char path[4096];
  if (mkdtemp(base) == NULL)
    abort();
  outside_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mkdirat(outside_fd, "secret", 0700) < 0 || mkdirat(outside_fd, "root", 0755) < 0)
    abort();
  root_fd = openat(outside_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (mkdirat(root_fd, "dir", 0755) < 0 || mkdirat(root_fd, "dir/sub", 0755) < 0 ||
      close(openat(root_fd, "dir/sub/file", O_CREAT | O_WRONLY, 0644)) < 0 ||
      close(openat(root_fd, "file", O_CREAT | O_WRONLY, 0644)) < 0)
    abort();
  static const char *const links[][2] = {
      {"/dir/sub", "abs"},
      {"/file", "absfile"},
      {"../../..", "up"},
      {"../secret", "escape"},
      {"dir/sub", "rel"},
      {"sub/../../file", "dir/relup"},
      {"loop2", "loop1"},
      {"loop1", "loop2"},
      {"/etc/passwd", "hostfile"},
      {"/nonexistent", "dangling"},
      {"../nothing", "dir/dangle-up"},
      {"/proc/self/exe", "procexe"},
      {"file/", "filedir"},
  };
  for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
    if (symlinkat(links[i][0], root_fd, links[i][1]) < 0)
      abort();
  /* a chain: c0 -> c1 -> ... -> c40 -> file, 41 links (one too many), c1 is 40 */
  for (int i = 0; i <= 40; i++) {
    char name[16];
    snprintf(name, sizeof(name), "c%d", i);
    snprintf(path, sizeof(path), "c%d", i + 1);
    if (symlinkat(i == 40 ? "file" : path, root_fd, name) < 0)
      abort();
  }
}

static void test_in_root(void) {
  struct reached sub = identity_of(root_fd, "dir/sub"), file = identity_of(root_fd, "file");
  struct reached root = identity_of(root_fd, "."), sfile = identity_of(root_fd, "dir/sub/file");
  check(root_fd, "dir/sub/file", O_RDONLY, IN_ROOT, sfile, "in root: a plain path");
  check(root_fd, "/dir/sub", O_PATH, IN_ROOT, sub, "in root: an absolute path starts at the root");
  check(root_fd, "abs", O_PATH, IN_ROOT, sub, "in root: an absolute symlink");
  check(root_fd, "abs/file", O_RDONLY, IN_ROOT, sfile, "in root: through an absolute symlink");
  check(root_fd, "absfile", O_RDONLY, IN_ROOT, file, "in root: an absolute symlink, last");
  check(root_fd, "up", O_PATH, IN_ROOT, root, "in root: `../../..` stops at the root");
  check(root_fd, "../../..", O_PATH, IN_ROOT, root, "in root: `..` at the root");
  check(root_fd, "up/file", O_RDONLY, IN_ROOT, file, "in root: `..` escapes land in the root");
  check(root_fd, "escape", O_PATH, IN_ROOT, err(ENOENT), "in root: `../secret` is no escape");
  check(root_fd, "hostfile", O_RDONLY, IN_ROOT, err(ENOENT), "in root: a host path symlink");
  check(root_fd, "rel/file", O_RDONLY, IN_ROOT, sfile, "in root: a relative symlink");
  check(root_fd, "dir/relup", O_RDONLY, IN_ROOT, file, "in root: `..` inside a symlink");
  check(root_fd, "dir/sub/../../file", O_RDONLY, IN_ROOT, file, "in root: `..` components");
  check(root_fd, "loop1", O_PATH, IN_ROOT, err(ELOOP), "in root: a symlink loop");
  check(root_fd, "loop1/x", O_PATH, IN_ROOT, err(ELOOP), "in root: a loop on the way");
  check(root_fd, "c1", O_RDONLY, IN_ROOT, file, "in root: 40 symlinks in a row");
  check(root_fd, "c0", O_RDONLY, IN_ROOT, err(ELOOP), "in root: 41 symlinks in a row");
  check(root_fd, "loop1", O_PATH | O_NOFOLLOW, IN_ROOT, identity_of(root_fd, "loop1"),
        "in root: O_PATH|O_NOFOLLOW opens the symlink");
  check(root_fd, "absfile", O_RDONLY | O_NOFOLLOW, IN_ROOT, err(ELOOP),
        "in root: O_NOFOLLOW on a symlink, last");
  check(root_fd, "file/x", O_PATH, IN_ROOT, err(ENOTDIR), "in root: a file on the way");
  check(root_fd, "file/", O_PATH, IN_ROOT, err(ENOTDIR), "in root: a file with a slash");
  check(root_fd, "filedir", O_PATH, IN_ROOT, err(ENOTDIR), "in root: a symlink to `file/`");
  check(root_fd, "dir", O_PATH | O_DIRECTORY, IN_ROOT, identity_of(root_fd, "dir"),
        "in root: O_DIRECTORY");
  check(root_fd, "file", O_PATH | O_DIRECTORY, IN_ROOT, err(ENOTDIR),
        "in root: O_DIRECTORY on a file");
  check(root_fd, "abs", O_PATH | O_DIRECTORY, IN_ROOT, sub, "in root: O_DIRECTORY via symlink");
  check(root_fd, "procexe", O_PATH, IN_ROOT, err(ENOENT), "in root: /proc/self/exe is the root's");
  check(root_fd, "", O_PATH, IN_ROOT, err(ENOENT), "in root: an empty path");
  check(root_fd, ".", O_PATH, IN_ROOT, root, "in root: `.`");
  check(root_fd, "abs", O_PATH, IN_ROOT | RESOLVE_NO_SYMLINKS, err(ELOOP),
        "in root, no symlinks: a symlink");
  check(root_fd, "abs", O_PATH | O_NOFOLLOW, IN_ROOT | RESOLVE_NO_SYMLINKS,
        identity_of(root_fd, "abs"), "in root, no symlinks: O_PATH|O_NOFOLLOW");
  check(root_fd, "rel/file", O_PATH, IN_ROOT | RESOLVE_NO_SYMLINKS, err(ELOOP),
        "in root, no symlinks: a symlink on the way");
}

static void test_beneath(void) {
  struct reached file = identity_of(root_fd, "file"), sub = identity_of(root_fd, "dir/sub");
  check(root_fd, "rel", O_PATH, BENEATH, sub, "beneath: a relative symlink");
  check(root_fd, "dir/relup", O_RDONLY, BENEATH, file, "beneath: `..` inside, staying below");
  check(root_fd, "abs", O_PATH, BENEATH, err(EXDEV), "beneath: an absolute symlink");
  check(root_fd, "/dir", O_PATH, BENEATH, err(EXDEV), "beneath: an absolute path");
  check(root_fd, "..", O_PATH, BENEATH, err(EXDEV), "beneath: `..` at the start");
  check(root_fd, "up", O_PATH, BENEATH, err(EXDEV), "beneath: a `../../..` symlink");
  check(root_fd, "escape", O_PATH, BENEATH, err(EXDEV), "beneath: `../secret`");
  check(root_fd, "dir/../..", O_PATH, BENEATH, err(EXDEV), "beneath: `dir/../..`");
  check(root_fd, "rel", O_PATH, NO_LINKS, err(ELOOP), "beneath, no symlinks: a symlink");
  check(root_fd, "dir/sub/file", O_RDONLY, NO_LINKS, identity_of(root_fd, "dir/sub/file"),
        "beneath, no symlinks: no symlink");
}

/* O_CREAT through a dangling symlink creates its target inside the root (IN_ROOT) */
static void test_create(void) {
  struct open_how how = {.flags = O_RDWR | O_CREAT | O_CLOEXEC, .mode = 0600, .resolve = IN_ROOT};
  struct reached r = outcome(openat2_walk(root_fd, "dangling", &how));
  tap_ok(r.code == 0 && same(r, identity_of(root_fd, "nonexistent")),
         "in root: O_CREAT through an absolute dangling symlink creates it in the root");
  r = outcome(openat2_walk(root_fd, "dir/dangle-up", &how));
  tap_ok(r.code == 0 && same(r, identity_of(root_fd, "nothing")) &&
             identity_of(outside_fd, "nothing").code == -ENOENT,
         "in root: O_CREAT through `../nothing` from a subdirectory stays below the root");
  how.flags |= O_EXCL;
  check(root_fd, "abs", (int)how.flags, IN_ROOT, err(EEXIST), "in root: O_CREAT|O_EXCL on a link");
  how.resolve = PROC_STYLE;
  tap_ok(openat2_walk(root_fd, "new", &how) < 0 && errno == EINVAL,
         "no-xdev: the walk refuses O_CREAT (EINVAL)");
}

static void test_proc(void) {
  int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC), slash;
  check(proc, "self/status", O_RDONLY, BENEATH,
        kernel_open(proc, "self/status", &(struct open_how){.flags = O_RDONLY, .resolve = BENEATH}),
        "proc: self/status (a plain symlink)");
  check(proc, "self/exe", O_PATH, BENEATH, err(ELOOP), "proc: self/exe is a magic link");
  check(proc, "self/fd/0", O_RDONLY, BENEATH, err(ELOOP), "proc: self/fd/0 is a magic link");
  check(proc, "self/root/etc", O_PATH, BENEATH, err(ELOOP), "proc: through self/root");
  check(proc, "self/ns/mnt", O_RDONLY, BENEATH, err(ELOOP), "proc: self/ns/mnt");
  check(proc, "self/cwd/..", O_PATH, PROC_STYLE, err(ELOOP), "proc, no-xdev: self/cwd");
  check(proc, "self/exe", O_PATH | O_NOFOLLOW, BENEATH,
        kernel_open(proc, "self/exe",
                    &(struct open_how){.flags = O_PATH | O_NOFOLLOW, .resolve = BENEATH}),
        "proc: O_PATH|O_NOFOLLOW on a magic link opens it");
  check(proc, "thread-self/attr/current", O_RDONLY, PROC_STYLE,
        kernel_open(proc, "thread-self/attr/current",
                    &(struct open_how){.flags = O_RDONLY, .resolve = PROC_STYLE}),
        "proc, no-xdev: thread-self/attr/current");
  check(proc, "self/status", O_PATH, NO_LINKS, err(ELOOP), "proc, no symlinks: self");
  slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  check(slash, "proc/self", O_PATH, RESOLVE_BENEATH | RESOLVE_NO_XDEV, err(EXDEV),
        "no-xdev: / to /proc crosses a mount");
  check(slash, "proc/..", O_PATH, RESOLVE_BENEATH | RESOLVE_NO_XDEV, err(EXDEV),
        "no-xdev: in and out of /proc");
  close(slash);
  close(proc);
}

static void test_refusals(void) {
  struct open_how how = {.flags = O_PATH, .resolve = RESOLVE_NO_SYMLINKS};
  tap_ok(openat2_walk(root_fd, "file", &how) < 0 && errno == EINVAL,
         "the walk refuses a walk with neither RESOLVE_BENEATH nor RESOLVE_IN_ROOT");
  how.resolve = RESOLVE_BENEATH | RESOLVE_IN_ROOT;
  tap_ok(openat2_walk(root_fd, "file", &how) < 0 && errno == EINVAL,
         "the walk refuses RESOLVE_BENEATH with RESOLVE_IN_ROOT");
}

/* PATH_MAX - 1 characters are walked; PATH_MAX (no room for the NUL) is ENAMETOOLONG, as the
 * kernel's getname answers, before anything is looked up. */
static void test_long_path(void) {
  static char path[PATH_MAX + 2];
  size_t slashes = PATH_MAX - 1 - strlen("dir") - strlen("sub/file");
  snprintf(path, sizeof(path), "dir%*ssub/file", (int)slashes, "");
  memset(path + strlen("dir"), '/', slashes);
  check(root_fd, path, O_RDONLY, IN_ROOT, identity_of(root_fd, "dir/sub/file"),
        "a path of PATH_MAX - 1 characters");
  tap_diag("  (%zu characters)", strlen(path));
  memmove(path + 1, path, strlen(path) + 1);
  check(root_fd, path, O_RDONLY, IN_ROOT, err(ENAMETOOLONG), "a path of PATH_MAX characters");
}

/* The walk opens the last component O_NONBLOCK (a fifo must not hold it): the caller gets the
 * flags it asked for. */
static void test_blocking_flag(void) {
  struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = BENEATH};
  int fd = openat2_walk(root_fd, "file", &how);
  tap_ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "the fd is blocking unless asked");
  close(fd);
  how.flags |= O_NONBLOCK;
  fd = openat2_walk(root_fd, "file", &how);
  tap_ok(fd >= 0 && fcntl(fd, F_GETFL) & O_NONBLOCK, "O_NONBLOCK is kept where asked");
  close(fd);
}

static void on_alarm(int sig) {
  (void)sig; /* no SA_RESTART: a blocked open returns EINTR, and the test fails */
}

/* A fifo mounted over the last component, as a hostile container can over /proc/PID/attr/exec:
 * with RESOLVE_NO_XDEV the walk refuses it before it opens it (EXDEV, as openat2), where an open
 * with the caller's flags first would wait for a writer. In a private mount namespace (the last
 * test: this process stays in it); an alarm bounds the wait that would be the bug. */
static void test_fifo_over_file(const char *base) {
  static const struct {
    int flags;
    const char *what;
  } modes[] = {{O_RDONLY, "no-xdev: a fifo over the file, read"},
               {O_WRONLY, "no-xdev: a fifo over the file, write"},
               {O_RDWR, "no-xdev: a fifo over the file, read-write"},
               {O_PATH, "no-xdev: a fifo over the file, O_PATH"}};
  struct sigaction sa = {.sa_handler = on_alarm};
  char fifo[PATH_MAX], target[PATH_MAX];
  snprintf(fifo, sizeof(fifo), "%s/fifo", base);
  snprintf(target, sizeof(target), "%s/root/attr", base);
  if (mkfifo(fifo, 0600) < 0 || close(open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) < 0)
    abort();
  if (unshare(geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount(fifo, target, NULL, MS_BIND, NULL) < 0) {
    tap_skip("no private mount namespace for a bind mount here");
    return;
  }
  close(root_fd); /* the old namespace's mount, where nothing is mounted over `attr` */
  snprintf(fifo, sizeof(fifo), "%s/root", base);
  root_fd = open(fifo, O_PATH | O_DIRECTORY | O_CLOEXEC);
  sigaction(SIGALRM, &sa, NULL);
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
    alarm(5);
    check(root_fd, "attr", modes[i].flags, PROC_STYLE, err(EXDEV), modes[i].what);
    alarm(0);
  }
  umount2(target, MNT_DETACH);
}

int main(void) {
  char base[] = "/tmp/fsrun-openat2-XXXXXX";
  struct open_how probe = {.flags = O_PATH | O_CLOEXEC};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &probe, sizeof(probe));
  if (fd < 0 && errno == ENOSYS) {
    tap_skip("the kernel's openat2 answers ENOSYS here: nothing to compare the walk with");
    return tap_done();
  }
  close(fd);
  make_tree(base);
  test_in_root();
  test_beneath();
  test_create();
  test_proc();
  test_refusals();
  test_long_path();
  test_blocking_flag();
  test_fifo_over_file(base);
  scratch_remove(base);
  return tap_done();
}
