/* A git loose object checked against its name: git never hashes an object again when it reads it,
 * so a file under an id that is not the hash of its content would be believed. */
#ifndef FSRUN_GIT_OBJECT_H
#define FSRUN_GIT_OBJECT_H

#include <stdbool.h>

/* 0 when what fd reads (from its offset) is the zlib stream of `<type> <size>\0<data>`, type one of
 * blob, tree, commit, tag, size the data's, and the hash of that (SHA-1 for a 40-hex id, SHA-256
 * for a 64-hex one) is id; else -1 and *why says what is wrong. */
int git_loose_object_check(int fd, const char *id, const char **why);

#endif
