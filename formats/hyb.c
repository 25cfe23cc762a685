/* HYB: an ELL part of width K plus a COO tail (Bell & Garland, "Efficient
 * sparse matrix-vector multiplication on CUDA", NVIDIA NVR-2008-004, the
 * hybrid format; the width rule of their CUSP library).
 *
 * Layout (everything in backend memory):
 *   ELL   K slots per row, column-major with leading dimension ld = n rounded
 *         up to 32: slot k*ld + i holds entry k of row i (entries in column
 *         order), or column -1 / value 0 as padding (rows n..ld-1 are all
 *         padding), so a warp reading slot k of 32 consecutive rows touches one
 *         contiguous 128-byte segment per array;
 *   tail  the entries k >= K of every row longer than K, as COO (row, col,
 *         val) sorted by row then column: exactly what coo_spmv expects.
 * Width K: the smallest K such that fewer than max(n/3, 4096) rows are longer
 *   than K.  ELL pays while at least a third of the rows use column K (the
 *   ELL kernel is about 3x faster per entry than COO) and while enough rows do
 *   to keep a GPU busy (4096); the rows longer than K spill their entries
 *   K, K+1, ... into the tail.  For n <= 12288 the threshold is 4096 rows, so
 *   a matrix of at most 4096 rows is pure COO (K = 0).
 * Memory: K > 0 means at least n/3 rows have >= K entries, so K*n <= 3 nnz:
 *   the padding is bounded and HYB never refuses (max_fill is not used).
 *   Footprint = K*ld*(4 + s) + ntail*(8 + s) bytes, K*ld + ntail stored slots.
 * Options: none (the width rule has no parameter).
 * Compound entries: hyb_layout is the index part only (K, ld, ELL columns,
 *   tail rows/columns); the values are separate arrays addressed by slot (ELL
 *   slot k*ld + i, tail slot t), so a quaternion or b x b block HYB keeps
 *   hyb_layout and the build's index work untouched and changes only the entry
 *   size of ell_val / tail_val and the per-entry multiply of the kernels.
 * Build (hyb_build, the same code on every backend, from CSR in backend
 *   memory): row-length histogram on the backend (maxlen + 1 integers come to
 *   the host: K and ntail are computed there), tail offsets by a scan
 *   (hyb_tail_ptr), then hyb_fill writes every ELL slot and tail entry once.
 * SpMV: hyb_ell_spmv (y = a ELL x + b y; b == 0 does not read y) then coo_spmv
 *   with b = 1 on the tail; SpMV^T the same with hyb_ell_spmvt / coo_spmvt.
 *   K == 0: the COO kernel alone with the caller's b. */
#include "formats/format.h"
#include "formats/csr_backend.h"

#include <stdlib.h>
#include <string.h>

/* Bell & Garland's constants (CUSP: relative_speed, breakeven_threshold). */
#define HYB_RELATIVE_SPEED 3     /* ELL vs COO throughput per entry */
#define HYB_BREAKEVEN_ROWS 4096  /* rows needed to occupy the GPU */
#define HYB_LD_ALIGN 32          /* ELL leading dimension: a warp of rows */

typedef struct {
    sps_index K;                    /* ELL width */
    int64_t ld;                     /* ELL leading dimension (n rounded up to 32) */
    int64_t ntail;                  /* COO tail entries */
    sps_index *ell_col;             /* K * ld, -1 = padding */
    sps_index *tail_row, *tail_col; /* ntail, sorted by row then column */
} hyb_layout;

typedef struct {
    hyb_layout L;
    void *ell_val;  /* K * ld values, 0 in padding */
    void *tail_val; /* ntail values */
} hyb_store;

/* The width rule: smallest K with fewer than max(n/3, 4096) rows longer than K
 * (counts compared exactly: 3*rows < n or rows < 4096).  *ntail = entries that
 * spill. */
static sps_index hyb_width(sps_index n, sps_index maxlen, const sps_index *hist, int64_t *ntail)
{
    sps_index K = 0;
    int64_t longer = (int64_t)n - hist[0]; /* rows longer than K = 0 */
    while (!(longer < HYB_BREAKEVEN_ROWS || HYB_RELATIVE_SPEED * longer < (int64_t)n)) {
        K++;
        longer -= hist[K];
    }
    *ntail = 0;
    for (sps_index L = K + 1; L <= maxlen; L++) *ntail += (int64_t)(L - K) * hist[L];
    return K;
}

static void hyb_destroy(sps_matrix A)
{
    hyb_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, s->L.ell_col);
    sps_dfree(A->ctx, s->L.tail_row);
    sps_dfree(A->ctx, s->L.tail_col);
    sps_dfree(A->ctx, s->ell_val);
    sps_dfree(A->ctx, s->tail_val);
    free(s);
    A->store = NULL;
}

static sps_status hyb_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    (void)opt;
    sps_context ctx = B->ctx;
    const sps_mat_kernels *k = sps_kmat(ctx, B->t);
    const size_t ss = sps_scalar_size(B->t);
    hyb_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "HYB handle"));
    B->store = s; /* on failure the caller destroys B, freeing what was allocated */
    hyb_layout *L = &s->L;

    sps_index maxlen, *hist;
    SPS_CHECK(sps_csr_rowlen_hist(ctx, B->n, src->rowptr, &maxlen, &hist));
    L->K = hyb_width(B->n, maxlen, hist, &L->ntail);
    free(hist);
    L->ld = ((int64_t)B->n + HYB_LD_ALIGN - 1) / HYB_LD_ALIGN * HYB_LD_ALIGN;

    const size_t slots = (size_t)L->K * (size_t)L->ld, nt = (size_t)L->ntail;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&L->ell_col, slots * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(ctx, &s->ell_val, slots * ss));
    SPS_CHECK(sps_dmalloc(ctx, (void **)&L->tail_row, nt * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(ctx, (void **)&L->tail_col, nt * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(ctx, &s->tail_val, nt * ss));

    sps_index *tail_ptr;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&tail_ptr, ((size_t)B->n + 1) * sizeof *tail_ptr));
    sps_status st = sps_kidx(ctx)->hyb_tail_ptr(sps_ex(ctx), B->n, src->rowptr, L->K, tail_ptr);
    if (st == SPS_OK)
        st = k->hyb_fill(sps_ex(ctx), B->n, src->rowptr, src->col, src->val, L->K, L->ld, tail_ptr, L->ell_col, s->ell_val,
                         L->tail_row, L->tail_col, s->tail_val);
    sps_dfree(ctx, tail_ptr); /* stream-ordered: after the queued fill has read it */
    return st;
}

static sps_status hyb_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    return sps_csr_build_from_host(B, h, opt, hyb_build);
}

/* Back to CSR on the host: row i = its ELL slots up to the first padding, then
 * its tail entries (the tail follows the ELL part in column order). */
static sps_status hyb_to_csr(sps_matrix A, sps_csr_host *out)
{
    hyb_store *s = A->store;
    const hyb_layout *L = &s->L;
    const size_t ss = sps_scalar_size(A->t), slots = (size_t)L->K * (size_t)L->ld, nt = (size_t)L->ntail;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    sps_index *ecol = NULL, *trow = NULL, *tcol = NULL;
    char *eval = NULL, *tval = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&ecol, L->ell_col, slots * sizeof(sps_index), "HYB ELL columns"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&eval, s->ell_val, slots * ss, "HYB ELL values"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&trow, L->tail_row, nt * sizeof(sps_index), "HYB tail rows"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&tcol, L->tail_col, nt * sizeof(sps_index), "HYB tail columns"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&tval, s->tail_val, nt * ss, "HYB tail values"), done);
    SPS_CHECK_GOTO(st, sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&out->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, &out->val, (size_t)A->nnz * ss, "CSR values"), done);
    {
        int64_t q = 0, t = 0;
        for (sps_index i = 0; i < A->n; i++) {
            for (sps_index k = 0; k < L->K; k++) {
                const size_t slot = (size_t)k * (size_t)L->ld + (size_t)i;
                if (ecol[slot] < 0) break;
                out->col[q] = ecol[slot];
                memcpy((char *)out->val + (size_t)q * ss, eval + slot * ss, ss);
                q++;
            }
            for (; t < L->ntail && trow[t] == i; t++, q++) {
                out->col[q] = tcol[t];
                memcpy((char *)out->val + (size_t)q * ss, tval + (size_t)t * ss, ss);
            }
            out->rowptr[i + 1] = (sps_index)q;
        }
        if (q != A->nnz || t != L->ntail)
            st = sps_error(A->ctx, SPS_ERR_ARG, "HYB: the stored layout holds %lld entries, the matrix %lld",
                           (long long)q, (long long)A->nnz);
    }
done:
    free(ecol);
    free(eval);
    free(trow);
    free(tcol);
    free(tval);
    return st;
}

static sps_status hyb_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    hyb_store *s = A->store;
    const hyb_layout *L = &s->L;
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    if (L->K > 0) {
        SPS_CHECK((mode == SPS_OP_N ? k->hyb_ell_spmv : k->hyb_ell_spmvt)(sps_ex(A->ctx), A->n, A->m, L->K, L->ld, L->ell_col,
                                                                           s->ell_val, a, x, b, y));
        if (L->ntail == 0) return SPS_OK;
        b = sps_cplx_make(1.0, 0.0); /* the tail accumulates into the ELL result */
    }
    return (mode == SPS_OP_N ? k->coo_spmv : k->coo_spmvt)(sps_ex(A->ctx), A->n, A->m, L->ntail, L->tail_row, L->tail_col,
                                                          s->tail_val, a, x, b, y);
}

static size_t hyb_footprint(sps_matrix A, int64_t *stored)
{
    const hyb_store *s = A->store;
    const size_t ss = sps_scalar_size(A->t), slots = (size_t)s->L.K * (size_t)s->L.ld;
    *stored = (int64_t)slots + s->L.ntail;
    return slots * (sizeof(sps_index) + ss) + (size_t)s->L.ntail * (2 * sizeof(sps_index) + ss);
}

const sps_format_ops sps_format_hyb = {
    .id = SPS_FMT_HYB, .name = "hyb",
    .summary = "ELL + COO tail (Bell-Garland width): most rows alike, a few long ones",
    SPS_FORMAT_HOOKS(hyb),
};
