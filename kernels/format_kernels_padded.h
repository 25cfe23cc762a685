/* Kernels of the padded / row-grouped formats: ELLPACK-R, SELL-C-sigma, RgCSR.
 *
 * The three formats share one OUTER LAYOUT, described by sps_pad_layout: the
 * rows (in storage order, possibly a permutation of the original rows) are cut
 * into groups of h consecutive storage rows; inside group g the entries are
 * stored column-major ("interleaved"): entry k of storage row r is at slot
 *
 *     grp_ptr[g] + k * stride_g + (r - g*h),   g = r / h,
 *     stride_g = min(h, nstored - g*h)
 *
 * and group g holds width_g = (grp_ptr[g+1] - grp_ptr[g]) / stride_g slots per
 * row (the longest row of the group).  rl[r] is the number of real entries of
 * storage row r: slots k >= rl[r] are padding (col -1, value 0) and are never
 * read by the SpMV kernels, so padding costs memory, never arithmetic, and an
 * Inf/NaN in x cannot leak into rows that do not reference it.
 *
 *   ELLPACK-R : one group, h = nstored = ld = n rounded up to 32  -> slot k*ld + r
 *   SELL-C-s  : h = C (16/32), nstored = n rounded up to C (last slice padded)
 *   RgCSR     : h = G (32..256), nstored = n (the last group's stride is its own
 *               row count, as the kernel of Oberhuber et al. §3.4)
 *
 * The layout holds indices only; values live in a separate array addressed by
 * slot (entry of slot s at val[s*ew .. s*ew+ew), ew scalars per entry), so a
 * compound entry type (quaternion: ew = 4, b x b block: ew = b*b; AoS as here,
 * or SoA: member e of slot s at val[e*slots + s]) reuses the same layout and the
 * same build kernels with a different value array: the formats bell and bsell,
 * whose SpMV kernels are the compound family's (kernels/compound_kernels.h).
 *
 * Long rows: one thread per row makes a warp wait for its longest row, and a
 * single row of 20000 entries costs one thread 20000 dependent steps (Oberhuber
 * et al. §4.4.2: trans4, Raj1).  The layout therefore lists the storage rows
 * longer than long_len = max(SPS_PAD_LONG_MIN, SPS_PAD_LONG_FACTOR x the mean
 * row length) (long_rows, increasing); the GPU's row-per-thread kernels skip
 * them and a second kernel gives each a block.  Relative to the mean, so a
 * matrix of uniformly long rows (3D elasticity: 81) keeps every row on the
 * coalesced row-per-thread path.  The list is a schedule, not data: the CPU
 * kernels ignore it.
 *
 * Build kernels (formats/padded.c runs them in this order, on either backend):
 *   pad_rowlen      rl[r] = row length of original row perm[r] (perm NULL: r)
 *   pad_sort_rows   perm = rows sorted by decreasing length inside windows of
 *                   `window` rows, ties in increasing row order (a stable sort:
 *                   the CPU and the GPU give the same permutation)
 *   pad_widths      w[q] = max rl over storage rows [q*chunk, (q+1)*chunk),
 *                   and the chunks' column ranges (for 16-bit columns)
 *   pad_group_ptr   SELL / RgCSR group pointers from the widths (a scan; only
 *                   the widest group, the column ranges and the slot total
 *                   come to the host)
 *   pad_scatter_col the layout's column array (32- or 16-bit), every slot
 *                   written once
 *   pad_scatter_val the value array, every slot written once (ew scalars each)
 * SpMV: pad_spmv (y = a A x + b y), pad_spmvt (y = a A^T x + b y); b == 0: y is
 * not read.  Index arrays are 32-bit (columns 16-bit where they fit, below);
 * slot offsets are 64-bit. */
#ifndef SPS_FORMAT_KERNELS_PADDED_H
#define SPS_FORMAT_KERNELS_PADDED_H

#include "spsolve/types.h"

/* Rows longer than max(SPS_PAD_LONG_MIN, SPS_PAD_LONG_FACTOR x mean row length)
 * are summed by a block of threads on the GPU, not by one thread.  H100,
 * power-law matrix of 2M rows (mean 5.6, longest 20000), SELL-32 sigma 1024:
 * 9.5 ms with no long-row path, 0.34 ms with a fixed 256, 0.27 ms with 64
 * (CSR: 0.23 ms).  No longer overridable (bench/results/knobs.md). */
#define SPS_PAD_LONG_MIN 64
#define SPS_PAD_LONG_FACTOR 4

/* 16-bit column indices (sps_pad_layout.col16): a group whose columns span at
 * most SPS_PAD_COL16_SPAN (largest - smallest) stores each column as its offset
 * from the group's smallest column, cbase[g]; the all-ones offset marks padding.
 * SpMV reads 2 index bytes a slot instead of 4: an f64 slot is 10 bytes, not 12,
 * an f32 slot 6, not 8 (the padded SpMV is bandwidth-bound, so time follows).
 * Chosen by the index-bits option: auto when every group fits. */
#define SPS_PAD_COL16_PAD 0xFFFFu
#define SPS_PAD_COL16_SPAN 0xFFFE

#if defined(__CUDACC__)
#define SPS_PAD_HD __host__ __device__
#else
#define SPS_PAD_HD
#endif

/** The index part of a padded matrix (pointers are backend memory). */
typedef struct sps_pad_layout {
    sps_index n, m;           /* rows and columns of the matrix */
    sps_index h;              /* storage rows per group (ELL: ld) */
    sps_index nstored;        /* storage rows, padding rows included (ELL: ld; SELL: slices*C; RgCSR: n) */
    sps_index ngroups;
    int64_t nnz;              /* real entries */
    int64_t slots;            /* grp_ptr[ngroups]: stored entries, padding included */
    const int64_t *grp_ptr;   /* ngroups + 1 slot offsets */
    const sps_index *rl;      /* n: real entries of storage row r */
    const sps_index *perm;    /* n: original row of storage row r; NULL = identity */
    const sps_index *col;     /* slots: column of each slot, -1 for padding; NULL with col16 */
    const uint16_t *col16;    /* slots: column - cbase[group], SPS_PAD_COL16_PAD for padding; or NULL */
    const sps_index *cbase;   /* ngroups: the smallest column of each group (with col16), else NULL */
    sps_index long_len;       /* rows longer than this are "long" (see above) */
    sps_index nlong;          /* storage rows with rl > long_len */
    const sps_index *long_rows; /* nlong storage rows, increasing (GPU schedule; CPU ignores) */
    const void *vdict;        /* NULL: the value array holds a value a slot; else it holds a uint8_t a slot,
                                 the index of the slot's value in vdict (the matrix's scalar type; formats/vdict.h) */
} sps_pad_layout;

/** Bytes of a stored column index: 2 where L has base columns (16-bit offsets), else 4.
 *  cbase marks the width from the moment the build chooses it (before col16 exists). */
static inline SPS_PAD_HD int sps_pad_col_bytes(const sps_pad_layout *L) { return L->cbase ? 2 : 4; }

/** The 16-bit slot of column c in a group whose smallest column is base (the
 *  inverse of sps_pad_col_at; pad_scatter_col on both backends). */
static inline SPS_PAD_HD uint16_t sps_pad_col16_of(sps_index c, sps_index base) { return (uint16_t)(c - base); }

/** Column of a slot of group g (-1 for padding), whichever index width L stores. */
static inline SPS_PAD_HD sps_index sps_pad_col_at(const sps_pad_layout *L, sps_index g, int64_t slot)
{
    if (!L->col16) return L->col[slot];
    const uint16_t c = L->col16[slot];
    return c == SPS_PAD_COL16_PAD ? -1 : L->cbase[g] + (sps_index)c;
}

/** First slot of storage row r; *stride = distance between its consecutive entries. */
static inline SPS_PAD_HD int64_t sps_pad_row_base(const sps_pad_layout *L, sps_index r, sps_index *stride)
{
    const sps_index g = r / L->h, r0 = g * L->h;
    const sps_index left = L->nstored - r0;
    *stride = left < L->h ? left : L->h;
    return L->grp_ptr[g] + (r - r0);
}

/* X(P, S, name, args); see kernels/kernels.h. */
#define SPS_KERNEL_LIST_PADDED(X, P, S)                                                                     \
    /* every slot of L: the CSR entry's ew scalars (src_val: ew a CSR position, together), zeros for      \
     * padding; member e of slot s at val[s*ew + e], or val[e*L.slots + s] when soa (compound SoA) */         \
    X(P, S, pad_scatter_val, (sps_exec *ex, sps_pad_layout L, const sps_index *rowptr,                   \
                              const void *src_val, int ew, int soa, void *val))                             \
    /* y = a A x + b y (y: n entries, original row order); b == 0: y not read.  val: the values, or the   \
     * dictionary's indices where L.vdict is set (pad_spmv and pad_spmvt) */                                \
    X(P, S, pad_spmv, (sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a, const void *x,       \
                       sps_cplx b, void *y))                                                                \
    /* y = a A^T x + b y (y: m entries); b == 0: y not read */                                              \
    X(P, S, pad_spmvt, (sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a, const void *x,      \
                        sps_cplx b, void *y))

#endif
