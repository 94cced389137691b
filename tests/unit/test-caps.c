/* Unit tests for caps.c: capability names, cap_last_cap, and (as root, in a forked child) the
 * credentials a process ends up with. TAP output. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "error.h"
#include "tap.h"

/* The hex value of "Field:\t..." in /proc/self/status. */
static unsigned long long status_hex(const char *field) {
  char line[256];
  unsigned long long v = ~0ULL;
  size_t flen = strlen(field);
  FILE *f = fopen("/proc/self/status", "re");
  if (f == NULL)
    return v;
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, field, flen) == 0 && line[flen] == ':')
      v = strtoull(line + flen + 1, NULL, 16);
  fclose(f);
  return v;
}

static void test_names(void) {
  tap_ok(caps_from_name("CAP_CHOWN") == CAP_CHOWN, "CAP_CHOWN maps to %d", CAP_CHOWN);
  tap_ok(caps_from_name("CAP_SYS_ADMIN") == CAP_SYS_ADMIN, "CAP_SYS_ADMIN maps to %d",
         CAP_SYS_ADMIN);
  tap_ok(caps_from_name("CAP_NET_BIND_SERVICE") == CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE");
  tap_ok(caps_from_name("CAP_AUDIT_WRITE") == CAP_AUDIT_WRITE, "CAP_AUDIT_WRITE");
  tap_ok(caps_from_name("CAP_NOT_A_CAP") == -1, "an unknown name is -1");
  tap_ok(caps_from_name("SYS_ADMIN") == -1, "a name without CAP_ is -1");
  tap_ok(caps_from_name("CAP_") == -1, "CAP_ alone is -1");
  tap_ok(caps_from_name("CAP_12") == -1, "a number is not a name");
  tap_ok(caps_from_name("CAP_SYS_ADMIN,CAP_NET_ADMIN") == -1, "a list is not a name");
  tap_ok(caps_from_name("CAP_NET_ADMIN junk") == -1 && caps_from_name("CAP_NET_ADMIN+ep") == -1,
         "a name followed by anything is not a name");
  tap_ok(caps_from_name("") == -1 && caps_from_name(NULL) == -1, "empty and NULL are -1");

  FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
  int from_proc = -1;
  if (f != NULL) {
    if (fscanf(f, "%d", &from_proc) != 1)
      from_proc = -1;
    fclose(f);
  }
  tap_ok(from_proc >= 0 && caps_last_cap() == from_proc, "caps_last_cap %d == /proc value %d",
         caps_last_cap(), from_proc);
  /* Every capability the kernel knows round-trips through its libcap name. */
  int bad = 0;
  for (int cap = 0; cap <= caps_last_cap(); cap++) {
    char *name = cap_to_name(cap);
    char upper[64];
    size_t i;
    for (i = 0; name && name[i] && i < sizeof(upper) - 1; i++)
      upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    upper[i] = '\0';
    if (name == NULL || (strncmp(upper, "CAP_", 4) == 0 && caps_from_name(upper) != cap))
      bad++;
    cap_free(name);
  }
  tap_ok(bad == 0, "every known capability's upper-case name maps back to its number");
}

/* Runs fn in a forked child; its exit status is the number of failed checks (printed there). */
static int in_child(int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int failed = fn();
    fflush(stdout);
    _exit(failed);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static char *names_default[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
static char *names_ambient[] = {"CAP_NET_BIND_SERVICE"};
static char *names_with_unknown[] = {"CAP_KILL", "CAP_DOES_NOT_EXIST"};
static uint32_t groups[] = {10, 20};

#define STRV(a) ((oci_strv){(a), sizeof(a) / sizeof((a)[0])})
#define MASK(c) (1ULL << (c))

static int child_default_spec(void) {
  oci_capabilities caps = {.bounding = STRV(names_default),
                           .effective = STRV(names_default),
                           .permitted = STRV(names_default),
                           .has_bounding = true,
                           .has_effective = true,
                           .has_permitted = true};
  oci_process p = {.capabilities = &caps, .user = {.uid = 0, .gid = 0}};
  fsrun_error_t err = NULL;
  unsigned long long want = MASK(CAP_AUDIT_WRITE) | MASK(CAP_KILL) | MASK(CAP_NET_BIND_SERVICE);
  if (process_apply_user_and_caps(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  return (status_hex("CapEff") != want) + (status_hex("CapPrm") != want) +
         (status_hex("CapBnd") != want) + (status_hex("CapInh") != 0) + (status_hex("CapAmb") != 0);
}

static int child_no_caps(void) {
  oci_process p = {.capabilities = NULL, .user = {.uid = 0, .gid = 0}};
  fsrun_error_t err = NULL;
  if (process_apply_user_and_caps(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  return (status_hex("CapEff") != 0) + (status_hex("CapPrm") != 0) + (status_hex("CapBnd") != 0) +
         (status_hex("CapInh") != 0) + (status_hex("CapAmb") != 0);
}

static int child_user_ambient(void) {
  oci_capabilities caps = {.bounding = STRV(names_ambient),
                           .effective = STRV(names_ambient),
                           .permitted = STRV(names_ambient),
                           .inheritable = STRV(names_ambient),
                           .ambient = STRV(names_ambient),
                           .has_bounding = true,
                           .has_effective = true,
                           .has_permitted = true,
                           .has_inheritable = true,
                           .has_ambient = true};
  oci_process p = {.capabilities = &caps,
                   .user = {.uid = 1000,
                            .gid = 1000,
                            .has_umask = true,
                            .umask = 027,
                            .additional_gids = groups,
                            .n_additional_gids = 2}};
  fsrun_error_t err = NULL;
  unsigned long long want = MASK(CAP_NET_BIND_SERVICE);
  gid_t got_groups[8];
  int ngroups;
  mode_t old_umask;
  uid_t r, e, s;
  if (process_apply_user_and_caps(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  ngroups = getgroups(8, got_groups);
  old_umask = umask(0);
  getresuid(&r, &e, &s);
  return (status_hex("CapEff") != want) + (status_hex("CapPrm") != want) +
         (status_hex("CapBnd") != want) + (status_hex("CapInh") != want) +
         (status_hex("CapAmb") != want) + (r != 1000 || e != 1000 || s != 1000) +
         (getgid() != 1000) + (ngroups != 2 || got_groups[0] != 10 || got_groups[1] != 20) +
         (old_umask != 027) + (prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) != 0);
}

static int child_unknown_skipped(void) {
  oci_capabilities caps = {.bounding = STRV(names_with_unknown),
                           .effective = STRV(names_with_unknown),
                           .permitted = STRV(names_with_unknown),
                           .has_bounding = true,
                           .has_effective = true,
                           .has_permitted = true};
  oci_process p = {.capabilities = &caps, .user = {.uid = 0, .gid = 0}};
  fsrun_error_t err = NULL;
  if (process_apply_user_and_caps(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  return (status_hex("CapEff") != MASK(CAP_KILL)) + (status_hex("CapBnd") != MASK(CAP_KILL));
}

/* Ambient without inheritable cannot be raised: skipped (warning), never a failure. */
static int child_ambient_without_inheritable(void) {
  oci_capabilities caps = {.bounding = STRV(names_ambient),
                           .effective = STRV(names_ambient),
                           .permitted = STRV(names_ambient),
                           .ambient = STRV(names_ambient),
                           .has_bounding = true,
                           .has_effective = true,
                           .has_permitted = true,
                           .has_ambient = true};
  oci_process p = {.capabilities = &caps, .user = {.uid = 1000, .gid = 1000}};
  fsrun_error_t err = NULL;
  if (process_apply_user_and_caps(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  return (status_hex("CapInh") != 0) + (status_hex("CapAmb") != 0) +
         (status_hex("CapEff") != MASK(CAP_NET_BIND_SERVICE));
}

static int child_rlimits(void) {
  oci_rlimit rl[] = {{.type = "RLIMIT_NOFILE", .hard = 512, .soft = 256},
                     {.type = "RLIMIT_CORE", .hard = RLIM_INFINITY, .soft = 0}};
  oci_process p = {.rlimits = rl, .n_rlimits = 2};
  fsrun_error_t err = NULL;
  struct rlimit nofile, core;
  struct rlimit core_before;
  getrlimit(RLIMIT_CORE, &core_before);
  if (core_before.rlim_max != RLIM_INFINITY)
    rl[1].hard = core_before.rlim_max; /* do not need CAP_SYS_RESOURCE */
  if (process_apply_rlimits(&p, &err) < 0) {
    printf("# %s\n", err->msg);
    return 50;
  }
  getrlimit(RLIMIT_NOFILE, &nofile);
  getrlimit(RLIMIT_CORE, &core);
  return (nofile.rlim_cur != 256) + (nofile.rlim_max != 512) + (core.rlim_cur != 0) +
         (core.rlim_max != rl[1].hard);
}

static int child_rlimit_above_hard(void) {
  struct rlimit cur;
  getrlimit(RLIMIT_NOFILE, &cur);
  oci_rlimit rl[] = {{.type = "RLIMIT_NOFILE", .hard = cur.rlim_max + 1, .soft = 1}};
  oci_process p = {.rlimits = rl, .n_rlimits = 1};
  fsrun_error_t err = NULL;
  if (prctl(PR_CAPBSET_READ, CAP_SYS_RESOURCE, 0, 0, 0) == 1) {
    /* This host could raise it: drop the capability to see the error. */
    cap_t none = cap_init();
    cap_set_proc(none);
    cap_free(none);
  }
  int r = process_apply_rlimits(&p, &err);
  char want[200];
  snprintf(want, sizeof(want),
           "process.rlimits: RLIMIT_NOFILE: hard limit %llu is above the current hard limit %llu "
           "and raising it needs CAP_SYS_RESOURCE",
           (unsigned long long)cur.rlim_max + 1, (unsigned long long)cur.rlim_max);
  if (err != NULL)
    printf("# %s\n", err->msg);
  return (r >= 0) + (err == NULL || strncmp(err->msg, want, strlen(want)) != 0);
}

static int child_rlimit_errors(void) {
  oci_rlimit unknown[] = {{.type = "RLIMIT_BOGUS", .hard = 1, .soft = 1}};
  oci_rlimit inverted[] = {{.type = "RLIMIT_NOFILE", .hard = 10, .soft = 20}};
  oci_process p1 = {.rlimits = unknown, .n_rlimits = 1};
  oci_process p2 = {.rlimits = inverted, .n_rlimits = 1};
  fsrun_error_t err = NULL;
  int fails = 0;
  fails += process_apply_rlimits(&p1, &err) >= 0;
  fails += err == NULL || strstr(err->msg, "process.rlimits[0].type") == NULL;
  if (err)
    printf("# %s\n", err->msg);
  fails += process_apply_rlimits(&p2, &err) >= 0;
  fails += err == NULL || strstr(err->msg, "soft limit 20 is above the hard limit 10") == NULL;
  if (err)
    printf("# %s\n", err->msg);
  fsrun_error_release(&err);
  return fails;
}

int main(void) {
  test_names();
  if (geteuid() != 0) {
    for (int i = 0; i < 8; i++)
      tap_skip("needs root");
  } else {
    tap_ok(in_child(child_default_spec) == 0, "default spec: Eff/Prm/Bnd exact, Inh and Amb empty");
    tap_ok(in_child(child_no_caps) == 0, "no capabilities object: every set empty");
    tap_ok(
        in_child(child_user_ambient) == 0,
        "uid 1000 with ambient CAP_NET_BIND_SERVICE: all sets, ids, groups, umask, keepcaps off");
    tap_ok(in_child(child_unknown_skipped) == 0, "unknown capability names are skipped");
    tap_ok(in_child(child_ambient_without_inheritable) == 0,
           "ambient without inheritable is skipped, inheritable stays empty");
    tap_ok(in_child(child_rlimits) == 0, "rlimits are applied");
    tap_ok(in_child(child_rlimit_above_hard) == 0, "raising a hard limit gives the clear error");
    tap_ok(in_child(child_rlimit_errors) == 0, "unknown rlimit and soft > hard name the problem");
  }
  return tap_done();
}
