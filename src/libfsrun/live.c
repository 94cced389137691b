/* pause, resume and update: changes to a live container's cgroup. events is in events.c. */
#include "live.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec-git.h"
#include "log.h"
#include "utils.h"

/* --- loading a container ------------------------------------------------------------------- */

int live_open(const struct fsrun_context *ctx, const char *id, struct live_container *c,
              fsrun_error_t *err) {
  return live_open_pinned(ctx, id, c, NULL, err);
}

int live_open_pinned(const struct fsrun_context *ctx, const char *id, struct live_container *c,
                     int *init_pidfd, fsrun_error_t *err) {
  cleanup_close int dirfd = -1;
  cleanup_close int pidfd = -1;
  int ret;

  memset(c, 0, sizeof(*c));
  if (init_pidfd != NULL)
    *init_pidfd = -1;
  dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0)
    return dirfd;
  ret = status_read(dirfd, &c->st, err);
  if (ret == -ENOENT) {
    /* the directory of a create that died before its first state write */
    fsrun_error_release(err);
    c->st.id = xstrdup(id);
    c->st.status = xstrdup("stopped");
    c->status = "stopped";
    return 0;
  }
  if (ret < 0)
    return ret;
  /* the cgroup first: the status's freezer check then uses it (one look at the mount layout) */
  if (c->st.cgroup != NULL) {
    ret = status_open_cgroup_config(dirfd, id, &c->st, &c->cg, &c->config, err);
    if (ret < 0) {
      live_close(c);
      return fsrun_error_wrap(err, "container `%s`", id);
    }
  }
  /* before the status's liveness check, which then tells whether it pinned the init */
  if (init_pidfd != NULL && c->st.pid > 0)
    pidfd = (int)syscall(SYS_pidfd_open, c->st.pid, 0);
  c->status = status_derive_in(dirfd, &c->st, c->cg, &c->pid);
  if (init_pidfd != NULL && pidfd >= 0 && status_init_alive_derived(c->status))
    *init_pidfd = steal_fd(&pidfd);
  return 0;
}

int live_require_cgroup(const struct live_container *c, const char *action, fsrun_error_t *err) {
  if (c->cg != NULL)
    return 0;
  return fsrun_error_take(err, ENOTSUP,
                          xasprintf("container `%s` has no cgroup (rootless, and no cgroup was "
                                    "delegated to this user): cannot %s",
                                    c->st.id, action));
}

void live_close(struct live_container *c) {
  status_clear(&c->st);
  cgroup_free(c->cg);
  if (c->config != NULL)
    oci_config_free(c->config);
  memset(c, 0, sizeof(*c));
}

/* --- pause, resume ------------------------------------------------------------------------- */

/* The tamper walk of a task container just frozen (exec-git-final.c); *tamper NULL for a container
 * that is not one. A state dir that cannot be opened now leaves it frozen and says why. */
static int walk_frozen(const struct fsrun_context *ctx, const char *id,
                       const struct container_status *st, char ***tamper, char ***host_args,
                       fsrun_error_t *err) {
  cleanup_close int dirfd = status_dir_open(ctx, id, err);
  if (dirfd < 0)
    return fsrun_error_wrap(err, "pause `%s`: frozen, but its tamper walk", id);
  *tamper = exec_git_paused_walk(dirfd, st, host_args);
  return 0;
}

int container_pause(const struct fsrun_context *ctx, const char *id, char ***tamper,
                    char ***host_args, fsrun_error_t *err) {
  cleanup_live struct live_container c = {0};
  int ret = live_open(ctx, id, &c, err);
  if (ret < 0)
    return ret;
  if (strcmp(c.status, "running") != 0)
    return fsrun_error_take(err, EINVAL, xasprintf("container `%s` is not running", id));
  ret = live_require_cgroup(&c, "pause it", err);
  if (ret < 0)
    return ret;
  ret = cgroup_freeze(c.cg, true, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "pause `%s`", id);
  if (tamper != NULL)
    return walk_frozen(ctx, id, &c.st, tamper, host_args, err);
  return 0;
}

int container_resume(const struct fsrun_context *ctx, const char *id, fsrun_error_t *err) {
  cleanup_live struct live_container c = {0};
  int ret = live_open(ctx, id, &c, err);
  if (ret < 0)
    return ret;
  if (strcmp(c.status, "paused") != 0)
    return fsrun_error_take(err, EINVAL, xasprintf("container `%s` is not paused", id));
  ret = live_require_cgroup(&c, "resume it", err);
  if (ret < 0)
    return ret;
  ret = cgroup_freeze(c.cg, false, err);
  if (ret < 0)
    return fsrun_error_wrap(err, "resume `%s`", id);
  return 0;
}

/* --- update -------------------------------------------------------------------------------- */

#define RESOURCES_MAX_BYTES (64u << 20)

static int read_stdin(char **out, size_t *len, fsrun_error_t *err) {
  size_t cap = 4096;
  char *buf = malloc(cap);
  *len = 0;
  if (buf == NULL)
    abort();
  for (;;) {
    ssize_t n;
    if (*len + 1 == cap) {
      if (cap >= RESOURCES_MAX_BYTES) {
        free(buf);
        return fsrun_error_take(
            err, EFBIG,
            xasprintf("the resources on stdin are larger than %u bytes", RESOURCES_MAX_BYTES));
      }
      cap *= 2;
      buf = realloc(buf, cap);
      if (buf == NULL)
        abort();
    }
    n = read(STDIN_FILENO, buf + *len, cap - 1 - *len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      free(buf);
      return fsrun_error_make(err, saved, "read the resources from stdin");
    }
    if (n == 0)
      break;
    *len += (size_t)n;
  }
  buf[*len] = '\0';
  *out = buf;
  return 0;
}

int live_read_resources(const char *path, oci_resources **out, fsrun_error_t *err) {
  cleanup_free char *text = NULL;
  char *msg = NULL;
  bool from_stdin = strcmp(path, "-") == 0;
  size_t len = 0;
  int ret;

  *out = NULL;
  if (from_stdin) {
    ret = read_stdin(&text, &len, err);
    if (ret < 0)
      return ret;
  } else if (oci_read_file(path, &text, &len, &msg) < 0) {
    return fsrun_error_take(err, EINVAL, msg);
  }
  if (oci_resources_parse(text, len, from_stdin ? "resources (stdin)" : path, out, &msg) < 0)
    return fsrun_error_take(err, EINVAL, msg);
  return 0;
}

int container_update(const struct fsrun_context *ctx, const char *id, const oci_resources *r,
                     fsrun_error_t *err) {
  cleanup_live struct live_container c = {0};
  int ret = live_open(ctx, id, &c, err);
  if (ret < 0)
    return ret;
  if (strcmp(c.status, "created") != 0 && strcmp(c.status, "running") != 0 &&
      strcmp(c.status, "paused") != 0)
    return fsrun_error_take(err, EINVAL,
                            xasprintf("container `%s` is %s: only a created, running or paused "
                                      "container can be updated",
                                      id, c.status));
  ret = live_require_cgroup(&c, "update it", err);
  if (ret < 0)
    return ret;
  if (r != NULL && r->n_devices > 0) {
    /* new device rules replace the old ones: the nodes config.json made must stay usable */
    cleanup_oci_config oci_config *config = NULL;
    cleanup_close int dirfd = status_dir_open(ctx, id, err);
    if (dirfd < 0 || status_read_config(dirfd, c.st.bundle, &config, err) < 0) {
      log_warning("update `%s`: the device rules replace the container's without the nodes of "
                  "linux.devices (%s)",
                  id, (*err)->msg);
      fsrun_error_release(err);
    } else if (config->linux_ != NULL) {
      return cgroup_update_with_nodes(c.cg, r, config->linux_->devices, config->linux_->n_devices,
                                      err);
    }
  }
  /* the errors name the resource and the file ("linux.resources.memory.limit: write ...") */
  return cgroup_update(c.cg, r, err);
}

/* --- parsers ------------------------------------------------------------------------------- */

/* digits[.digits] at *p: the integer part and the fraction as num/den (den a power of ten).
 * Digits past 18 in the fraction are dropped: they are below any unit's resolution. */
static bool parse_decimal(const char **p, unsigned __int128 *whole, uint64_t *num, uint64_t *den) {
  const char *s = *p;
  bool any = false;
  *whole = 0;
  *num = 0;
  *den = 1;
  while (isdigit((unsigned char)*s)) {
    *whole = *whole * 10 + (unsigned)(*s - '0');
    if (*whole > (unsigned __int128)UINT64_MAX)
      return false;
    s++;
    any = true;
  }
  if (*s == '.') {
    s++;
    while (isdigit((unsigned char)*s)) {
      if (*den < 1000000000000000000ULL) {
        *num = *num * 10 + (uint64_t)(*s - '0');
        *den *= 10;
      }
      s++;
      any = true;
    }
  }
  *p = s;
  return any;
}

/* parse errors carry EINVAL for callers, but no strerror text: the message says it all */
static int invalid_size(const char *text, fsrun_error_t *err) {
  return fsrun_error_take(err, EINVAL,
                          xasprintf("invalid size `%s`: expected bytes, optionally with a unit k, "
                                    "m, g, t or p (such as 64m or 1.5g), or -1 for unlimited",
                                    text));
}

int live_parse_bytes(const char *text, int64_t *out, fsrun_error_t *err) {
  static const char units[] = "kmgtp";
  const char *p = text;
  unsigned __int128 whole, value, multiplier = 1;
  uint64_t num, den;
  const char *unit;

  if (text == NULL || *text == '\0')
    return fsrun_error_take(err, EINVAL, xstrdup("expected a size in bytes, got an empty string"));
  if (strcmp(text, "-1") == 0) {
    *out = -1;
    return 0;
  }
  if (!parse_decimal(&p, &whole, &num, &den))
    return invalid_size(text, err);
  if (*p == ' ')
    p++;
  if (*p != '\0' && (unit = strchr(units, tolower((unsigned char)*p))) != NULL) {
    for (long i = 0; i <= unit - units; i++)
      multiplier *= 1024;
    p++;
  }
  if (*p == 'i' || *p == 'I')
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0')
    return invalid_size(text, err);
  value = whole * multiplier + (unsigned __int128)num * multiplier / den;
  if (value > (unsigned __int128)INT64_MAX)
    return fsrun_error_take(err, ERANGE, xasprintf("size `%s` is too large", text));
  *out = (int64_t)value;
  return 0;
}

static int invalid_duration(const char *text, fsrun_error_t *err) {
  return fsrun_error_take(err, EINVAL,
                          xasprintf("invalid duration `%s`: expected a number with a unit (ns, us, "
                                    "ms, s, m, h), such as 5s, 250ms or 1m30s",
                                    text ? text : ""));
}

int live_parse_duration(const char *text, uint64_t *ns, fsrun_error_t *err) {
  static const struct {
    const char *name;
    uint64_t ns;
  } units[] = {
      {"ns", 1},
      {"us", 1000},
      {"\xc2\xb5s", 1000}, /* µs, U+00B5 */
      {"\xce\xbcs", 1000}, /* μs, U+03BC */
      {"ms", 1000000},
      {"s", 1000000000ULL},
      {"m", 60ULL * 1000000000ULL},
      {"h", 3600ULL * 1000000000ULL},
  };
  const char *p = text;
  unsigned __int128 total = 0;

  if (text == NULL || *text == '\0')
    return invalid_duration(text, err);
  if (*p == '+')
    p++;
  while (*p != '\0') {
    unsigned __int128 whole;
    uint64_t num, den, unit_ns = 0;
    size_t len = 0;
    if (!parse_decimal(&p, &whole, &num, &den))
      return invalid_duration(text, err);
    while (p[len] != '\0' && p[len] != '.' && !isdigit((unsigned char)p[len]))
      len++;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
      if (strlen(units[i].name) == len && strncmp(p, units[i].name, len) == 0)
        unit_ns = units[i].ns;
    if (unit_ns == 0)
      return invalid_duration(text, err);
    p += len;
    total += whole * unit_ns + (unsigned __int128)num * unit_ns / den;
    if (total > (unsigned __int128)UINT64_MAX)
      return fsrun_error_take(err, ERANGE, xasprintf("duration `%s` is too long", text));
  }
  if (total == 0)
    return fsrun_error_take(err, EINVAL, xasprintf("duration `%s` must be greater than 0", text));
  *ns = (uint64_t)total;
  return 0;
}
