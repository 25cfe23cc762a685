/* Block-Jacobi (bjacobi): M = blockdiag(A)^{-1} over diagonal blocks of up to
 * SPS_BJ_MAX (32) rows of the operator: PETSc's point-block Jacobi (PCPBJACOBI,
 * uniform blocks; PCVPBJACOBI, variable ones).
 *
 * Blocks (option pc-block-size):
 *   auto  a block or quaternion matrix's entries (d x d blocks of its scalar
 *         expansion); a scalar matrix's supervariables: runs of consecutive rows
 *         with the same columns, at most 32 rows (the unknowns of one node of a
 *         FEM mesh; a matrix without such runs gets point Jacobi, 1 x 1 blocks);
 *   k     blocks of k rows of the operator (the last one what is left).
 * Symbolic: the blocks from the pattern (start, the offsets of their values,
 *   each row's block), uploaded; the inverses' array allocated.
 * Numeric: the diagonal blocks from the host copy of the matrix (its scalar
 *   expansion), or, where the blocks are a compound matrix's entries and its format
 *   has diag_blocks (bcsr), extracted on the backend with no host copy at all; then
 *   inverted on the backend (bj_invert: Gauss-Jordan
 *   with partial pivoting, a warp a block on the GPU); a singular block is
 *   SPS_ERR_NUMERIC naming its rows.  An update costs one host copy of the
 *   matrix, one upload and the inversion.
 * Apply: bj_apply, one pass over the inverses, x and y.
 * SYMMETRIC: the inverse of a symmetric (Hermitian) block diagonal is, and an
 * SPD A has SPD diagonal blocks, so CG may use it.  An in-place apply copies x into
 * a vector made at setup (nothing is allocated); not flagged capturable until graph
 * capture of it has run on a GPU. */
#include "precond/precond_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sps_option_desc bjacobi_options[] = {
    {.name = "pc-block-size", .type = SPS_OPT_CHOICE, .def = "auto",
     .choices = "auto|1|2|3|4|5|6|7|8|9|10|11|12|13|14|15|16|17|18|19|20|21|22|23|24|25|26|27|28|29|30|31|32",
     .help = "bjacobi: rows a diagonal block: auto (a block or quaternion matrix's entries; a scalar matrix's "
             "supervariables, runs of up to 32 rows with the same columns) or 1..32"},
};

typedef struct {
    sps_index nb;      /* blocks */
    int bsz;           /* > 0: every block has bsz rows */
    int entries;       /* the blocks are the matrix's entries (bj_from_entries at the symbolic step: the
                          numeric one keeps that choice whatever pc-block-size says by then) */
    int64_t nval;      /* values of all blocks: off[nb] */
    sps_index *start;  /* backend: nb + 1 first rows */
    int64_t *off;      /* backend: nb + 1 value offsets */
    sps_index *rowblk; /* backend: n, each row's block */
    void *inv;         /* backend: the blocks, then their inverses */
    sps_index *bad;    /* backend: bj_invert's report */
    sps_index *hstart; /* host copies of start and off, for the numeric step */
    int64_t *hoff;
    void *stage;       /* host: the diagonal blocks before the upload */
    sps_vector xcopy;  /* x of an in-place application (rows of a block read each other's x) */
} bj_store;

static void bj_destroy(sps_precond P)
{
    bj_store *s = P->data;
    if (!s) return;
    sps_context ctx = P->op.ctx;
    sps_dfree(ctx, s->start);
    sps_dfree(ctx, s->off);
    sps_dfree(ctx, s->rowblk);
    sps_dfree(ctx, s->inv);
    sps_dfree(ctx, s->bad);
    free(s->hstart);
    free(s->hoff);
    free(s->stage);
    sps_vector_destroy(s->xcopy);
    free(s);
    P->data = NULL;
}

/* Rows i and i - 1 of h have the same columns. */
static int same_columns(const sps_csr_host *h, sps_index i)
{
    const sps_index a = h->rowptr[i - 1], la = h->rowptr[i] - a, b = h->rowptr[i], lb = h->rowptr[i + 1] - b;
    return la == lb && memcmp(h->col + a, h->col + b, (size_t)la * sizeof(sps_index)) == 0;
}

/* The first rows of the blocks into start (n + 1 entries at most); returns their count. */
static sps_index bj_blocks(const sps_csr_host *h, int k, int d, sps_index *start)
{
    const sps_index n = h->n;
    sps_index nb = 0;
    if (k == 0 && d > 1) k = d; /* a compound matrix's entries */
    if (k > 0) {
        for (sps_index s = 0; s < n; s += k) start[nb++] = s;
    } else { /* supervariables */
        sps_index s = 0;
        for (sps_index i = 1; i <= n; i++)
            if (i == n || i - s >= SPS_BJ_MAX || !same_columns(h, i)) {
                start[nb++] = s;
                s = i;
            }
    }
    start[nb] = n;
    return nb;
}

/* The blocks are a compound matrix's entries and its format extracts their expansions on
 * the backend (bcsr: diag_blocks): setup without a host copy of the matrix.  H200, the
 * 1M-DOF FEM beam (5M 3x3 blocks): the host path took 1.43 s to set up. */
static int bj_from_entries(const sps_precond P, const sps_matrix A)
{
    const int k = sps_opt_int(P->opts, "pc-block-size"), d = sps_entry_dim(A->entry);
    return A->entry.kind != SPS_ENTRY_SCALAR && A->ops->diag_blocks && (k == 0 || k == d);
}

static sps_status bj_symbolic(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    const sps_index n = P->op.n;
    bj_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "the block-Jacobi store"));
    P->data = s; /* released by bj_destroy on any failure below */
    const int entries = s->entries = bj_from_entries(P, A), d = sps_entry_dim(A->entry);
    const sps_csr_host *h = NULL;
    if (!entries) SPS_CHECK(sps_pc_host_expanded(P, A, &h));
    sps_index *rowblk = NULL;
    sps_status st = sps_hmalloc(ctx, (void **)&s->hstart, ((size_t)n + 1) * sizeof *s->hstart, "block starts");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&s->hoff, ((size_t)n + 1) * sizeof *s->hoff, "block offsets");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&rowblk, ((size_t)n ? n : 1) * sizeof *rowblk, "row blocks");
    if (st == SPS_OK && entries) {
        s->nb = A->n; /* a block an entry row: d rows of the operator each */
        for (sps_index k = 0; k <= s->nb; k++) s->hstart[k] = k * d;
    } else if (st == SPS_OK) {
        s->nb = bj_blocks(h, sps_opt_int(P->opts, "pc-block-size"), sps_entry_dim(A->entry), s->hstart);
    }
    if (st == SPS_OK) {
        s->hoff[0] = 0;
        for (sps_index k = 0; k < s->nb; k++) {
            const int64_t sz = s->hstart[k + 1] - s->hstart[k];
            s->hoff[k + 1] = s->hoff[k] + sz * sz;
            for (sps_index i = s->hstart[k]; i < s->hstart[k + 1]; i++) rowblk[i] = k;
        }
        s->nval = s->hoff[s->nb];
        s->bsz = s->nb > 0 ? (int)(s->hstart[1] - s->hstart[0]) : 0;
        for (sps_index k = 1; k < s->nb && s->bsz; k++)
            if (s->hstart[k + 1] - s->hstart[k] != s->bsz) s->bsz = 0;
    }
    const size_t vb = (size_t)s->nval * sps_scalar_size(P->op.t); /* the host path's staging: bj_numeric's */
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->start, s->hstart, ((size_t)s->nb + 1) * sizeof *s->hstart);
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->off, s->hoff, ((size_t)s->nb + 1) * sizeof *s->hoff);
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->rowblk, rowblk, ((size_t)n ? n : 1) * sizeof *rowblk);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &s->inv, vb ? vb : 1);
    if (st == SPS_OK) st = sps_dmalloc(ctx, (void **)&s->bad, sizeof *s->bad);
    if (st == SPS_OK) st = sps_vector_create(ctx, n, P->op.t, &s->xcopy);
    free(rowblk);
    return st;
}

/* Block k's entries, row-major (host memory, freed by the caller): from the host path's staging,
 * else (the format's own blocks, inverted in place) once more from the format. */
static sps_status bj_block_values(sps_precond P, sps_matrix A, sps_index k, void **out)
{
    sps_context ctx = P->op.ctx;
    const bj_store *s = P->data;
    const size_t ss = sps_scalar_size(P->op.t), bytes = (size_t)(s->hoff[k + 1] - s->hoff[k]) * ss;
    if (!(s->entries && A->ops->diag_blocks)) {
        SPS_CHECK(sps_hmalloc(ctx, out, bytes ? bytes : 1, "a diagonal block"));
        memcpy(*out, (const char *)s->stage + (size_t)s->hoff[k] * ss, bytes);
        return SPS_OK;
    }
    void *all = NULL;
    SPS_CHECK(sps_dmalloc(ctx, &all, (size_t)s->nval * ss));
    sps_status st = A->ops->diag_blocks(A, all);
    if (st == SPS_OK) st = sps_ddownload(ctx, out, (const char *)all + (size_t)s->hoff[k] * ss, bytes, "a diagonal block");
    sps_dfree(ctx, all);
    return st;
}

static sps_status bj_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    bj_store *s = P->data;
    const size_t ss = sps_scalar_size(P->op.t);
    /* the host path's staging, made on its first need: the format's own blocks need none, but an
       update may bring the same entries in another format (bcsr at setup, bell now) */
    if (s->entries && A->ops->diag_blocks) {
        SPS_CHECK(A->ops->diag_blocks(A, s->inv)); /* on the backend, straight into place */
    } else {
        if (!s->stage)
            SPS_CHECK(sps_hmalloc(ctx, &s->stage, s->nval ? (size_t)s->nval * ss : 1, "the block-Jacobi blocks"));
        const sps_csr_host *h;
        SPS_CHECK(sps_pc_host_expanded(P, A, &h));
        /* the diagonal blocks, row-major; what the pattern lacks stays zero */
        memset(s->stage, 0, (size_t)s->nval * ss);
        for (sps_index k = 0; k < s->nb; k++) {
            const sps_index r0 = s->hstart[k], sz = s->hstart[k + 1] - r0;
            char *b = (char *)s->stage + (size_t)s->hoff[k] * ss;
            for (sps_index r = 0; r < sz; r++)
                for (sps_index e = h->rowptr[r0 + r]; e < h->rowptr[r0 + r + 1]; e++) {
                    const sps_index c = h->col[e] - r0;
                    if (c >= 0 && c < sz) memcpy(b + ((size_t)r * sz + c) * ss, (const char *)h->val + (size_t)e * ss, ss);
                }
        }
        SPS_CHECK(sps_dcopy(ctx, s->inv, s->stage, (size_t)s->nval * ss, SPS_COPY_H2D));
    }
    sps_index bad = 0;
    SPS_CHECK(sps_kvec(ctx, P->op.t)->bj_invert(sps_ex(ctx), s->nb, s->start, s->off, s->inv, s->bad));
    SPS_CHECK(sps_dcopy(ctx, &bad, s->bad, sizeof bad, SPS_COPY_D2H));
    if (!bad) return SPS_OK;
    sps_index k = 0; /* the block of row bad - 1 */
    while (k + 1 < s->nb && s->hstart[k + 1] <= bad - 1) k++;
    /* a value that is not finite makes the inverse NaN: named as such, as Jacobi and ILU name it,
       not as a singular block */
    void *blk = NULL;
    SPS_CHECK(bj_block_values(P, A, k, &blk));
    const sps_index sz = s->hstart[k + 1] - s->hstart[k];
    for (int64_t q = 0; q < (int64_t)sz * sz; q++) {
        const sps_cplx v = sps_cplx_load(P->op.t, (const char *)blk + (size_t)q * ss, sps_cplx_make(0, 0));
        if (!isfinite(v.re) || !isfinite(v.im)) {
            free(blk);
            return sps_error(ctx, SPS_ERR_NUMERIC,
                             "block-Jacobi: row %d holds a value that is not finite (column %d), in the diagonal "
                             "block of rows %d..%d",
                             (int)(s->hstart[k] + q / sz) + 1, (int)(s->hstart[k] + q % sz) + 1, (int)bad,
                             (int)s->hstart[k + 1]);
        }
    }
    free(blk);
    return sps_error(ctx, SPS_ERR_NUMERIC,
                     "block-Jacobi: the diagonal block of rows %d..%d is singular (a pivot of at most size x eps x "
                     "its largest entry, or a non-finite inverse)",
                     (int)bad, (int)s->hstart[k + 1]);
}

static sps_status bj_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    const bj_store *s = P->data;
    sps_context ctx = P->op.ctx;
    if (mode != SPS_OP_N) /* no solver asks for it; the blocks would need transposing */
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "block-Jacobi: no transposed apply");
    /* in place: x into the scratch made at setup, so no application allocates (the CUDA
     * kernel would otherwise copy x into pool memory at every call of a solve) */
    if (x->data == y->data) {
        SPS_CHECK(sps_v_copy(x, s->xcopy));
        x = s->xcopy;
    }
    return sps_kvec(ctx, P->op.t)->bj_apply(sps_ex(ctx), P->op.n, s->bsz, s->rowblk, s->start, s->off, s->inv, x->data,
                                            y->data);
}

const sps_precond_method sps_precond_bjacobi_method = {
    .type = SPS_PRECOND_BJACOBI, .name = "bjacobi",
    .flags = SPS_PRECOND_SYMMETRIC, .needs_entries = 1,
    .options = bjacobi_options, .noptions = SPS_NOPTS(bjacobi_options),
    .symbolic = bj_symbolic, .numeric = bj_numeric,
    .apply = bj_apply,
    .destroy = bj_destroy,
};
