/* SHA-1 (FIPS 180-4), only for the trailing checksum git expects on an index fsrun rewrites (not
 * for anything that needs collision resistance). Small and dependency-free. */
#ifndef FSRUN_SHA1_H
#define FSRUN_SHA1_H

#include <stddef.h>
#include <stdint.h>

void sha1_digest(const void *data, size_t len, uint8_t out[20]);

#endif
