/* COO: row and column index per entry, sorted by row then column, in backend memory.
 * SpMV: kernels coo_spmv (chunked, deterministic) / coo_spmvt. */
#include "core/internal.h"

#include <stdlib.h>

typedef struct {
    sps_index *row, *col;
    void *val;
} coo_store;

static void coo_destroy(sps_matrix A)
{
    coo_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, s->row);
    sps_dfree(A->ctx, s->col);
    sps_dfree(A->ctx, s->val);
    free(s);
    A->store = NULL;
}

static sps_status coo_from_csr(sps_matrix B, const sps_csr_host *h, const sps_format_options *opt)
{
    (void)opt;
    coo_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "COO handle"));
    B->store = s;
    sps_index *row;
    SPS_CHECK(sps_hmalloc(B->ctx, (void **)&row, (size_t)h->nnz * sizeof *row, "COO row indices"));
    for (sps_index i = 0; i < h->n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) row[k] = i;
    sps_status st = sps_dupload(B->ctx, (void **)&s->row, row, (size_t)h->nnz * sizeof(sps_index));
    free(row);
    SPS_CHECK(st);
    SPS_CHECK(sps_dupload(B->ctx, (void **)&s->col, h->col, (size_t)h->nnz * sizeof(sps_index)));
    return sps_dupload(B->ctx, &s->val, h->val, (size_t)h->nnz * sps_scalar_size(h->t));
}

static sps_status coo_to_csr(sps_matrix A, sps_csr_host *out)
{
    coo_store *s = A->store;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    sps_index *row = NULL;
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&row, s->row, (size_t)A->nnz * sizeof(sps_index), "COO rows"));
    sps_status st = sps_hcalloc(A->ctx, (void **)&out->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers");
    if (st == SPS_OK) {
        for (int64_t k = 0; k < A->nnz; k++) out->rowptr[row[k] + 1]++;
        for (sps_index i = 0; i < A->n; i++) out->rowptr[i + 1] += out->rowptr[i];
    }
    free(row);
    SPS_CHECK(st);
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->col, s->col, (size_t)A->nnz * sizeof(sps_index), "COO columns"));
    return sps_ddownload(A->ctx, &out->val, s->val, (size_t)A->nnz * sps_scalar_size(A->t), "COO values");
}

static sps_status coo_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    coo_store *s = A->store;
    const sps_kernels *k = sps_kern(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->coo_spmv : k->coo_spmvt)(A->ctx, A->n, A->m, A->nnz, s->row, s->col, s->val, a, x, b, y);
}

static size_t coo_footprint(sps_matrix A, int64_t *stored)
{
    *stored = A->nnz;
    return (size_t)A->nnz * (2 * sizeof(sps_index) + sps_scalar_size(A->t));
}

const sps_format_ops sps_format_coo = {SPS_FMT_COO, "coo",
                                       "coordinate triplets sorted by row: simple, robust to any row-length mix",
                                       coo_from_csr, coo_to_csr, NULL, coo_spmv, coo_footprint, coo_destroy, NULL, NULL, NULL};
