/* After a `fsrun sandbox` run: what the command wrote into the overlay over the git common dir (its
 * upper dir) is applied to the real repository through an allowlist, by fsrun with the caller's own
 * credentials, every path opened beneath a directory fd without following a symlink:
 *  - new loose objects whose content hashes to their names, never a pack (sandbox-git-objects.c;
 *    an existing object is never overwritten nor deleted);
 *  - the checked-out branch and refs/stash: a 40/64-hex id of an object the repository has, written
 *    with git's lock-file + rename protocol, refused when the host's ref moved meanwhile, and their
 *    reflogs; the stash only by appending, and never from a linked worktree (sandbox-git-stash.c);
 *  - the task worktree's own admin files (index, HEAD, ORIG_HEAD, logs/HEAD, ...; the index only
 *    when git can be handed it, sandbox-git-index-sync.c), never commondir,
 *    gitdir, config.worktree, nor the rebase/sequencer todo lists (they can hold `exec` lines).
 * Everything else is discarded and reported. */
#include "sandbox-git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "openat2-compat.h"
#include "remove-tree.h"
#include "utils.h"

#define SYNC_MAX_DEPTH   16
#define SYNC_MAX_ENTRIES 200000
#define SYNC_MAX_TEXT    (64u * 1024 * 1024)
/* what a run may write as an admin file (git's are a few KiB) or add to a reflog: a sparse file
 * costs the run nothing, and would be written out in full on the host's disk */
#define SYNC_MAX_NEW_TEXT (1024u * 1024)

/* --- fd-based paths ------------------------------------------------------------------------- */

/* O_NONBLOCK: what the command leaves may be a fifo, whose open would wait for a writer forever
 * (every process of the sandbox is dead by the sync); callers check S_ISREG after the open */
int sandbox_git_open_beneath(int dirfd, const char *path, int flags, mode_t mode) {
  int nonblock = (flags & O_PATH) ? 0 : O_NONBLOCK;
  struct open_how how = {.flags = (uint64_t)(flags | nonblock | O_CLOEXEC | O_NOFOLLOW),
                         .mode = (flags & O_CREAT) ? mode : 0,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  return (int)openat2_compat(dirfd, path, &how);
}

int sandbox_git_read_whole(int dirfd, const char *path, uint64_t max, char **out, size_t *len) {
  cleanup_close int fd = sandbox_git_open_beneath(dirfd, path, O_RDONLY, 0);
  cleanup_free char *text = NULL;
  struct stat st;
  *out = NULL;
  if (fd < 0 || fstat(fd, &st) < 0)
    return -1;
  if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
    errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
    return -1;
  }
  text = xmalloc0((size_t)st.st_size + 1);
  if (safe_read_all(fd, text, (size_t)st.st_size) != (ssize_t)st.st_size)
    return -1;
  *len = (size_t)st.st_size;
  *out = steal_ptr(&text);
  return 0;
}

int sandbox_git_read_max(int dirfd, const char *path, uint64_t max, char **out) {
  size_t len;
  return sandbox_git_read_whole(dirfd, path, max, out, &len);
}

int sandbox_git_read_nofollow(int dirfd, const char *path, char **out) {
  return sandbox_git_read_max(dirfd, path, SYNC_MAX_TEXT, out);
}

/* room for n items and the NULL after them: a power of two, so that n pushes copy O(n) pointers
 * (one realloc per push made an index of 100,000 gitlinks quadratic where realloc moves) */
static size_t strv_room(size_t n) {
  size_t room = 4;
  while (room < n + 1)
    room *= 2;
  return room;
}

void sandbox_git_strv_push(char ***v, size_t *n, const char *s) {
  char **items = *v;
  if (items == NULL || strv_room(*n) != strv_room(*n + 1))
    items = realloc(items, sizeof(char *) * strv_room(*n + 1));
  if (items == NULL)
    abort();
  items[(*n)++] = xstrdup(s);
  items[*n] = NULL;
  *v = items;
}

void sandbox_git_strv_free(char **v) {
  for (char **p = v; p != NULL && *p != NULL; p++)
    free(*p);
  free(v);
}

/* --- the per-run dir ------------------------------------------------------------------------ */

/* As root, on a state root that is not a tmpfs, the per-run dir is a tmpfs of its own: its content
 * is read once after the run and thrown away, and on a disk the directories overlayfs makes and
 * their removal cost journal work and, with `discard`, a synchronous discard each (measured on
 * ext4: ~15 ms of wall time per run). Best effort: a plain directory when the mount is refused. */
static void mount_run_tmpfs(const char *dir) {
  struct statfs sf;
  if (geteuid() != 0 || statfs(dir, &sf) < 0 || sf.f_type == TMPFS_MAGIC)
    return;
  (void)mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700");
}

/* the tmpfs of mount_run_tmpfs, if there is one (EINVAL where dir is no mount point) */
static void umount_run_tmpfs(const char *dir) {
  if (geteuid() == 0)
    (void)umount2(dir, MNT_DETACH | UMOUNT_NOFOLLOW);
}

int sandbox_git_make_run_dir(struct sandbox_git_run *g, const char *state_root, const char *id,
                             fsrun_error_t *err) {
  cleanup_close int fd = -1;
  g->run_dir = sandbox_git_shm_claim(state_root, id);
  if (g->run_dir == NULL) {
    g->run_dir = xasprintf("%s/" SANDBOX_GIT_RUN_DIR_PREFIX "%s", state_root, id);
    if (mkdir(g->run_dir, 0700) < 0)
      return fsrun_error_errno(err, "sandbox: git: create `%s`", g->run_dir);
    mount_run_tmpfs(g->run_dir);
  }
  fd = open(g->run_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || mkdirat(fd, "upper", 0700) < 0 || mkdirat(fd, "work", 0700) < 0) {
    fsrun_error_errno(err, "sandbox: git: create `%s/upper`", g->run_dir);
    sandbox_git_remove_run_dir(g);
    return fsrun_error_code(err);
  }
  return 0;
}

void sandbox_git_remove_run_dir(struct sandbox_git_run *g) {
  umount_run_tmpfs(g->run_dir);
  remove_tree_at(AT_FDCWD, g->run_dir, SYNC_MAX_DEPTH * 2);
}

void sandbox_git_remove_leftover(const char *state_root, const char *id) {
  cleanup_free char *dir = xasprintf("%s/" SANDBOX_GIT_RUN_DIR_PREFIX "%s", state_root, id);
  cleanup_free char *shm = sandbox_git_shm_run_dir(state_root, id);
  struct stat st;
  umount_run_tmpfs(dir);
  remove_tree_at(AT_FDCWD, dir, SYNC_MAX_DEPTH * 2);
  /* only a directory of ours: the name may be another user's (sandbox-git-shm.c) */
  if (shm != NULL && lstat(shm, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
    remove_tree_at(AT_FDCWD, shm, SYNC_MAX_DEPTH * 2);
}

/* --- the run's files, read once --------------------------------------------------------- */

/* A text file of the upper dir, whole, into memory: it is checked and written from there, so that a
 * process the command left behind (a task container's exec) cannot change it in between. -1 with
 * errno EFBIG (above max), EILSEQ (a NUL: not git's text), or the open's. */
static int read_run_text(int dirfd, const char *path, uint64_t max, char **out, size_t *len) {
  if (sandbox_git_read_whole(dirfd, path, max, out, len) < 0)
    return -1;
  if (memchr(*out, '\0', *len) != NULL) {
    free(steal_ptr(out));
    errno = EILSEQ;
    return -1;
  }
  return 0;
}

int sandbox_git_write_new(int dir, const char *name, const void *data, size_t len, mode_t mode) {
  cleanup_free char *tmp = xasprintf(".fsrun-sync.%d.%s", (int)getpid(), name);
  cleanup_close int fd =
      openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return -1;
  if (safe_write_all(fd, data, len) < 0 || renameat(dir, tmp, dir, name) < 0) {
    int saved = errno;
    unlinkat(dir, tmp, 0);
    errno = saved;
    return -1;
  }
  return 0;
}

/* the permission bits of the host's dir/name, git's 0644 when there is none: never the run's */
static mode_t host_mode(int dir, const char *name) {
  struct stat st;
  if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
    return st.st_mode & 0666;
  return 0644;
}

struct sync {
  struct sandbox_git_run *g;
  int upper, common;
  size_t entries;
  bool objects_complete; /* every loose object the run wrote was adopted */
  char **discarded;
  size_t n_discarded;
  struct room_left room; /* the list's bounds, less the two slots of its standing entries */
  bool cut;              /* an entry was left out */
};

static void discard(struct sync *s, const char *rel) {
  if (sandbox_git_room_take(&s->room, rel))
    sandbox_git_strv_push(&s->discarded, &s->n_discarded, rel);
  else
    s->cut = true;
}

/* a list that left anything out says so, first (SANDBOX_GIT_DISCARDED_MORE) */
static void say_cut(struct sync *s) {
  char **v = NULL;
  size_t n = 0;
  if (!s->cut)
    return;
  sandbox_git_strv_push(&v, &n, SANDBOX_GIT_DISCARDED_MORE);
  for (size_t i = 0; i < s->n_discarded; i++)
    sandbox_git_strv_push(&v, &n, s->discarded[i]);
  sandbox_git_strv_free(s->discarded);
  s->discarded = v;
  s->n_discarded = n;
}

/* --- objects (sandbox-git-objects.c) ------------------------------------------------------- */

static void discard_cb(void *arg, const char *rel) {
  discard(arg, rel);
}

/* not every object of the run landed: `objects/` is reported, in a slot of its own however full
 * the list is (past the walk's cap nothing else says so) */
static void sync_objects(struct sync *s) {
  s->objects_complete = sandbox_git_sync_objects(s->upper, s->common, discard_cb, s);
  if (!s->objects_complete)
    sandbox_git_strv_push(&s->discarded, &s->n_discarded, "objects/");
}

/* a ref, HEAD or the index may name what the run made only when all of it landed: a commit whose
 * tree or parents are missing breaks every git command on the host ("bad tree object HEAD") */
static bool objects_refused(const struct sync *s, const char *what) {
  if (s->objects_complete)
    return false;
  log_warning("sandbox: git: %s: not applied, as some of the run's objects were not (see "
              "`objects/`)",
              what);
  return true;
}

/* --- refs ----------------------------------------------------------------------------------- */

/* the directory of rel in the common dir, made when missing; *base: rel's last component */
static int open_parent(int common, const char *rel, const char **base) {
  cleanup_error fsrun_error_t err = NULL;
  cleanup_free char *dir = xstrdup(rel);
  char *slash = strrchr(dir, '/');
  *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
  if (slash == NULL)
    return fcntl(common, F_DUPFD_CLOEXEC, 3);
  *slash = '\0';
  if (mkdir_p_at(common, dir, 0755, &err) < 0)
    return -1;
  return sandbox_git_open_beneath(common, dir, O_PATH | O_DIRECTORY, 0);
}

static bool is_whiteout(int dirfd, const char *rel) {
  struct stat st;
  return fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
         st.st_rdev == makedev(0, 0);
}

/* git's protocol: REF.lock made exclusively, the value checked against the run's start, renamed */
static bool update_ref(struct sync *s, const struct sandbox_git_ref *r, const char *value) {
  const char *base;
  cleanup_close int dir = open_parent(s->common, r->name, &base);
  cleanup_free char *lock = xasprintf("%s.lock", base);
  cleanup_free char *now = NULL;
  cleanup_free char *line = xasprintf("%s\n", value);
  cleanup_close int fd = -1;
  if (dir < 0 ||
      (fd = openat(dir, lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
    log_warning("sandbox: git: %s: cannot lock it (%s); the sandbox's %s is not applied", r->name,
                strerror(errno), value);
    return false;
  }
  now = sandbox_git_ref_value(s->common, r->name);
  if (strcmp(now, r->before) != 0) {
    unlinkat(dir, lock, 0);
    log_warning("sandbox: git: %s moved on the host during the run (%s to %s); the sandbox's %s is "
                "not applied",
                r->name, r->before[0] ? r->before : "none", now[0] ? now : "none", value);
    return false;
  }
  if (safe_write_all(fd, line, strlen(line)) < 0 || renameat(dir, lock, dir, base) < 0) {
    log_warning("sandbox: git: update %s: %s", r->name, strerror(errno));
    unlinkat(dir, lock, 0);
    return false;
  }
  return true;
}

/* the run's reflog of r (NULL when it has none of its own) at most SYNC_MAX_NEW_TEXT longer than
 * the host's was at the start; a larger one, or not text, is reported */
static char *read_run_reflog(struct sync *s, const struct sandbox_git_ref *r) {
  cleanup_free char *rel = xasprintf("logs/%s", r->name);
  uint64_t max = (uint64_t)(r->log_size < 0 ? 0 : r->log_size) + SYNC_MAX_NEW_TEXT;
  char *mine = NULL;
  size_t len;
  if (read_run_text(s->upper, rel, max, &mine, &len) < 0 && (errno == EFBIG || errno == EILSEQ))
    discard(s, rel);
  return mine;
}

/* the run's reflog mine (as read once and checked): what the run appended is appended; a rewritten
 * one (`git stash drop`) replaces the host's when that did not change meanwhile */
static void sync_reflog(struct sync *s, const struct sandbox_git_ref *r, const char *mine) {
  cleanup_free char *rel = xasprintf("logs/%s", r->name);
  cleanup_free char *host = NULL;
  cleanup_close int dir = -1;
  cleanup_close int out = -1;
  const char *base;
  size_t mine_len = strlen(mine), host_len;
  if (sandbox_git_read_nofollow(s->common, rel, &host) < 0)
    host = xstrdup("");
  host_len = strlen(host);
  if ((int64_t)host_len != (r->log_size < 0 ? 0 : r->log_size)) {
    log_warning("sandbox: git: %s changed on the host during the run; the sandbox's is not applied",
                rel);
    return;
  }
  dir = open_parent(s->common, rel, &base);
  if (dir >= 0 && r->log_size >= 0 && mine_len >= host_len && memcmp(mine, host, host_len) == 0) {
    out = openat(dir, base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (out < 0 || safe_write_all(out, mine + host_len, mine_len - host_len) < 0)
      log_warning("sandbox: git: append to %s: %s", rel, strerror(errno));
    return;
  }
  if (dir < 0 || sandbox_git_write_new(dir, base, mine, mine_len, host_mode(dir, base)) < 0)
    log_warning("sandbox: git: replace %s: %s", rel, strerror(errno));
}

/* the run's reflog of r and the host's, "" when missing; false when the host's changed since the
 * start (its size then differs) */
static bool read_reflogs(struct sync *s, const struct sandbox_git_ref *r, char **mine,
                         char **host) {
  cleanup_free char *rel = xasprintf("logs/%s", r->name);
  *mine = read_run_reflog(s, r);
  if (sandbox_git_read_nofollow(s->common, rel, host) < 0)
    *host = xstrdup("");
  return (int64_t)strlen(*host) == (r->log_size < 0 ? 0 : r->log_size);
}

/* refs/stash (sandbox-git-stash.c): applied only when the run pushed on top of the host's entries
 * in a main checkout; anything else the run did to it is reported */
static void sync_stash(struct sync *s, const struct sandbox_git_ref *r, const char *value) {
  cleanup_free char *mine = NULL;
  cleanup_free char *host = NULL;
  bool log_same, host_same = read_reflogs(s, r, &mine, &host);
  bool moved = strcmp(value != NULL ? value : "", r->before) != 0;
  log_same = mine == NULL ? !is_whiteout(s->upper, "logs/refs/stash") : strcmp(mine, host) == 0;
  if (!moved && log_same)
    return; /* untouched, or pushed and popped inside */
  if (s->g->admin[0] == '\0' && value != NULL && moved && mine != NULL && host_same &&
      !objects_refused(s, r->name) && sandbox_git_stash_pushed(host, mine, r->before, value) &&
      sandbox_git_object_present(s->common, value)) {
    if (update_ref(s, r, value))
      sync_reflog(s, r, mine);
    return;
  }
  if (moved)
    discard(s, r->name);
  if (!log_same)
    discard(s, "logs/refs/stash");
}

static void sync_ref(struct sync *s, const struct sandbox_git_ref *r) {
  cleanup_free char *value = NULL;
  cleanup_free char *log = NULL;
  bool deleted = is_whiteout(s->upper, r->name);
  if (!deleted && sandbox_git_read_nofollow(s->upper, r->name, &value) < 0 &&
      strcmp(r->name, "refs/stash") != 0)
    return; /* not written by the run (or packed: that part of a pack-refs is discarded) */
  if (value != NULL) {
    value[strcspn(value, "\n")] = '\0';
    if (!sandbox_git_is_oid(value)) {
      discard(s, r->name);
      return;
    }
  }
  if (strcmp(r->name, "refs/stash") == 0) {
    /* not rewritten: the host's value stands (a reflog may still have changed) */
    if (!deleted && value == NULL && r->before[0] != '\0')
      value = xstrdup(r->before);
    sync_stash(s, r, value);
    return;
  }
  /* the branch is never deleted, and never moved to an object the repository lacks (one the run
   * packed: a pack is not adopted) */
  if (deleted || (strcmp(value, r->before) != 0 && !sandbox_git_object_present(s->common, value))) {
    if (!deleted)
      log_warning("sandbox: git: %s: the run's %s is not in the repository (was it packed by a "
                  "`git gc` or a `git fetch` inside?); not applied",
                  r->name, value);
    discard(s, r->name);
    return;
  }
  if (strcmp(value, r->before) != 0 && objects_refused(s, r->name)) {
    discard(s, r->name);
    return;
  }
  if (strcmp(value, r->before) != 0 && !update_ref(s, r, value))
    return;
  log = read_run_reflog(s, r);
  if (log != NULL)
    sync_reflog(s, r, log);
}

/* --- the task worktree's admin dir ---------------------------------------------------------- */

/* the admin dir's files that are the worktree's own state and point nowhere else */
static const char *const admin_files[] = {
    "index",       "HEAD",           "ORIG_HEAD",  "FETCH_HEAD",  "MERGE_HEAD",
    "MERGE_MSG",   "MERGE_MODE",     "AUTO_MERGE", "REBASE_HEAD", "CHERRY_PICK_HEAD",
    "REVERT_HEAD", "COMMIT_EDITMSG", "SQUASH_MSG", "logs/HEAD",   NULL};

static bool is_admin_file(const struct sync *s, const char *rel, const char **name) {
  size_t n = strlen(s->g->admin);
  if (n > 0 && (strncmp(rel, s->g->admin, n) != 0 || rel[n] != '/'))
    return false;
  *name = n > 0 ? rel + n + 1 : rel;
  for (const char *const *f = admin_files; *f; f++)
    if (strcmp(*name, *f) == 0)
      return true;
  return false;
}

/* HEAD: the branch it had, or detached at an id (a rebase in progress) */
static bool head_ok(const struct sync *s, const char *text) {
  cleanup_free char *line = xasprintf("%.*s", (int)strcspn(text, "\n"), text);
  if (sandbox_git_is_oid(line))
    return !objects_refused(s, "HEAD");
  return s->g->branch != NULL && strncmp(line, "ref: ", 5) == 0 &&
         strcmp(line + 5, s->g->branch) == 0;
}

/* logs/HEAD: the entries the run added name objects the repository has (not ones it packed) */
static bool head_log_ok(const struct sync *s, const char *mine, const char *host) {
  size_t same = strncmp(mine, host, strlen(host)) == 0 ? strlen(host) : 0;
  if (mine[same] != '\0' && objects_refused(s, "logs/HEAD"))
    return false;
  return sandbox_git_reflog_present(s->common, mine + same);
}

/* the run's admin file dir/base (read once, checked, written from memory), or false */
static bool sync_admin_text(struct sync *s, int upper_dir, int dir, const char *base,
                            const char *name) {
  cleanup_free char *host = NULL;
  cleanup_free char *text = NULL;
  uint64_t max = SYNC_MAX_NEW_TEXT;
  size_t len;
  if (strcmp(name, "logs/HEAD") == 0) {
    if (sandbox_git_read_nofollow(dir, base, &host) < 0)
      host = xstrdup("");
    max += strlen(host);
  }
  if (read_run_text(upper_dir, base, max, &text, &len) < 0 ||
      (strcmp(name, "HEAD") == 0 && !head_ok(s, text)) ||
      (host != NULL && !head_log_ok(s, text, host)))
    return false;
  if (sandbox_git_write_new(dir, base, text, len, host_mode(dir, base)) < 0)
    log_warning("sandbox: git: write `%s`: %s", name, strerror(errno));
  return true;
}

static void sync_admin_file(struct sync *s, int upper_dir, const char *rel, const char *name) {
  const char *base;
  cleanup_close int dir = open_parent(s->common, rel, &base);
  if (dir < 0)
    return;
  if (is_whiteout(upper_dir, base)) {
    if (strcmp(name, "HEAD") != 0 && strcmp(name, "index") != 0)
      unlinkat(dir, base, 0);
    return;
  }
  /* input to check, not a file to copy (sandbox-git-index-sync.c); the index and a detached HEAD
   * name objects too */
  if (strcmp(name, "index") == 0
          ? objects_refused(s, rel) || !sandbox_git_index_apply(s->g, upper_dir, dir, base)
          : !sync_admin_text(s, upper_dir, dir, base, name))
    discard(s, rel);
}

static bool is_watched(const struct sync *s, const char *rel) {
  for (size_t i = 0; i < s->g->n_refs; i++) {
    const char *ref = s->g->refs[i].name;
    if (strcmp(rel, ref) == 0 || (strncmp(rel, "logs/", 5) == 0 && strcmp(rel + 5, ref) == 0))
      return true;
  }
  return false;
}

/* every other entry of the upper dir: the admin files applied, the rest reported */
static void walk_rest(struct sync *s, int dir, const char *prefix, int depth) {
  cleanup_dir DIR *d = NULL;
  struct dirent *e;
  int fd = dup(dir);
  if (fd < 0 || (d = fdopendir(fd)) == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL && s->entries++ < SYNC_MAX_ENTRIES) {
    cleanup_free char *rel = NULL;
    const char *name;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    rel = prefix[0] ? xasprintf("%s/%s", prefix, e->d_name) : xstrdup(e->d_name);
    if (strcmp(rel, "objects") == 0 || is_watched(s, rel))
      continue;
    if (e->d_type == DT_DIR && depth < SYNC_MAX_DEPTH) {
      cleanup_close int sub =
          openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        walk_rest(s, sub, rel, depth + 1);
    } else if ((e->d_type == DT_REG || e->d_type == DT_CHR) && is_admin_file(s, rel, &name)) {
      sync_admin_file(s, dirfd(d), rel, name);
    } else if (e->d_type != DT_DIR) {
      discard(s, rel);
    }
  }
}

static void sync_all(struct sandbox_git_run *g, char ***discarded) {
  cleanup_free char *upper_path = xasprintf("%s/upper", g->run_dir);
  cleanup_close int upper = open(upper_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  /* the fd of the common dir checked before the run, never its path again */
  int common = g->common_fd;
  struct sync s = {.g = g,
                   .upper = upper,
                   .common = common,
                   .room = {SANDBOX_GIT_MAX_REPORTED - 2, SANDBOX_GIT_REPORTED_BYTES}};
  if (upper < 0 || common < 0) {
    log_warning("sandbox: git: open `%s`: %s; nothing of the run's git changes is applied",
                upper < 0 ? upper_path : g->common_dir, strerror(errno));
    return;
  }
  sync_objects(&s);
  for (size_t i = 0; i < g->n_refs; i++)
    sync_ref(&s, &g->refs[i]);
  walk_rest(&s, upper, "", 0);
  say_cut(&s);
  *discarded = s.discarded;
}

/* the tamper walk, the config-named files and the gitlinks of the run's index as it is now: cheap,
 * and nothing of them depends on the sync */
static void find_tamper(struct sandbox_git_run *g, const char *worktree) {
  cleanup_free char *upper_path = xasprintf("%s/upper", g->run_dir);
  cleanup_close int upper = open(upper_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upper >= 0)
    sandbox_git_index_gitlinks(g, upper);
  g->tamper = sandbox_git_tamper(g, worktree);
  sandbox_git_config_tamper(g, worktree, &g->tamper);
}

void sandbox_git_finish(struct sandbox_git_run *g, const char *worktree,
                        const struct sandbox_git_said *said) {
  if (g->run_dir == NULL)
    return;
  find_tamper(g, worktree);
  if (said != NULL && said->tamper != NULL)
    said->tamper(g, said->arg);
  g->host_git_args = sandbox_git_host_args(g, g->tamper);
  if (said != NULL && said->host_args != NULL)
    said->host_args(g, said->arg);
  sync_all(g, &g->discarded);
  /* after the sync: an index it applied keeps the stat data of the entries git trusted */
  if (g->times_untrusted)
    sandbox_git_index_racy(g->common_fd, g->common_dir, g->admin);
  sandbox_git_remove_run_dir(g);
  free(g->run_dir);
  g->run_dir = NULL;
  /* a process the command left behind (a task container's) may have changed the index since */
  sandbox_git_tamper_add_gitlinks(g);
  sandbox_git_strv_free(g->host_git_args);
  g->host_git_args = sandbox_git_host_args(g, g->tamper);
  sandbox_git_top_drop(g); /* the walk's, held for the reads above */
}
