/* Hola: plain CSR multiplied by Hola-SpMV (Steinberger, Zayer, Seidel,
 * "Globally Homogeneous, Locally Adaptive Sparse Matrix-Vector Multiplication
 * on the GPU", ICS '17; kernels in kernels/cuda/hola.cu).
 *
 * Layout: exactly CSR (rowptr n + 1, col and val nnz, columns sorted in each
 *   row), in backend memory, plus the row-starts buffer of the GPU kernels:
 *   nblocks + 1 indices, nblocks = ceil(nnz / (256 npt)), npt = 4 non-zeros a
 *   thread up to 300k non-zeros and 8 beyond (4 for c64; see
 *   kernels/format_kernels_hola.h).
 *   The buffer is allocated here, once, and rewritten by every product (Hola
 *   needs no preprocessing; the first kernel of each product computes it and
 *   scales y), so nothing is allocated per SpMV and the context's workspace
 *   is not used.
 * Memory: the CSR footprint plus 4 (nblocks + 1) bytes, i.e. 4 / (256 npt)
 *   = 0.0039 bytes per non-zero (npt 4) or 0.0020 (npt 8): sps_matrix_info's
 *   bytes include it; no padding (stored entries = nnz).
 * Products: GPU Hola-SpMV / Hola-SpMV^T (not bit-reproducible: rows shared
 *   between threads and blocks are combined with atomics); CPU: the CSR
 *   kernels on the same arrays (the reference).
 * Options: none.  Also built by csr with csr-kernel hola (formats/csr.c). */
#include "formats/csr_backend.h"

#include <stdlib.h>

typedef struct {
    sps_csr_store base;     /* plain CSR, owned */
    sps_index *row_starts;  /* nblocks + 1, GPU scratch rewritten by every product */
    int npt;                /* non-zeros a thread */
} hola_store;

static void hola_destroy(sps_matrix A)
{
    hola_store *s = A->store;
    if (!s) return;
    sps_csr_unstage(A->ctx, &s->base);
    sps_dfree(A->ctx, s->row_starts);
    free(s);
    A->store = NULL;
}

/* The handle and the row-starts buffer; the CSR arrays are the caller's to fill. */
static sps_status hola_alloc(sps_matrix B, hola_store **out)
{
    hola_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "Hola handle"));
    B->store = s; /* on failure the caller destroys B, freeing what was allocated */
    s->npt = sps_hola_npt(B->nnz, sps_scalar_size(B->t));
    SPS_CHECK(sps_dmalloc(B->ctx, (void **)&s->row_starts, sps_hola_row_starts_bytes(B->nnz, sps_scalar_size(B->t))));
    *out = s;
    return SPS_OK;
}

static sps_status hola_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    (void)opt;
    hola_store *s;
    SPS_CHECK(hola_alloc(B, &s));
    return sps_csr_stage(B->ctx, h, &s->base);
}

/* From a CSR matrix in backend memory: copies of its arrays (device to device). */
static sps_status hola_build(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    (void)opt;
    sps_context ctx = B->ctx;
    hola_store *s;
    SPS_CHECK(hola_alloc(B, &s));
    const size_t rp = ((size_t)B->n + 1) * sizeof(sps_index), cb = (size_t)B->nnz * sizeof(sps_index),
                 vb = (size_t)B->nnz * sps_scalar_size(B->t);
    SPS_CHECK(sps_dmalloc(ctx, (void **)&s->base.rowptr, rp));
    SPS_CHECK(sps_dmalloc(ctx, (void **)&s->base.col, cb));
    SPS_CHECK(sps_dmalloc(ctx, &s->base.val, vb));
    SPS_CHECK(sps_dcopy(ctx, s->base.rowptr, src->rowptr, rp, SPS_COPY_D2D));
    SPS_CHECK(sps_dcopy(ctx, s->base.col, src->col, cb, SPS_COPY_D2D));
    return sps_dcopy(ctx, s->base.val, src->val, vb, SPS_COPY_D2D); /* queued; src may be freed after (stream order) */
}

static sps_status hola_to_csr(sps_matrix A, sps_csr_host *out)
{
    const hola_store *s = A->store;
    return sps_csr_fetch(A, &s->base, out);
}

static sps_status hola_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    hola_store *s = A->store;
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    return (mode == SPS_OP_N ? k->hola_spmv : k->hola_spmvt)(sps_ex(A->ctx), A->n, A->m, A->nnz, s->base.rowptr, s->base.col,
                                                             s->base.val, s->npt, s->row_starts, a, x, b, y);
}

/* CSR's bytes + the row starts: 4 (nblocks + 1) bytes, 4 / (256 npt) bytes per non-zero. */
static size_t hola_footprint(sps_matrix A, int64_t *stored)
{
    *stored = A->nnz;
    return sps_csr_bytes(A->n, A->nnz, A->t) + sps_hola_row_starts_bytes(A->nnz, sps_scalar_size(A->t));
}

const sps_format_ops sps_format_hola = {
    .id = SPS_FMT_HOLA, .name = "hola",
    .summary = "plain CSR by Hola-SpMV (strict non-zero splitting; +0.004 B/nnz): skewed rows",
    SPS_FORMAT_HOOKS(hola),
    .spmv_atomic = 1, /* hola.cu: a block's first and last rows meet their neighbours' by atomics */
};
