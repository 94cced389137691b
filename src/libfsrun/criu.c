/* The criu binary: finding it, `criu check`, running it and reporting its failure in one line. */
#include "criu-internal.h"

#define CRIU_CHECK_FILE ".criu-check"
/* root's cache of `criu check`: /run is a tmpfs, and the key names the boot anyway */
#define CRIU_CHECK_ROOT_DIR "/run/fsrun"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "utils.h"

void criu_argv_add(struct criu_argv *a, const char *s) {
  if (a->n + 2 > a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 32;
    char **v = realloc(a->v, cap * sizeof(*v));
    if (v == NULL)
      abort(); /* out of memory, as xmalloc */
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = xstrdup(s);
  a->v[a->n] = NULL;
}

void criu_argv_addf(struct criu_argv *a, const char *fmt, ...) {
  va_list ap;
  char *s = NULL;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    abort();
  va_end(ap);
  criu_argv_add(a, s);
  free(s);
}

void criu_argv_free(struct criu_argv *a) {
  for (size_t i = 0; i < a->n; i++)
    free(a->v[i]);
  free(a->v);
  memset(a, 0, sizeof(*a));
}

int criu_parse_cgroups_mode(const char *arg, struct criu_opts *o, fsrun_error_t *err) {
  static const char *const modes[] = {"soft", "full", "strict", "ignore"};
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
    if (strcmp(arg, modes[i]) == 0) {
      o->manage_cgroups_mode = modes[i];
      return 0;
    }
  return fsrun_error_make(
      err, 0, "--manage-cgroups-mode: expected soft, full, strict or ignore, got `%s`", arg);
}

int criu_parse_empty_ns(const char *arg, struct criu_opts *o, fsrun_error_t *err) {
  /* criu itself takes only the network namespace here */
  if (strcmp(arg, "network") != 0 && strcmp(arg, "net") != 0)
    return fsrun_error_make(err, 0, "--empty-ns: only `network` is supported, got `%s`", arg);
  o->empty_netns = true;
  return 0;
}

static char *find_in_path(const char *name) {
  const char *path = getenv("PATH");
  cleanup_free char *copy =
      xstrdup(path && *path ? path : "/usr/local/sbin:/usr/sbin:/sbin:/usr/bin");
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char *candidate = xasprintf("%s/%s", dir, name);
    if (access(candidate, X_OK) == 0)
      return candidate;
    free(candidate);
  }
  return NULL;
}

/* "Error (criu/vdso.c:381): vdso: Unexpected ..." -> "vdso: Unexpected ..."; the first such line
 * is the cause (the later ones are its consequences). NULL when there is none. */
static char *first_error_line(const char *text) {
  const char *line = strstr(text, "Error (");
  const char *msg, *end;
  if (line == NULL)
    return NULL;
  msg = strstr(line, "): ");
  end = strchr(line, '\n');
  if (msg == NULL || (end != NULL && msg > end))
    msg = line;
  else
    msg += 3;
  if (end == NULL)
    end = msg + strlen(msg);
  return strndup(msg, (size_t)(end - msg));
}

/* Why `criu check` failed: its first error line, else its last line (a feature check prints
 * "uffd is not supported" without an error prefix). */
static char *check_failure(const char *output) {
  char *why = first_error_line(output);
  size_t end = strlen(output), start;
  if (why != NULL)
    return why;
  while (end > 0 && output[end - 1] == '\n')
    end--;
  for (start = end; start > 0 && output[start - 1] != '\n'; start--)
    ;
  return start < end ? strndup(output + start, end - start) : xstrdup("no error message");
}

/* Runs argv with stdout and stderr into *output; returns the wait status or -1. */
static int run_capture(char *const argv[], char **output) {
  int p[2];
  pid_t pid;
  int status = -1;
  size_t len = 0, cap = 4096;
  char *buf = xmalloc0(cap);
  *output = buf;
  if (pipe2(p, O_CLOEXEC) < 0)
    return -1;
  pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    dup2(p[1], 2);
    execv(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  for (ssize_t r; pid > 0;) {
    if (len + 1 >= cap) {
      buf = realloc(buf, cap *= 2);
      if (buf == NULL)
        abort();
      *output = buf;
    }
    r = read(p[0], buf + len, cap - len - 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    len += (size_t)r;
  }
  buf[len] = '\0';
  close(p[0]);
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return pid > 0 ? status : -1;
}

/* "BOOT_ID INODE MTIME SIZE": criu's verdict holds for this boot and this criu binary */
static char *check_key(const char *criu) {
  struct stat st;
  if (stat(criu, &st) < 0)
    return NULL;
  return xasprintf("%s %lu %lld %lld", procfs_boot_id(), (unsigned long)st.st_ino,
                   (long long)st.st_mtime, (long long)st.st_size);
}

/* The cached verdict in FILE for this boot and criu: 1 and *why (NULL when it passed) when there
 * is one, 0 when there is none. */
static int cached_verdict(int dirfd, const char *file, const char *key, char **why) {
  cleanup_free char *cached = NULL;
  cleanup_error fsrun_error_t ignored = NULL;
  size_t len = 0, klen = strlen(key);

  if (read_file_at(dirfd, file, &cached, &len, &ignored) < 0 || strncmp(cached, key, klen) != 0 ||
      cached[klen] != '\n')
    return 0;
  *why = strcmp(cached + klen + 1, "ok") == 0 ? NULL : xstrdup(cached + klen + 1);
  return 1;
}

char *criu_check_verdict(const char *state_root, const char *criu, const char *feature) {
  /* root's verdict is the machine's, kept where every state root of this boot finds it: a test
   * suite or an engine with many roots pays for the check once */
  const char *cache_dir = geteuid() == 0 ? CRIU_CHECK_ROOT_DIR : state_root;
  cleanup_free char *key = check_key(criu);
  cleanup_free char *file =
      feature ? xasprintf("%s-%s", CRIU_CHECK_FILE, feature) : xstrdup(CRIU_CHECK_FILE);
  cleanup_free char *output = NULL;
  cleanup_free char *text = NULL;
  cleanup_close int dirfd = -1;
  cleanup_error fsrun_error_t ignored = NULL;
  char *argv[] = {(char *)criu, "check", feature ? "--feature" : NULL, (char *)feature, NULL};
  char *why = NULL;

  if (cache_dir != NULL && key != NULL) {
    (void)mkdir(cache_dir, 0700);
    dirfd = open(cache_dir, O_DIRECTORY | O_CLOEXEC);
  }
  if (dirfd >= 0 && cached_verdict(dirfd, file, key, &why))
    return why;
  if (run_capture(argv, &output) != 0)
    why = check_failure(output);
  if (dirfd >= 0) {
    text = xasprintf("%s\n%s", key, why ? why : "ok");
    (void)write_file_atomic_at(dirfd, file, text, strlen(text), 0600, &ignored);
  }
  return why;
}

char *criu_find_usable(const char *state_root, const char *what, fsrun_error_t *err) {
  cleanup_free char *criu = find_in_path("criu");
  cleanup_free char *why = NULL;

  if (criu == NULL) {
    fsrun_error_make(err, 0, "%s: criu not found in PATH (install the criu package)", what);
    return NULL;
  }
  why = criu_check_verdict(state_root, criu, NULL);
  if (why == NULL)
    return steal_ptr(&criu);
  fsrun_error_make(err, 0, "%s: CRIU cannot run on this kernel: `criu check` failed: %s", what,
                   why);
  return NULL;
}

/* For `features`: criu needs root, so an ordinary user is never offered it (and no check runs) */
char *criu_usable(const char *state_root) {
  cleanup_error fsrun_error_t err = NULL;
  if (geteuid() != 0)
    return NULL;
  return criu_find_usable(state_root, "features", &err);
}

void criu_argv_common(struct criu_argv *a, const char *criu, const char *action,
                      const char *image_dir, const char *work_dir, const struct criu_opts *o) {
  criu_argv_add(a, criu);
  criu_argv_add(a, action);
  criu_argv_add(a, "--images-dir");
  criu_argv_add(a, image_dir);
  criu_argv_add(a, "--work-dir");
  criu_argv_add(a, work_dir);
  criu_argv_addf(a, "--log-file=%s.log", action);
  criu_argv_add(a, "-v4");
  if (o->manage_cgroups_mode != NULL)
    criu_argv_addf(a, "--manage-cgroups=%s", o->manage_cgroups_mode);
  if (o->empty_netns)
    criu_argv_add(a, "--empty-ns=net");
  if (o->tcp_established)
    criu_argv_add(a, "--tcp-established");
  if (o->ext_unix_sk)
    criu_argv_add(a, "--ext-unix-sk");
  if (o->shell_job)
    criu_argv_add(a, "--shell-job");
  if (o->file_locks)
    criu_argv_add(a, "--file-locks");
  if (o->auto_dedup)
    criu_argv_add(a, "--auto-dedup");
  if (o->lazy_pages)
    criu_argv_add(a, "--lazy-pages");
}

int criu_check_config(const oci_config *config, const char *what, fsrun_error_t *err) {
  const oci_linux *lx = config->linux_;
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++)
    if (lx->namespaces[i].path != NULL && *lx->namespaces[i].path != '\0')
      return fsrun_error_make(err, 0,
                              "%s: linux.namespaces[%zu]: a joined %s namespace (path) cannot be "
                              "checkpointed or restored by fsrun",
                              what, i, lx->namespaces[i].type);
  return 0;
}

int criu_check_network_lock(const oci_config *config, const char *what, fsrun_error_t *err) {
  const oci_linux *lx = config->linux_;
  cleanup_free char *iptables = NULL;
  bool netns = false;
  for (size_t i = 0; lx != NULL && i < lx->n_namespaces; i++)
    netns = netns || strcmp(lx->namespaces[i].type, "network") == 0;
  if (!netns)
    return 0;
  /* criu 3.17's other lock, nftables, names its table after the dumped pid and so cannot unlock
   * a restore into a new pid: the restored network would stay locked */
  iptables = find_in_path("iptables-restore");
  if (iptables == NULL)
    return fsrun_error_make(err, 0,
                            "%s: criu locks the container's network namespace with "
                            "iptables-restore, which is not in PATH (install the iptables package)",
                            what);
  return 0;
}

static void report_failure(const char *what, const char *work_dir, const char *action, int status,
                           fsrun_error_t *err) {
  cleanup_free char *log_path = xasprintf("%s/%s.log", work_dir, action);
  cleanup_free char *log = NULL;
  cleanup_free char *why = NULL;
  size_t len = 0;
  cleanup_error fsrun_error_t ignored = NULL;
  if (read_file_at(AT_FDCWD, log_path, &log, &len, &ignored) == 0)
    why = first_error_line(log);
  if (why == NULL)
    why = WIFEXITED(status) ? xasprintf("exit status %d", WEXITSTATUS(status))
                            : xasprintf("killed by signal %d", WTERMSIG(status));
  fsrun_error_make(err, 0, "%s: criu %s failed: %s (log: %s)", what, action, why, log_path);
}

int criu_run(const struct criu_argv *a, const char *what, const char *work_dir, const char *action,
             const struct criu_child *child, fsrun_error_t *err) {
  int status = 0;
  pid_t pid = fork();
  if (pid < 0)
    return fsrun_error_errno(err, "%s: fork criu", what);
  if (pid == 0) {
    if (child != NULL && child->before_exec != NULL && child->before_exec(child->data) < 0)
      _exit(126);
    if (child != NULL && child->pass_fd >= 0 && fcntl(child->pass_fd, F_SETFD, 0) < 0)
      _exit(126);
    execv(a->v[0], a->v);
    _exit(127);
  }
  /* criu is the descriptor's only holder now: its reader sees EOF when criu closes it or dies */
  if (child != NULL && child->pass_fd >= 0)
    close(child->pass_fd);
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return fsrun_error_errno(err, "%s: wait for criu", what);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
    return fsrun_error_make(err, 0, "%s: could not prepare criu's %s (see the log above)", what,
                            action);
  if (status != 0) {
    report_failure(what, work_dir, action, status, err);
    return fsrun_error_code(err);
  }
  return 0;
}
