/* CPU kernels of JDS (jagged diagonal storage) and the row-length statistics
 * that HYB shares (jds_rowlen_max, jds_rowlen_hist).
 *
 * Layout (formats/jds.c): rows sorted by decreasing length, perm[p] = original
 * row of permuted row p; jagged diagonal d = entry d of every permuted row
 * longer than d, i.e. of rows p = 0..len_d-1, stored contiguously at
 * jd_ptr[d] + p (column jd_col, value jd_val).
 *
 * jds_spmv: one permuted row per iteration (dynamic schedule), summed over the
 *   diagonals in order, i.e. over the row's columns left to right: the same
 *   operations in the same order as csr_spmv, so the result is bit-identical
 *   to CSR on the CPU.
 * jds_spmvt: chunked scatter buffers (tscatter.inc): deterministic.
 * Build: row-length histogram and counting sort (serial, O(n): the reference
 *   for the GPU's stable radix sort), fill parallel over permuted rows. */
#include "kernels/cpu/common.h"


#include <stdlib.h>
#include <string.h>

static sps_status rowlen_max(sps_index n, const sps_index *rowptr, sps_index *maxlen)
{
    sps_index mx = 0;
#pragma omp parallel for reduction(max : mx) schedule(static) if (n > SPS_OMP_MIN)
    for (sps_index i = 0; i < n; i++) {
        const sps_index L = rowptr[i + 1] - rowptr[i];
        if (L > mx) mx = L;
    }
    *maxlen = mx;
    return SPS_OK;
}

static sps_status rowlen_hist(sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *hist)
{
    memset(hist, 0, ((size_t)maxlen + 1) * sizeof *hist);
    for (sps_index i = 0; i < n; i++) hist[rowptr[i + 1] - rowptr[i]]++;
    return SPS_OK;
}

/* Counting sort by decreasing length; rows of one length keep their order. */
static sps_status perm_by_length(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *perm)
{
    sps_index *start = calloc((size_t)maxlen + 2, sizeof *start);
    if (!start) return sps_kerror(ex, SPS_ERR_ALLOC, "JDS: out of host memory for %zu bytes of counters",
                                 ((size_t)maxlen + 2) * sizeof *start);
    for (sps_index i = 0; i < n; i++) start[rowptr[i + 1] - rowptr[i]]++;
    /* start[L] = rows longer than L */
    sps_index above = 0;
    for (sps_index L = maxlen; L >= 0; L--) {
        const sps_index c = start[L];
        start[L] = above;
        above += c;
    }
    for (sps_index i = 0; i < n; i++) perm[start[rowptr[i + 1] - rowptr[i]]++] = i;
    free(start);
    return SPS_OK;
}

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_jds_rowlen_max(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *maxlen)
{
    (void)ex;
    return rowlen_max(n, rowptr, maxlen);
}

sps_status sps_cpu_jds_rowlen_hist(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *hist)
{
    (void)ex;
    return rowlen_hist(n, rowptr, maxlen, hist);
}

sps_status sps_cpu_jds_perm(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *perm)
{
    return perm_by_length(ex, n, rowptr, maxlen, perm);
}

#define SPS_TEMPLATE "kernels/cpu/jds.inc"
#include "kernels/cpu/instantiate.h"
