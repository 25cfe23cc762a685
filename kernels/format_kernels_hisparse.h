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
 * values at +val_at. */
static inline SPS_HS_HD int sps_hs_pad(int type, int64_t count)
{
    const int64_t x = type == SPS_HS_COO1 ? 1 : type == SPS_HS_COO2 ? 2 : 4;
    return (int)((count + x - 1) / x * x);
}
static inline SPS_HS_HD size_t sps_hs_align16(size_t b) { return (b + 15) & ~(size_t)15; }
/* A sparse node's values start aligned to what a thread loads at once, X values of vbytes
 * (X = 1, 2, 4 for COO1, COO2, COO4), at most 16 bytes: COO4's vector loads need 16; a
 * COO1 leaf of an f32 value then takes 16 bytes, not 32 (the node itself is 16-aligned). */
static inline SPS_HS_HD size_t sps_hs_val_at(int type, int pc, size_t vbytes)
{
    const size_t x = type == SPS_HS_COO1 ? 1 : type == SPS_HS_COO2 ? 2 : 4;
    size_t al = 1;
    while (al < x * vbytes && al < 16) al *= 2;
    const size_t b = 4 + 2 * (size_t)pc;
    return (b + al - 1) / al * al;
}
/* a dense leaf's values after its bitmask */
static inline SPS_HS_HD size_t sps_hs_dense_val_at(int d) { return sps_hs_align16(((size_t)d * d + 7) / 8); }

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
 * sparse leaves' entries in runs of at most SPS_HS_RUN (a leaf's segments, in tree
 * order), packed into warps of at most SPS_HS_RUN entries (warp w takes segments
 * [warp_seg[w], warp_seg[w + 1]): a thread an entry, so every thread has one entry's
 * work whether the leaves hold 1 entry or 1000); a dense leaf whole (a block: a warp a
 * row, or a column for A^T). */
#define SPS_HS_RUN 32
typedef struct {
    uint32_t ref;          /* the leaf */
    sps_index r0, c0;      /* its first row and column */
    uint16_t first, count; /* a sparse leaf's entries [first, first + count); a dense leaf: 0, 0 */
} sps_hs_item;

typedef struct {
    const unsigned char *pool;         /* the tree (backend memory) */
    const sps_hs_item *sparse, *dense; /* the segments and the dense leaves (backend memory) */
    const int64_t *warp_seg;           /* nwarps + 1 segment offsets (backend memory) */
    int64_t nsparse, nwarps, ndense;
    int d;
} sps_hs_sched;

/* X(P, S, name, args); see kernels/kernels.h. */
#define SPS_KERNEL_LIST_HISPARSE(X, P, S)                                                                 \
    /* y += a op(A) x over the schedule (trans: A^T, each entry's coordinates swapped); the order of the    \
       additions into y is not fixed on the GPU (atomics) */                                              \
    X(P, S, hs_spmv, (sps_exec *ex, sps_hs_sched H, sps_cplx a, const void *x, void *y, int trans))

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
