#include "prefault.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* the linker's: the first byte of the image, the start of its writable data, and its end */
extern char __executable_start[];
extern char __data_start[];
extern char _end[];

static uintptr_t heap_start; /* prefault_heap's first allocation, page-aligned */

static uintptr_t page_down(uintptr_t a) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  return a & ~(page - 1);
}

void prefault_image(void) {
  uintptr_t start = page_down((uintptr_t)__executable_start);
  uintptr_t end = page_down((uintptr_t)__data_start);
  if (end > start)
    (void)madvise((void *)start, end - start, MADV_POPULATE_READ);
}

void prefault_heap(size_t bytes) {
  /* malloc grows the heap by its request plus M_TOP_PAD: ask for enough headroom, then back what
   * the first allocation has reserved */
  void *first;
  uintptr_t start, end;
  if (mallopt(M_TOP_PAD, (int)bytes) == 0)
    return;
  first = malloc(1);
  if (first == NULL)
    return;
  start = page_down((uintptr_t)first);
  end = (uintptr_t)sbrk(0);
  free(first);
  heap_start = start;
  if (end > start && end - start <= 2 * bytes)
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

static void populate_write(uintptr_t start, uintptr_t end) {
  if (end > start)
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

void prefault_after_child(void) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  populate_write(page_down((uintptr_t)__data_start), ((uintptr_t)_end + page - 1) & ~(page - 1));
  if (heap_start != 0)
    populate_write(heap_start, page_down((uintptr_t)sbrk(0)));
}
