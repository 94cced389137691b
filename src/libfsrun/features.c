/* `fsrun features`: what this runtime can do, for clients that adapt to the runtime (containerd,
 * Kubernetes, ...). A client trusts this document, so it must never claim a feature the tree does
 * not implement: everything claimed comes from the table below, intersected with what the host
 * supports. */
#include "runtime-features.h"
#include "fsrun-commit.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind-identity.h"
#include "cgroup.h"
#include "criu.h"
#include "landlock.h"
#include "process-attrs.h"
#include "root-links.h"
#include "utils.h"
#include <libseccomp.h>

/* -----------------------------------------------------------------------------------------------
 * THE CAPABILITY TABLE. One row per feature the features document can claim.
 *
 * Flip `implemented` to true in the same change that lands the feature and its integration test,
 * and never before: `fsrun features` lists exactly the rows marked true (for namespaces, hooks,
 * mount options and seccomp flags), and reports the FEATURE_LINUX / FEATURE_CGROUP rows as the
 * "enabled" booleans (AND-ed with what the host supports, where that can be probed).
 * ---------------------------------------------------------------------------------------------- */
static const struct feature_row {
  fsrun_feature_kind kind;
  const char *name;
  bool implemented;
} feature_table[] = {
    /* hooks (hooks.c) */
    {FEATURE_HOOK, "prestart", true},
    {FEATURE_HOOK, "createRuntime", true},
    {FEATURE_HOOK, "createContainer", true},
    {FEATURE_HOOK, "startContainer", true},
    {FEATURE_HOOK, "poststart", true},
    {FEATURE_HOOK, "poststop", true},

    /* namespaces (namespaces.c) */
    {FEATURE_NAMESPACE, "cgroup", true},
    {FEATURE_NAMESPACE, "ipc", true},
    {FEATURE_NAMESPACE, "mount", true},
    {FEATURE_NAMESPACE, "network", true},
    {FEATURE_NAMESPACE, "pid", true},
    {FEATURE_NAMESPACE, "time", true},
    {FEATURE_NAMESPACE, "user", true},
    {FEATURE_NAMESPACE, "uts", true},

    /* cgroup drivers (cgroup.c, cgroup-v1.c, cgroup-v2.c, cgroup-systemd.c) */
    {FEATURE_CGROUP, "v1", true}, /* legacy and hybrid hosts */
    {FEATURE_CGROUP, "v2", true},
    /* --systemd-cgroup: a transient scope through systemd's D-Bus API when systemd runs (the
     * cgroupfs mapping otherwise); not root of the host, through the user's own manager
     * (systemd-user.bats drives a real `systemd --user` in the VM) */
    {FEATURE_CGROUP, "systemd", true},
    {FEATURE_CGROUP, "systemdUser", true},
    {FEATURE_CGROUP, "rdma", true}, /* rdma.max, the same file on v1 and v2 */

    /* Linux features (FEATURE_LINUX):
     * capabilities: caps.c applies process.capabilities; the list is then every capability the
     *               running kernel knows (/proc/sys/kernel/cap_last_cap, names from libcap);
     * seccomp:      seccomp.c; actions/operators/archs are what the linked libseccomp supports;
     * apparmor, selinux: process.apparmorProfile / selinuxLabel applied (process-attrs.c), and
     *               reported enabled only where that LSM is active (its probe there);
     * intelRdt:     linux.intelRdt applied through resctrl, enabled where resctrl is mounted;
     * idmap:        idmapped mounts (mounts[].uidMappings, the "idmap" option);
     * netDevices:   linux.netDevices moved into the container's netns (netlink.c). */
    {FEATURE_LINUX, "capabilities", true},
    {FEATURE_LINUX, "seccomp", true},
    {FEATURE_LINUX, "apparmor", true},
    {FEATURE_LINUX, "selinux", true},
    {FEATURE_LINUX, "intelRdt", true},
    {FEATURE_LINUX, "idmap", true},
    {FEATURE_LINUX, "netDevices", true},

    /* linux.seccomp.flags (seccomp.c); "supportedFlags" also needs the running kernel's support */
    {FEATURE_SECCOMP_FLAG, "SECCOMP_FILTER_FLAG_TSYNC", true},
    {FEATURE_SECCOMP_FLAG, "SECCOMP_FILTER_FLAG_LOG", true},
    {FEATURE_SECCOMP_FLAG, "SECCOMP_FILTER_FLAG_SPEC_ALLOW", true},
    {FEATURE_SECCOMP_FLAG, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", true},

    /* annotations fsrun acts on (reported under "annotations" with a value) */
    {FEATURE_ANNOTATION, "run.fsrun.landlock", true},
    {FEATURE_ANNOTATION, "run.fsrun.init", true},
    {FEATURE_ANNOTATION, CGROUP_V1_ANNOTATION, true},
    {FEATURE_ANNOTATION, BIND_CHECKS_ANNOTATION_PREFIX "N", true},
    {FEATURE_ANNOTATION, ROOT_LINKS_ANNOTATION, true},
    /* not an annotation fsrun acts on: the criu that checkpoint/restore drive (criu.c) */
    {FEATURE_ANNOTATION, "org.fsrun.checkpoint", true},
    {FEATURE_ANNOTATION, "org.fsrun.checkpoint.lazy-pages", true},

    /* mount options (mounts.c): mount(8) flags, their recursive "r" forms (mount_setattr),
     * propagation, and the OCI runtimes' extensions (tmpcopyup, idmap) */
    {FEATURE_MOUNT_OPTION, "async", true},
    {FEATURE_MOUNT_OPTION, "atime", true},
    {FEATURE_MOUNT_OPTION, "bind", true},
    {FEATURE_MOUNT_OPTION, "defaults", true},
    {FEATURE_MOUNT_OPTION, "dev", true},
    {FEATURE_MOUNT_OPTION, "diratime", true},
    {FEATURE_MOUNT_OPTION, "dirsync", true},
    {FEATURE_MOUNT_OPTION, "exec", true},
    {FEATURE_MOUNT_OPTION, "idmap", true},
    {FEATURE_MOUNT_OPTION, "iversion", true},
    {FEATURE_MOUNT_OPTION, "lazytime", true},
    {FEATURE_MOUNT_OPTION, "loud", true},
    {FEATURE_MOUNT_OPTION, "mand", true},
    {FEATURE_MOUNT_OPTION, "noatime", true},
    {FEATURE_MOUNT_OPTION, "nodev", true},
    {FEATURE_MOUNT_OPTION, "nodiratime", true},
    {FEATURE_MOUNT_OPTION, "noexec", true},
    {FEATURE_MOUNT_OPTION, "noiversion", true},
    {FEATURE_MOUNT_OPTION, "nolazytime", true},
    {FEATURE_MOUNT_OPTION, "nomand", true},
    {FEATURE_MOUNT_OPTION, "norelatime", true},
    {FEATURE_MOUNT_OPTION, "nostrictatime", true},
    {FEATURE_MOUNT_OPTION, "nosuid", true},
    {FEATURE_MOUNT_OPTION, "nosymfollow", true},
    {FEATURE_MOUNT_OPTION, "private", true},
    {FEATURE_MOUNT_OPTION, "ratime", true},
    {FEATURE_MOUNT_OPTION, "rbind", true},
    {FEATURE_MOUNT_OPTION, "rdev", true},
    {FEATURE_MOUNT_OPTION, "rdiratime", true},
    {FEATURE_MOUNT_OPTION, "relatime", true},
    {FEATURE_MOUNT_OPTION, "remount", true},
    {FEATURE_MOUNT_OPTION, "rexec", true},
    {FEATURE_MOUNT_OPTION, "ridmap", true},
    {FEATURE_MOUNT_OPTION, "rnoatime", true},
    {FEATURE_MOUNT_OPTION, "rnodev", true},
    {FEATURE_MOUNT_OPTION, "rnodiratime", true},
    {FEATURE_MOUNT_OPTION, "rnoexec", true},
    {FEATURE_MOUNT_OPTION, "rnorelatime", true},
    {FEATURE_MOUNT_OPTION, "rnostrictatime", true},
    {FEATURE_MOUNT_OPTION, "rnosuid", true},
    {FEATURE_MOUNT_OPTION, "rnosymfollow", true},
    {FEATURE_MOUNT_OPTION, "ro", true},
    {FEATURE_MOUNT_OPTION, "rprivate", true},
    {FEATURE_MOUNT_OPTION, "rrelatime", true},
    {FEATURE_MOUNT_OPTION, "rro", true},
    {FEATURE_MOUNT_OPTION, "rrw", true},
    {FEATURE_MOUNT_OPTION, "rshared", true},
    {FEATURE_MOUNT_OPTION, "rslave", true},
    {FEATURE_MOUNT_OPTION, "rstrictatime", true},
    {FEATURE_MOUNT_OPTION, "rsuid", true},
    {FEATURE_MOUNT_OPTION, "rsymfollow", true},
    {FEATURE_MOUNT_OPTION, "runbindable", true},
    {FEATURE_MOUNT_OPTION, "rw", true},
    {FEATURE_MOUNT_OPTION, "shared", true},
    {FEATURE_MOUNT_OPTION, "silent", true},
    {FEATURE_MOUNT_OPTION, "slave", true},
    {FEATURE_MOUNT_OPTION, "strictatime", true},
    {FEATURE_MOUNT_OPTION, "suid", true},
    {FEATURE_MOUNT_OPTION, "symfollow", true},
    {FEATURE_MOUNT_OPTION, "sync", true},
    {FEATURE_MOUNT_OPTION, "tmpcopyup", true},
    {FEATURE_MOUNT_OPTION, "unbindable", true},
};

#define FEATURE_TABLE_LEN (sizeof(feature_table) / sizeof(feature_table[0]))

bool features_implemented(fsrun_feature_kind kind, const char *name) {
  for (size_t i = 0; i < FEATURE_TABLE_LEN; i++)
    if (feature_table[i].kind == kind && strcmp(feature_table[i].name, name) == 0)
      return feature_table[i].implemented;
  return false;
}

static void push_implemented(oci_strv *v, fsrun_feature_kind kind) {
  for (size_t i = 0; i < FEATURE_TABLE_LEN; i++)
    if (feature_table[i].kind == kind && feature_table[i].implemented)
      oci_strv_push(v, feature_table[i].name);
}

/* Every capability the running kernel knows, as "CAP_CHOWN", ... */
static void push_kernel_capabilities(oci_strv *v) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *text = NULL;
  int last;

  if (read_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", &text, NULL, &err) < 0 ||
      sscanf(text, "%d", &last) != 1)
    last = (int)cap_max_bits() - 1;
  for (int cap = 0; cap <= last; cap++) {
    char *name = cap_to_name((cap_value_t)cap);
    char upper[64];
    size_t i;
    if (name == NULL)
      continue;
    /* libcap prints capabilities newer than itself as bare numbers: no name to offer */
    if (strncmp(name, "cap_", 4) == 0) {
      for (i = 0; name[i] && i < sizeof(upper) - 1; i++)
        upper[i] = (char)toupper((unsigned char)name[i]);
      upper[i] = '\0';
      oci_strv_push(v, upper);
    }
    cap_free(name);
  }
}

static void push_seccomp_support(oci_features *f) {
  static const char *const operators[] = {"SCMP_CMP_NE",       "SCMP_CMP_LT", "SCMP_CMP_LE",
                                          "SCMP_CMP_EQ",       "SCMP_CMP_GE", "SCMP_CMP_GT",
                                          "SCMP_CMP_MASKED_EQ"};
  static const char *const archs[] = {
      "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
      "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
      "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
      "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
      "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64"};
  /* ARCH names are given to libseccomp without the prefix, lower case */
  static const char *const arch_lib_names[] = {
      "x86",       "x86_64", "x32",      "arm",         "aarch64", "mips",  "mips64",
      "mips64n32", "mipsel", "mipsel64", "mipsel64n32", "ppc",     "ppc64", "ppc64le",
      "s390",      "s390x",  "parisc",   "parisc64",    "riscv64"};
  static const struct {
    const char *name;
    unsigned int min_api; /* libseccomp API level that supports the action */
  } actions[] = {
      {"SCMP_ACT_KILL", 1},         {"SCMP_ACT_KILL_THREAD", 1}, {"SCMP_ACT_TRAP", 1},
      {"SCMP_ACT_ERRNO", 1},        {"SCMP_ACT_TRACE", 1},       {"SCMP_ACT_ALLOW", 1},
      {"SCMP_ACT_KILL_PROCESS", 3}, {"SCMP_ACT_LOG", 3},         {"SCMP_ACT_NOTIFY", 5},
  };
  static const struct {
    const char *name;
    unsigned long value;
  } flags[] = {
      {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
      {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
      {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
      {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", 1UL << 5},
  };
  unsigned int api = seccomp_api_get();

  for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
    if (api >= actions[i].min_api)
      oci_strv_push(&f->seccomp_actions, actions[i].name);
  for (size_t i = 0; i < sizeof(operators) / sizeof(operators[0]); i++)
    oci_strv_push(&f->seccomp_operators, operators[i]);
  for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
    if (seccomp_arch_resolve_name(arch_lib_names[i]) != 0)
      oci_strv_push(&f->seccomp_archs, archs[i]);
  for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
    if (!features_implemented(FEATURE_SECCOMP_FLAG, flags[i].name))
      continue;
    oci_strv_push(&f->seccomp_known_flags, flags[i].name);
    /* A kernel that knows the flag gets as far as reading the (NULL) program: EFAULT. Unknown
     * flags fail with EINVAL before that. Nothing is installed either way. WAIT_KILLABLE_RECV is
     * only valid with a listener, so it is probed together with NEW_LISTENER (as seccomp.c
     * uses it). */
    unsigned long probe = flags[i].value;
    if (probe == (1UL << 5))
      probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, probe, NULL) < 0 && errno == EFAULT)
      oci_strv_push(&f->seccomp_supported_flags, flags[i].name);
  }
}

/* oci_map_set only fails for lack of memory; like xmalloc0, treat that as fatal */
static void annotate(oci_features *f, const char *key, const char *value) {
  if (oci_map_set(&f->annotations, key, value) < 0)
    abort();
}

const char *features_libseccomp_version(void) {
  static char text[48];
  const struct scmp_version *sv = seccomp_version();
  if (sv == NULL)
    return NULL;
  snprintf(text, sizeof(text), "%u.%u.%u", sv->major, sv->minor, sv->micro);
  return text;
}

int features_build(const char *state_root, oci_features **out, fsrun_error_t *err) {
  oci_features *f = xmalloc0(sizeof(*f));
  const char *libseccomp_version = features_libseccomp_version();
  cleanup_free char *criu = NULL;

  f->oci_version_min = xstrdup("1.0.0");
  f->oci_version_max = xstrdup(OCI_VERSION);
  push_implemented(&f->hooks, FEATURE_HOOK);
  push_implemented(&f->mount_options, FEATURE_MOUNT_OPTION);
  push_implemented(&f->namespaces, FEATURE_NAMESPACE);
  if (features_implemented(FEATURE_LINUX, "capabilities"))
    push_kernel_capabilities(&f->capabilities);

  f->cgroup_v1 = features_implemented(FEATURE_CGROUP, "v1");
  f->cgroup_v2 = features_implemented(FEATURE_CGROUP, "v2");
  f->cgroup_systemd = features_implemented(FEATURE_CGROUP, "systemd");
  f->cgroup_systemd_user = features_implemented(FEATURE_CGROUP, "systemdUser");
  f->cgroup_rdma = features_implemented(FEATURE_CGROUP, "rdma");

  f->seccomp_enabled = features_implemented(FEATURE_LINUX, "seccomp");
  if (f->seccomp_enabled)
    push_seccomp_support(f);

  /* the host probes are the owning modules' own, the ones that refuse a config on this host */
  f->apparmor_enabled = features_implemented(FEATURE_LINUX, "apparmor") && lsm_apparmor_enabled();
  f->selinux_enabled = features_implemented(FEATURE_LINUX, "selinux") && lsm_selinux_enabled();
  f->intel_rdt_enabled = features_implemented(FEATURE_LINUX, "intelRdt") && intelrdt_available();
  f->idmap_enabled = features_implemented(FEATURE_LINUX, "idmap");
  f->net_devices_enabled = features_implemented(FEATURE_LINUX, "netDevices");

  if (libseccomp_version != NULL)
    annotate(f, "io.github.seccomp.libseccomp.version", libseccomp_version);
  annotate(f, "org.fsrun.version", PACKAGE_VERSION);
  annotate(f, "org.fsrun.commit", FSRUN_COMMIT);
  if (features_implemented(FEATURE_ANNOTATION, "run.fsrun.landlock")) {
    /* the Landlock ABI version of the running kernel, "0" when it has none */
    cleanup_free char *abi = xasprintf("%d", landlock_abi_version());
    annotate(f, "run.fsrun.landlock", abi);
  }
  /* "true" runs the process under a small init of fsrun's as pid 1 (reaper.h) */
  if (features_implemented(FEATURE_ANNOTATION, "run.fsrun.init"))
    annotate(f, "run.fsrun.init", "true|false");
  /* the v1 hierarchies a container's cgroup is made in (cgroup.h) */
  if (features_implemented(FEATURE_ANNOTATION, CGROUP_V1_ANNOTATION))
    annotate(f, CGROUP_V1_ANNOTATION, "CONTROLLER[,CONTROLLER...]");
  /* a bind's checks, as `fsrun bundle` writes them (bind-identity.h): the keys of its object */
  if (features_implemented(FEATURE_ANNOTATION, BIND_CHECKS_ANNOTATION_PREFIX "N"))
    annotate(f, BIND_CHECKS_ANNOTATION_PREFIX "N",
             "{destination, sourceId, destinationNoSymlinks, covers, overlayView}");
  /* links at the top of a root the config mounts a tmpfs onto (root-links.h) */
  if (features_implemented(FEATURE_ANNOTATION, ROOT_LINKS_ANNOTATION))
    annotate(f, ROOT_LINKS_ANNOTATION, "NAME=TARGET[,NAME=TARGET...]");
  /* checkpoint and restore: the criu they drive, only when `criu check` passes on this kernel */
  if (features_implemented(FEATURE_ANNOTATION, "org.fsrun.checkpoint") &&
      (criu = criu_usable(state_root)) != NULL)
    annotate(f, "org.fsrun.checkpoint", criu);
  /* --lazy-pages: criu can fault a restored process's memory in here (userfaultfd) */
  if (criu != NULL && features_implemented(FEATURE_ANNOTATION, "org.fsrun.checkpoint.lazy-pages") &&
      criu_lazy_pages_usable(state_root, criu))
    annotate(f, "org.fsrun.checkpoint.lazy-pages", "true");
  *out = f;
  return 0;
}

char *features_json(const char *state_root, fsrun_error_t *err) {
  oci_features *f = NULL;
  char *json, *json_err = NULL;
  if (features_build(state_root, &f, err) < 0)
    return NULL;
  json = oci_features_serialize(f, true, &json_err);
  oci_features_free(f);
  if (json == NULL)
    fsrun_error_take(err, 0, json_err);
  return json;
}
