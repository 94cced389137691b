/* A git index read as git 2.39's read-cache.c reads it (facts from gitformat-index(5) and git's
 * behaviour, no code of it): a v2/v3 entry's name length is the flags' 12 bits (strlen only when
 * they are all set) and the entry is padded to 8 bytes from that length; a v4 entry's name is the
 * previous name's first (length - strip) bytes and a NUL-terminated suffix, whose length is again
 * the flags' (not strlen). A NUL inside a name is walked over as git does (the entry is then
 * unsafe). Whatever git would read differently from a plain walk is refused: an unterminated name,
 * a v2 entry with extended flags, an unknown flag or mode, an unknown required extension,
 * extensions that do not end exactly at the checksum, an EOIE whose offset is not where the entries
 * end, an IEOT whose blocks are not the entries' (git's threaded reader would start elsewhere). */
#include "sandbox-git-index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git-config.h"
#include "sandbox-git.h"
#include "sha1.h"
#include "sha256.h"
#include "utils.h"

#define ENTRY_STAT_BYTES    40 /* ctime, mtime, dev, ino, mode, uid, gid, size */
#define FLAG_ASSUME_VALID   0x8000u
#define FLAG_EXTENDED       0x4000u
#define NAME_MASK           0x0fffu
#define XFLAG_SKIP_WORKTREE 0x4000u
#define XFLAG_INTENT_TO_ADD 0x2000u
#define NAME_MAX_BYTES      65536
#define MODE_GITLINK        0160000u

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const unsigned char *p) {
  return (uint32_t)p[0] << 8 | p[1];
}

/* git's offset varint (v4's strip length) */
static bool read_varint(const unsigned char **p, const unsigned char *end, size_t *out) {
  size_t v;
  unsigned char c;
  if (*p >= end)
    return false;
  c = *(*p)++;
  v = c & 127;
  while (c & 128) {
    if (*p >= end || v > (SIZE_MAX >> 8))
      return false;
    c = *(*p)++;
    v = ((v + 1) << 7) | (c & 127);
  }
  *out = v;
  return true;
}

/* --- entry paths (git's verify_path, with core.protectNTFS and core.protectHFS both on) ------ */

/* the UTF-8 of the code points HFS+ ignores in names (U+200C-200F, U+202A-202E, U+206A-206F,
 * U+FEFF): 3 bytes each, 0 when c is none of them */
static size_t hfs_ignorable(const unsigned char *c, size_t n) {
  if (n < 3)
    return 0;
  if (c[0] == 0xe2 && c[1] == 0x80 &&
      ((c[2] >= 0x8c && c[2] <= 0x8f) || (c[2] >= 0xaa && c[2] <= 0xae)))
    return 3;
  if (c[0] == 0xe2 && c[1] == 0x81 && c[2] >= 0xaa && c[2] <= 0xaf)
    return 3;
  if (c[0] == 0xef && c[1] == 0xbb && c[2] == 0xbf)
    return 3;
  return 0;
}

/* the component as HFS+ compares it: ignorables dropped, ASCII lower-cased, at most max bytes */
static size_t hfs_fold(const char *c, size_t n, char *out, size_t max) {
  size_t len = 0;
  for (size_t i = 0; i < n && len < max;) {
    size_t skip = hfs_ignorable((const unsigned char *)c + i, n - i);
    if (skip) {
      i += skip;
      continue;
    }
    out[len++] = (c[i] >= 'A' && c[i] <= 'Z') ? (char)(c[i] - 'A' + 'a') : c[i];
    i++;
  }
  return len;
}

/* rest is only dots and spaces, or they then a `:` (an NTFS stream name) */
static bool ntfs_tail(const char *rest, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (rest[i] == ':')
      return true;
    if (rest[i] != '.' && rest[i] != ' ')
      return false;
  }
  return true;
}

/* what NTFS opens as `name` (`.git`, `.git. `, `.git::$INDEX_ALLOCATION`, the short name) */
static bool ntfs_names(const char *c, size_t n, const char *name, const char *short_prefix) {
  size_t ln = strlen(name), ls = strlen(short_prefix);
  if (n >= ln && strncasecmp(c, name, ln) == 0 && ntfs_tail(c + ln, n - ln))
    return true;
  return n >= ls && strncasecmp(c, short_prefix, ls) == 0 &&
         (strncmp(short_prefix, "git~", 4) != 0 ||
          (n > ls && c[ls] == '1' && ntfs_tail(c + ls + 1, n - ls - 1)));
}

static const char *component_refused(const char *c, size_t n, unsigned mode) {
  char folded[16];
  size_t f;
  if (n == 0)
    return "an empty path component";
  if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
    return "a `.` or `..` component";
  f = hfs_fold(c, n, folded, sizeof(folded));
  if ((f == 4 && memcmp(folded, ".git", 4) == 0) || ntfs_names(c, n, ".git", "git~"))
    return "a `.git` component";
  if ((mode & 0170000u) == 0120000u && ((f == 11 && memcmp(folded, ".gitmodules", 11) == 0) ||
                                        ntfs_names(c, n, ".gitmodules", "gitmod~")))
    return "a symbolic link named `.gitmodules`";
  return NULL;
}

const char *git_index_path_refused(const char *path, size_t len, unsigned mode) {
  const char *c = path, *end = path + len;
  if (memchr(path, '\0', len) != NULL)
    return "a NUL in the path";
  if (memchr(path, '\\', len) != NULL)
    return "a backslash in the path";
  for (;;) {
    const char *slash = memchr(c, '/', (size_t)(end - c));
    const char *why = component_refused(c, (size_t)((slash ? slash : end) - c), mode);
    if (why != NULL)
      return why;
    if (slash == NULL)
      return NULL;
    c = slash + 1;
  }
}

/* --- the walk -------------------------------------------------------------------------------- */

struct walker {
  const unsigned char *buf, *end; /* end: where the checksum begins */
  size_t hash;
  uint32_t version;
  char *name; /* the previous entry's name (v4's prefix), then this one's */
  size_t name_len;
  size_t copied; /* v4: the bytes this entry's name took of the previous one */
  struct git_index *out;
  git_index_entry_fn *each;
  void *arg;
};

static bool mode_known(uint32_t mode) {
  return mode == 0100644u || mode == 0100755u || mode == 0120000u || mode == MODE_GITLINK;
}

/* the name of the entry whose name field starts at p; *next: past it */
static const char *read_name(struct walker *w, const unsigned char *p, uint32_t flags,
                             const unsigned char **next) {
  size_t len = flags & NAME_MASK, copy = 0, strip, suffix;
  if (w->version == 4) {
    if (!read_varint(&p, w->end, &strip) || strip > w->name_len)
      return "a v4 name strips more than the previous name has";
    copy = w->name_len - strip;
  }
  if (len == NAME_MASK)
    len = strnlen((const char *)p, (size_t)(w->end - p)) + copy;
  if (len < copy || len > NAME_MAX_BYTES)
    return "an entry's name length does not fit its prefix";
  suffix = len - copy;
  if ((size_t)(w->end - p) <= suffix)
    return "an entry's name runs past the end";
  if (p[suffix] != '\0')
    return "an entry's name is not NUL-terminated where its length says";
  if ((w->name = realloc(w->name, len + 1)) == NULL)
    abort();
  memcpy(w->name + copy, p, suffix);
  w->name[len] = '\0';
  w->name_len = len;
  w->copied = copy;
  *next = p + suffix + 1;
  return NULL;
}

static void note_entry(struct walker *w, uint32_t mode, bool hidden) {
  struct git_index *x = w->out;
  const char *why = git_index_path_refused(w->name, w->name_len, mode);
  if (why != NULL && x->unsafe == NULL)
    x->unsafe = memchr(w->name, '\0', w->name_len) != NULL
                    ? xasprintf("an entry's name has a NUL inside (`%s`...)", w->name)
                    : xasprintf("entry `%s`: %s", w->name, why);
  if (mode == MODE_GITLINK)
    sandbox_git_strv_push(&x->gitlinks, &x->n_gitlinks, w->name);
  if (hidden)
    sandbox_git_strv_push(&x->hidden, &x->n_hidden, w->name);
}

/* one entry at *p, *p moved past it */
static const char *read_entry(struct walker *w, const unsigned char **p) {
  const unsigned char *e = *p, *next = NULL;
  size_t fixed = ENTRY_STAT_BYTES + w->hash + 2;
  uint32_t mode, flags, xflags = 0;
  const char *why;
  if ((size_t)(w->end - e) < fixed + 2)
    return "an entry runs past the end";
  mode = be32(e + 24);
  flags = be16(e + fixed - 2);
  if (!mode_known(mode))
    return "an entry's mode is none git writes";
  if (flags & FLAG_EXTENDED) {
    if (w->version < 3)
      return "extended flags in a version 2 index";
    xflags = be16(e + fixed);
    fixed += 2;
    if (xflags & ~(XFLAG_SKIP_WORKTREE | XFLAG_INTENT_TO_ADD))
      return "unknown extended flags";
  }
  why = read_name(w, e + fixed, flags, &next);
  if (why != NULL)
    return why;
  if (w->version == 4) {
    *p = next;
  } else {
    /* padded to 8 bytes from the name's length, 1 to 8 NULs */
    size_t size = (fixed + w->name_len + 8) & ~(size_t)7;
    if ((size_t)(w->end - e) < size)
      return "an entry's padding runs past the end";
    for (size_t i = fixed + w->name_len; i < size; i++)
      if (e[i] != 0)
        return "an entry's padding is not NULs";
    *p = e + size;
  }
  note_entry(w, mode, (flags & FLAG_ASSUME_VALID) || (xflags & XFLAG_SKIP_WORKTREE));
  if (w->each != NULL)
    w->each(w->arg, e, fixed, w->name, w->name_len);
  return NULL;
}

/* IEOT: git's threaded reader starts a block at each offset with no previous name; the blocks
 * must be the entries as the plain walk found them (starts), a v4 block's first name fresh */
static const char *check_ieot(const unsigned char *d, size_t size, const size_t *starts,
                              const bool *fresh, size_t count) {
  size_t done = 0;
  if (size < 4 || (size - 4) % 8 != 0 || be32(d) != 1)
    return "an IEOT extension git would not read as the entries are";
  for (size_t i = 4; i < size; i += 8) {
    size_t off = be32(d + i), n = be32(d + i + 4);
    if (done >= count || starts[done] != off || !fresh[done] || n > count - done)
      return "an IEOT extension whose blocks are not the entries";
    done += n;
  }
  return done == count ? NULL : "an IEOT extension whose blocks are not the entries";
}

static const char *read_extensions(struct walker *w, const unsigned char *p, const size_t *starts,
                                   const bool *fresh, size_t count) {
  size_t entries_end = (size_t)(p - w->buf);
  w->out->ext_start = entries_end;
  while (p < w->end) {
    uint32_t size;
    const char *why = NULL;
    if ((size_t)(w->end - p) < 8 || (size = be32(p + 4)) > (size_t)(w->end - p) - 8)
      return "an extension runs past the checksum";
    if (memcmp(p, "link", 4) == 0)
      w->out->exts |= GIT_INDEX_EXT_LINK;
    else if (memcmp(p, "sdir", 4) == 0)
      w->out->exts |= GIT_INDEX_EXT_SDIR;
    else if (memcmp(p, "UNTR", 4) == 0)
      w->out->exts |= GIT_INDEX_EXT_UNTR;
    else if (memcmp(p, "FSMN", 4) == 0)
      w->out->exts |= GIT_INDEX_EXT_FSMN;
    else if (memcmp(p, "EOIE", 4) == 0 && (size != 4 + w->hash || be32(p + 8) != entries_end))
      why = "an EOIE extension that does not point where the entries end";
    else if (memcmp(p, "IEOT", 4) == 0)
      why = check_ieot(p + 8, size, starts, fresh, count);
    else if (p[0] < 'A' || p[0] > 'Z')
      why = "an unknown required extension";
    if (why != NULL)
      return why;
    p += 8 + size;
  }
  return NULL;
}

static const char *walk(struct walker *w, uint32_t count) {
  const unsigned char *p = w->buf + 12;
  cleanup_free size_t *starts = xmalloc0(sizeof(size_t) * ((size_t)count + 1));
  cleanup_free bool *fresh = xmalloc0(sizeof(bool) * ((size_t)count + 1));
  for (uint32_t i = 0; i < count; i++) {
    const char *why;
    starts[i] = (size_t)(p - w->buf);
    why = read_entry(w, &p);
    if (why != NULL)
      return why;
    fresh[i] = w->version != 4 || w->copied == 0;
  }
  return read_extensions(w, p, starts, fresh, count);
}

void git_index_free(struct git_index *x) {
  sandbox_git_strv_free(x->gitlinks);
  sandbox_git_strv_free(x->hidden);
  free(x->unsafe);
  memset(x, 0, sizeof(*x));
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int git_index_parse(const unsigned char *buf, size_t len, size_t hash, struct git_index *out,
                    const char **why) {
  return git_index_parse_each(buf, len, hash, out, why, NULL, NULL);
}

int git_index_parse_each(const unsigned char *buf, size_t len, size_t hash, struct git_index *out,
                         const char **why, git_index_entry_fn *each, void *arg) {
  struct walker w = {.buf = buf, .hash = hash, .out = out, .each = each, .arg = arg};
  uint32_t count;
  memset(out, 0, sizeof(*out));
  *why = NULL;
  if (len < 12 + hash || memcmp(buf, "DIRC", 4) != 0)
    *why = "not an index (no DIRC header)";
  else if ((w.version = be32(buf + 4)) < 2 || w.version > 4)
    *why = "an index version other than 2, 3 and 4";
  else if ((count = be32(buf + 8)) > (len - 12 - hash) / (ENTRY_STAT_BYTES + hash + 3))
    *why = "more entries than the file can hold";
  else {
    w.end = buf + len - hash;
    *why = walk(&w, count);
  }
  free(w.name);
  if (*why != NULL) {
    git_index_free(out);
    return -1;
  }
  git_index_sort_paths(out->hidden, out->n_hidden);
  return 0;
}

unsigned char *git_index_entries_only(const unsigned char *buf, size_t hash,
                                      const struct git_index *x, size_t *out_len) {
  size_t n = x->ext_start;
  unsigned char *out = xmalloc0(n + hash);
  memcpy(out, buf, n);
  if (hash == 32) {
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, out, n);
    sha256_final(&c, out + n);
  } else {
    sha1_digest(out, n, out + n);
  }
  *out_len = n + hash;
  return out;
}

bool git_index_entries_end_like_eoie(const unsigned char *buf, size_t hash,
                                     const struct git_index *x) {
  /* EOIE: "EOIE", its size (4 + hash), an offset, a hash; then the file's checksum */
  size_t eoie = 8 + 4 + hash;
  return x->ext_start >= 12 + eoie && memcmp(buf + x->ext_start - eoie, "EOIE", 4) == 0;
}

void git_index_sort_paths(char **paths, size_t n) {
  if (n > 1)
    qsort(paths, n, sizeof(char *), cmp_str);
}

bool git_index_listed(char *const *sorted, size_t n, const char *path) {
  return sorted != NULL && bsearch(&path, sorted, n, sizeof(char *), cmp_str) != NULL;
}

/* --- the repository's object format ---------------------------------------------------------- */

/* extensions.objectFormat's last value; a bare `objectformat` (git refuses it) changes nothing */
static void on_object_format(void *arg, const char *key, const char *value) {
  size_t *hash = arg;
  if (value != NULL && strcmp(key, "extensions.objectformat") == 0)
    *hash = strcasecmp(value, "sha256") == 0 ? 32 : 20;
}

/* git reads the repository's format from its own config alone, includes not followed
 * (setup.c, read_repository_format), and so does this */
size_t git_config_hash_size(const char *config) {
  size_t hash = 20;
  git_config_each(config, config != NULL ? strlen(config) : 0, on_object_format, &hash);
  return hash;
}
