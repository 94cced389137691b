/* Unit tests for seccomp-compact.c: a runtime's usual allow-list profile, as libseccomp compiles
 * it, is rewritten into a program less than half as long with the same verdict for every
 * architecture, syscall number and first argument tried; programs the rewrite does not know, or
 * cannot shorten, are kept as they are. TAP output. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libseccomp.h>

#include "seccomp-compact.h"
#include "tap.h"

/* what bench.sh's exec-seccomp profile denies; everything else of x86_64 is allowed */
static const char *const denied[] = {"kexec_load",
                                     "kexec_file_load",
                                     "init_module",
                                     "finit_module",
                                     "delete_module",
                                     "reboot",
                                     "swapon",
                                     "swapoff",
                                     "acct",
                                     "bpf",
                                     "perf_event_open",
                                     "ptrace",
                                     "mount",
                                     "umount2",
                                     "pivot_root",
                                     "unshare",
                                     "setns",
                                     "open_by_handle_at",
                                     "keyctl",
                                     "add_key",
                                     "request_key",
                                     "userfaultfd",
                                     "iopl",
                                     "ioperm",
                                     "quotactl",
                                     "kcmp",
                                     "process_vm_readv",
                                     "process_vm_writev",
                                     "settimeofday",
                                     "clock_settime",
                                     "clock_adjtime",
                                     "adjtimex",
                                     "syslog",
                                     "open_tree",
                                     "move_mount",
                                     "fsopen",
                                     "fsconfig",
                                     "fsmount",
                                     "fspick",
                                     "mount_setattr",
                                     NULL};

static int is_denied(const char *name) {
  for (size_t i = 0; denied[i] != NULL; i++)
    if (strcmp(denied[i], name) == 0)
      return 1;
  return 0;
}

/* libseccomp's program for a profile, built as seccomp.c builds it (binary tree, ENOSYS for
 * another architecture); extra adds a rule that the rewrite cannot read (an argument mask) */
static struct sock_fprog libseccomp_program(int allow_list, int extra) {
  struct sock_fprog prog = {0};
  scmp_filter_ctx ctx = seccomp_init(allow_list ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_ALLOW);
  struct stat st;
  int fd = memfd_create("test", MFD_CLOEXEC);
  if (ctx == NULL || fd < 0)
    abort();
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  seccomp_arch_add(ctx, SCMP_ARCH_X86);
  seccomp_arch_add(ctx, SCMP_ARCH_X32);
  for (int nr = 0; nr < 1024; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    int sys;
    if (name == NULL)
      continue;
    sys = seccomp_syscall_resolve_name(name);
    if (allow_list && !is_denied(name) && !(extra && strcmp(name, "clone") == 0))
      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sys, 0);
    else if (!allow_list && is_denied(name))
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sys, 0);
    free(name);
  }
  /* as Docker's and Podman's profiles allow clone: no namespace flag in its first argument */
  if (extra && seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                SCMP_A0(SCMP_CMP_MASKED_EQ, 0x7e020000, 0)) < 0)
    abort();
  if (seccomp_export_bpf(ctx, fd) < 0 || fstat(fd, &st) < 0)
    abort();
  prog.len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
  prog.filter = malloc((size_t)st.st_size);
  if (prog.filter == NULL || pread(fd, prog.filter, (size_t)st.st_size, 0) != st.st_size)
    abort();
  close(fd);
  seccomp_release(ctx);
  return prog;
}

static struct sock_fprog copy_of(const struct sock_fprog *p) {
  struct sock_fprog c = {.len = p->len, .filter = malloc(p->len * sizeof(*p->filter))};
  if (c.filter == NULL)
    abort();
  memcpy(c.filter, p->filter, p->len * sizeof(*p->filter));
  return c;
}

/* Both programs' verdicts for every architecture and argument below and every syscall number
 * near the ones that exist (and x32's, and the extremes); the first difference in *where. */
static long differences(const struct sock_fprog *a, const struct sock_fprog *b, char *where,
                        size_t size) {
  static const unsigned arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0,
                                    0xffffffffu};
  static const unsigned args[] = {0, 1, 2, 3, 5, 8, 12, 17, 20, 0x10000000, 0xffffffffu};
  static const unsigned far[] = {0x3fffffffu, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  const unsigned offsets[3] = {offsetof(struct seccomp_data, nr),
                               offsetof(struct seccomp_data, arch),
                               offsetof(struct seccomp_data, args[0])};
  long n = 0;
  for (size_t ai = 0; ai < sizeof(arches) / sizeof(arches[0]); ai++)
    for (unsigned k = 0; k < 2 * 1100 + 5; k++) {
      unsigned nr = k < 1100 ? k : k < 2200 ? 0x40000000u + (k - 1100) : far[k - 2200];
      for (size_t gi = 0; gi < sizeof(args) / sizeof(args[0]); gi++) {
        unsigned values[3] = {nr, arches[ai], args[gi]}, va = 1, vb = 2;
        int ea = seccomp_compact_eval(a, offsets, values, 3, &va);
        int eb = seccomp_compact_eval(b, offsets, values, 3, &vb);
        if (ea && eb && va == vb)
          continue;
        if (n++ == 0)
          snprintf(where, size, "arch %#x nr %#x arg0 %#x: %#x against %#x", arches[ai], nr,
                   args[gi], va, vb);
      }
    }
  return n;
}

static void test_allow_list(void) {
  struct sock_fprog orig = libseccomp_program(1, 0), prog = copy_of(&orig);
  char where[160] = "";
  bool done = seccomp_compact(&prog);
  long diff;
  tap_ok(done, "an allow-list profile (x86_64, x86, x32) is rewritten");
  tap_ok(prog.len * 2 < orig.len, "in less than half the instructions: %u of libseccomp's %u",
         prog.len, orig.len);
  diff = differences(&orig, &prog, where, sizeof(where));
  tap_ok(diff == 0, "the same verdict for every input tried (%ld differ%s%s)", diff,
         diff ? ", first: " : "", where);
  free(orig.filter);
  free(prog.filter);
}

static void test_deny_list(void) {
  struct sock_fprog orig = libseccomp_program(0, 0), prog = copy_of(&orig);
  char where[160] = "";
  long diff;
  bool done = seccomp_compact(&prog);
  tap_ok(done || prog.len == orig.len, "a deny-list profile: rewritten or kept (%u -> %u)",
         orig.len, prog.len);
  diff = differences(&orig, &prog, where, sizeof(where));
  tap_ok(diff == 0, "a deny-list profile: the same verdicts (%ld differ%s%s)", diff,
         diff ? ", first: " : "", where);
  free(orig.filter);
  free(prog.filter);
}

/* an argument under a mask (BPF_ALU AND right after its load) is an input of its own */
static void test_masked_argument(void) {
  struct sock_fprog orig = libseccomp_program(1, 1), prog = copy_of(&orig);
  char where[160] = "";
  long diff;
  bool done = seccomp_compact(&prog);
  tap_ok(done && prog.len * 2 < orig.len,
         "an allow list with clone allowed under a flag mask is rewritten: %u of %u", prog.len,
         orig.len);
  diff = differences(&orig, &prog, where, sizeof(where));
  tap_ok(diff == 0, "with the mask: the same verdicts (%ld differ%s%s)", diff,
         diff ? ", first: " : "", where);
  free(orig.filter);
  free(prog.filter);
}

/* a load of nr, then the syscall numbers below n denied one by one, then last (3 instructions):
 * 2n + 4 instructions, of which a search over ranges needs a handful */
static struct sock_fprog long_chain(unsigned n, const struct sock_filter last[3]) {
  struct sock_fprog p = {.len = (unsigned short)(2 * n + 4),
                         .filter = malloc((2 * n + 4) * sizeof(struct sock_filter))};
  if (p.filter == NULL)
    abort();
  p.filter[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);
  for (unsigned i = 0; i < n; i++) {
    p.filter[1 + 2 * i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, i, 0, 1);
    p.filter[2 + 2 * i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  }
  memcpy(p.filter + 2 * n + 1, last, 3 * sizeof(*last));
  return p;
}

static void test_kept(void) {
  struct sock_filter bits[3] = {BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_filter out_of_bounds[3] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000, 5, 0),
                                         BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                                         BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_filter one[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog orig = long_chain(150, bits), prog = copy_of(&orig);
  struct sock_fprog broken = long_chain(150, out_of_bounds), good = copy_of(&broken);
  struct sock_fprog short_chain = long_chain(99, out_of_bounds);
  struct sock_fprog small = {.len = 1, .filter = malloc(sizeof(one))};
  bool done;
  memcpy(small.filter, one, sizeof(one));
  good.filter[301].jt = 0; /* the same chain, its last jump in bounds */
  short_chain.filter[199].jt = 0;
  tap_ok(!seccomp_compact(&prog) && prog.len == orig.len &&
             memcmp(prog.filter, orig.filter, orig.len * sizeof(*orig.filter)) == 0,
         "a program with an instruction the rewrite does not know (JSET) is kept as it is");
  tap_ok(!seccomp_compact(&small) && small.len == 1, "a one-instruction program is kept");
  tap_ok(!seccomp_compact(&short_chain) && short_chain.len == 202,
         "a program under 256 instructions is kept (its load is cheap), even a chain of 202 that a "
         "search says in 4");
  tap_ok(!seccomp_compact(&broken) && broken.len == 304,
         "a program that jumps past its end is kept");
  done = seccomp_compact(&good);
  tap_ok(done && good.len < 304, "the same program in bounds is rewritten (%u instructions)",
         good.len);
  free(orig.filter);
  free(prog.filter);
  free(broken.filter);
  free(good.filter);
  free(short_chain.filter);
  free(small.filter);
}

int main(void) {
  test_allow_list();
  test_deny_list();
  test_masked_argument();
  test_kept();
  return tap_done();
}
