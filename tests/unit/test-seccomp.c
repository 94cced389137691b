/* Unit tests for seccomp.c: profiles compile (or fail with a message naming the field), and the
 * compiled filters, loaded into forked children, do what the profile says. TAP output. */
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "seccomp.h"
#include "tap.h"
#include "utils.h"

#define STRV(...)                                                                                  \
  ((oci_strv){(char *[]){__VA_ARGS__}, sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)})
#define NO_STRV ((oci_strv){NULL, 0})

/* Compiles s; returns the error message (static copy) or NULL on success. */
static const char *compile_error(const oci_seccomp *s) {
  static char msg[512];
  struct fsrun_seccomp *f = NULL;
  fsrun_error_t err = NULL;
  if (seccomp_compile(s, &f, &err) == 0) {
    seccomp_free(f);
    return NULL;
  }
  snprintf(msg, sizeof(msg), "%s", err ? err->msg : "(no message)");
  fsrun_error_release(&err);
  return msg;
}

static void expect_error(const oci_seccomp *s, const char *want, const char *what) {
  const char *msg = compile_error(s);
  tap_ok(msg != NULL && strstr(msg, want) != NULL, "%s: error names `%s` (%s)", what, want,
         msg ? msg : "compiled");
}

/* Compiles s, forks, loads the filter with no_new_privs and runs check(); returns the child's
 * wait status, or -1 when compiling failed. */
static int run_filtered(const oci_seccomp *s, int (*check)(void)) {
  struct fsrun_seccomp *f = NULL;
  fsrun_error_t err = NULL;
  int status = 0;
  if (seccomp_compile(s, &f, &err) < 0) {
    printf("# compile: %s\n", err->msg);
    fsrun_error_release(&err);
    return -1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int notify_fd;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load_filter(f, &notify_fd, &err) < 0)
      _exit(99);
    _exit(check());
  }
  waitpid(pid, &status, 0);
  seccomp_free(f);
  return status;
}

static int exited_zero(int status) {
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* --- checks run inside the filtered children (return 0 when all is as expected) --- */

static int check_mkdir_eacces(void) {
  return !(mkdir("/tmp/fsrun-test-seccomp-never", 0700) < 0 && errno == EACCES);
}
static int check_mkdir_eperm(void) {
  return !(mkdir("/tmp/fsrun-test-seccomp-never", 0700) < 0 && errno == EPERM);
}
static int check_uname(void) {
  syscall(SYS_uname, NULL);
  return 0; /* not reached with KILL_PROCESS */
}
static int check_getppid_enosys(void) {
  long r = syscall(SYS_getppid);
  return !(r < 0 && errno == ENOSYS);
}
static int check_personality_arg(void) {
  long query = syscall(SYS_personality, 0xffffffffUL);
  errno = 0;
  long r = syscall(SYS_personality, (unsigned long)PER_LINUX32);
  return !(query >= 0 && r < 0 && errno == EPERM);
}
static int check_getpriority_or(void) {
  errno = 0;
  long self = syscall(SYS_getpriority, PRIO_PROCESS, 0);
  int self_ok = errno == 0 && self >= 0;
  long pgrp = syscall(SYS_getpriority, PRIO_PGRP, 0);
  int pgrp_denied = pgrp < 0 && errno == EPERM;
  long user = syscall(SYS_getpriority, PRIO_USER, 0);
  int user_denied = user < 0 && errno == EPERM;
  return !(self_ok && pgrp_denied && user_denied);
}
static int check_umask_masked(void) {
  long denied = syscall(SYS_umask, 0022);
  int denied_ok = denied < 0 && errno == EPERM;
  long allowed = syscall(SYS_umask, 0027);
  return !(denied_ok && allowed >= 0);
}
static int check_uint64_exact(void) {
  long all_ones = syscall(SYS_personality, ~0UL);
  int denied = all_ones < 0 && errno == EACCES;
  long low_ones = syscall(SYS_personality, 0xffffffffUL); /* the query: must be allowed */
  return !(denied && low_ones >= 0);
}
static int check_nothing(void) {
  return 0;
}

/* --- NOTIFY: the child loads, sends the fd to us, then calls mkdir; we answer --- */

static char listener_path[108];
static struct fsrun_seccomp *notify_filter;

static int check_notify_child(void) {
  fsrun_error_t err = NULL;
  int notify_fd = -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      seccomp_load_filter(notify_filter, &notify_fd, &err) < 0 || notify_fd < 0)
    return 10;
  if (seccomp_send_listener(listener_path, "meta \"quoted\"", notify_fd, getpid(),
                            "{\"ociVersion\":\"1.3.0\",\"id\":\"t\",\"status\":\"creating\"}",
                            &err) < 0)
    return 11;
  close(notify_fd);
  if (!(mkdir("/tmp/fsrun-test-seccomp-never", 0700) < 0 && errno == EXDEV))
    return 12;
  if (mkdir("/nonexistent-dir/fsrun", 0700) != 0) /* answered with success */
    return 13;
  return 0;
}

static int recv_fd_and_text(int conn, char *text, size_t size, int *fd) {
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = text, .iov_len = size - 1};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control.buf,
                       .msg_controllen = sizeof(control)};
  ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    return -1;
  text[n] = '\0';
  size_t got = (size_t)n;
  while (got < size - 1) { /* the rest of the JSON, until the sender closes */
    ssize_t m = read(conn, text + got, size - 1 - got);
    if (m <= 0)
      break;
    got += (size_t)m;
    text[got] = '\0';
  }
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == NULL || cmsg->cmsg_type != SCM_RIGHTS)
    return -1;
  memcpy(fd, CMSG_DATA(cmsg), sizeof(int));
  return 0;
}

/* Forks, loads f with no_new_privs and runs check(); the child's wait status. */
static int run_loaded(const struct fsrun_seccomp *f, int (*check)(void)) {
  int status = 0;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fsrun_error_t err = NULL;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load_filter(f, NULL, &err) < 0)
      _exit(99);
    _exit(check());
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return status;
}

/* The program create keeps for exec: the same filter back, and nothing from bytes it did not
 * write (exec compiles from the config then). */
static void test_saved(void) {
  oci_seccomp_syscall rules[] = {{.names = STRV("mkdir", "mkdirat"),
                                  .action = "SCMP_ACT_ERRNO",
                                  .has_errno_ret = true,
                                  .errno_ret = 13}};
  oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
  struct fsrun_seccomp *f = NULL, *back = NULL;
  fsrun_error_t err = NULL;
  char *bytes, *bad;
  size_t len = 0;
  if (seccomp_compile(&s, &f, &err) < 0) {
    tap_ok(0, "compile for the kept program: %s", err->msg);
    fsrun_error_release(&err);
    return;
  }
  bytes = seccomp_serialize(f, &len);
  back = seccomp_deserialize(bytes, len);
  tap_ok(back != NULL && exited_zero(run_loaded(back, check_mkdir_eacces)),
         "the kept program read back is the filter: mkdir fails with EACCES");
  seccomp_free(back);
  tap_ok(seccomp_deserialize(bytes, len - 1) == NULL, "a program one byte short is not taken");
  tap_ok(seccomp_deserialize(bytes, 10) == NULL, "a header cut short is not taken");
  bad = xmalloc0(len);
  for (size_t at = 0; at < 24; at += 4) {
    if (at == 12 || at == 16) /* flags and has_notify 0 are the filter's own */
      continue;
    memcpy(bad, bytes, len);
    bad[at] ^= 0x55;
    tap_ok(seccomp_deserialize(bad, len) == NULL, "a header changed at byte %zu is not taken", at);
  }
  memcpy(bad, bytes, len);
  bad[16] = 2;
  tap_ok(seccomp_deserialize(bad, len) == NULL, "a listener flag other than 0 or 1 is not taken");
  free(bad);
  free(bytes);
  seccomp_free(f);
}

static void test_notify(void) {
  oci_seccomp_syscall rules[] = {{.names = STRV("mkdir", "mkdirat"), .action = "SCMP_ACT_NOTIFY"}};
  oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                   .syscalls = rules,
                   .n_syscalls = 1,
                   .listener_path = listener_path,
                   .flags = STRV("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")};
  fsrun_error_t err = NULL;
  snprintf(listener_path, sizeof(listener_path), "/tmp/fsrun-test-seccomp-%d.sock", getpid());
  unlink(listener_path);
  if (seccomp_compile(&s, &notify_filter, &err) < 0) {
    tap_ok(0, "NOTIFY profile compiles: %s", err->msg);
    fsrun_error_release(&err);
    return;
  }
  tap_ok(seccomp_has_notify(notify_filter), "NOTIFY profile reports a listener");

  int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strcpy(addr.sun_path, listener_path);
  if (bind(srv, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(srv, 1) < 0) {
    tap_ok(0, "listen on %s", listener_path);
    return;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0)
    _exit(check_notify_child());

  int conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  char text[4096] = "";
  int notify_fd = -1;
  int got = conn >= 0 && recv_fd_and_text(conn, text, sizeof(text), &notify_fd) == 0;
  char want_pid[64];
  snprintf(want_pid, sizeof(want_pid), "\"pid\":%d", pid);
  tap_ok(got && strstr(text, "\"fds\":[\"seccompFd\"]") && strstr(text, want_pid) &&
             strstr(text, "\"metadata\":\"meta \\\"quoted\\\"\"") &&
             strstr(text, "\"state\":{\"ociVersion\":\"1.3.0\",\"id\":\"t\""),
         "listener receives the fd and the containerProcessState: %s", text);

  int answered = 0;
  for (int i = 0; got && i < 2; i++) {
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof(req));
    if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
      break;
    memset(&resp, 0, sizeof(resp));
    resp.id = req.id;
    resp.error = i == 0 ? -EXDEV : 0; /* first a chosen errno, then a fake success */
    resp.val = 0;
    if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 && (int)req.pid == pid)
      answered++;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  tap_ok(answered == 2 && exited_zero(status),
         "the listener answers mkdir: EXDEV, then success (child status %d)",
         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  struct stat st;
  tap_ok(stat("/tmp/fsrun-test-seccomp-never", &st) < 0, "nothing was created");
  if (notify_fd >= 0)
    close(notify_fd);
  if (conn >= 0)
    close(conn);
  close(srv);
  unlink(listener_path);
  seccomp_free(notify_filter);
}

int main(void) {
  struct fsrun_seccomp *f = (void *)1;
  fsrun_error_t err = NULL;
  tap_ok(seccomp_compile(NULL, &f, &err) == 0 && f == NULL, "no linux.seccomp: no filter");
  tap_ok(seccomp_load_filter(NULL, NULL, &err) == 0, "loading no filter is a no-op");

  /* --- compile --- */
  {
    oci_seccomp_syscall rules[] = {{.names = STRV("mkdir", "mkdirat"),
                                    .action = "SCMP_ACT_ERRNO",
                                    .has_errno_ret = true,
                                    .errno_ret = 13}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                     .architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"),
                     .syscalls = rules,
                     .n_syscalls = 1};
    tap_ok(compile_error(&s) == NULL, "a deny-list profile with three architectures compiles");
    tap_ok(exited_zero(run_filtered(&s, check_mkdir_eacces)),
           "errnoRet 13: mkdir fails with EACCES");
    rules[0].has_errno_ret = false;
    tap_ok(exited_zero(run_filtered(&s, check_mkdir_eperm)), "ERRNO without errnoRet: EPERM");
  }
  {
    oci_seccomp_syscall rules[] = {{.names = STRV("uname"), .action = "SCMP_ACT_KILL_PROCESS"}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    int status = run_filtered(&s, check_uname);
    tap_ok(status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
           "KILL_PROCESS on uname: killed by SIGSYS");
  }
  {
    oci_seccomp_syscall rules[] = {
        /* exit plus what the sanitizers' exit path may call */
        {.names =
             STRV("exit", "exit_group", "not_a_syscall_at_all", "getpid", "gettid", "sigaltstack",
                  "mmap", "munmap", "madvise", "write", "read", "open", "openat", "close",
                  "rt_sigprocmask", "rt_sigaction", "prctl", "futex", "sched_yield"),
         .action = "SCMP_ACT_ALLOW"}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ERRNO",
                     .has_default_errno_ret = true,
                     .default_errno_ret = 38,
                     .syscalls = rules,
                     .n_syscalls = 1};
    tap_ok(compile_error(&s) == NULL, "an unknown syscall name is skipped");
    tap_ok(exited_zero(run_filtered(&s, check_getppid_enosys)),
           "allow list with defaultErrnoRet 38: an unlisted syscall fails with ENOSYS");
  }
  {
    oci_seccomp_arg args[] = {{.index = 0, .value = PER_LINUX32, .op = "SCMP_CMP_EQ"}};
    oci_seccomp_syscall rules[] = {
        {.names = STRV("personality"), .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 1}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    tap_ok(exited_zero(run_filtered(&s, check_personality_arg)),
           "personality arg0 EQ PER_LINUX32 is denied, other values pass");
  }
  {
    oci_seccomp_arg args[] = {{.index = 0, .value = PRIO_PGRP, .op = "SCMP_CMP_EQ"},
                              {.index = 0, .value = PRIO_USER, .op = "SCMP_CMP_EQ"}};
    oci_seccomp_syscall rules[] = {
        {.names = STRV("getpriority"), .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 2}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    tap_ok(exited_zero(run_filtered(&s, check_getpriority_or)),
           "the same argument index twice: either comparison matches (OR)");
  }
  {
    oci_seccomp_arg args[] = {
        {.index = 0, .value = 0077, .value_two = 0022, .op = "SCMP_CMP_MASKED_EQ"}};
    oci_seccomp_syscall rules[] = {
        {.names = STRV("umask"), .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 1}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    tap_ok(exited_zero(run_filtered(&s, check_umask_masked)),
           "MASKED_EQ: value is the mask, valueTwo the datum");
  }
  {
    oci_seccomp_arg args[] = {{.index = 0, .value = 0xffffffffffffffffULL, .op = "SCMP_CMP_EQ"}};
    oci_seccomp_syscall rules[] = {{.names = STRV("personality"),
                                    .action = "SCMP_ACT_ERRNO",
                                    .has_errno_ret = true,
                                    .errno_ret = EACCES,
                                    .args = args,
                                    .n_args = 1}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    tap_ok(compile_error(&s) == NULL, "arg value 0xffffffffffffffff compiles");
    tap_ok(exited_zero(run_filtered(&s, check_uint64_exact)),
           "arg value 0xffffffffffffffff matches exactly that value, not 0xffffffff");
  }
  {
    static const char *ops[] = {"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",       "SCMP_CMP_EQ",
                                "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ"};
    static const char *actions[] = {"SCMP_ACT_KILL",  "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
                                    "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE",       "SCMP_ACT_LOG"};
    int bad = 0;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
      oci_seccomp_arg args[] = {{.index = 1, .value = 5, .value_two = 1, .op = (char *)ops[i]}};
      oci_seccomp_syscall rules[] = {
          {.names = STRV("kill"), .action = (char *)actions[i % 6], .args = args, .n_args = 1}};
      oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
      const char *msg = compile_error(&s);
      if (msg) {
        printf("# %s: %s\n", ops[i], msg);
        bad++;
      }
    }
    tap_ok(bad == 0, "every operator and action compiles");
  }
  {
    oci_seccomp_syscall rules[] = {{.names = STRV("getppid"), .action = "SCMP_ACT_LOG"}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                     .flags = STRV("SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                                   "SECCOMP_FILTER_FLAG_TSYNC"),
                     .syscalls = rules,
                     .n_syscalls = 1};
    tap_ok(exited_zero(run_filtered(&s, check_nothing)), "flags LOG, SPEC_ALLOW and TSYNC load");
  }

  /* --- errors name the field --- */
  {
    oci_seccomp_syscall rules[] = {{.names = STRV("mkdir"), .action = "SCMP_ACT_ERRNO"},
                                   {.names = STRV("rmdir"), .action = "SCMP_ACT_FOO"}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 2};
    expect_error(&s, "linux.seccomp.syscalls[1].action: unknown action `SCMP_ACT_FOO`",
                 "unknown action");
    rules[1].action = "SCMP_ACT_ALLOW";
    rules[1].has_errno_ret = true;
    rules[1].errno_ret = 1;
    expect_error(&s, "linux.seccomp.syscalls[1].errnoRet", "errnoRet on ALLOW");
  }
  {
    oci_seccomp s = {.default_action = "SCMP_ACT_BOGUS"};
    expect_error(&s, "linux.seccomp.defaultAction: unknown action `SCMP_ACT_BOGUS`",
                 "unknown default action");
    oci_seccomp n = {.default_action = NULL};
    expect_error(&n, "linux.seccomp.defaultAction", "missing default action");
  }
  {
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .architectures = STRV("SCMP_ARCH_Z80")};
    expect_error(&s, "linux.seccomp.architectures[0]: unknown architecture `SCMP_ARCH_Z80`",
                 "unknown architecture");
  }
  {
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                     .flags = STRV("SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_NOPE")};
    expect_error(&s, "linux.seccomp.flags[1]: unknown flag `SECCOMP_FILTER_FLAG_NOPE`",
                 "unknown flag");
  }
  {
    oci_seccomp_arg args[] = {{.index = 0, .value = 1, .op = "SCMP_CMP_ABOUT"}};
    oci_seccomp_syscall rules[] = {
        {.names = STRV("kill"), .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 1}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    expect_error(&s, "linux.seccomp.syscalls[0].args[0].op: unknown operator `SCMP_CMP_ABOUT`",
                 "unknown operator");
    args[0].op = "SCMP_CMP_EQ";
    args[0].index = 6;
    expect_error(&s, "linux.seccomp.syscalls[0].args[0].index", "argument index 6");
  }
  {
    oci_seccomp_syscall rules[] = {{.names = STRV("mkdir"), .action = "SCMP_ACT_NOTIFY"}};
    oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = rules, .n_syscalls = 1};
    expect_error(&s, "linux.seccomp.listenerPath", "NOTIFY without listenerPath");
  }

  test_notify();
  test_saved();
  return tap_done();
}
