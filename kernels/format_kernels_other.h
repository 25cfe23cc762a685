/* Kernels of HYB (ELL + COO tail), JDS and DIA (formats/hyb.c, jds.c, dia.c).
 * CPU: kernels/cpu/{jds,hyb,dia}.c (the reference), CUDA: kernels/cuda/{jds,hyb,dia}.cu.
 *
 * Build kernels turn a CSR matrix in backend memory (rowptr, col, val) into the
 * format's arrays, so a CUDA build never leaves the device except for the small
 * planning arrays the host needs to size the allocations (a row-length
 * histogram, the occupied-diagonal flags).  The index-only build kernels are
 * in kernels/index_kernels.h, once per backend.
 * Every output array is written completely (padding included): the caller never
 * needs to zero it.  Sizes that may exceed 2^31 (slots of a padded layout) are
 * int64_t. */
#ifndef SPS_FORMAT_KERNELS_OTHER_H
#define SPS_FORMAT_KERNELS_OTHER_H

#define SPS_KERNEL_LIST_OTHER(X, P, S)                                                                      \
    /* ---- JDS */                                                                                         \
    /* jagged diagonal d holds entry d of permuted rows 0..len_d-1 at jd_ptr[d] + p */                      \
    X(P, S, jds_fill, (sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,         \
                       const void *val, const sps_index *perm, sps_index ndiag, const sps_index *jd_ptr,   \
                       sps_index *jd_col, void *jd_val))                                                   \
    /* y = a A x + b y (b == 0: y not read), y in the original row numbering; long_row: a schedule hint    \
       (GPU: rows longer than it get a warp, longer than 32 long_row a block; the CPU ignores it) */        \
    X(P, S, jds_spmv, (sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, sps_index long_row,     \
                       const sps_index *perm,                                                              \
                       const sps_index *jd_ptr, const sps_index *jd_col, const void *jd_val, sps_cplx a,   \
                       const void *x, sps_cplx b, void *y))                                                \
    /* y = a A^T x + b y (y has m entries) */                                                              \
    X(P, S, jds_spmvt, (sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, sps_index long_row,    \
                        const sps_index *perm,                                                             \
                        const sps_index *jd_ptr, const sps_index *jd_col, const void *jd_val, sps_cplx a,  \
                        const void *x, sps_cplx b, void *y))                                               \
    /* ---- HYB: ELL part of width K, column-major with leading dimension ld (slot k*ld + i),             \
       padding column -1 / value 0; the entries of a row beyond K go to a COO tail */                      \
    /* ELL slots (K * ld, rows n..ld-1 padding) and the tail (row, col, val) at tail_ptr[i].. */           \
    X(P, S, hyb_fill, (sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,        \
                       const void *val, sps_index K, int64_t ld, const sps_index *tail_ptr,                \
                       sps_index *ell_col, void *ell_val, sps_index *tail_row, sps_index *tail_col,        \
                       void *tail_val))                                                                    \
    /* y = a ELL x + b y (the tail is added by coo_spmv with b = 1) */                                     \
    X(P, S, hyb_ell_spmv, (sps_exec *ex, sps_index n, sps_index m, sps_index K, int64_t ld,             \
                           const sps_index *ell_col, const void *ell_val, sps_cplx a, const void *x,       \
                           sps_cplx b, void *y))                                                           \
    X(P, S, hyb_ell_spmvt, (sps_exec *ex, sps_index n, sps_index m, sps_index K, int64_t ld,            \
                            const sps_index *ell_col, const void *ell_val, sps_cplx a, const void *x,      \
                            sps_cplx b, void *y))                                                          \
    /* ---- DIA: diagonal d (offset off[d] = column - row, increasing) stored densely, slot d*n + i for    \
       row i; mask bit (d, i) = word d*ceil(n/32) + i/32, bit i%32, set for stored entries only */          \
    /* dmap[j - i + n - 1] = d of the diagonal holding (i, j) (only read there); dval (ndiag * n) and     \
       mask written */                                                                                     \
    X(P, S, dia_fill, (sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr,                 \
                       const sps_index *col, const void *val, const sps_index *dmap, sps_index ndiag,      \
                       void *dval, uint32_t *mask))                                                        \
    /* dict NULL: dval holds the values; else one uint8_t a slot, the index of its value in dict       \
       (formats/vdict.h) */                                                                                \
    X(P, S, dia_spmv, (sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, const sps_index *off,   \
                       const void *dval, const void *dict, const uint32_t *mask, sps_cplx a, const void *x, \
                       sps_cplx b, void *y))                                                               \
    X(P, S, dia_spmvt, (sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, const sps_index *off,  \
                        const void *dval, const void *dict, const uint32_t *mask, sps_cplx a, const void *x, \
                        sps_cplx b, void *y))

#endif
