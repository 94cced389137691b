/* The tiny program's entry (src/tiny-init): what a container's pid 1 becomes (tiny-init.c), exec'd
 * by fsrun from a sealed memfd (tiny-init.h); and the helpers it needs without a C library. */
#include "tiny-sys.h"

/* the compiler may call these for copies and zeroing even in a freestanding program */
void *memset(void *s, int c, size_t n) {
  unsigned char *p = s;
  while (n--)
    *p++ = (unsigned char)c;
  return s;
}

void *memcpy(void *d, const void *s, size_t n) {
  unsigned char *o = d;
  const unsigned char *i = s;
  while (n--)
    *o++ = *i++;
  return d;
}

/* glibc's strerror text for what execve and fork can return */
static const char *error_text(long e) {
  switch (e) {
  case 1:
    return "Operation not permitted";
  case 2:
    return "No such file or directory";
  case 5:
    return "Input/output error";
  case 7:
    return "Argument list too long";
  case 8:
    return "Exec format error";
  case 11:
    return "Resource temporarily unavailable";
  case 12:
    return "Cannot allocate memory";
  case 13:
    return "Permission denied";
  case 14:
    return "Bad address";
  case 20:
    return "Not a directory";
  case 21:
    return "Is a directory";
  case 22:
    return "Invalid argument";
  case 24:
    return "Too many open files";
  case 26:
    return "Text file busy";
  case 36:
    return "File name too long";
  case 40:
    return "Too many levels of symbolic links";
  case 80:
    return "Accessing a corrupted shared library";
  default:
    return "Unknown error";
  }
}

struct line {
  char buf[1024];
  size_t len;
};

static void put(struct line *l, const char *s) {
  while (*s && l->len < sizeof(l->buf) - 1)
    l->buf[l->len++] = *s++;
}

void report(const char *what, const char *arg, long err) {
  struct line l;
  l.len = 0;
  put(&l, "fsrun: ");
  put(&l, what);
  if (arg != NULL) {
    put(&l, " \"");
    put(&l, arg);
    put(&l, "\"");
  }
  put(&l, ": ");
  put(&l, error_text(err));
  l.buf[l.len++] = '\n';
  SYS(__NR_write, 2, l.buf, l.len);
}

_Noreturn void tiny_main(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  tiny_init_main(argc, argv);
}

__asm__(".text\n"
        ".global _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call tiny_main\n"
        "  hlt\n");
