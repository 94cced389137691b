/* A `.git` file's text read as git reads it (git 2.39 setup.c, read_gitfile_gently, review27 E2):
 * the whole file, `gitdir: ` and then the path, only trailing LF and CR stripped. A reader that
 * cut at the first line break took `gitdir: cd\nx` for `cd` where git goes to `cd\nx`. A path git
 * would take with a control character or NUL in it (git never writes one) is not read at all. */
#include "sandbox-git.h"

#include <string.h>

#define GITFILE_PREFIX "gitdir: "

enum sandbox_git_gitfile sandbox_git_gitfile_parse(char *text, size_t len, const char **path) {
  size_t prefix = strlen(GITFILE_PREFIX);
  *path = NULL;
  if (len < prefix || memcmp(text, GITFILE_PREFIX, prefix) != 0)
    return SANDBOX_GIT_GITFILE_NONE; /* git: "invalid gitfile format", no repository */
  while (len > prefix && (text[len - 1] == '\n' || text[len - 1] == '\r'))
    len--;
  if (len == prefix)
    return SANDBOX_GIT_GITFILE_NONE; /* git: "no path in gitfile" */
  for (size_t i = prefix; i < len; i++)
    if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
      return SANDBOX_GIT_GITFILE_ODD;
  text[len] = '\0';
  *path = text + prefix;
  return SANDBOX_GIT_GITFILE_PATH;
}
