#ifndef FSRUN_PREFAULT_H
#define FSRUN_PREFAULT_H

#include <stddef.h>

/* Page faults are the dearest part of a short-lived process on a virtual machine that shadows
 * guest page tables: a read fault on the binary costs tens of microseconds, a write fault on fresh
 * memory over ten, while madvise(MADV_POPULATE_*) maps hundreds of pages for the price of a few.
 * Best effort: without MADV_POPULATE_* (Linux < 5.14) nothing happens. */

/* Maps fsrun's own code and read-only data at once. Only for a command that runs most of the image
 * (`fsrun sandbox`): the others (create, run, exec, start, delete) and the init run too little of
 * it for a populate of the whole to pay (tests/bench/README.md, sessions 17 and 21). */
void prefault_image(void);

/* Lets malloc's heap start with `bytes` already backed (taken before the first allocations). Only
 * `fsrun sandbox` asks: the other commands use less of it than the populate costs (session 21). */
void prefault_heap(size_t bytes);

/* Once a child that shared our memory copy-on-write (a clone without CLONE_VM) has exited or
 * exec'd, our pages are ours alone but still write-protected: each first write faults (~20 us on
 * the development VM). Makes the heap and the writable data writable in one call (~0.5 us a page).
 * Never while such a child still shares them: every page would be copied. */
void prefault_after_child(void);

#endif
