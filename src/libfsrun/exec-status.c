#include "exec-status.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller-output.h"
#include "cgroup.h"
#include "utils.h"

int exec_status_open(struct exec_status *s, const char *path, const struct fsrun_cgroup *cg,
                     fsrun_error_t *err) {
  s->fd = caller_output_open("--status-json", path, err);
  if (s->fd < 0)
    return s->fd;
  s->oom_known = cg != NULL && cgroup_oom_kills(cg, &s->oom_before);
  return 0;
}

char *exec_status_json(const siginfo_t *info, bool oom_known, bool oom_killed, const char *extra) {
  const char *oom = !oom_known ? "" : oom_killed ? ",\"oomKilled\":true" : ",\"oomKilled\":false";
  cleanup_free char *ended = NULL;
  const char *name;
  if (info->si_code == CLD_EXITED)
    ended = xasprintf("\"exitCode\":%d,\"signal\":null", info->si_status);
  else if ((name = sigabbrev_np(info->si_status)) != NULL)
    ended = xasprintf("\"exitCode\":null,\"signal\":\"SIG%s\"", name);
  else
    ended = xasprintf("\"exitCode\":null,\"signal\":\"SIG%d\"", info->si_status);
  return xasprintf("{%s%s%s}\n", ended, oom, extra != NULL ? extra : "");
}

int exec_status_write(const struct exec_status *s, const siginfo_t *info,
                      const struct fsrun_cgroup *cg, fsrun_error_t *err) {
  cleanup_free char *json = NULL;
  uint64_t after = 0;
  bool oom_known;
  size_t len;
  if (s->fd < 0 || info->si_code == 0)
    return 0;
  oom_known = s->oom_known && cgroup_oom_kills(cg, &after);
  /* the container's counter: a kill of another process of the container during this one's run
   * counts too (docs/fsrun-exec.8 says so) */
  json = exec_status_json(info, oom_known, oom_known && after > s->oom_before, s->extra_json);
  len = strlen(json);
  if (write(s->fd, json, len) != (ssize_t)len)
    return fsrun_error_errno(err, "--status-json: write");
  return 0;
}

void exec_status_close(struct exec_status *s) {
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
  free(s->extra_json);
  s->extra_json = NULL;
}
