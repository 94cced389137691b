/* A reader of git's config file syntax (git-config(1), "CONFIGURATION FILE"): sections, quoted
 * and legacy subsections, quoted values with escapes, comments, continuation lines. No includes:
 * the caller decides whether to follow `include.path`. */
#ifndef FSRUN_GIT_CONFIG_H
#define FSRUN_GIT_CONFIG_H

/* Calls fn for each variable of text, in order: key as git names it ("section.subsection.name",
 * section and name lower-cased, the subsection as written), value NULL for a bare `name` (true).
 * Stops at the first line git would refuse. */
void git_config_each(const char *text, void (*fn)(void *arg, const char *key, const char *value),
                     void *arg);

#endif
