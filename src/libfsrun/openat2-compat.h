/* openat2(2) where the kernel, or what runs fsrun, answers ENOSYS: valgrind 3.19 (Debian 12) does
 * not know it, and a seccomp profile may refuse it. The fallback is a walk of its own, one
 * component at a time with O_PATH|O_NOFOLLOW openat, that keeps each RESOLVE_* guarantee fsrun
 * asks for (docs/process-model.md, "Without openat2"). */
#ifndef FSRUN_OPENAT2_COMPAT_H
#define FSRUN_OPENAT2_COMPAT_H

#include <linux/openat2.h>

/* openat2(2), tried again on the kernel's spurious EAGAIN (a `..` during a rename or a mount
 * anywhere); on ENOSYS, openat2_walk. An fd, or -1 with errno. */
int openat2_compat(int dirfd, const char *path, const struct open_how *how);

/* The walk alone (the unit tests compare it with the kernel's openat2). It needs RESOLVE_BENEATH
 * or RESOLVE_IN_ROOT and never follows a magic link (ELOOP, as RESOLVE_NO_MAGICLINKS answers);
 * with RESOLVE_NO_XDEV it refuses O_CREAT and O_TRUNC (EINVAL): the last component is checked
 * unopened, then opened, and a file put there in between would be made or truncated before the
 * refusal. Other resolve flags: EINVAL. A path of PATH_MAX or more: ENAMETOOLONG. An fd, or -1
 * with errno (EAGAIN where the last component changed between its check and its open). */
int openat2_walk(int dirfd, const char *path, const struct open_how *how);

#endif
