/* ILU(0) and IC(0) (precond/ilu.c, the kernel ilu_apply), CPU backend,
 * f32/f64/c32/c64:
 * - the factors against a dense ILU(0) computed here (Gaussian elimination that
 *   drops every fill-in outside A's pattern), through the apply: M r = U^{-1}
 *   L^{-1} r solved here densely, on random diagonally dominant nonsymmetric
 *   matrices with rows of varied lengths;
 * - sweeps:K with K >= the levels of the factors equals exact (Jacobi sweeps on a
 *   triangular system are exact after as many sweeps as it has levels), and few
 *   sweeps differ from it;
 * - ic0 on a Hermitian matrix: M is Hermitian (x^H M y = (y^H M x)^*), and CG + ic0
 *   solves a 2D Poisson problem in fewer iterations than CG alone;
 * - errors naming the row: a missing diagonal entry, a zero pivot (ilu0), a
 *   negative pivot (ic0), an unsymmetric pattern (ic0); pc-shift nonzero and
 *   positive-definite let them go on (the latter with its warning);
 * - update re-runs only the numeric step.
 * Ends with "N passed, M failed". */
#include "testutil.h"
#include "precond/precond_impl.h" /* the setup counters */

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

/* n x n, row i: the diagonal (|a_ii| = 4 + row length) and up to 6 random other
 * columns; herm: the pattern mirrored and values Hermitian. */
typedef struct {
    int n;
    double complex *d; /* dense, row-major */
    unsigned char *pat;
} dense_t;

static dense_t random_dense(int n, int herm)
{
    dense_t D = {n, tu_xcalloc((size_t)n * n, sizeof(double complex)), tu_xcalloc((size_t)n * n, 1)};
    for (int i = 0; i < n; i++) {
        const int len = (int)(tu_rng_u64(&rng) % 7);
        for (int k = 0; k < len; k++) {
            const int j = (int)(tu_rng_u64(&rng) % (uint64_t)n);
            const double complex v = tu_rng_range(&rng, -1, 1) + I * tu_rng_range(&rng, -1, 1);
            D.pat[i * n + j] = 1;
            D.d[i * n + j] += v;
            if (herm) {
                D.pat[j * n + i] = 1;
                D.d[j * n + i] += conj(v);
            }
        }
    }
    for (int i = 0; i < n; i++) { /* dominant real diagonal: no pivot trouble */
        double s = 0;
        for (int j = 0; j < n; j++) s += j != i ? cabs(D.d[i * n + j]) : 0;
        D.pat[i * n + i] = 1;
        D.d[i * n + i] = 1 + s;
    }
    return D;
}

/* A of D in type t (real types drop the imaginary parts; herm stays so). */
static sps_matrix to_matrix(const dense_t *D, sps_scalar t)
{
    const int n = D->n;
    sps_index *rowptr = tu_xcalloc((size_t)n + 1, sizeof *rowptr), *col = tu_xcalloc((size_t)n * n, sizeof *col);
    void *val = tu_xcalloc((size_t)n * n, sps_scalar_size(t));
    int64_t e = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            if (D->pat[i * n + j]) {
                col[e] = j;
                tu_put(t, val, (size_t)e, creal(D->d[i * n + j]), cimag(D->d[i * n + j]));
                e++;
            }
        rowptr[i + 1] = (sps_index)e;
    }
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_from_csr(ctx, n, n, rowptr, col, val, t, &A));
    free(rowptr);
    free(col);
    free(val);
    return A;
}

/* z = U^{-1} L^{-1} r of the dense ILU(0) of D as type t holds it (drops outside the pattern). */
static void dense_ilu_apply(const dense_t *D, sps_scalar t, const double complex *r, double complex *z)
{
    const int n = D->n, cplx = sps_scalar_is_complex(t);
    double complex *f = tu_xcalloc((size_t)n * n, sizeof *f), *y = tu_xcalloc((size_t)n, sizeof *y);
    for (int i = 0; i < n * n; i++) f[i] = cplx ? D->d[i] : creal(D->d[i]);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++) {
            if (!D->pat[i * n + k]) continue;
            f[i * n + k] /= f[k * n + k];
            for (int j = k + 1; j < n; j++)
                if (D->pat[i * n + j] && D->pat[k * n + j]) f[i * n + j] -= f[i * n + k] * f[k * n + j];
        }
    for (int i = 0; i < n; i++) {
        double complex s = r[i];
        for (int k = 0; k < i; k++)
            if (D->pat[i * n + k]) s -= f[i * n + k] * y[k];
        y[i] = s;
    }
    for (int i = n - 1; i >= 0; i--) {
        double complex s = y[i];
        for (int j = i + 1; j < n; j++)
            if (D->pat[i * n + j]) s -= f[i * n + j] * z[j];
        z[i] = s / f[i * n + i];
    }
    free(f);
    free(y);
}

static void test_against_dense(void)
{
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        const char *tn = sps_scalar_name(t);
        const int n = 120;
        for (int herm = 0; herm <= 1; herm++) {
            dense_t D = random_dense(n, herm);
            sps_matrix A = to_matrix(&D, t);
            const char *name = herm ? "ic0" : "ilu0";
            sps_precond P = tu_precond_with(ctx, A, name, NULL, NULL);
            TU_CHECK(P != NULL, "%s %s: setup: %s", tn, name, sps_context_error(ctx));
            void *r = tu_xcalloc((size_t)n, sps_scalar_size(t));
            tu_fill_random(&rng, t, (size_t)n, r);
            double complex *rc = tu_xcalloc((size_t)n, sizeof *rc), *zc = tu_xcalloc((size_t)n, sizeof *zc);
            for (int i = 0; i < n; i++) {
                double re, im;
                tu_get(t, r, (size_t)i, &re, &im);
                rc[i] = re + I * im;
            }
            dense_ilu_apply(&D, t, rc, zc);
            void *ref = tu_xcalloc((size_t)n, sps_scalar_size(t));
            for (int i = 0; i < n; i++) tu_put(t, ref, (size_t)i, creal(zc[i]), cimag(zc[i]));
            if (P) {
                void *z = tu_precond_apply_host(ctx, P, t, n, r);
                TU_CHECK(tu_relerr(t, (size_t)n, z, ref) <= 200 * tu_eps(t), "%s %s: against the dense ILU(0): %.3g",
                         tn, name, tu_relerr(t, (size_t)n, z, ref));
                free(z);
                /* update: numeric only */
                TU_OK(ctx, sps_precond_update(P, NULL, A));
                TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 2, "%s %s: update ran %d/%d steps", tn, name,
                         P->nsymbolic, P->nnumeric);
            }
            sps_precond_destroy(P);
            sps_matrix_destroy(A);
            free(r);
            free(rc);
            free(zc);
            free(ref);
            free(D.d);
            free(D.pat);
        }
    }
}

/* Block-diagonal with dense b x b blocks: factors of b levels, so b or more Jacobi
 * sweeps are exact (to rounding) and 1 is not. */
static void test_sweeps(void)
{
    /* 4-row blocks, n a multiple of the GPU's 32-row slices; 10-row blocks (factor rows
     * of 0..9 entries) with n = 77, the last slice partial and the last block short */
    const struct { int n, bs; const char *k; } cases[] = {{64, 4, "sweeps:4"}, {77, 10, "sweeps:10"}};
    for (int c = 0; c < 2; c++)
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        const int n = cases[c].n, bs = cases[c].bs;
        dense_t D = {n, tu_xcalloc((size_t)n * n, sizeof(double complex)), tu_xcalloc((size_t)n * n, 1)};
        for (int i = 0; i < n; i++)
            for (int j = i / bs * bs; j < i / bs * bs + bs && j < n; j++) {
                D.pat[i * n + j] = 1;
                D.d[i * n + j] = i == j ? 2.0 * bs : tu_rng_range(&rng, -1, 1) + I * tu_rng_range(&rng, -1, 1);
            }
        sps_matrix A = to_matrix(&D, t);
        sps_precond E = tu_precond_with(ctx, A, "ilu0", NULL, NULL), S = tu_precond_with(ctx, A, "ilu0", "trisolve", cases[c].k),
                    S1 = tu_precond_with(ctx, A, "ilu0", "trisolve", "sweeps:1");
        void *r = tu_xcalloc((size_t)n, sps_scalar_size(t));
        tu_fill_random(&rng, t, (size_t)n, r);
        if (E && S && S1) {
            void *ze = tu_precond_apply_host(ctx, E, t, n, r), *zs = tu_precond_apply_host(ctx, S, t, n, r),
                 *z1 = tu_precond_apply_host(ctx, S1, t, n, r);
            TU_CHECK(tu_relerr(t, (size_t)n, zs, ze) <= 100 * tu_eps(t), "%s: %s on %d levels: %.3g",
                     sps_scalar_name(t), cases[c].k, bs, tu_relerr(t, (size_t)n, zs, ze));
            TU_CHECK(tu_relerr(t, (size_t)n, z1, ze) > 1e4 * tu_eps(t), "%s: sweeps:1 equals exact (%.3g)",
                     sps_scalar_name(t), tu_relerr(t, (size_t)n, z1, ze));
            free(ze);
            free(zs);
            free(z1);
        }
        sps_precond_destroy(E);
        sps_precond_destroy(S);
        sps_precond_destroy(S1);
        sps_matrix_destroy(A);
        free(r);
        free(D.d);
        free(D.pat);
    }
}

/* The refusals, each naming the row, and the shifts that let them go on. */
static void test_errors(void)
{
    const sps_index rp[] = {0, 2, 3, 5}, cl_nodiag[] = {0, 1, 0, 1, 2};
    const double v_nodiag[] = {2, 1, 1, 1, 3};
    sps_matrix A = NULL;
    sps_precond P = NULL;
    /* row 2 has no diagonal entry */
    TU_OK(ctx, sps_matrix_from_csr(ctx, 3, 3, rp, cl_nodiag, v_nodiag, SPS_F64, &A));
    TU_CHECK(sps_precond_create_by_name(A, "ilu0", &P) == SPS_ERR_NUMERIC &&
                 strstr(sps_context_error(ctx), "row 2 has no diagonal entry"),
             "missing diagonal: %s", sps_context_error(ctx));
    sps_matrix_destroy(A);
    /* a zero pivot in row 2: [[1, 1], [1, 1]] */
    const sps_index rp2[] = {0, 2, 4}, cl2[] = {0, 1, 0, 1};
    const double v2[] = {1, 1, 1, 1};
    TU_OK(ctx, sps_matrix_from_csr(ctx, 2, 2, rp2, cl2, v2, SPS_F64, &A));
    TU_CHECK(sps_precond_create_by_name(A, "ilu0", &P) == SPS_ERR_NUMERIC &&
                 strstr(sps_context_error(ctx), "zero pivot in row 2"),
             "zero pivot: %s", sps_context_error(ctx));
    P = tu_precond_with(ctx, A, "ilu0", "pc-shift", "nonzero");
    TU_CHECK(P != NULL, "pc-shift nonzero: %s", sps_context_error(ctx));
    /* ... and says so (it raised the pivot silently) */
    TU_CHECK(P && strstr(sps_precond_warning(P), "zero pivot in row 2 (and any after it) raised"),
             "pc-shift nonzero warning: '%s'", P ? sps_precond_warning(P) : "");
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
    /* a value that is not finite: named as such in every shift mode (nonzero had raised the NaN
       row's pivot and gone on) */
    {
        const char *mm = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2\n2 1 nan\n2 2 3\n";
        sps_read_options ro = {.allow_nonfinite = 1};
        TU_OK(ctx, sps_matrix_read_mtx_buffer(ctx, mm, strlen(mm), "nan.mtx", SPS_F64, &ro, &A));
        for (int sh = 0; sh < 2; sh++) {
            P = NULL;
            sps_status sn = SPS_OK;
            if (TU_OK(ctx, sps_precond_new(ctx, "ilu0", &P))) {
                if (sh) TU_OK(ctx, sps_precond_set_option(P, "pc-shift", "nonzero"));
                sn = sps_precond_setup(P, NULL, A);
            }
            TU_CHECK(sn == SPS_ERR_NUMERIC && strstr(sps_context_error(ctx), "row 2 holds a value that is not finite"),
                     "NaN row (shift %d): %s", sh, sps_context_error(ctx));
            sps_precond_destroy(P);
        }
        sps_matrix_destroy(A);
    }
    TU_OK(ctx, sps_matrix_from_csr(ctx, 2, 2, rp2, cl2, v2, SPS_F64, &A));
    /* ic0: the same matrix has pivots 1 and 0: refused; positive-definite shifts A */
    TU_CHECK(sps_precond_create_by_name(A, "ic0", &P) == SPS_ERR_NUMERIC &&
                 strstr(sps_context_error(ctx), "non-positive pivot in row 2"),
             "ic0 zero pivot: %s", sps_context_error(ctx));
    P = tu_precond_with(ctx, A, "ic0", "pc-shift", "positive-definite");
    TU_CHECK(P && strstr(sps_precond_warning(P), "factored A + 0.001 diag(A)"), "positive-definite: %s",
             P ? sps_precond_warning(P) : sps_context_error(ctx));
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
    /* ic0: an unsymmetric pattern */
    const sps_index rp3[] = {0, 1, 3}, cl3[] = {0, 0, 1};
    const double v3[] = {2, 1, 2};
    TU_OK(ctx, sps_matrix_from_csr(ctx, 2, 2, rp3, cl3, v3, SPS_F64, &A));
    TU_CHECK(sps_precond_create_by_name(A, "ic0", &P) == SPS_ERR_ARG &&
                 strstr(sps_context_error(ctx), "(2, 1) is stored, (1, 2) is not"),
             "ic0 unsymmetric pattern: %s", sps_context_error(ctx));
    P = tu_precond_with(ctx, A, "ilu0", NULL, NULL); /* ilu0 takes it */
    TU_CHECK(P != NULL, "ilu0 on a triangular matrix: %s", sps_context_error(ctx));
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
}

/* ic0 is Hermitian: x^H (M y) = conj(y^H (M x)); CG + ic0 beats CG on 2D Poisson. */
static void test_ic0_cg(void)
{
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:40", SPS_C64, &A));
    const int n = 1600;
    sps_precond P = tu_precond_with(ctx, A, "ic0", NULL, NULL);
    double complex *x = tu_xcalloc((size_t)n, sizeof *x), *y = tu_xcalloc((size_t)n, sizeof *y);
    tu_fill_random(&rng, SPS_C64, (size_t)n, x);
    tu_fill_random(&rng, SPS_C64, (size_t)n, y);
    if (P) {
        double complex *mx = tu_precond_apply_host(ctx, P, SPS_C64, n, x),
                       *my = tu_precond_apply_host(ctx, P, SPS_C64, n, y), a = 0, b = 0;
        for (int i = 0; i < n; i++) {
            a += conj(x[i]) * my[i];
            b += conj(y[i]) * mx[i];
        }
        TU_CHECK(cabs(a - conj(b)) <= 1e-12 * cabs(a), "ic0 Hermitian: %g vs %g", cabs(a), cabs(b));
        free(mx);
        free(my);
    }
    const int its[2] = {tu_solve_ones(A, "cg", NULL), tu_solve_ones(A, "cg", P)};
    TU_CHECK(its[1] < its[0] * 2 / 3, "CG + ic0: %d iterations, CG alone %d", its[1], its[0]);
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
    free(x);
    free(y);
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 9001);
    test_against_dense();
    test_sweeps();
    test_errors();
    test_ic0_cg();
    sps_context_destroy(ctx);
    return tu_finish();
}
