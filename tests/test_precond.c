/* Unit tests of the preconditioners (precond/), CPU backend, f32/f64/c32/c64:
 * Jacobi apply against x_i / a_ii computed here in double on random matrices
 * (output poisoned first, in place too), the identity, the zero and non-finite
 * diagonal errors naming the 1-based row, the registry and argument errors;
 * the setup protocol (new, setup from an operator and/or a matrix, update that
 * re-runs only the numeric step, refused pattern changes, recovery after a
 * failed setup or update); a preconditioner as an operator (alpha/beta, the
 * transpose, inside a shell operator, as a solver's operator); the shell
 * preconditioner (a hand-written Jacobi gives the built-in's iterates bit for
 * bit, its flags, callback failures); what the solvers check (CG refuses a
 * preconditioner not flagged symmetric, one not set up is refused, graph
 * capture only when the operator and the preconditioner are capturable);
 * updates with another entry type refused (ilu0, ic0, bjacobi), bjacobi keeping
 * its blocks when pc-block-size changes before an update, the transposed views
 * of cheby (M^T on a nonsymmetric A) and ic0 (refused for complex types).
 * Ends with "N passed, M failed". */
#include "testutil.h"
#include "precond/precond_impl.h" /* the setup counters */
#include "solvers/solver_impl.h" /* sps_sv_capturable */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context g_ctx;
static tu_rng g_rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

/* a random diagonal entry: |re| in [0.5, 2], either sign, im in [-1, 1] for complex t; 0 with zero */
static void draw_diag(sps_scalar t, int zero, double *re, double *im)
{
    *re = tu_rng_range(&g_rng, 0.5, 2.0) * (tu_rng_uniform(&g_rng) < 0.5 ? -1 : 1);
    *im = sps_scalar_is_complex(t) ? tu_rng_range(&g_rng, -1, 1) : 0.0;
    if (zero) *re = *im = 0.0;
}

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
        double re, im;
        draw_diag(t, i == zero_at, &re, &im);
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

/* A matrix of A's pattern (n x n, type t) with new random values: the diagonal drawn as
 * random_matrix does (written to diag; an explicit zero at row zero_at, -1: none); drop_last
 * leaves the last stored entry out (another pattern). */
static sps_matrix revalue(sps_matrix A, sps_scalar t, sps_index zero_at, int drop_last, void *diag)
{
    tu_csr h;
    sps_matrix B = NULL;
    if (!TU_CHECK(tu_export_csr(g_ctx, A, &h), "export")) {
        tu_csr_free(&h);
        return NULL;
    }
    const sps_index n = h.info.rows;
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) {
            double re, im;
            if (h.col[k] == i) {
                draw_diag(t, i == zero_at, &re, &im);
                tu_put(t, diag, (size_t)i, re, im);
            } else {
                re = tu_rng_range(&g_rng, -1, 1);
                im = sps_scalar_is_complex(t) ? tu_rng_range(&g_rng, -1, 1) : 0.0;
            }
            tu_put(t, h.val, (size_t)k, re, im);
        }
    if (drop_last) { /* leave out the last off-diagonal entry */
        sps_index r = n - 1, k = h.rowptr[n] - 1;
        for (; k >= 0; k--) {
            while (k < h.rowptr[r]) r--;
            if (h.col[k] != r) break;
        }
        const size_t ss = sps_scalar_size(t), tail = (size_t)(h.rowptr[n] - k - 1);
        memmove(h.col + k, h.col + k + 1, tail * sizeof *h.col);
        memmove((char *)h.val + (size_t)k * ss, (char *)h.val + (size_t)(k + 1) * ss, tail * ss);
        for (sps_index i = r + 1; i <= n; i++) h.rowptr[i]--;
    }
    TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, n, n, h.rowptr, h.col, h.val, t, &B));
    tu_csr_free(&h);
    return B;
}

/* ref_i = x_i / d_i in double, rounded to t */
static void jacobi_ref(sps_scalar t, sps_index n, const void *d, const void *x, void *ref)
{
    for (sps_index i = 0; i < n; i++) {
        double xr, xi, dr, di;
        tu_get(t, x, (size_t)i, &xr, &xi);
        tu_get(t, d, (size_t)i, &dr, &di);
        const double m = dr * dr + di * di;
        tu_put(t, ref, (size_t)i, (xr * dr + xi * di) / m, (xi * dr - xr * di) / m);
    }
}

/* y = M x through sps_precond_apply (output poisoned first) against ref: one check */
static void check_apply(sps_precond P, sps_scalar t, sps_index n, const void *x, const void *ref, const char *what)
{
    const size_t ss = sps_scalar_size(t);
    void *y = tu_xcalloc((size_t)n, ss);
    sps_vector vx = NULL, vy = NULL;
    tu_fill_nan(t, (size_t)n, y);
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, y, &vy));
    TU_OK(g_ctx, sps_precond_apply(P, vx, vy));
    TU_OK(g_ctx, sps_vector_get(vy, y));
    const double err = tu_relerr(t, (size_t)n, y, ref);
    TU_CHECK(err <= 4 * tu_eps(t), "%s %s n=%d: relerr %.3e", what, sps_scalar_name(t), (int)n, err);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    free(y);
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
            jacobi_ref(t, n, d, x, ref);
            sps_precond P = NULL;
            sps_vector vx = NULL, vy = NULL;
            TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
            TU_CHECK(P && strcmp(sps_precond_name(P), "jacobi") == 0, "name %s", sps_precond_name(P));
            check_apply(P, t, n, x, ref, "jacobi");
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));
            TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vy));
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

/* A new Jacobi of ctx with option jacobi-zero-diagonal = error. */
static sps_precond jacobi_strict(void)
{
    sps_precond P = NULL;
    TU_OK(g_ctx, sps_precond_new(g_ctx, "jacobi", &P));
    TU_OK(g_ctx, sps_precond_set_option(P, "jacobi-zero-diagonal", "error"));
    return P;
}

/* Zero diagonal entries taken as 1 (PETSc's Jacobi), with the warning; with the option
 * error, refused naming the row.  d: A's diagonal (zeros where absent or zero). */
static void check_zero_diagonal(sps_matrix A, sps_scalar t, const void *d, int row, const char *what)
{
    const sps_index n = 40;
    const size_t ss = sps_scalar_size(t);
    sps_precond P = jacobi_strict();
    TU_CHECK(sps_precond_setup(P, NULL, A) == SPS_ERR_NUMERIC && !sps_precond_ready(P), "%s %s: refused (error)",
             what, sps_scalar_name(t));
    char want[96];
    snprintf(want, sizeof want, "Jacobi: diagonal entry of row %d is zero", row);
    TU_CHECK(strstr(sps_context_error(g_ctx), want) != NULL, "message: %s", sps_context_error(g_ctx));
    sps_precond_destroy(P);
    /* the default: M's entry is 1 there, 1/a_ii elsewhere */
    P = NULL;
    TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
    snprintf(want, sizeof want, "Jacobi: 1 zero diagonal entry taken as 1 (the first in row %d)", row);
    TU_CHECK(P && strcmp(sps_precond_warning(P), want) == 0, "%s %s: warning '%s'", what, sps_scalar_name(t),
             P ? sps_precond_warning(P) : "");
    void *one = tu_xcalloc((size_t)n, ss), *x = tu_xcalloc((size_t)n, ss), *r = tu_xcalloc((size_t)n, ss);
    memcpy(one, d, (size_t)n * ss);
    sps_cplx_store(t, (sps_cplx){1.0, 0.0}, (char *)one + (size_t)(row - 1) * ss);
    tu_fill_random(&g_rng, t, (size_t)n, x);
    jacobi_ref(t, n, one, x, r);
    if (P) check_apply(P, t, n, x, r, what);
    sps_precond_destroy(P);
    free(one);
    free(x);
    free(r);
}

static void test_jacobi_errors(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        void *d = tu_xcalloc(40, sps_scalar_size(t));
        sps_precond P = NULL;
        /* diagonal entry of row 17 (1-based) absent */
        sps_matrix A = random_matrix(t, 40, 16, -1, d);
        check_zero_diagonal(A, t, d, 17, "missing diagonal");
        sps_matrix_destroy(A);
        /* stored as an explicit zero at row 5 */
        A = random_matrix(t, 40, -1, 4, d);
        check_zero_diagonal(A, t, d, 5, "zero diagonal");
        TU_CHECK(sps_precond_set_option(NULL, "jacobi-zero-diagonal", "error") != SPS_OK, "NULL P");
        /* none does not look at the diagonal */
        TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_NONE, &P));
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
        free(d);
    }
    /* a non-finite diagonal entry (row 3), read with allow_nonfinite */
    const char *mm = "%%MatrixMarket matrix coordinate real general\n4 4 5\n1 1 2\n2 2 3\n3 3 inf\n4 4 1\n1 4 1\n";
    sps_read_options ro = {.allow_nonfinite = 1};
    sps_matrix A = NULL;
    sps_precond P = NULL;
    TU_OK(g_ctx, sps_matrix_read_mtx_buffer(g_ctx, mm, strlen(mm), "inf.mtx", SPS_F64, &ro, &A));
    TU_CHECK(sps_precond_create(A, SPS_PRECOND_JACOBI, &P) == SPS_ERR_NUMERIC && !P, "inf diagonal");
    TU_CHECK(strstr(sps_context_error(g_ctx), "row 3 is not finite") != NULL, "message: %s", sps_context_error(g_ctx));
    sps_matrix_destroy(A);
    /* a finite diagonal entry whose inverse is not (a subnormal, row 2): refused naming it, not an
       Inf in M for the solver to meet at its first iteration */
    for (int k = 0; k < 2; k++) {
        const char *mt = k ? "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 1e-310\n3 3 1\n"
                           : "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 1e-39\n3 3 1\n";
        P = NULL;
        TU_OK(g_ctx, sps_matrix_read_mtx_buffer(g_ctx, mt, strlen(mt), "tiny.mtx", k ? SPS_F64 : SPS_F32, NULL, &A));
        TU_CHECK(sps_precond_create(A, SPS_PRECOND_JACOBI, &P) == SPS_ERR_NUMERIC && !P, "subnormal diagonal (%s)",
                 k ? "f64" : "f32");
        TU_CHECK(strstr(sps_context_error(g_ctx), "row 2 (") && strstr(sps_context_error(g_ctx), "too small to invert"),
                 "message: %s", sps_context_error(g_ctx));
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
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
    TU_CHECK(strcmp(sps_precond_list(), "none, jacobi, bjacobi, ilu0, ic0, cheby") == 0, "list %s", sps_precond_list());
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

/* call returned want and the context's message contains msg: one check */
#define EXPECT_ERROR(call, want, msg) expect_error((call), (want), (msg), #call, __FILE__, __LINE__)
static int expect_error(sps_status st, sps_status want, const char *msg, const char *call, const char *file, int line)
{
    const char *e = sps_context_error(g_ctx);
    return tu_check(st == want && strstr(e, msg) != NULL, file, line, "%s -> %s (%s); expected %s with \"%s\"", call,
                    sps_status_name(st), e, sps_status_name(want), msg);
}

/* ---------------------------------------------------------------- setup protocol */
static void test_setup_update(void)
{
    const sps_index n = 40;
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const char *tn = sps_scalar_name(t);
        const size_t ss = sps_scalar_size(t);
        void *d1 = tu_xcalloc((size_t)n, ss), *d2 = tu_xcalloc((size_t)n, ss), *dz = tu_xcalloc((size_t)n, ss);
        void *d3 = tu_xcalloc((size_t)n, ss), *x = tu_xcalloc((size_t)n, ss);
        void *r1 = tu_xcalloc((size_t)n, ss), *r2 = tu_xcalloc((size_t)n, ss);
        sps_matrix A1 = random_matrix(t, n, -1, -1, d1);
        sps_matrix A2 = revalue(A1, t, -1, 0, d2); /* same pattern, new values */
        sps_matrix Az = revalue(A1, t, 6, 0, dz);  /* same pattern, a_77 = 0 */
        sps_matrix A3 = revalue(A1, t, -1, 1, d3); /* one entry fewer */
        sps_matrix_info_t i1, iz;
        TU_OK(g_ctx, sps_matrix_info(A1, &i1));
        TU_OK(g_ctx, sps_matrix_info(Az, &iz));
        TU_CHECK(i1.nnz == iz.nnz, "%s: the explicit zero is stored (%lld vs %lld entries)", tn, (long long)i1.nnz,
                 (long long)iz.nnz);
        tu_fill_random(&g_rng, t, (size_t)n, x);
        jacobi_ref(t, n, d1, x, r1);
        jacobi_ref(t, n, d2, x, r2);
        sps_operator op1 = NULL;
        TU_OK(g_ctx, sps_operator_from_matrix(A1, &op1));
        sps_vector vx = NULL;
        TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));

        sps_precond P = jacobi_strict(); /* a zero diagonal is a failed numeric step */
        TU_CHECK(sps_precond_flags(P) == (SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC | SPS_PRECOND_DIAGONAL),
                 "jacobi flags 0x%x",
                 sps_precond_flags(P));
        TU_CHECK(!sps_precond_ready(P), "a new preconditioner is not ready");
        EXPECT_ERROR(sps_precond_apply(P, vx, vx), SPS_ERR_ARG, "jacobi is not set up");
        EXPECT_ERROR(sps_precond_setup(P, NULL, NULL), SPS_ERR_ARG, "needs an operator or a matrix");
        EXPECT_ERROR(sps_precond_setup(P, op1, NULL), SPS_ERR_ARG,
                     "preconditioner jacobi needs the matrix entries: pass the matrix to sps_precond_setup");
        EXPECT_ERROR(sps_precond_update(P, NULL, A1), SPS_ERR_ARG, "call sps_precond_setup first");
        TU_CHECK(P->nsymbolic == 0 && P->nnumeric == 0, "%s: refused calls ran steps", tn);

        /* setup: symbolic + numeric */
        TU_OK(g_ctx, sps_precond_setup(P, op1, A1));
        TU_CHECK(sps_precond_ready(P), "ready after setup");
        TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 1, "%s: setup ran %d/%d steps", tn, P->nsymbolic, P->nnumeric);
        const void *store = P->data;
        check_apply(P, t, n, x, r1, "setup(op, A1)");
        /* update: numeric only, into the same store */
        TU_OK(g_ctx, sps_precond_update(P, NULL, A2));
        TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 2, "%s: update ran %d/%d steps", tn, P->nsymbolic, P->nnumeric);
        TU_CHECK(P->data == store, "%s: update replaced the store", tn);
        check_apply(P, t, n, x, r2, "update(A2)");
        /* another pattern: refused, M kept */
        EXPECT_ERROR(sps_precond_update(P, NULL, A3), SPS_ERR_ARG, "the pattern changed, call sps_precond_setup");
        TU_CHECK(P->nnumeric == 2, "%s: the refused update ran", tn);
        check_apply(P, t, n, x, r2, "after a refused update");
        /* a failed numeric step: M unusable, an update with valid values recovers it */
        EXPECT_ERROR(sps_precond_update(P, NULL, Az), SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row 7 is zero");
        EXPECT_ERROR(sps_precond_apply(P, vx, vx), SPS_ERR_ARG, "last numeric step failed");
        TU_OK(g_ctx, sps_precond_update(P, op1, A1));
        TU_CHECK(P->nsymbolic == 1 && P->data == store, "%s: recovery re-ran the symbolic step", tn);
        check_apply(P, t, n, x, r1, "update(op, A1) after a failed one");
        /* setup again: another pattern is fine, and runs both steps */
        TU_OK(g_ctx, sps_precond_setup(P, NULL, A3));
        TU_CHECK(P->nsymbolic == 2 && P->nnumeric == 4, "%s: second setup ran %d/%d steps", tn, P->nsymbolic,
                 P->nnumeric);
        sps_precond_destroy(P);

        /* a failed setup leaves P destroyable and reusable */
        P = jacobi_strict();
        TU_CHECK(sps_precond_setup(P, NULL, Az) == SPS_ERR_NUMERIC, "%s: setup with a zero diagonal", tn);
        TU_OK(g_ctx, sps_precond_setup(P, NULL, A2));
        check_apply(P, t, n, x, r2, "setup(A2) after a failed setup");
        sps_precond_destroy(P);
        P = jacobi_strict();
        TU_CHECK(sps_precond_setup(P, NULL, Az) == SPS_ERR_NUMERIC, "%s: failed setup, then destroy", tn);
        sps_precond_destroy(P);

        sps_vector_destroy(vx);
        sps_operator_destroy(op1);
        TU_DESTROY_MATRICES(A1, A2, Az, A3);
        free(d1);
        free(d2);
        free(dz);
        free(d3);
        free(x);
        free(r1);
        free(r2);
    }
}

/* a shell operator's callback: y = A x through the operator in user */
static sps_status apply_inner(void *user, sps_vector x, sps_vector y)
{
    return sps_operator_apply((sps_operator)user, SPS_OP_N, NULL, x, NULL, y);
}

static void test_setup_arguments(void)
{
    sps_context ctx2 = NULL;
    TU_OK(NULL, sps_context_create(&ctx2, SPS_BACKEND_CPU, 0));
    sps_matrix A = NULL, Af = NULL, A5 = NULL, R = NULL, B2 = NULL;
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:4", SPS_F64, &A));
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:4", SPS_F32, &Af));
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:5", SPS_F64, &A5));
    TU_OK(ctx2, sps_matrix_generate(ctx2, "poisson2d:4", SPS_F64, &B2));
    const sps_index r[2] = {0, 1}, c[2] = {0, 2};
    const double v[2] = {1, 2};
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, 2, 3, 2, r, c, v, SPS_F64, &R));
    sps_operator op = NULL, op5 = NULL, shell = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_operator_from_matrix(A5, &op5));
    TU_OK(g_ctx, sps_operator_shell(g_ctx, 16, 16, SPS_F64, apply_inner, NULL, op, &shell));

    sps_precond P = NULL;
    EXPECT_ERROR(sps_precond_new(g_ctx, "ilu", &P), SPS_ERR_ARG,
                 "unknown preconditioner \"ilu\" (available: none, jacobi, bjacobi, ilu0, ic0, cheby)");
    TU_CHECK(!P, "new: output cleared");
    TU_CHECK(sps_precond_new(g_ctx, "shell", &P) == SPS_ERR_ARG && !P, "new: the shell is not in the registry");
    TU_CHECK(sps_precond_new(g_ctx, NULL, &P) == SPS_ERR_ARG, "new: NULL name");
    TU_CHECK(sps_precond_new(g_ctx, "jacobi", NULL) == SPS_ERR_ARG, "new: NULL output");
    TU_CHECK(sps_precond_new(NULL, "jacobi", &P) == SPS_ERR_ARG, "new: NULL context");
    TU_CHECK(sps_precond_setup(NULL, op, A) == SPS_ERR_ARG, "setup: NULL preconditioner");
    TU_CHECK(sps_precond_update(NULL, op, A) == SPS_ERR_ARG, "update: NULL preconditioner");

    TU_OK(g_ctx, sps_precond_new(g_ctx, "jacobi", &P));
    EXPECT_ERROR(sps_precond_setup(P, op, Af), SPS_ERR_ARG,
                 "the matrix (16 x 16, f32) and the operator (16 x 16, f64) differ");
    TU_CHECK(sps_precond_setup(P, op5, A) == SPS_ERR_ARG, "operator 25 x 25, matrix 16 x 16");
    EXPECT_ERROR(sps_precond_setup(P, NULL, R), SPS_ERR_ARG, "preconditioner jacobi: the matrix is 2 x 3, not square");
    EXPECT_ERROR(sps_precond_setup(P, NULL, B2), SPS_ERR_ARG, "another context");
    TU_CHECK(P->nsymbolic == 0, "refused setups ran a step");
    /* the operator need not be the matrix's: a matrix-free operator, preconditioned with A's entries */
    TU_OK(g_ctx, sps_precond_setup(P, shell, A));
    TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 1, "setup(shell operator, A)");
    /* an update of another type or size is a pattern change */
    EXPECT_ERROR(sps_precond_update(P, NULL, Af), SPS_ERR_ARG,
                 "was set up for a system 16 x 16 with 64 stored entries (f64), this one is 16 x 16 with 64 stored "
                 "entries (f32)");
    TU_CHECK(sps_precond_update(P, NULL, A5) == SPS_ERR_ARG, "update 16 -> 25");
    TU_CHECK(P->nnumeric == 1, "refused updates ran the numeric step");
    sps_precond_destroy(P);

    /* none needs only the operator */
    TU_OK(g_ctx, sps_precond_new(g_ctx, "none", &P));
    TU_CHECK(sps_precond_flags(P) == (SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC | SPS_PRECOND_IDENTITY), "none flags 0x%x",
             sps_precond_flags(P));
    TU_OK(g_ctx, sps_precond_setup(P, op, NULL));
    TU_OK(g_ctx, sps_precond_update(P, op, NULL));
    TU_OK(g_ctx, sps_precond_update(P, NULL, A)); /* the matrix of the operator's size: no pattern was recorded */
    TU_CHECK(sps_precond_update(P, op5, NULL) == SPS_ERR_ARG, "none: update to another size");
    TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 3, "none: %d/%d steps", P->nsymbolic, P->nnumeric);
    sps_precond_destroy(P);
    TU_CHECK(sps_precond_flags(NULL) == 0, "flags of NULL");

    sps_operator_destroy(shell);
    sps_operator_destroy(op);
    sps_operator_destroy(op5);
    TU_DESTROY_MATRICES(A, Af, A5, R);
    sps_matrix_destroy(B2);
    sps_context_destroy(ctx2);
}

/* ---------------------------------------------------------------- entry types across an update */
/* The 3 x 3 quaternion pattern of the tests below (a 12 x 12 operator): the diagonal and the
 * two neighbours, 7 entries */
static const sps_index q3_row[7] = {0, 0, 1, 1, 1, 2, 2}, q3_col[7] = {0, 1, 0, 1, 2, 1, 2};

/* A 3 x 3 quaternion matrix (f64) of that pattern; another s gives other values (another
 * matrix of the same pattern).  hermitian: real diagonal quaternions 4 + s and conjugate
 * neighbours, an SPD expansion (ic0 takes it); else full diagonal quaternions, so the 4 x 4
 * blocks are not multiples of I and block Jacobi differs from point Jacobi. */
static sps_matrix quat3(double s, int hermitian)
{
    const double up[4] = {0.5 * s, 0.25 * s, -0.5 * s, 0.125 * s};
    double v[7 * 4];
    for (int k = 0; k < 7; k++) {
        double *q = v + 4 * k;
        if (q3_row[k] == q3_col[k]) {
            q[0] = 4 + s;
            q[1] = hermitian ? 0 : 0.5 + q3_row[k];
            q[2] = hermitian ? 0 : -0.25 * s;
            q[3] = hermitian ? 0 : 0.75;
        } else if (q3_row[k] < q3_col[k] || hermitian) { /* below: the conjugate of the one above */
            const double c = q3_row[k] < q3_col[k] ? 1 : -1;
            q[0] = up[0], q[1] = c * up[1], q[2] = c * up[2], q[3] = c * up[3];
        } else {
            q[0] = 0.3 * s, q[1] = -0.2, q[2] = 0.1 * s, q[3] = 0.4;
        }
    }
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo_entries(g_ctx, 3, 3, 7, q3_row, q3_col, v, sps_entry_quaternion(), SPS_F64, &A));
    return A;
}

/* An nb x nb matrix of entry type e (f64) with nnz entries at (r[k], c[k]), every value 1 + k */
static sps_matrix entries_matrix(sps_index nb, sps_entry_desc e, int nnz, const sps_index *r, const sps_index *c)
{
    const int nv = sps_entry_values(e);
    double *v = tu_xcalloc((size_t)nnz * (size_t)nv, sizeof *v);
    for (int k = 0; k < nnz * nv; k++) v[k] = 1 + k;
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo_entries(g_ctx, nb, nb, nnz, r, c, v, e, SPS_F64, &A));
    free(v);
    return A;
}

/* sps_precond_update with a matrix of the setup's operator size, scalar type and entry count
 * but another entry type (4 quaternions and 4 scalars both "fill" a 12 x 12 system) used to
 * pass the pattern check, and the numeric step then read the new matrix through the old
 * structure (heap overflow in ilu0/ic0, wrong blocks in bjacobi).  Now SPS_ERR_ARG naming
 * both entry types, no numeric step run, M kept; the same entry type still updates. */
static void test_update_entry_type(void)
{
    const char *pcs[3] = {"ilu0", "ic0", "bjacobi"};
    sps_matrix Q = quat3(1.0, 1), Q2 = quat3(1.5, 1);
    /* 7 entries each, all 12 x 12 operators: scalar, 2 x 2 blocks, and 4 x 4 blocks of Q's
     * very pattern (only the kind differs from quaternion) */
    const sps_index dr[7] = {0, 1, 2, 3, 4, 5, 6}, br[7] = {0, 1, 2, 3, 4, 5, 0}, bc[7] = {0, 1, 2, 3, 4, 5, 1};
    sps_matrix S7 = entries_matrix(12, sps_entry_scalar(), 7, dr, dr);
    sps_matrix B2 = entries_matrix(6, sps_entry_block(2), 7, br, bc);
    sps_matrix B4 = entries_matrix(3, sps_entry_block(4), 7, q3_row, q3_col);
    /* the reverse: set up on a 12 x 12 scalar diagonal (12 entries), updated with 6 x 6 blocks
     * of 2 x 2 (12 entries: the diagonal and a cyclic neighbour) */
    sps_index sr[12], cr[12], cc[12];
    double sv[12];
    for (int i = 0; i < 12; i++) {
        sr[i] = i;
        sv[i] = 2 + i % 3;
        cr[i] = i / 2;
        cc[i] = (i / 2 + i % 2) % 6;
    }
    sps_matrix S12 = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, 12, 12, 12, sr, sr, sv, SPS_F64, &S12));
    sps_matrix C12 = entries_matrix(6, sps_entry_block(2), 12, cr, cc);
    const struct {
        sps_matrix A;
        const char *name;
    } others[3] = {{S7, "scalar"}, {B2, "block2x2"}, {B4, "block4x4"}};
    double x[12];
    for (int i = 0; i < 12; i++) x[i] = 1.0 - 0.25 * i;

    for (int p = 0; p < 3; p++) {
        sps_precond P = tu_precond_with(g_ctx, Q, pcs[p], NULL, NULL);
        TU_CHECK(P != NULL, "%s: setup on the quaternion matrix: %s", pcs[p], sps_context_error(g_ctx));
        if (!P) continue;
        double *y0 = tu_precond_apply_host(g_ctx, P, SPS_F64, 12, x);
        for (int k = 0; k < 3; k++) {
            char want[160];
            snprintf(want, sizeof want, "preconditioner %s was set up for a matrix of quaternion entries, this one "
                     "has %s entries", pcs[p], others[k].name);
            sps_context_clear_error(g_ctx); /* the message must be this call's */
            EXPECT_ERROR(sps_precond_update(P, NULL, others[k].A), SPS_ERR_ARG, want);
        }
        TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 1, "%s: the refused updates ran steps (%d/%d)", pcs[p],
                 P->nsymbolic, P->nnumeric);
        double *y1 = tu_precond_apply_host(g_ctx, P, SPS_F64, 12, x);
        TU_CHECK(memcmp(y0, y1, sizeof x) == 0, "%s: M changed by the refused updates", pcs[p]);
        /* the same entry type, pattern and count: updated */
        TU_OK(g_ctx, sps_precond_update(P, NULL, Q2));
        TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 2, "%s: update(Q2) ran %d/%d steps", pcs[p], P->nsymbolic,
                 P->nnumeric);
        sps_precond_destroy(P);
        free(y0);
        free(y1);

        P = tu_precond_with(g_ctx, S12, pcs[p], NULL, NULL);
        TU_CHECK(P != NULL, "%s: setup on the scalar diagonal: %s", pcs[p], sps_context_error(g_ctx));
        if (!P) continue;
        char want[160];
        snprintf(want, sizeof want, "preconditioner %s was set up for a matrix of scalar entries, this one has "
                 "block2x2 entries", pcs[p]);
        sps_context_clear_error(g_ctx);
        EXPECT_ERROR(sps_precond_update(P, NULL, C12), SPS_ERR_ARG, want);
        TU_CHECK(P->nnumeric == 1, "%s: the refused update (scalar -> block2x2) ran", pcs[p]);
        sps_precond_destroy(P);
    }
    TU_DESTROY_MATRICES(Q, Q2, S7, B2, B4, S12, C12);
    sps_context_clear_error(g_ctx);
}

/* bjacobi picks its blocks (the matrix's entries, or runs of pc-block-size rows) at the
 * symbolic step.  Changing pc-block-size between setup and update used to switch the
 * numeric step to the other kind of blocks over the old store (auto -> 5 on a quaternion
 * matrix wrote through a NULL stage; 1 -> auto wrote 4 x 4 blocks into room for 1 x 1 ones).
 * Now the update keeps the setup's blocks: it succeeds and M equals a fresh setup with the
 * setup-time option on the updated matrix. */
static void test_bjacobi_option_change(void)
{
    const char *opts[2][2] = {{"auto", "5"}, {"1", "auto"}}; /* at setup, at update */
    sps_matrix Q = quat3(1.0, 0), Q2 = quat3(1.5, 0);
    double x[12];
    for (int i = 0; i < 12; i++) x[i] = 0.5 + 0.125 * i * (i % 2 ? -1 : 1);
    double *ref[2] = {NULL, NULL};
    for (int c = 0; c < 2; c++) {
        sps_precond P = tu_precond_with(g_ctx, Q, "bjacobi", "pc-block-size", opts[c][0]);
        sps_precond F = tu_precond_with(g_ctx, Q2, "bjacobi", "pc-block-size", opts[c][0]);
        TU_CHECK(P && F, "bjacobi pc-block-size %s: setup: %s", opts[c][0], sps_context_error(g_ctx));
        if (P && F) {
            TU_OK(g_ctx, sps_precond_set_option(P, "pc-block-size", opts[c][1]));
            TU_OK(g_ctx, sps_precond_update(P, NULL, Q2));
            TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 2, "pc-block-size %s -> %s: update ran %d/%d steps",
                     opts[c][0], opts[c][1], P->nsymbolic, P->nnumeric);
            double *y = tu_precond_apply_host(g_ctx, P, SPS_F64, 12, x);
            ref[c] = tu_precond_apply_host(g_ctx, F, SPS_F64, 12, x);
            const double err = tu_relerr(SPS_F64, 12, y, ref[c]);
            TU_CHECK(err <= 4 * tu_eps(SPS_F64),
                     "pc-block-size %s at setup, %s at update: M differs from a fresh setup's (relerr %.3e)",
                     opts[c][0], opts[c][1], err);
            free(y);
        }
        sps_precond_destroy(P);
        sps_precond_destroy(F);
    }
    /* the two choices give different M here, so the comparisons above tell them apart */
    if (ref[0] && ref[1])
        TU_CHECK(tu_relerr(SPS_F64, 12, ref[0], ref[1]) > 1e-3, "quaternion blocks and point Jacobi agree");
    free(ref[0]);
    free(ref[1]);
    TU_DESTROY_MATRICES(Q, Q2);
}

/* ---------------------------------------------------------------- M as an operator */
static void test_operator_view(void)
{
    const sps_index n = 30;
    const sps_scalar t = SPS_F64;
    double d[30], x[30], y0[30], y[30], ref[30];
    sps_matrix A = random_matrix(t, n, -1, -1, d);
    tu_fill_random(&g_rng, t, (size_t)n, x);
    tu_fill_random(&g_rng, t, (size_t)n, y0);
    sps_precond P = NULL;
    sps_operator V = NULL, V2 = NULL, S = NULL;
    sps_vector vx = NULL, vy = NULL;
    TU_OK(g_ctx, sps_precond_new(g_ctx, "jacobi", &P));
    TU_OK(g_ctx, sps_precond_operator(P, &V));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, y0, &vy));
    /* before the first setup the view is 0 x 0 */
    EXPECT_ERROR(sps_operator_apply(V, SPS_OP_N, NULL, vx, NULL, vy), SPS_ERR_ARG, "0 x 0 operator");
    TU_OK(g_ctx, sps_precond_setup(P, NULL, A));
    TU_OK(g_ctx, sps_precond_operator(P, &V2));
    TU_CHECK(V2 == V, "the view is P's, not a copy");
    sps_index rows = 0, cols = 0;
    TU_OK(g_ctx, sps_operator_size(V, &rows, &cols));
    TU_CHECK(rows == n && cols == n && sps_operator_scalar(V) == t, "view size %d x %d", (int)rows, (int)cols);
    /* y = 2 M x - 0.5 y0, both modes (M^T = M) */
    const double alpha = 2.0, beta = -0.5;
    for (int mode = 0; mode < 2; mode++) {
        TU_OK(g_ctx, sps_vector_set(vy, y0));
        TU_OK(g_ctx, sps_operator_apply(V, (sps_op_mode)mode, &alpha, vx, &beta, vy));
        TU_OK(g_ctx, sps_vector_get(vy, y));
        for (sps_index i = 0; i < n; i++) ref[i] = alpha * x[i] / d[i] + beta * y0[i];
        TU_CHECK(tu_relerr(t, (size_t)n, y, ref) <= 8 * tu_eps(t), "view alpha/beta mode %d: relerr %.3e", mode,
                 tu_relerr(t, (size_t)n, y, ref));
    }
    /* destroying the view is ignored: it belongs to P */
    sps_operator_destroy(V);
    /* inside a shell operator */
    TU_OK(g_ctx, sps_operator_shell(g_ctx, n, n, t, apply_inner, NULL, V, &S));
    TU_OK(g_ctx, sps_operator_apply(S, SPS_OP_N, NULL, vx, NULL, vy));
    TU_OK(g_ctx, sps_vector_get(vy, y));
    for (sps_index i = 0; i < n; i++) ref[i] = x[i] / d[i];
    TU_CHECK(tu_relerr(t, (size_t)n, y, ref) <= 4 * tu_eps(t), "view in a shell operator: relerr %.3e",
             tu_relerr(t, (size_t)n, y, ref));
    sps_operator_destroy(S);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    sps_precond_destroy(P);
    sps_matrix_destroy(A);

    /* as a solver's operator: CG on M y = b with M = D^{-1}, D of three distinct values, ends in
     * at most 3 iterations with y = D b */
    double dv[30], b[30], sol[30];
    sps_index rp[31], ci[30];
    for (sps_index i = 0; i < n; i++) {
        rp[i] = ci[i] = i;
        dv[i] = (double)(1 << (i % 3));
        b[i] = 1.0 + 0.1 * i;
        ref[i] = dv[i] * b[i];
    }
    rp[n] = n;
    sps_matrix D = NULL;
    sps_solver s = NULL;
    sps_vector vb = NULL, vsol = NULL;
    sps_result res;
    TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, n, n, rp, ci, dv, t, &D));
    TU_OK(g_ctx, sps_precond_create(D, SPS_PRECOND_JACOBI, &P));
    TU_OK(g_ctx, sps_precond_operator(P, &V));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, b, &vb));
    TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vsol));
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_CG, &s));
    TU_OK(g_ctx, sps_solver_set_operator(s, V));
    TU_OK(g_ctx, sps_solver_set_tolerances(s, 1e-12, 0.0, 10));
    TU_CHECK(sps_sv_capturable(s), "a view of a capturable preconditioner is a capturable operator");
    TU_OK(g_ctx, sps_solver_solve(s, vb, vsol, &res));
    TU_OK(g_ctx, sps_vector_get(vsol, sol));
    TU_CHECK(res.iterations <= 3, "CG on the view: %d iterations", res.iterations);
    TU_CHECK(tu_relerr(t, (size_t)n, sol, ref) <= 1e-10, "CG on the view: relerr %.3e",
             tu_relerr(t, (size_t)n, sol, ref));
    sps_solver_destroy(s);
    sps_vector_destroy(vb);
    sps_vector_destroy(vsol);
    sps_precond_destroy(P);
    sps_matrix_destroy(D);
}

/* ---------------------------------------------------------------- transposed views */
/* n x n tridiagonal of type t.  hermitian: diagonal 4, a(i, i+1) = 1 + i and a(i+1, i) its
 * conjugate (real t: 1), positive definite; else nonsymmetric (and not complex symmetric):
 * diagonal 4 + i % 3, a(i+1, i) = -1 + 0.5i, a(i, i+1) = -0.25 + 0.3i (real parts for real t)
 * and a(0, n-1) = 0.5 */
static sps_matrix tri_matrix(sps_scalar t, sps_index n, int hermitian)
{
    sps_index *r = tu_xcalloc(3 * (size_t)n, sizeof *r), *c = tu_xcalloc(3 * (size_t)n, sizeof *c);
    void *v = tu_xcalloc(3 * (size_t)n, sps_scalar_size(t));
    int k = 0;
    for (sps_index i = 0; i < n; i++) {
        r[k] = c[k] = i;
        tu_put(t, v, (size_t)k++, hermitian ? 4.0 : 4.0 + i % 3, 0.0);
        if (i + 1 == n) break;
        r[k] = i, c[k] = i + 1;
        tu_put(t, v, (size_t)k++, hermitian ? 1.0 : -0.25, hermitian ? 1.0 : 0.3);
        r[k] = i + 1, c[k] = i;
        tu_put(t, v, (size_t)k++, hermitian ? 1.0 : -1.0, hermitian ? -1.0 : 0.5);
    }
    if (!hermitian) {
        r[k] = 0, c[k] = n - 1;
        tu_put(t, v, (size_t)k++, 0.5, 0.0);
    }
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, n, n, k, r, c, v, t, &A));
    free(r);
    free(c);
    free(v);
    return A;
}

/* y = op(M) x through P's view (host in, host out) */
static void view_apply(sps_precond P, sps_op_mode mode, sps_scalar t, sps_index n, const void *x, void *y)
{
    sps_operator V = NULL;
    sps_vector vx = NULL, vy = NULL;
    TU_OK(g_ctx, sps_precond_operator(P, &V));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, x, &vx));
    TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vy));
    TU_OK(g_ctx, sps_operator_apply(V, mode, NULL, vx, NULL, vy));
    TU_OK(g_ctx, sps_vector_get(vy, y));
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
}

/* name (with one option) set up on tri_matrix(t, n, hpd) into *A; NULL (A freed) on failure */
static sps_precond tri_precond(sps_scalar t, int n, int hpd, const char *name, const char *opt, const char *val,
                               sps_matrix *A)
{
    *A = tri_matrix(t, n, hpd);
    sps_precond P = tu_precond_with(g_ctx, *A, name, opt, val);
    TU_CHECK(P != NULL, "%s %s: setup on a tridiagonal: %s", name, sps_scalar_name(t), sps_context_error(g_ctx));
    if (!P) {
        sps_matrix_destroy(*A);
        *A = NULL;
    }
    return P;
}

/* cheby's M = p(A) was applied as M for SPS_OP_T too (its products with A ignored the mode),
 * which is M^T only for symmetric A.  On a nonsymmetric A (and a complex one that is not
 * complex symmetric) the view's SPS_OP_T must give the plain transpose of the dense M built
 * column by column from SPS_OP_N applications: (M^T x)_i = sum_j M_ji x_j, no conjugate. */
static void test_cheby_transpose(void)
{
    enum { N = 10 };
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const size_t ss = sps_scalar_size(t);
        sps_matrix A = NULL;
        /* cheby-ratio: the bounds need no real spectrum */
        sps_precond P = tri_precond(t, N, 0, "cheby", "cheby-ratio", "0.1", &A);
        if (!P) continue;
        /* M[i][j] (re, im): column j is M e_j */
        double mre[N][N], mim[N][N], mmax = 0, asym = 0;
        void *e = tu_xcalloc(N, ss), *col = tu_xcalloc(N, ss), *x = tu_xcalloc(N, ss), *y = tu_xcalloc(N, ss);
        void *ref = tu_xcalloc(N, ss);
        for (int j = 0; j < N; j++) {
            memset(e, 0, N * ss);
            tu_put(t, e, (size_t)j, 1.0, 0.0);
            view_apply(P, SPS_OP_N, t, N, e, col);
            for (int i = 0; i < N; i++) tu_get(t, col, (size_t)i, &mre[i][j], &mim[i][j]);
        }
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                mmax = fmax(mmax, hypot(mre[i][j], mim[i][j]));
                asym = fmax(asym, hypot(mre[i][j] - mre[j][i], mim[i][j] - mim[j][i]));
            }
        TU_CHECK(asym > 1e-3 * mmax, "cheby %s: M is (nearly) symmetric (%.3e of %.3e): the check is void",
                 sps_scalar_name(t), asym, mmax);
        tu_fill_random(&g_rng, t, N, x);
        for (int i = 0; i < N; i++) {
            double sr = 0, si = 0;
            for (int j = 0; j < N; j++) {
                double xr, xi;
                tu_get(t, x, (size_t)j, &xr, &xi);
                sr += mre[j][i] * xr - mim[j][i] * xi;
                si += mre[j][i] * xi + mim[j][i] * xr;
            }
            tu_put(t, ref, (size_t)i, sr, si);
        }
        view_apply(P, SPS_OP_T, t, N, x, y);
        const double err = tu_relerr(t, N, y, ref);
        TU_CHECK(err <= 64 * tu_eps(t), "cheby %s: SPS_OP_T is not M^T (relerr %.3e)", sps_scalar_name(t), err);
        free(e), free(col), free(x), free(y), free(ref);
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
}

/* ic0's M = (L D L^H)^-1 is Hermitian.  For real types M^T = M, so SPS_OP_T applies M; for
 * complex ones M^T = conj(M), which ic0 used to answer with M: now SPS_ERR_UNSUPPORTED with a
 * message (SPS_OP_N unchanged). */
static void test_ic0_transpose(void)
{
    enum { N = 12 };
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const size_t ss = sps_scalar_size(t);
        sps_matrix A = NULL;
        sps_precond P = tri_precond(t, N, 1, "ic0", NULL, NULL, &A);
        if (!P) continue;
        void *x = tu_xcalloc(N, ss), *yn = tu_xcalloc(N, ss), *yt = tu_xcalloc(N, ss);
        tu_fill_random(&g_rng, t, N, x);
        view_apply(P, SPS_OP_N, t, N, x, yn);
        if (!sps_scalar_is_complex(t)) {
            view_apply(P, SPS_OP_T, t, N, x, yt);
            TU_CHECK(tu_relerr(t, N, yt, yn) <= 4 * tu_eps(t), "ic0 %s: SPS_OP_T differs from M x (relerr %.3e)",
                     sps_scalar_name(t), tu_relerr(t, N, yt, yn));
        } else {
            sps_operator V = NULL;
            sps_vector vx = NULL, vy = NULL;
            TU_OK(g_ctx, sps_precond_operator(P, &V));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, N, t, x, &vx));
            TU_OK(g_ctx, sps_vector_create(g_ctx, N, t, &vy));
            char want[96];
            snprintf(want, sizeof want, "ic0: no plain-transposed apply for %s", sps_scalar_name(t));
            sps_context_clear_error(g_ctx);
            EXPECT_ERROR(sps_operator_apply(V, SPS_OP_T, NULL, vx, NULL, vy), SPS_ERR_UNSUPPORTED, want);
            /* still usable as M */
            view_apply(P, SPS_OP_N, t, N, x, yt);
            TU_CHECK(memcmp(yt, yn, N * ss) == 0, "ic0 %s: M x changed after the refused SPS_OP_T", sps_scalar_name(t));
            sps_vector_destroy(vx);
            sps_vector_destroy(vy);
        }
        free(x), free(yn), free(yt);
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
    sps_context_clear_error(g_ctx);
}

/* ---------------------------------------------------------------- shell */
/* Jacobi by hand on the host: y_i = (1 / a_ii) x_i, the built-in's arithmetic */
typedef struct {
    sps_index n;
    double *dinv;
    int calls, fail_at; /* fail_at > 0: that call returns SPS_ERR_NUMERIC without a message */
    sps_vector wrong;   /* not NULL: the callback misuses the library (a copy into it) */
} hand_jacobi;

static sps_status hand_apply(void *user, sps_vector x, sps_vector y)
{
    hand_jacobi *h = user;
    if (++h->calls == h->fail_at) return SPS_ERR_NUMERIC;
    if (h->wrong) return sps_vector_copy(x, h->wrong);
    double *v = tu_xcalloc((size_t)h->n, sizeof *v);
    sps_status st = sps_vector_get(x, v);
    for (sps_index i = 0; i < h->n; i++) v[i] = h->dinv[i] * v[i];
    if (st == SPS_OK) st = sps_vector_set(y, v);
    free(v);
    return st;
}

/* SPD tridiagonal (-1, d_i, -1) with d_i = 2 + (i % 7) / 2 (so Jacobi is not a scaling) */
static sps_matrix spd_tridiag(sps_index n, double *diag)
{
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *ci = tu_xcalloc(3 * (size_t)n, sizeof *ci);
    double *v = tu_xcalloc(3 * (size_t)n, sizeof *v);
    sps_index k = 0;
    for (sps_index i = 0; i < n; i++) {
        rp[i] = k;
        diag[i] = 2.0 + (i % 7) / 2.0;
        if (i > 0) { ci[k] = i - 1; v[k++] = -1.0; }
        ci[k] = i; v[k++] = diag[i];
        if (i < n - 1) { ci[k] = i + 1; v[k++] = -1.0; }
    }
    rp[n] = k;
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, n, n, rp, ci, v, SPS_F64, &A));
    free(rp);
    free(ci);
    free(v);
    return A;
}

typedef struct {
    sps_status st;
    int its;
    double *x, *hist; /* caller frees */
    int hist_len;
} solve_out;

/* solver `name` on A x = b from x = 0 with preconditioner P, rtol 1e-10 */
static solve_out solve_with(const char *name, sps_operator op, sps_precond P, const double *b, sps_index n)
{
    solve_out o = {SPS_OK, 0, tu_xcalloc((size_t)n, sizeof(double)), NULL, 0};
    sps_solver s = NULL;
    sps_vector vb = NULL, vx = NULL;
    sps_result res;
    memset(&res, 0, sizeof res);
    TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, name, &s));
    TU_OK(g_ctx, sps_solver_set_operator(s, op));
    TU_OK(g_ctx, sps_solver_set_precond(s, P));
    TU_OK(g_ctx, sps_solver_set_tolerances(s, 1e-10, 0.0, 1000));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, SPS_F64, b, &vb));
    TU_OK(g_ctx, sps_vector_create(g_ctx, n, SPS_F64, &vx));
    o.st = sps_solver_solve(s, vb, vx, &res);
    o.its = res.iterations;
    o.hist_len = res.history_len;
    o.hist = tu_xcalloc((size_t)res.history_len, sizeof(double));
    if (res.history_len) memcpy(o.hist, res.history, (size_t)res.history_len * sizeof(double));
    TU_OK(g_ctx, sps_vector_get(vx, o.x));
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    return o;
}

static void test_shell(void)
{
    enum { N = 300 };
    double diag[N], dinv[N], b[N];
    sps_matrix A = spd_tridiag(N, diag);
    for (int i = 0; i < N; i++) {
        dinv[i] = 1.0 / diag[i];
        b[i] = 1.0 + (i % 5);
    }
    sps_operator op = NULL;
    sps_precond J = NULL, H = NULL, Hn = NULL;
    hand_jacobi h = {N, dinv, 0, 0, NULL};
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &J));
    TU_OK(g_ctx, sps_precond_create_shell(g_ctx, N, SPS_F64, hand_apply, SPS_PRECOND_SYMMETRIC, &h, &H));
    TU_OK(g_ctx, sps_precond_create_shell(g_ctx, N, SPS_F64, hand_apply, 0, &h, &Hn));
    TU_CHECK(strcmp(sps_precond_name(H), "shell") == 0, "shell name %s", sps_precond_name(H));
    TU_CHECK(sps_precond_flags(H) == SPS_PRECOND_SYMMETRIC && sps_precond_flags(Hn) == 0, "shell flags 0x%x, 0x%x",
             sps_precond_flags(H), sps_precond_flags(Hn));

    /* the same iterates as the built-in Jacobi, bit for bit */
    static const char *const solvers[3] = {"cg", "bicgstab", "gmres"};
    for (int k = 0; k < 3; k++) {
        solve_out a = solve_with(solvers[k], op, J, b, N), c = solve_with(solvers[k], op, H, b, N);
        TU_CHECK(a.st == SPS_OK && c.st == SPS_OK, "%s: status %s / %s", solvers[k], sps_status_name(a.st),
                 sps_status_name(c.st));
        TU_CHECK(a.its > 1 && a.its == c.its, "%s: jacobi %d iterations, shell %d", solvers[k], a.its, c.its);
        TU_CHECK(a.hist_len == c.hist_len && memcmp(a.hist, c.hist, (size_t)a.hist_len * sizeof(double)) == 0,
                 "%s: residual histories differ", solvers[k]);
        TU_CHECK(memcmp(a.x, c.x, N * sizeof(double)) == 0, "%s: solutions differ", solvers[k]);
        free(a.x), free(a.hist), free(c.x), free(c.hist);
    }
    TU_CHECK(h.calls > 0, "the callback ran");

    /* CG refuses a shell not flagged symmetric; BiCGSTAB takes it */
    sps_solver s = NULL;
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_CG, &s));
    EXPECT_ERROR(sps_solver_set_precond(s, Hn), SPS_ERR_ARG,
                 "CG needs a symmetric preconditioner (M SPD whenever A is) and preconditioner shell is not flagged "
                 "SPS_PRECOND_SYMMETRIC");
    sps_solver_destroy(s);
    solve_out o = solve_with("bicgstab", op, Hn, b, N);
    TU_CHECK(o.st == SPS_OK, "BiCGSTAB with the unflagged shell: %s", sps_status_name(o.st));
    free(o.x), free(o.hist);

    /* a failing callback ends the solve with its status and a message */
    h.calls = 0;
    h.fail_at = 3;
    o = solve_with("bicgstab", op, Hn, b, N);
    EXPECT_ERROR(o.st, SPS_ERR_NUMERIC, "shell preconditioner callback failed with SPS_ERR_NUMERIC");
    free(o.x), free(o.hist);
    /* a library call failing inside it keeps its own message */
    h.fail_at = 0;
    TU_OK(g_ctx, sps_vector_create(g_ctx, N - 1, SPS_F64, &h.wrong));
    o = solve_with("gmres", op, Hn, b, N);
    EXPECT_ERROR(o.st, SPS_ERR_ARG, "sps_vector_copy: sizes differ");
    free(o.x), free(o.hist);
    sps_vector_destroy(h.wrong);
    h.wrong = NULL;

    /* in place, the view, setup only checks the shape */
    double x[N], y[N], ref[N];
    for (int i = 0; i < N; i++) {
        x[i] = 0.5 - i;
        ref[i] = dinv[i] * x[i];
    }
    sps_vector vx = NULL, vy = NULL;
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, N, SPS_F64, x, &vx));
    TU_OK(g_ctx, sps_vector_create(g_ctx, N, SPS_F64, &vy));
    TU_OK(g_ctx, sps_precond_apply(H, vx, vx));
    TU_OK(g_ctx, sps_vector_get(vx, y));
    TU_CHECK(memcmp(y, ref, sizeof y) == 0, "shell in place");
    sps_operator V = NULL;
    TU_OK(g_ctx, sps_precond_operator(H, &V));
    TU_CHECK(sps_operator_apply(V, SPS_OP_T, NULL, vx, NULL, vy) == SPS_ERR_UNSUPPORTED, "shell transpose");
    TU_OK(g_ctx, sps_precond_setup(H, op, NULL));
    TU_OK(g_ctx, sps_precond_update(H, NULL, A));
    sps_matrix A5 = NULL;
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:5", SPS_F64, &A5));
    EXPECT_ERROR(sps_precond_setup(H, NULL, A5), SPS_ERR_ARG,
                 "preconditioner shell is 300 x 300 (f64), the system 25 x 25 (f64)");
    TU_OK(g_ctx, sps_vector_set(vx, x));
    TU_OK(g_ctx, sps_precond_apply(H, vx, vy)); /* still usable */
    TU_OK(g_ctx, sps_vector_get(vy, y));
    TU_CHECK(memcmp(y, ref, sizeof y) == 0, "shell after a refused setup");

    /* arguments */
    sps_precond Q = NULL;
    TU_CHECK(sps_precond_create_shell(g_ctx, N, SPS_F64, NULL, 0, NULL, &Q) == SPS_ERR_ARG && !Q, "NULL callback");
    TU_CHECK(sps_precond_create_shell(g_ctx, -1, SPS_F64, hand_apply, 0, NULL, &Q) == SPS_ERR_ARG, "negative size");
    TU_CHECK(sps_precond_create_shell(g_ctx, N, (sps_scalar)7, hand_apply, 0, NULL, &Q) == SPS_ERR_ARG, "bad type");
    EXPECT_ERROR(sps_precond_create_shell(g_ctx, N, SPS_F64, hand_apply, 4u, NULL, &Q), SPS_ERR_ARG,
                 "unknown flags 0x4");
    TU_CHECK(sps_precond_create_shell(g_ctx, N, SPS_F64, hand_apply, 0, NULL, NULL) == SPS_ERR_ARG, "NULL output");
    TU_CHECK(sps_precond_create_shell(NULL, N, SPS_F64, hand_apply, 0, NULL, &Q) == SPS_ERR_ARG, "NULL context");

    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    sps_precond_destroy(J);
    sps_precond_destroy(H);
    sps_precond_destroy(Hn);
    sps_operator_destroy(op);
    TU_DESTROY_MATRICES(A, A5);
}

/* ---------------------------------------------------------------- what the solvers check */
static sps_status noop_apply(void *user, sps_vector x, sps_vector y)
{
    (void)user;
    return sps_vector_copy(x, y);
}

static void test_solver_checks(void)
{
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:4", SPS_F64, &A));
    sps_operator op = NULL, shell_op = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_operator_shell(g_ctx, 16, 16, SPS_F64, apply_inner, NULL, op, &shell_op));
    sps_precond J = NULL, I = NULL, Ssym = NULL, Scap = NULL, S0 = NULL, Jnew = NULL;
    TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &J));
    TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_NONE, &I));
    TU_OK(g_ctx, sps_precond_create_shell(g_ctx, 16, SPS_F64, noop_apply, SPS_PRECOND_SYMMETRIC, NULL, &Ssym));
    TU_OK(g_ctx, sps_precond_create_shell(g_ctx, 16, SPS_F64, noop_apply,
                                          SPS_PRECOND_SYMMETRIC | SPS_PRECOND_CAPTURABLE, NULL, &Scap));
    TU_OK(g_ctx, sps_precond_create_shell(g_ctx, 16, SPS_F64, noop_apply, 0, NULL, &S0));
    TU_OK(g_ctx, sps_precond_new(g_ctx, "jacobi", &Jnew));

    /* graphs only when the operator and the preconditioner are capturable */
    sps_solver cg = NULL, bcg = NULL;
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_CG, &cg));
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_BICGSTAB, &bcg));
    TU_OK(g_ctx, sps_solver_set_operator(cg, op));
    TU_OK(g_ctx, sps_solver_set_operator(bcg, op));
    TU_CHECK(sps_sv_capturable(cg), "matrix, no preconditioner");
    const struct {
        sps_precond P;
        int want;
        const char *what;
    } cases[4] = {{J, 1, "jacobi"}, {I, 1, "none"}, {Ssym, 0, "shell"}, {Scap, 1, "shell flagged capturable"}};
    for (int k = 0; k < 4; k++) {
        TU_OK(g_ctx, sps_solver_set_precond(cg, cases[k].P));
        TU_CHECK(sps_sv_capturable(cg) == cases[k].want, "capturable with %s: %d", cases[k].what,
                 sps_sv_capturable(cg));
    }
    TU_OK(g_ctx, sps_solver_set_precond(bcg, S0));
    TU_CHECK(!sps_sv_capturable(bcg), "BiCGSTAB with an unflagged shell");
    TU_OK(g_ctx, sps_solver_set_operator(cg, shell_op));
    TU_OK(g_ctx, sps_solver_set_precond(cg, J));
    TU_CHECK(!sps_sv_capturable(cg), "shell operator with jacobi");

    /* CG: only symmetric preconditioners; the refused one is not set */
    TU_OK(g_ctx, sps_solver_set_operator(cg, op));
    TU_CHECK(sps_solver_set_precond(cg, S0) == SPS_ERR_ARG, "CG with an unflagged shell");
    TU_CHECK(cg->P == J, "the refused preconditioner replaced the previous one");
    TU_OK(g_ctx, sps_solver_set_precond(bcg, S0));

    /* a preconditioner that is not set up is refused at solve time */
    sps_vector b = NULL, x = NULL;
    sps_result res;
    const double one = 1.0;
    TU_OK(g_ctx, sps_vector_create(g_ctx, 16, SPS_F64, &b));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 16, SPS_F64, &x));
    TU_OK(g_ctx, sps_vector_fill(b, &one));
    TU_OK(g_ctx, sps_solver_set_precond(cg, Jnew));
    EXPECT_ERROR(sps_solver_solve(cg, b, x, &res), SPS_ERR_ARG,
                 "sps_solver_solve: preconditioner jacobi is not set up");
    TU_OK(g_ctx, sps_precond_setup(Jnew, op, A));
    TU_OK(g_ctx, sps_solver_solve(cg, b, x, &res));

    sps_vector_destroy(b);
    sps_vector_destroy(x);
    sps_solver_destroy(cg);
    sps_solver_destroy(bcg);
    sps_precond_destroy(J);
    sps_precond_destroy(I);
    sps_precond_destroy(Ssym);
    sps_precond_destroy(Scap);
    sps_precond_destroy(S0);
    sps_precond_destroy(Jnew);
    sps_operator_destroy(shell_op);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
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
    test_setup_update();
    test_setup_arguments();
    test_update_entry_type();
    test_bjacobi_option_change();
    test_operator_view();
    test_cheby_transpose();
    test_ic0_transpose();
    test_shell();
    test_solver_checks();
    sps_context_destroy(g_ctx);
    return tu_finish();
}
