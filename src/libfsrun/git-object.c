/* git's loose object format (gitformat-loose(5)): zlib of "<type> <decimal size>\0<data>", named by
 * the hash of the uncompressed bytes in the repository's object format. */
#include "git-object.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sha1.h"
#include "sha256.h"
#include "utils.h"

#define HEADER_MAX 32 /* "commit " and 20 digits and the NUL fit */
#define CHUNK      65536

struct object_hash {
  bool sha256;
  struct sha1_ctx sha1;
  struct sha256_ctx sha2;
};

static void hash_update(struct object_hash *h, const void *p, size_t n) {
  if (h->sha256)
    sha256_update(&h->sha2, p, n);
  else
    sha1_update(&h->sha1, p, n);
}

static bool hash_is(struct object_hash *h, const char *id) {
  static const char hex[] = "0123456789abcdef";
  uint8_t digest[32];
  size_t n = h->sha256 ? 32 : 20;
  if (h->sha256)
    sha256_final(&h->sha2, digest);
  else
    sha1_final(&h->sha1, digest);
  for (size_t i = 0; i < n; i++)
    if (id[i * 2] != hex[digest[i] >> 4] || id[i * 2 + 1] != hex[digest[i] & 15])
      return false;
  return true;
}

/* the header's "<type> <size>": a known type and a decimal size without a leading zero */
static bool parse_header(const char *h, uint64_t *size) {
  static const char *const types[] = {"blob ", "tree ", "commit ", "tag ", NULL};
  const char *p = NULL;
  for (const char *const *t = types; *t != NULL && p == NULL; t++)
    if (strncmp(h, *t, strlen(*t)) == 0)
      p = h + strlen(*t);
  if (p == NULL || *p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
    return false;
  for (*size = 0; *p >= '0' && *p <= '9'; p++) {
    if (*size > (UINT64_MAX - 9) / 10)
      return false;
    *size = *size * 10 + (uint64_t)(*p - '0');
  }
  return *p == '\0' && *size <= GIT_OBJECT_MAX_SIZE;
}

struct object_stream {
  int in, out;
  uint64_t read, max_in;
};

struct object_reader {
  struct object_hash hash;
  char header[HEADER_MAX];
  size_t header_len;
  bool header_done;
  uint64_t size, seen; /* the data's size as the header says, and as inflated so far */
  uint64_t max_size;   /* the most the header may say */
};

/* n inflated bytes: the header until its NUL, then data; false when the header is wrong or the data
 * is longer than it says */
static bool take(struct object_reader *r, const char *p, size_t n, const char **why) {
  hash_update(&r->hash, p, n);
  while (!r->header_done && n > 0) {
    if (r->header_len == HEADER_MAX) {
      *why = "no object header";
      return false;
    }
    r->header[r->header_len++] = *p;
    r->header_done = *p == '\0';
    p++, n--;
    if (r->header_done && !parse_header(r->header, &r->size)) {
      *why = "a bad object header";
      return false;
    }
    if (r->header_done && r->size > r->max_size) {
      *why = "more data than the sync may still inflate";
      return false;
    }
  }
  r->seen += n;
  if (r->header_done && r->seen > r->size) {
    *why = "more data than its header says";
    return false;
  }
  return true;
}

/* the next chunk of the stream from s->in into buf, and to s->out (when >= 0) before it is
 * inflated: what is written is what is checked, and at most one chunk past the first error */
static ssize_t next_chunk(struct object_stream *s, unsigned char *buf, size_t size,
                          const char **why) {
  ssize_t n = read(s->in, buf, size);
  if (n > 0 && (s->read += (uint64_t)n) > s->max_in) {
    *why = "a larger file than an object may be";
    return -1;
  }
  if (n > 0 && s->out >= 0 && safe_write_all(s->out, buf, (size_t)n) < 0) {
    *why = "cannot be written";
    return -1;
  }
  if (n <= 0)
    *why = n < 0 ? "unreadable" : "a truncated zlib stream";
  return n;
}

static int inflate_all(struct object_stream *s, z_stream *z, struct object_reader *r,
                       const char **why) {
  unsigned char in[CHUNK], out[CHUNK];
  int rc = Z_OK;
  ssize_t n;
  while (rc != Z_STREAM_END) {
    if (z->avail_in == 0) {
      if ((n = next_chunk(s, in, sizeof(in), why)) <= 0)
        return -1;
      z->next_in = in;
      z->avail_in = (uInt)n;
    }
    z->next_out = out;
    z->avail_out = sizeof(out);
    rc = inflate(z, Z_NO_FLUSH);
    if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) ||
        !take(r, (const char *)out, sizeof(out) - z->avail_out, why)) {
      *why = rc == Z_DATA_ERROR ? "not a zlib stream" : *why ? *why : "cannot be inflated";
      return -1;
    }
  }
  /* git refuses bytes after the stream */
  if (z->avail_in > 0 || read(s->in, in, 1) != 0) {
    *why = "garbage after the zlib stream";
    return -1;
  }
  return 0;
}

int git_loose_object_copy(int in, int out, uint64_t max_in, uint64_t *inflate_budget,
                          const char *id, const char **why) {
  struct object_stream s = {.in = in, .out = out, .max_in = max_in};
  struct object_reader r = {.hash.sha256 = strlen(id) == 64,
                            .max_size = inflate_budget ? *inflate_budget : GIT_OBJECT_MAX_SIZE};
  z_stream z = {0};
  int rc;
  *why = NULL;
  if (strlen(id) != 40 && strlen(id) != 64) {
    *why = "not an object id";
    return -1;
  }
  if (r.hash.sha256)
    sha256_init(&r.hash.sha2);
  else
    sha1_init(&r.hash.sha1);
  if (inflateInit(&z) != Z_OK) {
    *why = "zlib: out of memory";
    return -1;
  }
  rc = inflate_all(&s, &z, &r, why);
  inflateEnd(&z);
  if (inflate_budget != NULL)
    *inflate_budget -= r.seen < *inflate_budget ? r.seen : *inflate_budget;
  if (rc < 0)
    return -1;
  if (!r.header_done || r.seen != r.size) {
    *why = "less data than its header says";
    return -1;
  }
  if (!hash_is(&r.hash, id)) {
    *why = "its content has another id";
    return -1;
  }
  return 0;
}

int git_loose_object_check(int fd, const char *id, const char **why) {
  return git_loose_object_copy(fd, -1, UINT64_MAX, NULL, id, why);
}
