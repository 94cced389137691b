/* A git loose object checked against its name: git never hashes an object again when it reads it,
 * so a file under an id that is not the hash of its content would be believed. */
#ifndef FSRUN_GIT_OBJECT_H
#define FSRUN_GIT_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

/* the largest object data (the header's size) accepted: inflating and hashing it costs fsrun, not
 * the run that wrote it, about 10 s of CPU */
#define GIT_OBJECT_MAX_SIZE (4ull << 30)

/* 0 when what fd reads (from its offset) is the zlib stream of `<type> <size>\0<data>`, type one of
 * blob, tree, commit, tag, size the data's, and the hash of that (SHA-1 for a 40-hex id, SHA-256
 * for a 64-hex one) is id; else -1 and *why says what is wrong. */
int git_loose_object_check(int fd, const char *id, const char **why);
/* The same check while every byte in reads is written to out (none when out < 0) before it is
 * inflated: the copy is the stream that was checked, read once. Stops at the first error, and
 * when in has more than max_in bytes, or the header's size is above GIT_OBJECT_MAX_SIZE or
 * *inflate_budget, or the data is longer than the header's size. *inflate_budget (when not NULL)
 * is then lowered by the data inflated, checked or not: the CPU a caller's series of checks may
 * spend. */
int git_loose_object_copy(int in, int out, uint64_t max_in, uint64_t *inflate_budget,
                          const char *id, const char **why);

#endif
