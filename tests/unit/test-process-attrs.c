/* Unit tests for process-attrs.c: parsing of cpu/node lists, class/policy/mode names and the
 * field-naming validation errors; the LSM and resctrl refusals on a host without them; and, as
 * root, the attributes a forked child really ends up with, observed from outside where possible
 * (ioprio_get, sched_getscheduler, getpriority, sched_getaffinity) and from inside otherwise (uname
 * -m, personality, get_mempolicy). TAP output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "scratch.h"
#include "tap.h"
#include "oci.h"
#include "process-attrs.h"

static char msgbuf[512];
static const char *take(fsrun_error_t *err) {
  snprintf(msgbuf, sizeof(msgbuf), "%s", *err != NULL ? (*err)->msg : "");
  fsrun_error_release(err);
  return msgbuf;
}

/* --- parsers
 * ---------------------------------------------------------------------------------------- */

static void test_id_lists(void) {
  struct fsrun_bitmask m;
  fsrun_error_t err = NULL;
  int ret = fsrun_id_list_parse("0-3,7", false, "x", &m, &err);
  bool bits_ok = ret == 0 && m.n_bits == 8;
  for (size_t i = 0; i < 10; i++)
    bits_ok = bits_ok && fsrun_bitmask_test(&m, i) == (i <= 3 || i == 7);
  tap_ok(bits_ok, "\"0-3,7\" is {0,1,2,3,7}");
  fsrun_bitmask_release(&m);

  ret = fsrun_id_list_parse("65,1,64", false, "x", &m, &err);
  tap_ok(ret == 0 && m.n_bits == 66 && fsrun_bitmask_test(&m, 1) && fsrun_bitmask_test(&m, 64) &&
             fsrun_bitmask_test(&m, 65) && !fsrun_bitmask_test(&m, 63) &&
             !fsrun_bitmask_test(&m, 0),
         "\"65,1,64\": unsorted ids across a word boundary");
  fsrun_bitmask_release(&m);

  ret = fsrun_id_list_parse("5", false, "x", &m, &err);
  tap_ok(ret == 0 && m.n_bits == 6 && fsrun_bitmask_test(&m, 5) && !fsrun_bitmask_test(&m, 4),
         "\"5\" is {5}");
  fsrun_bitmask_release(&m);

  ret = fsrun_id_list_parse("", true, "x", &m, &err);
  tap_ok(ret == 0 && m.n_bits == 0, "an empty list is \"not set\" where that is allowed");
  ret = fsrun_id_list_parse(NULL, true, "x", &m, &err);
  tap_ok(ret == 0 && m.n_bits == 0, "NULL likewise");

  const char *bad[] = {"",   "a",     "1,,2", "3-1",   "-1", "0-", "1 ,2",
                       "+1", "65536", "1,2,", "1-2-3", " 1", "0x1"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ret = fsrun_id_list_parse(bad[i], false, "process.execCPUAffinity.initial", &m, &err);
    const char *msg = take(&err);
    tap_ok(ret < 0 && strncmp(msg, "process.execCPUAffinity.initial: ", 33) == 0 && m.bits == NULL,
           "\"%s\" is refused: \"%s\"", bad[i], msg);
  }
}

static void test_names(void) {
  tap_ok(ioprio_class_from_name("IOPRIO_CLASS_RT") == 1 &&
             ioprio_class_from_name("IOPRIO_CLASS_BE") == 2 &&
             ioprio_class_from_name("IOPRIO_CLASS_IDLE") == 3,
         "I/O priority classes RT=1 BE=2 IDLE=3");
  tap_ok(ioprio_class_from_name("IOPRIO_CLASS_NONE") == -1 && ioprio_class_from_name("rt") == -1 &&
             ioprio_class_from_name(NULL) == -1,
         "unknown I/O classes are -1");
  tap_ok(
      sched_policy_from_name("SCHED_OTHER") == 0 && sched_policy_from_name("SCHED_FIFO") == 1 &&
          sched_policy_from_name("SCHED_RR") == 2 && sched_policy_from_name("SCHED_BATCH") == 3 &&
          sched_policy_from_name("SCHED_ISO") == 4 && sched_policy_from_name("SCHED_IDLE") == 5 &&
          sched_policy_from_name("SCHED_DEADLINE") == 6,
      "scheduler policies map to the kernel's numbers");
  tap_ok(sched_policy_from_name("SCHED_NORMAL") == -1 && sched_policy_from_name("sched_fifo") == -1,
         "unknown policies are -1");
  tap_ok(mempolicy_mode_from_name("MPOL_DEFAULT") == 0 &&
             mempolicy_mode_from_name("MPOL_PREFERRED") == 1 &&
             mempolicy_mode_from_name("MPOL_BIND") == 2 &&
             mempolicy_mode_from_name("MPOL_INTERLEAVE") == 3 &&
             mempolicy_mode_from_name("MPOL_LOCAL") == 4 &&
             mempolicy_mode_from_name("MPOL_PREFERRED_MANY") == 5 &&
             mempolicy_mode_from_name("MPOL_WEIGHTED_INTERLEAVE") == 6,
         "memory policy modes map to the kernel's numbers");
  tap_ok(mempolicy_mode_from_name("MPOL_MAX") == -1, "unknown modes are -1");
}

/* prepare() must refuse p/l with a message starting with want */
static void expect_refused(const oci_process *p, const oci_linux *l, const char *want,
                           const char *what) {
  struct fsrun_process_attrs *a = NULL;
  fsrun_error_t err = NULL;
  int ret = process_attrs_prepare(p, l, &a, &err);
  const char *msg = take(&err);
  tap_ok(ret < 0 && a == NULL && strncmp(msg, want, strlen(want)) == 0, "%s: \"%s\"", what, msg);
  process_attrs_free(a);
}

static char *flag_reset[] = {"SCHED_FLAG_RESET_ON_FORK"};
static char *flag_bogus[] = {"SCHED_FLAG_BOGUS"};
static char *mflags_both[] = {"MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES"};
static char *mflags_bad[] = {"MPOL_F_NODE"};
static char *pflags_ok[] = {"ADDR_NO_RANDOMIZE"};
static char *pflags_bad[] = {"PER_BSD"};

static void test_validation(void) {
  oci_io_priority io = {.class_ = "IOPRIO_CLASS_XX", .priority = 1};
  oci_process p = {.io_priority = &io};
  oci_scheduler s = {0};
  oci_personality per = {0};
  oci_memory_policy mp = {0};
  oci_exec_cpu_affinity aff = {0};
  oci_linux l = {0};
  struct fsrun_process_attrs *a = NULL;
  fsrun_error_t err = NULL;
  int ret;

  expect_refused(&p, NULL, "process.ioPriority.class: unknown class `IOPRIO_CLASS_XX`",
                 "unknown I/O class");
  io = (oci_io_priority){.class_ = "IOPRIO_CLASS_BE", .priority = 8};
  expect_refused(&p, NULL, "process.ioPriority.priority: 8 is out of range", "I/O priority 8");
  io.priority = 4;
  ret = process_attrs_prepare(&p, NULL, &a, &err);
  tap_ok(ret == 0 && a->has_io_priority && a->io_priority == ((2 << 13) | 4),
         "IOPRIO_CLASS_BE/4 becomes the ioprio value 0x%x", a ? a->io_priority : 0);
  process_attrs_free(a);
  p.io_priority = NULL;

  p.scheduler = &s;
  s = (oci_scheduler){.policy = "SCHED_WHATEVER"};
  expect_refused(&p, NULL, "process.scheduler.policy: unknown policy `SCHED_WHATEVER`",
                 "unknown policy");
  s.policy = "SCHED_ISO";
  expect_refused(&p, NULL, "process.scheduler.policy: SCHED_ISO is reserved", "SCHED_ISO");
  s = (oci_scheduler){.policy = "SCHED_FIFO"};
  expect_refused(&p, NULL, "process.scheduler.priority: SCHED_FIFO needs a priority",
                 "SCHED_FIFO without a priority");
  s = (oci_scheduler){.policy = "SCHED_RR", .has_priority = true, .priority = 100};
  expect_refused(&p, NULL, "process.scheduler.priority: 100 is out of range", "priority 100");
  s = (oci_scheduler){.policy = "SCHED_OTHER", .has_priority = true, .priority = 5};
  expect_refused(&p, NULL, "process.scheduler.priority: must be 0 for SCHED_OTHER",
                 "a priority with SCHED_OTHER");
  s = (oci_scheduler){.policy = "SCHED_BATCH", .has_nice = true, .nice = 20};
  expect_refused(&p, NULL, "process.scheduler.nice: 20 is out of range", "nice 20");
  s = (oci_scheduler){.policy = "SCHED_BATCH", .flags = {flag_bogus, 1}};
  expect_refused(&p, NULL, "process.scheduler.flags[0]: unknown flag `SCHED_FLAG_BOGUS`",
                 "unknown scheduler flag");
  s = (oci_scheduler){.policy = "SCHED_DEADLINE", .has_runtime = true, .runtime = 100};
  expect_refused(&p, NULL, "process.scheduler.runtime: SCHED_DEADLINE needs a runtime",
                 "a too small deadline runtime");
  s = (oci_scheduler){.policy = "SCHED_DEADLINE",
                      .has_runtime = true,
                      .runtime = 2000000,
                      .has_deadline = true,
                      .deadline = 1000000};
  expect_refused(&p, NULL, "process.scheduler.deadline:", "deadline below runtime");
  s = (oci_scheduler){.policy = "SCHED_OTHER", .has_runtime = true, .runtime = 1000};
  expect_refused(&p, NULL, "process.scheduler: runtime, deadline and period apply only",
                 "runtime with SCHED_OTHER");
  s = (oci_scheduler){.policy = "SCHED_RR",
                      .has_priority = true,
                      .priority = 3,
                      .has_nice = true,
                      .nice = -2,
                      .flags = {flag_reset, 1}};
  ret = process_attrs_prepare(&p, NULL, &a, &err);
  tap_ok(ret == 0 && a->scheduler.sched_policy == 2 && a->scheduler.sched_priority == 3 &&
             a->scheduler.sched_nice == -2 && a->scheduler.sched_flags == 1 &&
             a->scheduler.size == 56,
         "SCHED_RR priority 3 nice -2 RESET_ON_FORK becomes a sched_attr");
  process_attrs_free(a);
  p.scheduler = NULL;

  p.exec_cpu_affinity = &aff;
  aff.initial = "0-1";
  aff.final = "1-0";
  expect_refused(&p, NULL, "process.execCPUAffinity.final: `1-0`", "a reversed cpu range");
  p.exec_cpu_affinity = NULL;

  l.personality = &per;
  per = (oci_personality){.domain = "LINUX64"};
  expect_refused(NULL, &l, "linux.personality.domain: unknown domain `LINUX64`",
                 "unknown personality domain");
  per = (oci_personality){.domain = "LINUX32", .flags = {pflags_bad, 1}};
  expect_refused(NULL, &l, "linux.personality.flags[0]: unknown flag `PER_BSD`",
                 "unknown personality flag");
  per = (oci_personality){.domain = "LINUX32", .flags = {pflags_ok, 1}};
  ret = process_attrs_prepare(NULL, &l, &a, &err);
  tap_ok(ret == 0 && a->has_personality && a->personality == (PER_LINUX32 | ADDR_NO_RANDOMIZE),
         "LINUX32 + ADDR_NO_RANDOMIZE");
  process_attrs_free(a);
  l.personality = NULL;

  l.memory_policy = &mp;
  mp = (oci_memory_policy){.mode = "MPOL_SOMETHING"};
  expect_refused(NULL, &l, "linux.memoryPolicy.mode: unknown mode `MPOL_SOMETHING`",
                 "unknown memory policy mode");
  mp = (oci_memory_policy){.mode = "MPOL_DEFAULT", .nodes = "0"};
  expect_refused(NULL, &l, "linux.memoryPolicy.nodes: MPOL_DEFAULT takes no nodes",
                 "MPOL_DEFAULT with nodes");
  mp = (oci_memory_policy){.mode = "MPOL_BIND"};
  expect_refused(NULL, &l, "linux.memoryPolicy.nodes: MPOL_BIND needs at least one node",
                 "MPOL_BIND without nodes");
  mp = (oci_memory_policy){.mode = "MPOL_BIND", .nodes = "0", .flags = {mflags_both, 2}};
  expect_refused(NULL, &l, "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and", "both node flags");
  mp = (oci_memory_policy){.mode = "MPOL_BIND", .nodes = "0", .flags = {mflags_bad, 1}};
  expect_refused(NULL, &l, "linux.memoryPolicy.flags[0]: unknown flag `MPOL_F_NODE`",
                 "a get_mempolicy flag is not a mode flag");
  mp = (oci_memory_policy){.mode = "MPOL_INTERLEAVE", .nodes = "0-x"};
  expect_refused(NULL, &l, "linux.memoryPolicy.nodes: `0-x`", "bad node list");
  mp = (oci_memory_policy){.mode = "MPOL_BIND", .nodes = "0", .flags = {mflags_both, 1}};
  ret = process_attrs_prepare(NULL, &l, &a, &err);
  tap_ok(ret == 0 && a->memory_policy_mode == (2 | (1 << 15)) &&
             fsrun_bitmask_test(&a->memory_nodes, 0),
         "MPOL_BIND|MPOL_F_STATIC_NODES on node 0");
  process_attrs_free(a);
  l.memory_policy = NULL;
}

static void test_lsm(void) {
  oci_process p = {0};
  oci_linux l = {0};
  char *opt = NULL;
  fsrun_error_t err = NULL;

  printf("# AppArmor enabled: %d, SELinux enabled: %d\n", lsm_apparmor_enabled(),
         lsm_selinux_enabled());
  if (!lsm_apparmor_enabled()) {
    p.apparmor_profile = "fsrun-default";
    expect_refused(&p, NULL, "process.apparmorProfile: AppArmor is not enabled on this host",
                   "an AppArmor profile on a host without AppArmor");
    p.apparmor_profile = NULL;
  } else {
    tap_skip("AppArmor is enabled here");
  }
  if (!lsm_selinux_enabled()) {
    p.selinux_label = "system_u:system_r:container_t:s0";
    expect_refused(&p, NULL, "process.selinuxLabel: SELinux is not enabled on this host",
                   "an SELinux label on a host without SELinux");
    l.mount_label = "system_u:object_r:container_file_t:s0";
    expect_refused(NULL, &l, "linux.mountLabel: SELinux is not enabled on this host",
                   "a mount label on a host without SELinux");
    int ret = lsm_mount_label_option("x", &opt, &err);
    tap_ok(ret < 0 && opt == NULL, "lsm_mount_label_option refuses too: \"%s\"", take(&err));
  } else {
    tap_skip("SELinux is enabled here");
  }
  tap_ok(lsm_mount_label_option(NULL, &opt, &err) == 0 && opt == NULL, "no mount label: no option");
  int fmt = lsm_format_mount_label("system_u:object_r:container_file_t:s0:c1,c2", &opt, &err);
  tap_ok(fmt == 0 && opt != NULL &&
             strcmp(opt, "context=\"system_u:object_r:container_file_t:s0:c1,c2\"") == 0,
         "the mount option quotes the label (MCS categories have commas): %s", opt ? opt : "");
  free(opt);
  opt = NULL;
  int bad = lsm_format_mount_label("a\"b", &opt, &err);
  tap_ok(bad < 0 && opt == NULL, "a label with a quote is refused: \"%s\"", take(&err));

  /* the apply side refuses a procfs handle that is not one, and names the attr file it writes */
  struct fsrun_process_attrs fake = {.selinux_label = "system_u:system_r:container_t:s0"};
  int tmpfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
  tap_ok(process_attrs_apply(&fake, tmpfd, &err) < 0 &&
             strstr(take(&err), "not a procfs root") != NULL,
         "a handle that is not a procfs root is refused");
  close(tmpfd);
  if (!lsm_selinux_enabled()) {
    int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *m = (process_attrs_apply(&fake, procfd, &err), take(&err));
    tap_ok(strstr(m, "process.selinuxLabel: write `/proc/thread-self/attr/exec`") != NULL,
           "without SELinux the kernel refuses the write to attr/exec: \"%s\"", m);
    close(procfd);
  }
}

static void test_intelrdt(void) {
  oci_intel_rdt rdt = {.clos_id = "../etc"};
  fsrun_error_t err = NULL;
  const char *m;

  m = (intelrdt_validate(&rdt, &err), take(&err));
  tap_ok(strstr(m, "linux.intelRdt.closID: `../etc` is not a valid resctrl group name") != NULL,
         "a closID with a slash is refused: \"%s\"", m);
  rdt = (oci_intel_rdt){.mem_bw_schema = "L3:0=1"};
  m = (intelrdt_validate(&rdt, &err), take(&err));
  tap_ok(strstr(m, "linux.intelRdt.memBwSchema: must start with `MB:`") != NULL,
         "memBwSchema without MB: is refused");
  rdt = (oci_intel_rdt){.l3_cache_schema = "L3:0=7f0\nMB:0=20"};
  m = (intelrdt_validate(&rdt, &err), take(&err));
  tap_ok(strstr(m, "linux.intelRdt.l3CacheSchema: must not contain newlines") != NULL,
         "l3CacheSchema with a newline is refused");

  if (!intelrdt_available()) {
    rdt = (oci_intel_rdt){.clos_id = "guaranteed_group"};
    m = (intelrdt_validate(&rdt, &err), take(&err));
    tap_ok(strcmp(m, "linux.intelRdt: resctrl is not mounted/available on this host") == 0,
           "no resctrl here: \"%s\"", m);
    m = (intelrdt_apply(&rdt, "ctr", getpid(), &err), take(&err));
    tap_ok(strcmp(m, "linux.intelRdt: resctrl is not mounted/available on this host") == 0,
           "intelrdt_apply says the same");
  } else {
    tap_skip("resctrl is mounted here");
  }
}

/* resctrl's file protocol against a fake root: the order of the schemata writes, joining an
 * existing CLOS, comparing its schemata. The schemata file is a FIFO so that every write is seen.
 */
static void test_intelrdt_fake(void) {
  char root[] = "/tmp/fsrun-resctrl-XXXXXX";
  char path[256], lines[1024] = "";
  char *schemata[] = {"L2:0=f;1=f", "MB:0=70"};
  oci_intel_rdt rdt = {.l3_cache_schema = "L3:0=7f0;1=1f",
                       .mem_bw_schema = "MB:0=20;1=70",
                       .schemata = {schemata, 2}};
  fsrun_error_t err = NULL;
  int pipefd[2], ret;
  pid_t reader;

  if (mkdtemp(root) == NULL) {
    tap_ok(0, "mkdtemp");
    return;
  }
  intelrdt_set_root_for_testing(root);
  snprintf(path, sizeof(path), "%s/ctr1", root);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/ctr1/tasks", root);
  close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  snprintf(path, sizeof(path), "%s/ctr1/schemata", root);
  mkfifo(path, 0644);

  /* reader: holds the FIFO open read-write until the END marker. Reopening it after each writer
   * lost lines: what a writer wrote between the reader's EOF and its close was discarded with the
   * close, and a lost END left the reader (and the test's output pipe) waiting forever. */
  if (pipe(pipefd) < 0)
    return;
  fflush(stdout);
  reader = fork();
  if (reader == 0) {
    char buf[1024] = "";
    size_t used = 0;
    int fd;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60); /* never hold the test's output pipe forever */
    close(pipefd[0]);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      _exit(1);
    while (strstr(buf, "END\n") == NULL && used < sizeof(buf) - 1) {
      ssize_t n = read(fd, buf + used, sizeof(buf) - 1 - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit(1);
      used += (size_t)n;
      buf[used] = '\0';
    }
    close(fd);
    if (write(pipefd[1], buf, used) < 0)
      _exit(2);
    _exit(0);
  }
  close(pipefd[1]);
  ret = intelrdt_apply(&rdt, "ctr1", 4242, &err);
  tap_ok(ret == 0, "apply against the fake resctrl (%s)", ret < 0 ? take(&err) : "ok");
  {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      if (write(fd, "END\n", 4) != 4)
        printf("# write END failed\n");
      close(fd);
    }
  }
  ssize_t n = read(pipefd[0], lines, sizeof(lines) - 1);
  lines[n > 0 ? n : 0] = '\0';
  close(pipefd[0]);
  waitpid(reader, NULL, 0);
  tap_ok(strcmp(lines, "L3:0=7f0;1=1f\nMB:0=20;1=70\nL2:0=f;1=f\nMB:0=70\nEND\n") == 0,
         "schemata written as l3CacheSchema, memBwSchema, then each schemata line");
  {
    char buf[64] = "";
    snprintf(path, sizeof(path), "%s/ctr1/tasks", root);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    buf[r > 0 ? r : 0] = '\0';
    if (fd >= 0)
      close(fd);
    tap_ok(strcmp(buf, "4242\n") == 0, "the pid is written to the group's tasks");
  }

  /* an existing CLOS: join when the schema matches, refuse when it does not */
  snprintf(path, sizeof(path), "%s/shared", root);
  mkdir(path, 0755);
  snprintf(path, sizeof(path), "%s/shared/tasks", root);
  close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  snprintf(path, sizeof(path), "%s/shared/schemata", root);
  {
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (write(fd, "    L3:0=7f0;1=1f\n    MB:0= 20;1= 70\n", 37) < 0)
        printf("# write failed\n");
      close(fd);
    }
  }
  rdt = (oci_intel_rdt){.clos_id = "shared", .l3_cache_schema = "L3:0=7F0;1=1f"};
  ret = intelrdt_apply(&rdt, "ctr2", 4243, &err);
  tap_ok(ret == 0, "joining a CLOS whose schemata has the line (spaces and case aside) (%s)",
         ret < 0 ? take(&err) : "ok");
  rdt.l3_cache_schema = "L3:0=fff;1=1f";
  const char *m = (intelrdt_apply(&rdt, "ctr2", 4243, &err), take(&err));
  tap_ok(strstr(m,
                "linux.intelRdt.l3CacheSchema: `L3:0=fff;1=1f` does not match the schemata of the "
                "existing resctrl group `shared`") != NULL,
         "a CLOS with other schemata is refused: \"%s\"", m);
  rdt = (oci_intel_rdt){.clos_id = "absent"};
  m = (intelrdt_apply(&rdt, "ctr3", 4244, &err), take(&err));
  tap_ok(strstr(m, "linux.intelRdt.closID: the resctrl group `absent` does not exist") != NULL,
         "a closID without schemata must exist: \"%s\"", m);
  rdt = (oci_intel_rdt){.clos_id = "shared"};
  tap_ok(intelrdt_remove(&rdt, "ctr2", &err) == 0 && access(path, F_OK) == 0,
         "delete never removes a closID group");

  scratch_remove(root);
}

/* --- functional: a child applies, the parent looks
 * ------------------------------------------------ */

struct child {
  pid_t pid;
  int go; /* parent -> child: exit */
  char report[256];
};

/* Forks a child that applies a (and the affinity stage when >= 0), writes a report line and waits
 * for the parent to close `go`. The report is "ok ..." or "error: ...". */
static int spawn(const struct fsrun_process_attrs *a, int stage, void (*inside)(char *, size_t),
                 struct child *c) {
  int up[2], down[2];
  ssize_t n;
  if (pipe(up) < 0 || pipe(down) < 0)
    return -1;
  fflush(stdout);
  c->pid = fork();
  if (c->pid == 0) {
    char report[256] = "ok";
    fsrun_error_t err = NULL;
    char x;
    close(up[0]);
    close(down[1]);
    if (process_attrs_apply(a, -1, &err) < 0 ||
        (stage >= 0 && process_attrs_apply_cpu_affinity(a, stage, &err) < 0))
      snprintf(report, sizeof(report), "error: %s", err->msg);
    else if (inside != NULL)
      inside(report, sizeof(report));
    if (write(up[1], report, strlen(report) + 1) < 0)
      _exit(2);
    if (read(down[0], &x, 1) < 0)
      _exit(3);
    _exit(0);
  }
  close(up[1]);
  close(down[0]);
  c->go = down[1];
  memset(c->report, 0, sizeof(c->report));
  n = read(up[0], c->report, sizeof(c->report) - 1);
  close(up[0]);
  return n > 0 ? 0 : -1;
}

static void reap(struct child *c) {
  close(c->go);
  waitpid(c->pid, NULL, 0);
}

static struct fsrun_process_attrs *prepare_or_fail(const oci_process *p, const oci_linux *l) {
  struct fsrun_process_attrs *a = NULL;
  fsrun_error_t err = NULL;
  if (process_attrs_prepare(p, l, &a, &err) < 0)
    tap_ok(0, "prepare: %s", take(&err));
  return a;
}

static void test_apply_ioprio(void) {
  oci_io_priority io = {.class_ = "IOPRIO_CLASS_BE", .priority = 6};
  oci_process p = {.io_priority = &io};
  struct fsrun_process_attrs *a = prepare_or_fail(&p, NULL);
  struct child c;
  if (a == NULL || spawn(a, -1, NULL, &c) < 0)
    return;
  long got = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, c.pid);
  tap_ok(strcmp(c.report, "ok") == 0 && got == ((2 << 13) | 6),
         "IOPRIO_CLASS_BE/6: ioprio_get on the child gives class %ld level %ld (%s)", got >> 13,
         got & 0xff, c.report);
  reap(&c);
  process_attrs_free(a);

  io = (oci_io_priority){.class_ = "IOPRIO_CLASS_IDLE", .priority = 0};
  a = prepare_or_fail(&p, NULL);
  if (a == NULL || spawn(a, -1, NULL, &c) < 0)
    return;
  got = syscall(SYS_ioprio_get, 1, c.pid);
  tap_ok(strcmp(c.report, "ok") == 0 && (got >> 13) == 3, "IOPRIO_CLASS_IDLE: class %ld (%s)",
         got >> 13, c.report);
  reap(&c);
  process_attrs_free(a);
}

static void test_apply_scheduler(void) {
  oci_scheduler s = {.policy = "SCHED_BATCH", .has_nice = true, .nice = 7};
  oci_process p = {.scheduler = &s};
  struct fsrun_process_attrs *a = prepare_or_fail(&p, NULL);
  struct child c;
  if (a == NULL || spawn(a, -1, NULL, &c) < 0)
    return;
  errno = 0;
  int policy = sched_getscheduler(c.pid);
  int nice_value = getpriority(PRIO_PROCESS, (id_t)c.pid);
  tap_ok(strcmp(c.report, "ok") == 0 && policy == SCHED_BATCH && nice_value == 7,
         "SCHED_BATCH nice 7: sched_getscheduler %d, getpriority %d (%s)", policy, nice_value,
         c.report);
  reap(&c);
  process_attrs_free(a);

  s = (oci_scheduler){.policy = "SCHED_IDLE"};
  a = prepare_or_fail(&p, NULL);
  if (a == NULL || spawn(a, -1, NULL, &c) < 0)
    return;
  policy = sched_getscheduler(c.pid);
  tap_ok(strcmp(c.report, "ok") == 0 && policy == SCHED_IDLE, "SCHED_IDLE: %d (%s)", policy,
         c.report);
  reap(&c);
  process_attrs_free(a);

  s = (oci_scheduler){.policy = "SCHED_FIFO", .has_priority = true, .priority = 10};
  a = prepare_or_fail(&p, NULL);
  if (a == NULL || spawn(a, -1, NULL, &c) < 0)
    return;
  if (strncmp(c.report, "error:", 6) == 0 && strstr(c.report, "Operation not permitted")) {
    tap_skip("SCHED_FIFO refused here (no real-time budget in this cgroup)");
  } else {
    struct sched_param sp = {0};
    policy = sched_getscheduler(c.pid);
    sched_getparam(c.pid, &sp);
    tap_ok(policy == SCHED_FIFO && sp.sched_priority == 10, "SCHED_FIFO 10: %d/%d (%s)", policy,
           sp.sched_priority, c.report);
  }
  reap(&c);
  process_attrs_free(a);
}

static void report_uname(char *report, size_t size) {
  struct utsname u;
  uname(&u);
  snprintf(report, size, "machine=%s persona=0x%x", u.machine, (unsigned)personality(0xffffffff));
}

static void test_apply_personality(void) {
  oci_personality per = {.domain = "LINUX32", .flags = {pflags_ok, 1}};
  oci_linux l = {.personality = &per};
  struct fsrun_process_attrs *a = prepare_or_fail(NULL, &l);
  struct child c;
  char want[128];
  if (a == NULL || spawn(a, -1, report_uname, &c) < 0)
    return;
  snprintf(want, sizeof(want), "machine=i686 persona=0x%x", PER_LINUX32 | ADDR_NO_RANDOMIZE);
  tap_ok(strcmp(c.report, want) == 0, "LINUX32 + ADDR_NO_RANDOMIZE: uname -m is i686 inside (%s)",
         c.report);
  reap(&c);
  process_attrs_free(a);

  per = (oci_personality){.domain = "LINUX"};
  a = prepare_or_fail(NULL, &l);
  if (a == NULL || spawn(a, -1, report_uname, &c) < 0)
    return;
  struct utsname host;
  uname(&host);
  snprintf(want, sizeof(want), "machine=%s persona=0x0", host.machine);
  tap_ok(strcmp(c.report, want) == 0, "LINUX keeps the native machine (%s)", c.report);
  reap(&c);
  process_attrs_free(a);
}

static void test_apply_affinity(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  oci_exec_cpu_affinity aff = {.initial = "0", .final = "1"};
  oci_process p = {.exec_cpu_affinity = &aff};
  struct fsrun_process_attrs *a;
  struct child c;
  cpu_set_t set;

  if (ncpu < 2) {
    tap_skip("needs 2 CPUs");
    return;
  }
  a = prepare_or_fail(&p, NULL);
  if (a == NULL)
    return;
  if (spawn(a, CPU_AFFINITY_INITIAL, NULL, &c) == 0) {
    CPU_ZERO(&set);
    sched_getaffinity(c.pid, sizeof(set), &set);
    tap_ok(strcmp(c.report, "ok") == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set),
           "initial \"0\": sched_getaffinity on the child is {0} (%s)", c.report);
    reap(&c);
  }
  if (spawn(a, CPU_AFFINITY_FINAL, NULL, &c) == 0) {
    CPU_ZERO(&set);
    sched_getaffinity(c.pid, sizeof(set), &set);
    tap_ok(strcmp(c.report, "ok") == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(1, &set),
           "final \"1\": sched_getaffinity on the child is {1} (%s)", c.report);
    reap(&c);
  }
  process_attrs_free(a);

  aff = (oci_exec_cpu_affinity){.initial = "0-1"};
  a = prepare_or_fail(&p, NULL);
  if (a != NULL && spawn(a, CPU_AFFINITY_FINAL, NULL, &c) == 0) {
    CPU_ZERO(&set);
    sched_getaffinity(c.pid, sizeof(set), &set);
    tap_ok(strcmp(c.report, "ok") == 0 && CPU_COUNT(&set) == (int)ncpu,
           "no final: the affinity is left alone (%d CPUs)", CPU_COUNT(&set));
    reap(&c);
  }
  process_attrs_free(a);

  aff = (oci_exec_cpu_affinity){.initial = "4000"};
  a = prepare_or_fail(&p, NULL);
  if (a != NULL && spawn(a, CPU_AFFINITY_INITIAL, NULL, &c) == 0) {
    tap_ok(strstr(c.report, "error: process.execCPUAffinity.initial: sched_setaffinity") != NULL,
           "a CPU that does not exist: \"%s\"", c.report);
    reap(&c);
  }
  process_attrs_free(a);
}

static void report_mempolicy(char *report, size_t size) {
  int mode = -1;
  unsigned long mask[2] = {0};
  if (syscall(SYS_get_mempolicy, &mode, mask, sizeof(mask) * 8, NULL, 0) < 0)
    snprintf(report, size, "get_mempolicy: %s", strerror(errno));
  else
    snprintf(report, size, "mode=%d mask=0x%lx", mode, mask[0]);
}

static void test_apply_mempolicy(void) {
  oci_memory_policy mp = {.mode = "MPOL_BIND", .nodes = "0"};
  oci_linux l = {.memory_policy = &mp};
  struct fsrun_process_attrs *a = prepare_or_fail(NULL, &l);
  struct child c;
  if (a == NULL || spawn(a, -1, report_mempolicy, &c) < 0)
    return;
  tap_ok(strcmp(c.report, "mode=2 mask=0x1") == 0, "MPOL_BIND on node 0: get_mempolicy says %s",
         c.report);
  reap(&c);
  process_attrs_free(a);

  mp = (oci_memory_policy){.mode = "MPOL_BIND", .nodes = "5"};
  a = prepare_or_fail(NULL, &l);
  if (a == NULL || spawn(a, -1, report_mempolicy, &c) < 0)
    return;
  tap_ok(strstr(c.report, "error: linux.memoryPolicy: set_mempolicy") != NULL,
         "a node that does not exist: \"%s\"", c.report);
  reap(&c);
  process_attrs_free(a);
}

int main(void) {
  test_id_lists();
  test_names();
  test_validation();
  test_lsm();
  test_intelrdt();
  test_intelrdt_fake();
  if (geteuid() != 0) {
    tap_skip("not root: functional tests skipped");
  } else {
    test_apply_ioprio();
    test_apply_scheduler();
    test_apply_personality();
    test_apply_affinity();
    test_apply_mempolicy();
  }
  return tap_done();
}
