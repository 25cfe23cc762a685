/* HiSparse on the host (formats/hisparse.h): the top-down build of seed-methods §2.3 as a
 * recursion (each node bins its entries into its d x d children, the children are built
 * first and appended to the pool, then the node with their references: post-order, so a
 * pool that grows by reallocation keeps every reference valid); the walk back to CSR (of A
 * or A^T); the products by scalar type; and C = alpha op(A) + beta op(B) by the paper's
 * dual traversal of both trees (the oracle of a GPU version), with the route through CSR
 * (both operands walked to CSR, merged row by row, the result built as a tree) as its
 * oracle and for node sizes that differ.  The registered format, built on the backend by
 * sorted keys and prefix sums (hisparse_build), and the public sum sps_matrix_add (lists of
 * keys, one sort, the build from keys) are at the end; the recursive builder and the dual
 * traversal here are their oracles. */
#include "formats/hisparse.h"
#include "formats/csr_backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    sps_hisparse *H;
    sps_context ctx;
    const void *val;
    sps_index *er, *ec; /* the entries: row, column, position in the CSR arrays */
    int64_t *ek;
    sps_index *tr, *tc; /* scratch for the binning */
    int64_t *tk;
    uint64_t *key;
    int64_t *cnt;       /* d^2 + 1 bins */
    int64_t *span;      /* span[l] = d^(depth - 1 - l): the rows a child of a level-l node covers */
    sps_status st;
} hs_build;

/* n bytes of zeroed pool, 16-byte aligned; its offset (0 on failure: st set) */
static size_t pool_take(hs_build *b, size_t n)
{
    sps_hisparse *H = b->H;
    n = sps_hs_align16(n);
    if (H->bytes + n > ((size_t)1 << 34)) { /* 2^30 units of 16 bytes */
        b->st = sps_error(b->ctx, SPS_ERR_ARG, "HiSparse: the node pool would exceed 16 GiB");
        return 0;
    }
    if (H->bytes + n > H->cap) {
        size_t cap = H->cap ? 2 * H->cap : 4096;
        while (cap < H->bytes + n) cap *= 2;
        unsigned char *p = realloc(H->pool, cap);
        if (!p) {
            b->st = sps_error(b->ctx, SPS_ERR_ALLOC, "HiSparse: out of host memory for a %zu-byte node pool", cap);
            return 0;
        }
        H->pool = p;
        H->cap = cap;
    }
    const size_t off = H->bytes;
    memset(H->pool + off, 0, n);
    H->bytes += n;
    return off;
}

/* Write a node of count entries (local coordinates lr, lc row-major, each entry's vbytes at
 * src(i)): sparse or dense, whichever is smaller (sps_hs_node_bytes).  leaf: values; else
 * 32-bit references. */
static uint32_t write_node(hs_build *b, int leaf, int64_t count, const uint8_t *lr, const uint8_t *lc,
                           const unsigned char *vals, size_t vbytes)
{
    sps_hisparse *H = b->H;
    const int d = H->d;
    int type;
    const size_t bytes = sps_hs_node_bytes(d, leaf, count, vbytes, &type);
    const size_t off = pool_take(b, bytes);
    if (b->st != SPS_OK) return 0;
    unsigned char *p = H->pool + off;
    if (type == SPS_HS_DENSE) {
        unsigned char *v = p + (leaf ? sps_hs_dense_val_at(d) : 0);
        for (int64_t i = 0; i < count; i++) {
            const size_t slot = (size_t)lr[i] * d + lc[i];
            if (leaf) p[slot >> 3] |= (unsigned char)(1u << (slot & 7));
            memcpy(v + slot * vbytes, vals + (size_t)i * vbytes, vbytes);
        }
        H->nodes[leaf][SPS_HS_DENSE]++;
        if (leaf) H->leaf_slots += (int64_t)d * d;
        return SPS_HS_REF(off, SPS_HS_DENSE);
    }
    const int pc = sps_hs_pad(type, count);
    const uint32_t c32 = (uint32_t)count;
    memcpy(p, &c32, 4);
    for (int64_t i = 0; i < count; i++) p[4 + 2 * i] = lr[i], p[5 + 2 * i] = lc[i];
    memcpy(p + sps_hs_val_at(type, pc, vbytes), vals, (size_t)count * vbytes);
    H->nodes[leaf][type]++;
    if (leaf) H->leaf_slots += pc;
    return SPS_HS_REF(off, type);
}

static int key_cmp(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The node at level l with corner (r0, c0) over entries [lo, hi) (each inside it, in
 * row-major order); its reference. */
static uint32_t build(hs_build *b, int l, sps_index r0, sps_index c0, int64_t lo, int64_t hi)
{
    sps_hisparse *H = b->H;
    const int d = H->d;
    const int64_t cnt = hi - lo;
    if (l == H->depth - 1) { /* a leaf: local coordinates and values straight from the entries */
        uint8_t *lr = malloc((size_t)cnt), *lc = malloc((size_t)cnt);
        unsigned char *v = malloc((size_t)cnt * H->vsize);
        if (!lr || !lc || !v) {
            free(lr), free(lc), free(v);
            b->st = sps_error(b->ctx, SPS_ERR_ALLOC, "HiSparse: out of host memory for a leaf of %lld entries",
                              (long long)cnt);
            return 0;
        }
        for (int64_t i = 0; i < cnt; i++) {
            lr[i] = (uint8_t)(b->er[lo + i] - r0), lc[i] = (uint8_t)(b->ec[lo + i] - c0);
            memcpy(v + (size_t)i * H->vsize, (const unsigned char *)b->val + (size_t)b->ek[lo + i] * H->vsize,
                   H->vsize);
        }
        const uint32_t ref = write_node(b, 1, cnt, lr, lc, v, H->vsize);
        free(lr), free(lc), free(v);
        return ref;
    }
    /* bin by child (row digit, column digit), stably: a sort of (child << 32 | position) for
     * few entries, a counting sort over the d^2 children otherwise */
    const int64_t s = b->span[l];
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t child = (uint64_t)((b->er[lo + i] - r0) / s) * (uint64_t)d + (uint64_t)((b->ec[lo + i] - c0) / s);
        b->key[lo + i] = child << 32 | (uint64_t)i;
    }
    if (cnt * 8 < (int64_t)d * d) {
        qsort(b->key + lo, (size_t)cnt, sizeof *b->key, key_cmp);
    } else {
        memset(b->cnt, 0, ((size_t)d * d + 1) * sizeof *b->cnt);
        for (int64_t i = 0; i < cnt; i++) b->cnt[(b->key[lo + i] >> 32) + 1]++;
        for (int q = 0; q < d * d; q++) b->cnt[q + 1] += b->cnt[q];
        for (int64_t i = 0; i < cnt; i++) b->tk[lo + b->cnt[b->key[lo + i] >> 32]++] = (int64_t)b->key[lo + i];
        for (int64_t i = 0; i < cnt; i++) b->key[lo + i] = (uint64_t)b->tk[lo + i];
    }
    for (int64_t i = 0; i < cnt; i++) { /* the entries in child order */
        const int64_t from = lo + (int64_t)(b->key[lo + i] & 0xffffffffu);
        b->tr[lo + i] = b->er[from], b->tc[lo + i] = b->ec[from], b->tk[lo + i] = b->ek[from];
    }
    memcpy(b->er + lo, b->tr + lo, (size_t)cnt * sizeof *b->er);
    memcpy(b->ec + lo, b->tc + lo, (size_t)cnt * sizeof *b->ec);
    memcpy(b->ek + lo, b->tk + lo, (size_t)cnt * sizeof *b->ek);
    /* the children's runs: keys are read before the recursion reuses them */
    int64_t nch = 0;
    for (int64_t i = 0; i < cnt; i++) nch += i == 0 || (b->key[lo + i] >> 32) != (b->key[lo + i - 1] >> 32);
    uint8_t *lr = malloc((size_t)nch + 1), *lc = malloc((size_t)nch + 1);
    int64_t *start = malloc(((size_t)nch + 1) * sizeof *start);
    uint32_t *refs = malloc(((size_t)nch + 1) * sizeof *refs);
    if (!lr || !lc || !start || !refs) {
        free(lr), free(lc), free(start), free(refs);
        b->st = sps_error(b->ctx, SPS_ERR_ALLOC, "HiSparse: out of host memory for an inner node");
        return 0;
    }
    for (int64_t i = 0, c = 0; i < cnt; i++)
        if (i == 0 || (b->key[lo + i] >> 32) != (b->key[lo + i - 1] >> 32)) {
            const uint64_t child = b->key[lo + i] >> 32;
            lr[c] = (uint8_t)(child / (uint64_t)d), lc[c] = (uint8_t)(child % (uint64_t)d), start[c++] = lo + i;
        }
    start[nch] = hi;
    for (int64_t c = 0; c < nch && b->st == SPS_OK; c++)
        refs[c] = build(b, l + 1, r0 + (sps_index)(lr[c] * s), c0 + (sps_index)(lc[c] * s), start[c], start[c + 1]);
    const uint32_t ref = b->st == SPS_OK ? write_node(b, 0, nch, lr, lc, (const unsigned char *)refs, 4) : 0;
    free(lr), free(lc), free(start), free(refs);
    return ref;
}

/* H's description for an n x m matrix of nnz values of vsize bytes, node size d (H zeroed
 * first; no pool); g (may be NULL): the keys' geometry of the backend build. */
static sps_status hs_geometry(sps_context ctx, sps_index n, sps_index m, int64_t nnz, size_t vsize, int d,
                              sps_hisparse *H, sps_hs_geom *g)
{
    memset(H, 0, sizeof *H);
    int lg = 0;
    while (lg < 9 && (1 << lg) < d) lg++;
    if (d < 2 || d > SPS_HS_MAX_D || (1 << lg) != d)
        return sps_error(ctx, SPS_ERR_ARG, "HiSparse: node size %d (a power of two, 2..%d)", d, SPS_HS_MAX_D);
    if (vsize < 1 || vsize > 16 || (vsize & (vsize - 1))) /* sps_hs_val_at's alignment by masks */
        return sps_error(ctx, SPS_ERR_ARG, "HiSparse: %zu-byte values (1, 2, 4, 8 or 16)", vsize);
    H->d = d, H->lg = lg, H->n = n, H->m = m, H->nnz = nnz, H->vsize = vsize;
    /* depth: the smallest with d^depth >= max(n, m), at least 1 */
    const int64_t big = n > m ? n : m;
    int64_t cover = d;
    H->depth = 1;
    while (cover < big) cover *= d, H->depth++;
    if (g) { /* the root's digits: the bits of (max(n, m) - 1) >> lg (depth - 1) */
        const int64_t top = big > 0 ? (big - 1) >> (lg * (H->depth - 1)) : 0;
        int tb = 0;
        while (((int64_t)1 << tb) <= top) tb++;
        *g = (sps_hs_geom){.d = d, .lg = lg, .depth = H->depth, .tb = tb};
    }
    return SPS_OK;
}

sps_status sps_hisparse_from_csr(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                 const sps_index *col, const void *val, size_t vsize, int d, sps_hisparse *H)
{
    const int64_t nnz = n > 0 ? rowptr[n] : 0;
    SPS_CHECK(hs_geometry(ctx, n, m, nnz, vsize, d, H, NULL));
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i] + 1; k < rowptr[i + 1]; k++)
            if (col[k] <= col[k - 1])
                return sps_error(ctx, SPS_ERR_ARG, "HiSparse: row %d: columns not strictly increasing", (int)i);
    hs_build b = {.H = H, .ctx = ctx, .val = val, .st = SPS_OK};
    const size_t e = (size_t)nnz + 1;
    b.er = malloc(e * sizeof *b.er), b.ec = malloc(e * sizeof *b.ec), b.ek = malloc(e * sizeof *b.ek);
    b.tr = malloc(e * sizeof *b.tr), b.tc = malloc(e * sizeof *b.tc), b.tk = malloc(e * sizeof *b.tk);
    b.key = malloc(e * sizeof *b.key);
    b.cnt = malloc(((size_t)d * d + 1) * sizeof *b.cnt);
    b.span = malloc((size_t)H->depth * sizeof *b.span);
    if (!b.er || !b.ec || !b.ek || !b.tr || !b.tc || !b.tk || !b.key || !b.cnt || !b.span) {
        b.st = sps_error(ctx, SPS_ERR_ALLOC, "HiSparse: out of host memory for %lld entries", (long long)nnz);
        goto done;
    }
    /* span[depth - 1] = 1; s in 64 bits: the step after the last level makes it d^depth, past 2^31 at
     * d = 256 from depth 4 on */
    for (int64_t l = H->depth - 1, s = 1; l >= 0; l--, s *= d) b.span[l] = s;
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) b.er[k] = i, b.ec[k] = col[k], b.ek[k] = k;
    (void)pool_take(&b, 16); /* the header: no node at offset 0 */
    if (b.st == SPS_OK && nnz > 0) H->root = build(&b, 0, 0, 0, 0, nnz);
done:
    free(b.er), free(b.ec), free(b.ek), free(b.tr), free(b.tc), free(b.tk), free(b.key), free(b.cnt), free(b.span);
    if (b.st != SPS_OK) sps_hisparse_free(H);
    return b.st;
}

/* Every occupied slot of node ref of H in storage (row-major) order: f(ctx, local row,
 * local column, payload), the payload a leaf's value (vsize bytes) or an inner node's child
 * reference (4 bytes).  The one reader of the node layout on the host (the walk back to CSR,
 * the dual traversal). */
typedef void (*hs_slot_fn)(void *ctx, int r, int c, const unsigned char *payload);
static void node_each(const sps_hisparse *H, uint32_t ref, int leaf, hs_slot_fn f, void *ctx)
{
    const int d = H->d;
    const size_t ps = leaf ? H->vsize : 4;
    const unsigned char *p = H->pool + SPS_HS_OFF(ref);
    if (SPS_HS_TYPE(ref) == SPS_HS_DENSE) {
        const unsigned char *v = p + (leaf ? sps_hs_dense_val_at(d) : 0);
        for (size_t slot = 0; slot < (size_t)d * d; slot++) {
            uint32_t child = 0;
            if (!leaf) memcpy(&child, v + slot * 4, 4);
            if (leaf ? p[slot >> 3] >> (slot & 7) & 1 : child != 0)
                f(ctx, (int)(slot / (size_t)d), (int)(slot % (size_t)d), v + slot * ps);
        }
        return;
    }
    uint32_t count;
    memcpy(&count, p, 4);
    const int type = SPS_HS_TYPE(ref);
    const unsigned char *v = p + sps_hs_val_at(type, sps_hs_pad(type, count), ps);
    for (uint32_t i = 0; i < count; i++) f(ctx, p[4 + 2 * i], p[5 + 2 * i], v + (size_t)i * ps);
}

/* The walk back to CSR: each leaf entry's (row, column, value) in row-major tree order;
 * pass 0 counts a row's entries, pass 1 places them at the row's cursor. */
typedef struct {
    const sps_hisparse *H;
    sps_index *cur, *col;
    unsigned char *val;
    int pass, trans;
    sps_index r0, c0; /* the leaf being walked */
} hs_walk;

/* a leaf entry (node_each's callback) */
static void walk_entry(void *ctx, int lr, int lc, const unsigned char *v)
{
    hs_walk *w = ctx;
    sps_index r = w->r0 + lr, c = w->c0 + lc;
    if (w->trans) {
        const sps_index t = r;
        r = c, c = t;
    }
    if (w->pass == 0) {
        w->cur[r + 1]++;
        return;
    }
    const sps_index k = w->cur[r]++;
    w->col[k] = c;
    memcpy(w->val + (size_t)k * w->H->vsize, v, w->H->vsize);
}

/* a leaf's entries (sps_hs_leaves' callback) */
static void walk_leaf(void *ctx, uint32_t ref, sps_index r0, sps_index c0)
{
    hs_walk *w = ctx;
    w->r0 = r0, w->c0 = c0;
    node_each(w->H, ref, 1, walk_entry, w);
}

void sps_hisparse_to_csr(const sps_hisparse *H, int trans, sps_index *rowptr, sps_index *col, void *val)
{
    const sps_index n = trans ? H->m : H->n;
    hs_walk w = {.H = H, .cur = rowptr, .col = col, .val = val, .pass = 0, .trans = trans};
    memset(rowptr, 0, ((size_t)n + 1) * sizeof *rowptr);
    sps_hs_leaves(H, walk_leaf, &w);
    for (sps_index i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
    w.pass = 1;
    /* rowptr's entries serve as the cursors (each ends at the next row's start), then shift back */
    sps_hs_leaves(H, walk_leaf, &w);
    for (sps_index i = n; i > 0; i--) rowptr[i] = rowptr[i - 1];
    if (n >= 0) rowptr[0] = 0;
}

/* the per-type kernels, by scalar type (a table, not a switch) */
typedef void (*hs_spmv_fn)(sps_hisparse_view, const void *, void *);
typedef void (*hs_add_fn) SPS_HS_CSR_ADD_ARGS;
static const hs_spmv_fn hs_spmv[4] = {[SPS_F32] = sps_cpu_hisparse_spmv_s, [SPS_F64] = sps_cpu_hisparse_spmv_d,
                                      [SPS_C32] = sps_cpu_hisparse_spmv_c, [SPS_C64] = sps_cpu_hisparse_spmv_z};
static const hs_add_fn hs_add[4] = {[SPS_F32] = sps_cpu_hisparse_csr_add_s, [SPS_F64] = sps_cpu_hisparse_csr_add_d,
                                    [SPS_C32] = sps_cpu_hisparse_csr_add_c, [SPS_C64] = sps_cpu_hisparse_csr_add_z};

void sps_hisparse_spmv(sps_scalar t, sps_hisparse_view A, const void *x, void *y) { hs_spmv[t](A, x, y); }

/* alpha A + beta B of host CSR A, B of one shape (sorted columns) as host CSR in out
 * (allocated): the union of the patterns, counted, then filled. */
static sps_status add_csr(sps_context ctx, sps_scalar t, sps_cplx alpha, const sps_csr_host *A, sps_cplx beta,
                          const sps_csr_host *B, sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    const sps_index n = A->n;
    const size_t vs = sps_scalar_size(t);
    sps_index *rc = malloc(((size_t)n + 1) * sizeof *rc), *cc = NULL;
    void *vc = NULL;
    sps_status st = SPS_ERR_ALLOC;
    if (rc) {
        hs_add[t](n, alpha, A->rowptr, A->col, A->val, beta, B->rowptr, B->col, B->val, rc, NULL, NULL); /* count */
        const size_t ec = (size_t)rc[n] + 1;
        if ((cc = malloc(ec * sizeof *cc)) && (vc = malloc(ec * vs))) {
            hs_add[t](n, alpha, A->rowptr, A->col, A->val, beta, B->rowptr, B->col, B->val, rc, cc, vc);
            *out = (sps_csr_host){.n = n, .m = A->m, .nnz = rc[n], .t = t, .rowptr = rc, .col = cc, .val = vc};
            rc = NULL, cc = NULL, vc = NULL;
            st = SPS_OK;
        }
    }
    if (st == SPS_ERR_ALLOC) st = sps_error(ctx, SPS_ERR_ALLOC, "HiSparse addition: out of host memory");
    free(rc), free(cc), free(vc);
    return st;
}

/* op(H) (trans: H^T) walked back to host CSR in out (allocated), values of vs bytes. */
static sps_status tree_csr(sps_context ctx, sps_scalar t, const sps_hisparse *H, int trans, sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    const sps_index n = trans ? H->m : H->n;
    sps_csr_host h = {.n = n, .m = trans ? H->n : H->m, .nnz = H->nnz, .t = t};
    sps_status st = sps_hmalloc(ctx, (void **)&h.rowptr, ((size_t)n + 1) * sizeof *h.rowptr, "CSR row pointers");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&h.col, ((size_t)H->nnz + 1) * sizeof *h.col, "CSR columns");
    if (st == SPS_OK) st = sps_hmalloc(ctx, &h.val, ((size_t)H->nnz + 1) * H->vsize, "CSR values");
    if (st == SPS_OK) {
        sps_hisparse_to_csr(H, trans, h.rowptr, h.col, h.val);
        *out = h;
    } else {
        sps_csr_host_free(&h);
    }
    return st;
}

/* ---------------------------------------------------------------- C = op(A) + op(B), dual traversal */
/* The paper's addition (seed-methods §2.6) on the host, the oracle of a GPU version: both
 * trees walked together from the roots; at each node pair the children (the entries, at a
 * leaf) of each operand in the output's row-major order (a transposed operand's swapped
 * and sorted), merged by position; a position both hold recurses on the pair (a leaf:
 * alpha a + beta b), one operand alone recurses with the other absent (its subtree copied,
 * scaled, transposed as its view says).  Nodes are written after their children, children
 * in row-major order, each dense or sparse by size (write_node): the pool the CSR route
 * builds, byte for byte (tests/test_hisparse.c checks it).  Operands and output of one
 * node size d, hence one depth. */
typedef struct {
    uint16_t pos;           /* r d + c in op()'s coordinates (d <= 256) */
    const unsigned char *p; /* the payload: a child reference (4 bytes) or a value */
} hs_slot;

typedef void (*hs_lin_fn) SPS_HS_LIN_ARGS;
static const hs_lin_fn hs_lin[4] = {[SPS_F32] = sps_cpu_hisparse_lin_s, [SPS_F64] = sps_cpu_hisparse_lin_d,
                                    [SPS_C32] = sps_cpu_hisparse_lin_c, [SPS_C64] = sps_cpu_hisparse_lin_z};

typedef struct {
    hs_build b;            /* the output tree (b.H) */
    sps_hisparse_view A, B;
    hs_lin_fn lin;
    size_t dd;             /* d^2: slots a node */
    hs_slot *sa, *sb;      /* depth x dd each: a level's listing of each operand */
    uint8_t *lr, *lc;      /* depth x dd: the output node's positions */
    unsigned char *out;    /* depth x dd x max(vsize, 4): its values or child references */
} hs_dual;

static int slot_cmp(const void *x, const void *y)
{
    const hs_slot *a = x, *b = y;
    return (int)a->pos - (int)b->pos;
}

/* Node ref of H (leaf or inner) as slots in op()'s row-major order; their count. */
typedef struct {
    hs_slot *out;
    int64_t n;
    int d, trans;
} hs_list;

static void list_slot(void *ctx, int r, int c, const unsigned char *payload)
{
    hs_list *q = ctx;
    q->out[q->n].pos = (uint16_t)(q->trans ? c * q->d + r : r * q->d + c);
    q->out[q->n++].p = payload;
}

static int64_t node_slots(const sps_hisparse *H, uint32_t ref, int leaf, int trans, hs_slot *out)
{
    hs_list q = {out, 0, H->d, trans};
    node_each(H, ref, leaf, list_slot, &q);
    if (trans) qsort(out, (size_t)q.n, sizeof *out, slot_cmp); /* storage order was A's row-major */
    return q.n;
}

/* The output node at level l of the pair (ra, rb) (0: that operand has none here); its reference. */
static uint32_t dual(hs_dual *u, int l, uint32_t ra, uint32_t rb)
{
    sps_hisparse *C = u->b.H;
    const int d = C->d, leaf = l == C->depth - 1;
    const size_t w = C->vsize > 4 ? C->vsize : 4, ps = leaf ? C->vsize : 4;
    hs_slot *sa = u->sa + (size_t)l * u->dd, *sb = u->sb + (size_t)l * u->dd;
    uint8_t *lr = u->lr + (size_t)l * u->dd, *lc = u->lc + (size_t)l * u->dd;
    unsigned char *out = u->out + (size_t)l * u->dd * w;
    const int64_t na = ra ? node_slots(u->A.H, ra, leaf, u->A.trans, sa) : 0;
    const int64_t nb = rb ? node_slots(u->B.H, rb, leaf, u->B.trans, sb) : 0;
    int64_t i = 0, j = 0, k = 0;
    while ((i < na || j < nb) && u->b.st == SPS_OK) {
        const int pa = i < na ? sa[i].pos : 1 << 16, pb = j < nb ? sb[j].pos : 1 << 16;
        const int pos = pa < pb ? pa : pb;
        const unsigned char *xa = pa == pos ? sa[i++].p : NULL, *xb = pb == pos ? sb[j++].p : NULL;
        lr[k] = (uint8_t)(pos / d), lc[k] = (uint8_t)(pos % d);
        if (leaf) {
            u->lin(u->A.scale, xa, u->B.scale, xb, out + (size_t)k * ps);
        } else {
            uint32_t ca = 0, cb = 0;
            if (xa) memcpy(&ca, xa, 4);
            if (xb) memcpy(&cb, xb, 4);
            const uint32_t child = dual(u, l + 1, ca, cb);
            memcpy(out + (size_t)k * ps, &child, 4);
        }
        k++;
    }
    if (u->b.st != SPS_OK) return 0;
    if (leaf) C->nnz += k;
    return write_node(&u->b, leaf, k, lr, lc, out, ps);
}

/* C = op(A) + op(B) by the dual traversal (A, B, C of node size d; checked by the caller). */
static sps_status add_dual(sps_context ctx, sps_scalar t, sps_hisparse_view A, sps_hisparse_view B, sps_hisparse *C)
{
    const sps_hisparse *H = A.H;
    C->d = H->d, C->lg = H->lg, C->depth = H->depth, C->vsize = H->vsize;
    C->n = A.trans ? H->m : H->n, C->m = A.trans ? H->n : H->m;
    hs_dual u = {.b = {.H = C, .ctx = ctx, .st = SPS_OK}, .A = A, .B = B, .lin = hs_lin[t]};
    u.dd = (size_t)H->d * H->d;
    const size_t lv = (size_t)H->depth * u.dd, w = H->vsize > 4 ? H->vsize : 4;
    u.sa = malloc(lv * sizeof *u.sa), u.sb = malloc(lv * sizeof *u.sb);
    u.lr = malloc(lv), u.lc = malloc(lv), u.out = malloc(lv * w);
    if (!u.sa || !u.sb || !u.lr || !u.lc || !u.out)
        u.b.st = sps_error(ctx, SPS_ERR_ALLOC, "HiSparse addition: out of host memory for the traversal");
    if (u.b.st == SPS_OK) (void)pool_take(&u.b, 16); /* the header: no node at offset 0 */
    if (u.b.st == SPS_OK && (H->root || B.H->root)) C->root = dual(&u, 0, H->root, B.H->root);
    free(u.sa), free(u.sb), free(u.lr), free(u.lc), free(u.out);
    if (u.b.st != SPS_OK) sps_hisparse_free(C);
    return u.b.st;
}

sps_status sps_hisparse_add_csr(sps_context ctx, sps_scalar t, sps_hisparse_view A, sps_hisparse_view B, int d,
                                sps_hisparse *C)
{
    memset(C, 0, sizeof *C);
    const sps_index n = A.trans ? A.H->m : A.H->n, m = A.trans ? A.H->n : A.H->m;
    if ((B.trans ? B.H->m : B.H->n) != n || (B.trans ? B.H->n : B.H->m) != m)
        return sps_error(ctx, SPS_ERR_ARG, "HiSparse addition: op(A) is %d x %d, op(B) %d x %d", (int)n, (int)m,
                         (int)(B.trans ? B.H->m : B.H->n), (int)(B.trans ? B.H->n : B.H->m));
    const size_t vs = sps_scalar_size(t);
    if (A.H->vsize != vs || B.H->vsize != vs)
        return sps_error(ctx, SPS_ERR_ARG, "HiSparse addition: %zu- and %zu-byte values, %s is %zu", A.H->vsize,
                         B.H->vsize, sps_scalar_name(t), vs);
    sps_csr_host a, b, h;
    memset(&b, 0, sizeof b);
    memset(&h, 0, sizeof h);
    sps_status st = tree_csr(ctx, t, A.H, A.trans, &a);
    if (st == SPS_OK) st = tree_csr(ctx, t, B.H, B.trans, &b);
    if (st == SPS_OK) st = add_csr(ctx, t, A.scale, &a, B.scale, &b, &h);
    if (st == SPS_OK) st = sps_hisparse_from_csr(ctx, h.n, h.m, h.rowptr, h.col, h.val, vs, d, C);
    sps_csr_host_free(&a);
    sps_csr_host_free(&b);
    sps_csr_host_free(&h);
    return st;
}

sps_status sps_hisparse_add(sps_context ctx, sps_scalar t, sps_hisparse_view A, sps_hisparse_view B, int d,
                            sps_hisparse *C)
{
    memset(C, 0, sizeof *C);
    const sps_index n = A.trans ? A.H->m : A.H->n, m = A.trans ? A.H->n : A.H->m;
    const int same = (B.trans ? B.H->m : B.H->n) == n && (B.trans ? B.H->n : B.H->m) == m &&
                     A.H->vsize == sps_scalar_size(t) && B.H->vsize == sps_scalar_size(t);
    if (same && A.H->d == d && B.H->d == d) return add_dual(ctx, t, A, B, C);
    return sps_hisparse_add_csr(ctx, t, A, B, d, C); /* node sizes that differ, or an error to report */
}

void sps_hisparse_free(sps_hisparse *H)
{
    free(H->pool);
    memset(H, 0, sizeof *H);
}

/* ---------------------------------------------------------------- the registered format */
/* --format hisparse: the tree and its product's schedule (the work items of
 * kernels/format_kernels_hisparse.h) are built on the backend that holds the matrix
 * (hisparse_build: CUDA kernels on the GPU, the same element steps in loops on the CPU),
 * the same bytes as the host builder's tree; the host keeps the tree's description only
 * (the pool comes back for an export).  The product is the backend's hs_spmv over the
 * items: on the CPU in item order, on the GPU a warp one or two 32-entry windows of the
 * items, in one launch after y's scaling (kernels/cuda/hisparse.cu; atomics: not
 * bit-reproducible).  Option node-size: d. */
static const sps_option_desc hisparse_options[] = {
    {.name = "node-size", .type = SPS_OPT_INT, .def = "128", .min = 2, .max = SPS_HS_MAX_D,
     .choices = "2|4|8|16|32|64|128|256", .help = "rows and columns of a tree node (d, a power of two)"},
    {.name = "small-sum", .type = SPS_OPT_INT, .def = "4194304", .min = 0, .max = 1 << 30,
     .help = "sps_matrix_add: operands listing at most this many entry slots together are summed in one "
             "pass (two launches and one read; 0: never)"}};

typedef struct {
    sps_hisparse H;                /* the description; H.pool NULL (the pool is dpool) */
    unsigned char *dpool;          /* backend memory: the tree */
    sps_hs_item *dsparse, *ddense; /* backend memory: the segments and the dense leaves */
    int64_t *dwarp;                /* backend memory: nwarps + 1 segment offsets */
    int64_t nsparse, nwarps, ndense;
    /* the matrix is the tree's transpose (n, m swapped): a sum of transposed operands kept as
       the transpose of their plain sum, the paper's view state (sps_matrix_add) */
    int trans;
} hs_store;

static void hisparse_destroy(sps_matrix A)
{
    hs_store *S = A->store;
    if (!S) return;
    sps_dfree(A->ctx, S->dpool);
    sps_dfree(A->ctx, S->dsparse);
    sps_dfree(A->ctx, S->ddense);
    sps_dfree(A->ctx, S->dwarp);
    sps_hisparse_free(&S->H);
    free(S);
    A->store = NULL;
}

/* The build on the backend (seed-methods §2.3: binning top-down, one pooled allocation,
 * the nodes filled bottom-up), by the hs_* kernels (kernels/format_kernels_hisparse.h) with
 * the pool the host builder makes, byte for byte:
 *   1. every entry's key (its digits at every level) and one sort: the tree's order;
 *   2. each entry's depth mark (the coarsest level whose node it starts) and their
 *      histogram: the levels' node counts, the host's one read; then each level's node
 *      starts (a scan of the marks);
 *   3. bottom-up, each node's type and bytes and its subtree's (prefix sums a level);
 *   4. top-down, each subtree's start: the children's subtrees in order, then the node;
 *   5. the pool (one allocation, zeroed), every entry and child reference written in place;
 *   6. the product's schedule from the leaves (prefix sums).
 * Device memory beyond the result: 12 bytes an entry and about 33 a node while it runs. */
#define SPS_HS_MAX_DEPTH 31 /* d = 2, 31-bit indices */
typedef struct {
    sps_context ctx;
    sps_hs_level lv[SPS_HS_MAX_DEPTH];
    int depth;
} hs_levels;

/* a level's node arrays for n1 - 1 nodes carved from base (NULL: only counted), start first (at
 * base); returns the bytes.  The general build's levels (an allocation each) and the one-pass
 * sum's (in its scratch). */
#define HS_CARVE(at, base, ptr, bytes)                                                                     \
    ((at) = sps_hs_align16(at), (ptr) = (base) ? (void *)((base) + (at)) : NULL, (at) += (bytes))
static size_t level_carve(sps_hs_level *v, unsigned char *base, size_t n1)
{
    size_t at = 0;
    HS_CARVE(at, base, v->start, n1 * sizeof *v->start);
    HS_CARVE(at, base, v->cb, n1 * sizeof *v->cb);
    HS_CARVE(at, base, v->type, n1);
    HS_CARVE(at, base, v->own, n1 * sizeof *v->own);
    HS_CARVE(at, base, v->S, n1 * sizeof *v->S);
    HS_CARVE(at, base, v->st, n1 * sizeof *v->st);
    return at;
}

static void levels_free(hs_levels *L)
{
    for (int l = 0; l < L->depth; l++) sps_dfree(L->ctx, L->lv[l].start); /* each level's allocation */
}

/* one index or int64 from backend memory */
static sps_status fetch(sps_context ctx, void *dst, const void *src, size_t bytes)
{
    return sps_dcopy(ctx, dst, src, bytes, SPS_COPY_D2H);
}

/* S's tree description and pool allocation (not zeroed) from a build's totals: the pool's bytes
 * past its 16-byte header, the root's type and own bytes, and stats[0..8], the node counts by
 * [leaf 4 + type] and the leaves' value slots (the layout of SPS_HSS_NODES, SPS_HSS_SLOTS).
 * The general build's and the one-pass sum's. */
static sps_status store_pool(sps_context ctx, hs_store *S, int64_t total, int rtype, uint32_t rown, const int64_t *stats)
{
    sps_hisparse *H = &S->H;
    H->bytes = (size_t)(16 + total);
    if (H->bytes > ((size_t)1 << 34)) /* references hold 2^30 units of 16 bytes */
        return sps_error(ctx, SPS_ERR_ARG, "HiSparse: the node pool would exceed 16 GiB (%zu bytes)", H->bytes);
    H->root = SPS_HS_REF(H->bytes - rown, rtype);
    for (int i = 0; i < 8; i++) H->nodes[i / 4][i % 4] = stats[SPS_HSS_NODES + i];
    H->leaf_slots = stats[SPS_HSS_SLOTS];
    return sps_dmalloc(ctx, (void **)&S->dpool, H->bytes);
}

/* S's schedule arrays for the leaves' sparse entries, segments and dense leaves */
static sps_status store_sched_alloc(sps_context ctx, hs_store *S, int64_t entries, int64_t nseg, int64_t ndense)
{
    S->nsparse = nseg, S->ndense = ndense, S->nwarps = (entries + SPS_HS_RUN - 1) / SPS_HS_RUN;
    if (S->nsparse) {
        SPS_CHECK(sps_dmalloc(ctx, (void **)&S->dsparse, (size_t)S->nsparse * sizeof *S->dsparse));
        SPS_CHECK(sps_dmalloc(ctx, (void **)&S->dwarp, ((size_t)S->nwarps + 1) * sizeof *S->dwarp));
    }
    return S->ndense ? sps_dmalloc(ctx, (void **)&S->ddense, (size_t)S->ndense * sizeof *S->ddense) : SPS_OK;
}

/* B->store from B->nnz distinct entries in tree order (steps 2-6): their keys (sorted) and
 * values of B's type (entry e's at val[perm[e]], or val[e] where perm is NULL). */
static sps_status hs_store_build(sps_matrix B, sps_options opt, const uint64_t *key, const sps_index *perm,
                                 const void *val)
{
    sps_context ctx = B->ctx;
    const sps_idx_kernels *k = sps_kidx(ctx);
    hs_store *S;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&S, sizeof *S, "HiSparse handle"));
    B->store = S; /* on failure the caller destroys B */
    sps_hisparse *H = &S->H;
    sps_hs_geom g;
    const size_t vs = sps_scalar_size(B->t);
    SPS_CHECK(hs_geometry(ctx, B->n, B->m, B->nnz, vs, sps_opt_int(opt, "node-size"), H, &g));
    const int64_t nnz = B->nnz, D = H->depth, d = H->d;
    if (nnz == 0) { /* the header alone */
        H->bytes = 16;
        SPS_CHECK(sps_dmalloc(ctx, (void **)&S->dpool, 16));
        return sps_dzero(ctx, S->dpool, 16);
    }
    hs_levels L = {.ctx = ctx, .depth = (int)D};
    sps_index *at = NULL, *hist = NULL;
    uint8_t *mark = NULL;
    int64_t *sz = NULL, *stats = NULL, *sums = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&at, ((size_t)nnz + 1) * sizeof *at), done);
    /* 2. each entry's depth mark, the levels' node counts (one histogram to the host), then
     * each level's node starts; the leaves' level last, its sums kept (at: an entry's leaf) */
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&mark, (size_t)nnz), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&hist, ((size_t)D + 2) * sizeof *hist), done);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, hist, ((size_t)D + 2) * sizeof *hist), done);
    SPS_CHECK_GOTO(st, k->hs_marks(sps_ex(ctx), g, nnz, key, mark, hist), done);
    sps_index h[SPS_HS_MAX_DEPTH + 2];
    SPS_CHECK_GOTO(st, fetch(ctx, h, hist, ((size_t)D + 2) * sizeof *h), done);
    if (h[D + 1] != 0) { /* a repeated key: no caller passes one (CSR is checked, sums are deduplicated) */
        st = sps_error(ctx, SPS_ERR_ARG, "HiSparse: %lld repeated (row, column) entries", (long long)h[D + 1]);
        goto done;
    }
    for (int l = 0, below = 0; l < D; l++) {
        sps_hs_level *v = &L.lv[l];
        const sps_index nl = below += h[l]; /* the entries marked <= l */
        v->n = nl;
        const size_t n1 = (size_t)nl + 1;
        unsigned char *base = NULL;
        SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&base, level_carve(v, NULL, n1)), done);
        level_carve(v, base, n1);
        SPS_CHECK_GOTO(st, k->hs_starts(sps_ex(ctx), nnz, mark, l, at, v->start), done);
    }
    /* 3. sizes, bottom-up */
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&sz, (size_t)nnz * sizeof *sz), done);
    /* stats: the node counts and leaf slots (9, summed by hs_sizes), then what the host reads
       with them in one fetch: the pool's bytes past the header, the root's type and own bytes */
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&stats, 12 * sizeof *stats), done);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, stats, 12 * sizeof *stats), done);
    for (int l = (int)D - 1; l >= 0; l--) {
        const int leaf = l == D - 1;
        const sps_hs_level none = {0};
        SPS_CHECK_GOTO(st, k->hs_sizes(sps_ex(ctx), (int)d, leaf, leaf ? vs : 4, L.lv[l], leaf ? none : L.lv[l + 1],
                                       sz, stats), done);
    }
    /* one host read for the pool's size, the statistics and the root's reference (each read
       waits for the device: the build of a small matrix is a chain of such waits) */
    int64_t hs_stats[12];
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats + 9, L.lv[0].S + 1, sizeof *stats, SPS_COPY_D2D), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats + 10, L.lv[0].type, 1, SPS_COPY_D2D), done); /* the low byte */
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats + 11, L.lv[0].own, sizeof(uint32_t), SPS_COPY_D2D), done);
    SPS_CHECK_GOTO(st, fetch(ctx, hs_stats, stats, sizeof hs_stats), done);
    const int64_t total = hs_stats[9];
    uint8_t rtype; /* the bytes as copied, whatever the host's byte order */
    uint32_t rown;
    memcpy(&rtype, &hs_stats[10], sizeof rtype);
    memcpy(&rown, &hs_stats[11], sizeof rown);
    /* 4. subtree starts, top-down: the root's after the 16-byte header */
    const int64_t header = 16;
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, L.lv[0].st, &header, sizeof header, SPS_COPY_H2D), done);
    for (int l = 0; l + 1 < D; l++) SPS_CHECK_GOTO(st, k->hs_offsets(sps_ex(ctx), L.lv[l], L.lv[l + 1]), done);
    /* 5. the pool */
    SPS_CHECK_GOTO(st, store_pool(ctx, S, total, rtype, rown, hs_stats), done);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, S->dpool, H->bytes), done);
    L.lv[D - 1].at = at;
    SPS_CHECK_GOTO(st, k->hs_fill_leaves(sps_ex(ctx), g, vs, nnz, key, perm, val, L.lv[D - 1], S->dpool), done);
    for (int l = 0; l + 1 < D; l++)
        SPS_CHECK_GOTO(st, k->hs_fill_inner(sps_ex(ctx), g, l, key, L.lv[l], L.lv[l + 1], S->dpool), done);
    /* 6. the schedule */
    const sps_hs_level *lf = &L.lv[D - 1];
    const size_t l1 = (size_t)lf->n + 1;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&sums, 3 * l1 * sizeof *sums), done);
    int64_t *so = sums, *sI = sums + l1, *dI = sums + 2 * l1, tot[3];
    SPS_CHECK_GOTO(st, k->hs_sched_sums(sps_ex(ctx), *lf, so, sI, dI), done);
    /* the three totals, gathered on the device (stats is free again), one host read */
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats, so + lf->n, sizeof *stats, SPS_COPY_D2D), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats + 1, sI + lf->n, sizeof *stats, SPS_COPY_D2D), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, stats + 2, dI + lf->n, sizeof *stats, SPS_COPY_D2D), done);
    SPS_CHECK_GOTO(st, fetch(ctx, tot, stats, sizeof tot), done);
    SPS_CHECK_GOTO(st, store_sched_alloc(ctx, S, tot[0], tot[1], tot[2]), done);
    SPS_CHECK_GOTO(st, k->hs_sched(sps_ex(ctx), g, key, *lf, so, sI, dI, S->dsparse, S->ddense, S->dwarp), done);
done: /* freed in stream order, after the kernels that read them */
    levels_free(&L);
    sps_dfree(ctx, at), sps_dfree(ctx, hist), sps_dfree(ctx, mark);
    sps_dfree(ctx, sz), sps_dfree(ctx, stats), sps_dfree(ctx, sums);
    return st;
}

/* from backend CSR: the keys (step 1), then the tree */
static sps_status hisparse_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    sps_context ctx = B->ctx;
    sps_hisparse h;
    sps_hs_geom g;
    SPS_CHECK(hs_geometry(ctx, B->n, B->m, B->nnz, sps_scalar_size(B->t), sps_opt_int(opt, "node-size"), &h, &g));
    if (B->nnz == 0) return hs_store_build(B, opt, NULL, NULL, NULL);
    uint64_t *key = NULL;
    sps_index *perm = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&key, (size_t)B->nnz * sizeof *key), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&perm, (size_t)B->nnz * sizeof *perm), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->hs_keys(sps_ex(ctx), g, B->n, B->nnz, src->rowptr, src->col, key, perm), done);
    st = hs_store_build(B, opt, key, perm, src->val);
done:
    sps_dfree(ctx, key), sps_dfree(ctx, perm);
    return st;
}

static sps_status hisparse_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    return sps_csr_build_from_host(B, h, opt, hisparse_build);
}

static sps_status hisparse_to_csr(sps_matrix A, sps_csr_host *out)
{
    const hs_store *S = A->store;
    sps_hisparse H = S->H;
    const size_t vs = sps_scalar_size(A->t), e = (size_t)A->nnz + 1;
    out->n = A->n, out->m = A->m, out->nnz = A->nnz, out->t = A->t;
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&H.pool, S->dpool, H.bytes, "the HiSparse tree"));
    sps_status st = sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers");
    if (st == SPS_OK) st = sps_hcalloc(A->ctx, (void **)&out->col, e * sizeof(sps_index), "CSR columns");
    if (st == SPS_OK) st = sps_hcalloc(A->ctx, &out->val, e * vs, "CSR values");
    if (st == SPS_OK) sps_hisparse_to_csr(&H, S->trans, out->rowptr, out->col, out->val);
    free(H.pool);
    return st;
}

/* the product's schedule as the kernels take it (the product's and the sum's lists) */
static sps_hs_sched store_sched(const hs_store *S)
{
    return (sps_hs_sched){.pool = S->dpool, .sparse = S->dsparse, .dense = S->ddense, .warp_seg = S->dwarp,
                          .nsparse = S->nsparse, .nwarps = S->nwarps, .ndense = S->ndense, .d = S->H.d};
}

/* y = a op(A) x + b y: the backend's product over the schedule (op T: the same items,
 * coordinates swapped); it scales y itself, so that the GPU can overlap the scaling with the
 * product (kernels/cuda/hisparse.cu) */
static sps_status hisparse_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    const hs_store *S = A->store;
    const sps_index nout = mode == SPS_OP_N ? A->n : A->m;
    return sps_kmat(A->ctx, A->t)->hs_spmv(sps_ex(A->ctx), store_sched(S), a, x, b, y, nout,
                                           (mode == SPS_OP_T) ^ S->trans);
}

/* The pool (nodes, header, alignment) and the schedule; stored: the leaves' value slots */
static size_t hisparse_footprint(sps_matrix A, int64_t *stored)
{
    const hs_store *S = A->store;
    *stored = S->H.leaf_slots;
    return S->H.bytes + (size_t)(S->nsparse + S->ndense) * sizeof(sps_hs_item) +
           (S->nsparse ? (size_t)(S->nwarps + 1) * sizeof(int64_t) : 0);
}

/* an entry's local row and column within its leaf: a byte each (d <= 256) */
static int hisparse_index_bits(sps_matrix A) { return (void)A, 8; }

const sps_format_ops sps_format_hisparse = {
    .id = SPS_FMT_HISPARSE, .name = "hisparse",
    .summary = "HiSparse: a tree of d x d nodes (dense or 1/2/4-entry COO leaves), A^T x at A x's cost",
    SPS_FORMAT_OPTIONS(hisparse_options),
    .from_csr = hisparse_from_csr, .to_csr = hisparse_to_csr, .from_backend_csr = hisparse_build,
    .spmv = hisparse_spmv,
    .footprint = hisparse_footprint, .destroy = hisparse_destroy, .index_bits = hisparse_index_bits,
    .spmv_atomic = 1, /* hisparse.cu: one atomic per run of a row in a warp */
};


sps_status sps_hisparse_download(sps_matrix A, sps_hisparse_copy *out)
{
    memset(out, 0, sizeof *out);
    if (!A || A->ops != &sps_format_hisparse)
        return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_hisparse_download: not a hisparse matrix") : SPS_ERR_ARG;
    const hs_store *S = A->store;
    out->H = S->H;
    out->H.pool = NULL, out->H.cap = 0;
    out->trans = S->trans;
    out->nsparse = S->nsparse, out->ndense = S->ndense, out->nwarps = S->nwarps;
    sps_status st = sps_ddownload(A->ctx, (void **)&out->H.pool, S->dpool, S->H.bytes, "the HiSparse tree");
    if (st == SPS_OK && S->nsparse) {
        st = sps_ddownload(A->ctx, (void **)&out->sparse, S->dsparse, (size_t)S->nsparse * sizeof *S->dsparse,
                           "the HiSparse segments");
        if (st == SPS_OK)
            st = sps_ddownload(A->ctx, (void **)&out->warp_seg, S->dwarp, ((size_t)S->nwarps + 1) * sizeof *S->dwarp,
                               "the HiSparse warps");
    }
    if (st == SPS_OK && S->ndense)
        st = sps_ddownload(A->ctx, (void **)&out->dense, S->ddense, (size_t)S->ndense * sizeof *S->ddense,
                           "the HiSparse dense leaves");
    if (st == SPS_OK) out->H.cap = out->H.bytes;
    else sps_hisparse_copy_free(out);
    return st;
}

void sps_hisparse_copy_free(sps_hisparse_copy *c)
{
    sps_hisparse_free(&c->H);
    free(c->sparse), free(c->dense), free(c->warp_seg);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- C = alpha op(A) + beta op(B) */
/* C = alpha op(A) + beta op(B) on the backend that holds A and B (kernels/format_kernels_hisparse.h,
 * "C = op(A) + op(B) on the backend"): each operand's entries listed from its schedule with
 * their keys in C's geometry (a transposed operand's coordinates swapped: no transpose is
 * built), one stable sort of both lists (a merge where both are in C's order already), the
 * distinct keys and their values, then the tree from sorted keys (hs_store_build, steps 2-6 of
 * the build).  Two transposed operands sum as they are and C is that sum's transpose, a view
 * (hs_store.trans: the paper's matrix state apart from the content), so their lists merge
 * too.  A and B may differ in node size from C and from each other.  An operand of another
 * format is converted to hisparse on its backend first (with C's options): the issue's
 * conversion path for CSR inputs. */
typedef struct {
    const uint64_t *key;
    const void *val;
} hs_sum;

static sps_status sum_build(sps_matrix C, void *arg, sps_options opt)
{
    const hs_sum *u = arg;
    return hs_store_build(C, opt, u->key, NULL, u->val);
}

/* The one-pass sum (kernels/hisparse_small.h) of operands xa, xb into C's geometry g: one
 * scratch allocation carved into its arrays, the shape, one read of its sizes, then C built at
 * those sizes (small_build) and filled. */
typedef struct {
    sps_hs_small w;
    const int64_t *stats; /* the shape's results, on the host */
} hs_small_arg;

static sps_status small_build(sps_matrix C, void *arg, sps_options opt)
{
    hs_small_arg *a = arg;
    const int64_t *st = a->stats;
    sps_context ctx = C->ctx;
    hs_store *S;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&S, sizeof *S, "HiSparse handle"));
    C->store = S; /* on failure the caller destroys C */
    sps_hisparse *H = &S->H;
    SPS_CHECK(hs_geometry(ctx, C->n, C->m, C->nnz, sps_scalar_size(C->t), sps_opt_int(opt, "node-size"), H, NULL));
    SPS_CHECK(store_pool(ctx, S, st[SPS_HSS_TOTAL], (int)st[SPS_HSS_RTYPE], (uint32_t)st[SPS_HSS_ROWN], st));
    SPS_CHECK(store_sched_alloc(ctx, S, st[SPS_HSS_SO], st[SPS_HSS_NSEG], st[SPS_HSS_NDENSE]));
    a->w.pool = S->dpool, a->w.sparse = S->dsparse, a->w.dense = S->ddense, a->w.warp_seg = S->dwarp;
    return sps_kidx(ctx)->hs_small_fill(sps_ex(ctx), &a->w);
}

/* the scratch's arrays for C of n x m, carved from base (NULL: only counted); returns the
 * bytes.  A level's node arrays: at most its d^(depth - l)-square blocks of C, and nv. */
static size_t small_carve(sps_hs_small *w, unsigned char *base, sps_index n, sps_index m, size_t vs)
{
    const int64_t slots = sps_hs_small_slots(w);
    const size_t n1 = (size_t)w->nv + 1, ns = (size_t)(slots > SPS_HS_SMALL_SLOTS ? slots : SPS_HS_SMALL_SLOTS);
    const int depth = w->g.depth;
    size_t at = 0;
#define CARVE(ptr, bytes) HS_CARVE(at, base, ptr, bytes)
    CARVE(w->key, ns * sizeof *w->key);
    CARVE(w->src, ns * sizeof *w->src);
    CARVE(w->mark, n1);
    CARVE(w->at, n1 * sizeof *w->at);
    CARVE(w->ustart, n1 * sizeof *w->ustart);
    CARVE(w->ukey, n1 * sizeof *w->ukey);
    CARVE(w->val, n1 * vs);
    CARVE(w->sz, n1 * sizeof *w->sz);
    CARVE(w->so, n1 * sizeof *w->so);
    CARVE(w->sI, n1 * sizeof *w->sI);
    CARVE(w->dI, n1 * sizeof *w->dI);
    CARVE(w->stats, SPS_HSS_COUNT * sizeof *w->stats);
    CARVE(w->bsum, (size_t)SPS_HSS_MAX_BLOCKS * SPS_HSS_SCANS * sizeof *w->bsum);
    int64_t span = w->g.d; /* the rows (columns) a node of level l covers: d^(depth - l) */
    for (int l = depth - 1; l >= 0; l--, span *= w->g.d) {
        const int64_t blocks = ((int64_t)n + span - 1) / span * (((int64_t)m + span - 1) / span);
        const size_t c1 = (size_t)(blocks < w->nv ? blocks : w->nv) + 1;
        at = sps_hs_align16(at);
        at += level_carve(&w->lv[l], base ? base + at : NULL, c1);
    }
#undef CARVE
    w->lv[depth - 1].at = w->at; /* the leaves' entries' leaf (sps_hs_small_shape) */
    return at;
}

/* hs_add_values' overflow flag (~u of the first distinct key whose alpha a + beta b is not
 * finite, 0 for none: the operands and scales are finite, so only an overflow): its error,
 * naming the entry (ukey: the distinct keys in backend memory), or SPS_OK */
static sps_status add_overflow(sps_context ctx, sps_scalar t, sps_hs_geom g, const uint64_t *ukey, uint64_t bad,
                               int view)
{
    if (!bad) return SPS_OK;
    uint64_t key = 0;
    sps_index r = -1, c = -1;
    if (fetch(ctx, &key, ukey + ~bad, sizeof key) == SPS_OK) sps_hs_unkey(g, key, view ? &c : &r, view ? &r : &c);
    return sps_error(ctx, SPS_ERR_NUMERIC,
                     "sps_matrix_add: alpha op(A) + beta op(B) overflows %s at entry (%d, %d) (0-based)",
                     sps_scalar_name(t), (int)r, (int)c);
}

/* the sum of trees op(A) and op(B) (ta, tb: the ops on the trees), n x m; view: C will be its
 * transpose (add_view; for the overflow's message) */
static sps_status add_small(sps_cplx alpha, sps_matrix A, int ta, sps_cplx beta, sps_matrix B, int tb, sps_options opt,
                            sps_hs_geom g, sps_index n, sps_index m, int view, sps_matrix *C)
{
    sps_context ctx = A->ctx;
    const size_t vs = sps_scalar_size(A->t);
    hs_small_arg a = {.w = {.xa = store_sched(A->store), .xb = store_sched(B->store), .ta = ta, .tb = tb, .g = g,
                            .vs = vs, .nv = A->nnz + B->nnz}};
    const int64_t ca = sps_hs_list_slots(a.w.xa);
    unsigned char *ws = NULL;
    uint64_t *list = NULL; /* the longer lists before their sort into w.key, w.src */
    int64_t stats[SPS_HSS_COUNT];
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&ws, small_carve(&a.w, NULL, n, m, vs)), done);
    small_carve(&a.w, ws, n, m, vs);
    if (sps_hs_small_sorted(&a.w)) { /* longer lists: listed and sorted here, not in one block */
        const sps_idx_kernels *k = sps_kidx(ctx);
        const int64_t S = sps_hs_small_slots(&a.w);
        SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&list, 2 * (size_t)S * sizeof *list), done);
        SPS_CHECK_GOTO(st, k->hs_list(sps_ex(ctx), a.w.xa, vs, ta, g, 0, list, list + S), done);
        SPS_CHECK_GOTO(st, k->hs_list(sps_ex(ctx), a.w.xb, vs, tb, g, SPS_HS_TAG_B, list + ca, list + S + ca), done);
        if (sps_hs_list_sorted(a.w.xa, ta, g) && sps_hs_list_sorted(a.w.xb, tb, g)) /* two ordered runs */
            SPS_CHECK_GOTO(st, k->hs_merge_pairs(sps_ex(ctx), ca, list, list + S, S - ca, list + ca, list + S + ca,
                                                 a.w.key, a.w.src), done);
        else
            SPS_CHECK_GOTO(st, k->hs_sort_pairs(sps_ex(ctx), S, sps_hs_key_bits(g) + 1, list, list + S, a.w.key,
                                                a.w.src), done);
        sps_dfree(ctx, list), list = NULL; /* stream-ordered: after the sort, not held through C's build */
    }
    SPS_CHECK_GOTO(st, sps_kmat(ctx, A->t)->hs_small_shape(sps_ex(ctx), &a.w, alpha, beta), done);
    SPS_CHECK_GOTO(st, fetch(ctx, stats, a.w.stats, sizeof stats), done);
    SPS_CHECK_GOTO(st, add_overflow(ctx, A->t, g, a.w.ukey, (uint64_t)stats[SPS_HSS_BAD], view), done);
    a.stats = stats;
    st = sps_matrix_build(ctx, SPS_FMT_HISPARSE, opt, n, m, stats[SPS_HSS_NU], A->t, small_build, &a, C);
done: /* freed in stream order, after the fill */
    sps_dfree(ctx, ws), sps_dfree(ctx, list);
    return st;
}

/* st's sum C made the transpose view of its tree where view is set: its sizes swapped */
static sps_status add_view(sps_status st, int view, sps_matrix C)
{
    if (st == SPS_OK && view) {
        hs_store *S = C->store;
        const sps_index t = C->n;
        C->n = C->m, C->m = t;
        S->trans = 1;
    }
    return st;
}

/* the sum of hisparse A and B (checked by the caller), C's options opt (not NULL) */
static sps_status add_trees(sps_cplx alpha, sps_matrix A, int ta, sps_cplx beta, sps_matrix B, int tb, sps_options opt,
                            sps_matrix *C)
{
    sps_context ctx = A->ctx;
    const sps_idx_kernels *k = sps_kidx(ctx);
    const size_t vs = sps_scalar_size(A->t);
    /* op on the trees: an operand that is a transpose view flips its op; two transposed trees
       sum as they are and C is the transpose of that sum (view), since A^T + B^T = (A + B)^T:
       the trees' lists are in order then (sps_hs_list_sorted), and a transposed list is not */
    const hs_store *SA = A->store, *SB = B->store;
    ta ^= SA->trans, tb ^= SB->trans;
    const int view = ta && tb;
    if (view) ta = tb = 0;
    const sps_index n = ta ? SA->H.m : SA->H.n, m = ta ? SA->H.n : SA->H.m; /* the sum's tree */
    sps_hisparse h;
    sps_hs_geom g;
    SPS_CHECK(hs_geometry(ctx, n, m, 0, vs, sps_opt_int(opt, "node-size"), &h, &g));
    const sps_hs_sched xa = store_sched(A->store), xb = store_sched(B->store);
    const int64_t ca = sps_hs_list_slots(xa), cb = sps_hs_list_slots(xb), nv = A->nnz + B->nnz;
    if (nv > 0 && ca + cb <= sps_opt_int(opt, "small-sum") && g.depth <= SPS_HS_SMALL_DEPTH) {
        const sps_status st = add_small(alpha, A, ta, beta, B, tb, opt, g, n, m, view, C);
        return add_view(st, view, *C); /* *C read after the call that sets it */
    }
    if (ca + cb >= INT32_MAX) /* the lists' indices and counts are 32-bit on both backends */
        return sps_error(ctx, SPS_ERR_UNSUPPORTED,
                         "sps_matrix_add: %lld + %lld entries list %lld slots (at most %d)", (long long)A->nnz,
                         (long long)B->nnz, (long long)(ca + cb), INT32_MAX - 1);
    uint64_t *list = NULL, *key = NULL, *src = NULL, *ukey = NULL;
    sps_index *ustart = NULL, *at = NULL, *hist = NULL, nu = 0;
    uint64_t *bad = NULL, badh = 0; /* hs_add_values' overflow flag */
    uint8_t *mark = NULL;
    void *val = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&list, (2 * (size_t)(ca + cb) + 1) * sizeof *list), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&key, ((size_t)(ca + cb) + 1) * sizeof *key), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&src, ((size_t)(ca + cb) + 1) * sizeof *src), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&ustart, ((size_t)nv + 1) * sizeof *ustart), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&at, ((size_t)nv + 1) * sizeof *at), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&mark, (size_t)nv + 1), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&hist, ((size_t)g.depth + 2) * sizeof *hist), done);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, hist, ((size_t)g.depth + 2) * sizeof *hist), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&bad, sizeof *bad), done);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, bad, sizeof *bad), done);
    uint64_t *lkey = list, *lsrc = list + ca + cb; /* the lists, sorted into key and src */
    SPS_CHECK_GOTO(st, k->hs_list(sps_ex(ctx), xa, vs, ta, g, 0, lkey, lsrc), done);
    SPS_CHECK_GOTO(st, k->hs_list(sps_ex(ctx), xb, vs, tb, g, SPS_HS_TAG_B, lkey + ca, lsrc + ca), done);
    /* the empty slots' key is 1 << bits: one bit more sorts them last; two ordered runs merge */
    if (sps_hs_list_sorted(xa, ta, g) && sps_hs_list_sorted(xb, tb, g))
        SPS_CHECK_GOTO(st, k->hs_merge_pairs(sps_ex(ctx), ca, lkey, lsrc, cb, lkey + ca, lsrc + ca, key, src), done);
    else SPS_CHECK_GOTO(st, k->hs_sort_pairs(sps_ex(ctx), ca + cb, sps_hs_key_bits(g) + 1, lkey, lsrc, key, src), done);
    sps_dfree(ctx, list), list = NULL; /* stream-ordered: after the sort, not held through C's build */
    /* the distinct keys: the entries of the sorted lists not marked as repeats (depth + 1) */
    SPS_CHECK_GOTO(st, k->hs_marks(sps_ex(ctx), g, nv, key, mark, hist), done);
    SPS_CHECK_GOTO(st, fetch(ctx, &nu, hist + g.depth + 1, sizeof nu), done);
    nu = (sps_index)nv - nu;
    SPS_CHECK_GOTO(st, k->hs_starts(sps_ex(ctx), nv, mark, g.depth, at, ustart), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&ukey, ((size_t)nu + 1) * sizeof *ukey), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &val, ((size_t)nu + 1) * vs), done);
    SPS_CHECK_GOTO(st, k->hs_ukeys(sps_ex(ctx), nu, ustart, key, ukey), done);
    SPS_CHECK_GOTO(st, sps_kmat(ctx, A->t)->hs_add_values(sps_ex(ctx), nu, ustart, src, xa.pool, xb.pool, alpha, beta,
                                                          val, bad), done);
    /* the flag read after the build: its own reads of sizes have waited for the values already */
    hs_sum u = {ukey, val};
    SPS_CHECK_GOTO(st, sps_matrix_build(ctx, SPS_FMT_HISPARSE, opt, n, m, nu, A->t, sum_build, &u, C), done);
    st = fetch(ctx, &badh, bad, sizeof badh);
    if (st == SPS_OK) st = add_overflow(ctx, A->t, g, ukey, badh, view);
    if (st != SPS_OK) sps_matrix_destroy(*C), *C = NULL;
    st = add_view(st, view, *C);
done: /* freed in stream order */
    sps_dfree(ctx, list), sps_dfree(ctx, key), sps_dfree(ctx, src), sps_dfree(ctx, ustart), sps_dfree(ctx, at);
    sps_dfree(ctx, mark), sps_dfree(ctx, hist);
    sps_dfree(ctx, ukey), sps_dfree(ctx, val), sps_dfree(ctx, bad);
    return st;
}

sps_status sps_matrix_add(const void *alpha_p, sps_matrix A, sps_op_mode opA, const void *beta_p, sps_matrix B,
                          sps_op_mode opB, sps_options opt, sps_matrix *C)
{
    if (!A || !B || !C) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_add: NULL argument") : SPS_ERR_ARG;
    *C = NULL;
    sps_context ctx = A->ctx;
    if (B->ctx != ctx) return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_add: A and B belong to different contexts");
    if (B->t != A->t)
        return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_add: A is %s, B is %s", sps_scalar_name(A->t),
                         sps_scalar_name(B->t));
    if (A->entry.kind != SPS_ENTRY_SCALAR || B->entry.kind != SPS_ENTRY_SCALAR)
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "sps_matrix_add: scalar entries only (hisparse stores no blocks)");
    if ((opA != SPS_OP_N && opA != SPS_OP_T) || (opB != SPS_OP_N && opB != SPS_OP_T))
        return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_add: op %d / %d (SPS_OP_N or SPS_OP_T)", (int)opA, (int)opB);
    const sps_index na = opA == SPS_OP_T ? A->m : A->n, ma = opA == SPS_OP_T ? A->n : A->m;
    const sps_index nb = opB == SPS_OP_T ? B->m : B->n, mb = opB == SPS_OP_T ? B->n : B->m;
    if (na != nb || ma != mb)
        return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_add: op(A) is %d x %d, op(B) %d x %d", (int)na, (int)ma,
                         (int)nb, (int)mb);
    if (opt && opt->desc != sps_format_hisparse.options)
        return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_add: options made for another format than hisparse");
    const sps_cplx alpha = sps_cplx_load(A->t, alpha_p, sps_cplx_make(1, 0)),
                   beta = sps_cplx_load(A->t, beta_p, sps_cplx_make(1, 0));
    const int af = isfinite(alpha.re) && isfinite(alpha.im), bf = isfinite(beta.re) && isfinite(beta.im);
    if (!af || !bf) /* as the builders refuse non-finite values */
        return sps_error(ctx, SPS_ERR_NUMERIC, "sps_matrix_add: %s is not finite (%g%+gi)", af ? "beta" : "alpha",
                         af ? beta.re : alpha.re, af ? beta.im : alpha.im);
    sps_options own = NULL;
    sps_matrix Ah = NULL, Bh = NULL;
    sps_status st = SPS_OK;
    if (!opt) { /* C's defaults (the call takes no context: the message is ours) */
        st = sps_format_options_create(SPS_FMT_HISPARSE, &own);
        if (st != SPS_OK)
            st = sps_error(ctx, st, "sps_matrix_add: hisparse's default options: %s",
                           st == SPS_ERR_ALLOC ? "out of host memory" : sps_status_name(st));
        opt = own;
    }
    if (st == SPS_OK && A->ops != &sps_format_hisparse) st = sps_matrix_convert(A, SPS_FMT_HISPARSE, opt, &Ah);
    if (st == SPS_OK && B->ops != &sps_format_hisparse) st = sps_matrix_convert(B, SPS_FMT_HISPARSE, opt, &Bh);
    if (st == SPS_OK)
        st = add_trees(alpha, Ah ? Ah : A, opA == SPS_OP_T, beta, Bh ? Bh : B, opB == SPS_OP_T, opt, C);
    sps_matrix_destroy(Ah);
    sps_matrix_destroy(Bh);
    sps_options_destroy(own);
    return st;
}
