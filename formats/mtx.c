/* Matrix Market files <-> matrices and vectors: the glue between the reader and
 * writer of io/mmio.c (host arrays, file:line errors) and the library's objects. */
#include "formats/format.h"
#include "io/atomic_out.h"
#include "io/mmio.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A parsed file becomes canonical CSR: a complex file promotes t to complex; a
 * quaternion file gives quaternion entries (bcsr; t must be real); b > 1 groups a
 * scalar file into b x b blocks (bcsr; the reader has refused a quaternion file and
 * sizes b does not divide, at the size line).  fn names the API call, name the file. */
static sps_status from_mm(sps_context ctx, const char *fn, const char *name, sps_mm_data *d, sps_scalar t, int b,
                          sps_matrix *A)
{
    const int quat = d->field == SPS_MM_QUATERNION, cplx = d->field == SPS_MM_COMPLEX;
    if (quat && sps_scalar_is_complex(t))
        return sps_error(ctx, SPS_ERR_ARG, "%s: %s holds quaternions, whose precision is real (f32 or f64: q32, q64), "
                         "not %s", fn, name, sps_scalar_name(t));
    if (cplx && !sps_scalar_is_complex(t)) t = is_single(t) ? SPS_C32 : SPS_C64;
    sps_csr_host h, g;
    sps_status st = sps_csr_host_from_triplets_entries(ctx, d->rows, d->cols, d->nnz, d->row, d->col, d->val, cplx,
                                                       quat ? sps_entry_quaternion() : sps_entry_scalar(), t, 1, &h);
    if (st == SPS_ERR_NUMERIC) { /* an entry past the precision's range, or duplicates summing past it: the file named */
        char why[768];
        snprintf(why, sizeof why, "%s", sps_context_error(ctx));
        return sps_error(ctx, st, "%s: %s", name, why);
    }
    SPS_CHECK(st);
    if (b > 1) {
        st = sps_csr_host_group_blocks(ctx, &h, b, name, &g);
        sps_csr_host_free(&h);
        SPS_CHECK(st);
        h = g;
    }
    st = sps_matrix_from_csr_host(ctx, &h, h.entry.kind == SPS_ENTRY_SCALAR ? SPS_FMT_CSR : SPS_FMT_BCSR, NULL,
                                  mm_sym(d->symmetry), A);
    if (st == SPS_OK && d->warning[0]) snprintf((*A)->warning, sizeof (*A)->warning, "%s", d->warning);
    sps_csr_host_free(&h);
    return st;
}

int64_t sps_read_memory_limit(int64_t max_memory)
{
    if (max_memory != 0) return max_memory > 0 ? max_memory : 0;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (int64_t)pages / 2 * (int64_t)page;
}

/* The file and buffer readers differ only in their source: from a file `path`
 * names it, from a buffer (from_buf) it is the buffer's name.  fn names the API
 * call in errors; b > 1 reads a scalar file as b x b blocks. */
static sps_status read_matrix(sps_context ctx, const char *fn, int from_buf, const char *path, const char *buf,
                              size_t len, sps_scalar t, int b, const sps_read_options *opt, sps_matrix *A)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!A) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL output matrix", fn);
    *A = NULL;
    if (from_buf ? !buf : !path) return sps_error(ctx, SPS_ERR_ARG, "%s: NULL %s", fn, from_buf ? "buffer" : "path");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "%s: bad scalar type", fn);
    if (b != 1 && !sps_entry_valid(sps_entry_block(b)))
        return sps_error(ctx, SPS_ERR_ARG, "%s: block size %d (1 for scalar entries, else 2..8)", fn, b);
    sps_mm_options o = {.allow_nonfinite = opt ? opt->allow_nonfinite : 0,
                        .allow_quaternion = 1,
                        .require_square = opt ? opt->require_square : 0,
                        .block = b,
                        .max_entries = INT32_MAX, /* CSR row offsets are 32-bit */
                        .max_bytes = sps_read_memory_limit(opt ? opt->max_memory : 0)};
    sps_mm_data d;
    memset(&d, 0, sizeof d);
    char err[1024];
    const char *name = path ? path : "<buffer>";
    sps_status st = from_buf ? sps_mm_read_buffer(buf, len, name, &o, &d, err, sizeof err)
                             : sps_mm_read_file(path, &o, &d, err, sizeof err);
    if (st != SPS_OK) return sps_error(ctx, st, "%s", err);
    st = from_mm(ctx, fn, name, &d, t, b, A);
    sps_mm_data_free(&d);
    return st;
}

sps_status sps_matrix_read_mtx_opts(sps_context ctx, const char *path, sps_scalar t, const sps_read_options *opt,
                                    sps_matrix *A)
{
    return read_matrix(ctx, "sps_matrix_read_mtx", 0, path, NULL, 0, t, 1, opt, A);
}

sps_status sps_matrix_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_matrix *A)
{
    return sps_matrix_read_mtx_opts(ctx, path, t, NULL, A);
}

sps_status sps_matrix_read_mtx_blocks(sps_context ctx, const char *path, sps_scalar t, int b,
                                      const sps_read_options *opt, sps_matrix *A)
{
    return read_matrix(ctx, "sps_matrix_read_mtx_blocks", 0, path, NULL, 0, t, b, opt, A);
}

sps_status sps_matrix_read_mtx_buffer(sps_context ctx, const char *buf, size_t len, const char *name, sps_scalar t,
                                      const sps_read_options *opt, sps_matrix *A)
{
    return read_matrix(ctx, "sps_matrix_read_mtx_buffer", 1, name, buf, len, t, 1, opt, A);
}

/* Write host CSR h (scalar or quaternion entries) as 'coordinate real|complex|quaternion general'. */
static sps_status write_host(sps_context ctx, const sps_csr_host *h, const char *path)
{
    const int quat = h->entry.kind == SPS_ENTRY_QUATERNION, cplx = sps_scalar_is_complex(h->t);
    sps_status st;
    sps_index *row = NULL;
    double *dv = NULL;
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&row, (size_t)h->nnz * sizeof *row, "row indices"), done);
    for (sps_index i = 0; i < h->n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) row[k] = i;
    const size_t nv = (size_t)h->nnz * (quat ? 4 : cplx ? 2 : 1);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&dv, nv * sizeof *dv, "value copy"), done);
    for (size_t i = 0; i < nv; i++) dv[i] = is_single(h->t) ? (double)((float *)h->val)[i] : ((double *)h->val)[i];
    char err[1024];
    st = sps_mm_write_coo(path, h->n, h->m, h->nnz, row, h->col, dv,
                          quat ? SPS_MM_KIND_QUATERNION : cplx ? SPS_MM_KIND_COMPLEX : SPS_MM_KIND_REAL,
                          is_single(h->t), "written by libspsolve", err, sizeof err);
    if (st != SPS_OK) sps_error(ctx, st, "%s", err);
done:
    free(row);
    free(dv);
    return st;
}

sps_status sps_matrix_write_mtx(sps_matrix A, const char *path)
{
    if (!A) return SPS_ERR_ARG;
    if (!path) return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_write_mtx: NULL path");
    if (A->entry.kind == SPS_ENTRY_BLOCK)
        return sps_error(A->ctx, SPS_ERR_UNSUPPORTED,
                         "sps_matrix_write_mtx: %s entries have no Matrix Market form (sps_matrix_write_mtx_expanded "
                         "writes the scalar expansion)", sps_entry_name(A->entry));
    sps_csr_host h;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    const sps_status st = write_host(A->ctx, &h, path);
    sps_csr_host_free(&h);
    return st;
}

sps_status sps_matrix_write_mtx_expanded(sps_matrix A, const char *path)
{
    if (!A) return SPS_ERR_ARG;
    if (!path) return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_write_mtx_expanded: NULL path");
    sps_csr_host h, x;
    SPS_CHECK(sps_matrix_to_host(A, &h));
    sps_status st = sps_csr_host_expand(A->ctx, &h, &x);
    sps_csr_host_free(&h);
    SPS_CHECK(st);
    st = write_host(A->ctx, &x, path);
    sps_csr_host_free(&x);
    return st;
}

/* ---------------------------------------------------------------- vectors */

sps_status sps_vector_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_vector *out)
{
    return sps_vector_read_mtx_n(ctx, path, t, 0, out);
}

sps_status sps_vector_read_mtx_n(sps_context ctx, const char *path, sps_scalar t, sps_index n_expect, sps_vector *out)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!out) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_read_mtx: NULL output vector");
    *out = NULL;
    if (!path) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_read_mtx: NULL path");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_read_mtx: bad scalar type");
    if (n_expect < 0) return sps_error(ctx, SPS_ERR_ARG, "sps_vector_read_mtx_n: length %d", (int)n_expect);
    sps_mm_data d;
    memset(&d, 0, sizeof d);
    /* the length checked at the size line, before anything is allocated; the memory limit of
       the matrix reader */
    sps_mm_options o = {.allow_quaternion = 1, .max_bytes = sps_read_memory_limit(0), .expect_len = n_expect, .vector = 1};
    char err[1024];
    sps_status st = sps_mm_read_file(path, &o, &d, err, sizeof err);
    if (st != SPS_OK) return sps_error(ctx, st, "%s", err);
    if (d.rows != 1 && d.cols != 1) {
        st = sps_error(ctx, SPS_ERR_ARG, "%s: a vector must be n x 1 or 1 x n, the file is %d x %d", path,
                       (int)d.rows, (int)d.cols);
        goto done;
    }
    /* a quaternion entry is 4 real scalars (w, x, y, z) of the vector; a complex one 1 complex scalar */
    const int quat = d.field == SPS_MM_QUATERNION, cplx = d.field == SPS_MM_COMPLEX;
    const int per = quat ? 4 : 1;
    if (quat && sps_scalar_is_complex(t)) {
        st = sps_error(ctx, SPS_ERR_ARG, "%s holds quaternions, read as 4 reals each; the precision must be real (f32 "
                       "or f64), not %s", path, sps_scalar_name(t));
        goto done;
    }
    if (cplx && !sps_scalar_is_complex(t)) t = is_single(t) ? SPS_C32 : SPS_C64;
    const int64_t n = (int64_t)(d.rows == 1 ? d.cols : d.rows) * per;
    if (n > INT32_MAX) {
        st = sps_error(ctx, SPS_ERR_ARG, "%s: %lld scalars exceed the 32-bit index range", path, (long long)n);
        goto done;
    }
    const size_t ss = sps_scalar_size(t);
    unsigned char *h;
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&h, (size_t)n * ss, "vector values"), done);
    for (int64_t k = 0; k < d.nnz; k++) {
        const int64_t i = (int64_t)(d.rows == 1 ? d.col[k] : d.row[k]) * per;
        for (int p = 0; p < per; p++) {
            sps_cplx c = sps_cplx_make(cplx ? d.val[2 * k] : d.val[k * per + p], cplx ? d.val[2 * k + 1] : 0.0);
            sps_cplx prev = sps_cplx_load(t, h + (size_t)(i + p) * ss, c);
            if (d.is_array == 0) { c.re += prev.re; c.im += prev.im; } /* coordinate duplicates are summed */
            /* the file's values are finite (the reader refuses others): what is not came from
               duplicates summed past the range, or from a value past f32's */
            const int bad_re = is_single(t) ? isinf((float)c.re) : !isfinite(c.re),
                      bad_im = is_single(t) ? isinf((float)c.im) : !isfinite(c.im);
            if (bad_re || bad_im) {
                free(h);
                st = sps_error(ctx, SPS_ERR_NUMERIC, "%s: entry %lld%s = %g%s is past the range of %s%s", path,
                               (long long)(d.rows == 1 ? d.col[k] : d.row[k]) + 1,
                               d.is_array ? "" : " (its duplicates summed)", bad_re ? c.re : c.im, bad_re ? "" : "i",
                               sps_scalar_name(t), is_single(t) ? " (read it as f64)" : "");
                goto done;
            }
            sps_cplx_store(t, c, h + (size_t)(i + p) * ss);
        }
    }
    st = sps_vector_from_host(ctx, (sps_index)n, t, h, out);
    free(h);
    if (st == SPS_OK) snprintf((*out)->warning, sizeof (*out)->warning, "%s", d.warning);
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

sps_status sps_history_write_csv(sps_context ctx, const char *path, const double *history, int len)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!path || len < 0 || (len > 0 && !history))
        return sps_error(ctx, SPS_ERR_ARG, "sps_history_write_csv: %s", !path ? "NULL path" : "no history");
    char err[1024] = "";
    sps_out_file o;
    sps_status st = sps_out_open(&o, path, 0666, err, sizeof err);
    if (st != SPS_OK) return sps_error(ctx, st, "%s", err);
    int ok = fprintf(o.f, "iteration,residual\n") > 0;
    for (int k = 0; k < len && ok; k++) ok = fprintf(o.f, "%d,%.17g\n", k, history[k]) > 0;
    if (!ok) snprintf(err, sizeof err, "cannot write '%s': %s", path, strerror(errno));
    st = sps_out_close(&o, ok, err, sizeof err);
    return st == SPS_OK ? SPS_OK : sps_error(ctx, st, "%s", err);
}
