/* libspsolve — the merge-path schedule of CSR SpMV (kernels csr_merge_plan,
 * csr_spmv_merge; Merrill & Garland, "Merge-based parallel sparse matrix-vector
 * multiplication", SC'16).
 *
 * SpMV of an n-row CSR matrix with nnz entries is a merge of two sorted lists:
 * the row ends rowptr[1..n] and the entry indices 0..nnz-1.  Walking the merge,
 * entry k is consumed (its product added to the running row sum) while
 * k < the current row's end, else the row's end is consumed (the sum is the
 * row's result).  The n + nnz items of the walk are cut into tiles of
 * SPS_MERGE_THREADS x ipt items (ipt = sps_csr_merge_ipt(scalar size)); every
 * tile, and every thread inside it, gets the same number of items whatever
 * the row lengths: one row of 10^5 entries, runs of empty rows and rows of one
 * entry cost the same per item.  A row cut by a tile border is finished by a
 * fix-up pass that adds the tiles' partial sums in tile order: deterministic.
 *
 * The plan is the walk's coordinate at each tile border, tile t = 0 .. tiles:
 *     plan[2 t] = rows whose end lies before diagonal t * tile (the tile's first row),
 *     plan[2 t + 1] = entries before it (the tile's first entry);
 * the last pair is (n, nnz).  It depends on rowptr only; the CSR format builds
 * it once (csr_merge_plan) and keeps it beside the arrays, with room after it
 * for the tiles' carries (2 scalars a tile).  rowptr[0] must be 0. */
#ifndef SPS_KERNELS_CSR_MERGE_H
#define SPS_KERNELS_CSR_MERGE_H

#include "spsolve/types.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SPS_MERGE_HD __host__ __device__
#else
#define SPS_MERGE_HD
#endif

#define SPS_MERGE_THREADS 256
/* Items a thread: 6 (4 for 16-byte complex double: shared memory and registers).
 * H100, spbench 2026-11-23, powerlaw-2M (ms, f64 / f32): 6 items 0.410 / 0.373,
 * 8 items 0.414 / 0.375, 12 items 0.709 / 0.480 (fewer resident blocks); a
 * 6-block register cap on 8 items: 0.424 / 0.373.  6 for the scalars of up to 8
 * bytes, no longer a knob (bench/results/knobs.md); the C and CUDA sources share it. */
#define SPS_CSR_MERGE_IPT_SMALL 6
static inline SPS_MERGE_HD int sps_csr_merge_ipt(size_t scalar_bytes) { return scalar_bytes <= 8 ? SPS_CSR_MERGE_IPT_SMALL : 4; }
static inline SPS_MERGE_HD int64_t sps_csr_merge_tile(size_t scalar_bytes)
{
    return (int64_t)SPS_MERGE_THREADS * sps_csr_merge_ipt(scalar_bytes);
}
static inline int64_t sps_csr_merge_tiles(sps_index n, int64_t nnz, size_t scalar_bytes)
{
    const int64_t per = sps_csr_merge_tile(scalar_bytes);
    return ((int64_t)n + nnz + per - 1) / per;
}
/* Bytes of the plan (2 (tiles + 1) indices, then the count of finished tiles
 * that the one-launch fix-up uses (csr_merge.cu; 0 between launches, set by
 * csr_merge_plan), rounded up to 16) ... */
static inline size_t sps_csr_merge_plan_bytes(sps_index n, int64_t nnz, size_t scalar_bytes)
{
    const size_t b = (size_t)(2 * (sps_csr_merge_tiles(n, nnz, scalar_bytes) + 1) + 1) * sizeof(sps_index);
    return (b + 15) / 16 * 16;
}
/* Where the plan of `tiles` tiles keeps its count of finished tiles. */
static inline SPS_MERGE_HD sps_index *sps_csr_merge_counter(sps_index *plan, int64_t tiles)
{
    return plan + 2 * (tiles + 1);
}
/* ... and of the whole buffer: the plan, then each tile's tail and head sums. */
static inline size_t sps_csr_merge_bytes(sps_index n, int64_t nnz, size_t scalar_bytes)
{
    return sps_csr_merge_plan_bytes(n, nnz, scalar_bytes) +
           2 * (size_t)sps_csr_merge_tiles(n, nnz, scalar_bytes) * scalar_bytes;
}

/** The walk's coordinate on diagonal d (0 <= d <= n + nnz): *row = the largest i
 *  with i <= d, i <= n and rowptr[i] <= d - i (the row ends consumed first:
 *  a row's end goes before entry k when rowptr[row + 1] <= k), *nz = d - *row.
 *  Binary search over rowptr (the host's plan and the GPU's are the same code). */
static inline SPS_MERGE_HD void sps_csr_merge_coord(int64_t d, sps_index n, int64_t nnz, const sps_index *rowptr,
                                                     sps_index *row, sps_index *nz)
{
    int64_t lo = d - nnz > 0 ? d - nnz : 0, hi = d < (int64_t)n ? d : (int64_t)n;
    while (lo < hi) { /* rows [0, lo) end at or before entry d - lo - 1 ... */
        const int64_t mid = (lo + hi) / 2;
        if (rowptr[mid + 1] <= d - 1 - mid) lo = mid + 1;
        else hi = mid;
    }
    *row = (sps_index)lo;
    *nz = (sps_index)(d - lo);
}

/** plan[2 t], plan[2 t + 1]: the coordinate at tile border t (diagonal t tile, the
 *  last border clamped to n + nnz); both backends' csr_merge_plan are this per t. */
static inline SPS_MERGE_HD void sps_csr_merge_plan_at(int64_t t, int64_t tile, sps_index n, int64_t nnz,
                                                       const sps_index *rowptr, sps_index *plan)
{
    const int64_t d = t * tile < (int64_t)n + nnz ? t * tile : (int64_t)n + nnz;
    sps_csr_merge_coord(d, n, nnz, rowptr, &plan[2 * t], &plan[2 * t + 1]);
}

#endif
