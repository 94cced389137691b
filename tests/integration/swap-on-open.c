/* swap-on-open MARKED A B READY [BACK...]: holds the first open of MARKED (a file or directory)
 * by another process (a fanotify permission event), exchanges the names A and B (renameat2
 * RENAME_EXCHANGE) while that open waits, then lets it go on and exits. "ready" is written to the
 * fifo READY once the mark is set. With BACK paths (looked up after the exchange), the first open
 * of any of them after that exchanges A and B again (back) before it goes on. A test's
 * deterministic "the name changed right after fsrun's check" (the first directory fsrun's tamper
 * walk opens below the worktree's top comes after the top's check), and "back before the next".
 * Needs CAP_SYS_ADMIN (the test runs it as root). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <unistd.h>

static int die(const char *what) {
  perror(what);
  return 1;
}

static int exchange(const char *a, const char *b) {
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

/* path's object, or (path NULL) dir's */
static int mark(int fan, unsigned int how, int dir, const char *path) {
  return fanotify_mark(fan, how, FAN_OPEN_PERM | FAN_ONDIR, dir, path);
}

static int allow(int fan, int fd) {
  struct fanotify_response r = {.fd = fd, .response = FAN_ALLOW};
  return write(fan, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : -1;
}

int main(int argc, char **argv) {
  struct fanotify_event_metadata ev[16];
  int fan, ready, marked, swaps = 0;
  ssize_t n;
  if (argc < 5) {
    fprintf(stderr, "usage: %s MARKED A B READY [BACK...]\n", argv[0]);
    return 2;
  }
  fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
  if (fan < 0)
    return die("fanotify_init");
  /* held: its name is among those swapped */
  marked = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (marked < 0 || mark(fan, FAN_MARK_ADD, marked, NULL) < 0)
    return die("fanotify_mark");
  ready = open(argv[4], O_WRONLY | O_CLOEXEC);
  if (ready < 0 || write(ready, "ready\n", 6) != 6)
    return die("ready");
  close(ready);
  while ((n = read(fan, ev, sizeof(ev))) > 0) {
    for (struct fanotify_event_metadata *e = ev; FAN_EVENT_OK(e, n); e = FAN_EVENT_NEXT(e, n)) {
      bool ours = e->pid == getpid();
      if (!ours && exchange(argv[2], argv[3]) < 0)
        return die("renameat2");
      /* the back marks are set while the open that swapped still waits */
      if (!ours && swaps == 0 && argc > 5 && mark(fan, FAN_MARK_REMOVE, marked, NULL) < 0)
        return die("fanotify_mark remove");
      for (int i = 5; !ours && swaps == 0 && i < argc; i++)
        if (mark(fan, FAN_MARK_ADD, AT_FDCWD, argv[i]) < 0)
          return die("fanotify_mark back");
      if (allow(fan, e->fd) < 0)
        return die("fanotify response");
      close(e->fd);
      if (ours)
        continue;
      printf("%s on the open by pid %d\n", swaps == 0 ? "swapped" : "swapped back", (int)e->pid);
      fflush(stdout);
      if (++swaps == (argc > 5 ? 2 : 1))
        return 0;
    }
  }
  return die("fanotify read");
}
