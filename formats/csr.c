/* CSR: row pointers, column indices, values, in backend memory.
 * SpMV: kernels csr_spmv / csr_spmvt (A^T applied without forming it).
 * With the option transpose explicit, A^T is built once (host counting
 * sort, uploaded beside A) and SpMV^T runs csr_spmv on it: deterministic on the
 * GPU too (the implicit csr_spmvt scatters with atomics there), for twice the
 * memory.
 * SpMV (op N) runs the row-group kernel or, for irregular row lengths, the
 * merge-path kernel (kernels/csr_merge.h) whose plan is built here once, on
 * the backend, from rowptr (the option csr-kernel; auto: the longest row above
 * SPS_CSR_MERGE_RATIO x the average and 64 entries, on the GPU).  csr-kernel
 * hola builds the hola format instead (formats/hola.c: the same arrays,
 * Hola's nonzero-split kernels), which the registry also lists as "hola".
 * SpMV^T (op T, no cached A^T) on those same irregular rows runs Hola's SpMV^T
 * (kernels/cuda/hola.cu: every thread the same number of non-zeros, sorted
 * atomic scatter) with its row-starts buffer kept here, 4 bytes per 256 npt
 * non-zeros: on power-law rows the row kernel's scatter waits on the long rows
 * (H100, powerlaw-2M: csr_spmvt 0.575 / 0.604 ms f32 / f64, Hola 0.505 / 0.536;
 * bench/results/hola.md, session 11).  Both scatter with atomics.
 * The fused CG products keep the row groups.  The longest row (of A and of the
 * cached A^T) is counted once here and passed to the kernels (their maxrow): the
 * GPU row kernels then skip their long-row pass where there are none. */
#include "formats/csr_backend.h"
#include "kernels/csr_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* base first: other formats read a CSR matrix's store as sps_csr_store */
typedef struct {
    sps_csr_store base;
    sps_index *trowptr, *tcol; /* A^T (m + 1, nnz), NULL unless transpose_explicit */
    void *tval;
    void *merge; /* the merge-path plan and carries (sps_csr_merge_bytes), NULL: row groups */
    sps_index *hola_rs; /* with merge on the GPU: Hola's row starts for SpMV^T (sps_hola_row_starts_bytes) */
    sps_index maxrow, tmaxrow; /* longest row of A, of A^T (-1: no A^T) */
} csr_store;

static void csr_destroy(sps_matrix A)
{
    csr_store *s = A->store;
    if (!s) return;
    sps_csr_unstage(A->ctx, &s->base);
    sps_dfree(A->ctx, s->trowptr);
    sps_dfree(A->ctx, s->tcol);
    sps_dfree(A->ctx, s->tval);
    sps_dfree(A->ctx, s->merge);
    sps_dfree(A->ctx, s->hola_rs);
    free(s);
    A->store = NULL;
}

static sps_index csr_longest_row(const sps_csr_host *h)
{
    sps_index longest = 0;
    for (sps_index i = 0; i < h->n; i++)
        if (h->rowptr[i + 1] - h->rowptr[i] > longest) longest = h->rowptr[i + 1] - h->rowptr[i];
    return longest;
}

/* A^T of host CSR h into backend memory (sps_csr_host_transpose: canonical too). */
static sps_status csr_build_transpose(sps_matrix B, const sps_csr_host *h, csr_store *s)
{
    sps_csr_host T;
    SPS_CHECK(sps_csr_host_transpose(B->ctx, h, &T));
    s->tmaxrow = csr_longest_row(&T);
    const size_t es = sps_scalar_size(h->t);
    sps_status st = sps_dupload(B->ctx, (void **)&s->trowptr, T.rowptr, ((size_t)T.n + 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(B->ctx, (void **)&s->tcol, T.col, (size_t)T.nnz * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(B->ctx, &s->tval, T.val, (size_t)T.nnz * es);
    sps_csr_host_free(&T);
    return st;
}

/* The words of csr-kernel are in sps_csr_kernel order. */
static const sps_option_desc csr_options[] = {
    {.name = "transpose", .type = SPS_OPT_CHOICE, .def = "implicit", .choices = "implicit|explicit",
     .help = "SpMV^T by implicit (atomic scatter on the GPU) or explicit (A^T built once and cached: "
             "deterministic, twice the memory); none of the solvers applies A^T yet"},
    {.name = "csr-kernel", .type = SPS_OPT_CHOICE, .def = "auto", .choices = "auto|rows|merge|hola",
     .help = "SpMV schedule on the GPU: auto (merge where the longest row exceeds 16x the average, or on small "
             "matrices whose rows would need the row kernel's long-row pass), rows, merge, or hola (Hola's "
             "nonzero split: the hola format)"},
};

static const char *csr_rules(sps_options opt, char *why, size_t len)
{
    if (sps_opt_int(opt, "csr-kernel") != SPS_CSR_KERNEL_HOLA || !sps_opt_int(opt, "transpose")) return NULL;
    snprintf(why, len, "hola keeps no A^T: use transpose implicit with it");
    return "csr-kernel";
}

extern const sps_format_ops sps_format_hola;

static const sps_format_ops *csr_resolve(sps_options opt)
{
    return sps_opt_int(opt, "csr-kernel") == SPS_CSR_KERNEL_HOLA ? &sps_format_hola : NULL;
}

/* Small matrices (up to this many merge tiles, about one a streaming multiprocessor)
 * whose rows would send the row kernel through its long/medium-row pass, even with
 * its lanes a row widened (sps_csr_tpr_fit), take the merge path, one launch there
 * (kernels/cuda/csr_merge.cu).  H200, spbench
 * 2026-11-26, 16 SuiteSparse matrices of 20 to 10k rows with an average under 8
 * and a longest row above 8 lanes' worth (west0132, add32, 1138_bus, rajat11,
 * bcsstk21, ...): row groups 18-39 us, merge path 7-11 us, cuSPARSE CSR ALG1 5-11. */
#define SPS_CSR_MERGE_SMALL_TILES 128

/* The merge path where asked, or (auto) on the GPU for irregular rows (B's n, nnz, t). */
static int csr_wants_merge(sps_matrix B, sps_index longest, sps_options opt)
{
    const int k = sps_opt_int(opt, "csr-kernel");
    if (k != SPS_CSR_KERNEL_AUTO) return k == SPS_CSR_KERNEL_MERGE;
    if (B->ctx->backend != SPS_BACKEND_CUDA || B->n == 0) return 0;
    const size_t ss = sps_scalar_size(B->t);
    if (sps_csr_merge_tiles(B->n, B->nnz, ss) <= SPS_CSR_MERGE_SMALL_TILES &&
        sps_csr_rows_long_pass(B->n, B->nnz, longest, ss))
        return 1;
    return longest > 64 && (double)longest > SPS_CSR_MERGE_RATIO * ((double)B->nnz / B->n);
}

/* The schedule's state once s->base and s->maxrow are in place: the merge plan where
 * csr_wants_merge says so. */
static sps_status csr_schedule(sps_matrix B, csr_store *s, sps_options opt)
{
    if (!csr_wants_merge(B, s->maxrow, opt)) return SPS_OK;
    const size_t ss = sps_scalar_size(B->t);
    SPS_CHECK(sps_dmalloc(B->ctx, &s->merge, sps_csr_merge_bytes(B->n, B->nnz, ss)));
    SPS_CHECK(sps_kmat(B->ctx, B->t)->csr_merge_plan(sps_ex(B->ctx), B->n, B->nnz, s->base.rowptr, s->merge));
    if (B->ctx->backend == SPS_BACKEND_CUDA && !s->trowptr)
        SPS_CHECK(sps_dmalloc(B->ctx, (void **)&s->hola_rs, sps_hola_row_starts_bytes(B->nnz, ss)));
    return SPS_OK;
}

static sps_status csr_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    csr_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "CSR handle"));
    B->store = s;
    s->maxrow = csr_longest_row(h);
    s->tmaxrow = -1;
    SPS_CHECK(sps_csr_stage(B->ctx, h, &s->base));
    if (sps_opt_int(opt, "transpose")) SPS_CHECK(csr_build_transpose(B, h, s));
    return csr_schedule(B, s, opt);
}

/* From CSR arrays in backend memory (sps_matrix_from_coo_entries_device; sps_matrix_convert
 * from CSR): copies, the longest row by the backend (jds_rowlen_max, one index
 * downloaded).  An explicit A^T is built on the host, so that option goes through it. */
static const sps_csr_store *csr_backend_csr(sps_matrix A) { return (const sps_csr_store *)A->store; }

static sps_status csr_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    if (sps_opt_int(opt, "transpose")) {
        sps_csr_host h;
        memset(&h, 0, sizeof h);
        sps_status st = sps_csr_fetch(B, src, &h);
        if (st == SPS_OK) st = csr_from_csr(B, &h, opt);
        sps_csr_host_free(&h);
        return st;
    }
    csr_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "CSR handle"));
    B->store = s;
    s->tmaxrow = -1;
    SPS_CHECK(sps_csr_copy_backend(B->ctx, src, B->n, B->nnz, (size_t)B->nnz * sps_scalar_size(B->t), &s->base));
    sps_index *d = NULL;
    SPS_CHECK(sps_dmalloc(B->ctx, (void **)&d, sizeof *d));
    sps_status st = sps_kidx(B->ctx)->jds_rowlen_max(sps_ex(B->ctx), B->n, s->base.rowptr, d);
    if (st == SPS_OK) st = sps_dcopy(B->ctx, &s->maxrow, d, sizeof *d, SPS_COPY_D2H);
    sps_dfree(B->ctx, d);
    SPS_CHECK(st);
    return csr_schedule(B, s, opt);
}

static sps_status csr_to_csr(sps_matrix A, sps_csr_host *out)
{
    const csr_store *s = A->store;
    return sps_csr_fetch(A, &s->base, out);
}

/* Straight from the store into the caller's arrays: the residual check's export of a
 * 14M-entry matrix spent most of its time in the host copy between (and its page
 * faults). */
static sps_status csr_export(sps_matrix A, sps_index *rowptr, sps_index *col, void *val)
{
    const csr_store *s = A->store;
    SPS_CHECK(sps_dcopy(A->ctx, rowptr, s->base.rowptr, ((size_t)A->n + 1) * sizeof *rowptr, SPS_COPY_D2H));
    if (!A->nnz) return SPS_OK;
    SPS_CHECK(sps_dcopy(A->ctx, col, s->base.col, (size_t)A->nnz * sizeof *col, SPS_COPY_D2H));
    return sps_dcopy(A->ctx, val, s->base.val, (size_t)A->nnz * sps_scalar_size(A->t), SPS_COPY_D2H);
}

static sps_status csr_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    csr_store *s = A->store;
    const sps_mat_kernels *k = sps_kmat(A->ctx, A->t);
    if (mode != SPS_OP_N && s->trowptr) /* the cached A^T: y = a A^T x + b y by the row kernel */
        return k->csr_spmv(sps_ex(A->ctx), A->m, A->n, A->nnz, s->trowptr, s->tcol, s->tval, s->tmaxrow, a, x, b, y);
    if (mode != SPS_OP_N && s->hola_rs) /* irregular rows: Hola's balanced scatter */
        return k->hola_spmvt(sps_ex(A->ctx), A->n, A->m, A->nnz, s->base.rowptr, s->base.col, s->base.val,
                             sps_hola_npt(A->nnz, sps_scalar_size(A->t)), s->hola_rs, a, x, b, y);
    if (mode == SPS_OP_N && s->merge)
        return k->csr_spmv_merge(sps_ex(A->ctx), A->n, A->m, A->nnz, s->base.rowptr, s->base.col, s->base.val, s->merge, a, x,
                                 b, y);
    return (mode == SPS_OP_N ? k->csr_spmv : k->csr_spmvt)(sps_ex(A->ctx), A->n, A->m, A->nnz, s->base.rowptr, s->base.col,
                                                           s->base.val, s->maxrow, a, x, b, y);
}

static sps_status csr_spmv_dot(sps_matrix A, const void *x, void *y, sps_cplx *slots, int out)
{
    const csr_store *s = A->store;
    return sps_kmat(A->ctx, A->t)->csr_spmv_dot(sps_ex(A->ctx), A->n, A->nnz, s->base.rowptr, s->base.col, s->base.val,
                                                 s->maxrow, x, y, slots, out);
}

static sps_status csr_spmv_xpay_dot(sps_matrix A, const void *z, sps_scoef c, const void *pold, void *pnew, void *q,
                                    sps_cplx *slots, int out)
{
    const csr_store *s = A->store;
    return sps_kmat(A->ctx, A->t)->csr_spmv_xpay_dot(sps_ex(A->ctx), A->n, A->nnz, s->base.rowptr, s->base.col, s->base.val,
                                                      s->maxrow, z, c, pold, pnew, q, slots, out);
}

static sps_status csr_cg_iter(sps_matrix A, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, void *x,
                              void *r, sps_cplx *slots, sps_cg_slots k)
{
    const csr_store *s = A->store;
    return sps_kmat(A->ctx, A->t)->csr_cg_iter(sps_ex(A->ctx), A->n, A->nnz, s->base.rowptr, s->base.col, s->base.val,
                                                s->maxrow, z, c, pold, pnew, q, x, r, slots, k);
}

static size_t csr_footprint(sps_matrix A, int64_t *stored)
{
    const csr_store *s = A->store;
    *stored = A->nnz;
    return sps_csr_bytes(A->n, A->nnz, A->t) + (s && s->trowptr ? sps_csr_bytes(A->m, A->nnz, A->t) : 0) /* + A^T */
           + (s && s->merge ? sps_csr_merge_bytes(A->n, A->nnz, sps_scalar_size(A->t)) : 0)
           + (s && s->hola_rs ? sps_hola_row_starts_bytes(A->nnz, sps_scalar_size(A->t)) : 0);
}

const sps_format_ops sps_format_csr = {
    .id = SPS_FMT_CSR, .name = "csr",
    .summary = "compressed sparse row: the general-purpose default",
    SPS_FORMAT_OPTIONS(csr_options), .rules = csr_rules, .resolve = csr_resolve,
    .from_csr = csr_from_csr, .to_csr = csr_to_csr, .export_csr = csr_export, .from_backend_csr = csr_from_backend_csr,
    .backend_csr = csr_backend_csr,
    .spmv = csr_spmv, .spmv_dot = csr_spmv_dot, .spmv_xpay_dot = csr_spmv_xpay_dot, .cg_iter = csr_cg_iter,
    .footprint = csr_footprint, .destroy = csr_destroy,
};
