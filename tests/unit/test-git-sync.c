/* sandbox-git-sync.c and sandbox-git-objects.c against a run's upper dir that changes during the
 * sync, as a process a task container's command left behind can change it (review19 #1, #2): the
 * link wraps safe_read_all and readdir (-Wl,--wrap, this binary only), and the wrappers change the
 * upper dir's file right after the sync read it or listed it. Deterministic: no timing. Also the
 * bounds of review19 #3: sparse files are refused, never written out on the host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sandbox-git.h"
#include "scratch.h"
#include "tap.h"
#include "utils.h"

#define ID_A  "5e181eb4e1f53b0ca82b32d98bb550d87d7996b0" /* `GOOD CONTENT\n` */
#define ZEROS "0000000000000000000000000000000000000000"
#define GIB   (1024ll * 1024 * 1024)
/* a new object of the run: objects/ab/<38 hex> */
#define NEW_REL "objects/ab/01234567890123456789012345678901234567"

#define ID_NEW "3e757656cf36eca53338e520d134963a44f793f8" /* `new\n`, a valid object of the run */

/* --- the changes made behind the sync's back ----------------------------------------------- */

static const char *rewrite_suffix; /* an upper-dir file: rewritten to rewrite_text once read */
static const char *rewrite_text;
static const char *fifo_name;   /* an entry of upper/objects/XX: a fifo once listed */
static const char *repeat_name; /* an entry listed repeat_left times more once listed */
static long repeat_left;
static char repeat_buf[sizeof(struct dirent)];
static long long sync_tmp_bytes; /* written to the sync's temporary files on the host */

/* the clocks the sync may read, each stepped by this much at every read when set */
static int64_t cpu_step_ms, wall_step_ms, cpu_now_ms, wall_now_ms;

ssize_t __real_safe_read_all(int fd, void *buf, size_t len);
int64_t __real_process_cpu_ms(void);
int64_t __real_monotonic_ms(void);
int __real_safe_write_all(int fd, const void *buf, size_t len);
struct dirent *__real_readdir(DIR *d);

static bool fd_path_ends(int fd, const char *suffix, char *path, size_t size) {
  cleanup_free char *link = xasprintf("/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, size - 1);
  size_t k = strlen(suffix);
  if (n < 0)
    return false;
  path[n] = '\0';
  return (size_t)n >= k && strcmp(path + n - k, suffix) == 0;
}

ssize_t __wrap_safe_read_all(int fd, void *buf, size_t len) {
  ssize_t n = __real_safe_read_all(fd, buf, len);
  char path[PATH_MAX];
  if (rewrite_suffix != NULL && fd_path_ends(fd, rewrite_suffix, path, sizeof(path))) {
    int w = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (w < 0 || safe_write_all(w, rewrite_text, strlen(rewrite_text)) < 0)
      abort();
    close(w);
    rewrite_suffix = NULL;
  }
  return n;
}

int __wrap_safe_write_all(int fd, const void *buf, size_t len) {
  char path[PATH_MAX];
  if (fd_path_ends(fd, "", path, sizeof(path)) && strstr(path, "/.fsrun-sync.") != NULL)
    sync_tmp_bytes += (long long)len;
  return __real_safe_write_all(fd, buf, len);
}

int64_t __wrap_process_cpu_ms(void) {
  return cpu_step_ms > 0 ? (cpu_now_ms += cpu_step_ms) : __real_process_cpu_ms();
}

int64_t __wrap_monotonic_ms(void) {
  return wall_step_ms > 0 ? (wall_now_ms += wall_step_ms) : __real_monotonic_ms();
}

struct dirent *__wrap_readdir(DIR *d) {
  struct dirent *e;
  if (repeat_name == NULL && repeat_left > 0) {
    repeat_left--;
    return (struct dirent *)repeat_buf;
  }
  e = __real_readdir(d);
  if (e != NULL && repeat_name != NULL && strcmp(e->d_name, repeat_name) == 0) {
    /* glibc's record ends with its name: not a whole struct dirent */
    memcpy(repeat_buf, e, offsetof(struct dirent, d_name) + strlen(e->d_name) + 1);
    repeat_name = NULL;
  }
  if (e != NULL && fifo_name != NULL && strcmp(e->d_name, fifo_name) == 0) {
    if (unlinkat(dirfd(d), e->d_name, 0) < 0 || mkfifoat(dirfd(d), e->d_name, 0644) < 0)
      abort();
    fifo_name = NULL;
  }
  return e;
}

/* --- a main checkout's repository and one run's upper dir ------------------------------------ */

static char top[] = "/tmp/fsrun-test-git-sync.XXXXXX";

static void put(const char *rel, const char *text) {
  cleanup_free char *path = xasprintf("%s/%s", top, rel);
  cleanup_free char *dir = xstrdup(path);
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int fd = -1;
  *strrchr(dir, '/') = '\0';
  if (mkdir_p_at(AT_FDCWD, dir, 0755, &err) < 0)
    abort();
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 || safe_write_all(fd, text, strlen(text)) < 0)
    abort();
}

/* the run's loose object ID_NEW, zlib'd as git writes it */
static void put_new_object(void) {
  static const char raw[] = "blob 4\0new\n";
  unsigned char packed[128];
  uLongf len = sizeof(packed);
  cleanup_free char *dir = xasprintf("%s/run/upper/objects/3e", top);
  cleanup_free char *path = xasprintf("%s/%s", dir, ID_NEW + 2);
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int fd = -1;
  if (mkdir_p_at(AT_FDCWD, dir, 0755, &err) < 0 ||
      compress(packed, &len, (const unsigned char *)raw, sizeof(raw) - 1) != Z_OK)
    abort();
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  if (fd < 0 || safe_write_all(fd, packed, len) < 0)
    abort();
}

static void sparse(const char *rel, off_t size) {
  cleanup_free char *path = xasprintf("%s/%s", top, rel);
  put(rel, "");
  if (truncate(path, size) < 0)
    abort();
}

static char *slurp(const char *rel) {
  cleanup_free char *path = xasprintf("%s/%s", top, rel);
  char *text = NULL;
  size_t len = 0;
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return xstrdup("(none)");
  if (getdelim(&text, &len, '\0', f) < 0) {
    free(text);
    text = xstrdup("");
  }
  fclose(f);
  return text;
}

static bool same(const char *rel, const char *want) {
  cleanup_free char *got = slurp(rel);
  if (strcmp(got, want) == 0)
    return true;
  tap_diag("  %s: got `%s`, want `%s`", rel, got, want);
  return false;
}

static bool listed(char **v, const char *s) {
  for (; v != NULL && *v != NULL; v++)
    if (strcmp(*v, s) == 0)
      return true;
  return false;
}

/* the host's `.git`: on branch main, no stash; a new run's dir with an empty upper dir */
static void repo(struct sandbox_git_run *g) {
  cleanup_free char *common = xasprintf("%s/wt/.git", top);
  cleanup_free char *wt = xasprintf("%s/wt", top);
  cleanup_free char *run = xasprintf("%s/run", top);
  if (!scratch_remove(wt) || !scratch_remove(run))
    abort();
  put("wt/.git/HEAD", "ref: refs/heads/main\n");
  put("wt/.git/refs/heads/main", ID_A "\n");
  put("wt/.git/objects/5e/181eb4e1f53b0ca82b32d98bb550d87d7996b0", "");
  put("run/upper/.keep", "");
  *g = (struct sandbox_git_run){.common_dir = xstrdup(common), .admin = xstrdup("")};
  g->common_fd = open(common, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g->branch = xstrdup("refs/heads/main");
  g->run_dir = xasprintf("%s/run", top);
  g->refs[0] = (struct sandbox_git_ref){xstrdup("refs/heads/main"), xstrdup(ID_A), -1};
  g->refs[1] = (struct sandbox_git_ref){xstrdup("refs/stash"), xstrdup(""), -1};
  g->n_refs = 2;
  g->hash_size = 20;
  clock_gettime(CLOCK_REALTIME, &g->start);
}

static void finish(struct sandbox_git_run *g) {
  cleanup_free char *wt = xasprintf("%s/wt", top);
  sandbox_git_finish(g, wt, NULL);
}

/* --- the cases ----------------------------------------------------------------------------- */

static void head_rewritten_after_check(void) {
  struct sandbox_git_run g;
  repo(&g);
  put("run/upper/HEAD", "ref: refs/heads/main\n");
  rewrite_suffix = "/run/upper/HEAD";
  rewrite_text = "ref: refs/heads/evil\n";
  finish(&g);
  tap_ok(rewrite_suffix == NULL, "HEAD: the run's file was read (and rewritten after)");
  tap_ok(same("wt/.git/HEAD", "ref: refs/heads/main\n"),
         "HEAD rewritten after its check: the host's names the branch that was checked");
  sandbox_git_run_free(&g);
}

static void stash_log_rewritten_after_check(void) {
  static const char pushed[] = ZEROS " " ID_A " A <a@b> 1 +0000\tWIP on main: x\n";
  struct sandbox_git_run g;
  repo(&g);
  put("run/upper/refs/stash", ID_A "\n");
  put("run/upper/logs/refs/stash", pushed);
  rewrite_suffix = "/run/upper/logs/refs/stash";
  rewrite_text = ZEROS " " ID_A " A <a@b> 1 +0000\tEVIL\n" ZEROS " " ID_A " A <a@b> 1 +0000\tX\n";
  finish(&g);
  tap_ok(same("wt/.git/refs/stash", ID_A "\n"), "stash: the pushed entry is applied");
  tap_ok(same("wt/.git/logs/refs/stash", pushed),
         "stash reflog rewritten after its check: the host's is the one checked");
  sandbox_git_run_free(&g);
}

static void head_log_rewritten_after_check(void) {
  static const char entry[] = ZEROS " " ID_A " A <a@b> 1 +0000\tcommit: x\n";
  struct sandbox_git_run g;
  repo(&g);
  put("run/upper/logs/HEAD", entry);
  rewrite_suffix = "/run/upper/logs/HEAD";
  rewrite_text = ZEROS " " ZEROS "1 A <a@b> 1 +0000\tcommit: x\n";
  finish(&g);
  tap_ok(same("wt/.git/logs/HEAD", entry), "logs/HEAD rewritten after its check: the one checked");
  sandbox_git_run_free(&g);
}

/* the sync would wait for a writer of the fifo for ever: SIGALRM ends the test as failed */
static void object_swapped_for_fifo(void) {
  struct sandbox_git_run g;
  struct stat st;
  cleanup_free char *host = NULL;
  repo(&g);
  put("run/upper/" NEW_REL, "junk");
  fifo_name = strrchr(NEW_REL, '/') + 1;
  alarm(60);
  finish(&g);
  alarm(0);
  tap_ok(fifo_name == NULL && listed(g.discarded, NEW_REL),
         "an object swapped for a fifo after readdir: the sync goes on, reports it");
  host = xasprintf("%s/wt/.git/" NEW_REL, top);
  tap_ok(lstat(host, &st) < 0 && errno == ENOENT, "  and the host has no such object");
  sandbox_git_run_free(&g);
}

static long long blocks_under(const char *rel) {
  cleanup_free char *cmd = xasprintf("du -s -B1 '%s/%s'", top, rel);
  FILE *p = popen(cmd, "r");
  long long n = -1;
  if (p == NULL || fscanf(p, "%lld", &n) != 1)
    n = -1;
  if (p != NULL)
    pclose(p);
  return n;
}

/* 8 MiB of junk (not sparse): the copy stops at its first chunk, it is not copied whole and then
 * found wrong */
static void junk_object_not_copied_whole(void) {
  struct sandbox_git_run g;
  cleanup_free char *junk = xmalloc0(8 * 1024 * 1024 + 1);
  memset(junk, 'j', 8 * 1024 * 1024);
  repo(&g);
  put("run/upper/" NEW_REL, junk);
  sync_tmp_bytes = 0;
  finish(&g);
  tap_ok(listed(g.discarded, NEW_REL), "an 8 MiB junk object: discarded");
  tap_ok(sync_tmp_bytes > 0 && sync_tmp_bytes <= 65536,
         "  after at most 64 KiB of it was written on the host (%lld bytes)", sync_tmp_bytes);
  sandbox_git_run_free(&g);
}

static void sparse_files_refused(void) {
  struct sandbox_git_run g;
  cleanup_free char *message = xmalloc0(2 * 1024 * 1024 + 1);
  cleanup_free char *host_msg = NULL;
  struct stat st = {0};
  repo(&g);
  sparse("run/upper/" NEW_REL, GIB);
  sparse("run/upper/MERGE_MSG", GIB);
  memset(message, 'm', 2 * 1024 * 1024);
  put("run/upper/COMMIT_EDITMSG", message);
  put("run/upper/SQUASH_MSG", "squash\n");
  finish(&g);
  tap_ok(listed(g.discarded, NEW_REL), "a sparse 1 GiB object: discarded");
  tap_ok(listed(g.discarded, "MERGE_MSG"), "a sparse 1 GiB MERGE_MSG: discarded");
  tap_ok(listed(g.discarded, "COMMIT_EDITMSG"), "a 2 MiB COMMIT_EDITMSG: discarded");
  tap_ok(same("wt/.git/SQUASH_MSG", "squash\n"), "a SQUASH_MSG of 7 bytes: applied");
  host_msg = xasprintf("%s/wt/.git/SQUASH_MSG", top);
  if (stat(host_msg, &st) < 0)
    st.st_mode = 0;
  tap_ok((st.st_mode & 0777) == 0644, "  as 0644, not the run's 0666 (%o)", st.st_mode & 0777);
  tap_ok(blocks_under("wt/.git") < 1024 * 1024, "the host's .git holds less than 1 MiB (%lld)",
         blocks_under("wt/.git"));
  sandbox_git_run_free(&g);
}

/* review19 #8: past the walk's cap (200,000 entries of upper/objects, here one object the host
 * has, listed that often) the rest is not applied: `objects/` is reported and the branch, moved by
 * the run to an object the host has, stays (the run's commits may lack their trees) */
static void objects_past_cap(void) {
  struct sandbox_git_run g;
  repo(&g);
  put("wt/.git/objects/ab/01234567890123456789012345678901234567", "");
  put("run/upper/objects/5e/181eb4e1f53b0ca82b32d98bb550d87d7996b0", "");
  put("run/upper/refs/heads/main", "ab01234567890123456789012345678901234567\n");
  repeat_name = "181eb4e1f53b0ca82b32d98bb550d87d7996b0";
  repeat_left = 199998; /* with `.` and `..`: 200,001 entries */
  finish(&g);
  tap_ok(repeat_name == NULL && listed(g.discarded, "objects/"),
         "200,001 entries under objects/: `objects/` is reported");
  tap_ok(same("wt/.git/refs/heads/main", ID_A "\n") && listed(g.discarded, "refs/heads/main"),
         "  and the branch is not moved (reported)");
  repeat_left = 0;
  sandbox_git_run_free(&g);
}

/* a run that wrote ID_NEW and moved main to it, synced with *clock_step set to ms */
static void sync_new_object(struct sandbox_git_run *g, int64_t *clock_step, int64_t ms) {
  repo(g);
  put_new_object();
  put("run/upper/refs/heads/main", ID_NEW "\n");
  *clock_step = ms;
  finish(g);
  *clock_step = 0;
}

/* flake24: the walk's time limit is CPU time, not wall time. A clock stepped past the limit at its
 * first read after the start: the CPU clock stops the walk (nothing adopted, `objects/` reported,
 * the branch stays); the wall clock does not (a loaded machine waits for a core, it does no more
 * work: the object lands and the branch moves). */
static void objects_past_cpu_time(void) {
  struct sandbox_git_run g;
  struct stat st;
  cleanup_free char *host = xasprintf("%s/wt/.git/objects/3e/%s", top, ID_NEW + 2);
  sync_new_object(&g, &cpu_step_ms, 4000);
  tap_ok(listed(g.discarded, "objects/") && lstat(host, &st) < 0 && errno == ENOENT,
         "past the walk's 4 s of CPU time: the new object is not adopted, `objects/` is reported");
  tap_ok(same("wt/.git/refs/heads/main", ID_A "\n") && listed(g.discarded, "refs/heads/main"),
         "  and the branch is not moved (reported)");
  sandbox_git_run_free(&g);
  sync_new_object(&g, &wall_step_ms, 60000);
  tap_ok(!listed(g.discarded, "objects/") && lstat(host, &st) == 0,
         "a minute of wall time a call, little CPU time: the new object is adopted");
  tap_ok(same("wt/.git/refs/heads/main", ID_NEW "\n"), "  and the branch moves to it");
  sandbox_git_run_free(&g);
}

/* review19 #15: the tamper is found and handed over before the sync, which a run can make take
 * seconds (a caller killed during it has said the tamper): the callback sees the nested repository
 * while the host's branch is still where it was; the sync moves it afterwards */
static bool tamper_seen_first, host_args_seen_next;

/* review22 F7: before hostGitArgs too, whose reread of the run's configs a run can make long */
static void tamper_seen(const struct sandbox_git_run *g, void *arg) {
  (void)arg;
  tamper_seen_first = g->run_dir != NULL && listed(g->tamper, "nested/.git") &&
                      g->host_git_args == NULL && same("wt/.git/refs/heads/main", ID_A "\n");
}

static void host_args_seen(const struct sandbox_git_run *g, void *arg) {
  (void)arg;
  host_args_seen_next =
      tamper_seen_first && g->host_git_args != NULL && same("wt/.git/refs/heads/main", ID_A "\n");
}

static void tamper_before_sync(void) {
  struct sandbox_git_run g;
  cleanup_free char *wt = xasprintf("%s/wt", top);
  repo(&g);
  g.start.tv_sec -= 1; /* file times come from a coarse clock, a tick behind */
  put("wt/nested/.git/HEAD", "ref: refs/heads/x\n");
  put("wt/.git/objects/ab/01234567890123456789012345678901234567", "");
  put("run/upper/refs/heads/main", "ab01234567890123456789012345678901234567\n");
  struct sandbox_git_said said = {.tamper = tamper_seen, .host_args = host_args_seen};
  sandbox_git_finish(&g, wt, &said);
  tap_ok(tamper_seen_first,
         "the tamper is handed over before hostGitArgs and the sync, with the branch unmoved");
  tap_ok(host_args_seen_next, "  then hostGitArgs, still before the sync");
  tap_ok(same("wt/.git/refs/heads/main", "ab01234567890123456789012345678901234567\n") &&
             listed(g.tamper, "nested/.git"),
         "  and the sync ran after it; the result keeps the tamper");
  sandbox_git_run_free(&g);
}

int main(void) {
  umask(0);
  if (mkdtemp(top) == NULL)
    abort();
  head_rewritten_after_check();
  stash_log_rewritten_after_check();
  head_log_rewritten_after_check();
  object_swapped_for_fifo();
  junk_object_not_copied_whole();
  sparse_files_refused();
  objects_past_cap();
  objects_past_cpu_time();
  tamper_before_sync();
  scratch_remove(top);
  return tap_done();
}
