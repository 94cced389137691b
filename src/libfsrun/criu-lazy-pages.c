/* Lazy migration, as runc has it: `checkpoint --lazy-pages --page-server ADDRESS:PORT
 * --status-fd FD` dumps everything but the memory and stays on as criu's page server (FD gets a
 * \0 when it is ready); the caller then runs `criu lazy-pages --page-server --address ADDRESS
 * --port PORT` beside `restore --lazy-pages`, whose process faults its memory in through
 * userfaultfd from that daemon. The dump exits, and the checkpointed container is deleted, once
 * the daemon has pulled every page. Without --lazy-pages, --page-server sends the dump's pages to
 * a `criu page-server` that the caller runs on the other side. */
#include "criu-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "utils.h"

/* what criu's RPC answers for its "lazy_pages" feature: userfaultfd with the events of a
 * restored process's forks, mremaps and exits */
#define CRIU_LAZY_FEATURE "uffd-noncoop"

static int bad_page_server(const char *arg, fsrun_error_t *err) {
  return fsrun_error_make(err, 0,
                          "--page-server: expected ADDRESS:PORT (e.g. 127.0.0.1:27277 or "
                          "[::1]:27277), got `%s`",
                          arg);
}

int criu_parse_page_server(const char *arg, struct criu_page_server *ps, fsrun_error_t *err) {
  const char *host = arg, *port;
  size_t host_len;
  unsigned long n;
  char *end;

  if (arg[0] == '[') { /* [IPV6]:PORT, as Go's net.SplitHostPort that runc uses */
    const char *close = strchr(arg, ']');
    if (close == NULL || close[1] != ':')
      return bad_page_server(arg, err);
    host = arg + 1;
    host_len = (size_t)(close - host);
    port = close + 2;
  } else {
    const char *colon = strchr(arg, ':');
    if (colon == NULL || strchr(colon + 1, ':') != NULL) /* an IPv6 address needs brackets */
      return bad_page_server(arg, err);
    host_len = (size_t)(colon - arg);
    port = colon + 1;
  }
  if (host_len == 0 || host_len >= sizeof(ps->address))
    return bad_page_server(arg, err);
  errno = 0;
  n = strtoul(port, &end, 10);
  if (*port < '0' || *port > '9' || *end != '\0' || errno != 0 || n == 0 || n > 65535)
    return fsrun_error_make(err, 0,
                            "--page-server: `%s`: the port must be a number from 1 to 65535", arg);
  memcpy(ps->address, host, host_len);
  ps->address[host_len] = '\0';
  ps->port = (unsigned)n;
  return 0;
}

int criu_parse_status_fd(const char *arg, int *fd, fsrun_error_t *err) {
  unsigned long n;
  char *end;
  errno = 0;
  n = strtoul(arg, &end, 10);
  if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 || n > INT_MAX)
    return fsrun_error_make(err, 0, "--status-fd: expected a file descriptor number, got `%s`",
                            arg);
  *fd = (int)n;
  return 0;
}

/* The caller's descriptor: open, for writing, and inherited (fsrun opens its own descriptors
 * close-on-exec, so one that is close-on-exec here was not passed by the caller) */
static int check_status_fd(int fd, fsrun_error_t *err) {
  int flags = fcntl(fd, F_GETFL);
  int fdflags = fcntl(fd, F_GETFD);
  if (flags < 0 || fdflags < 0 || (fdflags & FD_CLOEXEC))
    return fsrun_error_make(err, 0, "--status-fd: descriptor %d is not open", fd);
  if ((flags & O_ACCMODE) == O_RDONLY)
    return fsrun_error_make(err, 0, "--status-fd: descriptor %d is not open for writing", fd);
  return 0;
}

int criu_check_lazy_checkpoint_opts(const struct criu_checkpoint_opts *o, fsrun_error_t *err) {
  if (o->c.lazy_pages && o->pre_dump)
    return fsrun_error_make(err, 0,
                            "--lazy-pages: not with --pre-dump (a pre-dump writes the memory "
                            "to the images)");
  if (o->c.lazy_pages && o->page_server.address[0] == '\0')
    return fsrun_error_make(err, 0,
                            "--lazy-pages: --page-server ADDRESS:PORT is required: the restore "
                            "side's `criu lazy-pages` daemon pulls the memory from there");
  if (o->status_fd < 0)
    return 0;
  if (!o->c.lazy_pages)
    return fsrun_error_make(err, 0,
                            "--status-fd: only with --lazy-pages (criu reports there when its "
                            "lazy page server is ready)");
  return check_status_fd(o->status_fd, err);
}

void criu_argv_page_server(struct criu_argv *a, const struct criu_checkpoint_opts *o) {
  if (o->page_server.address[0] == '\0')
    return;
  /* a lazy dump is the page server itself, listening there; criu's --page-server sends a plain
   * dump's pages to a page server that listens there */
  if (!o->c.lazy_pages)
    criu_argv_add(a, "--page-server");
  criu_argv_add(a, "--address");
  criu_argv_add(a, o->page_server.address);
  criu_argv_add(a, "--port");
  criu_argv_addf(a, "%u", o->page_server.port);
  if (o->status_fd >= 0) {
    criu_argv_add(a, "--status-fd");
    criu_argv_addf(a, "%d", o->status_fd);
  }
}

int criu_check_lazy_pages(const char *state_root, const char *criu, const char *what,
                          fsrun_error_t *err) {
  cleanup_free char *why = criu_check_verdict(state_root, criu, CRIU_LAZY_FEATURE);
  if (why == NULL)
    return 0;
  return fsrun_error_make(err, 0,
                          "%s: --lazy-pages: this kernel lacks what criu needs: `criu check "
                          "--feature " CRIU_LAZY_FEATURE "` failed: %s",
                          what, why);
}

bool criu_lazy_pages_usable(const char *state_root, const char *criu) {
  cleanup_free char *why = criu_check_verdict(state_root, criu, CRIU_LAZY_FEATURE);
  return why == NULL;
}

int criu_check_lazy_pages_daemon(const char *work_dir, fsrun_error_t *err) {
  cleanup_free char *path = xasprintf("%s/%s", work_dir, CRIU_LAZY_PAGES_SOCKET);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
    return 0;
  return fsrun_error_make(err, 0,
                          "restore: --lazy-pages: no `criu lazy-pages` daemon in the work "
                          "directory `%s` (no %s there): start `criu lazy-pages --images-dir "
                          "IMAGES --work-dir %s` first",
                          work_dir, CRIU_LAZY_PAGES_SOCKET, work_dir);
}
