/* Seccomp: the filter is compiled in the runtime before clone, so the child only loads it. */
#ifndef FSRUN_SECCOMP_H
#define FSRUN_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci.h"

struct fsrun_seccomp; /* a compiled filter: BPF program + flags */

/* Validates and compiles linux.seccomp; unknown syscalls are skipped (debug log), unknown
 * actions/arches/flags/operators are errors naming the field. *out NULL when s is NULL. */
int seccomp_compile(const oci_seccomp *s, struct fsrun_seccomp **out, fsrun_error_t *err);
/* seccomp_compile through the cache of compiled programs in the state root rootfd
 * (seccomp-cache.h; -1: none, as with FSRUN_NO_SECCOMP_CACHE set): every check of the profile
 * is made either way. A program compiled afresh goes to the cache with seccomp_keep_compiled. */
int seccomp_compile_cached(const oci_seccomp *s, int rootfd, struct fsrun_seccomp **out,
                           fsrun_error_t *err);
/* Stores f in rootfd's cache when seccomp_compile_cached compiled it afresh (create calls it
 * once the config has passed every check, so that a refused config leaves nothing). */
void seccomp_keep_compiled(int rootfd, const struct fsrun_seccomp *f);
/* whether f was read from the cache (the tests' and the debug log's) */
bool seccomp_from_cache(const struct fsrun_seccomp *f);
/* The compiled program as bytes for the state dir (create), and back (exec): NULL for bytes this
 * fsrun did not write (another version, a short or damaged file); the caller compiles then. */
char *seccomp_serialize(const struct fsrun_seccomp *f, size_t *len);
struct fsrun_seccomp *seccomp_deserialize(const char *buf, size_t len);
/* Loads the filter into the calling thread (seccomp(2) with the flags); returns the notify fd in
 * *notify_fd when the profile has SCMP_ACT_NOTIFY, else -1. Safe to call after fork (no malloc).
 * (Not named seccomp_load: libseccomp exports that symbol.) */
int seccomp_load_filter(const struct fsrun_seccomp *f, int *notify_fd, fsrun_error_t *err);
bool seccomp_has_notify(const struct fsrun_seccomp *f);
void seccomp_free(struct fsrun_seccomp *f);
/* seccomp_free(*f), *f then NULL */
void seccomp_freep(struct fsrun_seccomp **f);
#define cleanup_seccomp __attribute__((cleanup(seccomp_freep)))
/* Sends the notify fd (SCM_RIGHTS) with the spec's containerProcessState JSON to listenerPath:
 * {"ociVersion", "fds": ["seccompFd"], "pid": pid (the process that loaded the filter),
 * "metadata": listener_metadata (linux.seccomp.listenerMetadata, may be NULL), "state":
 * state_json (the container's state object, as `fsrun state` prints it)}. */
int seccomp_send_listener(const char *listener_path, const char *listener_metadata, int notify_fd,
                          int pid, const char *state_json, fsrun_error_t *err);

#endif
