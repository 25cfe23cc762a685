/* Unit tests of the preconditioners (precond/), CPU backend, f32/f64/c32/c64:
 * Jacobi apply against x_i / a_ii computed here in double on random matrices
 * (output poisoned first, in place too), the identity, the zero and non-finite
 * diagonal errors naming the 1-based row, the registry and argument errors.
 * Ends with "N passed, M failed". */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context g_ctx;
static tu_rng g_rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

/* random n x n matrix with a random diagonal (|a_ii| in [0.5, 2], either sign),
 * a few off-diagonal entries per row, and diagonal entry `skip` left out
 * (-1: none) or stored as an explicit zero (zero_at) */
static sps_matrix random_matrix(sps_scalar t, sps_index n, sps_index skip, sps_index zero_at, void *diag)
{
    const int64_t cap = (int64_t)n * 4;
    sps_index *r = tu_xcalloc((size_t)cap, sizeof *r), *c = tu_xcalloc((size_t)cap, sizeof *c);
    void *v = tu_xcalloc((size_t)cap, sps_scalar_size(t));
    int64_t k = 0;
    for (sps_index i = 0; i < n; i++) {
        double re = tu_rng_range(&g_rng, 0.5, 2.0) * (tu_rng_uniform(&g_rng) < 0.5 ? -1 : 1);
        double im = sps_scalar_is_complex(t) ? tu_rng_range(&g_rng, -1, 1) : 0.0;
        if (i == zero_at) re = im = 0.0;
        tu_put(t, diag, (size_t)i, i == skip ? 0.0 : re, i == skip ? 0.0 : im);
        if (i != skip) {
            r[k] = c[k] = i;
            tu_put(t, v, (size_t)k++, re, im);
        }
        for (int j = 0; j < 3 && n > 1; j++) {
            sps_index col = (sps_index)(tu_rng_u64(&g_rng) % (uint64_t)n);
            if (col == i) continue;
            r[k] = i;
            c[k] = col;
            tu_put(t, v, (size_t)k++, tu_rng_range(&g_rng, -1, 1),
                sps_scalar_is_complex(t) ? tu_rng_range(&g_rng, -1, 1) : 0);
        }
    }
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, n, n, k, r, c, v, t, &A));
    free(r);
    free(c);
    free(v);
    return A;
}

static void test_jacobi_apply(void)
{
    const sps_index sizes[3] = {1, 17, 5000};
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const size_t ss = sps_scalar_size(t);
        const double tol = 4 * tu_eps(t);
        for (int zi = 0; zi < 3; zi++) {
            const sps_index n = sizes[zi];
            void *d = tu_xcalloc((size_t)n, ss), *x = tu_xcalloc((size_t)n, ss), *y = tu_xcalloc((size_t)n, ss);
            void *ref = tu_xcalloc((size_t)n, ss);
            sps_matrix A = random_matrix(t, n, -1, -1, d);
            tu_fill_random(&g_rng, t, (size_t)n, x);
            /* y_i = x_i / a_ii in double, rounded to t */
            for (sps_index i = 0; i < n; i++) {
                double xr, xi, dr, di;
                tu_get(t, x, (size_t)i, &xr, &xi);
                tu_get(t, d, (size_t)i, &dr, &di);
                const double m = dr * dr + di * di;
                tu_put(t, ref, (size_t)i, (xr * dr + xi * di) / m, (xi * dr - xr * di) / m);
            }
            sps_precond P = NULL;
            sps_vector vx = NULL, vy = NULL;
            TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
            TU_CHECK(P && strcmp(sps_precond_name(P), "jacobi") == 0, "name %s", sps_precond_name(P));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));
            tu_fill_nan(t, (size_t)n, y);
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, y, &vy)); /* poisoned output */
            TU_OK(g_ctx, sps_precond_apply(P, vx, vy));
            tu_fill_nan(t, (size_t)n, y);
            TU_OK(g_ctx, sps_vector_get(vy, y));
            TU_CHECK(tu_relerr(t, (size_t)n, y, ref) <= tol, "jacobi %s n=%d: relerr %.3e", sps_scalar_name(t), (int)n,
                     tu_relerr(t, (size_t)n, y, ref));
            /* in place */
            TU_OK(g_ctx, sps_precond_apply(P, vx, vx));
            TU_OK(g_ctx, sps_vector_get(vx, y));
            TU_CHECK(tu_relerr(t, (size_t)n, y, ref) <= tol, "jacobi in place %s n=%d", sps_scalar_name(t), (int)n);
            /* none: y = x */
            sps_precond I = NULL;
            TU_OK(g_ctx, sps_precond_create_by_name(A, "none", &I));
            TU_OK(g_ctx, sps_vector_set(vx, x));
            TU_OK(g_ctx, sps_vector_fill(vy, ref)); /* overwrite the previous output */
            TU_OK(g_ctx, sps_precond_apply(I, vx, vy));
            TU_OK(g_ctx, sps_vector_get(vy, y));
            TU_CHECK(memcmp(x, y, (size_t)n * ss) == 0, "none %s n=%d: y != x", sps_scalar_name(t), (int)n);
            TU_CHECK(strcmp(sps_precond_name(I), "none") == 0, "none name");
            sps_precond_destroy(I);
            sps_precond_destroy(P);
            sps_vector_destroy(vx);
            sps_vector_destroy(vy);
            sps_matrix_destroy(A);
            free(d);
            free(x);
            free(y);
            free(ref);
        }
    }
}

static void test_jacobi_errors(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        void *d = tu_xcalloc(40, sps_scalar_size(t));
        sps_precond P = NULL;
        /* diagonal entry of row 17 (1-based) absent */
        sps_matrix A = random_matrix(t, 40, 16, -1, d);
        TU_CHECK(sps_precond_create(A, SPS_PRECOND_JACOBI, &P) == SPS_ERR_NUMERIC && !P, "missing diagonal %s",
                 sps_scalar_name(t));
        TU_CHECK(strstr(sps_context_error(g_ctx), "row 17 is zero") != NULL, "message: %s", sps_context_error(g_ctx));
        sps_matrix_destroy(A);
        /* stored as an explicit zero at row 5 */
        A = random_matrix(t, 40, -1, 4, d);
        TU_CHECK(sps_precond_create_by_name(A, "jacobi", &P) == SPS_ERR_NUMERIC && !P, "zero diagonal %s",
                 sps_scalar_name(t));
        TU_CHECK(strstr(sps_context_error(g_ctx), "Jacobi: diagonal entry of row 5 is zero") != NULL, "message: %s",
                 sps_context_error(g_ctx));
        /* none does not look at the diagonal */
        TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_NONE, &P));
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
        free(d);
    }
    /* a non-finite diagonal entry (row 3), read with allow_nonfinite */
    const char *mm = "%%MatrixMarket matrix coordinate real general\n4 4 5\n1 1 2\n2 2 3\n3 3 inf\n4 4 1\n1 4 1\n";
    sps_read_options ro = {1};
    sps_matrix A = NULL;
    sps_precond P = NULL;
    TU_OK(g_ctx, sps_matrix_read_mtx_buffer(g_ctx, mm, strlen(mm), "inf.mtx", SPS_F64, &ro, &A));
    TU_CHECK(sps_precond_create(A, SPS_PRECOND_JACOBI, &P) == SPS_ERR_NUMERIC && !P, "inf diagonal");
    TU_CHECK(strstr(sps_context_error(g_ctx), "row 3 is not finite") != NULL, "message: %s", sps_context_error(g_ctx));
    sps_matrix_destroy(A);
}

static void test_arguments(void)
{
    sps_context ctx2 = NULL;
    TU_OK(NULL, sps_context_create(&ctx2, SPS_BACKEND_CPU, 0));
    sps_precond P = NULL;
    sps_matrix A = NULL, R = NULL;
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:4", SPS_F64, &A));
    const sps_index r[2] = {0, 1}, c[2] = {0, 2};
    const double v[2] = {1, 2};
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, 2, 3, 2, r, c, v, SPS_F64, &R));
    TU_CHECK(sps_precond_create(R, SPS_PRECOND_JACOBI, &P) == SPS_ERR_ARG && !P, "non-square");
    TU_CHECK(strstr(sps_context_error(g_ctx), "2 x 3") != NULL, "non-square message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_precond_create(R, SPS_PRECOND_NONE, &P) == SPS_ERR_ARG, "non-square none");
    TU_CHECK(sps_precond_create_by_name(A, "ilu", &P) == SPS_ERR_ARG && !P, "unknown name");
    TU_CHECK(strstr(sps_context_error(g_ctx), "none, jacobi") != NULL, "unknown lists: %s", sps_context_error(g_ctx));
    TU_CHECK(strcmp(sps_precond_list(), "none, jacobi") == 0, "list %s", sps_precond_list());
    TU_CHECK(sps_precond_create(A, (sps_precond_type)9, &P) == SPS_ERR_ARG, "bad type");
    TU_CHECK(sps_precond_create(NULL, SPS_PRECOND_JACOBI, &P) == SPS_ERR_ARG, "NULL matrix");
    TU_CHECK(sps_precond_create(A, SPS_PRECOND_JACOBI, NULL) == SPS_ERR_ARG, "NULL output");
    TU_CHECK(sps_precond_create_by_name(A, NULL, &P) == SPS_ERR_ARG, "NULL name");

    TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
    sps_vector x = NULL, y = NULL, ys = NULL, yf = NULL, y2 = NULL;
    TU_OK(g_ctx, sps_vector_create(g_ctx, 16, SPS_F64, &x));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 16, SPS_F64, &y));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 15, SPS_F64, &ys));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 16, SPS_F32, &yf));
    TU_OK(ctx2, sps_vector_create(ctx2, 16, SPS_F64, &y2));
    TU_CHECK(sps_precond_apply(P, x, ys) == SPS_ERR_ARG, "size mismatch");
    TU_CHECK(strstr(sps_context_error(g_ctx), "15") != NULL, "size message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_precond_apply(P, x, yf) == SPS_ERR_ARG, "type mismatch");
    TU_CHECK(sps_precond_apply(P, x, y2) == SPS_ERR_ARG, "other context");
    TU_CHECK(sps_precond_apply(P, NULL, y) == SPS_ERR_ARG, "NULL x");
    TU_CHECK(sps_precond_apply(NULL, x, y) == SPS_ERR_ARG, "NULL precond");
    TU_CHECK(strcmp(sps_precond_name(NULL), "?") == 0, "NULL name");
    sps_precond_destroy(NULL);
    sps_precond_destroy(P);
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    sps_vector_destroy(ys);
    sps_vector_destroy(yf);
    sps_vector_destroy(y2);
    sps_matrix_destroy(A);
    sps_matrix_destroy(R);
    sps_context_destroy(ctx2);
}

int main(void)
{
    if (sps_context_create(&g_ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "no CPU context\n");
        return 1;
    }
    tu_rng_seed(&g_rng, 4242);
    test_jacobi_apply();
    test_jacobi_errors();
    test_arguments();
    sps_context_destroy(g_ctx);
    return tu_finish();
}
