/* remove_tree_at: a mode 0 directory is made 0700 and removed; a link swapped in at its name
 * between the open and the chmod (by remove_tree_chmod_hook, deterministically) is not followed:
 * the link's target keeps its mode. As root without DAC capabilities and as an ordinary user. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remove-tree.h"
#include "tap.h"

#define NOBODY 65534

static char target[256];
static bool hook_ran;

/* Moves the directory away and puts a link to target at its name, as a racing process could. */
static void swap_in_link(int parent, const char *name) {
  hook_ran =
      renameat(parent, name, parent, "moved-away") == 0 && symlinkat(target, parent, name) == 0;
}

/* Root without capabilities is just the owner: a mode 0 directory gives EACCES as to anyone. */
static int drop_effective_caps(void) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &hdr, data) < 0)
    return -1;
  data[0].effective = data[1].effective = 0;
  return (int)syscall(SYS_capset, &hdr, data);
}

static int make_tree(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/tree/locked/inner", dir);
  if (mkdir(path, 0755) < 0 && errno != EEXIST)
    return -1;
  snprintf(path, sizeof(path), "%s/tree/locked/inner/f", dir);
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  close(fd);
  snprintf(path, sizeof(path), "%s/tree/locked", dir);
  return chmod(path, 0);
}

/* exit status: 0 good, 1 setup, 2 the tree is still there, 3 the hook never ran (no EACCES),
 * 4 the link's target changed mode, 5 the target is gone */
__attribute__((noreturn)) static void scenario(bool swap) {
  char dir[] = "/tmp/fsrun-rmtree-XXXXXX", path[512];
  struct stat st;
  int status = 0;
  if (mkdtemp(dir) == NULL)
    _exit(1);
  snprintf(path, sizeof(path), "%s/tree", dir);
  snprintf(target, sizeof(target), "%s/target", dir);
  int tfd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (tfd < 0 || mkdir(path, 0755) < 0)
    _exit(1);
  close(tfd);
  snprintf(path, sizeof(path), "%s/tree/locked", dir);
  if (mkdir(path, 0755) < 0 || make_tree(dir) < 0)
    _exit(1);
  remove_tree_chmod_hook = swap ? swap_in_link : NULL;
  snprintf(path, sizeof(path), "%s/tree", dir);
  remove_tree_at(AT_FDCWD, path, 8);
  if (swap && !hook_ran)
    status = 3;
  else if (!swap && lstat(path, &st) == 0)
    status = 2;
  else if (swap && stat(target, &st) < 0)
    status = 5;
  else if (swap && (st.st_mode & 07777) != 0644)
    status = 4;
  remove_tree_chmod_hook = NULL;
  remove_tree_at(AT_FDCWD, dir, 8);
  _exit(status);
}

/* as: 0 the caller as it is, 1 root without capabilities, 2 uid/gid 65534 */
static int run_as(int as, bool swap) {
  int status = -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (as == 1 && drop_effective_caps() < 0)
      _exit(1);
    if (as == 2 && (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0))
      _exit(1);
    scenario(swap);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + status;
}

int main(void) {
  static const char *const who[] = {"the caller", "root without capabilities", "uid 65534"};
  int first = geteuid() == 0 ? 1 : 0, last = geteuid() == 0 ? 2 : 0;
  for (int as = first; as <= last; as++) {
    int got = run_as(as, false);
    tap_ok(got == 0, "%s: a tree holding a mode 0 directory is removed (status %d)", who[as], got);
    got = run_as(as, true);
    tap_ok(got == 0,
           "%s: a link swapped in at the mode 0 directory's name after its open is not "
           "followed: its target keeps mode 0644 (status %d)",
           who[as], got);
  }
  return tap_done();
}
