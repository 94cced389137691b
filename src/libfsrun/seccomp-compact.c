/* A seccomp program rewritten shorter, with the same verdict for every input. See
 * seccomp-compact.h. */
#include "seccomp-compact.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

#define MAX_WORDS 8     /* distinct inputs: a seccomp_data word, or a word under an AND mask */
#define MAX_BOXES 20000 /* paths of a program followed before giving up */
#define MAX_JUMP  255   /* a conditional jump's reach */
#define MIN_LEN   256   /* shorter programs load fast enough: not worth the rewrite's time */

/* The inputs that take one path: an interval per word read (in the order of words[]). */
struct box {
  uint32_t lo[MAX_WORDS], hi[MAX_WORDS];
  uint32_t verdict;
};

/* An input of the program: the word of seccomp_data at offset, ANDed with mask (all ones for a
 * plain load). The masked word is taken as an input of its own: boxes may then hold pairs of
 * values that no input gives, which only makes the check ask more. */
struct input {
  uint32_t offset, mask;
};

struct walk {
  const struct sock_filter *insns;
  size_t len;
  const struct input *words; /* the inputs read */
  unsigned n_words;
  struct box *boxes; /* collected paths, or NULL when checking */
  size_t n_boxes, cap;
  uint32_t expect; /* checking: the verdict every path must end in */
  bool failed;
};

static int input_index(const struct input *words, unsigned n, uint32_t offset, uint32_t mask) {
  for (unsigned i = 0; i < n; i++)
    if (words[i].offset == offset && words[i].mask == mask)
      return (int)i;
  return -1;
}

static void end_path(struct walk *w, struct box *b, uint32_t verdict) {
  if (w->boxes == NULL) {
    w->failed |= verdict != w->expect;
    return;
  }
  if (w->n_boxes == MAX_BOXES) {
    w->failed = true;
    return;
  }
  if (w->n_boxes == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 256;
    w->boxes = realloc(w->boxes, w->cap * sizeof(*w->boxes));
    if (w->boxes == NULL)
      abort(); /* out of memory, as xmalloc */
  }
  b->verdict = verdict;
  w->boxes[w->n_boxes++] = *b;
}

static void walk_from(struct walk *w, size_t pc, int acc, struct box b);

/* A comparison of word acc with k: the inputs that jump (t) and those that go on (f, and f2 when
 * JEQ cuts the interval in two). */
static void compare(struct walk *w, size_t pc, int acc, struct box b) {
  const struct sock_filter *in = &w->insns[pc];
  uint32_t lo = b.lo[acc], hi = b.hi[acc], k = in->k;
  size_t t_pc = pc + 1 + in->jt, f_pc = pc + 1 + in->jf;
  struct box t = b, f = b;
  switch (BPF_OP(in->code)) {
  case BPF_JEQ:
    if (lo <= k && k <= hi) {
      t.lo[acc] = t.hi[acc] = k;
      walk_from(w, t_pc, acc, t);
      if (lo < k && k < hi) {
        struct box f2 = b;
        f2.lo[acc] = k + 1;
        walk_from(w, f_pc, acc, f2);
      }
      if (k == lo && k == hi)
        return;
      if (k == lo)
        f.lo[acc] = k + 1;
      else
        f.hi[acc] = k - 1;
    }
    break;
  case BPF_JGT:
    if (hi > k) {
      t.lo[acc] = lo > k ? lo : k + 1;
      walk_from(w, t_pc, acc, t);
    }
    if (lo > k)
      return;
    f.hi[acc] = hi < k ? hi : k;
    break;
  case BPF_JGE:
    if (hi >= k) {
      t.lo[acc] = lo > k ? lo : k;
      walk_from(w, t_pc, acc, t);
    }
    if (lo >= k)
      return;
    f.hi[acc] = hi < k - 1 ? hi : k - 1;
    break;
  }
  walk_from(w, f_pc, acc, f);
}

/* Follows every path from pc for the inputs in b; acc: the word in the accumulator, or -1. Jumps
 * only go forward, so the depth is bounded by the program's length. */
static void walk_from(struct walk *w, size_t pc, int acc, struct box b) {
  while (!w->failed) {
    const struct sock_filter *in;
    if (pc >= w->len) {
      w->failed = true;
      return;
    }
    in = &w->insns[pc];
    switch (in->code) {
    case BPF_LD | BPF_W | BPF_ABS:
      acc = input_index(w->words, w->n_words, in->k, UINT32_MAX);
      if (acc < 0)
        w->failed = true;
      pc++;
      break;
    case BPF_ALU | BPF_AND | BPF_K:
      /* only right after a plain load (as libseccomp writes a masked comparison) */
      acc = acc < 0 || w->words[acc].mask != UINT32_MAX
                ? -1
                : input_index(w->words, w->n_words, w->words[acc].offset, in->k);
      if (acc < 0)
        w->failed = true;
      pc++;
      break;
    case BPF_JMP | BPF_JA:
      if (in->k >= w->len) {
        w->failed = true;
        return;
      }
      pc += 1 + in->k;
      break;
    case BPF_RET | BPF_K:
      end_path(w, &b, in->k);
      return;
    case BPF_JMP | BPF_JEQ | BPF_K:
    case BPF_JMP | BPF_JGT | BPF_K:
    case BPF_JMP | BPF_JGE | BPF_K:
      if (acc < 0)
        w->failed = true;
      else
        compare(w, pc, acc, b);
      return;
    default:
      w->failed = true;
      return;
    }
  }
}

static struct box whole_space(void) {
  struct box b;
  memset(&b, 0, sizeof(b));
  for (unsigned i = 0; i < MAX_WORDS; i++)
    b.hi[i] = UINT32_MAX;
  return b;
}

static bool add_input(struct input *words, unsigned *n, uint32_t offset, uint32_t mask) {
  if (input_index(words, *n, offset, mask) >= 0)
    return true;
  if (*n == MAX_WORDS)
    return false;
  words[(*n)++] = (struct input){offset, mask};
  return true;
}

/* The inputs prog reads (a load, an AND right after one), in the order of their first use (the
 * new program decides on them in that order: libseccomp's on the architecture first); false for
 * more than MAX_WORDS. */
static bool words_read(const struct sock_fprog *prog, struct input *words, unsigned *n) {
  *n = 0;
  for (size_t i = 0; i < prog->len; i++) {
    const struct sock_filter *in = &prog->filter[i];
    bool ok = true;
    if (in->code == (BPF_LD | BPF_W | BPF_ABS))
      ok = add_input(words, n, in->k, UINT32_MAX);
    else if (in->code == (BPF_ALU | BPF_AND | BPF_K) && i > 0 &&
             prog->filter[i - 1].code == (BPF_LD | BPF_W | BPF_ABS))
      ok = add_input(words, n, prog->filter[i - 1].k, in->k);
    if (!ok)
      return false;
  }
  return true;
}

/* --- the shorter program ---------------------------------------------------------------------- */

struct code {
  struct sock_filter *v;
  size_t n, cap;
};

static void code_put(struct code *c, const struct sock_filter *in, size_t n) {
  if (c->n + n > c->cap) {
    c->cap = (c->n + n) * 2;
    c->v = realloc(c->v, c->cap * sizeof(*c->v));
    if (c->v == NULL)
      abort();
  }
  memcpy(c->v + c->n, in, n * sizeof(*in));
  c->n += n;
}

static bool code_same(const struct code *a, const struct code *b) {
  return a->n == b->n && memcmp(a->v, b->v, a->n * sizeof(*a->v)) == 0;
}

struct gen {
  const struct box *boxes;
  unsigned n_words;
  const struct input *words;
  bool failed;
};

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static struct code gen_region(struct gen *g, const size_t *in, size_t n, struct box region,
                              unsigned dim);

/* qsort has no argument for it: the boxes and dimension of the sort in progress */
static const struct gen *sort_g;
static unsigned sort_dim;

static int cmp_start(const void *a, const void *b) {
  uint32_t x = sort_g->boxes[*(const size_t *)a].lo[sort_dim];
  uint32_t y = sort_g->boxes[*(const size_t *)b].lo[sort_dim];
  return x < y ? -1 : x > y;
}

/* A search of the accumulator over the intervals starting at starts[i..j] (ascending), each with
 * its code: JGE on the middle start, the lower half next, the upper half after it. */
static struct code gen_search(struct gen *g, const uint32_t *starts, struct code *subs, size_t i,
                              size_t j) {
  struct code out = {0}, low, high;
  size_t mid;
  if (i == j) {
    code_put(&out, subs[i].v, subs[i].n);
    return out;
  }
  mid = (i + j + 1) / 2;
  low = gen_search(g, starts, subs, i, mid - 1);
  high = gen_search(g, starts, subs, mid, j);
  if (low.n <= MAX_JUMP) {
    struct sock_filter jge =
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, starts[mid], (unsigned char)low.n, 0);
    code_put(&out, &jge, 1);
  } else {
    /* beyond a conditional jump's reach: it skips an unconditional one over the lower half */
    struct sock_filter far[2] = {BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, starts[mid], 0, 1),
                                 BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)low.n)};
    code_put(&out, far, 2);
  }
  code_put(&out, low.v, low.n);
  code_put(&out, high.v, high.n);
  free(low.v);
  free(high.v);
  return out;
}

/* The cut points of dimension dim inside region: where a box of in[] starts or ends. */
static size_t cut_points(const struct gen *g, const size_t *in, size_t n, const struct box *region,
                         unsigned dim, uint32_t *cuts) {
  size_t m = 0, u = 0;
  cuts[m++] = region->lo[dim];
  for (size_t i = 0; i < n; i++) {
    const struct box *b = &g->boxes[in[i]];
    if (b->lo[dim] > region->lo[dim])
      cuts[m++] = b->lo[dim];
    if (b->hi[dim] < region->hi[dim])
      cuts[m++] = b->hi[dim] + 1;
  }
  qsort(cuts, m, sizeof(*cuts), cmp_u32);
  for (size_t i = 0; i < m; i++)
    if (u == 0 || cuts[u - 1] != cuts[i])
      cuts[u++] = cuts[i];
  return u;
}

/* Splits region along dim at every cut point, the code of each piece for the next dimensions;
 * neighbours with the same code are one interval of the search. */
static struct code gen_split(struct gen *g, const size_t *in, size_t n, struct box region,
                             unsigned dim) {
  cleanup_free uint32_t *cuts = xmalloc0((2 * n + 1) * sizeof(*cuts));
  cleanup_free uint32_t *starts = NULL;
  cleanup_free size_t *sub_in = xmalloc0((n ? n : 1) * sizeof(*sub_in));
  cleanup_free struct code *subs = NULL;
  size_t n_cuts = cut_points(g, in, n, &region, dim, cuts), n_subs = 0;
  struct code out = {0};
  starts = xmalloc0(n_cuts * sizeof(*starts));
  subs = xmalloc0(n_cuts * sizeof(*subs));
  cleanup_free size_t *by_start = xmalloc0((n ? n : 1) * sizeof(*by_start));
  cleanup_free size_t *open_boxes = xmalloc0((n ? n : 1) * sizeof(*open_boxes));
  size_t next = 0, n_open = 0;
  memcpy(by_start, in, n * sizeof(*in));
  sort_g = g;
  sort_dim = dim;
  qsort(by_start, n, sizeof(*by_start), cmp_start);
  for (size_t c = 0; c < n_cuts && !g->failed; c++) {
    struct box piece = region;
    size_t m = 0, kept = 0;
    struct code sub;
    piece.lo[dim] = cuts[c];
    piece.hi[dim] = c + 1 < n_cuts ? cuts[c + 1] - 1 : region.hi[dim];
    /* the boxes that hold the piece: started at or before it, not ended before it (a box never
     * ends inside a piece, the cuts are its ends) */
    while (next < n && g->boxes[by_start[next]].lo[dim] <= piece.lo[dim])
      open_boxes[n_open++] = by_start[next++];
    for (size_t i = 0; i < n_open; i++) {
      if (g->boxes[open_boxes[i]].hi[dim] < piece.lo[dim])
        continue;
      open_boxes[kept++] = open_boxes[i];
      sub_in[m++] = open_boxes[i];
    }
    n_open = kept;
    sub = gen_region(g, sub_in, m, piece, dim + 1);
    if (n_subs > 0 && code_same(&subs[n_subs - 1], &sub)) {
      free(sub.v);
      continue;
    }
    starts[n_subs] = piece.lo[dim];
    subs[n_subs++] = sub;
  }
  if (!g->failed && n_subs == 1) {
    out = subs[0];
    subs[0].v = NULL;
  } else if (!g->failed && n_subs > 1) {
    struct sock_filter load[2] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, g->words[dim].offset),
                                  BPF_STMT(BPF_ALU | BPF_AND | BPF_K, g->words[dim].mask)};
    struct code search = gen_search(g, starts, subs, 0, n_subs - 1);
    code_put(&out, load, g->words[dim].mask == UINT32_MAX ? 1 : 2);
    code_put(&out, search.v, search.n);
    free(search.v);
  }
  for (size_t i = 0; i < n_subs; i++)
    free(subs[i].v);
  return out;
}

/* The code for the inputs of region, which the boxes in[] cover. */
static struct code gen_region(struct gen *g, const size_t *in, size_t n, struct box region,
                              unsigned dim) {
  struct code out = {0};
  bool one_verdict = n > 0;
  for (size_t i = 1; i < n; i++)
    one_verdict &= g->boxes[in[i]].verdict == g->boxes[in[0]].verdict;
  if (one_verdict) {
    struct sock_filter ret = BPF_STMT(BPF_RET | BPF_K, g->boxes[in[0]].verdict);
    code_put(&out, &ret, 1);
    return out;
  }
  if (n == 0 || dim == g->n_words) {
    g->failed = true; /* a hole, or boxes that overlap: not a program's paths */
    return out;
  }
  return gen_split(g, in, n, region, dim);
}

/* Every input of every box takes, in the candidate, a path to the box's verdict. */
static bool same_verdicts(const struct walk *old, const struct code *cand) {
  struct walk w = {.insns = cand->v, .len = cand->n, .words = old->words, .n_words = old->n_words};
  for (size_t i = 0; i < old->n_boxes && !w.failed; i++) {
    w.expect = old->boxes[i].verdict;
    walk_from(&w, 0, -1, old->boxes[i]);
  }
  return !w.failed;
}

bool seccomp_compact(struct sock_fprog *prog) {
  struct input words[MAX_WORDS];
  unsigned n_words;
  struct walk w = {.insns = prog->filter, .len = prog->len, .words = words};
  struct gen g = {.words = words};
  cleanup_free size_t *all = NULL;
  struct code cand = {0};
  bool ok;

  if (prog->len < MIN_LEN || !words_read(prog, words, &n_words))
    return false;
  w.n_words = g.n_words = n_words;
  w.boxes = xmalloc0(sizeof(*w.boxes));
  w.cap = 1;
  walk_from(&w, 0, -1, whole_space());
  if (!w.failed) {
    all = xmalloc0(w.n_boxes * sizeof(*all));
    for (size_t i = 0; i < w.n_boxes; i++)
      all[i] = i;
    g.boxes = w.boxes;
    cand = gen_region(&g, all, w.n_boxes, whole_space(), 0);
  }
  ok = !w.failed && !g.failed && cand.n > 0 && cand.n < prog->len && same_verdicts(&w, &cand);
  free(w.boxes);
  if (!ok) {
    free(cand.v);
    return false;
  }
  free(prog->filter);
  prog->filter = cand.v;
  prog->len = (unsigned short)cand.n;
  return true;
}

bool seccomp_compact_eval(const struct sock_fprog *prog, const unsigned *offsets,
                          const unsigned *values, unsigned n, unsigned *verdict) {
  uint32_t a = 0;
  size_t pc = 0;
  while (pc < prog->len) {
    const struct sock_filter *in = &prog->filter[pc];
    bool jump;
    switch (in->code) {
    case BPF_LD | BPF_W | BPF_ABS:
      a = 0;
      for (unsigned i = 0; i < n; i++)
        if (offsets[i] == in->k)
          a = values[i];
      pc++;
      continue;
    case BPF_ALU | BPF_AND | BPF_K:
      a &= in->k;
      pc++;
      continue;
    case BPF_JMP | BPF_JA:
      pc += 1 + in->k;
      continue;
    case BPF_RET | BPF_K:
      *verdict = in->k;
      return true;
    case BPF_JMP | BPF_JEQ | BPF_K:
      jump = a == in->k;
      break;
    case BPF_JMP | BPF_JGT | BPF_K:
      jump = a > in->k;
      break;
    case BPF_JMP | BPF_JGE | BPF_K:
      jump = a >= in->k;
      break;
    default:
      return false;
    }
    pc += 1 + (jump ? in->jt : in->jf);
  }
  return false;
}
