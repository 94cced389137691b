/* What fsrun hands its tiny program (src/tiny-init) in each of its roles. Shared by both programs,
 * so it uses fixed-size fields only (the tiny program has no C library). */
#ifndef FSRUN_TINY_PARAMS_H
#define FSRUN_TINY_PARAMS_H

#include <stdint.h>

#define TINY_INIT_MAGIC   0x49525346u /* "FSRI" */
#define TINY_INIT_VERSION 2u

/* The block: this header, then argc + 1 + envc + 1 offsets (uint64_t, from the start of the
 * block; 0 ends each list), then the NUL-terminated strings they point to. The tiny init turns
 * the offsets into pointers in place (a private mapping of the block). */
struct tiny_init_params {
  uint32_t magic;
  uint32_t version;
  int32_t status_fd;        /* where the process's wait status goes as the init exits, or -1 */
  uint32_t status_msg_type; /* the sync message that carries it (SYNC_EXIT_STATUS) */
  uint32_t terminal;        /* 1: make the process the terminal's foreground group */
  uint32_t argc;
  uint32_t envc;
  int32_t child;       /* > 0: the process, forked by fsrun's init and held (it waits for a
                        * SIGCONT before its execve); 0: the tiny init forks it */
  uint64_t child_mask; /* the process's signal mask (signal N is bit N-1) */
  uint64_t exe;        /* offset of the executable's path */
  uint64_t ptrs[];     /* argv offsets, 0, envp offsets, 0 */
};

/* The watchdog's messages (tiny-watchdog.c, sandbox-watchdog.c): one per SOCK_SEQPACKET packet
 * from the runtime; the watchdog answers with one byte, 't' (the deadline passed) or 'c' (the CPU
 * budget was spent), when it has ended what it watched. */
struct tiny_watch_msg {
  char kind;     /* 'c' a container, 'n' a native process group, 'i' the container's init (create's
                  * pidfd on it attached), 'u' its cgroup's CPU time (the file's fd attached),
                  * 'd' disarm, 'm' the ended container's mount namespace (its fd attached), to
                  * close at once: its teardown then overlaps the runtime's clean-up */
  char usage_v2; /* 'u': cgroup v2's cpu.stat (usage_usec), else v1's cpuacct.usage (ns) */
  char reserved[2];
  int32_t pid;           /* 'n': the group */
  int64_t deadline;      /* CLOCK_MONOTONIC ms; 0: none */
  int64_t cpu_budget_ms; /* 'c': the CPU time the container's cgroup may use; 0: no budget */
  char id[1025];         /* 'c': the container's id (status_validate_id: at most 1024) */
};

/* How often a watchdog whose deadline has passed kills again, and how often it reads the CPU time
 * of a container with a budget (a command can overrun its budget by up to this much CPU time per
 * core before it is seen). */
#define TINY_WATCH_POLL_MS     100
#define TINY_WATCH_NO_DEADLINE INT64_MAX

/* Both watchdogs' poll timeout (ms; -1: none) for their state: armed, fired, the deadline
 * (CLOCK_MONOTONIC ms, TINY_WATCH_NO_DEADLINE: none) against now, whether a CPU budget applies. */
static inline int tiny_watch_timeout(int armed, int fired, int64_t deadline, int64_t now,
                                     int has_budget) {
  int timeout = -1;
  if (armed && fired) {
    timeout = TINY_WATCH_POLL_MS;
  } else if (armed && deadline != TINY_WATCH_NO_DEADLINE) {
    int64_t left = deadline - now;
    timeout = left < 0 ? 0 : left > 3600 * 1000 ? 3600 * 1000 : (int)left;
  }
  if (!fired && has_budget && (timeout < 0 || timeout > TINY_WATCH_POLL_MS))
    timeout = TINY_WATCH_POLL_MS;
  return timeout;
}

/* What the watchdog (tiny-watchdog.c) is given: from its argv when exec'd, in memory when fsrun
 * clones it (sandbox-watchdog.c). */
struct tiny_watchdog_args {
  int sock;          /* its end of the runtime's socket */
  int exe_fd;        /* fsrun's executable (O_PATH), for the cleanup after the runtime's death */
  int parent;        /* the runtime's pid */
  const char *prime; /* the pids cgroup.procs to move itself into first, or "" */
  char **cleanup;    /* the cleanup's argv but the container id (NULL-terminated) */
  char **envp;       /* the cleanup's environment */
};

/* tiny-watchdog.c: the watchdog's loop; it never returns */
_Noreturn void tiny_watchdog_run(const struct tiny_watchdog_args *a);

#endif
