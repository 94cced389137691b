/* The last tamper walk of a task container of `fsrun bundle`, at `fsrun delete`: a process an exec
 * left running (a `setsid` daemon) may plant a nested repository after the last exec's walk, and
 * no later walk names it (review19 #4's tail): the host's next plain `git add -A` would register it
 * and `git status` run its core.fsmonitor. Run once the container's processes are dead, so that
 * nothing plants after it; from the last exec's walk, or from the container's creation when no
 * exec finished (its own process may have made one). The files the config and the installed hooks
 * point at (`.husky/pre-commit`, `lefthook.yml`) are compared with the digests the last exec kept
 * (exec-git-pointers.c): a rewrite after the last exec looked is named here too. `fsrun pause
 * --tamper-json` walks the same way once the container is frozen (review22 F2: a leftover plants
 * between an exec's walk and the host's git; frozen, it cannot until the resume). */
#include "exec-git.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json-out.h"
#include "log.h"
#include "sandbox-git.h"
#include "utils.h"

/* st->created as fsrun writes it (rfc3339_format_time: `YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ`); the
 * epoch (every nested repository named) when it is not that */
static struct timespec created_time(const struct container_status *st) {
  struct tm tm = {0};
  long nsec = 0;
  int end = -1;
  if (st->created == NULL ||
      sscanf(st->created, "%d-%d-%dT%d:%d:%d.%9ldZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
             &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &nsec, &end) != 7 ||
      end < 0 || st->created[end] != '\0' || nsec < 0)
    return (struct timespec){0};
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return (struct timespec){.tv_sec = timegm(&tm), .tv_nsec = nsec};
}

/* the worktree create accepted (exec-git-accept.c), looked at again in the config it kept; the
 * config's writable binds in *writable (exec_git_writable) */
static char *accepted_worktree(int state_dir_fd, const struct container_status *st, const char *who,
                               oci_strv *writable) {
  cleanup_error fsrun_error_t err = NULL;
  oci_config *config = NULL;
  const char *worktree;
  char *copy;
  if (oci_map_get(&st->annotations, EXEC_GIT_ANNOTATION) == NULL)
    return NULL;
  if (status_read_config(state_dir_fd, st->bundle, &config, &err) < 0) {
    log_warning("%s: git: %s; no walk", who, err->msg);
    return NULL;
  }
  worktree = exec_git_worktree(config, state_dir_fd, who);
  copy = worktree != NULL ? xstrdup(worktree) : NULL;
  if (worktree != NULL)
    exec_git_writable(config, worktree, writable);
  oci_config_free(config);
  return copy;
}

/* on a tmpfs worktree, what a process of the container wrote through a shared mapping since the
 * last exec's sync (after the host's git rewrote the index that exec set back): set back again
 * (sandbox-git-index-times.c); the layout of the worktree checked at create */
static void index_racy(const char *worktree) {
  cleanup_error fsrun_error_t err = NULL;
  struct sandbox_git_layout l;
  if (sandbox_git_layout_find(worktree, &l, &err) == 0 && l.common_dir != NULL)
    sandbox_git_index_racy(l.common_fd, l.common_dir, l.admin);
  sandbox_git_layout_free(&l);
}

/* The walk of a container whose processes cannot write (dead: delete; frozen: pause); `who` is
 * the command that says it. */
static char **walk_quiet_container(int state_dir_fd, const struct container_status *st,
                                   char ***host_args, const char *who) {
  oci_strv writable = {0};
  cleanup_free char *worktree = accepted_worktree(state_dir_fd, st, who, &writable);
  cleanup_free char *what = NULL;
  struct sandbox_git_run run = {0};
  char **found, **args = NULL;
  if (worktree == NULL)
    return NULL;
  if (!exec_git_tamper_since(state_dir_fd, &run.start))
    run.start = created_time(st);
  /* what the last exec's walk found, where times are not trusted: the next exec's walk names
   * again what this one finds (nothing is saved) */
  exec_git_dotgits_load(&run, state_dir_fd);
  /* no index before or after: what lands in the worktree only (a leftover's git dir writes stay
   * in its exec's overlay); an empty list, never NULL, for a walk that found nothing */
  found = sandbox_git_tamper(&run, worktree);
  sandbox_git_dotgits_free(&run.dotgits_before);
  sandbox_git_dotgits_free(&run.dotgits_after);
  if (run.times_untrusted)
    index_racy(worktree);
  exec_git_pointers_final(worktree, &writable, run.top_fd, state_dir_fd, run.nested_seen, &found,
                          &args);
  oci_strv_free(&writable);
  sandbox_git_top_drop(&run);
  if (found == NULL)
    found = xmalloc0(sizeof(char *));
  if (host_args != NULL)
    *host_args = steal_ptr(&args);
  sandbox_git_strv_free(args);
  what = xasprintf("%s: a process left in the task container made nested git repositories or "
                   "changed what the host's git runs after the last exec looked (do not trust "
                   "the host's git with them)",
                   who);
  exec_git_warn_list(what, found);
  return found;
}

char **exec_git_final_walk(int state_dir_fd, const struct container_status *st, char ***host_args) {
  return walk_quiet_container(state_dir_fd, st, host_args, "delete");
}

/* The frozen container's state is left as it is (no cutoff, no digests saved): the next exec's
 * walk names again what this one found (a repeat, never a miss). */
char **exec_git_paused_walk(int state_dir_fd, const struct container_status *st,
                            char ***host_args) {
  return walk_quiet_container(state_dir_fd, st, host_args, "pause");
}

int exec_git_walk_json_write(int fd, const char *path, char **tamper, char **host_args,
                             fsrun_error_t *err) {
  struct strbuf b = {0};
  ssize_t n;
  sb_printf(&b, "{\"walked\":%s", tamper != NULL ? "true" : "false");
  sb_json_string_array(&b, "tamper", tamper);
  sb_json_string_array(&b, "hostGitArgs", host_args); /* NULL: [] */
  sb_puts(&b, "}\n");
  n = write(fd, b.data, b.len);
  free(b.data);
  if (n < 0 || (size_t)n != b.len)
    return fsrun_error_errno(err, "--tamper-json %s: write", path);
  return 0;
}
