/* spsolve CLI: host-side residual and error checks in long double. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sps_status cli_csr_export(sps_matrix A, cli_csr *h)
{
    memset(h, 0, sizeof *h);
    sps_matrix_info_t info;
    sps_status st = sps_matrix_info(A, &info);
    if (st != SPS_OK) return st;
    h->rows = info.rows;
    h->cols = info.cols;
    h->nnz = info.nnz;
    h->t = info.scalar;
    h->rowptr = malloc(((size_t)info.rows + 1) * sizeof *h->rowptr);
    h->col = malloc((size_t)(info.nnz ? info.nnz : 1) * sizeof *h->col);
    h->val = malloc((size_t)(info.nnz ? info.nnz : 1) * sps_scalar_size(info.scalar));
    if (!h->rowptr || !h->col || !h->val) {
        cli_csr_free(h);
        return SPS_ERR_ALLOC;
    }
    st = sps_matrix_export_csr(A, h->rowptr, h->col, h->val);
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

void cli_csr_times_ones(const cli_csr *A, void *b)
{
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

void cli_residual(const cli_csr *A, const void *x, const void *b, double *rnorm, double *bnorm, double *scale)
{
    long double r2 = 0, b2 = 0, s2 = 0;
    for (sps_index i = 0; i < A->rows; i++) {
        long double sr, si;
        load(A->t, b, (size_t)i, &sr, &si);
        const long double babs = sqrtl(sr * sr + si * si);
        long double axabs = 0;
        b2 += babs * babs;
        for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            long double ar, ai, xr, xi;
            load(A->t, A->val, (size_t)k, &ar, &ai);
            load(A->t, x, (size_t)A->col[k], &xr, &xi);
            sr -= ar * xr - ai * xi; /* r_i = b_i - sum_j a_ij x_j (complex product) */
            si -= ar * xi + ai * xr;
            axabs += sqrtl(ar * ar + ai * ai) * sqrtl(xr * xr + xi * xi);
        }
        r2 += sr * sr + si * si;
        s2 += (babs + axabs) * (babs + axabs);
    }
    *rnorm = (double)sqrtl(r2);
    *bnorm = (double)sqrtl(b2);
    *scale = (double)sqrtl(s2);
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
