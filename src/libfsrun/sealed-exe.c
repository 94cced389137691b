#include "sealed-exe.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define FSRUN_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static bool is_sealed_copy(int fd) {
  int seals = fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & FSRUN_SEALS) == FSRUN_SEALS;
}

static int copy_all(int from, int to, off_t size, fsrun_error_t *err) {
  off_t done = 0;
  while (done < size) {
    ssize_t n = sendfile(to, from, NULL, (size_t)(size - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fsrun_error_errno(err, "copy the runtime binary into its sealed memfd");
    done += n;
  }
  return 0;
}

/* The bytes of the image execve needs: up to the end of the last segment in the file. What follows
 * (debug info, symbol and section tables: half of an unstripped fsrun) is left out of the copy. */
static off_t image_size(int fd, off_t file_size) {
  Elf64_Ehdr eh;
  off_t end = 0;
  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return file_size;
  end = (off_t)(eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr));
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
      return file_size;
    if ((off_t)(ph.p_offset + ph.p_filesz) > end)
      end = (off_t)(ph.p_offset + ph.p_filesz);
  }
  return end > 0 && end <= file_size ? end : file_size;
}

int sealed_exe_ensure(char **argv, fsrun_error_t *err) {
  extern char **environ;
  cleanup_close int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  cleanup_close int copy = -1;
  struct stat st;

  if (exe < 0)
    return fsrun_error_errno(err, "open the runtime binary (/proc/self/exe)");
  /* memcheck cannot follow an execveat of a memfd. The copy only guards the binary on disk, which
   * no container can reach through a process valgrind runs: it cannot clone3 one. */
  if (RUNNING_ON_VALGRIND)
    return 0;
  if (is_sealed_copy(exe)) {
    /* execveat named us after the fd ("3"): ps, pgrep and the kernel's messages say fsrun */
    (void)prctl(PR_SET_NAME, "fsrun", 0, 0, 0);
    return 0;
  }
  if (fstat(exe, &st) < 0)
    return fsrun_error_errno(err, "stat the runtime binary");
  copy = memfd_create("fsrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0)
    return fsrun_error_errno(err, "memfd_create the runtime binary's sealed copy");
  if (copy_all(exe, copy, image_size(exe, st.st_size), err) < 0)
    return fsrun_error_code(err);
  if (fcntl(copy, F_ADD_SEALS, FSRUN_SEALS) < 0)
    return fsrun_error_errno(err, "seal the runtime binary's memfd copy");
  syscall(SYS_execveat, copy, "", argv, environ, AT_EMPTY_PATH);
  return fsrun_error_errno(err, "re-execute fsrun from its sealed memfd copy");
}
