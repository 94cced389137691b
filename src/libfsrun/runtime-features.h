/* The runtime-spec features document (`fsrun features`). It claims only what this tree implements:
 * the claims come from the capability table in features.c, combined with what the host supports.
 * (Not named features.h: that would shadow glibc's <features.h> on the include path.) */
#ifndef FSRUN_RUNTIME_FEATURES_H
#define FSRUN_RUNTIME_FEATURES_H

#include <stdbool.h>

#include "error.h"
#include "oci.h"

typedef enum {
  FEATURE_HOOK,         /* hooks.<name> (hooks.c) */
  FEATURE_MOUNT_OPTION, /* mounts[].options entries (mounts.c) */
  FEATURE_NAMESPACE,    /* linux.namespaces[].type (namespaces.c) */
  FEATURE_CGROUP,       /* cgroup drivers: v1, v2, systemd, systemdUser, rdma (cgroup*.c) */
  FEATURE_SECCOMP_FLAG, /* linux.seccomp.flags entries (seccomp.c) */
  FEATURE_LINUX,        /* capabilities, seccomp, apparmor, selinux, intelRdt, idmap */
  FEATURE_ANNOTATION,   /* annotations fsrun acts on (run.fsrun.landlock, ...) */
} fsrun_feature_kind;

/* Whether the table marks NAME of KIND as implemented (unknown names: false). */
bool features_implemented(fsrun_feature_kind kind, const char *name);

/* Builds the features document for this build on this host. Free with oci_features_free. */
int features_build(const char *state_root, oci_features **out, fsrun_error_t *err);

/* "2.5.4": the libseccomp fsrun runs with (static buffer), NULL when unknown. */
const char *features_libseccomp_version(void);

/* features_build + oci_features_serialize (pretty); caller frees. */
char *features_json(const char *state_root, fsrun_error_t *err);

#endif
