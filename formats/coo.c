/* COO: row and column index per entry, sorted by row then column, in backend memory.
 * SpMV: kernels coo_spmv (chunked, deterministic) / coo_spmvt. */
#include "formats/format.h"

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

/* The row array from backend row pointers (coo_rows), and the store. */
static sps_status coo_start(sps_matrix B, const sps_index *rowptr, coo_store **out)
{
    sps_context ctx = B->ctx;
    coo_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "COO handle"));
    B->store = s; /* on failure the caller destroys B, freeing what was allocated */
    *out = s;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&s->row, (size_t)B->nnz * sizeof(sps_index)));
    return sps_kidx(ctx)->coo_rows(sps_ex(ctx), B->n, rowptr, s->row);
}

/* From CSR arrays in backend memory: rows by the backend, columns and values
 * copied on it (the CUDA build never leaves the device: 0.18 s through the host
 * on poisson3d-128 before). */
static sps_status coo_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    (void)opt;
    coo_store *s;
    SPS_CHECK(coo_start(B, src->rowptr, &s));
    const size_t nnz = (size_t)B->nnz, ss = sps_scalar_size(B->t);
    SPS_CHECK(sps_dmalloc(B->ctx, (void **)&s->col, nnz * sizeof(sps_index)));
    SPS_CHECK(sps_dmalloc(B->ctx, &s->val, nnz * ss));
    SPS_CHECK(sps_dcopy(B->ctx, s->col, src->col, nnz * sizeof(sps_index), SPS_COPY_D2D));
    return sps_dcopy(B->ctx, s->val, src->val, nnz * ss, SPS_COPY_D2D);
}

/* From host CSR: only the row pointers are staged; columns and values are
 * uploaded straight into the store (no second copy of the matrix on the device). */
static sps_status coo_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    (void)opt;
    sps_index *rowptr = NULL;
    coo_store *s;
    SPS_CHECK(sps_dupload(B->ctx, (void **)&rowptr, h->rowptr, ((size_t)h->n + 1) * sizeof(sps_index)));
    sps_status st = coo_start(B, rowptr, &s);
    if (st == SPS_OK) st = sps_dupload(B->ctx, (void **)&s->col, h->col, (size_t)h->nnz * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(B->ctx, &s->val, h->val, (size_t)h->nnz * sps_scalar_size(h->t));
    sps_dfree(B->ctx, rowptr); /* stream-ordered: after coo_rows has read it */
    return st;
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
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->coo_spmv : k->coo_spmvt)(sps_ex(A->ctx), A->n, A->m, A->nnz, s->row, s->col, s->val, a, x, b, y);
}

static size_t coo_footprint(sps_matrix A, int64_t *stored)
{
    *stored = A->nnz;
    return (size_t)A->nnz * (2 * sizeof(sps_index) + sps_scalar_size(A->t));
}

const sps_format_ops sps_format_coo = {
    .id = SPS_FMT_COO, .name = "coo",
    .summary = "coordinate triplets sorted by row: simple, robust to any row-length mix",
    SPS_FORMAT_HOOKS(coo),
};
