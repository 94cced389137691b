/* A cache of compiled seccomp programs (issue 15): libseccomp's compile of a runtime's usual
 * profile (Docker's and Podman's ~300 names, three architectures) is ~16 ms of a 25 ms `run`.
 *
 * An entry is found by the SHA-256 of everything the program depends on: the profile's fields in
 * a canonical encoding, the filter flags and actions the running kernel accepts as probed,
 * libseccomp's version and API level, the kernel's release and machine, and this fsrun's build
 * (its ELF build id: no build id, no cache) and rewrite (seccomp-compact.h). The cache is the
 * directory SECCOMP_CACHE_DIR in the caller's state root, which only the caller may write
 * (state-root.h); it is used only when it is a directory of the caller's euid that neither group
 * nor others may write, not a link. An entry is the program's instructions followed by the
 * SHA-256 of the key and the instructions; it is used only when it is a regular file of the
 * caller's euid with one link, not writable by group or others, reached without a link, of a
 * size a program can have, whose digest matches: anything else is ignored (compiled again, said
 * in the debug log), never trusted. Entries are written whole (O_TMPFILE, then linked under their
 * name); at SECCOMP_CACHE_MAX_ENTRIES the oldest is removed first. docs/process-model.md.
 */
#ifndef FSRUN_SECCOMP_CACHE_H
#define FSRUN_SECCOMP_CACHE_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "oci.h"

#define SECCOMP_CACHE_DIR         ".seccomp-cache"
#define SECCOMP_CACHE_MAX_ENTRIES 64

/* The key of the program that profile s compiles to with these filter flags (as parse_flags
 * found the kernel accepts them); false when there can be none (no build id). */
bool seccomp_cache_key(const oci_seccomp *s, unsigned int flags, bool has_notify, uint8_t key[32]);

/* The program stored under key in the state root rootfd's cache: true with prog->filter
 * malloc'd, or false (absent, or not to be trusted: the debug log says why). */
bool seccomp_cache_load(int rootfd, const uint8_t key[32], struct sock_fprog *prog);

/* Stores prog under key in rootfd's cache, making the cache when missing. A failure is only
 * logged: the cache saves time, nothing depends on it. */
void seccomp_cache_store(int rootfd, const uint8_t key[32], const struct sock_fprog *prog);

#endif
