/* CPU kernels of the Hola format (formats/hola.c, kernels/format_kernels_hola.h).
 *
 * The CPU is the oracle the GPU's Hola kernels are tested against, so the
 * products are the CSR kernels on the same arrays (csr_spmv: rows summed left
 * to right; csr_spmvt: chunked scatter buffers, deterministic); the row-starts
 * buffer is a GPU schedule and they neither need nor touch it.
 * hola_row_starts computes the buffer the GPU's first kernel writes (Hola
 * Algorithm 2, the scatter over rows), as the reference for that kernel. */
#include "kernels/cpu/common.h"

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_hola_row_starts(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, int npt,
                               sps_index *row_starts)
{
    (void)ex;
    const int64_t per = (int64_t)HOLA_THREADS * npt;
    const sps_index nb = sps_hola_blocks(nnz, npt);
#pragma omp parallel for schedule(static) if (n > SPS_OMP_MIN)
    for (sps_index i = 0; i < n; i++) {
        const int64_t a = rowptr[i], b = rowptr[i + 1];
        if (b == a) continue;
        for (int64_t blk = (a + per - 1) / per; blk <= (b - 1) / per; blk++) row_starts[blk] = i;
        if (b == nnz) row_starts[nb] = i;
    }
    return SPS_OK;
}

#define SPS_TEMPLATE "kernels/cpu/hola.inc"
#include "kernels/cpu/instantiate.h"
