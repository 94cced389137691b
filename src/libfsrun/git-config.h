/* A reader of git's config file syntax (git-config(1), "CONFIGURATION FILE"): sections, quoted
 * and legacy subsections, quoted values with escapes, comments, continuation lines. No includes:
 * the caller decides whether to follow `include.path`. */
#ifndef FSRUN_GIT_CONFIG_H
#define FSRUN_GIT_CONFIG_H

#include <stddef.h>

/* Calls fn for each variable of text[0, len), in order: key as git names it
 * ("section.subsection.name", section and name lower-cased, the subsection as written), value NULL
 * for a bare `name` (true). A NUL byte is read as git reads it: skipped in a comment, the end of a
 * value as git's callbacks see it (the rest of its line still parsed), a refused line elsewhere.
 * Stops at the first line git would refuse. */
void git_config_each(const char *text, size_t len,
                     void (*fn)(void *arg, const char *key, const char *value), void *arg);

#endif
