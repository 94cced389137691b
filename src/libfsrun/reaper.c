#include "reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process.h"
#include "sealed-exe.h"
#include "status.h"
#include "sync.h"
#include "tiny-init.h"

int reaper_wanted(const oci_config *config, bool *wanted, fsrun_error_t *err) {
  const char *value = oci_map_get(&config->annotations, REAPER_ANNOTATION);
  *wanted = value != NULL && strcmp(value, "true") == 0;
  if (value != NULL && !*wanted && strcmp(value, "false") != 0)
    return fsrun_error_make(
        err, EINVAL, "annotations[\"" REAPER_ANNOTATION "\"]: `%s` is neither true nor false",
        value);
  return 0;
}

/* The init is a fork of the runtime: without this, /proc/1/cmdline would show the container
 * the runtime's command line (state root, bundle path, container id). The argument strings lie
 * one after the other from argv[0]; /proc/self/cmdline says how far. */
static void hide_runtime_cmdline(void) {
  char buf[4096];
  size_t total = 0;
  ssize_t n;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while ((n = read(fd, buf, sizeof(buf))) > 0)
      total += (size_t)n;
    close(fd);
  }
  (void)prctl(PR_SET_NAME, "fsrun-init", 0, 0, 0);
  if (total > 0 && program_invocation_name != NULL) {
    memset(program_invocation_name, 0, total);
    strncpy(program_invocation_name, "fsrun-init", total - 1);
  }
}

static char *env_block_start, *env_block_end;

void reaper_note_env_block(char *const envp[]) {
  size_t n = 0;
  if (envp == NULL || envp[0] == NULL)
    return;
  while (envp[n + 1] != NULL)
    n++;
  /* only the kernel's layout: ascending and contiguous; anything else is left alone */
  if (envp[n] < envp[0])
    return;
  env_block_start = envp[0];
  env_block_end = envp[n] + strlen(envp[n]) + 1;
}

static void hide_runtime_environ(void) {
  if (env_block_start != NULL)
    memset(env_block_start, 0, (size_t)(env_block_end - env_block_start));
}

static int status_of(int wstatus) {
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  return 128 + WTERMSIG(wstatus);
}

static _Noreturn void reap_until(pid_t child, int status_fd) {
  sigset_t all;
  sigfillset(&all);
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(&all, &info);
    if (sig < 0)
      continue;
    if (sig != SIGCHLD) {
      /* to its process group, as a terminal would: a shell waiting for a command ignores a
       * SIGINT the command does not also get */
      if (kill(-child, sig) < 0)
        (void)kill(child, sig);
      continue;
    }
    for (;;) {
      int wstatus;
      pid_t pid = waitpid(-1, &wstatus, WNOHANG);
      if (pid <= 0)
        break;
      if (pid == child) {
        /* the status alone cannot tell `exit 137` from SIGKILL: the runtime gets the real one */
        if (status_fd >= 0)
          (void)sync_send(status_fd, SYNC_EXIT_STATUS, 0, &wstatus, sizeof(wstatus), -1);
        _exit(status_of(wstatus));
      }
    }
  }
}

/* `exec` joins the container through the init (setns on its pidfd), which the kernel allows only
 * to whoever may ptrace-read it. Cloned, not exec'd, inside the user namespace, its memory belongs
 * to the host's user namespace: non-dumpable, only CAP_SYS_PTRACE there passes, and an ordinary
 * user could never exec into its own container. So the init, all inside by then (root, mounts,
 * creds, seccomp, Landlock; no host fd), hides the runtime's command line and environment and
 * becomes dumpable: before `start` returns (the exec fifo's close), so that an `exec` right after
 * `start` can join it (exec-status.bats once got EPERM when this came after the command's vfork).
 */
static void reaper_make_joinable(void) {
  /* once the process runs, it may read /proc/1/comm and /proc/1/cmdline at once (init.bats saw
   * `fsrun` there under load when this came after the vfork) */
  hide_runtime_cmdline();
  /* dumpable, /proc/1/environ is readable: the caller's variables go first */
  hide_runtime_environ();
  /* a `fsrun sandbox` that skipped the protected image for the tiny init runs from the binary on
   * disk: dumpable, its /proc/1/exe would lead the container to that file */
  if (sealed_exe_running())
    (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The process, in the child: its own process group (signals the terminal sends reach it once,
 * not also pid 1, which would forward them a second time), its signal mask, its execve. */
static _Noreturn void exec_child(const char *exe, char *const argv[], char *const envp[],
                                 const sigset_t *child_mask, bool terminal) {
  (void)setpgid(0, 0);
  if (terminal)
    (void)tcsetpgrp(STDIN_FILENO, getpid());
  sigprocmask(SIG_SETMASK, child_mask, NULL);
  process_exec(exe, argv, envp);
}

/* `start` fails unless it reads this before EOF: a failed fork (a pids limit) or our death leaves
 * the container without its process. A `start` gone meanwhile (EPIPE) is no one's business, but
 * the SIGPIPE it raised is held (every signal is) and must not reach the process as if sent: it
 * is taken back (ours is the thread's own; one from outside stays queued for the process). */
static void tell_start_forked(int exec_fifo) {
  const char forked = EXEC_FIFO_FORKED;
  if (write(exec_fifo, &forked, 1) < 0 && errno == EPIPE) {
    const struct timespec now = {0};
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    (void)sigtimedwait(&pipe, NULL, &now);
  }
}

/* With the exec fifo (create's `start`): the process forked now, while we are not dumpable (it
 * inherits that until its execve, which closes the CLOEXEC fifo before it sets the new program's
 * dumpability), held until a SIGCONT. We close our end right after: pid 1 never holds the fifo
 * once it is dumpable (then a process exec'd into the container could take it with pidfd_getfd
 * and keep `start` waiting). Whoever becomes pid 1's program lets it go once it is joinable: the
 * process's execve closes the fifo and `start` returns, with the process there and pid 1
 * joinable. */
static pid_t fork_held(const char *exe, char *const argv[], char *const envp[],
                       const sigset_t *child_mask, bool terminal, int exec_fifo) {
  pid_t child = fork();
  if (child == 0) {
    sigset_t go;
    sigemptyset(&go);
    sigaddset(&go, SIGCONT);
    while (sigwaitinfo(&go, NULL) < 0)
      ;
    exec_child(exe, argv, envp, child_mask, terminal);
  }
  if (child > 0)
    tell_start_forked(exec_fifo);
  close(exec_fifo);
  if (child < 0) {
    dprintf(STDERR_FILENO, "fsrun: annotations[\"%s\"]: fork the process: %s\n", REAPER_ANNOTATION,
            strerror(errno));
    _exit(1);
  }
  return child;
}

/* When the tiny init cannot be exec'd (a seccomp profile that denies execveat, a host whose
 * memfds may not be executed): this process stays pid 1, a clone of the runtime. `held`: the
 * process fork_held made, let go now that we are joinable. */
static _Noreturn void reap_in_place(const char *exe, char *const argv[], char *const envp[],
                                    const sigset_t *child_mask, bool terminal, int status_fd,
                                    pid_t held) {
  pid_t child = held;
  /* vfork: the child shares our memory until its execve, so there is no copy of the init's
   * address space to make, fault in and tear down again. It calls only what it needs and never
   * returns from here. */
  if (child <= 0)
    child = vfork();
  if (child == 0)
    exec_child(exe, argv, envp, child_mask, terminal);
  if (child < 0) {
    dprintf(STDERR_FILENO, "fsrun: annotations[\"%s\"]: fork the process: %s\n", REAPER_ANNOTATION,
            strerror(errno));
    _exit(1);
  }
  if (held > 0)
    (void)kill(held, SIGCONT);
  reap_until(child, status_fd);
}

void reaper_exec(const char *exe, char *const argv[], char *const envp[],
                 const sigset_t *child_mask, bool terminal, int status_fd, int image_fd,
                 int exec_fifo) {
  pid_t held = 0;
  sigset_t all;
  /* blocked from before the fork, so that none is lost before the init waits for them */
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  /* with the exec fifo, the process is forked first and holds it (fork_held); ours closes before
   * the exec makes pid 1 dumpable. Without (`run`, the sandbox) the tiny init forks it. */
  if (exec_fifo >= 0)
    held = fork_held(exe, argv, envp, child_mask, terminal, exec_fifo);
  tiny_init_exec(image_fd, exe, argv, envp, child_mask, terminal, status_fd, held);
  reaper_make_joinable();
  reap_in_place(exe, argv, envp, child_mask, terminal, status_fd, held);
}
