/* JDS: jagged diagonal storage (Saad, "Iterative Methods for Sparse Linear
 * Systems", 2nd ed., §3.4; the GPU variant of Li & Saad, "GPU-accelerated
 * preconditioned iterative linear solvers", J. Supercomput. 2013).
 *
 * Layout (everything in backend memory):
 *   perm    n rows sorted by decreasing length (equal lengths keep their
 *           order): perm[p] = original row of permuted row p.  The
 *           permutation stays inside the format: SpMV reads x and writes y in
 *           the original numbering;
 *   jd_ptr  ndiag + 1 offsets, ndiag = the longest row: jagged diagonal d is
 *           entry d of every row longer than d, i.e. of permuted rows
 *           p = 0..len_d-1 (a prefix, thanks to the sort), stored contiguously
 *           at jd_ptr[d] + p;
 *   jd_col, jd_val   nnz columns and values in that order.
 * No padding: stored entries = nnz; footprint = 4n + 4(ndiag + 1) + nnz (4 + s).
 * GPU SpMV: one thread per permuted row walking its diagonals; at step d the
 *   threads of a warp read consecutive slots jd_ptr[d] + p (coalesced) and
 *   rows of similar length sit together (little divergence) -- ELL's access
 *   pattern without ELL's padding.  The few outlying long rows (a prefix of
 *   the permuted rows) get a warp or a block each (long_row, below).
 * Options: sort-rows, always true: JDS is defined by the sorted order (an
 *   unsorted JDS would need padding, i.e. be ELL).
 * Compound entries: jds_layout is the index part (perm, jd_ptr, jd_col); the
 *   values are a separate array addressed by slot jd_ptr[d] + p, so a block or
 *   quaternion JDS keeps the layout and changes only the entry size of jd_val
 *   and the kernels' per-entry multiply.
 * Build (jds_build, the same code on every backend, from CSR in backend
 *   memory): row-length histogram (maxlen + 1 integers to the host, which
 *   computes jd_ptr: len_d = rows longer than d), perm by a stable sort on the
 *   backend (jds_perm: counting sort on the CPU, CUB radix sort on CUDA), then
 *   jds_fill copies every entry once. */
#include "formats/format.h"
#include "formats/csr_backend.h"

#include <stdlib.h>
#include <string.h>

/* GPU schedule hint: rows longer than long_row = max(JDS_LONG_MIN, JDS_LONG_FACTOR
 * x mean row length) are outliers that one thread would serialise; the CUDA
 * kernels give them a warp (a block beyond 32 long_row).  Measured on an H100
 * (SpMV, f64, power-law 1M rows, mean 8, cap 20000): 8.2 ms with one thread per
 * row, 0.30 ms with classes at 256/4096, 0.15 ms at 32/1024 (CSR: 0.165 ms);
 * stencils (7 per row) never reach the classes.  Relative to the mean, so
 * uniformly long rows (FE matrices, 50 per row) stay coalesced. */
#define JDS_LONG_MIN 32
#define JDS_LONG_FACTOR 4

typedef struct {
    sps_index ndiag;   /* jagged diagonals = longest row */
    sps_index long_row; /* GPU schedule hint (see above) */
    sps_index *perm;   /* n: original row of permuted row p */
    sps_index *jd_ptr; /* ndiag + 1 */
    sps_index *jd_col; /* nnz */
} jds_layout;

typedef struct {
    jds_layout L;
    void *jd_val; /* nnz values, slot jd_ptr[d] + p */
} jds_store;

static void jds_destroy(sps_matrix A)
{
    jds_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, s->L.perm);
    sps_dfree(A->ctx, s->L.jd_ptr);
    sps_dfree(A->ctx, s->L.jd_col);
    sps_dfree(A->ctx, s->jd_val);
    free(s);
    A->store = NULL;
}

/* declared so that the option of rgcsr is accepted here too (and reported on) */
static const sps_option_desc jds_options[] = {
    {.name = "sort-rows", .type = SPS_OPT_BOOL, .def = "true", .min = 1, .max = 1,
     .help = "rows in descending-length order (jds: always)"},
};

static sps_status jds_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    (void)opt; /* sort-rows: JDS is always sorted */
    sps_context ctx = B->ctx;
    const sps_mat_kernels *k = sps_kmat(ctx, B->t);
    jds_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "JDS handle"));
    B->store = s; /* on failure the caller destroys B, freeing what was allocated */
    jds_layout *L = &s->L;

    sps_index maxlen, *hist, *ptr = NULL;
    SPS_CHECK(sps_csr_rowlen_hist(ctx, B->n, src->rowptr, &maxlen, &hist));
    L->ndiag = maxlen;
    sps_status st = sps_hmalloc(ctx, (void **)&ptr, ((size_t)maxlen + 1) * sizeof *ptr, "JDS diagonal pointers");
    if (st == SPS_OK) {
        /* len_d = rows longer than d */
        int64_t longer = (int64_t)B->n - hist[0], acc = 0;
        ptr[0] = 0;
        for (sps_index d = 0; d < maxlen; d++) {
            acc += longer;
            ptr[d + 1] = (sps_index)acc;
            longer -= hist[d + 1];
        }
        if (acc != B->nnz)
            st = sps_error(ctx, SPS_ERR_ARG, "JDS: row lengths sum to %lld, the matrix has %lld entries",
                           (long long)acc, (long long)B->nnz);
    }
    free(hist);
    {
        const int64_t mean = B->n > 0 ? (B->nnz + B->n - 1) / B->n : 0, lr = JDS_LONG_FACTOR * mean;
        L->long_row = lr > JDS_LONG_MIN ? (lr < INT32_MAX ? (sps_index)lr : INT32_MAX) : JDS_LONG_MIN;
    }
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&L->jd_ptr, ptr, ((size_t)maxlen + 1) * sizeof *ptr);
    free(ptr);
    SPS_CHECK(st);

    SPS_CHECK(sps_dmalloc(ctx, (void **)&L->perm, (size_t)B->n * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(ctx, (void **)&L->jd_col, (size_t)B->nnz * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(ctx, &s->jd_val, (size_t)B->nnz * sps_scalar_size(B->t)));
    SPS_CHECK(sps_kidx(ctx)->jds_perm(sps_ex(ctx), B->n, src->rowptr, maxlen, L->perm));
    return k->jds_fill(sps_ex(ctx), B->n, src->rowptr, src->col, src->val, L->perm, L->ndiag, L->jd_ptr, L->jd_col, s->jd_val);
}

static sps_status jds_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    return sps_csr_build_from_host(B, h, opt, jds_build);
}

/* Back to CSR on the host: permuted row p has len(p) = the diagonals d with
 * p < len_d; its entries, in diagonal order, are its columns in order. */
static sps_status jds_to_csr(sps_matrix A, sps_csr_host *out)
{
    jds_store *s = A->store;
    const jds_layout *L = &s->L;
    const size_t ss = sps_scalar_size(A->t);
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    sps_index *perm = NULL, *ptr = NULL, *jcol = NULL;
    char *jval = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&perm, L->perm, (size_t)A->n * sizeof(sps_index), "JDS permutation"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&ptr, L->jd_ptr, ((size_t)L->ndiag + 1) * sizeof(sps_index), "JDS diagonal pointers"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&jcol, L->jd_col, (size_t)A->nnz * sizeof(sps_index), "JDS columns"), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, (void **)&jval, s->jd_val, (size_t)A->nnz * ss, "JDS values"), done);
    SPS_CHECK_GOTO(st, sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&out->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, &out->val, (size_t)A->nnz * ss, "CSR values"), done);
    /* len(p) = the diagonals e with p < len_e (len_e decreases in e): O(nnz) in all */
    {
        for (sps_index p = 0; p < A->n; p++) {
            sps_index len = 0;
            while (len < L->ndiag && p < ptr[len + 1] - ptr[len]) len++;
            out->rowptr[perm[p] + 1] = len;
        }
        for (sps_index i = 0; i < A->n; i++) out->rowptr[i + 1] += out->rowptr[i];
        for (sps_index p = 0; p < A->n; p++) {
            sps_index q = out->rowptr[perm[p]];
            for (sps_index e = 0; e < L->ndiag && p < ptr[e + 1] - ptr[e]; e++, q++) {
                const size_t slot = (size_t)ptr[e] + (size_t)p;
                out->col[q] = jcol[slot];
                memcpy((char *)out->val + (size_t)q * ss, jval + slot * ss, ss);
            }
        }
    }
done:
    free(perm);
    free(ptr);
    free(jcol);
    free(jval);
    return st;
}

static sps_status jds_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    jds_store *s = A->store;
    const jds_layout *L = &s->L;
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->jds_spmv : k->jds_spmvt)(sps_ex(A->ctx), A->n, A->m, L->ndiag, L->long_row, L->perm, L->jd_ptr,
                                                          L->jd_col, s->jd_val, a, x, b, y);
}

static size_t jds_footprint(sps_matrix A, int64_t *stored)
{
    const jds_store *s = A->store;
    *stored = A->nnz;
    return (size_t)A->n * sizeof(sps_index) + ((size_t)s->L.ndiag + 1) * sizeof(sps_index) +
           (size_t)A->nnz * (sizeof(sps_index) + sps_scalar_size(A->t));
}

const sps_format_ops sps_format_jds = {
    .id = SPS_FMT_JDS, .name = "jds",
    .summary = "jagged diagonals (rows sorted by length): irregular rows, no padding",
    SPS_FORMAT_OPTIONS(jds_options),
    SPS_FORMAT_HOOKS(jds),
};
