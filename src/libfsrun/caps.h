/* Credentials of the user process: rlimits, user/groups/umask, capabilities. Called in the
 * container init (or the exec'd process) in this order: rlimits -> user -> caps. */
#ifndef FSRUN_CAPS_H
#define FSRUN_CAPS_H

#include "error.h"
#include "oci.h"

/* setrlimit for each process.rlimits entry; a clear error when raising a hard limit needs
 * CAP_SYS_RESOURCE that we lack ("process.rlimits: RLIMIT_NOFILE hard 1048576 is above the current
 * hard limit 20000 and raising it needs CAP_SYS_RESOURCE"). */
int process_apply_rlimits(const oci_process *p, fsrun_error_t *err);
/* The RLIMIT_* value of a process.rlimits[].type name, or -1 when the name is not one. */
int rlimit_from_name(const char *name);
/* Drops the bounding set to p->capabilities->bounding (while still privileged), sets groups,
 * gid, uid (keeping caps across setuid), umask, then sets effective/permitted/inheritable and
 * ambient exactly as the spec asks (inheritable only when asked). NULL capabilities = drop all. */
int process_apply_user_and_caps(const oci_process *p, fsrun_error_t *err);
/* process_apply_user_and_caps, then no_new_privs when p asks for it: all of the process's
 * credentials but its seccomp filter and Landlock domain. */
int process_take_credentials(const oci_process *p, fsrun_error_t *err);
/* setresgid(0), setresuid(0) in a freshly entered user namespace (EINVAL, 0 unmapped, is not an
 * error). Raw syscalls: libc's wrappers broadcast to every thread libc knows of, and a runtime
 * that had a thread when it cloned us would leave us waiting for it forever. */
int process_become_userns_root(fsrun_error_t *err);
/* Name <-> number for "CAP_SYS_ADMIN"; -1 when unknown to this kernel/libcap. */
int caps_from_name(const char *name);
/* Highest capability number the running kernel knows, as libcap probed it at the start of this
 * process image (no file is read: inside a container, /proc is the container's). */
int caps_last_cap(void);

#endif
