/* Seccomp: linux.seccomp is validated and compiled to BPF with libseccomp in the runtime, before
 * clone; the container process then only hands the finished program to seccomp(2). Loading
 * ourselves (rather than with seccomp_load) also lets us pass kernel flags that the linked
 * libseccomp may not know, such as SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV. */
#include "seccomp.h"
#include "seccomp-cache.h"
#include "seccomp-compact.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <libseccomp.h> /* the system <seccomp.h>: ours shadows it on the include path */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json-out.h"
#include "log.h"
#include "utils.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

struct fsrun_seccomp {
  struct sock_fprog prog;
  unsigned int flags; /* SECCOMP_FILTER_FLAG_*, without NEW_LISTENER */
  bool has_notify;
  /* seccomp_compile_cached: read from the cache; compiled, for seccomp_keep_compiled to store */
  bool from_cache, to_cache;
  uint8_t cache_key[32];
};

/* --- names ---------------------------------------------------------------------------------------
 */

static const struct {
  const char *name;
  uint32_t action; /* ERRNO and TRACE get their data added */
} action_names[] = {
    {"SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
    {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
    {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
    {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0)},
    {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(0)},
    {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
    {"SCMP_ACT_LOG", SCMP_ACT_LOG},
    {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY},
};

static const struct {
  const char *name;
  enum scmp_compare op;
} operator_names[] = {
    {"SCMP_CMP_NE", SCMP_CMP_NE},
    {"SCMP_CMP_LT", SCMP_CMP_LT},
    {"SCMP_CMP_LE", SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SCMP_CMP_GE},
    {"SCMP_CMP_GT", SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

/* The runtime-spec's architecture names; libseccomp knows them as the lower-case suffix. */
static const char *const arch_names[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",
};

static const struct {
  const char *name;
  unsigned int flag;
} flag_names[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV},
};

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the running kernel accepts these filter flags: with a NULL program, a known flag set
 * fails with EFAULT (the program is read after the flags are checked), an unknown one with EINVAL.
 */
static bool kernel_accepts_filter_flags(unsigned long flags) {
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT;
}

/* Parses an action name plus its optional errno into a libseccomp action. `field` names the JSON
 * path of the action ("linux.seccomp.syscalls[3]" or "linux.seccomp" for the default). */
static int parse_action(const char *name, bool has_errno_ret, uint32_t errno_ret, const char *field,
                        const char *action_key, const char *errno_key, uint32_t *out,
                        fsrun_error_t *err) {
  if (name == NULL)
    return fsrun_error_make(err, 0, "%s.%s: missing action", field, action_key);
  for (size_t i = 0; i < N_ELEMENTS(action_names); i++) {
    if (strcmp(name, action_names[i].name) != 0)
      continue;
    uint32_t action = action_names[i].action;
    bool takes_errno = action == SCMP_ACT_ERRNO(0) || action == SCMP_ACT_TRACE(0);
    if (has_errno_ret && !takes_errno)
      return fsrun_error_make(err, 0, "%s.%s: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno",
                              field, errno_key);
    if (takes_errno) {
      uint32_t data = has_errno_ret ? errno_ret : EPERM;
      if (data > SECCOMP_RET_DATA)
        return fsrun_error_make(err, 0, "%s.%s: %" PRIu32 " is out of range (at most %u)", field,
                                errno_key, data, SECCOMP_RET_DATA);
      action |= data;
    }
    *out = action;
    return 0;
  }
  return fsrun_error_make(err, 0, "%s.%s: unknown action `%s`", field, action_key, name);
}

/* "SCMP_ARCH_X86_64" -> SCMP_ARCH_X86_64 token; 0 when libseccomp does not know it; -1 (as
 * UINT32_MAX) when it is no runtime-spec name at all. */
static uint32_t arch_token(const char *name) {
  char lower[32];
  size_t i, j;
  for (i = 0; i < N_ELEMENTS(arch_names); i++)
    if (name != NULL && strcmp(name, arch_names[i]) == 0)
      break;
  if (i == N_ELEMENTS(arch_names))
    return UINT32_MAX;
  for (j = 0; name[10 + j] != '\0' && j < sizeof(lower) - 1; j++) {
    char ch = name[10 + j]; /* after "SCMP_ARCH_" */
    lower[j] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
  }
  lower[j] = '\0';
  if (strcmp(lower, "loongarch64") == 0)
    return seccomp_arch_resolve_name("loong64"); /* libseccomp's own spelling */
  return seccomp_arch_resolve_name(lower);
}

/* --- compile -------------------------------------------------------------------------------------
 */

static void cleanup_filter_ctx(scmp_filter_ctx *ctx) {
  if (*ctx != NULL)
    seccomp_release(*ctx);
}

static int add_architectures(scmp_filter_ctx ctx, const oci_seccomp *s, fsrun_error_t *err) {
  for (size_t i = 0; i < s->architectures.len; i++) {
    const char *name = s->architectures.items[i];
    uint32_t token = arch_token(name);
    if (token == UINT32_MAX)
      return fsrun_error_make(err, 0, "linux.seccomp.architectures[%zu]: unknown architecture `%s`",
                              i, name ? name : "");
    if (token == 0) {
      /* A real architecture this libseccomp cannot build for: its syscalls keep the bad-arch
       * action (denied), so skipping it loosens nothing. */
      log_warning("linux.seccomp.architectures[%zu]: %s is not supported by libseccomp, skipped", i,
                  name);
      continue;
    }
    int r = seccomp_arch_add(ctx, token);
    if (r < 0 && r != -EEXIST)
      return fsrun_error_make(err, -r, "linux.seccomp.architectures[%zu]: add %s", i, name);
  }
  return 0;
}

static int parse_flags(const oci_seccomp *s, bool has_notify, unsigned int *out,
                       fsrun_error_t *err) {
  unsigned int flags = 0;
  for (size_t i = 0; i < s->flags.len; i++) {
    const char *name = s->flags.items[i];
    size_t j;
    for (j = 0; j < N_ELEMENTS(flag_names); j++)
      if (name != NULL && strcmp(name, flag_names[j].name) == 0)
        break;
    if (j == N_ELEMENTS(flag_names))
      return fsrun_error_make(err, 0, "linux.seccomp.flags[%zu]: unknown flag `%s`", i,
                              name ? name : "");
    unsigned int flag = flag_names[j].flag;
    unsigned long probe = flag;
    if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) {
      if (!has_notify) {
        /* It only changes how notifications wait; without SCMP_ACT_NOTIFY it has no meaning
         * (and the kernel refuses it without a listener). */
        log_debug("linux.seccomp.flags[%zu]: %s ignored: the profile has no SCMP_ACT_NOTIFY", i,
                  name);
        continue;
      }
      probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    }
    if (flag == SECCOMP_FILTER_FLAG_TSYNC && has_notify) {
      /* The container process is single-threaded when it loads the filter, so TSYNC has nothing
       * to synchronise; the kernel refuses TSYNC together with a listener. */
      log_debug("linux.seccomp.flags[%zu]: %s ignored with SCMP_ACT_NOTIFY", i, name);
      continue;
    }
    if (!kernel_accepts_filter_flags(probe))
      return fsrun_error_make(
          err, 0, "linux.seccomp.flags[%zu]: %s is not supported by the running kernel", i, name);
    flags |= flag;
  }
  *out = flags;
  return 0;
}

/* Adds the rule(s) for one syscall number. libseccomp compares each argument at most once per
 * rule (all comparisons of a rule must hold); when the spec names an argument index twice, each
 * comparison becomes a rule of its own, so any one of them matching triggers the action. */
static int add_syscall_rules(scmp_filter_ctx ctx, uint32_t action, int nr,
                             const struct scmp_arg_cmp *cmps, size_t n_cmps) {
  bool repeated_index = false;
  for (size_t a = 0; a < n_cmps && !repeated_index; a++)
    for (size_t b = a + 1; b < n_cmps; b++)
      if (cmps[a].arg == cmps[b].arg)
        repeated_index = true;
  if (!repeated_index)
    return seccomp_rule_add_array(ctx, action, nr, (unsigned int)n_cmps, n_cmps ? cmps : NULL);
  for (size_t a = 0; a < n_cmps; a++) {
    int r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[a]);
    if (r < 0 && r != -EEXIST)
      return r;
  }
  return 0;
}

static int add_syscalls(scmp_filter_ctx ctx, const oci_seccomp *s, uint32_t default_action,
                        fsrun_error_t *err) {
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const oci_seccomp_syscall *sc = &s->syscalls[i];
    struct scmp_arg_cmp cmps[6 * 8]; /* a spec may compare an argument several times */
    char field[64];
    uint32_t action;
    int r;

    snprintf(field, sizeof(field), "linux.seccomp.syscalls[%zu]", i);
    r = parse_action(sc->action, sc->has_errno_ret, sc->errno_ret, field, "action", "errnoRet",
                     &action, err);
    if (r < 0)
      return r;
    if (sc->n_args > N_ELEMENTS(cmps))
      return fsrun_error_make(err, 0, "%s.args: at most %zu comparisons are supported", field,
                              N_ELEMENTS(cmps));
    for (size_t k = 0; k < sc->n_args; k++) {
      const oci_seccomp_arg *arg = &sc->args[k];
      size_t j;
      if (arg->index > 5)
        return fsrun_error_make(err, 0, "%s.args[%zu].index: %" PRIu32 " is not an argument (0-5)",
                                field, k, arg->index);
      for (j = 0; j < N_ELEMENTS(operator_names); j++)
        if (arg->op != NULL && strcmp(arg->op, operator_names[j].name) == 0)
          break;
      if (j == N_ELEMENTS(operator_names))
        return fsrun_error_make(err, 0, "%s.args[%zu].op: unknown operator `%s`", field, k,
                                arg->op ? arg->op : "");
      /* MASKED_EQ: value is the mask, valueTwo the datum; all values are full 64 bits. */
      cmps[k] = (struct scmp_arg_cmp){.arg = arg->index,
                                      .op = operator_names[j].op,
                                      .datum_a = arg->value,
                                      .datum_b = arg->value_two};
    }
    for (size_t n = 0; n < sc->names.len; n++) {
      const char *name = sc->names.items[n];
      int nr = name ? seccomp_syscall_resolve_name(name) : __NR_SCMP_ERROR;
      if (nr == __NR_SCMP_ERROR) {
        log_debug("%s.names[%zu]: unknown syscall `%s` skipped", field, n, name ? name : "");
        continue;
      }
      if (action == default_action) {
        log_debug("%s: `%s` has the default action, no rule needed", field, name);
        continue;
      }
      r = add_syscall_rules(ctx, action, nr, cmps, sc->n_args);
      if (r == -EEXIST)
        continue; /* the same rule twice */
      if (r < 0)
        return fsrun_error_make(err, -r, "%s: add rule for `%s`", field, name);
    }
  }
  return 0;
}

/* libseccomp writes BPF only to an fd: export to a memfd and read the program back. */
static int export_program(scmp_filter_ctx ctx, struct sock_fprog *prog, fsrun_error_t *err) {
  cleanup_close int fd = memfd_create("fsrun-seccomp", MFD_CLOEXEC);
  struct stat st;
  if (fd < 0)
    return fsrun_error_errno(err, "seccomp: memfd_create");
  int r = seccomp_export_bpf(ctx, fd);
  if (r < 0)
    return fsrun_error_make(err, -r, "seccomp: export the BPF program");
  if (fstat(fd, &st) < 0)
    return fsrun_error_errno(err, "seccomp: fstat");
  size_t size = (size_t)st.st_size;
  if (size == 0 || size % sizeof(struct sock_filter) != 0)
    return fsrun_error_make(err, 0, "seccomp: libseccomp produced a program of %zu bytes", size);
  if (size / sizeof(struct sock_filter) > BPF_MAXINSNS)
    return fsrun_error_make(
        err, 0,
        "linux.seccomp: the compiled filter has %zu instructions, more than the "
        "kernel's limit of %d",
        size / sizeof(struct sock_filter), BPF_MAXINSNS);
  cleanup_free struct sock_filter *insns = xmalloc0(size);
  if (pread(fd, insns, size, 0) != (ssize_t)size)
    return fsrun_error_errno(err, "seccomp: read the BPF program back");
  prog->len = (unsigned short)(size / sizeof(struct sock_filter));
  prog->filter = steal_ptr(&insns);
  return 0;
}

/* What the profile asks of the kernel, checked before any compile (and before the cache). */
struct profile_head {
  uint32_t default_action;
  bool has_notify;
  unsigned int flags;
};

static int profile_head(const oci_seccomp *s, struct profile_head *h, fsrun_error_t *err) {
  int r =
      parse_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                   "linux.seccomp", "defaultAction", "defaultErrnoRet", &h->default_action, err);
  if (r < 0)
    return r;
  if (h->default_action == SCMP_ACT_NOTIFY)
    return fsrun_error_make(err, 0,
                            "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the "
                            "default action");
  h->has_notify = false;
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (s->syscalls[i].action != NULL && strcmp(s->syscalls[i].action, "SCMP_ACT_NOTIFY") == 0)
      h->has_notify = true;
  if (h->has_notify && (s->listener_path == NULL || s->listener_path[0] == '\0'))
    return fsrun_error_make(err, 0,
                            "linux.seccomp.listenerPath: required when SCMP_ACT_NOTIFY is used");
  return parse_flags(s, h->has_notify, &h->flags, err);
}

/* libseccomp's compile of the profile, rewritten shorter (seccomp-compact.h) */
static int build_program(const oci_seccomp *s, const struct profile_head *h,
                         struct sock_fprog *prog, fsrun_error_t *err) {
  __attribute__((cleanup(cleanup_filter_ctx))) scmp_filter_ctx ctx =
      seccomp_init(h->default_action);
  int r;
  if (ctx == NULL)
    return fsrun_error_make(err, 0,
                            "linux.seccomp.defaultAction: %s is not supported by libseccomp or the "
                            "running kernel",
                            s->default_action);
  /* Syscalls of an architecture the profile does not list would otherwise be judged by numbers
   * that mean different syscalls: refuse them, with an errno so programs can fall back. */
  r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  if (r < 0)
    return fsrun_error_make(err, -r, "seccomp: set the bad-architecture action");
  /* A binary tree of syscalls: large allow lists cost fewer instructions per syscall. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
    log_debug("seccomp: libseccomp cannot build a binary-tree filter, using the default layout");

  r = add_architectures(ctx, s, err);
  if (r < 0)
    return r;
  r = add_syscalls(ctx, s, h->default_action, err);
  if (r < 0)
    return r;
  r = export_program(ctx, prog, err);
  if (r < 0)
    return r;
  /* the kernel converts and JIT-compiles every instruction at each load (each exec) */
  unsigned short before = prog->len;
  if (seccomp_compact(prog))
    log_debug("seccomp: the filter in %u instructions instead of libseccomp's %u", prog->len,
              before);
  return 0;
}

int seccomp_compile_cached(const oci_seccomp *s, int rootfd, struct fsrun_seccomp **out,
                           fsrun_error_t *err) {
  struct profile_head h;
  int r;

  *out = NULL;
  if (s == NULL)
    return 0;
  r = profile_head(s, &h, err);
  if (r < 0)
    return r;
  cleanup_free struct fsrun_seccomp *f = xmalloc0(sizeof(*f));
  f->flags = h.flags;
  f->has_notify = h.has_notify;
  /* `FSRUN_NO_SECCOMP_CACHE=1 fsrun run ...`: neither read nor written */
  const char *off = getenv("FSRUN_NO_SECCOMP_CACHE");
  bool cached = rootfd >= 0 && (off == NULL || off[0] == '\0') &&
                seccomp_cache_key(s, h.flags, h.has_notify, f->cache_key);
  if (cached && seccomp_cache_load(rootfd, f->cache_key, &f->prog)) {
    log_debug("seccomp: the compiled filter (%u instructions) from the cache", f->prog.len);
    f->from_cache = true;
  } else {
    r = build_program(s, &h, &f->prog, err);
    if (r < 0)
      return r;
    f->to_cache = cached;
  }
  *out = steal_ptr(&f);
  return 0;
}

int seccomp_compile(const oci_seccomp *s, struct fsrun_seccomp **out, fsrun_error_t *err) {
  return seccomp_compile_cached(s, -1, out, err);
}

void seccomp_keep_compiled(int rootfd, const struct fsrun_seccomp *f) {
  if (f != NULL && f->to_cache)
    seccomp_cache_store(rootfd, f->cache_key, &f->prog);
}

bool seccomp_from_cache(const struct fsrun_seccomp *f) {
  return f != NULL && f->from_cache;
}

/* --- the program kept for exec ------------------------------------------------------------
 * create keeps the compiled program in the state dir: libseccomp's compile of a runtime's usual
 * profile (some 300 syscalls, three architectures) is most of an exec's CPU otherwise (issue 15).
 * Native layout: the file never leaves this machine, and a version or size that does not match is
 * compiled afresh from the config. */

#define SAVED_MAGIC   "fsrunbpf"
#define SAVED_VERSION 1u

struct saved_header {
  char magic[8];
  uint32_t version;
  uint32_t flags;
  uint32_t has_notify;
  uint32_t len; /* instructions */
};

char *seccomp_serialize(const struct fsrun_seccomp *f, size_t *len) {
  struct saved_header h = {
      .version = SAVED_VERSION, .flags = f->flags, .has_notify = f->has_notify, .len = f->prog.len};
  size_t body = (size_t)f->prog.len * sizeof(struct sock_filter);
  char *buf = xmalloc0(sizeof(h) + body);
  memcpy(h.magic, SAVED_MAGIC, sizeof(h.magic));
  memcpy(buf, &h, sizeof(h));
  memcpy(buf + sizeof(h), f->prog.filter, body);
  *len = sizeof(h) + body;
  return buf;
}

struct fsrun_seccomp *seccomp_deserialize(const char *buf, size_t len) {
  struct saved_header h;
  struct fsrun_seccomp *f;
  if (len < sizeof(h))
    return NULL;
  memcpy(&h, buf, sizeof(h));
  if (memcmp(h.magic, SAVED_MAGIC, sizeof(h.magic)) != 0 || h.version != SAVED_VERSION ||
      h.len == 0 || h.len > BPF_MAXINSNS || h.has_notify > 1 ||
      len != sizeof(h) + (size_t)h.len * sizeof(struct sock_filter))
    return NULL;
  f = xmalloc0(sizeof(*f));
  f->prog.len = (unsigned short)h.len;
  f->prog.filter = xmalloc0(len - sizeof(h));
  memcpy(f->prog.filter, buf + sizeof(h), len - sizeof(h));
  f->flags = h.flags;
  f->has_notify = h.has_notify != 0;
  return f;
}

/* --- load (in the container process)
 * -------------------------------------------------------------- */

int seccomp_load_filter(const struct fsrun_seccomp *f, int *notify_fd, fsrun_error_t *err) {
  if (notify_fd != NULL)
    *notify_fd = -1;
  if (f == NULL)
    return 0;
  unsigned long flags = f->flags | (f->has_notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0);
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &f->prog);
  if (r < 0) {
    if (errno == EACCES)
      return fsrun_error_errno(err, "load the seccomp filter (it needs noNewPrivileges or "
                                    "CAP_SYS_ADMIN)");
    return fsrun_error_errno(err, "load the seccomp filter");
  }
  if (f->has_notify) {
    if (notify_fd != NULL)
      *notify_fd = (int)r;
    else
      close((int)r);
  }
  return 0;
}

bool seccomp_has_notify(const struct fsrun_seccomp *f) {
  return f != NULL && f->has_notify;
}

void seccomp_free(struct fsrun_seccomp *f) {
  if (f == NULL)
    return;
  free(f->prog.filter);
  free(f);
}

void seccomp_freep(struct fsrun_seccomp **f) {
  seccomp_free(*f);
  *f = NULL;
}

/* --- listener
 * --------------------------------------------------------------------------------------- */

/* The runtime-spec's containerProcessState: what a seccomp agent receives with the fd. */
static char *container_process_state(int pid, const char *metadata, const char *state_json) {
  struct strbuf b = {0};
  sb_printf(&b,
            "{\"ociVersion\":\"%s\",\"fds\":[\"seccompFd\"],\"pid\":%d,\"metadata\":", OCI_VERSION,
            pid);
  sb_json_string(&b, metadata, strlen(metadata));
  sb_printf(&b, ",\"state\":%s}", state_json);
  return b.data;
}

int seccomp_send_listener(const char *listener_path, const char *listener_metadata, int notify_fd,
                          int pid, const char *state_json, fsrun_error_t *err) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (listener_path == NULL || strlen(listener_path) >= sizeof(addr.sun_path))
    return fsrun_error_make(err, 0, "linux.seccomp.listenerPath: `%s` is not a usable socket path",
                            listener_path ? listener_path : "");
  if (notify_fd < 0)
    return fsrun_error_make(err, EBADF, "seccomp: no listener fd to send");
  strcpy(addr.sun_path, listener_path);

  cleanup_free char *payload = container_process_state(
      pid, listener_metadata ? listener_metadata : "", state_json ? state_json : "{}");

  cleanup_close int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return fsrun_error_errno(err, "seccomp: socket");
  if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
    return fsrun_error_errno(err, "linux.seccomp.listenerPath: connect to `%s`", listener_path);

  /* The fd travels with the first bytes; the rest of a long state follows on the stream. */
  size_t total = strlen(payload), sent = 0;
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof(control));
  while (sent < total) {
    struct iovec iov = {.iov_base = payload + sent, .iov_len = total - sent};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (sent == 0) {
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof(control.buf);
      struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(cmsg), &notify_fd, sizeof(int));
    }
    ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fsrun_error_errno(err, "seccomp: send the listener fd to `%s`", listener_path);
    }
    sent += (size_t)n;
  }
  return 0;
}
