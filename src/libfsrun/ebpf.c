/* The cgroup v2 device filter. cgroup v2 has no devices.allow/deny files: access to device nodes
 * is decided by BPF_CGROUP_DEVICE programs attached to the cgroup. We generate one from the
 * effective rule list, as raw instructions (no libbpf, no compiler at run time).
 *
 * Register use in the program:
 *   r1  context (struct bpf_cgroup_dev_ctx: access_type, major, minor, all u32)
 *   r2  device type (BPF_DEVCG_DEV_BLOCK / _CHAR), r3 requested access bits (BPF_DEVCG_ACC_*)
 *   r4  major, r5 minor, r6 scratch, r0 verdict (1 allow, 0 deny) */
#include "ebpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define INSN(c, d, s, o, i)                                                                        \
  ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define LDX_W(dst, src, off)    INSN(BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define ALU32_IMM(op, dst, imm) INSN(BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src)     INSN(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOV64_IMM(dst, imm)     INSN(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define JMP_IMM(op, dst, imm)   INSN(BPF_JMP | (op) | BPF_K, dst, 0, 0, imm) /* off patched */
#define EXIT_INSN()             INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* the longest block: type, 3 for access, major, minor, mov, exit */
#define MAX_BLOCK 8

static bool rule_matches_everything(const device_rule *r) {
  return r->type == 'a' && r->major < 0 && r->minor < 0 && r->access == DEVICE_ACCESS_ALL;
}

/* One rule: every test jumps past the block when it fails; the end returns the verdict. */
static size_t build_rule_block(const device_rule *r, struct bpf_insn *block) {
  size_t n = 0, jumps[MAX_BLOCK], n_jumps = 0;
  if (r->type != 'a') {
    jumps[n_jumps++] = n;
    block[n++] = JMP_IMM(BPF_JNE, 2, r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
  }
  if (r->access != DEVICE_ACCESS_ALL) {
    /* An allow rule covers a request whose bits are all in the rule; a deny rule hits a request
     * that asks for any of its bits. */
    block[n++] = MOV32_REG(6, 3);
    if (r->allow) {
      block[n++] = ALU32_IMM(BPF_AND, 6, (int32_t)(~r->access & DEVICE_ACCESS_ALL));
      jumps[n_jumps++] = n;
      block[n++] = JMP_IMM(BPF_JNE, 6, 0);
    } else {
      block[n++] = ALU32_IMM(BPF_AND, 6, (int32_t)r->access);
      jumps[n_jumps++] = n;
      block[n++] = JMP_IMM(BPF_JEQ, 6, 0);
    }
  }
  if (r->major >= 0) {
    jumps[n_jumps++] = n;
    block[n++] = JMP_IMM(BPF_JNE, 4, (int32_t)r->major);
  }
  if (r->minor >= 0) {
    jumps[n_jumps++] = n;
    block[n++] = JMP_IMM(BPF_JNE, 5, (int32_t)r->minor);
  }
  block[n++] = MOV64_IMM(0, r->allow ? 1 : 0);
  block[n++] = EXIT_INSN();
  for (size_t i = 0; i < n_jumps; i++)
    block[jumps[i]].off = (int16_t)(n - jumps[i] - 1);
  return n;
}

int ebpf_device_program_build(const device_rule *rules, size_t n_rules, struct bpf_insn **insns,
                              size_t *n_insns, fsrun_error_t *err) {
  size_t cap = 8 + MAX_BLOCK * n_rules, n = 0; /* prologue 6, epilogue 2 */
  cleanup_free struct bpf_insn *prog = xmalloc0(cap * sizeof(*prog));
  bool terminated = false;

  for (size_t i = 0; i < n_rules; i++) {
    const device_rule *r = &rules[i];
    if ((r->type != 'a' && r->type != 'c' && r->type != 'b') || r->access == 0 ||
        (r->access & ~DEVICE_ACCESS_ALL) != 0 || r->major > INT32_MAX || r->minor > INT32_MAX)
      return fsrun_error_make(err, EINVAL, "device rule %zu: invalid", i);
  }

  prog[n++] = LDX_W(2, 1, 0);
  prog[n++] = ALU32_IMM(BPF_AND, 2, 0xffff);
  prog[n++] = LDX_W(3, 1, 0);
  prog[n++] = ALU32_IMM(BPF_RSH, 3, 16);
  prog[n++] = LDX_W(4, 1, 4);
  prog[n++] = LDX_W(5, 1, 8);

  /* Last match wins: test the rules from the end. A rule that matches everything ends the
   * program; the verifier refuses the unreachable code that would follow it. */
  for (size_t i = n_rules; i-- > 0;) {
    n += build_rule_block(&rules[i], prog + n);
    if (rule_matches_everything(&rules[i])) {
      terminated = true;
      break;
    }
  }
  if (!terminated) {
    prog[n++] = MOV64_IMM(0, 0);
    prog[n++] = EXIT_INSN();
  }
  *insns = steal_ptr(&prog);
  *n_insns = n;
  return 0;
}

static int bpf_call(int cmd, union bpf_attr *attr) {
  return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int load_program(const struct bpf_insn *insns, size_t n, fsrun_error_t *err) {
  union bpf_attr attr;
  char log_buf[4096];
  int fd;

  memset(&attr, 0, sizeof(attr));
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.expected_attach_type = BPF_CGROUP_DEVICE;
  attr.insns = (uint64_t)(uintptr_t)insns;
  attr.insn_cnt = (uint32_t)n;
  attr.license = (uint64_t)(uintptr_t) "GPL";
  fd = bpf_call(BPF_PROG_LOAD, &attr);
  if (fd >= 0)
    return fd;
  if (errno != EINVAL && errno != EACCES)
    return fsrun_error_errno(err, "bpf(BPF_PROG_LOAD) of the device filter");

  /* again with the verifier's log, so the error says why */
  log_buf[0] = '\0';
  attr.log_buf = (uint64_t)(uintptr_t)log_buf;
  attr.log_size = sizeof(log_buf);
  attr.log_level = 1;
  fd = bpf_call(BPF_PROG_LOAD, &attr);
  if (fd >= 0)
    return fd;
  {
    int saved = errno;
    size_t len = strlen(log_buf);
    while (len > 0 && log_buf[len - 1] == '\n')
      log_buf[--len] = '\0';
    return fsrun_error_make(err, saved, "bpf(BPF_PROG_LOAD) of the device filter (verifier: %s)",
                            log_buf[0] ? log_buf : "no log");
  }
}

/* ids of the device programs attached directly to the cgroup */
static int query_attached(int cgroup_dirfd, uint32_t **ids, uint32_t *n_ids, fsrun_error_t *err) {
  uint32_t cap = 16;
  for (;;) {
    cleanup_free uint32_t *buf = xmalloc0(cap * sizeof(uint32_t));
    union bpf_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.query.target_fd = (uint32_t)cgroup_dirfd;
    attr.query.attach_type = BPF_CGROUP_DEVICE;
    attr.query.prog_ids = (uint64_t)(uintptr_t)buf;
    attr.query.prog_cnt = cap;
    if (bpf_call(BPF_PROG_QUERY, &attr) < 0) {
      if (errno == ENOSPC && cap < 65536) {
        cap *= 4;
        continue;
      }
      return fsrun_error_errno(err, "bpf(BPF_PROG_QUERY) on the cgroup");
    }
    *n_ids = attr.query.prog_cnt;
    *ids = steal_ptr(&buf);
    return 0;
  }
}

int ebpf_device_filter_apply(int cgroup_dirfd, const device_rule *rules, size_t n_rules,
                             fsrun_error_t *err) {
  cleanup_free struct bpf_insn *insns = NULL;
  cleanup_free uint32_t *old_ids = NULL;
  cleanup_close int prog_fd = -1;
  uint32_t n_old = 0;
  size_t n_insns = 0;
  union bpf_attr attr;
  int ret;

  ret = ebpf_device_program_build(rules, n_rules, &insns, &n_insns, err);
  if (ret < 0)
    return ret;
  prog_fd = load_program(insns, n_insns, err);
  if (prog_fd < 0)
    return prog_fd;
  ret = query_attached(cgroup_dirfd, &old_ids, &n_old, err);
  if (ret < 0)
    return ret;

  memset(&attr, 0, sizeof(attr));
  attr.target_fd = (uint32_t)cgroup_dirfd;
  attr.attach_bpf_fd = (uint32_t)prog_fd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf_call(BPF_PROG_ATTACH, &attr) < 0)
    return fsrun_error_errno(err, "bpf(BPF_PROG_ATTACH) of the device filter");

  for (uint32_t i = 0; i < n_old; i++) {
    cleanup_close int old_fd = -1;
    memset(&attr, 0, sizeof(attr));
    attr.prog_id = old_ids[i];
    old_fd = bpf_call(BPF_PROG_GET_FD_BY_ID, &attr);
    if (old_fd < 0) {
      if (errno == ENOENT)
        continue; /* gone meanwhile */
      return fsrun_error_errno(err, "bpf(BPF_PROG_GET_FD_BY_ID) of the old device filter");
    }
    memset(&attr, 0, sizeof(attr));
    attr.target_fd = (uint32_t)cgroup_dirfd;
    attr.attach_bpf_fd = (uint32_t)old_fd;
    attr.attach_type = BPF_CGROUP_DEVICE;
    if (bpf_call(BPF_PROG_DETACH, &attr) < 0 && errno != ENOENT)
      return fsrun_error_errno(err, "bpf(BPF_PROG_DETACH) of the old device filter");
  }
  log_debug("device filter: %zu rules, %zu instructions, replaced %u program(s)", n_rules, n_insns,
            n_old);
  return 0;
}
