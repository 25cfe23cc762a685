/* Matrices: construction from host arrays and files, conversion between
 * formats through canonical host CSR, description. */
#include "formats/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }

const char *sps_symmetry_name(sps_symmetry s)
{
    static const char *const names[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
    return ((unsigned)s < 4) ? names[s] : "?";
}

/* The format of fmt, and the options its hooks get: opt when made for it and its
 * rules hold, else (opt NULL) a set of its defaults in *own, for the caller to
 * destroy.  A format may hand the build to another (resolve: csr-kernel hola). */
static sps_status format_and_options(sps_context ctx, sps_format fmt, sps_options opt, const sps_format_ops **ops,
                                     sps_options *use, sps_options *own)
{
    *own = NULL;
    *ops = sps_format_lookup(fmt);
    if (!*ops)
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "format %d is not available in this build (available: %s)",
                         (int)fmt, sps_format_list());
    if (!opt) {
        if (sps_format_options_create(fmt, own) != SPS_OK)
            return sps_error(ctx, SPS_ERR_ALLOC, "%s: out of host memory for its default options", (*ops)->name);
        opt = *own;
    } else if (opt->desc != (*ops)->options || opt->n != (*ops)->noptions) {
        return sps_error(ctx, SPS_ERR_ARG, "%s: the options given were made for %s (sps_format_options_create)",
                         (*ops)->name, opt->owner);
    } else if (sps_options_check(opt) != SPS_OK) {
        return sps_error(ctx, SPS_ERR_ARG, "%s: %s", (*ops)->name, sps_options_error(opt));
    }
    const sps_format_ops *to = (*ops)->resolve ? (*ops)->resolve(opt) : NULL;
    if (to) *ops = to;
    *use = opt;
    return SPS_OK;
}

/* Whether format ops takes entries e of type t on ctx's backend: scalar formats
 * take scalar entries (the matrix family), compound ones blocks and quaternions
 * (the compound family: kernels/compound_kernels.h). */
static sps_status entry_check(sps_context ctx, const sps_format_ops *ops, sps_entry_desc e, sps_scalar t)
{
    const int compound = e.kind != SPS_ENTRY_SCALAR;
    if (compound != !!ops->compound)
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "%s: %s entries are not stored by this format (%s)", ops->name,
                         sps_entry_name(e),
                         compound ? "block and quaternion entries: bcsr, bell, bsell"
                                  : "bcsr is for block and quaternion entries, as are bell and bsell");
    if (compound ? !sps_cmp_kernels_for(ctx->ex.be, e, t) : !sps_mat_kernels_for(ctx->ex.be, e, t))
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "%s entries of %s: no %s kernels for them on the %s backend",
                         sps_entry_name(e), sps_scalar_name(t), ops->name, ctx->ex.be->name);
    return SPS_OK;
}

static sps_status entry_args(sps_context ctx, const char *fn, sps_index n, sps_index m, sps_entry_desc e, sps_scalar t);
sps_status sps_matrix_entry_args(sps_context ctx, const char *fn, sps_index n, sps_index m, sps_entry_desc e,
                                 sps_scalar t)
{
    return entry_args(ctx, fn, n, m, e, t);
}

/* A new handle of format fmt for n x m entries (nnz of them) of type e, t: the checks
 * every builder makes, the options (opt, or fmt's defaults) in *use (*own: what to
 * destroy after the build), the fields set; the store is the caller's to build. */
static sps_status matrix_begin(sps_context ctx, sps_format fmt, sps_options opt, sps_index n, sps_index m, int64_t nnz,
                               sps_entry_desc e, sps_scalar t, sps_symmetry sym, sps_options *use, sps_options *own,
                               sps_matrix *out)
{
    *out = NULL;
    /* every path to a matrix passes here: sizes whose operator (n x dim scalars)
     * would not fit 32-bit indices are refused (a quaternion file of 2^29 rows) */
    SPS_CHECK(entry_args(ctx, "matrix", n, m, e, t));
    const sps_format_ops *ops;
    SPS_CHECK(format_and_options(ctx, fmt, opt, &ops, use, own));
    sps_status st = entry_check(ctx, ops, e, t);
    sps_matrix A = NULL;
    if (st == SPS_OK) st = sps_hcalloc(ctx, (void **)&A, sizeof *A, "a matrix handle");
    if (st != SPS_OK) {
        sps_options_destroy(*own);
        *own = NULL;
        return st;
    }
    A->ctx = ctx;
    A->ops = ops;
    A->t = t;
    A->entry = sps_entry_stored(e);
    A->n = n;
    A->m = m;
    A->nnz = nnz;
    A->sym = sym;
    *out = A;
    return SPS_OK;
}

/* The end of a build: st from the format's hook; A kept on success, destroyed else. */
static sps_status matrix_end(sps_matrix A, sps_options own, sps_status st, sps_matrix *out)
{
    sps_options_destroy(own);
    if (st != SPS_OK) {
        sps_matrix_destroy(A);
        return st;
    }
    *out = A;
    return SPS_OK;
}

sps_status sps_matrix_from_csr_host(sps_context ctx, const sps_csr_host *csr, sps_format fmt, sps_options opt,
                                    sps_symmetry sym, sps_matrix *out)
{
    *out = NULL;
    sps_options use = NULL, own = NULL;
    sps_matrix A;
    SPS_CHECK(matrix_begin(ctx, fmt, opt, csr->n, csr->m, csr->nnz, csr->entry, csr->t, sym, &use, &own, &A));
    A->entry = csr->entry; /* as the source has it */
    return matrix_end(A, own, A->ops->from_csr(A, csr, use), out);
}

sps_status sps_matrix_from_backend_csr(sps_context ctx, const sps_csr_store *src, sps_index n, sps_index m,
                                      int64_t nnz, sps_entry_desc e, sps_scalar t, sps_format fmt, sps_matrix *out)
{
    *out = NULL;
    sps_options use = NULL, own = NULL;
    sps_matrix A;
    SPS_CHECK(matrix_begin(ctx, fmt, NULL, n, m, nnz, e, t, SPS_SYM_GENERAL, &use, &own, &A));
    if (!A->ops->from_backend_csr)
        return matrix_end(A, own, sps_error(ctx, SPS_ERR_UNSUPPORTED, "%s builds from host arrays only", A->ops->name),
                          out);
    return matrix_end(A, own, A->ops->from_backend_csr(A, src, use), out);
}

sps_status sps_matrix_build(sps_context ctx, sps_format fmt, sps_options opt, sps_index n, sps_index m, int64_t nnz,
                            sps_scalar t, sps_status (*build)(sps_matrix A, void *arg, sps_options opt), void *arg,
                            sps_matrix *out)
{
    *out = NULL;
    sps_options use = NULL, own = NULL;
    sps_matrix A;
    SPS_CHECK(matrix_begin(ctx, fmt, opt, n, m, nnz, (sps_entry_desc){0}, t, SPS_SYM_GENERAL, &use, &own, &A));
    return matrix_end(A, own, build(A, arg, use), out);
}

void sps_matrix_destroy(sps_matrix A)
{
    if (!A) return;
    if (A->ops && A->ops->destroy) A->ops->destroy(A);
    free(A);
}

sps_context sps_matrix_context(sps_matrix A) { return A ? A->ctx : NULL; }

/* Values of type t as doubles (interleaved when complex), for the triplet builder.
 * A non-finite value is SPS_ERR_NUMERIC naming the entry and its row and column. */
static sps_status vals_to_double(sps_context ctx, sps_scalar t, int nv, int64_t nnz, const sps_index *row,
                                 const sps_index *col, const void *val, double **out)
{
    const size_t per = (size_t)nv * (sps_scalar_is_complex(t) ? 2 : 1), k = (size_t)nnz * per;
    SPS_CHECK(sps_hmalloc(ctx, (void **)out, k * sizeof(double), "value copy"));
    for (size_t i = 0; i < k; i++) (*out)[i] = is_single(t) ? (double)((const float *)val)[i] : ((const double *)val)[i];
    for (size_t i = 0; i < k; i++)
        if (!isfinite((*out)[i])) {
            free(*out);
            *out = NULL;
            return sps_error(ctx, SPS_ERR_NUMERIC, "value of entry %zu (row %d, column %d) is not finite", i / per,
                             (int)row[i / per], (int)col[i / per]);
        }
    return SPS_OK;
}

/* The checks every builder from host arrays makes on the entry type and scalar
 * (fn names the public call in messages). */
static sps_status entry_args(sps_context ctx, const char *fn, sps_index n, sps_index m, sps_entry_desc e, sps_scalar t)
{
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "%s: bad scalar type %d", fn, (int)t);
    if (!sps_entry_valid(e))
        return sps_error(ctx, SPS_ERR_ARG, "%s: invalid entry type (kind %d, block %d: blocks are 2..8)", fn,
                         (int)e.kind, e.block);
    if (e.kind == SPS_ENTRY_QUATERNION && sps_scalar_is_complex(t))
        return sps_error(ctx, SPS_ERR_ARG, "%s: quaternion entries take t = f32 or f64 (q32, q64), not %s", fn,
                         sps_scalar_name(t));
    if (n < 0 || m < 0) return sps_error(ctx, SPS_ERR_ARG, "%s: negative size %d x %d", fn, (int)n, (int)m);
    const int64_t d = sps_entry_dim(e);
    if ((int64_t)n * d > INT32_MAX || (int64_t)m * d > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "%s: %d x %d %s entries exceed the 32-bit index range as an operator", fn,
                         (int)n, (int)m, sps_entry_name(e));
    return SPS_OK;
}

static sps_status from_coo_entries(sps_context ctx, const char *fn, sps_index n, sps_index m, int64_t nnz,
                                   const sps_index *row, const sps_index *col, const void *val, sps_entry_desc e,
                                   sps_scalar t, sps_matrix *A)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!A) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL output matrix", fn);
    *A = NULL;
    SPS_CHECK(entry_args(ctx, fn, n, m, e, t));
    if (nnz < 0 || nnz > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "%s: %lld nonzeros (must be 0..%d: row offsets are 32-bit)", fn,
                         (long long)nnz, (int)INT32_MAX);
    if (nnz > 0 && (!row || !col || !val)) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL array", fn);
    double *dv = NULL;
    SPS_CHECK(vals_to_double(ctx, t, sps_entry_values(e), nnz, row, col, val, &dv));
    sps_csr_host h;
    sps_status st =
        sps_csr_host_from_triplets_entries(ctx, n, m, nnz, row, col, dv, sps_scalar_is_complex(t), e, t, 0, &h);
    free(dv);
    SPS_CHECK(st);
    st = sps_matrix_from_csr_host(ctx, &h, e.kind == SPS_ENTRY_SCALAR ? SPS_FMT_CSR : SPS_FMT_BCSR, NULL,
                                  SPS_SYM_GENERAL, A);
    sps_csr_host_free(&h);
    return st;
}

sps_status sps_matrix_from_coo(sps_context ctx, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                               const sps_index *col, const void *val, sps_scalar t, sps_matrix *A)
{
    return from_coo_entries(ctx, "sps_matrix_from_coo", n, m, nnz, row, col, val, sps_entry_scalar(), t, A);
}

sps_status sps_matrix_from_coo_entries(sps_context ctx, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                       const sps_index *col, const void *val, sps_entry_desc e, sps_scalar t,
                                       sps_matrix *A)
{
    return from_coo_entries(ctx, "sps_matrix_from_coo_entries", n, m, nnz, row, col, val, e, t, A);
}

static sps_status from_csr_entries(sps_context ctx, const char *fn, sps_index n, sps_index m, const sps_index *rowptr,
                                   const sps_index *col, const void *val, sps_entry_desc e, sps_scalar t,
                                   sps_matrix *A)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!A) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL output matrix", fn);
    *A = NULL;
    if (n < 0 || m < 0) return sps_error(ctx, SPS_ERR_ARG, "%s: negative size %d x %d", fn, (int)n, (int)m);
    if (!rowptr) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL rowptr", fn);
    if (rowptr[0] != 0) return sps_error(ctx, SPS_ERR_ARG, "%s: rowptr[0] = %d, expected 0", fn, (int)rowptr[0]);
    for (sps_index i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return sps_error(ctx, SPS_ERR_ARG, "%s: rowptr decreases at row %d (%d > %d)", fn, (int)i,
                             (int)rowptr[i], (int)rowptr[i + 1]);
    const int64_t nnz = rowptr[n];
    sps_index *row;
    SPS_CHECK(sps_hmalloc(ctx, (void **)&row, (size_t)nnz * sizeof *row, "row indices"));
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) row[k] = i;
    sps_status st = from_coo_entries(ctx, fn, n, m, nnz, row, col, val, e, t, A);
    free(row);
    return st;
}

sps_status sps_matrix_from_csr(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                               const sps_index *col, const void *val, sps_scalar t, sps_matrix *A)
{
    return from_csr_entries(ctx, "sps_matrix_from_csr", n, m, rowptr, col, val, sps_entry_scalar(), t, A);
}

sps_status sps_matrix_from_csr_entries(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                       const sps_index *col, const void *val, sps_entry_desc e, sps_scalar t,
                                       sps_matrix *A)
{
    return from_csr_entries(ctx, "sps_matrix_from_csr_entries", n, m, rowptr, col, val, e, t, A);
}

/* Host CSR copy of any matrix. */
sps_status sps_matrix_to_host(sps_matrix A, sps_csr_host *h)
{
    memset(h, 0, sizeof *h);
    sps_status st = A->ops->to_csr(A, h);
    if (st != SPS_OK) sps_csr_host_free(h);
    return st;
}

/* A conversion's failure to allocate says which format asked: the allocator's message names
 * the bytes only (a forced padded or DIA conversion is where it happens) */
static sps_status convert_failed(sps_context ctx, const sps_format_ops *ops, sps_status st)
{
    if (st != SPS_ERR_ALLOC || strstr(ctx->errmsg, ops->name)) return st;
    char was[sizeof ctx->errmsg];
    snprintf(was, sizeof was, "%s", ctx->errmsg);
    return sps_error(ctx, st, "converting to %s: %s", ops->name, was);
}

sps_status sps_matrix_convert(sps_matrix A, sps_format fmt, sps_options opt, sps_matrix *B)
{
    if (!A || !B) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_convert: NULL output") : SPS_ERR_ARG;
    *B = NULL;
    if (fmt == SPS_FMT_AUTO) {
        SPS_CHECK(sps_matrix_auto_format(A, &fmt, NULL));
        const sps_format_ops *picked = sps_format_lookup(fmt);
        /* options made for another format than the pick do not apply */
        if (opt && picked && (opt->desc != picked->options || opt->n != picked->noptions)) opt = NULL;
    }
    const sps_format_ops *ops;
    sps_options use = NULL, own = NULL;
    SPS_CHECK(format_and_options(A->ctx, fmt, opt, &ops, &use, &own));
    sps_status est = entry_check(A->ctx, ops, A->entry, A->t); /* before the backend build, which skips from_csr_host */
    if (est != SPS_OK) {
        sps_options_destroy(own);
        return est;
    }
    const sps_csr_store *src = A->ops->backend_csr ? A->ops->backend_csr(A) : NULL;
    if (src && ops->from_backend_csr) {
        /* stay in backend memory: the format builds itself with backend kernels (from csr, or
         * bcsr with AoS entries: a 26.8M-block matrix went to bsell in ~3.8 s through the host) */
        sps_matrix M;
        sps_status st = sps_hcalloc(A->ctx, (void **)&M, sizeof *M, "a matrix handle");
        if (st != SPS_OK) {
            sps_options_destroy(own);
            return convert_failed(A->ctx, ops, st);
        }
        *M = *A;
        M->ops = ops;
        M->store = NULL;
        /* as the host path: a conversion starts with the defaults (no reading warning, no
           launch variant of A's format) */
        M->warning[0] = 0;
        memset(&M->lv, 0, sizeof M->lv);
        st = ops->from_backend_csr(M, src, use);
        sps_options_destroy(own);
        if (st != SPS_OK) {
            sps_matrix_destroy(M);
            return convert_failed(A->ctx, ops, st);
        }
        *B = M;
        return SPS_OK;
    }
    sps_options_destroy(own);
    sps_csr_host h;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    sps_status st = sps_matrix_from_csr_host(A->ctx, &h, fmt, opt, A->sym, B);
    sps_csr_host_free(&h);
    return convert_failed(A->ctx, ops, st);
}

sps_status sps_matrix_export_csr(sps_matrix A, sps_index *rowptr, sps_index *col, void *val)
{
    if (!A) return SPS_ERR_ARG;
    if (!rowptr || (A->nnz && (!col || !val))) return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_export_csr: NULL array");
    if (A->ops->export_csr) return A->ops->export_csr(A, rowptr, col, val);
    sps_csr_host h;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    memcpy(rowptr, h.rowptr, ((size_t)h.n + 1) * sizeof *rowptr);
    if (h.nnz) {
        memcpy(col, h.col, (size_t)h.nnz * sizeof *col);
        memcpy(val, h.val, (size_t)h.nnz * (size_t)sps_entry_values(A->entry) * sps_scalar_size(h.t));
    }
    sps_csr_host_free(&h);
    return SPS_OK;
}

const char *sps_matrix_warning(sps_matrix A) { return A ? A->warning : ""; }

sps_status sps_matrix_info(sps_matrix A, sps_matrix_info_t *info)
{
    if (!A || !info) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_info: NULL info") : SPS_ERR_ARG;
    memset(info, 0, sizeof *info);
    info->rows = A->n;
    info->cols = A->m;
    info->nnz = A->nnz;
    info->scalar = A->t;
    info->entry = A->entry;
    info->format = A->ops->id;
    info->format_name = A->ops->name;
    info->symmetry = A->sym;
    info->bytes = A->ops->footprint(A, &info->stored_entries);
    info->fill_percent = A->nnz ? 100.0 * (double)(info->stored_entries - A->nnz) / (double)A->nnz : 0.0;
    info->backend = A->ctx->backend;
    info->index_bits = A->ops->index_bits ? A->ops->index_bits(A) : 32;
    info->value_dict = A->ops->value_dict ? A->ops->value_dict(A) : 0;
    return SPS_OK;
}

/* A compound format's diagonal entries, extracted on the backend (diag_blocks: the scalar
 * expansion of each block-row's diagonal entry), then only those n d^2 scalars brought to
 * the host: a Jacobi setup reads a ninth of a 3x3-block matrix (with about 15 entries a
 * row, 1/15 of it) instead of converting the whole matrix to host CSR (5.5M unknowns of
 * 3x3 blocks on an H100: 2.3 s through the host copy). */
static sps_status diagonal_from_blocks(sps_matrix A, void *d)
{
    const size_t ss = sps_scalar_size(A->t);
    const sps_index nd = A->n < A->m ? A->n : A->m;
    const int dim = sps_entry_dim(A->entry);
    const size_t per = (size_t)dim * dim, bytes = (size_t)A->n * per * ss;
    void *dev = NULL, *host = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(A->ctx, &dev, bytes ? bytes : 1), done);
    SPS_CHECK_GOTO(st, A->ops->diag_blocks(A, dev), done);
    SPS_CHECK_GOTO(st, sps_ddownload(A->ctx, &host, dev, bytes, "the diagonal blocks"), done);
    for (sps_index i = 0; i < nd; i++)
        for (int r = 0; r < dim; r++)
            memcpy((char *)d + ((size_t)i * dim + r) * ss, (const char *)host + ((size_t)i * per + (size_t)r * (dim + 1)) * ss,
                   ss);
done:
    sps_dfree(A->ctx, dev);
    free(host);
    return st;
}

sps_status sps_matrix_diagonal(sps_matrix A, void *d)
{
    if (!A) return SPS_ERR_ARG;
    if (!d) return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_diagonal: NULL output");
    if (A->ops->diag_blocks) return diagonal_from_blocks(A, d);
    sps_csr_host h;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    /* the diagonal of the scalar expansion (sps_entry_elem: a block's own diagonal,
     * a quaternion's w d times) */
    const size_t ss = sps_scalar_size(A->t);
    const sps_index nd = A->n < A->m ? A->n : A->m;
    const int dim = sps_entry_dim(A->entry);
    memset(d, 0, (size_t)nd * dim * ss);
    for (sps_index i = 0; i < nd; i++)
        for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++)
            if (h.col[k] == i)
                for (int r = 0; r < dim; r++)
                    sps_entry_elem(A->entry, A->t, h.val, k, r, r, (char *)d + ((size_t)i * dim + r) * ss);
    sps_csr_host_free(&h);
    return SPS_OK;
}
