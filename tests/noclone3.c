/* Runs a command under a seccomp filter that answers clone3 (or the calls named) with ENOSYS, as
 * Docker 20.10's and older podman's default profiles do for clone3 (libc then falls back to
 * clone), and as valgrind 3.19 does for the calls it does not know:
 *
 *   noclone3 [--enosys NAME[,NAME...]] [--eperm NAME[,NAME...]] COMMAND [ARG...]
 *   noclone3 [--enosys NAMES] [--eperm NAMES] --probe   prints what each call answers
 *   (a NAME may be a call's number)
 *
 * --enosys replaces the list (default: clone3, none when only --eperm is given); --eperm answers
 * its calls with EPERM instead (a call an LSM or a seccomp profile refuses). Everything else is
 * allowed. The filter is
 * inherited by every process COMMAND starts. An ordinary user gets no_new_privs with it (the
 * kernel's condition for an unprivileged filter); root keeps its setuid/file-capability semantics.
 * Exits 127 when the filter or the exec fails. */
#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a name, or a number for a call this libseccomp does not name yet (statmount is 457 on x86-64) */
static int call_number(const char *name) {
  if (name[0] != '\0' && name[strspn(name, "0123456789")] == '\0')
    return atoi(name);
  return seccomp_syscall_resolve_name(name);
}

static int add_rules(scmp_filter_ctx ctx, const char *names, int code) {
  char *copy = strdup(names);
  int r = copy == NULL ? -ENOMEM : 0;
  for (char *save = NULL, *name = copy ? strtok_r(copy, ",", &save) : NULL; name != NULL && r == 0;
       name = strtok_r(NULL, ",", &save)) {
    int nr = call_number(name);
    if (nr == __NR_SCMP_ERROR) {
      fprintf(stderr, "noclone3: libseccomp does not know %s\n", name);
      r = -EINVAL;
      break;
    }
    r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)code), nr, 0);
    if (r != 0)
      fprintf(stderr, "noclone3: a rule for %s: %s\n", name, strerror(-r));
  }
  free(copy);
  return r;
}

/* each call with arguments the kernel rejects before doing anything (EINVAL, EBADF, EFAULT) */
static void probe(const char *names) {
  char *copy = strdup(names);
  for (char *save = NULL, *name = strtok_r(copy, ",", &save); name != NULL;
       name = strtok_r(NULL, ",", &save)) {
    long r = syscall(call_number(name), -1L, 0L, 0L, 0L);
    printf("%s %s\n", name,
           r == 0            ? "0"
           : errno == ENOSYS ? "ENOSYS"
           : errno == EPERM  ? "EPERM"
                             : strerror(errno));
  }
  free(copy);
}

int main(int argc, char **argv) {
  const char *names = NULL, *eperm = "";
  scmp_filter_ctx ctx;
  int r;
  for (; argc > 2 && (strcmp(argv[1], "--enosys") == 0 || strcmp(argv[1], "--eperm") == 0);
       argv += 2, argc -= 2)
    *(strcmp(argv[1], "--enosys") == 0 ? &names : &eperm) = argv[2];
  if (names == NULL)
    names = *eperm ? "" : "clone3";
  if (argc < 2) {
    fprintf(stderr, "usage: noclone3 [--enosys NAME[,NAME...]] [--eperm NAME[,NAME...]] "
                    "COMMAND [ARG...]\n");
    return 127;
  }
  ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL) {
    fprintf(stderr, "noclone3: seccomp_init failed\n");
    return 127;
  }
  r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, geteuid() != 0);
  if (r == 0)
    r = add_rules(ctx, names, ENOSYS);
  if (r == 0)
    r = add_rules(ctx, eperm, EPERM);
  if (r == 0)
    r = seccomp_load(ctx);
  seccomp_release(ctx);
  if (r != 0) {
    fprintf(stderr, "noclone3: load the filter: %s\n", strerror(-r));
    return 127;
  }
  if (strcmp(argv[1], "--probe") == 0) {
    probe(names);
    probe(eperm);
    return 0;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "noclone3: exec %s: %s\n", argv[1], strerror(errno));
  return 127;
}
