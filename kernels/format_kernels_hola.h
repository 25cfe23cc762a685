/* Kernels of the Hola format (formats/hola.c): plain CSR multiplied by the
 * Hola-SpMV / Hola-SpMV^T scheme of Steinberger et al., "Globally Homogeneous,
 * Locally Adaptive Sparse Matrix-Vector Multiplication on the GPU" (ICS '17).
 * CPU: kernels/cpu/hola.c (the reference: the CSR kernels on the same arrays,
 * plus the row starts), CUDA: kernels/cuda/hola.cu.
 *
 * Strict non-zero splitting: entry k of the matrix belongs to block
 * k / (HOLA_THREADS npt) and, inside it, to thread (k mod (HOLA_THREADS npt)) / npt,
 * npt = sps_hola_npt(nnz, sizeof scalar) non-zeros per thread.  The only data beyond CSR is the
 * row-starts buffer of sps_hola_blocks(nnz) + 1 indices (4 bytes a block):
 *     row_starts[b]       = the row holding entry b HOLA_THREADS npt, b < nblocks
 *     row_starts[nblocks] = the row holding entry nnz - 1
 * (nothing is written when nnz == 0).  The GPU recomputes it at every product
 * in the kernel that also scales y, so the CSR arrays may be those of any CSR
 * matrix: no other preprocessing.  rowptr[0] must be 0 (canonical CSR). */
#ifndef SPS_FORMAT_KERNELS_HOLA_H
#define SPS_FORMAT_KERNELS_HOLA_H

#include "spsolve/types.h"

#define HOLA_THREADS 256          /* threads a block (Hola §4: 256) */
#define HOLA_NPT_SMALL 4          /* non-zeros a thread up to HOLA_NPT_SWITCH non-zeros ... */
#define HOLA_NPT_LARGE 8          /* ... and beyond: Hola §4, 8 above 300k nnz (fewer blocks, */
#define HOLA_NPT_SWITCH 300000    /*     half the blocks; small matrices need the blocks to fill the GPU) */
#define HOLA_NPT_LARGE_MAX_BYTES 8 /* c64 keeps 4: 8 complex doubles a thread took 144 registers on sm_90 */

/** Non-zeros per thread for a matrix of nnz entries of scalar_bytes each (4 or 8). */
static inline int sps_hola_npt(int64_t nnz, size_t scalar_bytes)
{
    return nnz > HOLA_NPT_SWITCH && scalar_bytes <= HOLA_NPT_LARGE_MAX_BYTES ? HOLA_NPT_LARGE : HOLA_NPT_SMALL;
}
/** Thread blocks of the product: ceil(nnz / (HOLA_THREADS npt)). */
static inline sps_index sps_hola_blocks(int64_t nnz, int npt)
{
    const int64_t per = (int64_t)HOLA_THREADS * npt;
    return (sps_index)((nnz + per - 1) / per);
}
/** Bytes of the row-starts buffer of a matrix of nnz entries of scalar_bytes each:
 *  sps_hola_blocks + 1 indices (the Hola format's, and CSR's for its SpMV^T). */
static inline size_t sps_hola_row_starts_bytes(int64_t nnz, size_t scalar_bytes)
{
    return ((size_t)sps_hola_blocks(nnz, sps_hola_npt(nnz, scalar_bytes)) + 1) * sizeof(sps_index);
}

/* X(P, S, name, args); see kernels/kernels.h.  npt: 4 or 8, normally sps_hola_npt(nnz, sizeof scalar). */
#define SPS_KERNEL_LIST_HOLA(X, P, S)                                                                       \
    /* y = a A x + b y (b == 0: y not read), A n x m in CSR; row_starts: the format's buffer, rewritten    \
       (the CPU multiplies by csr_spmv and does not touch it) */                                           \
    X(P, S, hola_spmv, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,     \
                        const sps_index *col, const void *val, int npt, sps_index *row_starts, sps_cplx a,  \
                        const void *x, sps_cplx b, void *y))                                               \
    /* y = a A^T x + b y (y has m entries) */                                                              \
    X(P, S, hola_spmvt, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,    \
                         const sps_index *col, const void *val, int npt, sps_index *row_starts, sps_cplx a, \
                         const void *x, sps_cplx b, void *y))

#endif
