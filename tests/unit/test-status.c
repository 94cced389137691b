/* Unit tests for status.c's atomic writes of the state files: what a reader of the state
 * directory sees after a first write and after a replacement (the exchange, and the rename where
 * the filesystem has no exchange). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libseccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context.h"
#include "status.h"
#include "tap.h"
#include "utils.h"

/* the whole file, "" when it cannot be read */
static char *read_fd(int fd) {
  static char buf[256];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static char *read_at(int dirfd, const char *name) {
  cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  return fd < 0 ? "" : read_fd(fd);
}

/* the names in dirfd, space-separated and sorted */
static char *listing(int dirfd) {
  static char out[512];
  struct dirent **names = NULL;
  cleanup_free char *path = xasprintf("/proc/self/fd/%d", dirfd);
  int n = scandir(path, &names, NULL, alphasort);
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0) {
      strncat(out, names[i]->d_name, sizeof(out) - strlen(out) - 2);
      strcat(out, " ");
    }
    free(names[i]);
  }
  free(names);
  return out;
}

static void write_file(int dirfd, const char *name, const char *text, const char *what) {
  cleanup_error fsrun_error_t err = NULL;
  int ret = status_replace_file(dirfd, name, text, strlen(text), &err);
  tap_ok(ret == 0, "%s: written (%s)", what, err ? err->msg : "ok");
}

/* a reader holding the old file keeps reading it whole; the name shows the new one; nothing else
 * is left in the directory */
static void test_replace(int dirfd, const char *how) {
  cleanup_close int old = -1;
  struct stat before, after;
  write_file(dirfd, "state.json", "one", how);
  tap_ok(strcmp(read_at(dirfd, "state.json"), "one") == 0, "%s: the first write is read back", how);
  old = openat(dirfd, "state.json", O_RDONLY | O_CLOEXEC);
  fstat(old, &before);
  write_file(dirfd, "state.json", "two", how);
  tap_ok(strcmp(read_at(dirfd, "state.json"), "two") == 0, "%s: the replacement is read back", how);
  tap_ok(strcmp(read_fd(old), "one") == 0, "%s: a reader of the old file still reads it whole",
         how);
  tap_ok(fstatat(dirfd, "state.json", &after, 0) == 0 && after.st_ino != before.st_ino &&
             (after.st_mode & 07777) == 0600,
         "%s: the name holds a new file, mode 0600", how);
  tap_ok(strcmp(listing(dirfd), "state.json ") == 0, "%s: no temporary file is left (`%s`)", how,
         listing(dirfd));
  unlinkat(dirfd, "state.json", 0);
}

/* a directory where the state file goes is refused as a rename refuses it, and stays */
static void test_directory_kept(int dirfd) {
  cleanup_error fsrun_error_t err = NULL;
  struct stat st;
  int ret;
  mkdirat(dirfd, "state.json", 0700);
  ret = status_replace_file(dirfd, "state.json", "x", 1, &err);
  tap_ok(ret < 0 && fsrun_error_code(&err) == -EISDIR, "a directory at the name: refused (%s)",
         err ? err->msg : "accepted");
  tap_ok(fstatat(dirfd, "state.json", &st, 0) == 0 && S_ISDIR(st.st_mode),
         "a directory at the name: still there");
  tap_ok(strcmp(listing(dirfd), "state.json ") == 0,
         "a directory at the name: nothing else left (`%s`)", listing(dirfd));
  unlinkat(dirfd, "state.json", AT_REMOVEDIR);
}

/* the pid files' write: a rename over the old file */
static void test_pid_file(int dirfd) {
  cleanup_error fsrun_error_t err = NULL;
  int ret = status_write_file_atomic(dirfd, "pid", "1", 1, 0644, &err);
  ret = ret < 0 ? ret : status_write_file_atomic(dirfd, "pid", "22", 2, 0644, &err);
  tap_ok(ret == 0 && strcmp(read_at(dirfd, "pid"), "22") == 0 &&
             strcmp(listing(dirfd), "pid ") == 0,
         "a pid file written twice holds the second (`%s`, %s)", listing(dirfd),
         err ? err->msg : "ok");
  unlinkat(dirfd, "pid", 0);
}

/* The init's record at the largest values a Linux host gives (pid below PID_MAX_LIMIT, 2^36
 * clock ticks: 21 years up at 100 Hz, a 32-bit procfs inode) is under the 60 bytes ext4 keeps in
 * the inode, and reads back whole; the decimal form of earlier fsrun is still read. */
static void test_init_record_format(void) {
  struct container_status st = {
      .pid = 4194303, .pid_start_time = (1ULL << 36) - 1, .pid_pidns = 0xffffffffULL};
  struct container_status back = {0}, old = {0};
  char text[128];
  int n, parsed;
  snprintf(st.boot_id, sizeof(st.boot_id), "9e1dcad6-4935-4b9b-b6c0-d365e9c4e5c9");
  n = status_format_init_record(&st, text, sizeof(text));
  tap_ok(n > 0 && n <= 59, "the largest record takes %d bytes (`%s`), at most 59", n, text);
  parsed = status_parse_init_record(text, &back);
  tap_ok(parsed == 0 && back.pid == st.pid && back.pid_start_time == st.pid_start_time &&
             back.pid_pidns == st.pid_pidns && strcmp(back.boot_id, st.boot_id) == 0,
         "it reads back whole (pid %d, boot `%s`)", (int)back.pid, back.boot_id);
  tap_ok(status_parse_init_record("4194303 68719476735 4294967295 "
                                  "9e1dcad6-4935-4b9b-b6c0-d365e9c4e5c9",
                                  &old) == 0 &&
             old.pid == st.pid && old.pid_start_time == st.pid_start_time &&
             old.pid_pidns == st.pid_pidns && strcmp(old.boot_id, st.boot_id) == 0,
         "the decimal record of earlier fsrun reads the same");
  tap_ok(status_parse_init_record("x0 1 1 ab", &old) < 0 &&
             status_parse_init_record("x-1 1 1", &old) < 0 &&
             status_parse_init_record("x1 0 1", &old) < 0 &&
             status_parse_init_record("x1 1 1 ab junk", &old) < 0 &&
             status_parse_init_record("garbage", &old) < 0 &&
             status_parse_init_record("", &old) < 0,
         "a record with pid 0, a negative pid, start 0, a fifth field or none is refused");
}

/* the record written into the directory: the first as itself, a second by a rename over it;
 * nothing else is left */
static void test_init_record_write(int dirfd) {
  cleanup_error fsrun_error_t err = NULL;
  struct container_status st = {.id = "c",
                                .status = "created",
                                .pid = 123456,
                                .pid_start_time = 987654321,
                                .pid_pidns = 4026532248ULL};
  struct container_status back = {0};
  char link[128];
  ssize_t n;
  int ret = status_write(dirfd, &st, &err), got;
  st.pid = 654321;
  ret = ret < 0 ? ret : status_write(dirfd, &st, &err);
  n = readlinkat(dirfd, STATUS_INIT_RECORD, link, sizeof(link) - 1);
  link[n > 0 ? n : 0] = '\0';
  got = status_read_init_record(dirfd, &back, NULL);
  tap_ok(ret == 0 && got == 0 && back.pid == 654321 &&
             strcmp(listing(dirfd), "init state.json ") == 0,
         "a record written twice names the second init (`%s`; `%s`, %s)", link, listing(dirfd),
         err ? err->msg : "ok");
  unlinkat(dirfd, STATUS_INIT_RECORD, 0);
  unlinkat(dirfd, STATUS_FILE, 0);
}

/* A one-shot create's state: state.json at `creating` (no init), then the record alone. Read
 * before the record: `creating`; after it: `created` with the record's init; one state.json was
 * ever written. A `creating` state that names an init already is not touched by a record. */
static void test_created_by_record(int dirfd) {
  cleanup_error fsrun_error_t err = NULL;
  struct container_status st = {.id = "c", .status = "creating", .creator_pid = 77};
  struct container_status before = {0}, after = {0}, other = {0};
  int ret = status_write(dirfd, &st, &err), r1, r2, r3;
  r1 = ret < 0 ? ret : status_read(dirfd, &before, &err);
  st.status = "created";
  st.pid = 4242;
  st.pid_start_time = 99;
  st.pid_pidns = 4026531836ULL;
  ret = ret < 0 ? ret : status_write_created(dirfd, &st, &err);
  r2 = ret < 0 ? ret : status_read(dirfd, &after, &err);
  tap_ok(r1 == 0 && strcmp(before.status, "creating") == 0 && before.pid == 0,
         "one-shot: `creating` until the record is there (%s, pid %d)",
         before.status ? before.status : "-", (int)before.pid);
  tap_ok(r2 == 0 && strcmp(after.status, "created") == 0 && after.pid == 4242 &&
             after.pid_start_time == 99 && after.pid_pidns == 4026531836ULL &&
             after.creator_pid == 77 && strcmp(listing(dirfd), "init state.json ") == 0,
         "one-shot: `created` with the record's init once it is (%s, pid %d; `%s`, %s)",
         after.status ? after.status : "-", (int)after.pid, listing(dirfd), err ? err->msg : "ok");
  {
    static const char naming[] = "{\"id\":\"c\",\"status\":\"creating\",\"pid\":1}";
    ret = status_replace_file(dirfd, STATUS_FILE, naming, strlen(naming), &err);
  }
  r3 = ret < 0 ? ret : status_read(dirfd, &other, &err);
  tap_ok(r3 == 0 && strcmp(other.status, "creating") == 0 && other.pid == 1,
         "a `creating` state naming an init is read as it is (%s, pid %d)",
         other.status ? other.status : "-", (int)other.pid);
  status_clear(&before);
  status_clear(&after);
  status_clear(&other);
  unlinkat(dirfd, STATUS_INIT_RECORD, 0);
  unlinkat(dirfd, STATUS_FILE, 0);
}

/* A config kept in state.json (a one-shot create without a cgroup) is read back as config.json
 * would be; config.json, where there is one, comes first. */
static void test_config_in_state(int dirfd) {
  static const char json[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                             "\"process\":{\"args\":[\"a\\\"b\"],\"cwd\":\"/in\"}}";
  static const char file[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
                             "\"process\":{\"args\":[\"x\"],\"cwd\":\"/file\"}}";
  cleanup_error fsrun_error_t err = NULL;
  struct container_status st = {.id = "c", .status = "creating"};
  oci_config *in_state = NULL, *from_file = NULL;
  int ret, r1, r2;
  st.config_json = json;
  st.config_len = strlen(json);
  ret = status_write(dirfd, &st, &err);
  r1 = ret < 0 ? ret : status_read_config(dirfd, NULL, &in_state, &err);
  tap_ok(r1 == 0 && in_state->process != NULL && strcmp(in_state->process->cwd, "/in") == 0 &&
             in_state->process->args.len == 1 &&
             strcmp(in_state->process->args.items[0], "a\"b") == 0 &&
             strcmp(listing(dirfd), "state.json ") == 0,
         "a config kept in state.json is read back whole (`%s`, %s)", listing(dirfd),
         err ? err->msg : "ok");
  ret = status_write_config(dirfd, file, strlen(file), &err);
  r2 = ret < 0 ? ret : status_read_config(dirfd, NULL, &from_file, &err);
  tap_ok(r2 == 0 && strcmp(from_file->process->cwd, "/file") == 0,
         "config.json comes before the copy in state.json (%s)", err ? err->msg : "ok");
  oci_config_free(in_state);
  oci_config_free(from_file);
  unlinkat(dirfd, STATUS_CONFIG_FILE, 0);
  unlinkat(dirfd, STATUS_FILE, 0);
}

/* How status_dir_remove in a child whose filter kills socketpair ends: SIGSYS when it handed the
 * removed directory's last fd to the kernel's collector (a socket cycle), 0 when it closed it;
 * the directory's name is gone either way. */
static int dir_remove_under_filter(int rootfd, const char *root, bool *gone) {
  struct fsrun_context ctx = {.state_root = root, .state_root_held = true, .state_root_fd = rootfd};
  cleanup_error fsrun_error_t err = NULL;
  int status = -1, fd = status_dir_create(&ctx, "c", &err);
  pid_t pid;
  if (fd < 0)
    return -1;
  close(fd);
  pid = fork();
  if (pid == 0) {
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    if (f == NULL || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        seccomp_rule_add(f, SCMP_ACT_KILL_PROCESS, SCMP_SYS(socketpair), 0) != 0 ||
        seccomp_load(f) != 0)
      _exit(2);
    _exit(status_dir_remove(&ctx, "c", NULL) == 0 ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return -1;
  *gone = faccessat(rootfd, "c", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
  return WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status) + 1000;
}

/* A removed state directory on a disk filesystem is closed for the last time by the kernel's
 * collector, not by the command (its block's free waits for a discard on a `discard` mount); on
 * a tmpfs it is simply closed. */
static void test_dir_remove_last_close(const char *base, bool disk) {
  char dir[64];
  struct statfs fs;
  cleanup_close int rootfd = -1;
  bool gone = false;
  int how;
  snprintf(dir, sizeof(dir), "%s/fsrun-test-status.XXXXXX", base);
  if (mkdtemp(dir) == NULL || (rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
      fstatfs(rootfd, &fs) < 0 || (fs.f_type == TMPFS_MAGIC) == disk) {
    tap_skip(disk ? "no scratch directory on a disk filesystem (/var/tmp)"
                  : "no scratch directory on a tmpfs (/dev/shm)");
    if (rootfd >= 0)
      rmdir(dir);
    return;
  }
  how = dir_remove_under_filter(rootfd, dir, &gone);
  tap_ok(gone && how == (disk ? SIGSYS : 1000),
         "%s: the removed state directory's last fd %s (child: %d, gone: %d)", base,
         disk ? "goes to the kernel's collector" : "is closed", how, gone);
  rmdir(dir);
}

/* renameat2 answers EINVAL from here on, as on a filesystem without RENAME_EXCHANGE */
static bool deny_exchange(void) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  bool ok = ctx != NULL && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
            seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(renameat2), 0) == 0 &&
            seccomp_load(ctx) == 0;
  seccomp_release(ctx);
  return ok;
}

int main(void) {
  char dir[] = "/tmp/fsrun-test-status.XXXXXX";
  cleanup_close int dirfd = -1;
  if (mkdtemp(dir) == NULL || (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
    tap_ok(false, "make a scratch directory: %s", strerror(errno));
    return tap_done();
  }
  test_replace(dirfd, "exchange");
  test_directory_kept(dirfd);
  test_pid_file(dirfd);
  test_init_record_format();
  test_init_record_write(dirfd);
  test_created_by_record(dirfd);
  test_config_in_state(dirfd);
  test_dir_remove_last_close("/var/tmp", true);
  test_dir_remove_last_close("/dev/shm", false);
  if (deny_exchange())
    test_replace(dirfd, "rename (no RENAME_EXCHANGE)");
  else
    tap_skip("no seccomp filter here to deny renameat2");
  rmdir(dir);
  return tap_done();
}
