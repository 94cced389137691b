/* The mark of a bundle `fsrun bundle` wrote (bundle-mark.h).
 *
 * A record `<state root>/.bundle-marks/<DEV>-<INO>` (the config.json's identity, hex):
 *   fsrun-bundle-mark 1
 *   <sha256 of config.json's bytes, hex>
 *   <the bundle directory's device> <inode> (hex)
 *   <the bundle directory's absolute path>
 * The path is only for the clean-up of records whose bundle is gone (the Fusion adapter removes a
 * task's bundle after its delete, and its policy check writes one and removes it at once). */
#include "bundle-mark.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sandbox-git.h"
#include "sha256.h"
#include "state-root.h"
#include "status.h"
#include "utils.h"

#define MARK_MAGIC "fsrun-bundle-mark 1"
#define MARK_MAX   (8 * 1024)

struct mark {
  char digest[65];
  uint64_t dir_dev, dir_ino;
  char *path; /* points into the text it was parsed from */
};

static void mark_name(const struct stat *config, char name[BUNDLE_MARK_NAME_MAX]) {
  snprintf(name, BUNDLE_MARK_NAME_MAX, "%" PRIx64 "-%" PRIx64, (uint64_t)config->st_dev,
           (uint64_t)config->st_ino);
}

/* text's fields; false when it is no record of ours */
static bool mark_parse(char *text, struct mark *m) {
  int end = -1;
  if (sscanf(text, MARK_MAGIC "\n%64[0-9a-f]\n%" SCNx64 " %" SCNx64 "\n%n", m->digest, &m->dir_dev,
             &m->dir_ino, &end) != 3 ||
      end < 0 || strlen(m->digest) != 64)
    return false;
  m->path = text + end;
  m->path[strcspn(m->path, "\n")] = '\0';
  return m->path[0] == '/';
}

/* the records' directory: made (0700) when make; -1 when it or the root is missing, errno set */
static int marks_dir_open(const struct fsrun_context *ctx, bool make, fsrun_error_t *err) {
  cleanup_close int root = -1;
  struct stat st;
  int fd;
  if (make && !ctx->state_root_held && state_root_make(ctx->state_root, err) < 0)
    return fsrun_error_code(err);
  root = status_dir_root_open(ctx, err);
  if (root < 0)
    return fsrun_error_code(err);
  if (make && mkdirat(root, BUNDLE_MARK_DIR, 0700) < 0 && errno != EEXIST)
    return fsrun_error_errno(err, "create `%s/%s`", ctx->state_root, BUNDLE_MARK_DIR);
  fd = openat(root, BUNDLE_MARK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return fsrun_error_errno(err, "open `%s/%s`", ctx->state_root, BUNDLE_MARK_DIR);
  /* the root is the caller's alone; what is in it must be too */
  if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    close(fd);
    return fsrun_error_make(err, EPERM, "`%s/%s` is not the caller's own 0700 directory",
                            ctx->state_root, BUNDLE_MARK_DIR);
  }
  return fd;
}

/* a record whose bundle's config.json is gone (or another file now): no create will match it */
static bool mark_stale(int marks_fd, const char *name) {
  cleanup_free char *text = NULL;
  cleanup_free char *config = NULL;
  char now[BUNDLE_MARK_NAME_MAX];
  struct mark m;
  struct stat st;
  if (sandbox_git_read_max(marks_fd, name, MARK_MAX, &text) < 0)
    return errno != ENOENT;
  if (!mark_parse(text, &m))
    return true;
  config = xasprintf("%s/config.json", m.path);
  if (lstat(config, &st) < 0)
    return errno == ENOENT || errno == ENOTDIR;
  mark_name(&st, now);
  return strcmp(now, name) != 0;
}

static void remove_stale_marks(int marks_fd) {
  cleanup_close int list_fd = openat(marks_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *d = list_fd < 0 ? NULL : fdopendir(list_fd);
  struct dirent *e;
  if (d != NULL)
    list_fd = -1; /* the DIR owns it */
  while (d != NULL && (e = readdir(d)) != NULL)
    if (e->d_name[0] != '.' && mark_stale(marks_fd, e->d_name))
      unlinkat(marks_fd, e->d_name, 0);
}

int bundle_mark_write(const struct fsrun_context *ctx, const char *bundle, int bundle_dirfd,
                      int config_fd, const char *json, size_t len, fsrun_error_t *err) {
  cleanup_close int marks_fd = marks_dir_open(ctx, true, err);
  cleanup_free char *text = NULL;
  char name[BUNDLE_MARK_NAME_MAX], digest[65];
  struct stat config, dir;
  if (marks_fd < 0)
    return fsrun_error_wrap(err, "bundle: the bundle's mark");
  if (fstat(config_fd, &config) < 0 || fstat(bundle_dirfd, &dir) < 0)
    return fsrun_error_errno(err, "bundle: stat `%s`", bundle);
  remove_stale_marks(marks_fd);
  mark_name(&config, name);
  sha256_hex(json, len, digest);
  text = xasprintf(MARK_MAGIC "\n%s\n%" PRIx64 " %" PRIx64 "\n%s\n", digest, (uint64_t)dir.st_dev,
                   (uint64_t)dir.st_ino, bundle);
  if (status_write_file_atomic(marks_fd, name, text, strlen(text), 0600, err) < 0)
    return fsrun_error_wrap(err, "bundle: the bundle's mark in `%s`", ctx->state_root);
  return 0;
}

bool bundle_mark_find(const struct fsrun_context *ctx, const char *bundle, const char *json,
                      size_t len, char name[BUNDLE_MARK_NAME_MAX]) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_close int marks_fd = marks_dir_open(ctx, false, &err);
  cleanup_close int dir_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  char digest[65];
  struct stat dir, config;
  struct mark m;
  if (marks_fd < 0 || dir_fd < 0 || fstat(dir_fd, &dir) < 0 ||
      fstatat(dir_fd, "config.json", &config, AT_SYMLINK_NOFOLLOW) < 0)
    return false;
  mark_name(&config, name);
  if (sandbox_git_read_max(marks_fd, name, MARK_MAX, &text) < 0 || !mark_parse(text, &m))
    return false;
  sha256_hex(json, len, digest);
  return strcmp(digest, m.digest) == 0 && m.dir_dev == (uint64_t)dir.st_dev &&
         m.dir_ino == (uint64_t)dir.st_ino;
}

int bundle_mark_take(const struct fsrun_context *ctx, const char *name, int state_dirfd,
                     fsrun_error_t *err) {
  cleanup_close int marks_fd = marks_dir_open(ctx, false, err);
  if (marks_fd < 0)
    return fsrun_error_wrap(err, "the bundle's mark");
  /* a link: the record stays for the bundle's next create; ENOENT: a `fsrun bundle` removed it
   * since this create looked (its config.json went) */
  if (linkat(marks_fd, name, state_dirfd, BUNDLE_MARK_FILE, 0) < 0)
    return fsrun_error_errno(err, "keep the bundle's mark `%s/%s/%s`", ctx->state_root,
                             BUNDLE_MARK_DIR, name);
  return 0;
}

bool bundle_mark_held(int state_dirfd) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *text = NULL;
  cleanup_free char *config = NULL;
  char digest[65];
  size_t len = 0;
  struct mark m;
  if (sandbox_git_read_max(state_dirfd, BUNDLE_MARK_FILE, MARK_MAX, &text) < 0 ||
      !mark_parse(text, &m) ||
      read_file_at_nofollow(state_dirfd, STATUS_CONFIG_FILE, &config, &len, &err) < 0)
    return false;
  sha256_hex(config, len, digest);
  return strcmp(digest, m.digest) == 0;
}
