/* The cgroup v2 device filter: a BPF_CGROUP_DEVICE program built from raw BPF instructions,
 * loaded with bpf(2) and attached to the container's cgroup. */
#ifndef FSRUN_EBPF_H
#define FSRUN_EBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define DEVICE_ACCESS_MKNOD 1u /* same bits as BPF_DEVCG_ACC_* */
#define DEVICE_ACCESS_READ  2u
#define DEVICE_ACCESS_WRITE 4u
#define DEVICE_ACCESS_ALL   7u

/* One device cgroup rule, validated: the effective list is evaluated with "the last matching rule
 * wins" and "deny when nothing matches", which is what a v1 device cgroup does after `deny a`. */
typedef struct {
  bool allow;
  char type;       /* 'a' (any), 'c' or 'b' */
  int64_t major;   /* -1 = any */
  int64_t minor;   /* -1 = any */
  unsigned access; /* DEVICE_ACCESS_* bits, never 0 */
} device_rule;

struct bpf_insn;

/* Builds the program: the rules from the last to the first, each a block that returns its verdict
 * when it matches, then "return 0". Caller frees *insns. */
int ebpf_device_program_build(const device_rule *rules, size_t n_rules, struct bpf_insn **insns,
                              size_t *n_insns, fsrun_error_t *err);

/* Loads the program for rules and attaches it to the cgroup directory fd with BPF_F_ALLOW_MULTI;
 * programs attached to that cgroup before (an older filter of ours) are detached afterwards, so
 * an update never leaves a window without a filter. */
int ebpf_device_filter_apply(int cgroup_dirfd, const device_rule *rules, size_t n_rules,
                             fsrun_error_t *err);

#endif
