/* libspsolve — the shape rules of the CSR row-group kernels (kernels/cuda/csr.cu),
 * shared by the CUDA kernels (grid sizing, the device's choice of lanes) and the
 * CSR format on the host (which schedule a matrix gets, formats/csr.c).  The
 * measurements behind each rule are beside the kernels (kernels/cuda/csr_common.cuh). */
#ifndef SPS_KERNELS_CSR_ROWS_H
#define SPS_KERNELS_CSR_ROWS_H

#include "spsolve/types.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SPS_CSR_HD __host__ __device__
#else
#define SPS_CSR_HD
#endif

/* Rows of 8 or more entries on average get their lanes doubled while n TPR is
 * below 128k threads (so that few rows still spread over the GPU). */
#define SPS_CSR_MIN_THREADS 131072
#define SPS_CSR_SPREAD_MIN_AVG 8
/* Long rows: more than max(1024, 64 TPR) entries, one block a row; medium: more
 * than 8 TPR (below TPR 32), one warp a row; both in the kernels' first pass. */
#define SPS_CSR_LONG_MIN 1024
#define SPS_CSR_MED_FACTOR 8

/* Entries a lane: 2^shift, shift 2 for 4-byte values, 1 for 8-byte, 0 for 16-byte. */
static inline SPS_CSR_HD int sps_csr_lane_shift(size_t scalar_bytes)
{
    return scalar_bytes <= 4 ? 2 : scalar_bytes <= 8 ? 1 : 0;
}
/* Lanes a row (a power of two <= 32) from n, nnz, the shift and the spreading
 * threshold (0: no spreading). */
static inline SPS_CSR_HD int sps_csr_tpr(sps_index n, int64_t nnz, int shift, int64_t min_threads)
{
    const int64_t avg = n > 0 ? nnz / n : 0;
    const int64_t want = avg >> shift; /* entries per lane: about 2^shift */
    int t = 1;
    while (t < 32 && 2 * t <= want) t *= 2;
    if (avg >= SPS_CSR_SPREAD_MIN_AVG)
        while (t < 32 && (int64_t)n * t < min_threads) t *= 2;
    return t;
}
static inline SPS_CSR_HD sps_index sps_csr_long_len(int tpr)
{
    return 64 * tpr > SPS_CSR_LONG_MIN ? 64 * tpr : SPS_CSR_LONG_MIN;
}
static inline SPS_CSR_HD sps_index sps_csr_med_len(int tpr)
{
    return tpr < 32 ? SPS_CSR_MED_FACTOR * tpr : sps_csr_long_len(tpr);
}
/* Lanes a row of the default row-group SpMV (op N) given the longest row (maxrow; < 0
 * unknown): sps_csr_tpr, doubled while the longest row would take the medium/long-row
 * pass and the wider groups keep n TPR within min_threads, where some such width skips the
 * pass (else the lanes stay as they were: wider groups would not save it).  That pass is a second chain
 * of dependent loads before the rows' own (the rows' lengths, then each medium row by a
 * warp); on a matrix of few rows the wider groups cost idle lanes, not time. */
static inline SPS_CSR_HD int sps_csr_tpr_fit(sps_index n, int64_t nnz, sps_index maxrow, int shift, int64_t min_threads)
{
    const int t = sps_csr_tpr(n, nnz, shift, min_threads);
    int w = t;
    while (maxrow >= 0 && w < 32 && maxrow > sps_csr_med_len(w) && (int64_t)n * 2 * w <= min_threads) w *= 2;
    return maxrow >= 0 && maxrow <= sps_csr_med_len(w) ? w : t; /* no width skips the pass: unwidened */
}
/* Whether the default row-group SpMV of this matrix runs its long/medium-row pass
 * (maxrow: the longest row). */
static inline int sps_csr_rows_long_pass(sps_index n, int64_t nnz, sps_index maxrow, size_t scalar_bytes)
{
    return maxrow > sps_csr_med_len(
                        sps_csr_tpr_fit(n, nnz, maxrow, sps_csr_lane_shift(scalar_bytes), SPS_CSR_MIN_THREADS));
}

#endif
