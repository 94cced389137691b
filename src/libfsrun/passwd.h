/* /etc/passwd, read directly rather than through NSS: fsrun is a static binary (glibc's NSS would
 * load shared modules of the build's glibc), and inside a container only the image's file counts.
 */
#ifndef FSRUN_PASSWD_H
#define FSRUN_PASSWD_H

#include <sys/types.h>

#include "oci.h"

#define PASSWD_NAME 0
#define PASSWD_HOME 5

/* Field PASSWD_NAME or PASSWD_HOME of uid's first entry in the passwd file at path, or NULL: no
 * entry, or not a regular file (a FIFO or device an image puts there must not block or flood us;
 * files past 16 MiB are read that far). Caller frees. */
char *passwd_field_of(const char *path, uid_t uid, int field);
/* The same for the first entry named name (not empty). */
char *passwd_field_of_name(const char *path, const char *name, int field);

/* "HOME=..." for a process of uid whose env has no HOME (NULL when it has one): the home of uid
 * in /etc/passwd of the current root, or "/" when there is no entry, it is empty or the file
 * cannot be read, as runc does. Called inside the container's root. Caller frees. */
char *passwd_home_env(const oci_strv *env, uid_t uid);

#endif
