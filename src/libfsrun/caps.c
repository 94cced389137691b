/* Credentials of the user process: rlimits, groups, uid/gid, umask and the five capability sets.
 *
 * These run in the container init (or the exec'd process) after clone, single-threaded, before
 * execve. Capability sets are handled as 64-bit masks on the stack and applied with capset(2) and
 * prctl(2) through libcap's thin wrappers, so the success path allocates nothing. */
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

/* additionalGids is a uint32_t array in the model; setgroups takes gid_t: same layout on Linux. */
_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t must be 32 bits");

/* --- rlimits ------------------------------------------------------------------------------------
 */

static const struct {
  const char *name;
  int resource;
} rlimit_names[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

int rlimit_from_name(const char *name) {
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < sizeof(rlimit_names) / sizeof(rlimit_names[0]); i++)
    if (strcmp(name, rlimit_names[i].name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

/* "unlimited" for RLIM_INFINITY, the number otherwise; buf must hold 21 bytes. */
static const char *rlimit_value_text(uint64_t v, char buf[static 24]) {
  if (v == (uint64_t)RLIM_INFINITY)
    return "unlimited";
  snprintf(buf, 24, "%" PRIu64, v);
  return buf;
}

int process_apply_rlimits(const oci_process *p, fsrun_error_t *err) {
  if (p == NULL)
    return 0;
  for (size_t i = 0; i < p->n_rlimits; i++) {
    const oci_rlimit *rl = &p->rlimits[i];
    int resource = rlimit_from_name(rl->type);
    struct rlimit current, wanted = {.rlim_cur = rl->soft, .rlim_max = rl->hard};
    char a[24], b[24];

    if (resource < 0)
      return fsrun_error_make(err, 0, "process.rlimits[%zu].type: unknown rlimit `%s`", i,
                              rl->type ? rl->type : "");
    if (rl->soft > rl->hard)
      return fsrun_error_make(
          err, 0, "process.rlimits[%zu]: %s: soft limit %s is above the hard limit %s", i, rl->type,
          rlimit_value_text(rl->soft, a), rlimit_value_text(rl->hard, b));
    if (setrlimit(resource, &wanted) == 0)
      continue;

    int saved = errno;
    if (saved == EPERM && getrlimit(resource, &current) == 0 &&
        wanted.rlim_max > current.rlim_max) {
      /* The usual reason: CAP_SYS_RESOURCE (in the initial user namespace) is needed to raise a
       * hard limit, and a host may not even have it in the bounding set. */
      bool in_bounding = prctl(PR_CAPBSET_READ, CAP_SYS_RESOURCE, 0, 0, 0) == 1;
      return fsrun_error_make(
          err, 0,
          "process.rlimits: %s: hard limit %s is above the current hard limit %s and raising it "
          "needs CAP_SYS_RESOURCE%s",
          rl->type, rlimit_value_text(rl->hard, a), rlimit_value_text(current.rlim_max, b),
          in_bounding ? "" : ", which is not in this host's capability bounding set");
    }
    return fsrun_error_make(err, saved, "process.rlimits: setrlimit %s (soft %s, hard %s)",
                            rl->type, rlimit_value_text(rl->soft, a),
                            rlimit_value_text(rl->hard, b));
  }
  return 0;
}

/* --- capability names ----------------------------------------------------------------------- */

int caps_last_cap(void) {
  /* libcap asked the kernel (PR_CAPBSET_READ) when this process image started, in the host's
   * namespaces. Never /proc/sys/kernel/cap_last_cap: the init and the exec'd process reach this
   * inside the container, whose /proc (or a file the image puts there when no procfs is mounted)
   * would say how many capabilities are dropped from the bounding set. */
  cap_value_t bits = cap_max_bits();
  if (bits > 0 && bits <= 1024)
    return (int)bits - 1;
  int last = 0;
  while (last < 1023 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  return last;
}

int caps_from_name(const char *name) {
  cap_value_t value;
  if (name == NULL || strncasecmp(name, "CAP_", 4) != 0 || name[4] == '\0')
    return -1;
  /* cap_from_name also takes bare numbers, and a name followed by a delimiter and anything
   * (`CAP_A,CAP_B`, `CAP_A junk`, `CAP_A+ep`) as the first name alone; the spec knows names. */
  if (name[4] >= '0' && name[4] <= '9')
    return -1;
  if (strspn(name + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
      strlen(name + 4))
    return -1;
  if (cap_from_name(name, &value) < 0 || value < 0 || value > caps_last_cap())
    return -1;
  return (int)value;
}

/* --- user and capabilities ---------------------------------------------------------------- */

typedef uint64_t cap_mask_t; /* bit N = capability N; the kernel knows fewer than 64 today */

static cap_mask_t cap_bit(int cap) {
  return (cap_mask_t)1 << cap;
}

/* Names -> mask; names unknown to this kernel (or to libcap) are skipped with a warning, as a spec
 * written for a newer kernel must still run here. */
static cap_mask_t caps_mask_from_names(const oci_strv *names, const char *field) {
  cap_mask_t mask = 0;
  for (size_t i = 0; i < names->len; i++) {
    int cap = caps_from_name(names->items[i]);
    if (cap < 0 || cap >= 64) {
      log_warning("process.capabilities.%s: unknown capability `%s` skipped", field,
                  names->items[i] ? names->items[i] : "");
      continue;
    }
    mask |= cap_bit(cap);
  }
  return mask;
}

static int caps_get_current(cap_mask_t *effective, cap_mask_t *permitted, cap_mask_t *inheritable) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {{0}};
  if (capget(&hdr, data) < 0)
    return -errno;
  *effective = data[0].effective | (cap_mask_t)data[1].effective << 32;
  *permitted = data[0].permitted | (cap_mask_t)data[1].permitted << 32;
  *inheritable = data[0].inheritable | (cap_mask_t)data[1].inheritable << 32;
  return 0;
}

static int caps_set_current(cap_mask_t effective, cap_mask_t permitted, cap_mask_t inheritable) {
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {
      {.effective = (uint32_t)effective,
       .permitted = (uint32_t)permitted,
       .inheritable = (uint32_t)inheritable},
      {.effective = (uint32_t)(effective >> 32),
       .permitted = (uint32_t)(permitted >> 32),
       .inheritable = (uint32_t)(inheritable >> 32)},
  };
  return capset(&hdr, data) < 0 ? -errno : 0;
}

/* "CAP_NET_BIND_SERVICE" for messages (libcap's names are lower case). */
static const char *cap_display_name(int cap, char buf[static 64]) {
  char *name = cap_to_name(cap);
  size_t i = 0;
  if (name == NULL) {
    snprintf(buf, 64, "capability %d", cap);
    return buf;
  }
  for (; name[i] != '\0' && i < 63; i++)
    buf[i] = (name[i] >= 'a' && name[i] <= 'z') ? (char)(name[i] - 'a' + 'A') : name[i];
  buf[i] = '\0';
  cap_free(name);
  return buf;
}

/* Warns about (and removes) the capabilities of `wanted` that are not in `available`: the runtime
 * cannot grant what it does not hold (e.g. CAP_SYS_RESOURCE on a host whose bounding set lacks it).
 */
static cap_mask_t caps_restrict_to(cap_mask_t wanted, cap_mask_t available, const char *field,
                                   const char *why) {
  cap_mask_t missing = wanted & ~available;
  for (int cap = 0; missing != 0 && cap < 64; cap++) {
    if (!(missing & cap_bit(cap)))
      continue;
    char name[64];
    log_warning("process.capabilities.%s: %s %s, skipped", field, cap_display_name(cap, name), why);
    missing &= ~cap_bit(cap);
  }
  return wanted & available;
}

/* In a user namespace whose setgroups file says "deny", setgroups(2) always fails with EPERM.
 * Asked only after such a failure: the file is the container's /proc's, which must not decide
 * whether the runtime's own groups are replaced. */
static bool setgroups_denied(void) {
  char buf[16];
  int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strncmp(buf, "deny", 4) == 0;
}

int process_apply_user_and_caps(const oci_process *p, fsrun_error_t *err) {
  static const oci_strv no_names = {NULL, 0};
  const oci_capabilities *c = p ? p->capabilities : NULL;
  const oci_user *user = p ? &p->user : NULL;
  cap_mask_t bounding = 0, effective = 0, permitted = 0, inheritable = 0, ambient = 0;
  cap_mask_t cur_effective = 0, cur_permitted = 0, cur_inheritable = 0;
  int last_cap = caps_last_cap();
  int r;

  if (c != NULL) {
    bounding = caps_mask_from_names(c->has_bounding ? &c->bounding : &no_names, "bounding");
    effective = caps_mask_from_names(c->has_effective ? &c->effective : &no_names, "effective");
    permitted = caps_mask_from_names(c->has_permitted ? &c->permitted : &no_names, "permitted");
    inheritable =
        caps_mask_from_names(c->has_inheritable ? &c->inheritable : &no_names, "inheritable");
    ambient = caps_mask_from_names(c->has_ambient ? &c->ambient : &no_names, "ambient");
  }

  r = caps_get_current(&cur_effective, &cur_permitted, &cur_inheritable);
  if (r < 0)
    return fsrun_error_make(err, -r, "capget");
  static const char not_held[] = "is not held by the runtime on this host";
  effective = caps_restrict_to(effective, cur_permitted, "effective", not_held);
  permitted = caps_restrict_to(permitted, cur_permitted, "permitted", not_held);
  inheritable =
      caps_restrict_to(inheritable, cur_permitted | cur_inheritable, "inheritable", not_held);
  effective =
      caps_restrict_to(effective, permitted, "effective", "must also be listed in permitted");
  /* The kernel keeps an ambient capability only while it is both permitted and inheritable. */
  ambient = caps_restrict_to(ambient, permitted & inheritable, "ambient",
                             "must also be listed in permitted and inheritable");

  /* Bounding set first, while we still hold CAP_SETPCAP. */
  for (int cap = 0; cap <= last_cap; cap++) {
    if (cap < 64 && (bounding & cap_bit(cap)))
      continue;
    /* Drop first and ask only on failure: dropping a capability that is already gone succeeds
     * with CAP_SETPCAP, and without it the read tells whether there was anything to drop. */
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) {
      char name[64];
      return fsrun_error_errno(err, "process.capabilities.bounding: drop %s",
                               cap_display_name(cap, name));
    }
  }

  /* The id changes are raw syscalls, not libc's wrappers: this runs in a process cloned with a
   * bare clone3 from a runtime that may have threads (the sandbox's output reader). libc's
   * wrappers would then make every thread it knows of change ids too, and wait for threads that
   * are not in this process (seen: setgroups waiting forever for a reader thread that had not
   * started running when the clone was made). Here only this thread exists. */
  if (user != NULL) {
    /* Always called, even with no additionalGids, so the runtime's own groups do not leak in. */
    if (syscall(SYS_setgroups, (size_t)user->n_additional_gids,
                (const gid_t *)user->additional_gids) < 0) {
      int saved = errno;
      /* setgroups denied (or no /proc to ask): with nothing to set, there is nothing lost */
      if (saved == EPERM && user->n_additional_gids == 0)
        log_debug("process.user: setgroups is not permitted here, supplementary groups kept");
      else if (saved == EPERM && setgroups_denied())
        log_debug("process.user.additionalGids: setgroups is denied in this user namespace, "
                  "skipped");
      else
        return fsrun_error_make(err, saved, "process.user.additionalGids: setgroups");
    }
    if (syscall(SYS_setresgid, user->gid, user->gid, user->gid) < 0)
      return fsrun_error_errno(err, "process.user.gid: setresgid %" PRIu32, user->gid);
    /* Keep the permitted set across the switch to a non-zero uid; the sets are set right after. */
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
      return fsrun_error_errno(err, "prctl PR_SET_KEEPCAPS");
    if (syscall(SYS_setresuid, user->uid, user->uid, user->uid) < 0)
      return fsrun_error_errno(err, "process.user.uid: setresuid %" PRIu32, user->uid);
    if (user->has_umask)
      umask((mode_t)(user->umask & 07777));
  }

  /* Inheritable is set only when the spec lists some (never by default). */
  r = caps_set_current(effective, permitted, inheritable);
  if (r < 0)
    return fsrun_error_make(err, -r, "process.capabilities: capset");

  /* one call (libcap's cap_reset_ambient asks about every capability first); EINVAL: a kernel
   * without ambient capabilities (< 4.3) has nothing to clear */
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return fsrun_error_errno(err, "process.capabilities.ambient: clear");
  for (int cap = 0; ambient != 0 && cap < 64; cap++) {
    if (!(ambient & cap_bit(cap)))
      continue;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0) {
      char name[64];
      return fsrun_error_errno(err, "process.capabilities.ambient: raise %s",
                               cap_display_name(cap, name));
    }
  }

  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return fsrun_error_errno(err, "prctl PR_SET_KEEPCAPS");
  return 0;
}

int process_take_credentials(const oci_process *p, fsrun_error_t *err) {
  if (process_apply_user_and_caps(p, err) < 0)
    return -1;
  if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return fsrun_error_errno(err, "process.noNewPrivileges: prctl");
  return 0;
}

int process_become_userns_root(fsrun_error_t *err) {
  if (syscall(SYS_setresgid, 0, 0, 0) < 0 && errno != EINVAL)
    return fsrun_error_errno(err, "setresgid(0) in the user namespace");
  if (syscall(SYS_setresuid, 0, 0, 0) < 0 && errno != EINVAL)
    return fsrun_error_errno(err, "setresuid(0) in the user namespace");
  return 0;
}
