/* A seccomp program rewritten shorter, with the same verdict for every input (issue 15).
 *
 * libseccomp's binary tree tests each syscall number of a profile on its own: a runtime's usual
 * profile (some 300 syscalls allowed, three architectures) is ~1230 instructions, and the kernel
 * converts and JIT-compiles all of them at each load (~0.6 ms of an `exec`, more than half of
 * what the profile adds to it). Neighbouring numbers mostly share a verdict, so a search over
 * ranges says the same in a fraction of the instructions.
 *
 * The rewrite understands programs made of loads of seccomp_data words (BPF_LD|BPF_W|BPF_ABS), an
 * AND of a loaded word with a constant (libseccomp's masked comparison: a flag mask on clone's
 * first argument, as Docker's and Podman's profiles have), comparisons of the accumulator with
 * constants (JEQ, JGT, JGE, JA) and returns of constants; anything else is left as it is, and so
 * are programs under 256 instructions (their load is cheap: the sandbox's deny list). Its result
 * is checked before it is used: the old program is cut into the boxes of inputs (one interval per
 * word or masked word read) that take one path each, and every input of every box must reach that
 * box's verdict in the new program. A program that cannot be checked within bounds, or that would
 * not be shorter, is kept.
 */
#ifndef FSRUN_SECCOMP_COMPACT_H
#define FSRUN_SECCOMP_COMPACT_H

#include <linux/filter.h>
#include <stdbool.h>

/* Changed with any change of what seccomp_compact makes of a program: the cache of compiled
 * programs (seccomp-cache.h) keys on it. */
#define SECCOMP_COMPACT_VERSION 2

/* Replaces prog->filter (malloc'd) with an equivalent shorter program; false when prog is kept. */
bool seccomp_compact(struct sock_fprog *prog);

/* The verdict of prog for the words of seccomp_data at offsets[i] = values[i] (any other word
 * read is 0); false when prog uses an instruction the rewrite does not know. For tests. */
bool seccomp_compact_eval(const struct sock_fprog *prog, const unsigned *offsets,
                          const unsigned *values, unsigned n, unsigned *verdict);

#endif
