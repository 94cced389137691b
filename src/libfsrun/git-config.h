/* A reader of git's config file syntax (git-config(1), "CONFIGURATION FILE"): sections, quoted
 * and legacy subsections, quoted values with escapes, comments, continuation lines. No includes:
 * the caller decides whether to follow `include.path`. */
#ifndef FSRUN_GIT_CONFIG_H
#define FSRUN_GIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Calls fn for each variable of text[0, len), in order: key as git names it
 * ("section.subsection.name", section and name lower-cased, the subsection as written; a key
 * before any section is its bare name, as git hands it on), value NULL for a bare `name` (true).
 * CR LF is read as LF. A NUL byte is read as git reads it: skipped in a comment, the end of a key
 * or value as git's callbacks see it (the rest of its line still parsed), a refused line
 * elsewhere. Nothing is cut, whatever its length. Returns true when the whole text was read;
 * false when it stopped at a line git refuses (git dies reading the file): what follows is
 * unread, and a caller must count the file as one fsrun cannot read, never as "nothing set". */
bool git_config_each(const char *text, size_t len,
                     void (*fn)(void *arg, const char *key, const char *value), void *arg);

#endif
