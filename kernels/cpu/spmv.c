/* CPU SpMV kernels (CSR, COO) for f32, f64, c32, c64: one generic source, spmv.inc. */
#include "kernels/cpu/common.h"

#include <stdlib.h>
#include <string.h>

/* COO's row array from CSR's (type-independent: one copy for every type's entry). */
static sps_status coo_rows_fill(sps_index n, const sps_index *rowptr, sps_index *row)
{
#pragma omp parallel for schedule(static) if (n > SPS_OMP_MIN)
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) row[k] = i;
    return SPS_OK;
}

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_coo_rows(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *row)
{
    (void)ex;
    return coo_rows_fill(n, rowptr, row);
}

/* Element moves by size: the element types are opaque here (memcpy of esize bytes
 * compiles to one load and store per element for the sizes used). */
sps_status sps_cpu_vec_relayout(sps_exec *ex, size_t esize, int d, sps_index n, int to_soa, const void *srcv, void *dstv)
{
    (void)ex;
    const unsigned char *src = srcv;
    unsigned char *dst = dstv;
#pragma omp parallel for schedule(static) if ((int64_t)n * d > SPS_OMP_MIN)
    for (sps_index j = 0; j < n; j++)
        for (int c = 0; c < d; c++) {
            const size_t aos = ((size_t)j * d + c) * esize, soa = ((size_t)c * n + j) * esize;
            memcpy(dst + (to_soa ? soa : aos), src + (to_soa ? aos : soa), esize);
        }
    return SPS_OK;
}

#define SPS_TEMPLATE "kernels/cpu/spmv.inc"
#include "kernels/cpu/instantiate.h"
