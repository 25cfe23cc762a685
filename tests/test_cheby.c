/* Chebyshev preconditioner (precond/cheby.c), CPU backend, f32/f64/c32/c64:
 * - on A = diag(lambda) (n = 40, lambda in [1, 100]) with 40 Lanczos steps (the
 *   exact spectrum) and cheby-ratio 0.05: M r = p(A) r against p(lambda) = (1 -
 *   T_k((theta - lambda)/delta) / T_k(sigma)) / lambda per component, for degrees
 *   1, 2, 3, 6; x may be y;
 * - M is Hermitian: x^H M y = conj(y^H M x) on 2D Poisson;
 * - CG + cheby (degree 4) converges on 2D Poisson in fewer iterations than CG;
 * - an indefinite matrix is refused naming the estimate;
 * - a 0 x 0 system is set up, applied and solved;
 * - NaN or Inf in A is refused naming it.
 * Ends with "N passed, M failed". */
#include "testutil.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

static double cheb_t(int k, double x) /* T_k(x), any real x */
{
    double t0 = 1, t1 = x;
    if (k == 0) return 1;
    for (int i = 1; i < k; i++) {
        const double t2 = 2 * x * t1 - t0;
        t0 = t1;
        t1 = t2;
    }
    return t1;
}

static sps_precond make(sps_matrix A, int degree, const char *ratio, const char *lanczos)
{
    sps_precond P = NULL;
    char d[16];
    snprintf(d, sizeof d, "%d", degree);
    TU_OK(ctx, sps_precond_new(ctx, "cheby", &P));
    TU_OK(ctx, sps_precond_set_option(P, "cheby-degree", d));
    if (ratio) TU_OK(ctx, sps_precond_set_option(P, "cheby-ratio", ratio));
    if (lanczos) TU_OK(ctx, sps_precond_set_option(P, "cheby-lanczos", lanczos));
    if (sps_precond_setup(P, NULL, A) != SPS_OK) {
        sps_precond_destroy(P);
        return NULL;
    }
    return P;
}

static void test_diagonal(void)
{
    enum { N = 40 };
    double lam[N];
    for (int i = 0; i < N; i++) lam[i] = 1 + 99.0 * i / (N - 1);
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        sps_index rp[N + 1], cl[N];
        void *v = tu_xcalloc(N, sps_scalar_size(t));
        for (int i = 0; i < N; i++) {
            rp[i] = i;
            cl[i] = i;
            tu_put(t, v, (size_t)i, lam[i], 0);
        }
        rp[N] = N;
        sps_matrix A = NULL;
        TU_OK(ctx, sps_matrix_from_csr(ctx, N, N, rp, cl, v, t, &A));
        static const int degrees[] = {1, 2, 3, 6};
        for (int di = 0; di < 4; di++) {
            const int k = degrees[di];
            sps_precond P = make(A, k, "0.05", "40");
            if (!P) {
                TU_CHECK(0, "%s degree %d: setup: %s", sps_scalar_name(t), k, sps_context_error(ctx));
                continue;
            }
            const double hi = 1.1 * lam[N - 1], lo = 0.05 * hi, theta = (hi + lo) / 2, delta = (hi - lo) / 2;
            void *r = tu_xcalloc(N, sps_scalar_size(t)), *z = tu_xcalloc(N, sps_scalar_size(t)),
                 *ref = tu_xcalloc(N, sps_scalar_size(t));
            tu_fill_random(&rng, t, N, r);
            for (int i = 0; i < N; i++) {
                const double p = (1 - cheb_t(k, (theta - lam[i]) / delta) / cheb_t(k, theta / delta)) / lam[i];
                double re, im;
                tu_get(t, r, (size_t)i, &re, &im);
                tu_put(t, ref, (size_t)i, p * re, p * im);
            }
            sps_vector vr = NULL;
            TU_OK(ctx, sps_vector_from_host(ctx, N, t, r, &vr));
            TU_OK(ctx, sps_precond_apply(P, vr, vr)); /* in place */
            TU_OK(ctx, sps_vector_get(vr, z));
            /* the Lanczos estimate of lambda_max carries its own rounding */
            const double tol = (t == SPS_F32 || t == SPS_C32) ? 1e-4 : 1e-9;
            TU_CHECK(tu_relerr(t, N, z, ref) <= tol, "%s degree %d: p(A) r off by %.3g", sps_scalar_name(t), k,
                     tu_relerr(t, N, z, ref));
            sps_vector_destroy(vr);
            sps_precond_destroy(P);
            free(r);
            free(z);
            free(ref);
        }
        sps_matrix_destroy(A);
        free(v);
    }
}

static void test_poisson(void)
{
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:30", SPS_C64, &A));
    const int n = 900;
    sps_precond P = make(A, 4, NULL, NULL);
    TU_CHECK(P != NULL, "poisson: setup: %s", sps_context_error(ctx));
    if (!P) {
        sps_matrix_destroy(A);
        return;
    }
    double complex *x = tu_xcalloc(n, sizeof *x), *y = tu_xcalloc(n, sizeof *y), *mx = tu_xcalloc(n, sizeof *mx),
                   *my = tu_xcalloc(n, sizeof *my), a = 0, b = 0;
    tu_fill_random(&rng, SPS_C64, n, x);
    tu_fill_random(&rng, SPS_C64, n, y);
    sps_vector vx = NULL, vy = NULL, vmx = NULL, vmy = NULL;
    TU_OK(ctx, sps_vector_from_host(ctx, n, SPS_C64, x, &vx));
    TU_OK(ctx, sps_vector_from_host(ctx, n, SPS_C64, y, &vy));
    TU_OK(ctx, sps_vector_create(ctx, n, SPS_C64, &vmx));
    TU_OK(ctx, sps_vector_create(ctx, n, SPS_C64, &vmy));
    TU_OK(ctx, sps_precond_apply(P, vx, vmx));
    TU_OK(ctx, sps_precond_apply(P, vy, vmy));
    TU_OK(ctx, sps_vector_get(vmx, mx));
    TU_OK(ctx, sps_vector_get(vmy, my));
    for (int i = 0; i < n; i++) {
        a += conj(x[i]) * my[i];
        b += conj(y[i]) * mx[i];
    }
    TU_CHECK(cabs(a - conj(b)) <= 1e-12 * cabs(a), "cheby Hermitian: %g vs %g", cabs(a), cabs(b));
    const int its[2] = {tu_solve_ones(A, "cg", NULL), tu_solve_ones(A, "cg", P)};
    TU_CHECK(its[1] < its[0], "CG + cheby(4): %d iterations, CG alone %d", its[1], its[0]);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    sps_vector_destroy(vmx);
    sps_vector_destroy(vmy);
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
    free(x);
    free(y);
    free(mx);
    free(my);
    /* indefinite: diag(-1, 2, 3) */
    const sps_index rp[] = {0, 1, 2, 3}, cl[] = {0, 1, 2};
    const double v[] = {-1, 2, 3};
    TU_OK(ctx, sps_matrix_from_csr(ctx, 3, 3, rp, cl, v, SPS_F64, &A));
    TU_CHECK(make(A, 3, NULL, "3") == NULL && strstr(sps_context_error(ctx), "needs a positive definite operator"),
             "indefinite: %s", sps_context_error(ctx));
    sps_matrix_destroy(A);
}

/* a 0 x 0 system: set up (no spectrum to estimate: Lanczos gave NaN and the setup failed, where
 * every other preconditioner and the solve accept it), applied, and CG with it ends at once */
static void test_empty(void)
{
    sps_index rp[1] = {0};
    sps_matrix A = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, 0, 0, rp, NULL, NULL, SPS_F64, &A))) return;
    sps_precond P = make(A, 3, NULL, NULL);
    TU_CHECK(P != NULL, "cheby on 0 x 0: %s", sps_context_error(ctx));
    if (P) {
        sps_vector x = NULL, y = NULL;
        TU_OK(ctx, sps_vector_create(ctx, 0, SPS_F64, &x));
        TU_OK(ctx, sps_vector_create(ctx, 0, SPS_F64, &y));
        TU_OK(ctx, sps_precond_apply(P, x, y));
        sps_vector_destroy(x);
        sps_vector_destroy(y);
        TU_CHECK(tu_solve_ones(A, "cg", P) >= 0, "CG + cheby on 0 x 0: %s", sps_context_error(ctx));
    }
    sps_precond_destroy(P);
    sps_matrix_destroy(A);
}

/* NaN in A (a file read with allow-nonfinite): Lanczos's Ritz values are NaN; the setup names
 * the value, not "Chebyshev needs a positive definite operator" as it had for [nan, nan] */
static void test_nonfinite(void)
{
    static const char *const mm[2] = {
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 nan\n3 3 4\n",
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 inf\n3 2 -1\n3 3 4\n"};
    for (int k = 0; k < 2; k++) {
        sps_matrix A = tu_read_nonfinite(ctx, mm[k]);
        if (!A) return;
        sps_precond P = make(A, 3, NULL, NULL);
        TU_CHECK(P == NULL && strstr(sps_context_error(ctx), "not finite") != NULL &&
                     strstr(sps_context_error(ctx), "positive definite") == NULL,
                 "cheby on a matrix with %s: %s", k ? "Inf" : "NaN", P ? "set up" : sps_context_error(ctx));
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 31337);
    test_diagonal();
    test_poisson();
    test_empty();
    test_nonfinite();
    sps_context_destroy(ctx);
    return tu_finish();
}
