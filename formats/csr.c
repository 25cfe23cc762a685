/* CSR: row pointers, column indices, values, in backend memory.
 * SpMV: kernels csr_spmv / csr_spmvt (A^T applied without forming it). */
#include "core/internal.h"

#include <stdlib.h>

typedef sps_csr_store csr_store;

static void csr_destroy(sps_matrix A)
{
    csr_store *s = A->store;
    if (!s) return;
    sps_dfree(A->ctx, s->rowptr);
    sps_dfree(A->ctx, s->col);
    sps_dfree(A->ctx, s->val);
    free(s);
    A->store = NULL;
}

static sps_status csr_from_csr(sps_matrix B, const sps_csr_host *h, const sps_format_options *opt)
{
    (void)opt;
    csr_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "CSR handle"));
    B->store = s;
    SPS_CHECK(sps_dupload(B->ctx, (void **)&s->rowptr, h->rowptr, ((size_t)h->n + 1) * sizeof(sps_index)));
    SPS_CHECK(sps_dupload(B->ctx, (void **)&s->col, h->col, (size_t)h->nnz * sizeof(sps_index)));
    return sps_dupload(B->ctx, &s->val, h->val, (size_t)h->nnz * sps_scalar_size(h->t));
}

static sps_status csr_to_csr(sps_matrix A, sps_csr_host *out)
{
    csr_store *s = A->store;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->rowptr, s->rowptr, ((size_t)A->n + 1) * sizeof(sps_index), "CSR row pointers"));
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->col, s->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"));
    return sps_ddownload(A->ctx, &out->val, s->val, (size_t)A->nnz * sps_scalar_size(A->t), "CSR values");
}

static sps_status csr_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    csr_store *s = A->store;
    const sps_kernels *k = sps_kern(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->csr_spmv : k->csr_spmvt)(A->ctx, A->n, A->m, s->rowptr, s->col, s->val, a, x, b, y);
}

static size_t csr_footprint(sps_matrix A, int64_t *stored)
{
    *stored = A->nnz;
    return ((size_t)A->n + 1) * sizeof(sps_index) + (size_t)A->nnz * (sizeof(sps_index) + sps_scalar_size(A->t));
}

const sps_format_ops sps_format_csr = {SPS_FMT_CSR, "csr",
                                       "compressed sparse row: the general-purpose default",
                                       csr_from_csr, csr_to_csr, NULL, csr_spmv, csr_footprint, csr_destroy};
