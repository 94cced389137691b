/* Runs a command under a seccomp filter that answers clone3 with ENOSYS, as Docker 20.10's and
 * older podman's default profiles do (libc then falls back to clone):
 *
 *   noclone3 COMMAND [ARG...]
 *   noclone3 --probe     prints what clone3 answers under the filter (ENOSYS)
 *
 * Everything else is allowed. The filter is inherited by every process COMMAND starts. An ordinary
 * user gets no_new_privs with it (the kernel's condition for an unprivileged filter); root keeps
 * its setuid/file-capability semantics. Exits 127 when the filter or the exec fails. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  scmp_filter_ctx ctx;
  int syscall_nr = seccomp_syscall_resolve_name("clone3");
  int r;
  if (argc < 2) {
    fprintf(stderr, "usage: noclone3 COMMAND [ARG...]\n");
    return 127;
  }
  if (syscall_nr == __NR_SCMP_ERROR) {
    fprintf(stderr, "noclone3: libseccomp does not know clone3\n");
    return 127;
  }
  ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) {
    fprintf(stderr, "noclone3: seccomp_init failed\n");
    return 127;
  }
  r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, geteuid() != 0);
  if (r == 0)
    r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), syscall_nr, 0);
  if (r == 0)
    r = seccomp_load(ctx);
  seccomp_release(ctx);
  if (r != 0) {
    fprintf(stderr, "noclone3: load the filter: %s\n", strerror(-r));
    return 127;
  }
  if (strcmp(argv[1], "--probe") == 0) {
    /* a size below clone3's first version: EINVAL from the kernel itself, nothing cloned */
    long r3 = syscall(SYS_clone3, NULL, 0);
    printf("%s\n", r3 == 0 ? "0" : errno == ENOSYS ? "ENOSYS" : strerror(errno));
    return 0;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "noclone3: exec %s: %s\n", argv[1], strerror(errno));
  return 127;
}
