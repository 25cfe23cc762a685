/* CPU kernels of DIA (diagonal storage).
 *
 * Layout (formats/dia.c): ndiag diagonals with increasing offsets off[d] =
 * column - row; diagonal d is stored densely over the rows, slot d*n + i for
 * entry (i, i + off[d]); a slot outside the matrix or not in the pattern is
 * padding (value 0).  The mask has one bit per slot, set for the stored
 * entries (explicit zeros included): word d*nw + i/32, bit i%32, nw = ceil(n/32).
 *
 * dia_spmv: one row per iteration, diagonals in increasing offset = the row's
 *   columns left to right, padding skipped by the mask: the same operations in
 *   the same order as csr_spmv, so bit-identical to CSR on the CPU (and a NaN
 *   or Inf in x only reaches the rows whose pattern has that column).
 * dia_spmvt: one column j per iteration gathering A_ij x_i over the diagonals
 *   (i = j - off[d]): no scatter, deterministic, no scratch.
 * Build: flags of the occupied diagonals, their prefix sum (the flag -> diagonal
 *   map; the host reads only the count), the offsets, then the fill, parallel
 *   over groups of 32 rows, so each mask word has one writer. */
#include "kernels/cpu/common.h"


#include <string.h>

static inline sps_index dia_nwords(sps_index n) { return (sps_index)(((int64_t)n + 31) / 32); }
static inline int dia_bit(const uint32_t *mask, sps_index nw, sps_index d, sps_index i)
{
    return (int)((mask[(size_t)d * nw + (size_t)(i >> 5)] >> (i & 31)) & 1u);
}

static sps_status mark(sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col, sps_index *flag)
{
    const int64_t nflag = n > 0 && m > 0 ? (int64_t)n + m - 1 : 0;
    memset(flag, 0, (size_t)nflag * sizeof *flag);
#pragma omp parallel for schedule(static) if (n > SPS_OMP_MIN)
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) {
#pragma omp atomic write
            flag[(int64_t)col[k] - i + n - 1] = 1;
        }
    return SPS_OK;
}

/* dmap[q] = flags before q (serial: integers, the order does not matter) */
static sps_status scan(int64_t nflag, const sps_index *flag, sps_index *dmap)
{
    sps_index acc = 0;
    for (int64_t q = 0; q < nflag; q++) {
        dmap[q] = acc;
        acc += flag[q] != 0;
    }
    dmap[nflag > 0 ? nflag : 0] = acc;
    return SPS_OK;
}

static sps_status offsets(sps_index n, int64_t nflag, const sps_index *flag, const sps_index *dmap, sps_index *off)
{
    for (int64_t q = 0; q < nflag; q++)
        if (flag[q]) off[dmap[q]] = (sps_index)(q - (n - 1));
    return SPS_OK;
}

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
sps_status sps_cpu_dia_mark(sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col,
                        sps_index *flag)
{
    (void)ex;
    return mark(n, m, rowptr, col, flag);
}

sps_status sps_cpu_dia_scan(sps_exec *ex, int64_t nflag, const sps_index *flag, sps_index *dmap)
{
    (void)ex;
    return scan(nflag, flag, dmap);
}

sps_status sps_cpu_dia_offsets(sps_exec *ex, sps_index n, int64_t nflag, const sps_index *flag, const sps_index *dmap,
                           sps_index *off)
{
    (void)ex;
    return offsets(n, nflag, flag, dmap, off);
}

#define SPS_TEMPLATE "kernels/cpu/dia.inc"
#include "kernels/cpu/instantiate.h"
