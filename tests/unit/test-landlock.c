/* Unit tests for landlock.c: the run.fsrun.landlock annotation parser (field-naming errors), the
 * config checks, and, in forked children, what a restricted process can and cannot do (writes
 * outside the read-write paths fail with EACCES, TCP connect/bind only to listed ports). TAP
 * output. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "scratch.h"
#include "tap.h"
#include "landlock.h"
#include "oci.h"

#define ORIGIN "annotations[\"run.fsrun.landlock\"]"

/* Parses json, expecting failure; returns the message (static buffer) or "" on success. */
static const char *parse_error(const char *json) {
  static char msg[512];
  struct fsrun_landlock_rules *r = NULL;
  fsrun_error_t err = NULL;
  msg[0] = '\0';
  if (landlock_parse_annotation(json, &r, &err) < 0)
    snprintf(msg, sizeof(msg), "%s", err->msg);
  landlock_rules_free(r);
  fsrun_error_release(&err);
  return msg;
}

static void test_parse_valid(void) {
  struct fsrun_landlock_rules *r = NULL;
  fsrun_error_t err = NULL;
  int ret = landlock_parse_annotation(
      "{\"readOnly\": [\"/usr\", \"/etc\"], \"readWrite\": [\"/tmp\"], \"tcpConnect\": [443, 80],"
      " \"tcpBind\": [8080], \"strict\": true}",
      &r, &err);
  tap_ok(ret == 0 && r != NULL, "a full annotation parses");
  if (r == NULL) {
    printf("# %s\n", err ? err->msg : "?");
    fsrun_error_release(&err);
    return;
  }
  tap_ok(r->restrict_fs && r->n_read_only == 2 && strcmp(r->read_only[0], "/usr") == 0 &&
             strcmp(r->read_only[1], "/etc") == 0,
         "readOnly paths kept in order");
  tap_ok(r->n_read_write == 1 && strcmp(r->read_write[0], "/tmp") == 0, "readWrite paths");
  tap_ok(r->restrict_tcp_connect && r->n_tcp_connect == 2 && r->tcp_connect[0] == 443 &&
             r->tcp_connect[1] == 80,
         "tcpConnect ports");
  tap_ok(r->restrict_tcp_bind && r->n_tcp_bind == 1 && r->tcp_bind[0] == 8080, "tcpBind ports");
  tap_ok(r->strict, "strict: true");
  tap_ok(!r->set_no_new_privs, "the annotation never asks to set no_new_privs itself");
  landlock_rules_free(r);

  r = NULL;
  tap_ok(landlock_parse_annotation("{}", &r, &err) == 0 && r != NULL && !r->restrict_fs &&
             !r->restrict_tcp_connect && !r->restrict_tcp_bind && !r->strict,
         "{} restricts nothing");
  landlock_rules_free(r);

  r = NULL;
  tap_ok(landlock_parse_annotation("{\"tcpConnect\": []}", &r, &err) == 0 && r != NULL &&
             r->restrict_tcp_connect && r->n_tcp_connect == 0 && !r->restrict_fs,
         "\"tcpConnect\": [] denies every connect and leaves the filesystem alone");
  landlock_rules_free(r);

  r = NULL;
  tap_ok(landlock_parse_annotation("{\"readOnly\": [], \"strict\": false}", &r, &err) == 0 &&
             r != NULL && r->restrict_fs && r->n_read_only == 0 && !r->strict,
         "\"readOnly\": [] alone restricts the whole filesystem");
  landlock_rules_free(r);
  fsrun_error_release(&err);
}

static void expect_error(const char *json, const char *want, const char *what) {
  const char *msg = parse_error(json);
  tap_ok(strstr(msg, want) != NULL, "%s: \"%s\"", what, msg);
}

static void test_parse_errors(void) {
  expect_error("{\"readOnly\": [\"/usr\", \"etc\"]}",
               ORIGIN ".readOnly[1]: expected an absolute path, got `etc`",
               "a relative path names readOnly[1]");
  expect_error("{\"readWrite\": [\"/tmp\", 3]}", ORIGIN ".readWrite[1]: expected a string",
               "a number in readWrite names readWrite[1]");
  expect_error("{\"readOnly\": \"/usr\"}", ORIGIN ".readOnly: expected an array",
               "a string instead of an array");
  expect_error("{\"tcpConnect\": [80, 443, 70000]}",
               ORIGIN ".tcpConnect[2]: expected a TCP port (0-65535)", "port 70000");
  expect_error("{\"tcpBind\": [-1]}", ORIGIN ".tcpBind[0]: expected a TCP port", "a negative port");
  expect_error("{\"tcpBind\": [80.5]}", ORIGIN ".tcpBind[0]: expected a TCP port",
               "a fractional port");
  expect_error("{\"tcpConnect\": [\"80\"]}", ORIGIN ".tcpConnect[0]: expected a TCP port",
               "a port as a string");
  expect_error("{\"strict\": \"yes\"}", ORIGIN ".strict: expected a boolean", "strict as a string");
  expect_error("{\"readwrite\": [\"/tmp\"]}", ORIGIN ": unknown key `readwrite`",
               "a misspelt key is an error");
  expect_error("[\"/tmp\"]", ORIGIN ": expected a JSON object", "an array at the top");
  expect_error("{\"readOnly\": [\"/usr\"", ORIGIN ": invalid JSON", "truncated JSON");
  expect_error("", ORIGIN ": invalid JSON", "an empty value");
}

static char *cap_sys_admin[] = {"CAP_SYS_ADMIN"};
static char *cap_kill[] = {"CAP_KILL"};

static void test_from_config(void) {
  oci_capabilities caps = {.effective = {cap_kill, 1}, .has_effective = true};
  oci_process p = {.no_new_privileges = false, .capabilities = &caps};
  oci_config c = {.process = &p};
  struct fsrun_landlock_rules *r = NULL;
  fsrun_error_t err = NULL;

  tap_ok(landlock_rules_from_config(&c, &r, &err) == 0 && r == NULL,
         "no annotation: no rules, no error");

  oci_map_set(&c.annotations, LANDLOCK_ANNOTATION, "{\"readWrite\": [\"/tmp\"]}");
  int ret = landlock_rules_from_config(&c, &r, &err);
  tap_ok(ret < 0 && r == NULL && err != NULL &&
             strstr(err->msg, "set process.noNewPrivileges to true") != NULL,
         "without noNewPrivileges or CAP_SYS_ADMIN the config is refused before clone: \"%s\"",
         err ? err->msg : "");
  fsrun_error_release(&err);

  p.no_new_privileges = true;
  tap_ok(landlock_rules_from_config(&c, &r, &err) == 0 && r != NULL && r->n_read_write == 1,
         "with noNewPrivileges the annotation is accepted");
  landlock_rules_free(r);
  r = NULL;

  p.no_new_privileges = false;
  caps.effective = (oci_strv){cap_sys_admin, 1};
  tap_ok(landlock_rules_from_config(&c, &r, &err) == 0 && r != NULL,
         "with CAP_SYS_ADMIN in the effective set the annotation is accepted");
  landlock_rules_free(r);
  r = NULL;

  oci_map_set(&c.annotations, LANDLOCK_ANNOTATION, "{\"readWrite\": [\"tmp\"]}");
  tap_ok(landlock_rules_from_config(&c, &r, &err) < 0 && err != NULL &&
             strstr(err->msg, ORIGIN ".readWrite[0]") != NULL,
         "parse errors come through landlock_rules_from_config");
  fsrun_error_release(&err);
  oci_map_free(&c.annotations);
}

/* --- functional: forked children restrict themselves and report errnos through a pipe ----------
 */

#define MAX_RESULTS 16

struct results {
  int n;
  int v[MAX_RESULTS]; /* 0 = the call succeeded, else its errno; -1000 - n: setup failed */
  char msg[256];
};

static void record(struct results *res, int rc) {
  if (res->n < MAX_RESULTS)
    res->v[res->n++] = rc < 0 ? errno : 0;
}

static int run_in_child(void (*fn)(struct results *, void *), void *arg, struct results *out) {
  int fds[2];
  pid_t pid;
  int status = 0;
  memset(out, 0, sizeof(*out));
  if (pipe(fds) < 0)
    return -1;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    struct results res = {0};
    close(fds[0]);
    fn(&res, arg);
    if (write(fds[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
      _exit(2);
    _exit(0); /* no atexit handlers (LeakSanitizer would read /proc, which Landlock denies) */
  }
  close(fds[1]);
  if (pid < 0 || read(fds[0], out, sizeof(*out)) != (ssize_t)sizeof(*out)) {
    close(fds[0]);
    if (pid > 0)
      waitpid(pid, &status, 0);
    return -1;
  }
  close(fds[0]);
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int apply_or_report(const struct fsrun_landlock_rules *r, struct results *res) {
  fsrun_error_t err = NULL;
  if (landlock_apply(r, &err) < 0) {
    snprintf(res->msg, sizeof(res->msg), "%s", err->msg);
    fsrun_error_release(&err);
    return -1;
  }
  return 0;
}

static int write_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  if (write(fd, "x", 1) != 1) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return close(fd);
}

static int read_file(const char *path) {
  char c;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (read(fd, &c, 1) < 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return close(fd);
}

static char base[] = "/tmp/fsrun-landlock-XXXXXX";

static char *at(const char *rel) {
  static char bufs[8][512];
  static int i;
  char *b = bufs[i++ % 8];
  snprintf(b, 512, "%s/%s", base, rel);
  return b;
}

static void child_fs(struct results *res, void *arg) {
  struct fsrun_landlock_rules *r = arg;
  if (apply_or_report(r, res) < 0)
    return;
  record(res, write_file(at("x/new")));                /* 0: rw path: allowed */
  record(res, write_file(at("other/new")));            /* 1: elsewhere: EACCES */
  record(res, read_file(at("ro/file")));               /* 2: ro path: read allowed */
  record(res, write_file(at("ro/new")));               /* 3: ro path: create denied */
  record(res, truncate(at("ro/file"), 0));             /* 4: ro path: truncate denied (ABI >= 3) */
  record(res, read_file("/etc/hostname"));             /* 5: not listed: read denied */
  record(res, mkdir(at("x/dir"), 0755));               /* 6: rw path: mkdir allowed */
  record(res, rename(at("x/new"), at("x/dir/moved"))); /* 7: rename inside rw: allowed */
  record(res, unlink(at("ro/file")));                  /* 8: ro path: unlink denied */
  record(res, read_file(at("ro-file-only")));          /* 9: a file rule: read allowed */
}

static void test_fs(int abi) {
  struct fsrun_landlock_rules *r = landlock_rules_new("test");
  struct results res;

  if (mkdtemp(base) == NULL) {
    tap_ok(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  mkdir(at("x"), 0755);
  mkdir(at("other"), 0755);
  mkdir(at("ro"), 0755);
  write_file(at("ro/file"));
  write_file(at("ro-file-only"));

  landlock_rules_add_path(r, at("x"), true);
  landlock_rules_add_path(r, at("ro"), false);
  landlock_rules_add_path(r, at("ro-file-only"), false);
  r->set_no_new_privs = true; /* so that the test also runs without CAP_SYS_ADMIN */

  if (run_in_child(child_fs, r, &res) < 0 || res.msg[0]) {
    tap_ok(0, "landlock_apply in the child: %s", res.msg);
  } else {
    tap_ok(res.n == 10, "the child ran every check");
    tap_ok(res.v[0] == 0, "write beneath the read-write path works (%s)", strerror(res.v[0]));
    tap_ok(res.v[1] == EACCES, "write elsewhere fails with EACCES (%s)", strerror(res.v[1]));
    tap_ok(res.v[2] == 0, "read beneath a read-only path works (%s)", strerror(res.v[2]));
    tap_ok(res.v[3] == EACCES, "creating a file beneath a read-only path fails with EACCES (%s)",
           strerror(res.v[3]));
    if (abi >= 3)
      tap_ok(res.v[4] == EACCES, "truncate beneath a read-only path fails with EACCES (%s)",
             strerror(res.v[4]));
    else
      tap_skip("truncate is restricted from Landlock ABI 3");
    tap_ok(res.v[5] == EACCES, "reading an unlisted file (/etc/hostname) fails with EACCES (%s)",
           strerror(res.v[5]));
    tap_ok(res.v[6] == 0, "mkdir beneath the read-write path works (%s)", strerror(res.v[6]));
    tap_ok(res.v[7] == 0, "rename within the read-write path works (%s)", strerror(res.v[7]));
    tap_ok(res.v[8] == EACCES, "unlink beneath a read-only path fails with EACCES (%s)",
           strerror(res.v[8]));
    tap_ok(res.v[9] == 0, "a rule on a single file allows reading it (%s)", strerror(res.v[9]));
  }
  struct stat st;
  tap_ok(stat(at("other/new"), &st) < 0 && errno == ENOENT, "the denied file does not exist");
  tap_ok(stat(at("x/dir/moved"), &st) == 0, "the allowed file exists where the child put it");
  landlock_rules_free(r);
  scratch_remove(base);
}

/* A listening TCP socket on 127.0.0.1 with an ephemeral port. */
static int listen_loopback(uint16_t *port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) < 0)
    return -1;
  *port = ntohs(a.sin_port);
  return fd;
}

static int connect_loopback(uint16_t port) {
  struct sockaddr_in a = {
      .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(port)};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc;
  if (fd < 0)
    return -1;
  rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
  if (rc < 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return close(fd);
}

static int bind_loopback(uint16_t port) {
  struct sockaddr_in a = {
      .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(port)};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1, rc;
  if (fd < 0)
    return -1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
  if (rc < 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return close(fd);
}

struct net_args {
  struct fsrun_landlock_rules *rules;
  uint16_t allowed, denied, bind_allowed, bind_denied;
};

static void child_net(struct results *res, void *arg) {
  struct net_args *a = arg;
  if (apply_or_report(a->rules, res) < 0)
    return;
  record(res, connect_loopback(a->allowed));                 /* 0 */
  record(res, connect_loopback(a->denied));                  /* 1 */
  record(res, bind_loopback(a->bind_allowed));               /* 2 */
  record(res, bind_loopback(a->bind_denied));                /* 3 */
  record(res, write_file("/tmp/.fsrun-landlock-net-probe")); /* 4: filesystem untouched */
  unlink("/tmp/.fsrun-landlock-net-probe");
}

static void test_net(int abi) {
  struct net_args a = {0};
  struct results res;
  int l1, l2;
  uint16_t p1 = 0, p2 = 0, p3 = 0, p4 = 0;
  int t3, t4;

  if (abi < 4) {
    tap_skip("TCP rules need Landlock ABI 4");
    return;
  }
  l1 = listen_loopback(&p1);
  l2 = listen_loopback(&p2);
  /* two free ports for bind: take them, release them */
  t3 = listen_loopback(&p3);
  t4 = listen_loopback(&p4);
  close(t3);
  close(t4);
  if (l1 < 0 || l2 < 0) {
    tap_ok(0, "listen on loopback: %s", strerror(errno));
    return;
  }
  a.rules = landlock_rules_new("test");
  landlock_rules_add_port(a.rules, p1, false);
  landlock_rules_add_port(a.rules, p3, true);
  a.rules->set_no_new_privs = true;
  a.allowed = p1;
  a.denied = p2;
  a.bind_allowed = p3;
  a.bind_denied = p4;
  tap_ok(!a.rules->restrict_fs, "port rules alone do not restrict the filesystem");
  if (run_in_child(child_net, &a, &res) < 0 || res.msg[0]) {
    tap_ok(0, "landlock_apply in the child: %s", res.msg);
  } else {
    tap_ok(res.v[0] == 0, "connect to the allowed loopback port %u works (%s)", p1,
           strerror(res.v[0]));
    tap_ok(res.v[1] == EACCES, "connect to loopback port %u (not allowed) fails with EACCES (%s)",
           p2, strerror(res.v[1]));
    tap_ok(res.v[2] == 0, "bind to the allowed port %u works (%s)", p3, strerror(res.v[2]));
    tap_ok(res.v[3] == EACCES, "bind to port %u (not allowed) fails with EACCES (%s)", p4,
           strerror(res.v[3]));
    tap_ok(res.v[4] == 0, "the filesystem is not restricted by port rules (%s)",
           strerror(res.v[4]));
  }
  landlock_rules_free(a.rules);
  close(l1);
  close(l2);
}

static void child_missing(struct results *res, void *arg) {
  if (apply_or_report(arg, res) < 0)
    return;
  record(res, read_file("/etc/hostname"));
}

static void test_missing_path(void) {
  struct fsrun_landlock_rules *r = landlock_rules_new(ORIGIN);
  struct results res;
  landlock_rules_add_path(r, "/usr", false);
  landlock_rules_add_path(r, "/nonexistent-fsrun-path", false);
  r->set_no_new_privs = true;
  tap_ok(run_in_child(child_missing, r, &res) == 0 && res.msg[0] == '\0' && res.n == 1 &&
             res.v[0] == EACCES,
         "non-strict: a missing path is skipped with a warning and the rest is enforced");
  r->strict = true;
  run_in_child(child_missing, r, &res);
  tap_ok(strstr(res.msg, ORIGIN ".readOnly[1]: open `/nonexistent-fsrun-path`") != NULL &&
             res.n == 0,
         "strict: a missing path is an error naming the field: \"%s\"", res.msg);
  landlock_rules_free(r);
}

/* CAP_SYS_ADMIN out of the child's effective set (landlock_restrict_self then needs
 * no_new_privs); false, with res->msg set, when it could not be dropped. */
static bool drop_effective_sys_admin(struct results *res) {
  cap_t caps = cap_get_proc();
  cap_value_t admin = CAP_SYS_ADMIN;
  if (caps == NULL || cap_set_flag(caps, CAP_EFFECTIVE, 1, &admin, CAP_CLEAR) < 0 ||
      cap_set_proc(caps) < 0) {
    snprintf(res->msg, sizeof(res->msg), "setup: drop CAP_SYS_ADMIN: %s", strerror(errno));
    return false;
  }
  cap_free(caps);
  return true;
}

/* Without no_new_privs and without CAP_SYS_ADMIN the kernel refuses, and the error says why. */
static void child_no_nnp(struct results *res, void *arg) {
  struct fsrun_landlock_rules *r = arg;
  if (!drop_effective_sys_admin(res))
    return;
  r->set_no_new_privs = false;
  if (apply_or_report(r, res) < 0)
    return;
  record(res, 0);
}

static void child_set_nnp(struct results *res, void *arg) {
  struct fsrun_landlock_rules *r = arg;
  if (!drop_effective_sys_admin(res))
    return;
  r->set_no_new_privs = true;
  if (apply_or_report(r, res) < 0)
    return;
  record(res, (int)prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : -1);
  record(res, write_file("/tmp/.fsrun-landlock-denied"));
}

static void test_no_new_privs(void) {
  struct fsrun_landlock_rules *r = landlock_rules_new(ORIGIN);
  struct results res;
  if (geteuid() != 0) {
    tap_skip("needs root (drops CAP_SYS_ADMIN in a child)");
    return;
  }
  landlock_rules_add_path(r, "/usr", false);
  run_in_child(child_no_nnp, r, &res);
  tap_ok(res.n == 0 && strstr(res.msg, "set process.noNewPrivileges to true") != NULL,
         "without no_new_privs or CAP_SYS_ADMIN: a clear error: \"%s\"", res.msg);
  tap_ok(run_in_child(child_set_nnp, r, &res) == 0 && res.msg[0] == '\0' && res.n == 2 &&
             res.v[0] == 0 && res.v[1] == EACCES,
         "set_no_new_privs turns no_new_privs on and the rules hold (%s)", res.msg);
  landlock_rules_free(r);
}

/* The annotation end to end: parse in the "runtime", apply in the "child". */
static void child_annotation(struct results *res, void *arg) {
  if (apply_or_report(arg, res) < 0)
    return;
  record(res, write_file(at("rw/ok")));
  record(res, write_file(at("no")));
  record(res, read_file(at("rw/ok")));
}

static void test_annotation_end_to_end(void) {
  struct fsrun_landlock_rules *r = NULL;
  fsrun_error_t err = NULL;
  struct results res;
  char json[1024];

  strcpy(base, "/tmp/fsrun-landlock-XXXXXX");
  if (mkdtemp(base) == NULL) {
    tap_ok(0, "mkdtemp");
    return;
  }
  mkdir(at("rw"), 0755);
  snprintf(json, sizeof(json), "{\"readWrite\": [\"%s\"], \"strict\": true}", at("rw"));
  if (landlock_parse_annotation(json, &r, &err) < 0) {
    tap_ok(0, "parse: %s", err->msg);
    fsrun_error_release(&err);
    return;
  }
  if (geteuid() != 0)
    r->set_no_new_privs = true;
  tap_ok(run_in_child(child_annotation, r, &res) == 0 && res.msg[0] == '\0' && res.n == 3 &&
             res.v[0] == 0 && res.v[1] == EACCES && res.v[2] == 0,
         "annotation {readWrite: [dir], strict: true}: write inside works, outside EACCES (%s)",
         res.msg);
  landlock_rules_free(r);
  scratch_remove(base);
}

int main(void) {
  int abi = landlock_abi_version();
  printf("# Landlock ABI of this kernel: %d\n", abi);
  test_parse_valid();
  test_parse_errors();
  test_from_config();
  if (abi <= 0) {
    tap_skip("the kernel has no Landlock: functional tests skipped");
  } else {
    test_fs(abi);
    test_net(abi);
    test_missing_path();
    test_no_new_privs();
    test_annotation_end_to_end();
  }
  return tap_done();
}
