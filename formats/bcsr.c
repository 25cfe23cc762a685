/* bcsr: CSR of compound entries (dense b x b blocks, b = 2..8, or quaternions):
 * row pointers and columns per block-row, and the entries' values in backend
 * memory, AoS (an entry's members together, blocks row-major, quaternions
 * w, x, y, z) or SoA (one array per member: member p of entry k at p*nnz + k),
 * the option entry-layout.  Products: the compound family
 * (kernels/compound_kernels.h), SpMV^T without forming A^T; CG's product with its
 * dot in one pass (spmv_dot).  A matrix of n x m
 * entries is an operator of n*d x m*d scalars (d = b or 4) on AoS vectors.
 * Scalar entries are refused: they have the scalar formats. */
#include "formats/csr_backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    sps_csr_store base; /* rowptr, col (per entry), val (nnz entries, layout lay) */
    sps_entry_layout lay;
    sps_entry_layout vlay; /* the kernels' vector layout (option vector-layout; sps_cmp_apply) */
} bcsr_store;

static const sps_option_desc bcsr_options[] = {SPS_FMT_OPT_ENTRY_LAYOUT, SPS_FMT_OPT_VECTOR_LAYOUT};

static void bcsr_destroy(sps_matrix A)
{
    bcsr_store *s = A->store;
    if (!s) return;
    sps_csr_unstage(A->ctx, &s->base); /* frees the three arrays, whatever their sizes */
    free(s);
    A->store = NULL;
}

/* dst = src's nnz entries of nv members of ss bytes, AoS -> SoA (to_soa) or back. */
static void bcsr_relayout(int to_soa, int64_t nnz, int nv, size_t ss, const void *src, void *dst)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (int64_t k = 0; k < nnz; k++)
        for (int p = 0; p < nv; p++) {
            const size_t aos = ((size_t)k * nv + p) * ss, soa = ((size_t)p * nnz + k) * ss;
            memcpy(d + (to_soa ? soa : aos), s + (to_soa ? aos : soa), ss);
        }
}

static size_t bcsr_value_bytes(const sps_matrix A)
{
    return (size_t)A->nnz * (size_t)sps_entry_values(A->entry) * sps_scalar_size(A->t);
}

/* B's store, empty, with the layouts of opt. */
static sps_status bcsr_store_new(sps_matrix B, sps_options opt, bcsr_store **out)
{
    bcsr_store *s;
    SPS_CHECK(sps_hcalloc(B->ctx, (void **)&s, sizeof *s, "bcsr handle"));
    B->store = s;
    s->lay = (sps_entry_layout)sps_opt_int(opt, "entry-layout");
    s->vlay = (sps_entry_layout)sps_opt_int(opt, "vector-layout");
    *out = s;
    return SPS_OK;
}

static sps_status bcsr_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt)
{
    bcsr_store *s;
    SPS_CHECK(bcsr_store_new(B, opt, &s));
    SPS_CHECK(sps_dupload(B->ctx, (void **)&s->base.rowptr, h->rowptr, ((size_t)h->n + 1) * sizeof(sps_index)));
    SPS_CHECK(sps_dupload(B->ctx, (void **)&s->base.col, h->col, (size_t)h->nnz * sizeof(sps_index)));
    const size_t vb = bcsr_value_bytes(B);
    if (s->lay == SPS_ENTRY_AOS) return sps_dupload(B->ctx, &s->base.val, h->val, vb);
    void *soa;
    SPS_CHECK(sps_hmalloc(B->ctx, &soa, vb, "bcsr SoA values"));
    bcsr_relayout(1, h->nnz, sps_entry_values(B->entry), sps_scalar_size(B->t), h->val, soa);
    const sps_status st = sps_dupload(B->ctx, &s->base.val, soa, vb);
    free(soa);
    return st;
}

/* From CSR arrays in backend memory (sps_matrix_from_coo_entries_device's build, and
 * conversions from a bcsr matrix): copies, the values relaid to SoA by the backend's
 * vec_relayout (entry k's member p at p nnz + k) where asked. */
static sps_status bcsr_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    bcsr_store *s;
    SPS_CHECK(bcsr_store_new(B, opt, &s));
    const size_t vb = bcsr_value_bytes(B);
    SPS_CHECK(sps_csr_copy_backend(B->ctx, src, B->n, B->nnz, s->lay == SPS_ENTRY_AOS ? vb : 0, &s->base));
    if (s->lay == SPS_ENTRY_AOS) return SPS_OK;
    sps_dfree(B->ctx, s->base.val);
    s->base.val = NULL;
    SPS_CHECK(sps_dmalloc(B->ctx, &s->base.val, vb));
    return sps_kidx(B->ctx)->vec_relayout(sps_ex(B->ctx), sps_scalar_size(B->t), sps_entry_values(B->entry),
                                          (sps_index)B->nnz, 1, src->val, s->base.val);
}

static const sps_csr_store *bcsr_backend_csr(sps_matrix A)
{
    const bcsr_store *s = A->store;
    return s->lay == SPS_ENTRY_AOS ? &s->base : NULL;
}

static sps_status bcsr_to_csr(sps_matrix A, sps_csr_host *out)
{
    const bcsr_store *s = A->store;
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    out->entry = A->entry;
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->rowptr, s->base.rowptr, ((size_t)A->n + 1) * sizeof(sps_index),
                            "bcsr row pointers"));
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->col, s->base.col, (size_t)A->nnz * sizeof(sps_index), "bcsr columns"));
    const size_t vb = bcsr_value_bytes(A);
    SPS_CHECK(sps_ddownload(A->ctx, &out->val, s->base.val, vb, "bcsr values"));
    if (s->lay == SPS_ENTRY_AOS) return SPS_OK;
    void *aos;
    SPS_CHECK(sps_hmalloc(A->ctx, &aos, vb, "bcsr AoS values"));
    bcsr_relayout(0, A->nnz, sps_entry_values(A->entry), sps_scalar_size(A->t), out->val, aos);
    free(out->val);
    out->val = aos;
    return SPS_OK;
}

static sps_status bcsr_kernels(sps_matrix A, sps_op_mode mode, sps_entry_layout vlay, sps_cplx a, const void *x,
                               sps_cplx b, void *y)
{
    const bcsr_store *s = A->store;
    const sps_cmp_kernels *k = sps_kcmp(A->ctx, A->entry, A->t); /* checked when A was built */
    return (mode == SPS_OP_N ? k->bcsr_spmv : k->bcsr_spmvt)(sps_ex(A->ctx), A->entry, s->lay, vlay, A->n, A->m,
                                                             A->nnz, s->base.rowptr, s->base.col, s->base.val, a, x, b,
                                                             y);
}

static sps_status bcsr_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    return sps_cmp_apply(A, mode, ((const bcsr_store *)A->store)->vlay, bcsr_kernels, a, x, b, y);
}

/* y = A x and x^H y (CG's q = A p, p^H q): one pass on the compound family's fused
 * kernel for AoS vectors and static rows (a dynamic schedule would sum the dot in an
 * order that varies from run to run); else the product, then a dot. */
static sps_status bcsr_spmv_dot(sps_matrix A, const void *x, void *y, sps_cplx *slots, int out)
{
    const bcsr_store *s = A->store;
    sps_exec *ex = sps_ex(A->ctx);
    if (s->vlay == SPS_ENTRY_AOS && !(ex->lv && ex->lv->cmp_sched))
        return sps_kcmp(A->ctx, A->entry, A->t)
            ->bcsr_spmv_dot(ex, A->entry, s->lay, A->n, A->nnz, s->base.rowptr, s->base.col, s->base.val, x, y, slots,
                            out);
    SPS_CHECK(bcsr_spmv(A, SPS_OP_N, sps_cplx_make(1, 0), x, sps_cplx_make(0, 0), y));
    return sps_kvec(A->ctx, A->t)->dot(ex, sps_matrix_op_rows(A), x, y, slots, out);
}

static sps_status bcsr_diag_blocks(sps_matrix A, void *out)
{
    const bcsr_store *s = A->store;
    return sps_kcmp(A->ctx, A->entry, A->t)
        ->bcsr_diag_blocks(sps_ex(A->ctx), A->entry, s->lay, A->n, A->nnz, s->base.rowptr, s->base.col, s->base.val, out);
}

static size_t bcsr_footprint(sps_matrix A, int64_t *stored)
{
    *stored = A->nnz;
    return ((size_t)A->n + 1 + (size_t)A->nnz) * sizeof(sps_index) + bcsr_value_bytes(A);
}

const sps_format_ops sps_format_bcsr = {
    .id = SPS_FMT_BCSR, .name = "bcsr",
    .summary = "CSR of compound entries (b x b blocks, quaternions), AoS or SoA entries",
    SPS_FORMAT_OPTIONS(bcsr_options), .compound = 1,
    .from_csr = bcsr_from_csr, .to_csr = bcsr_to_csr, .from_backend_csr = bcsr_from_backend_csr,
    .backend_csr = bcsr_backend_csr, .spmv = bcsr_spmv,
    .spmv_dot = bcsr_spmv_dot, .diag_blocks = bcsr_diag_blocks, .footprint = bcsr_footprint, .destroy = bcsr_destroy,
};
