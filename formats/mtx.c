/* Matrix Market files <-> matrices and vectors: the glue between the reader and
 * writer of io/mmio.c (host arrays, file:line errors) and the library's objects. */
#include "formats/format.h"
#include "io/mmio.h"

#include <stdlib.h>
#include <string.h>

static int is_single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }

/* ---------------------------------------------------------------- matrices */
static sps_symmetry mm_sym(sps_mm_symmetry s)
{
    switch (s) {
    case SPS_MM_SYMMETRIC: return SPS_SYM_SYMMETRIC;
    case SPS_MM_SKEW: return SPS_SYM_SKEW;
    case SPS_MM_HERMITIAN: return SPS_SYM_HERMITIAN;
    default: return SPS_SYM_GENERAL;
    }
}

/* A parsed file becomes canonical CSR; a complex file promotes t to complex. */
static sps_status from_mm(sps_context ctx, sps_mm_data *d, sps_scalar t, sps_matrix *A)
{
    const int cplx = d->field == SPS_MM_COMPLEX;
    if (cplx && !sps_scalar_is_complex(t)) t = is_single(t) ? SPS_C32 : SPS_C64;
    sps_csr_host h;
    SPS_CHECK(sps_csr_host_from_triplets(ctx, d->rows, d->cols, d->nnz, d->row, d->col, d->val, cplx, t, &h));
    sps_status st = sps_matrix_from_csr_host(ctx, &h, SPS_FMT_CSR, NULL, mm_sym(d->symmetry), A);
    sps_csr_host_free(&h);
    return st;
}

/* The file and buffer readers differ only in their source: from a file `path`
 * names it, from a buffer (from_buf) it is the buffer's name.  fn names the API
 * call in errors. */
static sps_status read_matrix(sps_context ctx, const char *fn, int from_buf, const char *path, const char *buf,
                              size_t len, sps_scalar t, const sps_read_options *opt, sps_matrix *A)
{
    if (!ctx || !A) return SPS_ERR_ARG;
    *A = NULL;
    if (from_buf ? !buf : !path) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL %s", fn, from_buf ? "buffer" : "path");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "%s: bad scalar type", fn);
    sps_mm_options o = {.allow_nonfinite = opt ? opt->allow_nonfinite : 0};
    sps_mm_data d;
    memset(&d, 0, sizeof d);
    char err[1024];
    sps_status st = from_buf ? sps_mm_read_buffer(buf, len, path ? path : "<buffer>", &o, &d, err, sizeof err)
                             : sps_mm_read_file(path, &o, &d, err, sizeof err);
    if (st != SPS_OK) return sps_error(ctx, st, "%s", err);
    st = from_mm(ctx, &d, t, A);
    sps_mm_data_free(&d);
    return st;
}

sps_status sps_matrix_read_mtx_opts(sps_context ctx, const char *path, sps_scalar t, const sps_read_options *opt,
                                    sps_matrix *A)
{
    return read_matrix(ctx, "sps_matrix_read_mtx", 0, path, NULL, 0, t, opt, A);
}

sps_status sps_matrix_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_matrix *A)
{
    return sps_matrix_read_mtx_opts(ctx, path, t, NULL, A);
}

sps_status sps_matrix_read_mtx_buffer(sps_context ctx, const char *buf, size_t len, const char *name, sps_scalar t,
                                      const sps_read_options *opt, sps_matrix *A)
{
    return read_matrix(ctx, "sps_matrix_read_mtx_buffer", 1, name, buf, len, t, opt, A);
}

sps_status sps_matrix_write_mtx(sps_matrix A, const char *path)
{
    if (!A) return SPS_ERR_ARG;
    if (!path) return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_write_mtx: NULL path");
    if (A->entry.kind != SPS_ENTRY_SCALAR)
        return sps_error(A->ctx, SPS_ERR_UNSUPPORTED, "sps_matrix_write_mtx: %s entries have no Matrix Market form yet",
                         sps_entry_name(A->entry));
    sps_csr_host h;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    sps_status st;
    sps_index *row = NULL;
    double *dv = NULL;
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&row, (size_t)h.nnz * sizeof *row, "row indices"), done);
    for (sps_index i = 0; i < h.n; i++)
        for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) row[k] = i;
    const int cplx = sps_scalar_is_complex(A->t);
    const size_t nv = (size_t)h.nnz * (cplx ? 2 : 1);
    SPS_CHECK_GOTO(st, sps_hmalloc(A->ctx, (void **)&dv, nv * sizeof *dv, "value copy"), done);
    for (size_t i = 0; i < nv; i++) dv[i] = is_single(A->t) ? (double)((float *)h.val)[i] : ((double *)h.val)[i];
    char err[1024];
    st = sps_mm_write_coo(path, h.n, h.m, h.nnz, row, h.col, dv, cplx, is_single(A->t), "written by libspsolve", err,
                          sizeof err);
    if (st != SPS_OK) sps_error(A->ctx, st, "%s", err);
done:
    free(row);
    free(dv);
    sps_csr_host_free(&h);
    return st;
}

/* ---------------------------------------------------------------- vectors */

sps_status sps_vector_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_vector *out)
{
    if (!ctx || !path || !out) return SPS_ERR_ARG;
    *out = NULL;
    sps_mm_data d;
    memset(&d, 0, sizeof d);
    sps_mm_options o = {0};
    char err[1024];
    sps_status st = sps_mm_read_file(path, &o, &d, err, sizeof err);
    if (st != SPS_OK) return sps_error(ctx, st, "%s", err);
    if (d.rows != 1 && d.cols != 1) {
        st = sps_error(ctx, SPS_ERR_ARG, "%s: a vector must be n x 1 or 1 x n, the file is %d x %d", path,
                       (int)d.rows, (int)d.cols);
        goto done;
    }
    const int cplx = d.field == SPS_MM_COMPLEX;
    if (cplx && !sps_scalar_is_complex(t)) t = is_single(t) ? SPS_C32 : SPS_C64;
    sps_index n = d.rows == 1 ? d.cols : d.rows;
    const size_t ss = sps_scalar_size(t);
    unsigned char *h;
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&h, (size_t)n * ss, "vector values"), done);
    for (int64_t k = 0; k < d.nnz; k++) {
        sps_index i = d.rows == 1 ? d.col[k] : d.row[k];
        sps_cplx c = sps_cplx_make(cplx ? d.val[2 * k] : d.val[k], cplx ? d.val[2 * k + 1] : 0.0);
        sps_cplx prev = sps_cplx_load(t, h + (size_t)i * ss, c);
        if (d.is_array == 0) { c.re += prev.re; c.im += prev.im; } /* coordinate duplicates are summed */
        sps_cplx_store(t, c, h + (size_t)i * ss);
    }
    st = sps_vector_from_host(ctx, n, t, h, out);
    free(h);
done:
    sps_mm_data_free(&d);
    return st;
}

sps_status sps_vector_write_mtx(sps_vector v, const char *path)
{
    if (!v || !path) return v ? sps_error(v->ctx, SPS_ERR_ARG, "sps_vector_write_mtx: NULL path") : SPS_ERR_ARG;
    sps_context ctx = v->ctx;
    const int cplx = sps_scalar_is_complex(v->t);
    const size_t k = (size_t)v->n * (cplx ? 2 : 1);
    void *h;
    double *dv;
    SPS_CHECK(sps_hmalloc(ctx, &h, (size_t)v->n * sps_scalar_size(v->t), "vector copy"));
    sps_status st = sps_hmalloc(ctx, (void **)&dv, k * sizeof(double), "vector copy");
    if (st != SPS_OK) { free(h); return st; }
    st = sps_vector_get(v, h);
    if (st == SPS_OK) {
        for (size_t i = 0; i < k; i++) dv[i] = is_single(v->t) ? (double)((float *)h)[i] : ((double *)h)[i];
        char err[1024];
        st = sps_mm_write_vector(path, v->n, dv, cplx, is_single(v->t), "written by libspsolve", err, sizeof err);
        if (st != SPS_OK) sps_error(ctx, st, "%s", err);
    }
    free(h);
    free(dv);
    return st;
}
