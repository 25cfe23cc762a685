/* libspsolve — the HiSparse tree's layout (formats/hisparse.h describes it), shared by its
 * builder (formats/hisparse.c) and the kernels that walk it (kernels/cpu/hisparse.inc): the
 * node references, node types and where a node's pieces are. */
#ifndef SPS_FORMAT_KERNELS_HISPARSE_H
#define SPS_FORMAT_KERNELS_HISPARSE_H

#include "spsolve/types.h"

#include <stddef.h>
#include <stdint.h>

enum { SPS_HS_DENSE = 0, SPS_HS_COO1 = 1, SPS_HS_COO2 = 2, SPS_HS_COO4 = 3 };
#define SPS_HS_REF(off, type) ((uint32_t)((((size_t)(off)) >> 4) << 2 | (uint32_t)(type)))
#define SPS_HS_OFF(ref) (((size_t)((ref) >> 2)) << 4)
#define SPS_HS_TYPE(ref) ((int)((ref) & 3u))
#define SPS_HS_MAX_D 256

#if defined(__CUDACC__)
#define SPS_HS_HD __host__ __device__
#else
#define SPS_HS_HD
#endif

typedef struct {
    int d, lg;            /* node size d = 2^lg */
    int depth;            /* >= 1 */
    sps_index n, m;
    int64_t nnz;
    size_t vsize;         /* bytes a value */
    unsigned char *pool;  /* the nodes; 16-byte aligned */
    size_t bytes, cap;    /* used, allocated */
    uint32_t root;        /* 0 when nnz = 0 */
    int64_t nodes[2][4];  /* [inner, leaf][dense, COO1, COO2, COO4] node counts */
    int64_t leaf_slots;   /* value slots of the leaves: d^2 a dense leaf, the padded count a sparse one */
} sps_hisparse;

/* Where a sparse node's pieces are: padded count pc, coordinates at +4 (2 bytes a pair),
 * values at +val_at.  COO1, COO2, COO4 pad their entries to X = 1, 2, 4 (X = 2^(type - 1):
 * the paper's vector loads of X entries at once).  Shifts and masks, no division: the GPU product computes this for every
 * entry it reads (a division and a loop here had been a fifth of its instructions). */
static inline SPS_HS_HD int sps_hs_pad(int type, int64_t count)
{
    const int64_t x = (int64_t)1 << (type - 1);
    return (int)((count + x - 1) & -x);
}
static inline SPS_HS_HD size_t sps_hs_align16(size_t b) { return (b + 15) & ~(size_t)15; }
/* A sparse node's values start aligned to what a thread loads at once, X values of vbytes,
 * at most 16 bytes: COO4's vector loads need 16; a COO1 leaf of an f32 value then takes 16
 * bytes, not 32 (the node itself is 16-aligned).  vbytes is a power of two (4, 8 or 16: the
 * scalar types), so X vbytes is one too. */
static inline SPS_HS_HD size_t sps_hs_val_at(int type, int pc, size_t vbytes)
{
    size_t al = vbytes << (type - 1);
    if (al > 16) al = 16;
    const size_t b = 4 + 2 * (size_t)pc;
    return (b + al - 1) & ~(al - 1);
}
/* a dense leaf's values after its bitmask */
static inline SPS_HS_HD size_t sps_hs_dense_val_at(int d) { return sps_hs_align16(((size_t)d * d + 7) / 8); }

/* A node of count entries (a leaf: values of vbytes; an inner node: 4-byte child
 * references): its type (dense where that is smaller than its sparse form) and its bytes in
 * the pool (16-byte aligned).  The one rule of the host builder and the backend build. */
static inline SPS_HS_HD size_t sps_hs_node_bytes(int d, int leaf, int64_t count, size_t vbytes, int *type)
{
    const int t = count == 1 ? SPS_HS_COO1 : count == 2 ? SPS_HS_COO2 : SPS_HS_COO4, pc = sps_hs_pad(t, count);
    const size_t sparse = sps_hs_val_at(t, pc, vbytes) + (size_t)pc * vbytes;
    const size_t dense = (leaf ? sps_hs_dense_val_at(d) : 0) + (size_t)d * d * vbytes;
    *type = dense < sparse ? SPS_HS_DENSE : t;
    return sps_hs_align16(dense < sparse ? dense : sparse);
}

/* ---------------------------------------------------------------- the build on the backend
 * (formats/hisparse.c, hisparse_build; the hs_* kernels of kernels/index_kernels.h).  Each
 * entry gets a key: its row's and column's digits in base d interleaved, the root's first
 * (tb bits each, the fewest that hold max(n, m) - 1 >> lg (depth - 1)), then lg bits a
 * level: sorted keys are the tree's order (nodes row-major, level by level), a node at
 * level l is a run of equal key >> 2 lg (depth - l), and its subtree a contiguous run of
 * entries.  2 (lg (depth - 1) + tb) <= 62 bits for 31-bit indices. */
typedef struct {
    int d, lg, depth, tb;
} sps_hs_geom;

static inline SPS_HS_HD int sps_hs_key_bits(sps_hs_geom g) { return 2 * (g.lg * (g.depth - 1) + g.tb); }
static inline SPS_HS_HD uint64_t sps_hs_key(sps_hs_geom g, uint64_t r, uint64_t c)
{
    const int low = g.lg * (g.depth - 1);
    uint64_t k = (r >> low) << g.tb | (c >> low);
    for (int l = 1; l < g.depth; l++) {
        const int s = g.lg * (g.depth - 1 - l);
        k = k << 2 * g.lg | ((r >> s) & (uint64_t)(g.d - 1)) << g.lg | ((c >> s) & (uint64_t)(g.d - 1));
    }
    return k;
}
/* the digits (local row, local column) of level l in key: the child of a level-l node (an
 * entry of a leaf) that the entry lies in */
static inline SPS_HS_HD void sps_hs_digit(sps_hs_geom g, uint64_t key, int l, int *rd, int *cd)
{
    const uint64_t x = key >> 2 * g.lg * (g.depth - 1 - l);
    const int b = l == 0 ? g.tb : g.lg;
    const uint64_t mask = ((uint64_t)1 << b) - 1;
    *rd = (int)((x >> b) & mask), *cd = (int)(x & mask);
}
/* the entry's row and column */
static inline SPS_HS_HD void sps_hs_unkey(sps_hs_geom g, uint64_t key, sps_index *r, sps_index *c)
{
    int64_t rr = 0, cc = 0;
    for (int l = 0; l < g.depth; l++) {
        int rd, cd;
        sps_hs_digit(g, key, l, &rd, &cd);
        const int s = g.lg * (g.depth - 1 - l);
        rr |= (int64_t)rd << s, cc |= (int64_t)cd << s;
    }
    *r = (sps_index)rr, *c = (sps_index)cc;
}
/* A level-l node is a run of equal key >> 2 lg (depth - l) (the root, l = 0, is one run).
 * An entry's depth mark: the coarsest level whose node it starts (0 for the first entry),
 * depth where it starts no node but differs from the entry before, depth + 1 where it
 * repeats it (the addition's lists): level l's nodes start at the entries marked <= l, the
 * distinct keys at those marked <= depth. */
static inline SPS_HS_HD int sps_hs_mark(sps_hs_geom g, const uint64_t *key, int64_t e)
{
    if (e == 0) return 0;
    for (int l = 1; l < g.depth; l++) {
        const int shift = 2 * g.lg * (g.depth - l);
        if (key[e] >> shift != key[e - 1] >> shift) return l;
    }
    return key[e] != key[e - 1] ? g.depth : g.depth + 1;
}
/* the last i in [0, n] with a[i] <= v (a ascending, a[0] <= v) */
static inline SPS_HS_HD int64_t sps_hs_floor(const sps_index *a, int64_t n, int64_t v)
{
    int64_t lo = 0, hi = n; /* a[lo] <= v */
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (a[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* A level's nodes on the backend (formats/hisparse.c holds one a level):
 *   start[i]  the first entry (in key order) of node i, start[N] = nnz;
 *   cb[i]     an inner node's first child (an index into the next level), cb[N] = its N;
 *   type, own the node's type and bytes; S the exclusive sum of the subtrees' bytes (N + 1);
 *   st[i]     where node i's subtree starts in the pool: the children's subtrees in order,
 *             then the node (post-order, as the host builder appends them). */
typedef struct {
    sps_index n;
    sps_index *start, *cb;
    const sps_index *at; /* the leaves: at[e + 1] - 1 = entry e's leaf (nnz + 1; NULL elsewhere) */
    uint8_t *type;
    uint32_t *own;
    int64_t *S, *st;
} sps_hs_level;
static inline SPS_HS_HD size_t sps_hs_node_off(const sps_hs_level *v, int64_t i)
{
    return (size_t)(v->st[i] + (v->S[i + 1] - v->S[i]) - (int64_t)v->own[i]);
}

/* The element steps of the build, one per node or entry, that both backends run (the CPU
 * in a loop, CUDA a thread each): the same arithmetic, the same pool. */
/* node i of level v (leaf: entries; else its children in level c): cb, type, own and its
 * subtree's bytes sz[i]; *slots the value slots of a leaf (stats) */
static inline SPS_HS_HD void sps_hs_size_at(int64_t i, int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c,
                                            int64_t *sz, int64_t *slots)
{
    int64_t count = v.start[i + 1] - v.start[i], kids = 0;
    if (!leaf) {
        const int64_t b = sps_hs_floor(c.start, c.n, v.start[i]), e = sps_hs_floor(c.start, c.n, v.start[i + 1]);
        v.cb[i] = (sps_index)b;
        if (i + 1 == v.n) v.cb[i + 1] = (sps_index)e;
        count = e - b, kids = c.S[e] - c.S[b];
    }
    int t;
    const size_t bytes = sps_hs_node_bytes(d, leaf, count, vbytes, &t);
    v.type[i] = (uint8_t)t, v.own[i] = (uint32_t)bytes, sz[i] = (int64_t)bytes + kids;
    *slots = !leaf ? 0 : t == SPS_HS_DENSE ? (int64_t)d * d : sps_hs_pad(t, count);
}
/* child j (level c) of its parent (level p): where its subtree starts */
static inline SPS_HS_HD void sps_hs_offset_at(int64_t j, sps_hs_level p, sps_hs_level c)
{
    const int64_t q = sps_hs_floor(p.cb, p.n, j);
    c.st[j] = p.st[q] + c.S[j] - c.S[p.cb[q]];
}
#if defined(__CUDA_ARCH__)
#define SPS_HS_OR32(p, bit) atomicOr((unsigned *)(p), (unsigned)(bit))
#else
#define SPS_HS_OR32(p, bit) (*(uint32_t *)(p) |= (uint32_t)(bit))
#endif
/* entry e (key order, its value at val + perm[e] vsize) into its leaf (level v) */
static inline SPS_HS_HD void sps_hs_fill_entry(int64_t e, sps_hs_geom g, size_t vsize, const uint64_t *key,
                                               const sps_index *perm, const unsigned char *val, sps_hs_level v,
                                               unsigned char *pool)
{
    const int64_t i = v.at[e + 1] - 1, k = e - v.start[i];
    int rd, cd;
    sps_hs_digit(g, key[e], g.depth - 1, &rd, &cd);
    unsigned char *p = pool + sps_hs_node_off(&v, i);
    const unsigned char *src = val + (size_t)(perm ? perm[e] : e) * vsize;
    const int t = v.type[i];
    unsigned char *dst;
    if (t == SPS_HS_DENSE) {
        const size_t slot = (size_t)rd * g.d + cd;
        SPS_HS_OR32(p + (slot >> 5) * 4, 1u << (slot & 31));
        dst = p + sps_hs_dense_val_at(g.d) + slot * vsize;
    } else {
        const uint32_t count = (uint32_t)(v.start[i + 1] - v.start[i]);
        if (k == 0) *(uint32_t *)(void *)p = count;
        p[4 + 2 * k] = (unsigned char)rd, p[5 + 2 * k] = (unsigned char)cd;
        dst = p + sps_hs_val_at(t, sps_hs_pad(t, count), vsize) + (size_t)k * vsize;
    }
    for (size_t b = 0; b < vsize; b++) dst[b] = src[b];
}
/* child j (level c, l + 1) into its parent (level p, l): its reference */
static inline SPS_HS_HD void sps_hs_fill_child(int64_t j, sps_hs_geom g, int l, const uint64_t *key, sps_hs_level p,
                                               sps_hs_level c, unsigned char *pool)
{
    const int64_t q = sps_hs_floor(p.cb, p.n, j), k = j - p.cb[q];
    int rd, cd;
    sps_hs_digit(g, key[c.start[j]], l, &rd, &cd);
    const uint32_t ref = SPS_HS_REF(sps_hs_node_off(&c, j), c.type[j]);
    unsigned char *o = pool + sps_hs_node_off(&p, q);
    const int t = p.type[q];
    if (t == SPS_HS_DENSE) {
        *(uint32_t *)(void *)(o + ((size_t)rd * g.d + cd) * 4) = ref;
        return;
    }
    const uint32_t count = (uint32_t)(p.cb[q + 1] - p.cb[q]);
    if (k == 0) *(uint32_t *)(void *)o = count;
    o[4 + 2 * k] = (unsigned char)rd, o[5 + 2 * k] = (unsigned char)cd;
    *(uint32_t *)(void *)(o + sps_hs_val_at(t, sps_hs_pad(t, count), 4) + (size_t)k * 4) = ref;
}

#if !defined(__CUDACC__)
#include <string.h>
/* Every leaf of H below the node ref at level l with corner (r0, c0), in tree order
 * (children row-major, so a walk meets each row's entries in increasing column order):
 * fn(ctx, leaf, its first row, its first column).  s: the rows a child of that node covers
 * (1 in a leaf).  The one traversal of the inner nodes, shared by the walk back to CSR and
 * the schedule (formats/hisparse.c) and the host product (kernels/cpu/hisparse.inc). */
typedef void (*sps_hs_leaf_fn)(void *ctx, uint32_t leaf, sps_index r0, sps_index c0);
static inline void sps_hs_leaves_at(const sps_hisparse *H, uint32_t ref, int l, int64_t s, sps_index r0, sps_index c0,
                                    sps_hs_leaf_fn fn, void *ctx)
{
    if (l == H->depth - 1) {
        fn(ctx, ref, r0, c0);
        return;
    }
    const int d = H->d;
    const unsigned char *p = H->pool + SPS_HS_OFF(ref);
    uint32_t child, count;
    if (SPS_HS_TYPE(ref) == SPS_HS_DENSE) {
        for (size_t slot = 0; slot < (size_t)d * d; slot++) {
            memcpy(&child, p + slot * 4, 4);
            if (child)
                sps_hs_leaves_at(H, child, l + 1, s / d, r0 + (sps_index)((int64_t)(slot / (size_t)d) * s),
                                 c0 + (sps_index)((int64_t)(slot % (size_t)d) * s), fn, ctx);
        }
        return;
    }
    memcpy(&count, p, 4);
    const int type = SPS_HS_TYPE(ref);
    const unsigned char *v = p + sps_hs_val_at(type, sps_hs_pad(type, count), 4);
    for (uint32_t i = 0; i < count; i++) {
        memcpy(&child, v + (size_t)i * 4, 4);
        sps_hs_leaves_at(H, child, l + 1, s / d, r0 + (sps_index)(p[4 + 2 * i] * s), c0 + (sps_index)(p[5 + 2 * i] * s),
                         fn, ctx);
    }
}
/* Every leaf of H (none when it has no entries). */
static inline void sps_hs_leaves(const sps_hisparse *H, sps_hs_leaf_fn fn, void *ctx)
{
    if (!H->root) return;
    int64_t s = 1; /* the rows a child of the root covers */
    for (int l = 1; l < H->depth; l++) s *= H->d;
    sps_hs_leaves_at(H, H->root, 0, s, 0, 0, fn, ctx);
}
#endif

/* The product's schedule (formats/hisparse.c builds it with the tree, once: the tree is
 * static, so the queues of the paper's scheduler are made at construction and a product
 * is one pass over them, with no traversal and no host round trip a level).  Work items:
 * the sparse leaves' entries, in tree order, form one stream cut into windows of
 * SPS_HS_RUN; a warp takes window w (or two in a row, kernels/cuda/hisparse.cu; every window
 * full but the last: a thread an entry,
 * so every thread has one entry's work whether the leaves hold 1 entry or 1000), as the
 * segments [warp_seg[w], warp_seg[w + 1]) that the leaves' runs make where the windows cut
 * them; a dense leaf whole (a block: a warp a row, or a column for A^T).  Every piece is
 * placed by prefix sums (a leaf's place in the stream, its segments' first index), so the
 * backend builds it in parallel. */
#define SPS_HS_RUN 32
typedef struct {
    uint32_t ref;          /* the leaf */
    sps_index r0, c0;      /* its first row and column */
    uint16_t first, span;  /* a sparse leaf's entries [first, first + count), at entry `at` of its
                              window: span = count | at << 8 (sps_hs_seg_*); a dense leaf: 0, 0 */
} sps_hs_item;
/* A segment's entry count (1..SPS_HS_RUN) and its first entry's place in its window: the GPU
 * product places a window's segments by `at` instead of a scan of their counts. */
static inline SPS_HS_HD int sps_hs_seg_count(sps_hs_item it) { return it.span & 0xff; }
static inline SPS_HS_HD int sps_hs_seg_at(sps_hs_item it) { return it.span >> 8; }
static inline SPS_HS_HD uint16_t sps_hs_span(int64_t count, int64_t at) { return (uint16_t)(count | at << 8); }

typedef struct {
    const unsigned char *pool;         /* the tree (backend memory) */
    const sps_hs_item *sparse, *dense; /* the segments and the dense leaves (backend memory) */
    const int64_t *warp_seg;           /* nwarps + 1 segment offsets (backend memory) */
    int64_t nsparse, nwarps, ndense;
    int d;
} sps_hs_sched;

/* The schedule's element steps (after the leaves' level v is built): so, sI, dI are the
 * exclusive sums over the leaves of their sparse entries, segments and dense flags (N + 1
 * each); leaf i's items, and the warps' first segments where its runs open a window
 * (warp_seg[nwarps] = every segment, by the leaf that ends the stream). */
static inline SPS_HS_HD int64_t sps_hs_segments(int64_t first, int64_t count)
{
    return count ? (first + count - 1) / SPS_HS_RUN - first / SPS_HS_RUN + 1 : 0;
}
static inline SPS_HS_HD void sps_hs_sched_at(int64_t i, sps_hs_geom g, const uint64_t *key, sps_hs_level v,
                                             const int64_t *so, const int64_t *sI, const int64_t *dI,
                                             sps_hs_item *sparse, sps_hs_item *dense, int64_t *warp_seg)
{
    sps_index r, c;
    sps_hs_unkey(g, key[v.start[i]], &r, &c);
    sps_hs_item it;
    it.ref = SPS_HS_REF(sps_hs_node_off(&v, i), v.type[i]);
    it.r0 = r - (r & (g.d - 1)), it.c0 = c - (c & (g.d - 1)), it.first = 0, it.span = 0;
    if (v.type[i] == SPS_HS_DENSE) {
        dense[dI[i]] = it;
        return;
    }
    /* the bounds read once, before the loop: its stores into warp_seg (int64_t, as so and sI) would
       make the compiler read them again every segment, a round trip each on the GPU */
    const int64_t beg = so[i], end = so[i + 1], last = so[v.n];
    int64_t s = sI[i];
    for (int64_t pos = beg; pos < end; s++) {
        const int64_t w = pos / SPS_HS_RUN, lim = (w + 1) * SPS_HS_RUN < end ? (w + 1) * SPS_HS_RUN : end;
        it.first = (uint16_t)(pos - beg), it.span = sps_hs_span(lim - pos, pos % SPS_HS_RUN);
        if (pos % SPS_HS_RUN == 0) warp_seg[w] = s;
        sparse[s] = it;
        pos = lim;
    }
    if (end > beg && end == last) warp_seg[(last + SPS_HS_RUN - 1) / SPS_HS_RUN] = sI[v.n]; /* the windows' end */
}

/* ---------------------------------------------------------------- C = op(A) + op(B) on the backend
 * (formats/hisparse.c, sps_matrix_add): each operand's entries listed from its schedule as
 * (key in C's geometry and op's coordinates, where its value is: tag | byte offset in the
 * operand's pool), one sort of both lists (stable: A's before B's at a position), the
 * distinct keys (hs_starts of the entries marked <= depth), their values (hs_add_values: alpha a + beta b),
 * then the build above from sorted keys.  A list has a slot for every entry of a warp's
 * window and every slot of a dense leaf: a slot with no entry holds the key past every
 * entry's (sps_hs_nokey), so it sorts to the end. */
#define SPS_HS_TAG_B ((uint64_t)1 << 63)
static inline SPS_HS_HD uint64_t sps_hs_nokey(sps_hs_geom g) { return (uint64_t)1 << sps_hs_key_bits(g); }
/* slots of X's list: its warps' windows, then its dense leaves' d^2 slots each */
static inline SPS_HS_HD int64_t sps_hs_list_slots(sps_hs_sched X)
{
    return X.nwarps * SPS_HS_RUN + X.ndense * (int64_t)X.d * X.d;
}
static inline SPS_HS_HD void sps_hs_list_put(sps_hs_geom g, int trans, sps_index r, sps_index c, uint64_t where,
                                             uint64_t *key, uint64_t *src)
{
    if (trans) {
        const sps_index t = r;
        r = c, c = t;
    }
    *key = sps_hs_key(g, (uint64_t)r, (uint64_t)c), *src = where;
}
/* Whether X's list (sps_hs_list_entry, sps_hs_list_slot) is sorted by the keys of C's
 * geometry g already: an operand of C's node size taken as it is (its coordinates not
 * swapped; then its tree has C's shape, so tree order is key order), whose entries are all in
 * sparse leaves (the windows list them in tree order, the empty slots, keyed past every
 * entry, only at the end; a dense leaf's slots come after all windows). */
static inline SPS_HS_HD int sps_hs_list_sorted(sps_hs_sched X, int trans, sps_hs_geom g)
{
    return !trans && X.ndense == 0 && X.d == g.d;
}
/* slot i of the warps' windows (window i / 32, its entry i % 32: the last of the window's
 * segments that starts at or before it, found by bisection on where each starts: 5 dependent
 * loads, where a walk over a window of 32 one-entry leaves had taken 32), or an empty slot
 * past the stream */
static inline SPS_HS_HD void sps_hs_list_entry(int64_t i, sps_hs_sched X, size_t vs, int trans, sps_hs_geom g,
                                               uint64_t tag, uint64_t *key, uint64_t *src)
{
    const int64_t w = i / SPS_HS_RUN;
    const int k = (int)(i % SPS_HS_RUN);
    int64_t lo = X.warp_seg[w], hi = X.warp_seg[w + 1] - 1; /* sparse[lo] starts at 0 <= k */
    if (hi >= lo) {
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            if (sps_hs_seg_at(X.sparse[mid]) <= k) lo = mid;
            else hi = mid - 1;
        }
        const sps_hs_item it = X.sparse[lo];
        const int at = k - sps_hs_seg_at(it);
        if (at < sps_hs_seg_count(it)) {
            const size_t off = SPS_HS_OFF(it.ref);
            const unsigned char *p = X.pool + off;
            const uint32_t count = *(const uint32_t *)(const void *)p;
            const int t = SPS_HS_TYPE(it.ref), q = it.first + at;
            sps_hs_list_put(g, trans, it.r0 + p[4 + 2 * q], it.c0 + p[5 + 2 * q],
                            tag | (off + sps_hs_val_at(t, sps_hs_pad(t, count), vs) + (size_t)q * vs), key + i,
                            src + i);
            return;
        }
    }
    key[i] = sps_hs_nokey(g), src[i] = 0;
}
/* slot i of the dense leaves' part (leaf i / d^2, slot i % d^2), at list position i */
static inline SPS_HS_HD void sps_hs_list_slot(int64_t i, sps_hs_sched X, size_t vs, int trans, sps_hs_geom g,
                                              uint64_t tag, uint64_t *key, uint64_t *src)
{
    const int64_t dd = (int64_t)X.d * X.d, slot = i % dd;
    const sps_hs_item it = X.dense[i / dd];
    const size_t off = SPS_HS_OFF(it.ref);
    const unsigned char *p = X.pool + off;
    if (!(p[slot >> 3] >> (slot & 7) & 1)) {
        key[i] = sps_hs_nokey(g), src[i] = 0;
        return;
    }
    sps_hs_list_put(g, trans, it.r0 + (sps_index)(slot / X.d), it.c0 + (sps_index)(slot % X.d),
                    tag | (off + sps_hs_dense_val_at(X.d) + (size_t)slot * vs), key + i, src + i);
}

/* C = op(A) + op(B) in one pass (kernels/hisparse_small.h): where C's tree is at most
 * SPS_HS_SMALL_DEPTH levels deep, the general sum's steps run as loops over the same element
 * steps, in two calls (the shape, then the fill), with one read of the results' sizes between
 * them (stats).  Lists of at most SPS_HS_SMALL_SLOTS slots are listed and sorted inside the
 * shape (the GPU: one block, 256 threads x 4 keys up to SPS_HS_SMALL_TILE, else 512 x 8); longer
 * ones by hs_list and hs_sort_pairs first (sps_hs_small_sorted), the shape and fill then running
 * on a cooperative grid.  Scratch and results in backend memory, arrays sized for nv = A's
 * entries + B's (the distinct keys are at most that many), a level's node arrays for at most
 * its nodes' blocks of C (formats/hisparse.c, small_carve). */
#define SPS_HS_SMALL_SLOTS 4096
#define SPS_HS_SMALL_TILE 1024 /* lists of at most this many slots: the GPU's smaller block (256 x 4) */
#define SPS_HS_SMALL_DEPTH 8
#define SPS_HSS_MAX_BLOCKS 4096 /* the cooperative grid's blocks, at most */
#define SPS_HSS_SCANS SPS_HS_SMALL_DEPTH /* prefix sums made at once (kernels/hisparse_small.h) */
enum { /* stats: what the shape leaves for the host */
    SPS_HSS_NODES = 0,   /* 8: [leaf 4 + type] node counts */
    SPS_HSS_SLOTS = 8,   /* the leaves' value slots */
    SPS_HSS_TOTAL = 9,   /* the pool's bytes past its 16-byte header */
    SPS_HSS_RTYPE = 10,  /* the root's type */
    SPS_HSS_ROWN = 11,   /* the root's own bytes */
    SPS_HSS_NU = 12,     /* C's entries: the distinct keys */
    SPS_HSS_SO = 13,     /* the sparse leaves' entries */
    SPS_HSS_NSEG = 14,   /* the schedule's segments */
    SPS_HSS_NDENSE = 15, /* the dense leaves */
    SPS_HSS_LEVEL = 16,  /* depth: each level's node count */
    SPS_HSS_BAD = SPS_HSS_LEVEL + SPS_HS_SMALL_DEPTH, /* hs_add_values' overflow: ~u, 0 for none */
    SPS_HSS_COUNT
};
typedef struct {
    sps_hs_sched xa, xb;  /* the operands */
    int ta, tb;           /* transposed operands (their coordinates swapped) */
    sps_hs_geom g;        /* C's geometry */
    size_t vs;            /* bytes a value */
    int64_t nv;           /* A's entries + B's */
    uint64_t *key, *src;  /* max(sps_hs_small_slots, SPS_HS_SMALL_SLOTS) each */
    uint8_t *mark;        /* nv */
    sps_index *at, *ustart;
    uint64_t *ukey;       /* nv */
    unsigned char *val;   /* nv values */
    int64_t *sz, *so, *sI, *dI;
    sps_hs_level lv[SPS_HS_SMALL_DEPTH]; /* a level's node arrays: min(nv, C's blocks of its nodes'
                                            span) + 1 (n: the shape's, in stats; the leaves' at:
                                            the array at) */
    int64_t *stats;       /* SPS_HSS_COUNT */
    int64_t *bsum;        /* the GPU's cooperative grid: SPS_HSS_SCANS slots a block (SPS_HSS_MAX_BLOCKS) */
    unsigned char *pool;  /* the fill's results, at the sizes in stats */
    sps_hs_item *sparse, *dense;
    int64_t *warp_seg;
} sps_hs_small;
/* the lists' slots, A's then B's (the GPU's one block pads them to its tile) */
static inline SPS_HS_HD int64_t sps_hs_small_slots(const sps_hs_small *w)
{
    return sps_hs_list_slots(w->xa) + sps_hs_list_slots(w->xb);
}
/* the lists too long for one block: listed and sorted (hs_list, then hs_sort_pairs, or
 * hs_merge_pairs for two ordered lists) before the shape */
static inline SPS_HS_HD int sps_hs_small_sorted(const sps_hs_small *w)
{
    return sps_hs_small_slots(w) > SPS_HS_SMALL_SLOTS;
}

/* The build's kernels, in the index family (kernels/index_kernels.h: values are moved, never
 * read as numbers); X(P, name, args).  Backend memory throughout; N = v.n. */
#define SPS_KERNEL_LIST_INDEX_HISPARSE(X, P)                                                                  \
    /* key (ascending) and perm (each key's CSR position) of the nnz entries of CSR (n rows, sorted      \
       columns): key = sps_hs_key(g, row, column) */                                                       \
    X(P, hs_keys, (sps_exec *ex, sps_hs_geom g, sps_index n, int64_t nnz, const sps_index *rowptr,        \
                   const sps_index *col, uint64_t *key, sps_index *perm))                                  \
    /* mark[e] = sps_hs_mark(g, key, e) for e < nnz; hist[q] += the entries marked q, q = 0..depth + 1    \
       (hist zeroed by the caller) */                                                                      \
    X(P, hs_marks, (sps_exec *ex, sps_hs_geom g, int64_t nnz, const uint64_t *key, uint8_t *mark,         \
                    sps_index *hist))                                                                      \
    /* at[e] = the entries before e marked <= l (nnz + 1 entries); start[at[e]] = e for each e marked     \
       <= l, start[at[nnz]] = nnz */                                                                       \
    X(P, hs_starts, (sps_exec *ex, int64_t nnz, const uint8_t *mark, int l, sps_index *at,                \
                     sps_index *start))                                                                    \
    /* sps_hs_size_at for every node of v (c: the next level; unused for leaves), then v.S = the         \
       exclusive sum of the subtrees' bytes (sz: N of scratch); stats[leaf 4 + type] += the nodes of     \
       each type, stats[8] += the leaves' value slots */                                                   \
    X(P, hs_sizes, (sps_exec *ex, int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c,         \
                    int64_t *sz, int64_t *stats))                                                          \
    /* sps_hs_offset_at for every node of level c (p: its parents' level, p.st set) */                     \
    X(P, hs_offsets, (sps_exec *ex, sps_hs_level p, sps_hs_level c))                                       \
    /* sps_hs_fill_entry for every entry (v: the leaves; pool zeroed by the caller) */                     \
    X(P, hs_fill_leaves, (sps_exec *ex, sps_hs_geom g, size_t vsize, int64_t nnz, const uint64_t *key,   \
                          const sps_index *perm, const void *val, sps_hs_level v, unsigned char *pool))   \
    /* sps_hs_fill_child for every node of level c = l + 1 (p: level l) */                                \
    X(P, hs_fill_inner, (sps_exec *ex, sps_hs_geom g, int l, const uint64_t *key, sps_hs_level p,         \
                         sps_hs_level c, unsigned char *pool))                                             \
    /* the schedule's sums over the leaves v (so, sI, dI: N + 1 each; sps_hs_sched_at) */                  \
    X(P, hs_sched_sums, (sps_exec *ex, sps_hs_level v, int64_t *so, int64_t *sI, int64_t *dI))            \
    /* sps_hs_sched_at for every leaf */                                                                   \
    X(P, hs_sched, (sps_exec *ex, sps_hs_geom g, const uint64_t *key, sps_hs_level v, const int64_t *so,  \
                    const int64_t *sI, const int64_t *dI, sps_hs_item *sparse, sps_hs_item *dense,         \
                    int64_t *warp_seg))                                                                    \
    /* the addition: X's list (sps_hs_list_slots(X) slots of key and src: sps_hs_list_entry for every    \
       window slot, then sps_hs_list_slot for every dense slot) */                                         \
    X(P, hs_list, (sps_exec *ex, sps_hs_sched X, size_t vsize, int trans, sps_hs_geom g, uint64_t tag,    \
                   uint64_t *key, uint64_t *src))                                                          \
    /* the (kin, vin) pairs sorted by the key's low `bits` bits, stably, into (key, val), arrays apart   \
       (the CPU's also sorts in place, for its own build and one-pass sum) */                              \
    X(P, hs_sort_pairs, (sps_exec *ex, int64_t n, int bits, const uint64_t *kin, const uint64_t *vin,     \
                         uint64_t *key, uint64_t *val))                                                    \
    /* the pairs of two lists each sorted by key, (ka, va) na of them and (kb, vb) nb, merged by key     \
       into (key, val), arrays apart; on equal keys a's first (sps_hs_list_sorted: no sort needed) */      \
    X(P, hs_merge_pairs, (sps_exec *ex, int64_t na, const uint64_t *ka, const uint64_t *va, int64_t nb,   \
                          const uint64_t *kb, const uint64_t *vb, uint64_t *key, uint64_t *val))           \
    /* ukey[u] = key[ustart[u]], u < nu */                                                                 \
    X(P, hs_ukeys, (sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *key, uint64_t *ukey)) \
    /* the one-pass sum's second call: C's pool (zeroed here) and schedule from w's shape */              \
    X(P, hs_small_fill, (sps_exec *ex, const sps_hs_small *w))

/* X(P, S, name, args); see kernels/kernels.h. */
#define SPS_KERNEL_LIST_HISPARSE(X, P, S)                                                                 \
    /* y = a op(A) x + b y over the schedule (trans: A^T, each entry's coordinates swapped); y has nout    \
       entries, b = 0 sets it (not read); the order of the additions into y is not fixed on the GPU       \
       (atomics) */                                                                                       \
    X(P, S, hs_spmv, (sps_exec *ex, sps_hs_sched H, sps_cplx a, const void *x, sps_cplx b, void *y,        \
                      sps_index nout, int trans))                                                         \
    /* the addition's values: out[u] = alpha a + beta b over the sorted list's members of distinct key u  \
       (ustart[u] .. ustart[u + 1] - 1: one or two), each src[e] a value's byte offset in poolA, or in    \
       poolB with SPS_HS_TAG_B; an operand without a member adds nothing (sps_cpu_hisparse_lin).  An     \
       overflow (finite operands, a sum that is not) sets *bad (zeroed by the caller) to ~u of the lowest  \
       such u: a maximum of ~u, which the GPU's threads take atomically in any order, 0 for none */       \
    X(P, S, hs_add_values, (sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *src,      \
                            const unsigned char *poolA, const unsigned char *poolB, sps_cplx alpha,         \
                            sps_cplx beta, void *out, uint64_t *bad))                                       \
    /* the one-pass sum's first call (sps_hs_small): the lists, their sort, the distinct keys and their   \
       values (as hs_add_values), the levels, sizes, subtree starts and the schedule's sums; w->stats     \
       gets the sizes the host reads */                                                                    \
    X(P, S, hs_small_shape, (sps_exec *ex, const sps_hs_small *w, sps_cplx alpha, sps_cplx beta))

#include "kernels/kernels.h" /* sps_cplx (after the list: kernels.h expands it) */

/** The matrix state apart from its content (seed-methods §2.1): op(A) = scale A, or
 *  scale A^T (no conjugation, as the library's SPS_OP_T), a view of the tree H: transposing
 *  or scaling copies nothing. */
typedef struct {
    const sps_hisparse *H;
    int trans;
    sps_cplx scale;
} sps_hisparse_view;

/** y += op(A) x on the host, values of one scalar type each (the tree walked with the
 *  coordinates swapped for A^T); kernels/cpu/hisparse.inc. */
void sps_cpu_hisparse_spmv_s(sps_hisparse_view A, const void *x, void *y);
void sps_cpu_hisparse_spmv_d(sps_hisparse_view A, const void *x, void *y);
void sps_cpu_hisparse_spmv_c(sps_hisparse_view A, const void *x, void *y);
void sps_cpu_hisparse_spmv_z(sps_hisparse_view A, const void *x, void *y);
/** C = alpha A + beta B on CSR arrays of n rows with sorted columns: count (cc NULL: rpc),
 *  then fill (cc, vc); the union of the patterns. */
#define SPS_HS_CSR_ADD_ARGS                                                                                    \
    (sps_index n, sps_cplx alpha, const sps_index *ra, const sps_index *ca, const void *va, sps_cplx beta,    \
     const sps_index *rb, const sps_index *cb, const void *vb, sps_index *rpc, sps_index *cc, void *vc)
void sps_cpu_hisparse_csr_add_s SPS_HS_CSR_ADD_ARGS;
void sps_cpu_hisparse_csr_add_d SPS_HS_CSR_ADD_ARGS;
void sps_cpu_hisparse_csr_add_c SPS_HS_CSR_ADD_ARGS;
void sps_cpu_hisparse_csr_add_z SPS_HS_CSR_ADD_ARGS;
/** One entry of C = alpha A + beta B: out = alpha a + beta b, a or b NULL where that
 *  operand has no entry (the dual traversal's leaves). */
#define SPS_HS_LIN_ARGS (sps_cplx alpha, const void *a, sps_cplx beta, const void *b, void *out)
void sps_cpu_hisparse_lin_s SPS_HS_LIN_ARGS;
void sps_cpu_hisparse_lin_d SPS_HS_LIN_ARGS;
void sps_cpu_hisparse_lin_c SPS_HS_LIN_ARGS;
void sps_cpu_hisparse_lin_z SPS_HS_LIN_ARGS;

#endif
