/* Unit tests for the cgroup drivers: path resolution (relative, absolute, systemd), value
 * conversions and file formats for v1 and v2, the device rule list and the BPF device program
 * (run through a small interpreter here, and loaded into the kernel when allowed). As root, a live
 * part creates a real cgroup with limits on whatever host this is (hybrid here, unified in the VM),
 * checks the files, puts a child in it, freezes, kills and destroys it. TAP output. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "ebpf.h"
#include "error.h"
#include "tap.h"
#include "utils.h"

static int streq(const char *a, const char *b) {
  return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int contains(const char *hay, const char *needle) {
  return hay != NULL && strstr(hay, needle) != NULL;
}

/* --- paths --------------------------------------------------------------------------------- */

static void check_path(const char *id, const char *cgpath, bool systemd, const char *want) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *got = NULL;
  int ret = cgroup_resolve_path(id, cgpath, systemd, &got, &err);
  tap_ok(ret == 0 && streq(got, want), "path %s%s -> %s (got %s%s)", systemd ? "systemd " : "",
         cgpath ? cgpath : "(none)", want,
         got ? got : "error: ", got ? "" : (err ? err->msg : "?"));
}

static void check_path_error(const char *id, const char *cgpath, bool systemd, const char *msg) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *got = NULL;
  int ret = cgroup_resolve_path(id, cgpath, systemd, &got, &err);
  tap_ok(ret < 0 && got == NULL && err && contains(err->msg, msg), "path %s%s refused: %s",
         systemd ? "systemd " : "", cgpath ? cgpath : "(none)", err ? err->msg : "(accepted)");
}

static void test_paths(void) {
  check_path("abc", NULL, false, "/fsrun/abc");
  check_path("abc", "", false, "/fsrun/abc");
  check_path("abc", "foo/bar", false, "/fsrun/foo/bar");
  check_path("abc", "/libpod_parent/libpod-abc", false, "/libpod_parent/libpod-abc");
  check_path("abc", "//a//b/", false, "/a/b");
  check_path_error("abc", "/a/../../etc", false, "must not contain `..`");
  check_path_error("abc", "/", false, "root cgroup");
  check_path_error("../x", NULL, false, "cannot name a cgroup");

  check_path("abc", "machine.slice:libpod:abc", true, "/machine.slice/libpod-abc.scope");
  check_path("abc", "a-b.slice:p:n", true, "/a.slice/a-b.slice/p-n.scope");
  check_path("abc", "a-b-c.slice:p:n", true, "/a.slice/a-b.slice/a-b-c.slice/p-n.scope");
  check_path("abc", ":fsrun:abc", true, "/system.slice/fsrun-abc.scope");
  check_path("abc", "-.slice:p:n", true, "/p-n.scope");
  check_path("abc", "system.slice::n", true, "/system.slice/n.scope");
  check_path("abc", NULL, true, "/system.slice/fsrun-abc.scope");
  check_path("abc", "system.slice:p:foo-bar.slice", true, "/foo.slice/foo-bar.slice");
  check_path_error("abc", "justaname", true, "slice:prefix:name");
  check_path_error("abc", "a--b.slice:p:n", true, "not a systemd slice name");
  check_path_error("abc", "-a.slice:p:n", true, "not a systemd slice name");
  check_path_error("abc", "nodot:p:n", true, "not a systemd slice name");
  check_path_error("abc", "system.slice:p:a/b", true, "invalid name");

  {
    cleanup_error fsrun_error_t err = NULL;
    cleanup_free char *s = NULL;
    int ret = cgroup_systemd_expand_slice("x-y-z.slice", &s, &err);
    tap_ok(ret == 0 && streq(s, "/x.slice/x-y.slice/x-y-z.slice"), "expand x-y-z.slice -> %s",
           s ? s : "?");
  }
}

/* A state file's cgroup is accepted only where the id and linux.cgroupsPath lead: as cgroupfs or
 * as a systemd scope, each also below the user manager's subtree (cgroup_path_is_containers looks
 * at the cgroupfs paths first and the systemd ones only then: both must still be accepted). */
static void check_containers(const char *id, const char *cgpath, const char *path, bool want) {
  tap_ok(cgroup_path_is_containers(id, cgpath, path) == want, "cgroup %s %s for id %s, path %s",
         path, want ? "accepted" : "refused", id, cgpath ? cgpath : "(none)");
}

static void test_containers_paths(void) {
  cleanup_free char *user = xasprintf("/user.slice/user-%u.slice/user@%u.service",
                                      (unsigned)getuid(), (unsigned)getuid());
  cleanup_free char *user_fs = xasprintf("%s/fsrun/abc", user);
  cleanup_free char *user_scope = NULL, *scope = NULL, *user_abs = NULL;
  cleanup_error fsrun_error_t err = NULL;
  if (cgroup_resolve_path("abc", NULL, true, &scope, &err) < 0) {
    tap_ok(false, "systemd path of abc: %s", err->msg);
    return;
  }
  user_scope = xasprintf("%s%s", user, scope);
  user_abs = xasprintf("%s/libpod_parent/libpod-abc", user);
  check_containers("abc", NULL, "/fsrun/abc", true);
  check_containers("abc", NULL, user_fs, true);
  check_containers("abc", NULL, scope, true);
  check_containers("abc", NULL, user_scope, true);
  check_containers("abc", "/libpod_parent/libpod-abc", "/libpod_parent/libpod-abc", true);
  check_containers("abc", "machine.slice:libpod:abc", "/machine.slice/libpod-abc.scope", true);
  check_containers("abc", NULL, "/fsrun/abd", false);
  check_containers("abc", NULL, "/fsrun", false);
  check_containers("abc", NULL, "/", false);
  check_containers("abc", NULL, "/system.slice", false);
  check_containers("abc", "/libpod_parent/libpod-abc", "/libpod_parent", false);
  if (geteuid() == 0 && in_initial_user_namespace())
    check_containers("abc", "/libpod_parent/libpod-abc", user_abs, false);
}

/* Where an ordinary user's create put the cgroup below its delegated subtree: BASE + what the id
 * and a relative linux.cgroupsPath lead to; BASE is given back only when plain (review25 C10). */
static void check_base(const char *id, const char *cgpath, const char *path, const char *want) {
  cleanup_free char *base = cgroup_delegated_base_of(id, cgpath, path);
  tap_ok((base == NULL && want == NULL) || (base != NULL && want != NULL && streq(base, want)),
         "delegated base of %s for id %s, cgroupsPath %s: %s", path, id, cgpath ? cgpath : "(none)",
         base ? base : "none");
}

static void test_delegated_base(void) {
  check_base("abc", NULL, "/deleg/fsrun/abc", "/deleg");
  check_base("abc", "", "/a/b/fsrun/abc", "/a/b");
  check_base("abc", "rel/x", "/deleg/fsrun/rel/x", "/deleg");
  check_base("abc", NULL, "/fsrun/abc", NULL);       /* the root's own: no base */
  check_base("abc", NULL, "/deleg/fsrun/abd", NULL); /* another id */
  check_base("abc", NULL, "/delegfsrun/abc", NULL);  /* not at a component */
  check_base("abc", NULL, "/deleg/../fsrun/abc", NULL);
  check_base("abc", NULL, "/deleg/./fsrun/abc", NULL);
  check_base("abc", NULL, "//fsrun/abc", NULL);
  check_base("abc", NULL, "deleg/fsrun/abc", NULL);
  check_base("abc", "/abs/path", "/deleg/abs/path", NULL); /* an absolute path is never moved */
  check_base("a/b", NULL, "/deleg/fsrun/a/b", NULL);       /* an id that names no cgroup */
}

/* --- conversions ---------------------------------------------------------------------------------
 */

static void test_conversions(void) {
  static const struct {
    uint64_t shares, weight;
  } w[] = {{0, 0},      {1, 1},          {2, 1},          {3, 2},
           {100, 17},   {512, 59},       {1024, 100},     {2048, 174},
           {4096, 303}, {262143, 10000}, {262144, 10000}, {1 << 20, 10000}};
  static const struct {
    uint64_t blkio, io;
  } io[] = {{0, 0}, {10, 1}, {100, 910}, {500, 4950}, {1000, 10000}, {5, 1}, {2000, 10000}};

  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
    uint64_t got = cgroup_v2_cpu_weight(w[i].shares);
    tap_ok(got == w[i].weight, "cpu.shares %llu -> cpu.weight %llu (got %llu)",
           (unsigned long long)w[i].shares, (unsigned long long)w[i].weight,
           (unsigned long long)got);
  }
  for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
    uint64_t got = cgroup_v2_io_weight(io[i].blkio);
    tap_ok(got == io[i].io, "blkio weight %llu -> io.weight %llu (got %llu)",
           (unsigned long long)io[i].blkio, (unsigned long long)io[i].io, (unsigned long long)got);
  }
}

static void check_swap(bool has_limit, int64_t limit, bool has_swap, int64_t swap, const char *want,
                       const char *error_part) {
  oci_memory m = {0};
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *got = NULL;
  int ret;
  m.has_limit = has_limit;
  m.limit = limit;
  m.has_swap = has_swap;
  m.swap = swap;
  ret = cgroup_v2_swap_max(&m, &got, &err);
  if (error_part)
    tap_ok(ret < 0 && err && contains(err->msg, error_part), "swap %lld limit %lld refused: %s",
           (long long)swap, (long long)limit, err ? err->msg : "(accepted)");
  else if (want == NULL)
    tap_ok(ret == 0 && got == NULL, "swap %lld: memory.swap.max untouched", (long long)swap);
  else
    tap_ok(ret == 0 && streq(got, want), "memory.swap.max for swap %lld limit %lld = %s (got %s)",
           (long long)swap, (long long)limit, want, got ? got : "NULL");
}

static void check_cpu_max(bool has_quota, int64_t quota, bool has_period, uint64_t period,
                          const char *current, const char *want) {
  oci_cpu c = {0};
  cleanup_free char *got = NULL;
  c.has_quota = has_quota;
  c.quota = quota;
  c.has_period = has_period;
  c.period = period;
  got = cgroup_v2_cpu_max(&c, current);
  tap_ok((want == NULL && got == NULL) || streq(got, want),
         "cpu.max quota=%s%lld period=%s%llu cur=%s -> %s (got %s)", has_quota ? "" : "unset/",
         (long long)quota, has_period ? "" : "unset/", (unsigned long long)period,
         current ? current : "-", want ? want : "NULL", got ? got : "NULL");
}

static void test_v2_formats(void) {
  oci_block_io b = {0};
  oci_throttle_device rbps[] = {{8, 0, 1048576}, {8, 16, 5}};
  oci_throttle_device wbps[] = {{8, 0, 2097152}};
  oci_throttle_device riops[] = {{8, 0, 100}};
  oci_throttle_device wiops[] = {{8, 0, 200}, {8, 16, 0}};
  char **lines = NULL;
  size_t n = 0;

  check_swap(true, 64 << 20, true, 128 << 20, "67108864", NULL);
  check_swap(true, 64 << 20, true, 64 << 20, "0", NULL);
  check_swap(true, 64 << 20, true, -1, "max", NULL);
  check_swap(false, 0, true, -1, "max", NULL);
  check_swap(true, 64 << 20, true, 0, NULL, NULL);
  check_swap(true, 64 << 20, false, 0, NULL, NULL);
  check_swap(true, 64 << 20, true, 32 << 20, NULL, "linux.resources.memory.swap");
  check_swap(false, 0, true, 32 << 20, NULL, "needs a memory limit");

  check_cpu_max(true, 50000, true, 100000, NULL, "50000 100000");
  check_cpu_max(true, -1, true, 100000, NULL, "max 100000");
  check_cpu_max(true, 20000, false, 0, NULL, "20000 100000");
  check_cpu_max(false, 0, true, 250000, NULL, "max 250000");
  check_cpu_max(false, 0, false, 0, NULL, NULL);
  check_cpu_max(false, 0, true, 200000, "30000 50000", "30000 200000");
  check_cpu_max(true, 10000, false, 0, "30000 50000", "10000 50000");
  /* 0 is "not set" (Docker's update of other resources): the current limit stays */
  check_cpu_max(true, 0, true, 0, "30000 50000", NULL);
  check_cpu_max(true, 0, true, 200000, "30000 50000", "30000 200000");

  b.throttle_read_bps = rbps;
  b.n_throttle_read_bps = 2;
  b.throttle_write_bps = wbps;
  b.n_throttle_write_bps = 1;
  b.throttle_read_iops = riops;
  b.n_throttle_read_iops = 1;
  b.throttle_write_iops = wiops;
  b.n_throttle_write_iops = 2;
  cgroup_v2_io_max_lines(&b, &lines, &n);
  tap_ok(n == 2, "io.max: one line per device (got %zu)", n);
  tap_ok(n > 0 && streq(lines[0], "8:0 rbps=1048576 wbps=2097152 riops=100 wiops=200"),
         "io.max line `%s`", n > 0 ? lines[0] : "");
  tap_ok(n > 1 && streq(lines[1], "8:16 rbps=5 wiops=max"), "io.max line `%s` (rate 0 is max)",
         n > 1 ? lines[1] : "");
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);

  {
    cleanup_free char *a = cgroup_hugetlb_file("2MB", true);
    cleanup_free char *b1 = cgroup_hugetlb_file("1GB", false);
    cleanup_free char *c = cgroup_hugetlb_file("../2MB", true);
    tap_ok(streq(a, "hugetlb.2MB.max"), "hugetlb v2 file %s", a ? a : "NULL");
    tap_ok(streq(b1, "hugetlb.1GB.limit_in_bytes"), "hugetlb v1 file %s", b1 ? b1 : "NULL");
    tap_ok(c == NULL, "hugetlb page size `../2MB` refused");
  }
  tap_ok(cgroup_unified_key_refusal("memory.oom.group") == NULL,
         "unified key memory.oom.group accepted");
  tap_ok(cgroup_unified_key_refusal("../memory.max") != NULL, "unified key ../memory.max refused");
  tap_ok(cgroup_unified_key_refusal("a/b.c") != NULL, "unified key a/b.c refused");
  tap_ok(cgroup_unified_key_refusal("..") != NULL && cgroup_unified_key_refusal("") != NULL,
         "unified keys .. and empty refused");
  {
    /* review22 F5: a pid in cgroup.procs would make a host process the container's */
    static const char *const refused[] = {
        "cgroup.procs", "cgroup.threads", "cgroup.kill",     "cgroup.subtree_control",
        "cgroup.type",  "cgroup.freeze",  "cgroup.pressure", "cgroup.events"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
      tap_ok(cgroup_unified_key_refusal(refused[i]) != NULL, "unified key %s refused", refused[i]);
    tap_ok(cgroup_unified_key_refusal("cgroup.max.depth") == NULL &&
               cgroup_unified_key_refusal("cgroup.max.descendants") == NULL,
           "unified keys cgroup.max.depth and cgroup.max.descendants accepted");
  }
  {
    cleanup_free char *a = cgroup_limit_string(-1);
    cleanup_free char *b2 = cgroup_limit_string(4096);
    tap_ok(streq(a, "max") && streq(b2, "4096"), "limit -1 -> max, 4096 -> 4096");
  }
}

/* --- device rules and the BPF program --------------------------------------------------------- */

static void test_v1_device_strings(void) {
  static const struct {
    device_rule r;
    const char *want;
  } t[] = {
      {{true, 'c', 1, 3, DEVICE_ACCESS_ALL}, "c 1:3 rwm"},
      {{false, 'a', -1, -1, DEVICE_ACCESS_ALL}, "a *:* rwm"},
      {{true, 'b', 8, -1, DEVICE_ACCESS_READ}, "b 8:* r"},
      {{true, 'c', -1, -1, DEVICE_ACCESS_MKNOD}, "c *:* m"},
      {{true, 'c', 136, -1, DEVICE_ACCESS_READ | DEVICE_ACCESS_WRITE}, "c 136:* rw"},
  };
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    cleanup_free char *s = cgroup_v1_device_rule_string(&t[i].r);
    tap_ok(streq(s, t[i].want), "v1 device rule `%s` (got `%s`)", t[i].want, s ? s : "");
  }
}

static void test_device_rule_list(void) {
  oci_device_cgroup spec[2] = {{0}};
  oci_resources r = {0};
  oci_device dev = {0};
  cleanup_free device_rule *rules = NULL;
  cleanup_error fsrun_error_t err = NULL;
  size_t n = 0;
  int ret;

  spec[0].allow = false;
  spec[0].access = (char *)"rwm";
  spec[1].allow = true;
  spec[1].type = (char *)"c";
  spec[1].has_major = spec[1].has_minor = true;
  spec[1].major = 1;
  spec[1].minor = 11;
  spec[1].access = (char *)"w";
  r.devices = spec;
  r.n_devices = 2;
  dev.type = (char *)"c";
  dev.has_major = dev.has_minor = true;
  dev.major = 10;
  dev.minor = 229;
  ret = cgroup_device_rules(&r, &dev, 1, &rules, &n, &err);
  tap_ok(ret == 0 && n > 3, "device rules built (%zu)", n);
  tap_ok(ret == 0 && !rules[0].allow && rules[0].type == 'a' &&
             rules[0].access == DEVICE_ACCESS_ALL,
         "rule 0: the spec's deny all");
  tap_ok(ret == 0 && rules[1].allow && rules[1].type == 'c' && rules[1].major == 1 &&
             rules[1].minor == 11 && rules[1].access == DEVICE_ACCESS_WRITE,
         "rule 1: allow c 1:11 w");
  tap_ok(ret == 0 && rules[2].allow && rules[2].major == 10 && rules[2].minor == 229 &&
             rules[2].access == DEVICE_ACCESS_ALL,
         "rule 2: linux.devices node allowed rwm");
  {
    bool has_null = false;
    for (size_t i = 3; i < n; i++)
      if (rules[i].allow && rules[i].type == 'c' && rules[i].major == 1 && rules[i].minor == 3)
        has_null = true;
    tap_ok(has_null, "defaults after the spec include /dev/null");
  }

  free(rules);
  rules = NULL;
  spec[1].type = (char *)"x";
  ret = cgroup_device_rules(&r, NULL, 0, &rules, &n, &err);
  tap_ok(ret < 0 && contains(err->msg, "linux.resources.devices[1].type"), "bad type refused: %s",
         err ? err->msg : "(accepted)");
  spec[1].type = (char *)"c";
  spec[1].access = (char *)"rwx";
  ret = cgroup_device_rules(&r, NULL, 0, &rules, &n, &err);
  tap_ok(ret < 0 && contains(err->msg, "linux.resources.devices[1].access"),
         "bad access refused: %s", err ? err->msg : "(accepted)");
}

/* Runs the subset of eBPF the generator emits. Returns the verdict, or -1 on a bad program. */
static int run_program(const struct bpf_insn *p, size_t n, unsigned type, unsigned access,
                       unsigned major, unsigned minor) {
  uint32_t ctx[3] = {(access << 16) | type, major, minor};
  uint64_t r[11] = {0};
  for (size_t pc = 0; pc < n; pc++) {
    const struct bpf_insn *i = &p[pc];
    switch (i->code) {
    case BPF_LDX | BPF_W | BPF_MEM:
      if (i->src_reg != 1 || i->off % 4 || i->off < 0 || i->off > 8)
        return -1;
      r[i->dst_reg] = ctx[i->off / 4];
      break;
    case BPF_ALU | BPF_AND | BPF_K:
      r[i->dst_reg] = (uint32_t)r[i->dst_reg] & (uint32_t)i->imm;
      break;
    case BPF_ALU | BPF_RSH | BPF_K:
      r[i->dst_reg] = (uint32_t)r[i->dst_reg] >> i->imm;
      break;
    case BPF_ALU | BPF_MOV | BPF_X:
      r[i->dst_reg] = (uint32_t)r[i->src_reg];
      break;
    case BPF_ALU64 | BPF_MOV | BPF_K:
      r[i->dst_reg] = (uint64_t)(int64_t)i->imm;
      break;
    case BPF_JMP | BPF_JNE | BPF_K:
      if (r[i->dst_reg] != (uint64_t)(int64_t)i->imm)
        pc += i->off;
      break;
    case BPF_JMP | BPF_JEQ | BPF_K:
      if (r[i->dst_reg] == (uint64_t)(int64_t)i->imm)
        pc += i->off;
      break;
    case BPF_JMP | BPF_EXIT:
      return (int)r[0];
    default:
      return -1;
    }
  }
  return -1; /* fell off the end */
}

#define CHR BPF_DEVCG_DEV_CHAR
#define BLK BPF_DEVCG_DEV_BLOCK
#define R   BPF_DEVCG_ACC_READ
#define W   BPF_DEVCG_ACC_WRITE
#define M   BPF_DEVCG_ACC_MKNOD

static void test_bpf_program(void) {
  static const device_rule rules[] = {
      {false, 'a', -1, -1, DEVICE_ACCESS_ALL},                      /* deny everything */
      {true, 'c', 1, 3, DEVICE_ACCESS_ALL},                         /* null */
      {true, 'c', 1, 11, DEVICE_ACCESS_WRITE},                      /* kmsg, write only */
      {true, 'b', 8, -1, DEVICE_ACCESS_READ | DEVICE_ACCESS_MKNOD}, /* sd*: r and m */
      {false, 'b', 8, 16, DEVICE_ACCESS_WRITE},                     /* but never write sdb... */
      {true, 'c', -1, -1, DEVICE_ACCESS_MKNOD},
      {false, 'c', 1, 3, DEVICE_ACCESS_WRITE}, /* last match wins: null is read-only now */
  };
  static const struct {
    unsigned type, access, major, minor;
    int want;
    const char *what;
  } cases[] = {
      {CHR, R, 1, 3, 1, "read c 1:3 allowed"},
      {CHR, W, 1, 3, 0, "write c 1:3 denied by the later deny w"},
      {CHR, R | W, 1, 3, 0, "read+write c 1:3 denied (deny hits any bit)"},
      {CHR, W, 1, 11, 1, "write c 1:11 allowed"},
      {CHR, R, 1, 11, 0, "read c 1:11 denied (allow w only)"},
      {CHR, R | W, 1, 11, 0, "read+write c 1:11 denied (allow needs every bit)"},
      {CHR, M, 4, 4, 1, "mknod any char allowed"},
      {CHR, R, 4, 4, 0, "read c 4:4 denied by default"},
      {BLK, R, 8, 0, 1, "read b 8:0 allowed"},
      {BLK, W, 8, 0, 0, "write b 8:0 denied (not in allow r/m)"},
      {BLK, R, 8, 16, 1, "read b 8:16 allowed (deny is w only)"},
      {BLK, W, 8, 16, 0, "write b 8:16 denied"},
      {BLK, R, 1, 3, 0, "read b 1:3 denied (rule is for char)"},
      {BLK, M, 9, 0, 0, "mknod b 9:0 denied"},
  };
  cleanup_free struct bpf_insn *insns = NULL;
  cleanup_error fsrun_error_t err = NULL;
  size_t n = 0;
  int ret = ebpf_device_program_build(rules, sizeof(rules) / sizeof(rules[0]), &insns, &n, &err);
  tap_ok(ret == 0 && n > 6, "device program built (%zu instructions)", n);
  for (size_t i = 0; ret == 0 && i < sizeof(cases) / sizeof(cases[0]); i++) {
    int got = run_program(insns, n, cases[i].type, cases[i].access, cases[i].major, cases[i].minor);
    tap_ok(got == cases[i].want, "bpf: %s (got %d)", cases[i].what, got);
  }

  /* an "allow all" at the end ends the program: nothing unreachable after it */
  {
    static const device_rule all[] = {{false, 'c', 1, 3, DEVICE_ACCESS_ALL},
                                      {true, 'a', -1, -1, DEVICE_ACCESS_ALL}};
    cleanup_free struct bpf_insn *p2 = NULL;
    size_t n2 = 0;
    ret = ebpf_device_program_build(all, 2, &p2, &n2, &err);
    tap_ok(ret == 0 && n2 == 8 && run_program(p2, n2, CHR, R, 1, 3) == 1,
           "allow-all as the last rule: 8 instructions, everything allowed (n=%zu)", n2);
  }
  {
    static const device_rule none[] = {{false, 'a', -1, -1, DEVICE_ACCESS_ALL}};
    cleanup_free struct bpf_insn *p3 = NULL;
    size_t n3 = 0;
    ret = ebpf_device_program_build(none, 1, &p3, &n3, &err);
    tap_ok(ret == 0 && n3 == 8 && run_program(p3, n3, CHR, M, 1, 3) == 0,
           "deny-all only: 8 instructions, everything denied (n=%zu)", n3);
  }
  {
    cleanup_free struct bpf_insn *p4 = NULL;
    size_t n4 = 0;
    ret = ebpf_device_program_build(NULL, 0, &p4, &n4, &err);
    tap_ok(ret == 0 && run_program(p4, n4, CHR, R, 1, 3) == 0, "no rules: deny by default");
  }
}

/* --- live: a real cgroup on this host (root only) --------------------------------------------- */

static char *read_text(const char *path) {
  char *out = NULL;
  cleanup_error fsrun_error_t err = NULL;
  size_t len = 0;
  if (read_file_at(AT_FDCWD, path, &out, &len, &err) < 0)
    return NULL;
  while (len > 0 && out[len - 1] == '\n')
    out[--len] = '\0';
  return out;
}

static char *ctrl_file(cgroup_mode_t mode, const char *v1_ctrl, const char *path,
                       const char *file) {
  if (mode == CGROUP_MODE_UNIFIED)
    return xasprintf("/sys/fs/cgroup%s/%s", path, file);
  return xasprintf("/sys/fs/cgroup/%s%s/%s", v1_ctrl, path, file);
}

static void check_file(cgroup_mode_t mode, const char *ctrl, const char *path, const char *file,
                       const char *want) {
  cleanup_free char *p = ctrl_file(mode, ctrl, path, file);
  cleanup_free char *got = read_text(p);
  tap_ok(streq(got, want), "%s = %s (got %s)", p, want, got ? got : "unreadable");
}

/* every directory the container may have: each v1 hierarchy and the cgroup2 mount */
static int count_dirs(const char *path) {
  static const char *const mounts[] = {"cpu",     "cpuacct", "cpuset", "memory",  "devices",
                                       "freezer", "blkio",   "pids",   "systemd", "unified",
                                       "net_cls", "hugetlb", ""};
  int count = 0;
  for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
    cleanup_free char *d =
        xasprintf("/sys/fs/cgroup%s%s%s", mounts[i][0] ? "/" : "", mounts[i], path);
    struct stat st;
    if (stat(d, &st) == 0 && S_ISDIR(st.st_mode))
      count++;
  }
  return count;
}

/* In the child, after the parent put it in the cgroup: what it can do. Exit code bits:
 * 1 /proc/self/cgroup does not name the cgroup, 2 /dev/kmsg write refused, 4 /dev/kmsg read
 * allowed, 8 could fork past the pids limit, 16 /dev/null unusable. */
static int child_checks(const char *path, int fork_count) {
  cleanup_free char *cg = read_text("/proc/self/cgroup");
  cleanup_free char *text = xasprintf("%s\n", cg ? cg : "");
  cleanup_free char *want = xasprintf(":%s\n", path);
  int status = 0, fd;
  if (!strstr(text, want))
    status |= 1;
  fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    status |= 2;
  else
    close(fd);
  fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    status |= 4;
    close(fd);
  } else if (errno != EPERM) {
    status |= 4;
  }
  fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    status |= 16;
  else
    close(fd);
  /* the pids limit: fork_count children that sleep, all must not succeed */
  {
    int forked = 0;
    pid_t kids[64];
    for (int i = 0; i < fork_count && i < 64; i++) {
      pid_t k = fork();
      if (k == 0) {
        pause();
        _exit(0);
      }
      if (k < 0)
        break;
      kids[forked++] = k;
    }
    if (forked == fork_count)
      status |= 8;
    for (int i = 0; i < forked; i++) {
      kill(kids[i], SIGKILL);
      waitpid(kids[i], NULL, 0);
    }
  }
  return status;
}

static bool same_hierarchies(const struct fsrun_cgroup *a, const struct fsrun_cgroup *b) {
  if (a->n_v1 != b->n_v1)
    return false;
  for (size_t i = 0; i < a->n_v1; i++)
    if (!streq(a->v1[i].mountpoint, b->v1[i].mountpoint) ||
        !streq(a->v1[i].controllers, b->v1[i].controllers))
      return false;
  return true;
}

/* A record of create's hierarchies gives the same ones back; a record whose mount is not the one
 * at its point now (a stale id) is refused as a whole, and the caller reads the mount table */
static void check_record(const struct fsrun_cgroup *made, const struct fsrun_cgroup *discovered) {
  cleanup_free char *record = cgroup_hierarchy_record(made);
  cleanup_free char *stale = NULL;
  struct fsrun_cgroup from = {0}, refused = {0};
  if (made->mode == CGROUP_MODE_UNIFIED) {
    tap_ok(record == NULL, "unified: no hierarchy record");
    return;
  }
  if (record == NULL) {
    tap_skip("no unique mount ids on this kernel (Linux 6.8)");
    return;
  }
  tap_ok(cgroup_hierarchies_from_record(&from, record) == 0 && same_hierarchies(&from, discovered),
         "the record gives the discovered hierarchies back");
  stale = xasprintf("1%s", record); /* another id on the first line */
  tap_ok(cgroup_hierarchies_from_record(&refused, stale) < 0 && refused.n_v1 == 0,
         "a record whose first mount is not the one at its point is refused");
  tap_ok(cgroup_hierarchies_from_record(&refused, "") < 0 &&
             cgroup_hierarchies_from_record(&refused, "12 memory") < 0,
         "an empty or malformed record is refused");
  for (size_t i = 0; i < from.n_v1; i++) {
    free(from.v1[i].mountpoint);
    free(from.v1[i].controllers);
  }
  free(from.v1);
}

static void test_live(void) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_cgroup struct fsrun_cgroup *cg = NULL;
  cleanup_free char *id = xasprintf("unit-%d", (int)getpid());
  cleanup_free char *path = xasprintf("/fsrun/%s", id);
  cgroup_mode_t mode;
  oci_resources r = {0};
  oci_memory mem = {0};
  oci_pids pids = {0};
  oci_cpu cpu = {0};
  oci_device_cgroup devs[2] = {{0}};
  cgroup_create_opts o = {0};
  int pipefd[2];
  pid_t child;
  int ret, status = -1;

  if (geteuid() != 0 || access("/sys/fs/cgroup", W_OK) != 0) {
    tap_skip("live cgroup tests need root");
    return;
  }
  ret = cgroup_detect_mode(&mode, &err);
  tap_ok(ret == 0, "detect mode: %d (%s)", (int)mode,
         mode == CGROUP_MODE_UNIFIED  ? "unified"
         : mode == CGROUP_MODE_HYBRID ? "hybrid"
                                      : "legacy");
  if (ret < 0)
    return;

  mem.has_limit = true;
  mem.limit = 64 << 20;
  mem.has_swap = true;
  mem.swap = 64 << 20;
  pids.has_limit = true;
  pids.limit = 6;
  cpu.has_shares = true;
  cpu.shares = 512;
  cpu.has_quota = true;
  cpu.quota = 50000;
  cpu.has_period = true;
  cpu.period = 100000;
  devs[0].allow = false;
  devs[0].access = (char *)"rwm";
  devs[1].allow = true;
  devs[1].type = (char *)"c";
  devs[1].has_major = devs[1].has_minor = true;
  devs[1].major = 1;
  devs[1].minor = 11;
  devs[1].access = (char *)"w";
  r.memory = &mem;
  r.pids = &pids;
  r.cpu = &cpu;
  r.devices = devs;
  r.n_devices = 2;
  o.id = id;
  o.resources = &r;

  ret = cgroup_create(&o, &cg, &err);
  tap_ok(ret == 0 && cg != NULL, "cgroup_create %s: %s", path, ret == 0 ? "ok" : err->msg);
  if (ret < 0 || cg == NULL)
    return;
  tap_ok(streq(cgroup_path(cg), path), "cgroup_path = %s", cgroup_path(cg));
  tap_ok(cgroup_clone_fd(cg) >= 0 ? mode == CGROUP_MODE_UNIFIED : mode != CGROUP_MODE_UNIFIED,
         "clone fd only on a unified host (%d)", cgroup_clone_fd(cg));

  if (mode == CGROUP_MODE_UNIFIED) {
    check_file(mode, NULL, path, "memory.max", "67108864");
    check_file(mode, NULL, path, "memory.swap.max", "0");
    check_file(mode, NULL, path, "pids.max", "6");
    check_file(mode, NULL, path, "cpu.weight", "59");
    check_file(mode, NULL, path, "cpu.max", "50000 100000");
  } else {
    cleanup_free char *devlist = NULL, *p = NULL;
    check_file(mode, "memory", path, "memory.limit_in_bytes", "67108864");
    check_file(mode, "pids", path, "pids.max", "6");
    check_file(mode, "cpu", path, "cpu.shares", "512");
    check_file(mode, "cpu", path, "cpu.cfs_quota_us", "50000");
    check_file(mode, "cpu", path, "cpu.cfs_period_us", "100000");
    p = ctrl_file(mode, "devices", path, "devices.list");
    devlist = read_text(p);
    tap_ok(contains(devlist, "c 1:11 w") && contains(devlist, "c 1:3 rwm") &&
               !contains(devlist, "a *:* rwm"),
           "devices.list: deny by default, c 1:11 w and c 1:3 rwm allowed");
    {
      cleanup_free char *cs = ctrl_file(mode, "cpuset", path, "cpuset.cpus");
      cleanup_free char *cpus = read_text(cs);
      tap_ok(cpus && cpus[0], "cpuset.cpus inherited from the parent: `%s`", cpus ? cpus : "");
    }
  }

  {
    cleanup_free char *desc = cgroup_describe(cg);
    cleanup_cgroup struct fsrun_cgroup *again = NULL;
    ret = cgroup_open(desc, NULL, &again, &err);
    tap_ok(ret == 0 && streq(cgroup_path(again), path), "describe `%s` -> open -> same path", desc);
    if (ret == 0)
      check_record(cg, again);
  }

  /* a child: joins, then reports what it can and cannot do */
  if (pipe2(pipefd, O_CLOEXEC) < 0)
    abort();
  child = fork();
  if (child == 0) {
    char c;
    close(pipefd[1]);
    if (read(pipefd[0], &c, 1) != 1)
      _exit(100);
    _exit(child_checks(path, 6));
  }
  close(pipefd[0]);
  ret = cgroup_enter(cg, child, &err);
  tap_ok(ret == 0, "cgroup_enter: %s", ret == 0 ? "ok" : err->msg);
  {
    cleanup_free pid_t *list = NULL;
    size_t n = 0;
    ret = cgroup_pids(cg, &list, &n, &err);
    tap_ok(ret == 0 && n == 1 && list[0] == child, "cgroup_pids lists the child (%zu)", n);
  }
  {
    cgroup_stats s;
    ret = cgroup_get_stats(cg, &s, &err);
    tap_ok(ret == 0 && s.memory_limit == 64 << 20 && s.pids_limit == 6 && s.pids_current == 1,
           "stats: memory limit %llu, pids %llu/%llu", (unsigned long long)s.memory_limit,
           (unsigned long long)s.pids_current, (unsigned long long)s.pids_limit);
    cgroup_stats_clear(&s);
  }
  {
    bool frozen = false;
    ret = cgroup_freeze(cg, true, &err);
    tap_ok(ret == 0 && cgroup_is_frozen(cg, &frozen, &err) == 0 && frozen, "freeze: frozen");
    ret = cgroup_freeze(cg, false, &err);
    tap_ok(ret == 0 && cgroup_is_frozen(cg, &frozen, &err) == 0 && !frozen, "thaw: running");
  }
  /* update: raising both limits on v1 needs memsw first, lowering needs the limit first */
  {
    oci_resources u = {0};
    oci_memory um = {0};
    oci_cpu uc = {0};
    bool v2 = mode == CGROUP_MODE_UNIFIED;
    um.has_limit = um.has_swap = true;
    um.limit = 256 << 20;
    um.swap = 512 << 20;
    u.memory = &um;
    ret = cgroup_update(cg, &u, &err);
    tap_ok(ret == 0, "update: memory 256M, swap 512M: %s", ret == 0 ? "ok" : err->msg);
    check_file(mode, "memory", path, v2 ? "memory.max" : "memory.limit_in_bytes", "268435456");
    check_file(mode, "memory", path, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
               v2 ? "268435456" : "536870912");
    um.limit = 32 << 20;
    um.swap = 32 << 20;
    ret = cgroup_update(cg, &u, &err);
    tap_ok(ret == 0, "update: memory 32M, swap 32M: %s", ret == 0 ? "ok" : err->msg);
    check_file(mode, "memory", path, v2 ? "memory.max" : "memory.limit_in_bytes", "33554432");
    check_file(mode, "memory", path, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes",
               v2 ? "0" : "33554432");
    /* only the period: the quota stays */
    uc.has_period = true;
    uc.period = 200000;
    u.memory = NULL;
    u.cpu = &uc;
    ret = cgroup_update(cg, &u, &err);
    tap_ok(ret == 0, "update: cpu period 200000: %s", ret == 0 ? "ok" : err->msg);
    if (v2) {
      check_file(mode, "cpu", path, "cpu.max", "50000 200000");
    } else {
      check_file(mode, "cpu", path, "cpu.cfs_period_us", "200000");
      check_file(mode, "cpu", path, "cpu.cfs_quota_us", "50000");
    }
  }

  if (write(pipefd[1], "x", 1) != 1)
    abort();
  close(pipefd[1]);
  waitpid(child, &status, 0);
  tap_ok(WIFEXITED(status), "child exited (status 0x%x)", status);
  if (WIFEXITED(status)) {
    int s = WEXITSTATUS(status);
    tap_ok(!(s & 1), "/proc/self/cgroup names %s", path);
    tap_ok(!(s & 2), "allowed device c 1:11 (w) opens for writing");
    tap_ok(!(s & 4), "c 1:11 cannot be opened for reading: EPERM");
    tap_ok(!(s & 8), "pids.max 6: the 6th fork in the cgroup fails");
    tap_ok(!(s & 16), "/dev/null (a default device) is usable");
  }

  /* a process that stays: destroy kills it */
  child = fork();
  if (child == 0) {
    for (;;)
      pause();
  }
  ret = cgroup_enter(cg, child, &err);
  tap_ok(ret == 0, "second child joined");
  ret = cgroup_destroy(cg, &err);
  tap_ok(ret == 0, "cgroup_destroy: %s", ret == 0 ? "ok" : err->msg);
  waitpid(child, &status, 0);
  tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the straggler was SIGKILLed");
  tap_ok(count_dirs(path) == 0, "no directory left in any hierarchy (%d)", count_dirs(path));
  ret = cgroup_destroy(cg, &err);
  tap_ok(ret == 0, "destroy again: missing directories are not an error");

  /* a refused value: the error names the field and the file, nothing is left */
  {
    cleanup_cgroup struct fsrun_cgroup *bad = NULL;
    cleanup_free char *bad_id = xasprintf("unit-bad-%d", (int)getpid());
    cleanup_free char *bad_path = xasprintf("/fsrun/%s", bad_id);
    oci_resources rb = {0};
    oci_cpu cb = {0};
    cb.cpus = (char *)"999";
    rb.cpu = &cb;
    o.id = bad_id;
    o.resources = &rb;
    ret = cgroup_create(&o, &bad, &err);
    tap_ok(ret < 0 && contains(err->msg, "linux.resources.cpu.cpus: write `cpuset.cpus` in "),
           "bad cpuset refused: %s", err ? err->msg : "(accepted)");
    tap_ok(count_dirs(bad_path) == 0, "nothing left after the failed create");
  }
  {
    cleanup_cgroup struct fsrun_cgroup *bad = NULL;
    cleanup_free char *bad_id = xasprintf("unit-rdma-%d", (int)getpid());
    oci_resources rb = {0};
    oci_rdma rd = {(char *)"mlx5_0", true, false, 10, 0};
    rb.rdma = &rd;
    rb.n_rdma = 1;
    o.id = bad_id;
    o.resources = &rb;
    ret = cgroup_create(&o, &bad, &err);
    if (access("/sys/fs/cgroup/rdma", F_OK) == 0 || mode == CGROUP_MODE_UNIFIED)
      tap_ok(ret < 0, "rdma on a host without such a device refused: %s", err ? err->msg : "");
    else
      tap_ok(ret < 0 &&
                 contains(err->msg, "linux.resources.rdma: the rdma controller is not available"),
             "missing controller named: %s", err ? err->msg : "(accepted)");
  }
}

/* the device filter on a cgroup2 directory: works on a hybrid host's cgroup2 mount too */
static void test_live_bpf(void) {
  static const device_rule rules[] = {
      {false, 'a', -1, -1, DEVICE_ACCESS_ALL},
      {true, 'c', 1, 3, DEVICE_ACCESS_ALL},
      {true, 'c', 1, 11, DEVICE_ACCESS_WRITE},
  };
  cgroup_mode_t mode;
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *dir = NULL;
  cleanup_close int dfd = -1;
  int ret, status;
  pid_t child;

  if (geteuid() != 0 || cgroup_detect_mode(&mode, &err) < 0 || mode == CGROUP_MODE_LEGACY) {
    tap_skip("BPF device filter needs root and a cgroup2 mount");
    return;
  }
  dir = xasprintf("%s/fsrun-unit-bpf-%d",
                  mode == CGROUP_MODE_UNIFIED ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified",
                  (int)getpid());
  if (mkdir(dir, 0755) < 0) {
    tap_ok(0, "mkdir %s: %s", dir, strerror(errno));
    return;
  }
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ret = ebpf_device_filter_apply(dfd, rules, 3, &err);
  tap_ok(ret == 0, "filter loaded and attached: %s", ret == 0 ? "ok" : err->msg);
  /* again: replaces the first one (attach new, detach old) */
  ret = ebpf_device_filter_apply(dfd, rules, 3, &err);
  tap_ok(ret == 0, "filter replaced: %s", ret == 0 ? "ok" : err->msg);
  {
    union bpf_attr attr;
    uint32_t ids[8];
    memset(&attr, 0, sizeof(attr));
    attr.query.target_fd = (uint32_t)dfd;
    attr.query.attach_type = BPF_CGROUP_DEVICE;
    attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
    attr.query.prog_cnt = 8;
    long q = syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof(attr));
    tap_ok(q == 0 && attr.query.prog_cnt == 1,
           "exactly one program attached after the replacement (%u)", attr.query.prog_cnt);
  }
  if (ret == 0) {
    child = fork();
    if (child == 0) {
      int s = 0, fd;
      cleanup_free char *procs = xasprintf("%s/cgroup.procs", dir);
      fd = open(procs, O_WRONLY);
      if (fd < 0 || write(fd, "0", 1) != 1)
        _exit(100);
      close(fd);
      fd = open("/dev/null", O_RDWR);
      if (fd < 0)
        s |= 1;
      fd = open("/dev/kmsg", O_WRONLY);
      if (fd < 0)
        s |= 2;
      fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
      if (fd >= 0 || errno != EPERM)
        s |= 4;
      fd = open("/dev/full", O_RDONLY);
      if (fd >= 0 || errno != EPERM)
        s |= 8;
      _exit(s);
    }
    waitpid(child, &status, 0);
    tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "in the filtered cgroup: /dev/null rw ok, /dev/kmsg w ok, r EPERM, /dev/full EPERM "
           "(status %d)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (rmdir(dir) < 0)
    tap_diag("rmdir %s: %s", dir, strerror(errno));
}

static void check_v1_path(const char *text, const char *controller, const char *want) {
  cleanup_free char *got = cgroup_v1_path_in(text, controller);
  if (!tap_ok(want == NULL ? got == NULL : got != NULL && strcmp(got, want) == 0,
              "v1 path of %s: %s", controller, want ? want : "none"))
    tap_diag("  got %s", got ? got : "(null)");
}

/* /proc/self/cgroup read for one v1 controller, alone or co-mounted, and the live process's own
 * directory where this host has a v1 pids hierarchy (the watchdog's priming write goes there) */
static void test_v1_own_dir(void) {
  const char *text = "12:pids:/user.slice/u.scope\n"
                     "4:cpu,cpuacct:/system.slice\n"
                     "1:name=systemd:/init.scope\n"
                     "0::/unified";
  cleanup_free char *own = NULL, *procs = NULL, *listed = NULL, *framed = NULL;
  cleanup_error fsrun_error_t err = NULL;
  char line[32];
  check_v1_path(text, "pids", "/user.slice/u.scope");
  check_v1_path(text, "cpuacct", "/system.slice");
  check_v1_path(text, "cpu", "/system.slice");
  check_v1_path(text, "name=systemd", "/init.scope");
  check_v1_path(text, "memory", NULL);
  check_v1_path(text, "cpuac", NULL);
  check_v1_path("", "pids", NULL);
  own = cgroup_v1_own_dir("pids");
  if (own == NULL) {
    tap_skip("no cgroup v1 pids hierarchy on this host");
    return;
  }
  procs = xasprintf("%s/cgroup.procs", own);
  snprintf(line, sizeof(line), "\n%d\n", (int)getpid());
  if (read_file_at(AT_FDCWD, procs, &listed, NULL, &err) < 0) {
    tap_ok(false, "read %s: %s", procs, err->msg);
    return;
  }
  framed = xasprintf("\n%s", listed);
  tap_ok(strstr(framed, line) != NULL, "cgroup_v1_own_dir(pids) lists this process: %s", own);
}

int main(void) {
  test_paths();
  test_containers_paths();
  test_delegated_base();
  test_v1_own_dir();
  test_conversions();
  test_v2_formats();
  test_v1_device_strings();
  test_device_rule_list();
  test_bpf_program();
  test_live();
  test_live_bpf();
  return tap_done();
}
