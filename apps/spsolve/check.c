/* spsolve CLI: host-side residual and error checks in long double. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forward: entry k of a host array of type t as long double re/im. */
static void load(sps_scalar t, const void *v, size_t k, long double *re, long double *im);
static void store(sps_scalar t, void *v, size_t k, long double re, long double im);

/* h (exported entries of type e, nv scalars each) replaced by its scalar expansion:
 * a b x b block by its elements, a quaternion a + bi + cj + dk by its left
 * multiplication [[a,-b,-c,-d],[b,a,-d,c],[c,d,a,-b],[d,-c,b,a]], written out here
 * rather than taken from the library, so that the check stays independent of it. */
static sps_status expand(cli_csr *h, sps_entry_desc e)
{
    const int d = sps_entry_dim(e), nv = sps_entry_values(e);
    const int64_t nnz = h->nnz * d * d;
    if ((int64_t)h->rows * d > INT32_MAX || nnz > INT32_MAX) {
        fprintf(stderr, "spsolve: the residual check's scalar expansion (%lld rows, %lld entries) exceeds 32-bit "
                        "indices\n", (long long)h->rows * d, (long long)nnz);
        return SPS_ERR_ARG;
    }
    cli_csr x = {.rows = h->rows * d, .cols = h->cols * d, .nnz = nnz, .t = h->t};
    x.rowptr = malloc(((size_t)x.rows + 1) * sizeof *x.rowptr);
    x.col = malloc((size_t)(nnz ? nnz : 1) * sizeof *x.col);
    x.val = malloc((size_t)(nnz ? nnz : 1) * sps_scalar_size(h->t));
    if (!x.rowptr || !x.col || !x.val) {
        cli_csr_free(&x);
        return SPS_ERR_ALLOC;
    }
    int64_t w = 0;
    x.rowptr[0] = 0;
    for (sps_index i = 0; i < h->rows; i++)
        for (int r = 0; r < d; r++) {
            for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
                long double q[4] = {0, 0, 0, 0}, im = 0;
                if (e.kind == SPS_ENTRY_QUATERNION)
                    for (int p = 0; p < 4; p++) load(h->t, h->val, (size_t)k * 4 + p, &q[p], &im);
                const long double L[4][4] = {{q[0], -q[1], -q[2], -q[3]},
                                             {q[1], q[0], -q[3], q[2]},
                                             {q[2], q[3], q[0], -q[1]},
                                             {q[3], -q[2], q[1], q[0]}};
                for (int c = 0; c < d; c++, w++) {
                    long double re = 0;
                    im = 0;
                    if (e.kind == SPS_ENTRY_QUATERNION) re = L[r][c];
                    else load(h->t, h->val, (size_t)k * nv + (size_t)r * d + c, &re, &im);
                    x.col[w] = h->col[k] * d + c;
                    store(h->t, x.val, (size_t)w, re, im);
                }
            }
            x.rowptr[(int64_t)i * d + r + 1] = (sps_index)w;
        }
    cli_csr_free(h);
    *h = x;
    return SPS_OK;
}

/* Touch n bytes of fresh memory from all threads: the kernel's page faults (zeroing
 * each page) were most of the export's time, and the copy into the pages, one
 * thread in the library, then runs at memory speed. */
static void first_touch(void *p, size_t n)
{
    const size_t chunk = (size_t)1 << 20;
    const int64_t nc = (int64_t)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (nc > 16)
    for (int64_t c = 0; c < nc; c++) {
        const size_t a = (size_t)c * chunk;
        memset((char *)p + a, 0, n - a < chunk ? n - a : chunk);
    }
}

sps_status cli_csr_export(sps_matrix A, cli_csr *h)
{
    memset(h, 0, sizeof *h);
    sps_matrix_info_t info;
    sps_status st = sps_matrix_info(A, &info);
    if (st != SPS_OK) return st;
    const size_t nv = (size_t)sps_entry_values(info.entry);
    h->rows = info.rows;
    h->cols = info.cols;
    h->nnz = info.nnz;
    h->t = info.scalar;
    h->rowptr = malloc(((size_t)info.rows + 1) * sizeof *h->rowptr);
    h->col = malloc((size_t)(info.nnz ? info.nnz : 1) * sizeof *h->col);
    h->val = malloc((size_t)(info.nnz ? info.nnz : 1) * nv * sps_scalar_size(info.scalar));
    if (!h->rowptr || !h->col || !h->val) {
        cli_csr_free(h);
        return SPS_ERR_ALLOC;
    }
    first_touch(h->col, (size_t)info.nnz * sizeof *h->col);
    first_touch(h->val, (size_t)info.nnz * nv * sps_scalar_size(info.scalar));
    st = sps_matrix_export_csr(A, h->rowptr, h->col, h->val);
    if (st == SPS_OK && info.entry.kind != SPS_ENTRY_SCALAR) st = expand(h, info.entry);
    if (st != SPS_OK) {
        cli_csr_free(h);
        return st;
    }
    for (sps_index i = 0; i < h->rows; i++)
        if (h->rowptr[i + 1] - h->rowptr[i] > h->max_row_nnz) h->max_row_nnz = h->rowptr[i + 1] - h->rowptr[i];
    return SPS_OK;
}

void cli_csr_free(cli_csr *h)
{
    free(h->rowptr);
    free(h->col);
    free(h->val);
    memset(h, 0, sizeof *h);
}

/* Entry k of a host array of type t as long double re/im. */
static void load(sps_scalar t, const void *v, size_t k, long double *re, long double *im)
{
    switch (t) {
    case SPS_F32: *re = ((const float *)v)[k]; *im = 0; break;
    case SPS_F64: *re = ((const double *)v)[k]; *im = 0; break;
    case SPS_C32: *re = ((const float *)v)[2 * k]; *im = ((const float *)v)[2 * k + 1]; break;
    default: *re = ((const double *)v)[2 * k]; *im = ((const double *)v)[2 * k + 1]; break;
    }
}

static void store(sps_scalar t, void *v, size_t k, long double re, long double im)
{
    switch (t) {
    case SPS_F32: ((float *)v)[k] = (float)re; break;
    case SPS_F64: ((double *)v)[k] = (double)re; break;
    case SPS_C32: ((float *)v)[2 * k] = (float)re; ((float *)v)[2 * k + 1] = (float)im; break;
    default: ((double *)v)[2 * k] = (double)re; ((double *)v)[2 * k + 1] = (double)im; break;
    }
}

/* Its parallel regions fork only on large matrices: an idle team spins for a while
 * after a region, and a small solve right after ran 30 % slower beside it. */
/* The check's rows go in fixed chunks: each chunk's sums in row order, the chunks'
 * sums in chunk order, so the result is the same on any number of threads (and
 * without OpenMP).  Sequential, the long-double residual of Poisson 128^3 took
 * 0.76 s after a 0.045 s GPU solve (H100). */
enum { CHECK_CHUNK = 4096 };

void cli_csr_times_ones(const cli_csr *A, void *b)
{
#pragma omp parallel for schedule(static) if (A->rows > 16 * CHECK_CHUNK)
    for (sps_index i = 0; i < A->rows; i++) {
        long double sr = 0, si = 0;
        for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            long double ar, ai;
            load(A->t, A->val, (size_t)k, &ar, &ai);
            sr += ar;
            si += ai;
        }
        store(A->t, b, (size_t)i, sr, si);
    }
}

/* The larger of m and v, NaN where either is: a NaN in b or r makes its max norm NaN, as it
 * makes its 2-norm (the tolerance from max|b| is then none, not rtol times the other entries). */
static long double max_nan(long double m, long double v) { return v > m || v != v ? v : m; }

/* Rows i0..i1 of b - A x: s[0], s[1], s[2] = the sums of |r_i|^2, |b_i|^2 and (|b_i| + (|A||x|)_i)^2,
 * or with inf their maxima of |r_i|, |b_i| and |b_i| + (|A||x|)_i. */
static void residual_rows(const cli_csr *A, const void *x, const void *b, int inf, sps_index i0, sps_index i1,
                          long double *s)
{
    const int cplx = sps_scalar_is_complex(A->t);
    long double r2 = 0, b2 = 0, s2 = 0;
    for (sps_index i = i0; i < i1; i++) {
        long double sr, si;
        load(A->t, b, (size_t)i, &sr, &si);
        const long double babs = cplx ? sqrtl(sr * sr + si * si) : fabsl(sr);
        long double axabs = 0;
        if (!inf) b2 += babs * babs;
        for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            long double ar, ai, xr, xi;
            load(A->t, A->val, (size_t)k, &ar, &ai);
            load(A->t, x, (size_t)A->col[k], &xr, &xi);
            sr -= ar * xr - ai * xi; /* r_i = b_i - sum_j a_ij x_j (complex product) */
            si -= ar * xi + ai * xr;
            /* |a||x|: one square root a complex entry, none a real one */
            axabs += cplx ? sqrtl((ar * ar + ai * ai) * (xr * xr + xi * xi)) : fabsl(ar * xr);
        }
        if (inf) {
            r2 = max_nan(r2, sqrtl(sr * sr + si * si));
            b2 = max_nan(b2, babs);
            s2 = max_nan(s2, babs + axabs);
            continue;
        }
        r2 += sr * sr + si * si;
        s2 += (babs + axabs) * (babs + axabs);
    }
    s[0] = r2;
    s[1] = b2;
    s[2] = s2;
}

void cli_residual(const cli_csr *A, const void *x, const void *b, int inf, double *rnorm, double *bnorm,
                  double *scale)
{
    const sps_index n = A->rows;
    const int64_t nch = ((int64_t)n + CHECK_CHUNK - 1) / CHECK_CHUNK;
    long double tot[3] = {0, 0, 0};
    long double(*part)[3] = malloc((size_t)(nch ? nch : 1) * sizeof *part);
    if (part) {
#pragma omp parallel for schedule(dynamic, 4) if (nch > 16)
        for (int64_t c = 0; c < nch; c++) {
            const sps_index i0 = (sps_index)(c * CHECK_CHUNK), i1 = i0 + CHECK_CHUNK < n ? i0 + CHECK_CHUNK : n;
            residual_rows(A, x, b, inf, i0, i1, part[c]);
        }
    }
    for (int64_t c = 0; c < nch; c++) { /* chunk order; without the array, the same sums one by one */
        long double one[3];
        const sps_index i0 = (sps_index)(c * CHECK_CHUNK), i1 = i0 + CHECK_CHUNK < n ? i0 + CHECK_CHUNK : n;
        if (!part) residual_rows(A, x, b, inf, i0, i1, one);
        for (int q = 0; q < 3; q++) {
            const long double v = part ? part[c][q] : one[q];
            tot[q] = !inf ? tot[q] + v : max_nan(tot[q], v);
        }
    }
    free(part);
    *rnorm = (double)(inf ? tot[0] : sqrtl(tot[0]));
    *bnorm = (double)(inf ? tot[1] : sqrtl(tot[1]));
    *scale = (double)(inf ? tot[2] : sqrtl(tot[2]));
}

int cli_csr_is_real(const cli_csr *A)
{
    if (!sps_scalar_is_complex(A->t)) return 1;
    for (int64_t k = 0; k < A->nnz; k++) {
        long double re, im;
        load(A->t, A->val, (size_t)k, &re, &im);
        if (im != 0) return 0;
    }
    return 1;
}

double cli_error_vs_ones(sps_scalar t, sps_index n, const void *x)
{
    long double e2 = 0;
    for (sps_index i = 0; i < n; i++) {
        long double re, im;
        load(t, x, (size_t)i, &re, &im);
        e2 += (re - 1) * (re - 1) + im * im;
    }
    return n > 0 ? (double)sqrtl(e2 / n) : 0.0;
}
