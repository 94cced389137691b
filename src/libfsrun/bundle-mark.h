/* The mark of a bundle `fsrun bundle` wrote (review21 L4's residue). `run.fsrun.sandbox.worktree`
 * makes fsrun's exec write a command's refs and objects into a host repository; the config's
 * binds and annotations, which `fsrun create` checks, are all things a podman, docker or CRI
 * caller can write (--annotation, -v). So `fsrun bundle` also leaves a record in the caller's
 * state root (0700, the caller's, held by fd), keyed by the config.json it wrote (device and
 * inode) and holding its bytes' digest and the bundle directory's identity; create honours the
 * annotation only when that record is there for that file with those bytes, and links it into the
 * container's state dir, where exec and delete look for it. A client's config (its own state root,
 * its own file), a copy of the config (another inode) and an edited one (other bytes) match no
 * record. */
#ifndef FSRUN_BUNDLE_MARK_H
#define FSRUN_BUNDLE_MARK_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "error.h"

/* the records' directory in the state root (dot-led: no container's id, `fsrun list` skips it) */
#define BUNDLE_MARK_DIR ".bundle-marks"
/* a task container's record, in its state dir (removed with it) */
#define BUNDLE_MARK_FILE "bundle-mark"
/* a record's name: the config.json's device and inode, in hex */
#define BUNDLE_MARK_NAME_MAX 40

/* `fsrun bundle`, once config.json (config_fd, json: its len bytes) is written in the directory
 * bundle_dirfd (bundle: its absolute path): the record, in ctx's state root (made if missing).
 * Removes first the records whose config.json is gone (bundles removed since). */
int bundle_mark_write(const struct fsrun_context *ctx, const char *bundle, int bundle_dirfd,
                      int config_fd, const char *json, size_t len, fsrun_error_t *err);

/* create: whether ctx's state root holds the record of bundle/config.json (bundle absolute) with
 * the digest of json (the bytes create parsed) and bundle's identity; its name into name. The
 * record stays while the config.json does: every create of the bundle finds it. */
bool bundle_mark_find(const struct fsrun_context *ctx, const char *bundle, const char *json,
                      size_t len, char name[BUNDLE_MARK_NAME_MAX]);

/* create, once the container's state dir holds its config: a link to the record there (removed
 * with the state dir at delete) */
int bundle_mark_take(const struct fsrun_context *ctx, const char *name, int state_dirfd,
                     fsrun_error_t *err);

/* exec, delete: whether the state dir holds a record whose digest is the kept config's */
bool bundle_mark_held(int state_dirfd);

#endif
