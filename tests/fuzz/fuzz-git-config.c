/* libFuzzer target for git-config.c, the reader of git's config syntax that fsrun runs on the host,
 * as the caller, over files a sandboxed run may have written (an included worktree .gitconfig). The
 * input is handed over as read_text does: a heap buffer of exactly its length plus the NUL, so
 * ASan sees any read past it (review20 J). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* what git-config.c takes from utils.c */
void *xmalloc0(size_t size);
void cleanup_freep(void *p);

void *xmalloc0(size_t size) {
  void *p = calloc(1, size);
  if (p == NULL)
    abort();
  return p;
}

void cleanup_freep(void *p) {
  free(*(void **)p);
}

static void each(void *arg, const char *key, const char *value) {
  size_t *n = arg;
  *n += strlen(key) + (value ? strlen(value) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  size_t n = 0;
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  git_config_each(text, size, each, &n);
  free(text);
  return 0;
}
