/* Semantic validation of a parsed config.json (and of a Fusion sandbox policy): everything that
 * libocispec's shape checks cannot know, checked before anything is created. `fsrun validate` and
 * `create` run the same checks, so a bundle that validates only fails at create for reasons of the
 * host at that moment (permissions, races, kernel support). */
#ifndef FSRUN_VALIDATE_H
#define FSRUN_VALIDATE_H

#include <stdbool.h>

#include "context.h"
#include "error.h"
#include "oci.h"

struct validate_options {
  bool systemd_cgroup; /* --systemd-cgroup: linux.cgroupsPath must be slice:prefix:name */
  /* validate_bundle: the state root where create would look for the bundle's mark (bundle-mark.h);
   * NULL: none (the worktree annotation is ignored, as at create without the mark) */
  const struct fsrun_context *ctx;
};

/* Checks c as `create` will use it. bundle_dir (NULL = the current directory) resolves a relative
 * root.path. On failure *err is one line "config.json: <field path>: <problem>". Problems that do
 * not stop a container from running (a capability this kernel does not know) are logged as
 * warnings. */
int validate_config(const oci_config *c, const char *bundle_dir, fsrun_error_t *err);
int validate_config_with(const oci_config *c, const char *bundle_dir,
                         const struct validate_options *opts, fsrun_error_t *err);

/* Parses bundle_dir/config.json and validates it. *out (may be NULL) receives the config. */
int validate_bundle(const char *bundle_dir, const struct validate_options *opts, oci_config **out,
                    fsrun_error_t *err);

/* Checks a parsed Fusion policy: paths absolute and existing, limits positive. `what` names the
 * policy in messages ("policy.json: allowedPaths[0]: ..."). */
int validate_policy(const oci_policy *p, const char *what, fsrun_error_t *err);
/* Parses and validates a policy file (messages start with the path as given). */
int validate_policy_file(const char *path, oci_policy **out, fsrun_error_t *err);

#endif
