/* libspsolve — the index family: kernels that read and write only indices
 * (row lengths, permutations, group pointers, column scatters, the row arrays
 * of COO and Hola), or move elements without reading them as numbers (the
 * relayout of compound vectors).  They do not depend on the scalar or the entry type, so
 * each backend implements each of them once (sps_cpu_<name>, sps_cuda_<name>)
 * and the backend holds one table of them (sps_backend_ops.idx), beside the
 * vector family (by scalar) and the matrix family (by scalar and entry type)
 * of kernels/kernels.h.  Conventions as in kernels/kernels.h. */
#ifndef SPS_INDEX_KERNELS_H
#define SPS_INDEX_KERNELS_H

#include "kernels/format_kernels_padded.h" /* sps_pad_layout */
#include "kernels/format_kernels_vdict.h"  /* SPS_VDICT_MAX */

/* X(P, name, args): P backend prefix. */
#define SPS_KERNEL_LIST_INDEX(X, P)                                                                          \
    /* ---- COO */                                                                                         \
    /* row[k] = i for rowptr[i] <= k < rowptr[i+1] (COO's row array from CSR's; index only) */       \
    X(P, coo_rows, (sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *row))     \
    /* ---- Hola (and CSR's SpMV^T on irregular rows): npt 4 or 8 (kernels/format_kernels_hola.h) */      \
    /* row_starts (sps_hola_blocks(nnz, npt) + 1 entries) as above, from rowptr (n + 1, rowptr[n] = nnz) */ \
    X(P, hola_row_starts, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, int npt,   \
                              sps_index *row_starts))                                                      \
    /* ---- row-length statistics (JDS and HYB), JDS, HYB and DIA (kernels/format_kernels_other.h) */    \
    /* maxlen[0] = max_i (rowptr[i+1] - rowptr[i]), 0 when n == 0 (maxlen: one index in backend memory) */ \
    X(P, jds_rowlen_max, (sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *maxlen))    \
    /* hist[L] = number of rows of length L, L = 0..maxlen (maxlen + 1 entries) */                         \
    X(P, jds_rowlen_hist, (sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen,     \
                              sps_index *hist))                                                            \
    /* perm[p] = the row of rank p when rows are sorted by decreasing length, equal lengths by            \
       increasing row (a stable sort: the same permutation on every backend) */                           \
    X(P, jds_perm, (sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen,            \
                       sps_index *perm))                                                                   \
    /* tail_ptr[i] = sum_{r < i} max(0, len_r - K), i = 0..n (n + 1 entries) */                            \
    X(P, hyb_tail_ptr, (sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index K,             \
                           sps_index *tail_ptr))                                                           \
    /* flag[j - i + n - 1] = 1 for every entry (i, j), 0 elsewhere (n + m - 1 entries) */                  \
    X(P, dia_mark, (sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr,                 \
                       const sps_index *col, sps_index *flag))                                             \
    /* dmap[q] = flag[0] + ... + flag[q - 1], q = 0..nflag (nflag + 1 entries: dmap[nflag] = the         \
       diagonals in use); the host reads dmap[nflag] next (a download: synchronised) */                    \
    X(P, dia_scan, (sps_exec *ex, int64_t nflag, const sps_index *flag, sps_index *dmap))            \
    /* off[dmap[q]] = q - (n - 1) for every q < nflag with flag[q] != 0 */                                 \
    X(P, dia_offsets, (sps_exec *ex, sps_index n, int64_t nflag, const sps_index *flag,              \
                          const sps_index *dmap, sps_index *off))                                          \
    /* ---- ELLPACK-R, SELL-C-sigma, RgCSR (kernels/format_kernels_padded.h) */                          \
    /* rl[r] = rowptr[p+1] - rowptr[p], p = perm ? perm[r] : r, r < n */                                    \
    X(P, pad_rowlen, (sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *perm,       \
                         sps_index *rl))                                                                    \
    /* perm: 0..n-1 sorted by decreasing len[] within windows of `window` rows, ties by row (stable) */     \
    X(P, pad_sort_rows, (sps_exec *ex, sps_index n, sps_index window, const sps_index *len,           \
                            sps_index *perm))                                                               \
    /* nq = ceil(n/chunk) chunks of storage rows (row r: original row perm ? perm[r] : r, whose CSR        \
     * columns are sorted, so its first and last entries are its smallest and largest column):           \
     * w[q] = max(rl over chunk q), 0 for an empty chunk; lo[q] = the chunk's smallest column (0 when it  \
     * has no entries); w[nq] = INT32_MAX - the smallest column of all, w[nq + 1] = the largest,          \
     * w[nq + 2] = the largest span (largest - smallest column) of a chunk: -1 each when nnz = 0;         \
     * w[nq + 3] = the largest w[q] (-1 when n = 0).  nq + 4 entries of w are written; lo may be NULL. */ \
    X(P, pad_widths, (sps_exec *ex, sps_index n, sps_index chunk, const sps_index *rl,                \
                         const sps_index *rowptr, const sps_index *perm, const sps_index *src_col,          \
                         sps_index *w, sps_index *lo))                                                      \
    /* gp[0] = 0, gp[g + 1] = gp[g] + w[g] min(h, nstored - g h), g < ngroups: the group pointers of    \
     * SELL / RgCSR (groups of h storage rows, the last one of what is left) */                          \
    X(P, pad_group_ptr, (sps_exec *ex, sps_index ngroups, sps_index h, sps_index nstored,            \
                            const sps_index *w, int64_t *gp))                                               \
    /* every slot of L (L.col, L.col16 ignored): L.cbase NULL: col is sps_index, the CSR column of the     \
     * entry, -1 for padding; else col is uint16_t, column - cbase[group], SPS_PAD_COL16_PAD for padding */ \
    X(P, pad_scatter_col, (sps_exec *ex, sps_pad_layout L, const sps_index *rowptr,                   \
                              const sps_index *src_col, void *col))                                          \
    /* ---- assembly from triplets (sps_matrix_from_coo_entries_device): nnz triplets (row[k], col[k]) */ \
    /* perm: 0..nnz-1 stably sorted by (row, col): equal pairs keep their order, so the permutation is    \
     * the same on every backend; scol[p] = col[perm[p]]; tstart (n + 1 entries) the sorted triplets' row \
     * pointers (tstart[i] = the triplets of rows < i).  bad[0] (one int64 in backend memory) = the       \
     * smallest k whose row is outside 0..n-1 or column outside 0..m-1, -1 when none (the other outputs   \
     * are then unspecified) */                                                                             \
    X(P, coo_sort, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,            \
                       const sps_index *col, sps_index *perm, sps_index *scol, sps_index *tstart,           \
                       int64_t *bad))                                                                       \
    /* the distinct (row, column) pairs of coo_sort's output, u < nu: seg[u] = the first position of     \
     * pair u (seg[nu] = nnz), ucol[u] its column, rowptr (n + 1 entries) the pairs' CSR row pointers;    \
     * nu[0] = nu (one index in backend memory).  seg and ucol hold nnz + 1 and nnz entries. */           \
    X(P, coo_compress, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *scol,                    \
                           const sps_index *tstart, sps_index *seg, sps_index *ucol, sps_index *rowptr,       \
                           sps_index *nu))                                                                   \
    /* out[u w + q] = the sum of val[perm[p] w + q] over seg[u] <= p < seg[u + 1] in that order, in      \
     * double from the first term, then rounded to the values' real type (rsize 4: float, 8: double);   \
     * w reals a triplet (a complex b x b block: 2 b^2).  bad[0] = the smallest triplet k with a member   \
     * that is not finite, bad[1] = the smallest u whose rounded sum is not (an overflow); -1 when none */  \
    X(P, coo_sum, (sps_exec *ex, int rsize, int w, sps_index nu, const sps_index *perm,                  \
                      const sps_index *seg, const void *val, void *out, int64_t *bad))                       \
    /* ---- CSR arrays in backend memory (sps_matrix_from_csr_entries_device): bad[0] = the smallest    \
     * row i (0..n-1) with rowptr[i] < 0, rowptr[i] > rowptr[i + 1], rowptr[i + 1] > nnz, a column       \
     * outside 0..m-1 or columns not strictly increasing; n when only rowptr[0] != 0 or rowptr[n] !=     \
     * nnz; bad[1] = the smallest k < nnz w whose value (rsize-byte reals, w a entry) is not finite;     \
     * -1 when none.  The values are checked only where bad[0] = -1. */                                   \
    X(P, csr_check, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,        \
                        const sps_index *col, int rsize, int w, const void *val, int64_t *bad))           \
    /* ---- value dictionaries (kernels/format_kernels_vdict.h): count values of vsize bytes (4, 8, 16) */ \
    /* cnt[0] (one int in backend memory) = the number of distinct bit patterns, dict (SPS_VDICT_MAX     \
     * values) holds them in no set order; more than SPS_VDICT_MAX: cnt[0] > SPS_VDICT_MAX and dict is    \
     * unspecified (the kernels may stop at the first pattern past the limit) */                          \
    X(P, vdict_collect, (sps_exec *ex, const void *val, int64_t count, int vsize, void *dict, int *cnt))  \
    /* idx[k] = the position of val[k]'s bits among the ndict values of dict, sorted by sps_vdict_cmp     \
     * (every val[k] is one of them) */                                                                    \
    X(P, vdict_encode, (sps_exec *ex, const void *val, int64_t count, int vsize, const void *dict,        \
                           int ndict, uint8_t *idx))                                                        \
    /* ---- HiSparse's build (kernels/format_kernels_hisparse.h) */                                      \
    SPS_KERNEL_LIST_INDEX_HISPARSE(X, P)                                                                   \
    /* ---- vectors of compound entries (kernels/compound_kernels.h): n blocks of d elements of esize     \
     * bytes (4, 8 or 16), to_soa: element c of block j from src[j*d + c] to dst[c*n + j]; else back     \
     * from dst's layout to src's (src and dst do not overlap) */                                         \
    X(P, vec_relayout, (sps_exec *ex, size_t esize, int d, sps_index n, int to_soa, const void *src,      \
                           void *dst))

#endif
