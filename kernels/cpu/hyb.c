/* CPU kernels of HYB's ELL part and its build (the COO tail uses coo_spmv /
 * coo_spmvt from spmv.inc; the row-length histogram is jds_rowlen_hist).
 *
 * Layout (formats/hyb.c): ELL of width K, column-major with leading dimension
 * ld (a multiple of 32 >= n): slot k*ld + i holds entry k of row i, or column
 * -1 / value 0 as padding; a row's entries beyond K go, in order, to the COO
 * tail at tail_ptr[i].
 *
 * hyb_ell_spmv: one row per iteration (static schedule: rows cost at most K),
 *   entries in order, stopping at the first padding slot.
 * hyb_ell_spmvt: chunked scatter buffers (tscatter.inc): deterministic.
 * Build: serial scan of the tail counts, fill parallel over rows. */
#include "kernels/cpu/common.h"


#include <stdlib.h>

static sps_status tail_ptr_scan(sps_index n, const sps_index *rowptr, sps_index K, sps_index *tail_ptr)
{
    tail_ptr[0] = 0;
    for (sps_index i = 0; i < n; i++) {
        const sps_index L = rowptr[i + 1] - rowptr[i];
        tail_ptr[i + 1] = tail_ptr[i] + (L > K ? L - K : 0);
    }
    return SPS_OK;
}

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_hyb_tail_ptr(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index K, sps_index *tail_ptr)
{
    (void)ex;
    return tail_ptr_scan(n, rowptr, K, tail_ptr);
}

#define SPS_TEMPLATE "kernels/cpu/hyb.inc"
#include "kernels/cpu/instantiate.h"
