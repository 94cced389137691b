/* The system's libseccomp header. Our own src/libfsrun/seccomp.h shadows <seccomp.h> on the include
 * path, so include this one (with angle brackets, so that it is found through -I src/libfsrun) and
 * let #include_next continue the search past src/libfsrun to the system directories. */
#ifndef FSRUN_LIBSECCOMP_H
#define FSRUN_LIBSECCOMP_H

#include_next <seccomp.h>

#endif
